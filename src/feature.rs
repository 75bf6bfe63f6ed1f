//! The in-memory feature model shared by every source (service pages, local
//! GeoPackages, the cache) and every sink (GeoJSON, GeoPackage, the map).
//!
//! Property names are lower case: they are folded once, where features enter
//! the library, so the rest of the code never matches case.

use geo::{BoundingRect, Geometry};
use serde_json::{Map, Value};

/// Feature properties, keys in lower case.
pub type Properties = Map<String, Value>;

/// One feature: optional id, optional geometry (lon/lat unless stated), properties.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Feature {
    /// The GeoJSON `id` member, when the source had one.
    pub id: Option<Value>,
    /// The geometry; `None` for attribute-only features (e.g. `skipGeometry=true`).
    pub geometry: Option<Geometry<f64>>,
    /// Properties with lower-case keys.
    pub properties: Properties,
}

impl Feature {
    /// An integer property. Accepts JSON integers, integral floats (the
    /// services send `510042379.0`) and numeric strings.
    pub fn get_i64(&self, key: &str) -> Option<i64> {
        value_as_i64(self.properties.get(key)?)
    }

    /// A numeric property (numbers or numeric strings).
    pub fn get_f64(&self, key: &str) -> Option<f64> {
        match self.properties.get(key)? {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// A string property (strings only).
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.properties.get(key)?.as_str()
    }

    /// The bounding box `[xmin, ymin, xmax, ymax]` of the geometry.
    pub fn bbox(&self) -> Option<[f64; 4]> {
        let r = self.geometry.as_ref()?.bounding_rect()?;
        Some([r.min().x, r.min().y, r.max().x, r.max().y])
    }
}

/// Reads an integer from a JSON value as [`Feature::get_i64`] does.
pub fn value_as_i64(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| {
            let f = n.as_f64()?;
            (f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15).then_some(f as i64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Lower-cases every key of a property map (the first of colliding keys wins).
pub fn lowercase_keys(props: Properties) -> Properties {
    let upper = |k: &String| k.bytes().any(|b| b.is_ascii_uppercase());
    if !props.keys().any(upper) {
        // The services' usual case: keep the map instead of rebuilding it.
        return props;
    }
    let mut out = Properties::with_capacity(props.len());
    for (k, v) in props {
        let key = if upper(&k) { k.to_ascii_lowercase() } else { k };
        out.entry(key).or_insert(v);
    }
    out
}

/// The union of the bounding boxes of `features`, `None` when none has a geometry.
pub fn bbox_of<'a>(features: impl IntoIterator<Item = &'a Feature>) -> Option<[f64; 4]> {
    features
        .into_iter()
        .filter_map(Feature::bbox)
        .reduce(union_bbox)
}

/// The union of two `[xmin, ymin, xmax, ymax]` boxes.
pub fn union_bbox(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [
        a[0].min(b[0]),
        a[1].min(b[1]),
        a[2].max(b[2]),
        a[3].max(b[3]),
    ]
}

/// The union of the polygons among `geometries` (others are ignored): one
/// Polygon, a MultiPolygon, or `None` when there is nothing to unite.
pub fn union_polygons<'a>(
    geometries: impl IntoIterator<Item = &'a Geometry<f64>>,
) -> Option<Geometry<f64>> {
    use geo::orient::{Direction, Orient};
    let polygons: Vec<geo::Polygon<f64>> = geometries
        .into_iter()
        .flat_map(|g| match g {
            Geometry::Polygon(p) => vec![p.clone()],
            Geometry::MultiPolygon(mp) => mp.0.clone(),
            _ => Vec::new(),
        })
        // geo::unary_union takes its fill rule from the first ring it sees
        // and drops polygons winding the other way; sources differ in winding.
        .map(|p| p.orient(Direction::Default))
        .collect();
    let mut union = geo::unary_union(polygons.iter());
    match union.0.len() {
        0 => None,
        1 => union.0.pop().map(Geometry::Polygon),
        _ => Some(Geometry::MultiPolygon(union)),
    }
}

/// Serializes features as an RFC 7946 FeatureCollection (UTF-8 JSON bytes).
pub fn to_geojson(features: &[Feature]) -> Vec<u8> {
    let collection = geojson::FeatureCollection {
        bbox: None,
        features: features.iter().map(to_geojson_feature).collect(),
        foreign_members: None,
    };
    serde_json::to_vec(&collection).expect("a FeatureCollection always serializes")
}

fn to_geojson_feature(f: &Feature) -> geojson::Feature {
    geojson::Feature {
        bbox: None,
        geometry: f
            .geometry
            .as_ref()
            .map(|g| geojson::Geometry::new(geojson::GeometryValue::from(g))),
        id: f.id.as_ref().and_then(|v| match v {
            Value::String(s) => Some(geojson::feature::Id::String(s.clone())),
            Value::Number(n) => Some(geojson::feature::Id::Number(n.clone())),
            _ => None,
        }),
        properties: Some(f.properties.clone()),
        foreign_members: None,
    }
}

/// Converts a parsed GeoJSON geometry. A position with fewer than two
/// numbers is refused here: the geojson crate's conversion indexes [0] and
/// [1] unchecked and panics on it (found by the feature_page fuzz target).
pub fn geometry_from_geojson(g: geojson::Geometry) -> Result<Geometry<f64>, String> {
    if !positions_complete(&g.value) {
        return Err("a position has fewer than two coordinates".into());
    }
    Geometry::<f64>::try_from(g).map_err(|e| e.to_string())
}

fn positions_complete(g: &geojson::GeometryValue) -> bool {
    use geojson::GeometryValue as V;
    let ok = |p: &geojson::Position| p.len() >= 2;
    match g {
        V::Point { coordinates } => ok(coordinates),
        V::MultiPoint { coordinates } | V::LineString { coordinates } => coordinates.iter().all(ok),
        V::MultiLineString { coordinates } | V::Polygon { coordinates } => {
            coordinates.iter().flatten().all(ok)
        }
        V::MultiPolygon { coordinates } => coordinates.iter().flatten().flatten().all(ok),
        V::GeometryCollection { geometries } => {
            geometries.iter().all(|g| positions_complete(&g.value))
        }
    }
}

/// Converts one parsed GeoJSON feature into a [`Feature`] (keys lower-cased).
pub fn from_geojson_feature(f: geojson::Feature) -> crate::Result<Feature> {
    let geometry = match f.geometry {
        Some(g) => Some(geometry_from_geojson(g).map_err(|e| {
            crate::Error::Service(format!("a feature has an invalid geometry: {e}"))
        })?),
        None => None,
    };
    Ok(Feature {
        id: f.id.map(|id| match id {
            geojson::feature::Id::String(s) => Value::String(s),
            geojson::feature::Id::Number(n) => Value::Number(n),
        }),
        geometry,
        properties: lowercase_keys(f.properties.unwrap_or_default()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_sent_as_floats_read_as_integers() {
        let f = Feature {
            properties: json!({"hydroseq": 510042379.0, "comid": 13293454, "s": "42", "x": 1.5})
                .as_object()
                .unwrap()
                .clone(),
            ..Default::default()
        };
        assert_eq!(f.get_i64("hydroseq"), Some(510042379));
        assert_eq!(f.get_i64("comid"), Some(13293454));
        assert_eq!(f.get_i64("s"), Some(42));
        assert_eq!(f.get_i64("x"), None);
        assert_eq!(f.get_f64("x"), Some(1.5));
    }

    #[test]
    fn a_one_number_position_is_an_error_not_a_panic() {
        for doc in [
            r#"{"type":"Feature","properties":{},"geometry":{"type":"MultiPoint","coordinates":[[1]]}}"#,
            r#"{"type":"Feature","properties":{},"geometry":{"type":"LineString","coordinates":[[1,2],[3]]}}"#,
            r#"{"type":"Feature","properties":{},"geometry":{"type":"GeometryCollection","geometries":[{"type":"MultiPolygon","coordinates":[[[[1,2],[]]]]}]}}"#,
        ] {
            let f: geojson::Feature = serde_json::from_str(doc).unwrap();
            let e = from_geojson_feature(f).unwrap_err();
            assert!(e.to_string().contains("fewer than two coordinates"), "{e}");
        }
    }

    #[test]
    fn keys_are_lower_cased_once() {
        let p = json!({"COMID": 1, "StreamOrde": 2})
            .as_object()
            .unwrap()
            .clone();
        let p = lowercase_keys(p);
        assert!(p.contains_key("comid") && p.contains_key("streamorde"));
    }

    #[test]
    fn lower_case_keys_pass_through_and_collisions_keep_the_first() {
        let lower = json!({"comid": 13293454, "streamorde": 3.0});
        let p = lowercase_keys(lower.as_object().unwrap().clone());
        assert_eq!(Value::Object(p), lower);
        // Sorted, "COMID" comes before "comid": the upper-case spelling wins.
        let mixed = json!({"comid": 1, "COMID": 2, "Gnis_Name": "Yahara River"});
        let p = lowercase_keys(mixed.as_object().unwrap().clone());
        assert_eq!(
            Value::Object(p),
            json!({"comid": 2, "gnis_name": "Yahara River"})
        );
    }
}
