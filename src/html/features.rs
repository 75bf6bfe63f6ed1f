//! Features as the compact GeoJSON an HTML map embeds: coordinates rounded to
//! 6 decimals (about 0.1 m), and only the properties its popups show.

use crate::feature::Feature;
use crate::trace::{Trace, TraceFeature};
use geo::Geometry;
use serde_json::{json, Map, Value};

/// Decimal places kept in coordinates (1e-6 degree is about 0.11 m).
pub const COORD_DECIMALS: i32 = 6;

/// A FeatureCollection of `features` keeping only the properties named in
/// `keep` (in that order; absent or null ones are left out). Features
/// without a geometry are skipped: a map cannot show them.
pub fn collection(features: &[Feature], keep: &[&str]) -> Value {
    let features: Vec<Value> = features
        .iter()
        .filter_map(|f| {
            let geometry = geometry(f.geometry.as_ref()?);
            let properties: Map<String, Value> = keep
                .iter()
                .filter_map(|k| {
                    let v = f.properties.get(*k).filter(|v| !v.is_null())?;
                    Some((k.to_string(), v.clone()))
                })
                .collect();
            Some(json!({ "type": "Feature", "geometry": geometry, "properties": properties }))
        })
        .collect();
    json!({ "type": "FeatureCollection", "features": features })
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

/// A geometry as GeoJSON with rounded coordinates.
fn geometry(g: &Geometry<f64>) -> Value {
    let mut v = serde_json::to_value(geojson::Geometry::new(geojson::GeometryValue::from(g)))
        .expect("a GeoJSON geometry always serializes");
    if let Some(coords) = v.get_mut("coordinates") {
        round_all(coords);
    }
    if let Some(Value::Array(parts)) = v.get_mut("geometries") {
        parts
            .iter_mut()
            .filter_map(|p| p.get_mut("coordinates"))
            .for_each(round_all);
    }
    v
}

fn round_all(v: &mut Value) {
    match v {
        Value::Array(items) => items.iter_mut().for_each(round_all),
        Value::Number(n) => {
            if let Some(x) = n
                .as_f64()
                .and_then(|x| serde_json::Number::from_f64(round(x)))
            {
                *n = x;
            }
        }
        _ => {}
    }
}

/// `x` rounded to [`COORD_DECIMALS`] places.
pub fn round(x: f64) -> f64 {
    let scale = 10f64.powi(COORD_DECIMALS);
    (x * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let fc = collection(&[f, Feature::default()], &["comid", "gnis_name"]);
        let text = fc.to_string();
        assert_eq!(
            fc["features"].as_array().unwrap().len(),
            1,
            "no geometry, no feature"
        );
        assert!(
            text.contains("[[-89.123457,43.0],[-89.1,43.987654]]"),
            "{text}"
        );
        assert_eq!(
            fc["features"][0]["properties"],
            json!({ "comid": 13293970 })
        );
    }
}
