//! Features as the compact GeoJSON an HTML map embeds: coordinates rounded to
//! 6 decimals (about 0.1 m), and only the properties its popups show.
//!
//! A plot data layer is written straight from its table's rows into the
//! page ([`write_collection`]); the few trace features are small JSON values.
//! Members are in the order a serde_json `Value` writes them (sorted).

use crate::table::column::Scalar;
use crate::table::geojson::{has_geometry, write_geometry, write_scalar, write_str, GeometryForm};
use crate::table::Table;
use crate::trace::{Trace, TraceFeature};
use serde_json::{json, Map, Value};
use std::io::{self, Write};

/// Decimal places kept in coordinates (1e-6 degree is about 0.11 m).
pub const COORD_DECIMALS: i32 = 6;

/// Writes a FeatureCollection of the rows of `table`, keeping only the
/// properties named in `keep` (sorted by name; absent or null ones are
/// left out). Rows without a geometry are skipped: a map cannot show them.
pub fn write_collection<W: Write + ?Sized>(
    w: &mut W,
    table: &Table,
    keep: &[&str],
) -> io::Result<()> {
    let mut columns: Vec<_> = keep
        .iter()
        .filter_map(|&k| Some((k, table.column(k)?)))
        .collect();
    columns.sort_by_key(|&(k, _)| k);
    columns.dedup_by_key(|&mut (k, _)| k);
    let form = GeometryForm {
        coord: round,
        sorted_members: true,
    };
    w.write_all(br#"{"features":["#)?;
    let mut first = true;
    for row in (0..table.len()).filter(|&r| has_geometry(table.geometries(), r)) {
        if !std::mem::take(&mut first) {
            w.write_all(b",")?;
        }
        w.write_all(br#"{"geometry":"#)?;
        write_geometry(w, table.geometries(), row, form)?;
        w.write_all(br#","properties":{"#)?;
        let values = columns.iter().map(|(k, c)| (k, c.scalar(row)));
        for (i, (k, v)) in values.filter(|(_, v)| !is_null(*v)).enumerate() {
            if i > 0 {
                w.write_all(b",")?;
            }
            write_str(w, k)?;
            w.write_all(b":")?;
            write_scalar(w, v)?;
        }
        w.write_all(br#"},"type":"Feature"}"#)?;
    }
    w.write_all(br#"],"type":"FeatureCollection"}"#)
}

/// True for a value JSON writes as `null` (a non-finite float too).
fn is_null(v: Scalar) -> bool {
    match v {
        Scalar::Null | Scalar::Json("null") => true,
        Scalar::Float(f) => !f.is_finite(),
        _ => false,
    }
}

/// The LineString features of `trace` whose id is (`path` true) or is not
/// (`path` false) the raindrop path, with their attributes.
pub fn trace_lines(trace: &Trace, path: bool) -> Value {
    let features: Vec<Value> = trace
        .features
        .iter()
        .filter(|f| (f.id == crate::trace::RAINDROP_PATH_ID) == path && f.coords.len() >= 4)
        .map(|f| {
            let coords: Vec<Value> = f
                .coords
                .chunks_exact(2)
                .map(|c| json!([round(c[0]), round(c[1])]))
                .collect();
            json!({
                "type": "Feature",
                "geometry": { "type": "LineString", "coordinates": coords },
                "properties": trace_properties(f),
            })
        })
        .collect();
    json!({ "type": "FeatureCollection", "features": features })
}

/// A one-point FeatureCollection at `[lon, lat]` with `properties`.
pub fn point(lon_lat: [f64; 2], properties: Value) -> Value {
    json!({
        "type": "FeatureCollection",
        "features": [{
            "type": "Feature",
            "geometry": { "type": "Point", "coordinates": [round(lon_lat[0]), round(lon_lat[1])] },
            "properties": properties,
        }],
    })
}

fn trace_properties(f: &TraceFeature) -> Value {
    let mut p = Map::new();
    p.insert("id".into(), json!(f.id));
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            p.insert(k.into(), v);
        }
    };
    put("comid", f.comid.map(Value::from));
    put("gnis_name", f.gnis_name.clone().map(Value::from));
    put("reachcode", f.reachcode.clone().map(Value::from));
    put("measure", f.measure.map(Value::from));
    put("raindrop_pathdist", f.raindrop_path_dist.map(Value::from));
    Value::Object(p)
}

/// `x` rounded to [`COORD_DECIMALS`] places.
pub fn round(x: f64) -> f64 {
    let scale = 10f64.powi(COORD_DECIMALS);
    (x * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::Feature;
    use geo::Geometry;

    #[test]
    fn rounds_to_six_decimals_and_keeps_only_named_properties() {
        let mut f = Feature {
            geometry: Some(Geometry::LineString(geo::LineString::from(vec![
                (-89.123_456_789, 43.000_000_4),
                (-89.1, 43.987_654_321),
            ]))),
            ..Feature::default()
        };
        f.properties.insert("comid".into(), json!(13293970));
        f.properties.insert("gnis_name".into(), Value::Null);
        f.properties.insert("lengthkm".into(), json!(1.5));
        let table = Table::from_features(&[f, Feature::default()]).unwrap();
        let mut out = Vec::new();
        write_collection(&mut out, &table, &["gnis_name", "comid", "absent"]).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            r#"{"features":[{"geometry":{"coordinates":[[-89.123457,43.0],[-89.1,43.987654]],"type":"LineString"},"properties":{"comid":13293970},"type":"Feature"}],"type":"FeatureCollection"}"#,
            "no geometry, no feature"
        );
    }
}
