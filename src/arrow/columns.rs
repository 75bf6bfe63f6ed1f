//! Property columns: one typed Arrow column per property name, its type
//! inferred from the values the features hold.

use crate::feature::Feature;
use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder};
use arrow_array::ArrayRef;
use arrow_schema::DataType;
use serde_json::Value;
use std::sync::Arc;

/// What the non-null values of one property have been so far.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// Only nulls (or the property is missing everywhere): a utf8 column of nulls.
    Null,
    /// Integers, or floats with an integral value an f64 holds exactly (the
    /// services send `13293970.0`).
    Int,
    Float,
    Bool,
    Str,
    /// Anything else (mixed kinds, arrays, objects): JSON text, strings as they are.
    Text,
}

impl Kind {
    fn of(v: &Value) -> Kind {
        match v {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            Value::Number(n) if integral(n).is_some() => Kind::Int,
            Value::Number(_) => Kind::Float,
            Value::String(_) => Kind::Str,
            Value::Array(_) | Value::Object(_) => Kind::Text,
        }
    }

    /// The kind of a column holding values of kinds `self` and `other`.
    fn join(self, other: Kind) -> Kind {
        use Kind::*;
        match (self, other) {
            (a, b) if a == b => a,
            (Null, k) | (k, Null) => k,
            (Int, Float) | (Float, Int) => Float,
            _ => Text,
        }
    }

    fn data_type(self) -> DataType {
        match self {
            Kind::Int => DataType::Int64,
            Kind::Float => DataType::Float64,
            Kind::Bool => DataType::Boolean,
            Kind::Null | Kind::Str | Kind::Text => DataType::Utf8,
        }
    }
}

/// The integer a JSON number stands for: an i64, or an integral float
/// within ±2^53 (beyond, an f64 no longer tells neighbouring integers apart).
fn integral(n: &serde_json::Number) -> Option<i64> {
    n.as_i64().or_else(|| {
        let f = n.as_f64()?;
        (f.fract() == 0.0 && f.abs() <= 9.007_199_254_740_992e15).then_some(f as i64)
    })
}

/// The property names of `features` in first-seen order, each with the kind
/// of its column.
fn kinds(features: &[Feature]) -> Vec<(&str, Kind)> {
    let mut out: Vec<(&str, Kind)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for f in features {
        for (k, v) in &f.properties {
            let i = *index.entry(k.as_str()).or_insert_with(|| {
                out.push((k.as_str(), Kind::Null));
                out.len() - 1
            });
            out[i].1 = out[i].1.join(Kind::of(v));
        }
    }
    out
}

/// One column per property: `(name, type, values)`, in first-seen order; a
/// feature without the property, or with JSON null, is a null.
pub fn property_columns(features: &[Feature]) -> Vec<(String, DataType, ArrayRef)> {
    kinds(features)
        .into_iter()
        .map(|(name, kind)| {
            let values = features.iter().map(|f| f.properties.get(name));
            (name.to_string(), kind.data_type(), build(kind, values))
        })
        .collect()
}

fn build<'a>(kind: Kind, values: impl ExactSizeIterator<Item = Option<&'a Value>>) -> ArrayRef {
    let n = values.len();
    let values = values.map(|v| v.filter(|v| !v.is_null()));
    match kind {
        Kind::Int => {
            let mut b = Int64Builder::with_capacity(n);
            values.for_each(|v| b.append_option(v.and_then(Value::as_number).and_then(integral)));
            Arc::new(b.finish())
        }
        Kind::Float => {
            let mut b = Float64Builder::with_capacity(n);
            values.for_each(|v| b.append_option(v.and_then(Value::as_f64)));
            Arc::new(b.finish())
        }
        Kind::Bool => {
            let mut b = BooleanBuilder::with_capacity(n);
            values.for_each(|v| b.append_option(v.and_then(Value::as_bool)));
            Arc::new(b.finish())
        }
        Kind::Null | Kind::Str | Kind::Text => {
            let mut b = StringBuilder::with_capacity(n, 16 * n);
            values.for_each(|v| match v {
                None => b.append_null(),
                Some(Value::String(s)) => b.append_value(s),
                Some(other) => b.append_value(other.to_string()),
            });
            Arc::new(b.finish())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int64Type};
    use arrow_array::Array;
    use serde_json::json;

    fn features(props: &[Value]) -> Vec<Feature> {
        props
            .iter()
            .map(|p| Feature {
                properties: p.as_object().unwrap().clone(),
                ..Feature::default()
            })
            .collect()
    }

    #[test]
    fn integral_floats_are_int64_and_mixtures_widen() {
        let fs = features(&[
            json!({"comid": 13293970.0, "len": 1, "name": "Yahara", "x": 1, "flag": true, "all_null": null}),
            json!({"comid": 13294176, "len": 2.5, "name": null, "x": "a", "flag": false}),
            json!({"len": 3, "x": [1, 2]}),
        ]);
        let cols = property_columns(&fs);
        let names: Vec<(&str, &DataType)> = cols.iter().map(|(n, t, _)| (n.as_str(), t)).collect();
        // serde_json maps are sorted: the first feature's order is alphabetical.
        assert_eq!(
            names,
            [
                ("all_null", &DataType::Utf8),
                ("comid", &DataType::Int64),
                ("flag", &DataType::Boolean),
                ("len", &DataType::Float64),
                ("name", &DataType::Utf8),
                ("x", &DataType::Utf8),
            ]
        );
        let comid = cols[1].2.as_primitive::<Int64Type>();
        assert_eq!(comid.value(0), 13293970);
        assert_eq!(comid.value(1), 13294176);
        assert!(comid.is_null(2));
        let len = cols[3].2.as_primitive::<Float64Type>();
        assert_eq!((len.value(0), len.value(1), len.value(2)), (1.0, 2.5, 3.0));
        let x = cols[5].2.as_string::<i32>();
        assert_eq!((x.value(0), x.value(1), x.value(2)), ("1", "a", "[1,2]"));
        assert_eq!(cols[0].2.null_count(), 3);
        assert!(cols[4].2.is_null(1) && cols[4].2.is_null(2));
    }

    #[test]
    fn floats_beyond_two_to_the_53_stay_floats() {
        let fs = features(&[json!({"v": 1.0e17})]);
        assert_eq!(property_columns(&fs)[0].1, DataType::Float64);
    }
}
