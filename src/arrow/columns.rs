//! Property columns: one typed Arrow column per property name, its type
//! inferred from the values the features hold.

use crate::feature::Feature;
use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, Float64Builder, Int64Builder, StringBuilder,
};
use arrow_array::ArrayRef;
use arrow_schema::DataType;
use serde_json::Value;
use std::collections::HashMap;
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
}

/// The integer a JSON number stands for: an i64, or an integral float
/// within ±2^53 (beyond, an f64 no longer tells neighbouring integers apart).
fn integral(n: &serde_json::Number) -> Option<i64> {
    n.as_i64().or_else(|| {
        let f = n.as_f64()?;
        (f.fract() == 0.0 && f.abs() <= 9.007_199_254_740_992e15).then_some(f as i64)
    })
}

/// Property names to column numbers, in first-seen order. Features of a
/// layer mostly share their keys, in the same (sorted) order: the `guess`
/// (the column after the previous key's) makes that case one comparison per
/// value, with no hashing.
#[derive(Default)]
struct Names<'a> {
    names: Vec<&'a str>,
    index: HashMap<&'a str, usize>,
}

impl<'a> Names<'a> {
    fn find(&self, key: &str, guess: usize) -> Option<usize> {
        match self.names.get(guess) {
            Some(name) if *name == key => Some(guess),
            _ => self.index.get(key).copied(),
        }
    }

    fn find_or_add(&mut self, key: &'a str, guess: usize) -> usize {
        self.find(key, guess).unwrap_or_else(|| {
            self.names.push(key);
            self.index.insert(key, self.names.len() - 1);
            self.names.len() - 1
        })
    }
}

/// One column being built.
enum Column {
    Int(Int64Builder),
    Float(Float64Builder),
    Bool(BooleanBuilder),
    Text(StringBuilder),
}

impl Column {
    fn new(kind: Kind, n: usize) -> Column {
        match kind {
            Kind::Int => Column::Int(Int64Builder::with_capacity(n)),
            Kind::Float => Column::Float(Float64Builder::with_capacity(n)),
            Kind::Bool => Column::Bool(BooleanBuilder::with_capacity(n)),
            Kind::Null | Kind::Str | Kind::Text => {
                Column::Text(StringBuilder::with_capacity(n, 16 * n))
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            Column::Int(b) => b.len(),
            Column::Float(b) => b.len(),
            Column::Bool(b) => b.len(),
            Column::Text(b) => b.len(),
        }
    }

    /// Appends `v` (null for JSON null). The column's kind was inferred from
    /// every value, so each value fits it.
    fn push(&mut self, v: &Value) {
        match (self, v) {
            (Column::Int(b), v) => b.append_option(v.as_number().and_then(integral)),
            (Column::Float(b), v) => b.append_option(v.as_f64()),
            (Column::Bool(b), v) => b.append_option(v.as_bool()),
            (Column::Text(b), Value::Null) => b.append_null(),
            (Column::Text(b), Value::String(s)) => b.append_value(s),
            (Column::Text(b), other) => b.append_value(other.to_string()),
        }
    }

    fn push_null(&mut self) {
        match self {
            Column::Int(b) => b.append_null(),
            Column::Float(b) => b.append_null(),
            Column::Bool(b) => b.append_null(),
            Column::Text(b) => b.append_null(),
        }
    }

    fn finish(self) -> (DataType, ArrayRef) {
        match self {
            Column::Int(mut b) => (DataType::Int64, Arc::new(b.finish())),
            Column::Float(mut b) => (DataType::Float64, Arc::new(b.finish())),
            Column::Bool(mut b) => (DataType::Boolean, Arc::new(b.finish())),
            Column::Text(mut b) => (DataType::Utf8, Arc::new(b.finish())),
        }
    }
}

/// One column per property: `(name, type, values)`, in first-seen order; a
/// feature without the property, or with JSON null, is a null. Two passes:
/// the kinds of the columns, then their values.
pub fn property_columns(features: &[Feature]) -> Vec<(String, DataType, ArrayRef)> {
    let mut names = Names::default();
    let mut kinds: Vec<Kind> = Vec::new();
    for f in features {
        let mut guess = 0;
        for (k, v) in &f.properties {
            let i = names.find_or_add(k, guess);
            if i == kinds.len() {
                kinds.push(Kind::Null);
            }
            kinds[i] = kinds[i].join(Kind::of(v));
            guess = i + 1;
        }
    }
    let mut columns: Vec<Column> = kinds
        .iter()
        .map(|k| Column::new(*k, features.len()))
        .collect();
    for (row, f) in features.iter().enumerate() {
        let mut guess = 0;
        for (k, v) in &f.properties {
            if let Some(i) = names.find(k, guess) {
                columns[i].push(v);
                guess = i + 1;
            }
        }
        for c in columns.iter_mut().filter(|c| c.len() == row) {
            c.push_null();
        }
    }
    names
        .names
        .iter()
        .zip(columns)
        .map(|(name, c)| {
            let (data_type, values) = c.finish();
            (name.to_string(), data_type, values)
        })
        .collect()
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
