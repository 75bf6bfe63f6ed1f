//! One property column while it is being filled: typed values plus
//! validity, widened in place when a value of another type arrives, and
//! frozen into an Arrow array when the table is built.
//!
//! The widening lattice (never loses a value):
//! - all nulls so far: takes the type of the first value;
//! - integer and float: float64, unless an integer is beyond 2^53 (not
//!   exact as a float), then utf8 text;
//! - scalars of different kinds (number and string, boolean and number):
//!   utf8, each value as its JSON text (`42`, `1.5`, `true`) or the string;
//! - any nested value (object, array): the whole column becomes JSON text
//!   (the canonical `arrow.json` extension), strings quoted.
//!
//! A builder owns its buffers; [`ColumnBuilder::finish`] moves them into
//! the Arrow array without copying.

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, NullArray, StringArray};
use arrow_buffer::{
    BooleanBuffer, Buffer, NullBuffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer,
};
use std::sync::Arc;

/// Integers up to this magnitude are exact as `f64`.
const F64_EXACT: u64 = 1 << 53;

/// One value as the decoder or a source sees it. `Json` is the compact
/// JSON text of a nested value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar<'a> {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(&'a str),
    Json(&'a str),
}

/// The physical kind of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// No value yet (every row null).
    Null,
    Bool,
    Int,
    Float,
    /// Strings, or scalars of mixed kinds as their JSON text.
    Text,
    /// Every value as JSON text (`arrow.json`): the column holds nested values.
    Json,
}

/// UTF-8 values: `data[offsets[i]..offsets[i + 1]]`.
#[derive(Debug, Clone)]
struct TextBuf {
    offsets: Vec<i32>,
    data: Vec<u8>,
}

impl TextBuf {
    fn with_capacity(rows: usize) -> TextBuf {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        TextBuf {
            offsets,
            data: Vec::new(),
        }
    }

    fn push(&mut self, s: &[u8]) -> Result<(), String> {
        self.data.extend_from_slice(s);
        let end = i32::try_from(self.data.len())
            .map_err(|_| "a text column holds more than 2 GiB".to_string())?;
        self.offsets.push(end);
        Ok(())
    }

    fn get(&self, i: usize) -> &str {
        let (a, b) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        // Only whole `str`s are ever pushed.
        std::str::from_utf8(&self.data[a..b]).unwrap_or_default()
    }

    fn truncate(&mut self, rows: usize) {
        self.offsets.truncate(rows + 1);
        self.data.truncate(self.offsets[rows] as usize);
    }
}

#[derive(Debug, Clone)]
enum Values {
    Null,
    Bool(Vec<bool>),
    Int(Vec<i64>),
    Float(Vec<f64>),
    Text(TextBuf),
    Json(TextBuf),
}

/// A column under construction: `len` rows, nulls where `valid` is unset.
#[derive(Debug)]
pub struct ColumnBuilder {
    values: Values,
    /// Validity bits, allocated only once a row is null (Arrow's builder).
    valid: NullBufferBuilder,
    /// Rows whose value arrived in another kind than the column's: an
    /// integer in a float column, a number or boolean in a text column. So
    /// that widening further keeps the sent text (`7`, not `7.0`; `1`, not
    /// `"1"`). Empty while no row is such; rows past its end are `false`.
    alt: Vec<bool>,
}

impl Default for ColumnBuilder {
    fn default() -> Self {
        ColumnBuilder {
            values: Values::Null,
            valid: NullBufferBuilder::new(0),
            alt: Vec::new(),
        }
    }
}

impl ColumnBuilder {
    /// Rows held so far.
    #[inline]
    pub fn rows(&self) -> usize {
        // Typed values hold one entry per row, null or not (and are read
        // here rather than `valid`, whose `len` is not inlined across crates).
        match &self.values {
            Values::Null => self.valid.len(),
            Values::Bool(v) => v.len(),
            Values::Int(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::Text(t) | Values::Json(t) => t.offsets.len() - 1,
        }
    }

    /// The column's current kind.
    pub fn kind(&self) -> Kind {
        match self.values {
            Values::Null => Kind::Null,
            Values::Bool(_) => Kind::Bool,
            Values::Int(_) => Kind::Int,
            Values::Float(_) => Kind::Float,
            Values::Text(_) => Kind::Text,
            Values::Json(_) => Kind::Json,
        }
    }

    /// Appends nulls up to `rows` rows.
    pub fn pad_to(&mut self, rows: usize) -> Result<(), String> {
        let n = rows.saturating_sub(self.rows());
        if n > 0 {
            for _ in 0..n {
                self.push_default()?;
            }
            self.valid.append_n_nulls(n);
        }
        Ok(())
    }

    /// Drops the rows from `rows` on.
    pub fn truncate(&mut self, rows: usize) {
        self.valid.truncate(rows);
        self.alt.truncate(rows);
        match &mut self.values {
            Values::Null => {}
            Values::Bool(v) => v.truncate(rows),
            Values::Int(v) => v.truncate(rows),
            Values::Float(v) => v.truncate(rows),
            Values::Text(t) | Values::Json(t) => t.truncate(rows),
        }
    }

    /// Appends one value, widening the column when its kind does not fit.
    /// Fails only when a text column would pass 2 GiB.
    #[inline]
    pub fn push(&mut self, v: Scalar) -> Result<(), String> {
        // The common case first: a value of the column's own kind.
        match (&mut self.values, v) {
            (Values::Float(f), Scalar::Float(x)) => f.push(x),
            (Values::Int(i), Scalar::Int(x)) => i.push(x),
            (Values::Text(t), Scalar::Str(s)) => t.push(s.as_bytes())?,
            (Values::Bool(b), Scalar::Bool(x)) => b.push(x),
            _ => return self.push_other(v),
        }
        self.valid.append_non_null();
        Ok(())
    }

    /// [`ColumnBuilder::push`] of a null, or of a value whose kind is not
    /// the column's (widening the column first when needed).
    #[inline(never)]
    fn push_other(&mut self, v: Scalar) -> Result<(), String> {
        if let Scalar::UInt(u) = v {
            return match i64::try_from(u) {
                Ok(i) => self.push(Scalar::Int(i)),
                Err(_) => self.push_text_of(v),
            };
        }
        let mut alt = false;
        match (&mut self.values, v) {
            (Values::Null, Scalar::Null) => {}
            (_, Scalar::Null) => self.push_default()?,
            (Values::Float(f), Scalar::Int(x)) if x.unsigned_abs() <= F64_EXACT => {
                f.push(x as f64);
                alt = true;
            }
            (Values::Int(i), Scalar::Float(_))
                if i.iter().all(|i| i.unsigned_abs() <= F64_EXACT) =>
            {
                let f = i.iter().map(|&i| i as f64).collect();
                self.values = Values::Float(f);
                // Every value so far was an integer.
                self.alt = (0..self.rows()).map(|r| self.valid.is_valid(r)).collect();
                return self.push(v);
            }
            (Values::Null, _) => {
                let rows = self.rows();
                self.values = match v {
                    Scalar::Bool(_) => Values::Bool(vec![false; rows]),
                    Scalar::Int(_) => Values::Int(vec![0; rows]),
                    Scalar::Float(_) => Values::Float(vec![0.0; rows]),
                    Scalar::Str(_) => Values::Text(empty_text(rows)),
                    _ => Values::Json(empty_text(rows)),
                };
                return self.push(v);
            }
            (Values::Json(t), v) => t.push(json_text(v).as_bytes())?,
            (_, Scalar::Json(_)) => {
                self.widen(Kind::Json)?;
                return self.push(v);
            }
            (Values::Text(_), v) => return self.push_text_of(v),
            _ => {
                self.widen(Kind::Text)?;
                return self.push(v);
            }
        }
        self.push_flags(v != Scalar::Null, alt);
        Ok(())
    }

    /// Records the validity of a pushed row, and whether its value came in
    /// another kind than the column's (see `alt`).
    fn push_flags(&mut self, valid: bool, alt: bool) {
        self.valid.append(valid);
        if alt {
            self.alt.resize(self.valid.len() - 1, false);
            self.alt.push(true);
        }
    }

    /// Appends a non-string scalar as text (widening to text first when needed).
    fn push_text_of(&mut self, v: Scalar) -> Result<(), String> {
        if !matches!(self.values, Values::Text(_) | Values::Json(_)) {
            self.widen(Kind::Text)?;
        }
        let alt = match &mut self.values {
            Values::Text(t) => {
                t.push(scalar_text(v).as_bytes())?;
                true
            }
            Values::Json(t) => {
                t.push(json_text(v).as_bytes())?;
                false
            }
            _ => unreachable!("widened to text above"),
        };
        self.push_flags(true, alt);
        Ok(())
    }

    /// A placeholder value for a null row of a typed column (the caller
    /// marks the row invalid).
    fn push_default(&mut self) -> Result<(), String> {
        match &mut self.values {
            Values::Null => {}
            Values::Bool(b) => b.push(false),
            Values::Int(i) => i.push(0),
            Values::Float(f) => f.push(0.0),
            Values::Text(t) | Values::Json(t) => t.push(b"")?,
        }
        Ok(())
    }

    /// The value at `row` (a null row gives `Scalar::Null`).
    pub fn get(&self, row: usize) -> Scalar<'_> {
        if !self.valid.is_valid(row) {
            return Scalar::Null;
        }
        match &self.values {
            Values::Null => Scalar::Null,
            Values::Bool(b) => Scalar::Bool(b[row]),
            Values::Int(i) => Scalar::Int(i[row]),
            Values::Float(f) => Scalar::Float(f[row]),
            Values::Text(t) => Scalar::Str(t.get(row)),
            Values::Json(t) => Scalar::Json(t.get(row)),
        }
    }

    /// The value at `row` in the kind it arrived in, as far as the column
    /// knows it: an integer in a float column, and in a text column whether
    /// the text is a non-string scalar's JSON (`true`).
    fn original(&self, row: usize) -> (Scalar<'_>, bool) {
        let alt = self.alt.get(row).copied().unwrap_or(false);
        match self.get(row) {
            Scalar::Float(f) if alt => (Scalar::Int(f as i64), false),
            v => (v, alt),
        }
    }

    /// Rewrites the column as `Text` or `Json`, every value as its text.
    fn widen(&mut self, to: Kind) -> Result<(), String> {
        let rows = self.rows();
        let mut t = TextBuf::with_capacity(rows);
        let mut alt = Vec::with_capacity(rows);
        for row in 0..rows {
            let (v, raw) = self.original(row);
            let text = match v {
                Scalar::Null => String::new(),
                Scalar::Str(s) if raw || to == Kind::Text => s.to_string(),
                v if to == Kind::Json => json_text(v),
                v => scalar_text(v),
            };
            alt.push(to == Kind::Text && !matches!(v, Scalar::Str(_) | Scalar::Null) || raw);
            t.push(text.as_bytes())?;
        }
        (self.values, self.alt) = match to {
            Kind::Json => (Values::Json(t), Vec::new()),
            _ => (Values::Text(t), alt),
        };
        Ok(())
    }

    /// Appends every row of `array` (as frozen by [`ColumnBuilder::finish`]),
    /// copying buffers in bulk when the kinds agree.
    pub fn append_array(&mut self, array: &ArrayRef, json: bool) -> Result<(), String> {
        let rows = array.len();
        let nulls = array.logical_nulls();
        let any = array.as_any();
        let same = match (&mut self.values, json) {
            (Values::Int(v), _) => any
                .downcast_ref::<Int64Array>()
                .map(|a| v.extend_from_slice(a.values())),
            (Values::Float(v), _) => any
                .downcast_ref::<Float64Array>()
                .map(|a| v.extend_from_slice(a.values())),
            (Values::Bool(v), _) => any
                .downcast_ref::<BooleanArray>()
                .map(|a| v.extend(a.values().iter())),
            (Values::Text(t), false) | (Values::Json(t), true) => {
                match any.downcast_ref::<StringArray>() {
                    Some(a) => {
                        for i in 0..rows {
                            t.push(a.value(i).as_bytes())?;
                        }
                        Some(())
                    }
                    None => None,
                }
            }
            _ => None,
        };
        if same.is_some() {
            match &nulls {
                Some(n) => self.valid.append_buffer(n),
                None => self.valid.append_n_non_nulls(rows),
            }
            return Ok(());
        }
        for i in 0..rows {
            self.push(scalar_of(array, json, i))?;
        }
        Ok(())
    }

    /// Freezes the column into an Arrow array (buffers moved, not copied);
    /// the flag says whether it holds JSON text.
    pub fn finish(mut self) -> (ArrayRef, bool) {
        let rows = self.valid.len();
        let nulls = self.valid.finish().filter(|n| n.null_count() > 0);
        match self.values {
            Values::Null => (Arc::new(NullArray::new(rows)), false),
            Values::Bool(b) => (
                Arc::new(BooleanArray::new(BooleanBuffer::from(b), nulls)),
                false,
            ),
            Values::Int(i) => (
                Arc::new(Int64Array::new(ScalarBuffer::from(i), nulls)),
                false,
            ),
            Values::Float(f) => (
                Arc::new(Float64Array::new(ScalarBuffer::from(f), nulls)),
                false,
            ),
            Values::Text(t) => (text_array(t, nulls), false),
            Values::Json(t) => (text_array(t, nulls), true),
        }
    }
}

fn empty_text(rows: usize) -> TextBuf {
    TextBuf {
        offsets: vec![0; rows + 1],
        data: Vec::new(),
    }
}

fn text_array(t: TextBuf, nulls: Option<NullBuffer>) -> ArrayRef {
    let offsets = OffsetBuffer::new(ScalarBuffer::from(t.offsets));
    // SAFETY: the offsets are monotonic and end at data.len(), and every
    // slice between them was pushed as a whole `str`.
    Arc::new(unsafe { StringArray::new_unchecked(offsets, Buffer::from_vec(t.data), nulls) })
}

/// The value at row `i` of a frozen column (`json`: the column holds JSON text).
pub fn scalar_of(array: &ArrayRef, json: bool, i: usize) -> Scalar<'_> {
    if array.is_null(i) {
        return Scalar::Null;
    }
    let any = array.as_any();
    if let Some(a) = any.downcast_ref::<Int64Array>() {
        Scalar::Int(a.value(i))
    } else if let Some(a) = any.downcast_ref::<Float64Array>() {
        Scalar::Float(a.value(i))
    } else if let Some(a) = any.downcast_ref::<BooleanArray>() {
        Scalar::Bool(a.value(i))
    } else if let Some(a) = any.downcast_ref::<StringArray>() {
        if json {
            Scalar::Json(a.value(i))
        } else {
            Scalar::Str(a.value(i))
        }
    } else {
        Scalar::Null
    }
}

/// `f` as an integer when it is integral and exact as a float (|f| < 2^53):
/// how a float reads as an integer ([`crate::table::Column::i64`], the
/// GeoPackage topology), as [`crate::feature::value_as_i64`] reads one.
pub fn exact_i64(f: f64) -> Option<i64> {
    (f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15).then_some(f as i64)
}

/// A scalar as text in a `Text` column: strings as they are, the rest as JSON.
fn scalar_text(v: Scalar) -> String {
    match v {
        Scalar::Str(s) | Scalar::Json(s) => s.to_string(),
        v => json_text(v),
    }
}

/// A scalar as JSON text, formatted as serde_json formats the same value.
pub fn json_text(v: Scalar) -> String {
    match v {
        Scalar::Null => "null".into(),
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(i) => i.to_string(),
        Scalar::UInt(u) => u.to_string(),
        Scalar::Float(f) => {
            serde_json::Number::from_f64(f).map_or("null".into(), |n| n.to_string())
        }
        Scalar::Str(s) => serde_json::Value::from(s).to_string(),
        Scalar::Json(s) => s.to_string(),
    }
}

/// A scalar as a `serde_json::Value` (JSON text parsed back).
pub fn to_value(v: Scalar) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Scalar::Null => Value::Null,
        Scalar::Bool(b) => Value::Bool(b),
        Scalar::Int(i) => Value::from(i),
        Scalar::UInt(u) => Value::from(u),
        Scalar::Float(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        Scalar::Str(s) => Value::from(s),
        Scalar::Json(s) => serde_json::from_str(s).unwrap_or_else(|_| Value::from(s)),
    }
}

/// A `serde_json::Value` as a scalar; nested values need their text kept in `buf`.
pub fn from_value<'a>(v: &'a serde_json::Value, buf: &'a mut String) -> Scalar<'a> {
    use serde_json::Value;
    match v {
        Value::Null => Scalar::Null,
        Value::Bool(b) => Scalar::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Scalar::Int(i),
            (None, Some(u), _) => Scalar::UInt(u),
            (None, None, Some(f)) => Scalar::Float(f),
            _ => Scalar::Null,
        },
        Value::String(s) => Scalar::Str(s),
        Value::Array(_) | Value::Object(_) => {
            *buf = v.to_string();
            Scalar::Json(buf)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(values: &[Scalar]) -> ColumnBuilder {
        let mut c = ColumnBuilder::default();
        for &v in values {
            c.push(v).unwrap();
        }
        c
    }

    fn all(c: &ColumnBuilder) -> Vec<Scalar<'_>> {
        (0..c.rows()).map(|i| c.get(i)).collect()
    }

    #[test]
    fn nulls_then_a_type() {
        let c = column(&[Scalar::Null, Scalar::Null, Scalar::Int(3)]);
        assert_eq!(c.kind(), Kind::Int);
        assert_eq!(all(&c), [Scalar::Null, Scalar::Null, Scalar::Int(3)]);
    }

    #[test]
    fn integer_then_float_is_float() {
        let c = column(&[
            Scalar::Int(2),
            Scalar::Null,
            Scalar::Float(2.5),
            Scalar::Int(4),
        ]);
        assert_eq!(c.kind(), Kind::Float);
        let want = [
            Scalar::Float(2.0),
            Scalar::Null,
            Scalar::Float(2.5),
            Scalar::Float(4.0),
        ];
        assert_eq!(all(&c), want);
    }

    #[test]
    fn an_integer_no_float_holds_keeps_its_digits() {
        let big = (1i64 << 53) + 1;
        let c = column(&[Scalar::Int(big), Scalar::Float(0.5)]);
        assert_eq!(
            all(&c),
            [Scalar::Str("9007199254740993"), Scalar::Str("0.5")]
        );
        let c = column(&[Scalar::Float(0.5), Scalar::Int(big)]);
        assert_eq!(
            all(&c),
            [Scalar::Str("0.5"), Scalar::Str("9007199254740993")]
        );
        let c = column(&[Scalar::Int(1), Scalar::UInt(u64::MAX)]);
        assert_eq!(
            all(&c),
            [Scalar::Str("1"), Scalar::Str("18446744073709551615")]
        );
    }

    #[test]
    fn number_then_string_is_text_with_the_numbers_digits() {
        let c = column(&[Scalar::Float(510042379.0), Scalar::Int(7), Scalar::Str("x")]);
        assert_eq!(c.kind(), Kind::Text);
        assert_eq!(
            all(&c),
            [
                Scalar::Str("510042379.0"),
                Scalar::Str("7"),
                Scalar::Str("x")
            ]
        );
        let c = column(&[Scalar::Str("x"), Scalar::Bool(true), Scalar::Float(1.5)]);
        assert_eq!(
            all(&c),
            [Scalar::Str("x"), Scalar::Str("true"), Scalar::Str("1.5")]
        );
    }

    #[test]
    fn nested_values_make_the_column_json() {
        let c = column(&[
            Scalar::Str("a\"b"),
            Scalar::Int(1),
            Scalar::Json("[1,2]"),
            Scalar::Null,
        ]);
        assert_eq!(c.kind(), Kind::Json);
        let want = [
            Scalar::Json("\"a\\\"b\""),
            Scalar::Json("1"),
            Scalar::Json("[1,2]"),
            Scalar::Null,
        ];
        assert_eq!(all(&c), want);
        assert_eq!(to_value(c.get(0)), serde_json::json!("a\"b"));
    }

    #[test]
    fn frozen_columns_append_with_widening() {
        let (ints, _) = column(&[Scalar::Int(1), Scalar::Null]).finish();
        let (floats, _) = column(&[Scalar::Float(0.5)]).finish();
        let (text, _) = column(&[Scalar::Str("s")]).finish();
        let mut c = ColumnBuilder::default();
        for a in [&ints, &floats, &text] {
            c.append_array(a, false).unwrap();
        }
        assert_eq!(
            all(&c),
            [
                Scalar::Str("1"),
                Scalar::Null,
                Scalar::Str("0.5"),
                Scalar::Str("s")
            ]
        );
    }
}
