//! Decodes an OGC API Features items page (a GeoJSON FeatureCollection)
//! straight into a [`Table`]: serde visitors over the bytes push each value
//! into its column and each coordinate into the geometry buffers, with no
//! intermediate JSON tree and no map per feature.
//!
//! Strings without escapes are borrowed from the page while being copied
//! into their column; property keys are interned (and lower-cased) once
//! per distinct spelling. Only nested property values (objects, arrays)
//! and coordinates sent before their geometry's `type` go through a
//! `serde_json::Value`, both rare.

use super::column::Scalar;
use super::geometry::{kind, GeometryBuilder};
use super::scratch::{KeyMode, Step};
use super::{Table, TableBuilder};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;

/// One decoded items page: its features as a table, and the paging members.
#[derive(Debug)]
pub struct Page {
    /// The features.
    pub table: Table,
    /// The document's `type` (a page is a `"FeatureCollection"`).
    pub kind: String,
    /// `numberMatched`, when sent.
    pub number_matched: Option<u64>,
    /// `numberReturned`, when sent.
    pub number_returned: Option<u64>,
    /// The `href` of the first `rel=next` link, when `links` has one (`""`
    /// for a next link without a string `href`).
    pub next: Option<String>,
}

/// Decodes one page. Any malformed input is an error (never a panic).
pub fn decode_page(bytes: &[u8]) -> Result<Page, String> {
    let mut b = TableBuilder {
        keys: KeyMode::Bytes,
        ..TableBuilder::default()
    };
    let head = match decode_slice(bytes, &mut b) {
        Err(_) if b.keys == KeyMode::Ambiguous => {
            b = TableBuilder::default();
            decode_slice(bytes, &mut b)
        }
        head => head,
    }?;
    page(head, b)
}

/// Decodes one page of serde_json into `b`, with nothing after the document.
fn decode_slice(bytes: &[u8], b: &mut TableBuilder) -> Result<Head, String> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let head = PageSeed { b }
        .deserialize(&mut de)
        .map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(head)
}

/// Decodes one page from any serde deserializer (the caller checks that
/// nothing follows the document). Keys are read as text.
pub fn decode_with<'de, D: Deserializer<'de>>(d: D) -> Result<Page, String> {
    let mut b = TableBuilder::default();
    let head = PageSeed { b: &mut b }
        .deserialize(d)
        .map_err(|e| e.to_string())?;
    page(head, b)
}

fn page(head: Head, b: TableBuilder) -> Result<Page, String> {
    Ok(Page {
        table: b.finish()?,
        kind: head.kind,
        number_matched: head.number_matched,
        number_returned: head.number_returned,
        next: head.next,
    })
}

/// The page's members other than `features`.
struct Head {
    kind: String,
    number_matched: Option<u64>,
    number_returned: Option<u64>,
    next: Option<String>,
}

/// A key, borrowed from the input when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// A property key as serde_json's bytes parse gives it: the page's own
/// bytes, or bytes decoded from escapes; UTF-8 not checked.
enum KeyBytes<'de> {
    Verbatim(&'de [u8]),
    Decoded(Vec<u8>),
}

impl<'de> Deserialize<'de> for KeyBytes<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyBytes<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_bytes<E>(self, b: &'de [u8]) -> Result<KeyBytes<'de>, E> {
                Ok(KeyBytes::Verbatim(b))
            }
            fn visit_bytes<E>(self, b: &[u8]) -> Result<KeyBytes<'de>, E> {
                Ok(KeyBytes::Decoded(b.to_vec()))
            }
        }
        d.deserialize_bytes(V)
    }
}

#[derive(Deserialize)]
struct Link {
    rel: Option<String>,
    href: Option<serde_json::Value>,
}

struct PageSeed<'b> {
    b: &'b mut TableBuilder,
}

impl<'de> DeserializeSeed<'de> for PageSeed<'_> {
    type Value = Head;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Head, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for PageSeed<'_> {
    type Value = Head;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a GeoJSON FeatureCollection")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        let (mut kind, mut features) = (None, false);
        let (mut number_matched, mut number_returned, mut next) = (None, None, None);
        while let Some(Key(key)) = map.next_key()? {
            match key.as_ref() {
                "type" => kind = Some(map.next_value::<String>()?),
                "features" if features => return Err(de::Error::duplicate_field("features")),
                "features" => {
                    map.next_value_seed(Features { b: &mut *self.b })?;
                    features = true;
                }
                "numberMatched" => number_matched = map.next_value()?,
                "numberReturned" => number_returned = map.next_value()?,
                "links" => {
                    let links: Vec<Link> = map.next_value()?;
                    next = links
                        .into_iter()
                        .find(|l| l.rel.as_deref() == Some("next"))
                        .map(|l| {
                            let href = l.href.as_ref().and_then(serde_json::Value::as_str);
                            href.unwrap_or_default().to_string()
                        });
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !features {
            return Err(de::Error::missing_field("features"));
        }
        Ok(Head {
            kind: kind.ok_or_else(|| de::Error::missing_field("type"))?,
            number_matched,
            number_returned,
            next,
        })
    }
}

/// The `features` array.
struct Features<'b> {
    b: &'b mut TableBuilder,
}

impl<'de> DeserializeSeed<'de> for Features<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Features<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of GeoJSON features")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(FeatureSeed { b: &mut *self.b })?
            .is_some()
        {}
        Ok(())
    }
}

/// One feature: fills one row.
struct FeatureSeed<'b> {
    b: &'b mut TableBuilder,
}

impl<'de> DeserializeSeed<'de> for FeatureSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FeatureSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a GeoJSON Feature")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let b = self.b;
        let (mut typed, mut geometry) = (false, false);
        while let Some(Key(key)) = map.next_key()? {
            match key.as_ref() {
                "type" => {
                    let t: Key = map.next_value()?;
                    if t.0 != "Feature" {
                        return Err(de::Error::custom(format!(
                            "a feature's type is {:?}, not \"Feature\"",
                            t.0
                        )));
                    }
                    typed = true;
                }
                "id" => map.next_value_seed(IdSeed { b: &mut *b })?,
                "properties" => map.next_value_seed(Properties { b: &mut *b })?,
                "geometry" if geometry => return Err(de::Error::duplicate_field("geometry")),
                "geometry" => {
                    map.next_value_seed(GeometrySeed { b: &mut *b })?;
                    geometry = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !typed {
            return Err(de::Error::missing_field("type"));
        }
        if !geometry {
            b.geometry.push_none().map_err(de::Error::custom)?;
        }
        b.end_row();
        Ok(())
    }
}

/// A feature's `id`: a string or a number.
struct IdSeed<'b> {
    b: &'b mut TableBuilder,
}

impl<'de> DeserializeSeed<'de> for IdSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for IdSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a feature id (a string or a number)")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.b.set_id(Scalar::Int(v)).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.b.set_id(Scalar::UInt(v)).map_err(E::custom)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.b.set_id(Scalar::Float(v)).map_err(E::custom)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.b.set_id(Scalar::Str(v)).map_err(E::custom)
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

/// A feature's `properties` object (or null).
struct Properties<'b> {
    b: &'b mut TableBuilder,
}

impl<'de> DeserializeSeed<'de> for Properties<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Properties<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a properties object or null")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        loop {
            let key = if self.b.keys == KeyMode::Text {
                match map.next_key()? {
                    Some(Key(key)) => self.b.key(&key),
                    None => break,
                }
            } else {
                let bytes = match map.next_key()? {
                    Some(KeyBytes::Verbatim(bytes)) => Cow::Borrowed(bytes),
                    Some(KeyBytes::Decoded(bytes)) if bytes.iter().any(|&c| c < 0x20) => {
                        self.b.keys = KeyMode::Ambiguous;
                        return Err(de::Error::custom("a key to read again as text"));
                    }
                    Some(KeyBytes::Decoded(bytes)) => Cow::Owned(bytes),
                    None => break,
                };
                self.b.key_bytes(&bytes).map_err(de::Error::custom)?
            };
            map.next_value_seed(ValueSeed {
                b: &mut *self.b,
                key,
            })?;
        }
        Ok(())
    }
}

/// One property value, pushed into its column.
struct ValueSeed<'b> {
    b: &'b mut TableBuilder,
    key: u32,
}

impl ValueSeed<'_> {
    fn set<E: de::Error>(self, v: Scalar) -> Result<(), E> {
        self.b.set(self.key, v).map_err(E::custom)
    }
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.set(Scalar::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.set(Scalar::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.set(Scalar::UInt(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.set(Scalar::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.set(Scalar::Str(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.set(Scalar::Null)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let v = serde_json::Value::deserialize(de::value::MapAccessDeserializer::new(map))?;
        self.set(Scalar::Json(&v.to_string()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        let v = serde_json::Value::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
        self.set(Scalar::Json(&v.to_string()))
    }
}

/// A feature's `geometry` (or null): one geometry row.
struct GeometrySeed<'b> {
    b: &'b mut TableBuilder,
}

impl<'de> DeserializeSeed<'de> for GeometrySeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

/// The type code of a GeoJSON geometry type, and the nesting depth of its
/// coordinates (1: a position; 4: polygons of rings of positions).
fn geometry_type(name: &str) -> Option<(u8, u8)> {
    Some(match name {
        "Point" => (kind::POINT, 1),
        "MultiPoint" => (kind::MULTIPOINT, 2),
        "LineString" => (kind::LINESTRING, 2),
        "MultiLineString" => (kind::MULTILINESTRING, 3),
        "Polygon" => (kind::POLYGON, 3),
        "MultiPolygon" => (kind::MULTIPOLYGON, 4),
        "GeometryCollection" => (kind::COLLECTION, 0),
        _ => return None,
    })
}

impl<'de> Visitor<'de> for GeometrySeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a GeoJSON geometry or null")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.b.geometry.push_none().map_err(E::custom)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let b = self.b;
        let mut kind_depth: Option<(u8, u8)> = None;
        let mut coordinates = false;
        let mut members: Option<Vec<geojson::Geometry>> = None;
        b.coords.clear();
        while let Some(Key(key)) = map.next_key()? {
            match key.as_ref() {
                "type" => {
                    let Key(t) = map.next_value()?;
                    kind_depth = Some(geometry_type(&t).ok_or_else(|| {
                        de::Error::custom(format!("unknown geometry type {t:?}"))
                    })?);
                }
                "coordinates" if coordinates => {
                    return Err(de::Error::duplicate_field("coordinates"))
                }
                "coordinates" => {
                    map.next_value_seed(Coords(&mut b.coords))?;
                    coordinates = true;
                }
                "geometries" => members = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let (k, depth) = kind_depth.ok_or_else(|| de::Error::missing_field("type"))?;
        let custom = <A::Error as de::Error>::custom;
        if k == kind::COLLECTION {
            let members = members.ok_or_else(|| de::Error::missing_field("geometries"))?;
            let mut geoms = Vec::with_capacity(members.len());
            for g in members {
                geoms.push(crate::feature::geometry_from_geojson(g).map_err(custom)?);
            }
            let g = geo::Geometry::GeometryCollection(geo::GeometryCollection(geoms));
            return b.geometry.push_collection(g).map_err(custom);
        }
        if !coordinates {
            return Err(de::Error::missing_field("coordinates"));
        }
        replay(&b.coords, depth, &mut b.geometry).map_err(|e| {
            b.geometry.abandon_row();
            custom(e)
        })?;
        b.geometry.finish_row(k).map_err(custom)
    }
}

/// Writes recorded coordinates into the geometry buffers as a geometry
/// whose positions sit `depth` arrays deep, the outermost included (see
/// `geometry`): closing an array of positions ends a ring, an array of
/// those a part.
fn replay(steps: &[Step], depth: u8, g: &mut GeometryBuilder) -> Result<(), String> {
    let wrong = || format!("coordinates nested other than a {depth}-deep geometry needs");
    let mut level = 0u8;
    let mut positions = 0usize;
    for step in steps {
        match *step {
            Step::Open => {
                level += 1;
                if level >= depth {
                    return Err(wrong());
                }
            }
            Step::Position(x, y) if level + 1 == depth => {
                g.push_xy(x, y);
                positions += 1;
            }
            Step::Position(..) => return Err(wrong()),
            Step::Close => {
                // The array closing now holds positions `depth - level` arrays down.
                match depth + 1 - level {
                    2 => g.close_ring()?,
                    3 => g.close_part()?,
                    _ => {}
                }
                level -= 1;
            }
        }
    }
    if depth == 1 {
        if positions != 1 {
            return Err("a position has fewer than two coordinates".into());
        }
        g.close_ring()?;
    }
    if depth <= 2 {
        g.close_part()?;
    }
    Ok(())
}

/// A coordinates array, recorded as [`Step`]s: an array of numbers is one
/// `Position`, any other array its `Open`, its elements and its `Close`.
struct Coords<'s>(&'s mut Vec<Step>);

impl<'de> DeserializeSeed<'de> for Coords<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Coords<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a GeoJSON coordinates array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let steps = self.0;
        steps.push(Step::Open);
        match seq.next_element_seed(Element(&mut *steps))? {
            None => steps.push(Step::Close),
            Some(Some(x)) => {
                steps.pop();
                let short = || de::Error::custom("a position has fewer than two coordinates");
                let y: f64 = seq.next_element()?.ok_or_else(short)?;
                // Z and M are dropped, as the `geo` conversion drops them.
                while seq.next_element::<f64>()?.is_some() {}
                steps.push(Step::Position(x, y));
            }
            Some(None) => {
                while seq.next_element_seed(Coords(&mut *steps))?.is_some() {}
                steps.push(Step::Close);
            }
        }
        Ok(())
    }
}

/// The first element of an array: a number (`Some`, the array is a
/// position) or a nested array (`None`, recorded).
struct Element<'s>(&'s mut Vec<Step>);

impl<'de> DeserializeSeed<'de> for Element<'_> {
    type Value = Option<f64>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<f64>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Element<'_> {
    type Value = Option<f64>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number or an array")
    }
    fn visit_f64<E>(self, v: f64) -> Result<Option<f64>, E> {
        Ok(Some(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Option<f64>, E> {
        Ok(Some(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Option<f64>, E> {
        Ok(Some(v as f64))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<f64>, A::Error> {
        Coords(&mut *self.0).visit_seq(seq)?;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page(features: serde_json::Value) -> Page {
        let doc = json!({"type": "FeatureCollection", "features": features});
        decode_page(doc.to_string().as_bytes()).unwrap()
    }

    fn feature(props: serde_json::Value) -> serde_json::Value {
        json!({"type": "Feature", "properties": props, "geometry": null})
    }

    #[test]
    fn a_property_on_some_features_is_null_elsewhere() {
        let p = page(json!([
            feature(json!({"a": 1})),
            feature(json!({"b": "x"})),
            feature(json!({}))
        ]));
        let t = &p.table;
        assert_eq!(t.len(), 3);
        assert_eq!(t.get_i64(0, "a"), Some(1));
        assert_eq!(t.column("a").unwrap().scalar(1), Scalar::Null);
        assert_eq!(t.column("a").unwrap().scalar(2), Scalar::Null);
        assert_eq!(t.get_str(1, "b"), Some("x"));
        assert_eq!(t.column("b").unwrap().scalar(0), Scalar::Null);
    }

    #[test]
    fn integer_then_float_widens_to_float() {
        let p = page(json!([
            feature(json!({"a": 1})),
            feature(json!({"a": 2.5}))
        ]));
        let c = p.table.column("a").unwrap();
        assert_eq!(c.array().data_type(), &arrow_schema::DataType::Float64);
        assert_eq!((c.f64(0), c.f64(1)), (Some(1.0), Some(2.5)));
    }

    #[test]
    fn number_then_string_widens_to_text_keeping_the_digits() {
        let p = page(json!([
            feature(json!({"a": 510042379.0})),
            feature(json!({"a": 12})),
            feature(json!({"a": "N/A"})),
            feature(json!({"a": null}))
        ]));
        let c = p.table.column("a").unwrap();
        assert_eq!(c.array().data_type(), &arrow_schema::DataType::Utf8);
        let got: Vec<_> = (0..4).map(|i| c.scalar(i)).collect();
        let want = [
            Scalar::Str("510042379.0"),
            Scalar::Str("12"),
            Scalar::Str("N/A"),
            Scalar::Null,
        ];
        assert_eq!(got, want);
        assert_eq!(c.i64(0), None, "text that is not an integer");
        assert_eq!(c.i64(1), Some(12));
    }

    #[test]
    fn nested_values_are_json_text() {
        let p = page(json!([
            feature(json!({"a": "s"})),
            feature(json!({"a": {"k": [1, 2.5, null]}})),
            feature(json!({"a": [true]}))
        ]));
        let t = &p.table;
        assert!(super::super::is_json(t.schema().field(0)));
        let c = t.column("a").unwrap();
        assert_eq!(c.value(0), json!("s"));
        assert_eq!(c.value(1), json!({"k": [1, 2.5, null]}));
        assert_eq!(c.value(2), json!([true]));
    }

    #[test]
    fn keys_are_lower_cased_and_case_distinct_keys_keep_both_values() {
        let p = page(json!([
            feature(json!({"COMID": 1, "StreamOrde": 2})),
            feature(json!({"comid": 3, "COMID": 4})),
        ]));
        let t = &p.table;
        let names: Vec<&str> = t
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        assert_eq!(names, ["COMID", "streamorde", "comid"]);
        assert_eq!(t.get_i64(0, "streamorde"), Some(2));
        assert_eq!(t.get_i64(0, "StreamOrde"), Some(2), "matched ignoring case");
        assert_eq!(
            (t.get_i64(0, "COMID"), t.get_i64(1, "COMID")),
            (Some(1), Some(4))
        );
        assert_eq!(
            (t.get_i64(0, "comid"), t.get_i64(1, "comid")),
            (None, Some(3))
        );
        assert_eq!(
            t.get_i64(1, "Comid"),
            Some(3),
            "no exact name: the lower-case one"
        );
        assert_eq!(t.get_i64(1, "StreamOrde"), None);
        // One spelling alone is lower-cased, remembering the key sent, so
        // pages join by key whichever spellings each page has.
        let only_upper = page(json!([feature(json!({"COMID": 5}))])).table;
        assert_eq!(only_upper.schema().field(0).name(), "comid");
        let t = Table::concat(&[only_upper, p.table]).unwrap();
        let comid = |name: &str| (0..3).map(|r| t.get_i64(r, name)).collect::<Vec<_>>();
        assert_eq!(comid("COMID"), [Some(5), Some(1), Some(4)]);
        assert_eq!(comid("comid"), [None, None, Some(3)]);
        let escaped = br#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"N\u0041ME":"a\"b","x":1,"x":2},"geometry":null}]}"#;
        let t = decode_page(escaped).unwrap().table;
        assert_eq!(t.get_str(0, "name"), Some("a\"b"));
        assert_eq!(
            t.get_i64(0, "x"),
            Some(2),
            "a repeated key keeps its last value"
        );
    }

    #[test]
    fn keys_are_checked_as_json_strings() {
        let doc = |props: &[u8]| {
            let mut d = br#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"a":1},"geometry":null},{"type":"Feature","properties":{"#.to_vec();
            d.extend_from_slice(props);
            d.extend_from_slice(br#"},"geometry":null}]}"#);
            d
        };
        // JSON allows an escaped control character in a string.
        let t = decode_page(&doc(br#""a":2,"x\ty":3"#)).unwrap().table;
        assert_eq!(t.get_i64(1, "x\ty"), Some(3));
        assert_eq!(t.get_i64(1, "a"), Some(2));
        // A raw control character, bytes that are not UTF-8, a lone
        // surrogate: with or without an escape elsewhere in the key, and
        // in the predicted key's place or not.
        for bad in [
            &b"\"x\ty\":3"[..],
            b"\"x\ty\\u0041\":3",
            b"\"a\":2,\"x\xffy\":3",
            b"\"\xff\":3",
            b"\"x\xff\\u0041\":3",
            br#""x\ud800":3"#,
        ] {
            assert!(
                decode_page(&doc(bad)).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn types_widen_across_pages() {
        let a = page(json!([feature(json!({"a": 1, "b": true}))])).table;
        let b = page(json!([feature(json!({"a": 1.5, "c": [1]}))])).table;
        let c = page(json!([feature(json!({"a": "z", "b": 3}))])).table;
        let t = Table::concat(&[a, b, c]).unwrap();
        assert_eq!(t.len(), 3);
        let col = |n: &str| t.column(n).unwrap();
        assert_eq!(
            (0..3).map(|i| col("a").scalar(i)).collect::<Vec<_>>(),
            [Scalar::Str("1"), Scalar::Str("1.5"), Scalar::Str("z")]
        );
        assert_eq!(
            (0..3).map(|i| col("b").scalar(i)).collect::<Vec<_>>(),
            [Scalar::Str("true"), Scalar::Null, Scalar::Str("3")]
        );
        assert_eq!(col("c").value(1), json!([1]));
        assert_eq!(col("c").scalar(0), Scalar::Null);
    }

    #[test]
    fn paging_members_and_geometries() {
        let doc = json!({
            "numberMatched": 7, "numberReturned": 2, "type": "FeatureCollection",
            "links": [{"rel": "self", "href": "x"}, {"rel": "next", "href": "y"}],
            "features": [
                {"id": 5, "geometry": {"coordinates": [[1.0, 2.0, 9.0], [3, 4]], "type": "LineString"},
                 "type": "Feature", "properties": null},
                {"type": "Feature", "id": 6,
                 "geometry": {"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [1, 1], [0, 0]]]]}},
            ]
        });
        let p = decode_page(doc.to_string().as_bytes()).unwrap();
        assert_eq!(
            (p.number_matched, p.number_returned, p.next.as_deref()),
            (Some(7), Some(2), Some("y"))
        );
        assert_eq!(p.kind, "FeatureCollection");
        let t = &p.table;
        assert_eq!(t.id(0), Some(json!(5)));
        let line = geo::Geometry::LineString(vec![(1., 2.), (3., 4.)].into());
        assert_eq!(
            t.geometry(0),
            Some(line),
            "coordinates before type, Z dropped"
        );
        assert_eq!(t.geometries().bbox(1), Some([0., 0., 1., 1.]));
    }

    #[test]
    fn malformed_pages_are_errors() {
        for doc in [
            r#"{"type":"FeatureCollection"}"#,
            r#"{"features":[]}"#,
            r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1]}}]}"#,
            r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[[1,2],[[3,4]]]}}]}"#,
            r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Blob","coordinates":[]}}]}"#,
            r#"{"type":"FeatureCollection","features":[{"type":"Feature","id":[1]}]}"#,
            r#"{"type":"FeatureCollection","features":[{"properties":{}}]}"#,
            r#"{"type":"FeatureCollection","features":[]} x"#,
        ] {
            assert!(decode_page(doc.as_bytes()).is_err(), "{doc}");
        }
    }
}
