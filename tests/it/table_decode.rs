//! The columnar page decoder against an independent oracle: serde_json
//! reading each property value's raw text (`RawValue`), so numbers are
//! compared exactly as written (integers above 2^53, `-0.0`), never through
//! `f64` nor through the decoder it replaced. Checked is what a user of the
//! C stream export gets ([`layer_batch`]: names, Arrow types, every value),
//! on the recorded real responses of the fabric service, on a page of edge
//! cases, and on damaged inputs.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use hydroplot::arrow::layer_batch;
use hydroplot::table::decode::decode_page;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::path::PathBuf;

fn recorded_pages() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/responses");
    let mut pages: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.contains("items") && name.ends_with(".json")
        })
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    pages.sort();
    assert!(pages.len() >= 5, "the recorded items pages");
    pages
}

// ------------------------------------------------------------ the oracle

/// A feature's properties in document order, each value's raw JSON text.
#[derive(Default)]
struct Props(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Props {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Props, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Props;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object or null")
            }
            fn visit_unit<E>(self) -> Result<Props, E> {
                Ok(Props::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Props, A::Error> {
                let mut out = Props::default();
                while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
                    // A repeated key keeps its last value, in its first place.
                    match out.0.iter_mut().find(|(key, _)| *key == k) {
                        Some(slot) => slot.1 = v,
                        None => out.0.push((k, v)),
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct RawFeature {
    #[serde(default)]
    properties: Props,
    #[serde(default)]
    geometry: Option<Value>,
}

#[derive(Deserialize)]
struct RawPage {
    features: Vec<RawFeature>,
}

/// A property value as written.
#[derive(Debug, Clone, PartialEq)]
enum Lit {
    Null,
    Bool(bool),
    /// An integer literal that fits an i64.
    Int(i64),
    /// An integer literal beyond the i64 range that fits a u64: its digits.
    Big(String),
    /// A number with a fraction or an exponent, `-0` (serde_json reads it as
    /// -0.0), or an integer literal beyond the u64 range (read as a float).
    Float(f64),
    Str(String),
    Nested(Value),
}

fn lit(raw: &RawValue) -> Lit {
    let t = raw.get();
    match t.as_bytes()[0] {
        b'n' => Lit::Null,
        b't' | b'f' => Lit::Bool(t == "true"),
        b'"' => Lit::Str(serde_json::from_str(t).unwrap()),
        b'{' | b'[' => Lit::Nested(serde_json::from_str(t).unwrap()),
        _ if t.contains(['.', 'e', 'E']) || t == "-0" => Lit::Float(t.parse().unwrap()),
        _ => match (t.parse::<i64>(), t.parse::<u64>()) {
            (Ok(i), _) => Lit::Int(i),
            (_, Ok(_)) => Lit::Big(t.to_string()),
            _ => Lit::Float(t.parse().unwrap()),
        },
    }
}

/// One expected column: its key as sent and every row's value.
struct Expected {
    key: String,
    rows: Vec<Lit>,
}

/// The columns a page should give, first-seen order.
fn expected_columns(page: &RawPage) -> Vec<Expected> {
    let mut cols: Vec<Expected> = Vec::new();
    let n = page.features.len();
    for (row, f) in page.features.iter().enumerate() {
        for (k, v) in &f.properties.0 {
            let i = match cols.iter().position(|c| c.key == *k) {
                Some(i) => i,
                None => {
                    cols.push(Expected {
                        key: k.clone(),
                        rows: vec![Lit::Null; n],
                    });
                    cols.len() - 1
                }
            };
            cols[i].rows[row] = lit(v);
        }
    }
    cols
}

/// The name a key's column should have: lower case, unless another key
/// differs from it only in case.
fn expected_name(key: &str, cols: &[Expected]) -> String {
    let lower = key.to_ascii_lowercase();
    let same = cols
        .iter()
        .filter(|c| c.key.to_ascii_lowercase() == lower)
        .count();
    if same > 1 {
        key.to_string()
    } else {
        lower
    }
}

/// The Arrow type a column of these values should have, and whether it
/// holds JSON text (`arrow.json`).
fn expected_type(rows: &[Lit]) -> (DataType, bool) {
    let vals: Vec<&Lit> = rows.iter().filter(|l| **l != Lit::Null).collect();
    let all = |f: fn(&Lit) -> bool| vals.iter().all(|l| f(l));
    let exact = |l: &Lit| match l {
        Lit::Int(i) => i.unsigned_abs() <= 1 << 53,
        Lit::Float(_) => true,
        _ => false,
    };
    if vals.is_empty() {
        (DataType::Utf8, false) // the export's type of a column without values
    } else if vals.iter().any(|l| matches!(l, Lit::Nested(_))) {
        (DataType::Utf8, true)
    } else if all(|l| matches!(l, Lit::Bool(_))) {
        (DataType::Boolean, false)
    } else if all(|l| matches!(l, Lit::Int(_))) {
        (DataType::Int64, false)
    } else if all(exact) {
        (DataType::Float64, false)
    } else {
        (DataType::Utf8, false)
    }
}

/// Checks `batch` (a layer's export) against the oracle's reading of `bytes`.
fn check_export(name: &str, bytes: &[u8], batch: &RecordBatch) -> usize {
    let page: RawPage = serde_json::from_slice(bytes).unwrap();
    let cols = expected_columns(&page);
    let schema = batch.schema();
    assert_eq!(batch.num_rows(), page.features.len(), "{name}");
    let names: Vec<&str> = schema.fields()[1..]
        .iter()
        .map(|f| f.name().as_str())
        .collect();
    let want: Vec<String> = cols.iter().map(|c| expected_name(&c.key, &cols)).collect();
    assert_eq!(names, want, "{name}: column names, first-seen order");
    let mut checked = 0;
    for (i, col) in cols.iter().enumerate() {
        let field = schema.field(i + 1);
        let array = batch.column(i + 1);
        let what = format!("{name} column {}", col.key);
        let (ty, json) = expected_type(&col.rows);
        assert_eq!(field.data_type(), &ty, "{what}");
        let is_json = field
            .metadata()
            .get("ARROW:extension:name")
            .map(String::as_str)
            == Some("arrow.json");
        assert_eq!(is_json, json, "{what}");
        assert!(!field.metadata().contains_key("hydroplot:key"), "{what}");
        for (row, l) in col.rows.iter().enumerate() {
            let at = format!("{what} row {row}: {l:?}");
            if *l == Lit::Null {
                assert!(array.is_null(row), "{at}");
                continue;
            }
            assert!(array.is_valid(row), "{at}");
            match (&ty, l) {
                (DataType::Int64, Lit::Int(i)) => {
                    assert_eq!(array.as_primitive::<Int64Type>().value(row), *i, "{at}")
                }
                (DataType::Float64, Lit::Int(i)) => {
                    assert_eq!(
                        array.as_primitive::<Float64Type>().value(row),
                        *i as f64,
                        "{at}"
                    )
                }
                (DataType::Float64, Lit::Float(f)) => assert_eq!(
                    array.as_primitive::<Float64Type>().value(row).to_bits(),
                    f.to_bits(),
                    "{at}"
                ),
                (DataType::Boolean, Lit::Bool(b)) => {
                    assert_eq!(array.as_boolean().value(row), *b, "{at}")
                }
                (DataType::Utf8, l) => {
                    let text = array.as_string::<i32>().value(row);
                    match l {
                        _ if json => {
                            let want = match l {
                                Lit::Nested(v) => v.clone(),
                                Lit::Str(s) => Value::from(s.as_str()),
                                Lit::Bool(b) => Value::from(*b),
                                Lit::Int(i) => Value::from(*i),
                                Lit::Big(d) => serde_json::from_str(d).unwrap(),
                                Lit::Float(f) => Value::from(*f),
                                Lit::Null => Value::Null,
                            };
                            assert_eq!(serde_json::from_str::<Value>(text).unwrap(), want, "{at}")
                        }
                        Lit::Str(s) => assert_eq!(text, s, "{at}"),
                        Lit::Bool(b) => assert_eq!(text, b.to_string(), "{at}"),
                        Lit::Int(i) => assert_eq!(text, i.to_string(), "{at}: the digits"),
                        Lit::Big(d) => assert_eq!(text, d, "{at}: the digits"),
                        Lit::Float(f) => {
                            assert_eq!(text.parse::<f64>().unwrap().to_bits(), f.to_bits(), "{at}")
                        }
                        _ => unreachable!(),
                    }
                }
                _ => panic!("{at}: a {ty} column"),
            }
            checked += 1;
        }
    }
    checked
}

/// The positions of a GeoJSON geometry, x and y, in order.
fn positions(g: &Value, out: &mut Vec<(f64, f64)>) {
    fn walk(v: &Value, out: &mut Vec<(f64, f64)>) {
        let a = v.as_array().unwrap();
        match a.first() {
            Some(Value::Number(_)) => out.push((a[0].as_f64().unwrap(), a[1].as_f64().unwrap())),
            _ => a.iter().for_each(|v| walk(v, out)),
        }
    }
    match g.get("geometries") {
        Some(members) => members
            .as_array()
            .unwrap()
            .iter()
            .for_each(|m| positions(m, out)),
        None => walk(&g["coordinates"], out),
    }
}

#[test]
fn recorded_responses_decode_to_exactly_what_was_sent() {
    use geo::CoordsIter;
    let mut checked = 0;
    for (path, bytes) in recorded_pages() {
        let name = path.display().to_string();
        let page = decode_page(&bytes).unwrap();
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(page.number_matched, doc["numberMatched"].as_u64(), "{name}");
        assert_eq!(
            page.number_returned,
            doc["numberReturned"].as_u64(),
            "{name}"
        );
        let batch = layer_batch(&page.table, "EPSG:4269").unwrap();
        checked += check_export(&name, &bytes, &batch);
        let raw: RawPage = serde_json::from_slice(&bytes).unwrap();
        for (i, f) in raw.features.iter().enumerate() {
            let got: Option<Vec<(f64, f64)>> = page
                .table
                .geometry(i)
                .map(|g| g.coords_iter().map(|c| (c.x, c.y)).collect());
            let want = f.geometry.as_ref().filter(|g| !g.is_null()).map(|g| {
                let mut out = Vec::new();
                positions(g, &mut out);
                out
            });
            assert_eq!(got, want, "{name} feature {i}: the coordinates, exactly");
        }
    }
    assert!(checked > 500, "{checked} property values compared");
}

/// Two features of hand-written literals, each column one edge of the rules
/// (columnar.md, "Number kinds"); every value checked by the oracle, and the
/// cases named here checked by hand too.
const EDGES: &str = r#"{"type":"FeatureCollection","features":[
 {"type":"Feature","geometry":null,"properties":{
  "COMID":13293970,"comid":1,"StreamOrde":3,"hydroseq":510042379.0,"big":9007199254740993,
  "bigmix":9007199254740993,"u":18446744073709551615,"neg0":-0.0,"exp":1e3,"mixed":1,
  "name":"a","flag":true,"nested":{"a":[1,2.5]},"blank":null,"minus0":-0,"numtext":7}},
 {"type":"Feature","geometry":null,"properties":{
  "COMID":13293971,"StreamOrde":4,"hydroseq":510042380.0,"big":-9223372036854775808,
  "bigmix":0.5,"u":1,"neg0":0.5,"exp":2,"mixed":2.5,"name":"b","flag":false,"nested":"s",
  "blank":null,"minus0":-0,"numtext":"x"}}
]}"#;

#[test]
fn edge_literals_keep_their_kind_and_every_digit() {
    let page = decode_page(EDGES.as_bytes()).unwrap();
    let batch = layer_batch(&page.table, "EPSG:4269").unwrap();
    assert_eq!(check_export("edges", EDGES.as_bytes(), &batch), 29);
    // By hand: what each column must be, whatever the oracle says.
    let schema = batch.schema();
    let ty = |n: &str| schema.field_with_name(n).unwrap().data_type().clone();
    let col = |n: &str| batch.column(schema.index_of(n).unwrap()).clone();
    // Case-distinct keys: two columns, both values.
    assert_eq!(
        col("COMID").as_primitive::<Int64Type>().values(),
        &[13293970, 13293971]
    );
    assert_eq!(col("comid").as_primitive::<Int64Type>().value(0), 1);
    assert!(col("comid").is_null(1));
    assert_eq!(ty("streamorde"), DataType::Int64);
    // Float literals stay float64 though integral.
    assert_eq!(ty("hydroseq"), DataType::Float64);
    assert_eq!(ty("exp"), DataType::Float64);
    // Integers above 2^53: exact in an int64 column, digits in a text one.
    assert_eq!(
        col("big").as_primitive::<Int64Type>().values(),
        &[9007199254740993, i64::MIN]
    );
    assert_eq!(
        col("bigmix").as_string::<i32>().value(0),
        "9007199254740993"
    );
    assert_eq!(col("u").as_string::<i32>().value(0), "18446744073709551615");
    // -0.0 keeps its sign; so does -0, which serde_json reads as -0.0.
    let neg0 = col("neg0").as_primitive::<Float64Type>().value(0);
    assert!(neg0 == 0.0 && neg0.is_sign_negative());
    let minus0 = col("minus0").as_primitive::<Float64Type>().value(1);
    assert!(minus0 == 0.0 && minus0.is_sign_negative());
    // A column without a value is still a column.
    assert_eq!(
        (ty("blank"), col("blank").null_count()),
        (DataType::Utf8, 2)
    );
    assert_eq!(col("numtext").as_string::<i32>().value(0), "7");
}

/// One layer's schema is the same whatever values a page happens to hold:
/// two pages of the same service agree (no concatenation clash).
#[test]
fn the_schema_does_not_depend_on_the_values() {
    let page = |hydroseq: &str| {
        let doc = format!(
            r#"{{"type":"FeatureCollection","features":[{{"type":"Feature","geometry":null,"properties":{{"comid":1,"hydroseq":{hydroseq}}}}}]}}"#
        );
        let t = decode_page(doc.as_bytes()).unwrap().table;
        layer_batch(&t, "EPSG:4269").unwrap().schema()
    };
    assert_eq!(page("510042379.0"), page("510042379.5"));
}

/// A small deterministic generator (no dependency for a fuzz-style test).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
}

#[test]
fn truncated_and_garbled_pages_never_panic() {
    let mut rng = Lcg(16);
    let alphabet = b"{}[],:\"0123456789.-eE ntrufalsx\\";
    for (_, bytes) in recorded_pages() {
        // Every truncation of the smaller pages, a stride of the larger.
        let step = (bytes.len() / 3000).max(1);
        for end in (0..bytes.len()).step_by(step) {
            let _ = decode_page(&bytes[..end]);
        }
        for _ in 0..1000 {
            let mut b = bytes.clone();
            for _ in 0..1 + rng.next() % 4 {
                let at = rng.next() % b.len();
                match rng.next() % 3 {
                    0 => b[at] = alphabet[rng.next() % alphabet.len()],
                    1 => {
                        b.remove(at);
                    }
                    _ => b.insert(at, alphabet[rng.next() % alphabet.len()]),
                }
            }
            if let Ok(page) = decode_page(&b) {
                // Whatever decodes is readable everywhere.
                let t = &page.table;
                for row in 0..t.len() {
                    let _ = (t.geometry(row), t.geometries().bbox(row), t.id(row));
                }
                let _ = t.to_features();
                let _ = layer_batch(t, "EPSG:4269").unwrap();
            }
        }
    }
}
