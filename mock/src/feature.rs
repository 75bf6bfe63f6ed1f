//! The mock's feature: what it read from a GeoPackage row and serves, with
//! the few typed looks its endpoints take at properties. Its own, so that
//! what the mock serves never passes through the library under test.

use geo::{BoundingRect, Geometry};
use serde_json::{Map, Value};

/// One feature: an id, properties with lower-case keys, and a geometry in
/// longitude/latitude (`None` for a row without one).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Feature {
    /// The GeoJSON `id` member.
    pub id: Option<Value>,
    /// The geometry, `None` when the row has none (or an empty one).
    pub geometry: Option<Geometry<f64>>,
    /// Properties, keys in lower case.
    pub properties: Map<String, Value>,
}

impl Feature {
    /// An integer property ([`integer`]).
    pub fn get_i64(&self, key: &str) -> Option<i64> {
        integer(self.properties.get(key)?)
    }

    /// A number property: a JSON number, or a string that reads as one.
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

    /// `[xmin, ymin, xmax, ymax]` of the geometry.
    pub fn bbox(&self) -> Option<[f64; 4]> {
        let r = self.geometry.as_ref()?.bounding_rect()?;
        Some([r.min().x, r.min().y, r.max().x, r.max().y])
    }
}

/// The integer a JSON value holds: an integer, a float with no fraction
/// that is exact as a double (the services send `510042379.0`), or a string
/// of one integer (`"13293454"`, spaces around allowed).
pub fn integer(value: &Value) -> Option<i64> {
    /// 2^53: every integer below it in magnitude is exact as an `f64`.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    match value {
        Value::Number(n) => n.as_i64().or_else(|| {
            let f = n.as_f64()?;
            (f.fract() == 0.0 && f.abs() < EXACT).then_some(f as i64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_come_as_numbers_integral_floats_or_strings() {
        for (value, want) in [
            (json!(13293454), Some(13293454)),
            (json!(510042379.0), Some(510042379)),
            (json!(-4.0), Some(-4)),
            (json!(" 13293454 "), Some(13293454)),
            (json!(2.5), None),
            (json!(9007199254740992.0), None),
            (json!("13293454.0"), None),
            (json!(null), None),
            (json!(true), None),
            (json!([1]), None),
        ] {
            assert_eq!(integer(&value), want, "{value}");
        }
    }
}
