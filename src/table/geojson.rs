//! GeoJSON out, written row by row from the columns to any `io::Write`:
//! no document, no `Feature` and no JSON tree is built (step 6 of
//! `docs/columnar.md`).
//!
//! The bytes are those serde_json writes for the geojson crate's
//! `FeatureCollection` of [`Table::to_features`]: members in the crate's
//! order (`type`, `geometry`, `id`, `properties`), properties sorted by name
//! (serde_json's default `Map` is sorted), numbers, strings and `null`s
//! formatted by serde_json itself. JSON columns (`arrow.json`) are written as
//! their text, which the table keeps in serde_json's compact form.
//!
//! The writers make many small writes: give them a buffered writer or a `Vec`.

use super::column::Scalar;
use super::geometry::{kind, signed_area, Geometries, GeometryBuilder};
use super::{Column, Table};
use geo::Geometry;
use std::io::{self, Write};

/// How geometries are written: each coordinate through `coord`, and the
/// members in the geojson crate's order (`type` first) or sorted
/// (`coordinates` first, as a serde_json `Value` writes them).
#[derive(Debug, Clone, Copy)]
pub struct GeometryForm<F> {
    /// Applied to every x and y (identity for GeoJSON out).
    pub coord: F,
    /// Members sorted by name instead of `type` first.
    pub sorted_members: bool,
}

/// Exact coordinates, `type` first: GeoJSON out.
pub const EXACT: GeometryForm<fn(f64) -> f64> = GeometryForm {
    coord: std::convert::identity,
    sorted_members: false,
};

/// Writes `table` as an RFC 7946 FeatureCollection, one row at a time.
pub fn write_collection<W: Write + ?Sized>(w: &mut W, table: &Table) -> io::Result<()> {
    let columns = sorted_columns(table);
    w.write_all(br#"{"type":"FeatureCollection","features":["#)?;
    for row in 0..table.len() {
        if row > 0 {
            w.write_all(b",")?;
        }
        w.write_all(br#"{"type":"Feature","geometry":"#)?;
        if has_geometry(table.geometries(), row) {
            write_geometry(w, table.geometries(), row, EXACT)?;
        } else {
            w.write_all(b"null")?;
        }
        write_id(w, table, row)?;
        w.write_all(br#","properties":{"#)?;
        for (i, (name, column)) in columns.iter().enumerate() {
            if i > 0 {
                w.write_all(b",")?;
            }
            write_str(w, name)?;
            w.write_all(b":")?;
            write_scalar(w, column.scalar(row))?;
        }
        w.write_all(b"}}")?;
    }
    w.write_all(b"]}")
}

/// The property columns with their names, sorted by name (bytewise, as a
/// serde_json `Map` orders its keys).
pub fn sorted_columns(table: &Table) -> Vec<(&str, Column<'_>)> {
    let mut columns: Vec<(&str, Column)> = table
        .schema()
        .fields()
        .iter()
        .enumerate()
        .filter_map(|(i, f)| Some((f.name().as_str(), table.column_at(i)?)))
        .collect();
    columns.sort_by(|a, b| a.0.cmp(b.0));
    columns
}

/// `,"id":…` when the row has a string or number id (the ids GeoJSON
/// allows; others are left out, as the geojson crate leaves them).
fn write_id<W: Write + ?Sized>(w: &mut W, table: &Table, row: usize) -> io::Result<()> {
    let Some(ids) = &table.ids else {
        return Ok(());
    };
    let id = super::column::scalar_of(ids, false, row);
    match id {
        Scalar::Int(_) | Scalar::UInt(_) | Scalar::Str(_) => {}
        Scalar::Float(f) if f.is_finite() => {}
        _ => return Ok(()),
    }
    w.write_all(br#","id":"#)?;
    write_scalar(w, id)
}

/// A JSON string, escaped as serde_json escapes it.
pub fn write_str<W: Write + ?Sized>(w: &mut W, s: &str) -> io::Result<()> {
    Ok(serde_json::to_writer(w, s)?)
}

/// A property value as JSON: numbers as serde_json formats them (a
/// non-finite float is `null`), JSON text as it is.
pub fn write_scalar<W: Write + ?Sized>(w: &mut W, v: Scalar) -> io::Result<()> {
    match v {
        Scalar::Null => w.write_all(b"null"),
        Scalar::Bool(b) => w.write_all(if b { b"true" } else { b"false" }),
        Scalar::Int(i) => Ok(serde_json::to_writer(w, &i)?),
        Scalar::UInt(u) => Ok(serde_json::to_writer(w, &u)?),
        Scalar::Float(f) => Ok(serde_json::to_writer(w, &f)?),
        Scalar::Str(s) => write_str(w, s),
        Scalar::Json(s) => w.write_all(s.as_bytes()),
    }
}

/// True when row `row` has a geometry, i.e. when [`Geometries::get`] gives
/// one (a Point needs its coordinate).
pub fn has_geometry(g: &Geometries, row: usize) -> bool {
    match g.kinds[row] {
        kind::POINT => first_ring(g, row).is_some_and(|r| r.start < r.end),
        kind::LINESTRING..=kind::COLLECTION => true,
        _ => false,
    }
}

/// The coordinate range (in coordinates, not `f64`s) of the first ring of
/// the first part of `row`.
fn first_ring(g: &Geometries, row: usize) -> Option<std::ops::Range<usize>> {
    let part = g.parts[row] as usize;
    if part == g.parts[row + 1] as usize {
        return None;
    }
    let ring = g.rings[part] as usize;
    if ring == g.rings[part + 1] as usize {
        return None;
    }
    Some(g.coords[ring] as usize..g.coords[ring + 1] as usize)
}

/// Writes the geometry of `row`, which must have one ([`has_geometry`]),
/// as a GeoJSON geometry object. Coordinates are written as the geojson
/// crate writes the `geo` geometry of the row: polygon rings closed, a
/// polygon with an empty exterior as `[]`.
pub fn write_geometry<W, F>(
    w: &mut W,
    g: &Geometries,
    row: usize,
    form: GeometryForm<F>,
) -> io::Result<()>
where
    W: Write + ?Sized,
    F: Fn(f64) -> f64 + Copy,
{
    let code = g.kinds[row];
    if code == kind::COLLECTION {
        return match g.get(row) {
            Some(whole) => write_whole(w, &whole, form),
            None => w.write_all(b"null"),
        };
    }
    let name = match code {
        kind::POINT => "Point",
        kind::LINESTRING => "LineString",
        kind::POLYGON => "Polygon",
        kind::MULTIPOINT => "MultiPoint",
        kind::MULTILINESTRING => "MultiLineString",
        _ => "MultiPolygon",
    };
    let coords = Coords { g, form };
    if !form.sorted_members {
        write!(w, r#"{{"type":"{name}","coordinates":"#)?;
    } else {
        w.write_all(br#"{"coordinates":"#)?;
    }
    let parts = g.parts[row] as usize..g.parts[row + 1] as usize;
    let first = first_ring(g, row);
    match code {
        kind::POINT => {
            let c = first.map_or(0, |r| r.start);
            coords.position(w, c)?;
        }
        kind::LINESTRING | kind::MULTIPOINT => coords.line(w, first.unwrap_or(0..0))?,
        kind::MULTILINESTRING => {
            let rings = parts
                .clone()
                .flat_map(|p| g.rings[p] as usize..g.rings[p + 1] as usize);
            coords.list(w, rings, |w, r| coords.line(w, coords.ring(r)))?;
        }
        kind::POLYGON => match parts.clone().next() {
            Some(p) => coords.polygon(w, p)?,
            None => w.write_all(b"[]")?,
        },
        _ => coords.list(w, parts, |w, p| coords.polygon(w, p))?,
    }
    if form.sorted_members {
        write!(w, r#","type":"{name}"}}"#)
    } else {
        w.write_all(b"}")
    }
}

/// A geometry kept whole (a GeometryCollection row, or a `geo` type the
/// buffers do not hold), written as the geojson crate converts it.
fn write_whole<W, F>(w: &mut W, whole: &Geometry<f64>, form: GeometryForm<F>) -> io::Result<()>
where
    W: Write + ?Sized,
    F: Fn(f64) -> f64 + Copy,
{
    let single = |g: Geometry<f64>| -> io::Result<Geometries> {
        let mut b = GeometryBuilder::default();
        b.push(&g).map_err(io::Error::other)?;
        Ok(b.finish())
    };
    let member = match whole {
        Geometry::GeometryCollection(c) => {
            let (open, close) = if form.sorted_members {
                (r#"{"geometries":["#, r#"],"type":"GeometryCollection"}"#)
            } else {
                (r#"{"type":"GeometryCollection","geometries":["#, "]}")
            };
            w.write_all(open.as_bytes())?;
            for (i, g) in c.0.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                write_whole(w, g, form)?;
            }
            return w.write_all(close.as_bytes());
        }
        // The geojson crate's conversions of the types without a GeoJSON name.
        Geometry::Line(l) => single(Geometry::LineString(geo::LineString(vec![l.start, l.end])))?,
        Geometry::Rect(r) => single(Geometry::Polygon(r.to_polygon()))?,
        Geometry::Triangle(t) => single(Geometry::Polygon(t.to_polygon()))?,
        g => single(g.clone())?,
    };
    if has_geometry(&member, 0) {
        write_geometry(w, &member, 0, form)
    } else {
        // An empty Point cannot exist in `geo`; nothing else lacks a geometry.
        w.write_all(b"null")
    }
}

/// Writes coordinate arrays from the buffers.
struct Coords<'a, F> {
    g: &'a Geometries,
    form: GeometryForm<F>,
}

impl<F: Fn(f64) -> f64 + Copy> Coords<'_, F> {
    /// The coordinate range of ring `r`.
    fn ring(&self, r: usize) -> std::ops::Range<usize> {
        self.g.coords[r] as usize..self.g.coords[r + 1] as usize
    }

    /// `[x,y]` of coordinate `c`.
    fn position<W: Write + ?Sized>(&self, w: &mut W, c: usize) -> io::Result<()> {
        let f = self.form.coord;
        let (x, y) = (f(self.g.xy[2 * c]), f(self.g.xy[2 * c + 1]));
        w.write_all(b"[")?;
        serde_json::to_writer(&mut *w, &x)?;
        w.write_all(b",")?;
        serde_json::to_writer(&mut *w, &y)?;
        w.write_all(b"]")
    }

    /// `[[x,y],…]` of the coordinates in `range`.
    fn line<W: Write + ?Sized>(&self, w: &mut W, range: std::ops::Range<usize>) -> io::Result<()> {
        self.list(w, range, |w, c| self.position(w, c))
    }

    /// `[[x,y],…]` of ring `r`, closed (the first coordinate repeated when
    /// the last differs, as `geo::Polygon::new` closes rings) and wound as
    /// RFC 7946 (3.1.6) requires: counterclockwise for an `exterior`,
    /// clockwise for a hole. Sources store either (shapefiles clockwise
    /// exteriors, NHDPlus both): a ring wound the other way is written
    /// backwards; one without area (degenerate) as stored.
    fn ring_line<W: Write + ?Sized>(&self, w: &mut W, r: usize, exterior: bool) -> io::Result<()> {
        let range = self.ring(r);
        let xy = &self.g.xy[2 * range.start..2 * range.end];
        let area = signed_area(xy);
        let backwards = if exterior { area < 0.0 } else { area > 0.0 };
        let forward = (!backwards).then(|| range.clone()).into_iter().flatten();
        let order = forward.chain(backwards.then(|| range.clone().rev()).into_iter().flatten());
        let open = xy.len() >= 2 && xy[..2] != xy[xy.len() - 2..];
        let first = if backwards {
            range.end - 1
        } else {
            range.start
        };
        let closing = open.then_some(first);
        self.list(w, order.chain(closing), |w, c| self.position(w, c))
    }

    /// The rings of part `p`, closed and wound as RFC 7946 says (exterior
    /// first); `[]` when the exterior is empty (the geojson crate drops the
    /// interiors then).
    fn polygon<W: Write + ?Sized>(&self, w: &mut W, p: usize) -> io::Result<()> {
        let rings = self.g.rings[p] as usize..self.g.rings[p + 1] as usize;
        if rings.clone().next().is_none_or(|r| self.ring(r).is_empty()) {
            return w.write_all(b"[]");
        }
        let exterior = rings.start;
        self.list(w, rings, |w, r| self.ring_line(w, r, r == exterior))
    }

    /// `[a,b,…]`, each item written by `item`.
    fn list<W: Write + ?Sized, I>(
        &self,
        w: &mut W,
        items: impl Iterator<Item = I>,
        mut item: impl FnMut(&mut W, I) -> io::Result<()>,
    ) -> io::Result<()> {
        w.write_all(b"[")?;
        for (i, x) in items.enumerate() {
            if i > 0 {
                w.write_all(b",")?;
            }
            item(w, x)?;
        }
        w.write_all(b"]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::Feature;
    use geo::{line_string, point, polygon, Coord};
    use serde_json::json;

    fn written(t: &Table) -> String {
        let mut out = Vec::new();
        write_collection(&mut out, t).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The geojson crate's serialization of the same features (what
    /// `feature::to_geojson` writes).
    fn reference(t: &Table) -> String {
        String::from_utf8(crate::feature::to_geojson(&t.to_features())).unwrap()
    }

    fn feature(geometry: Option<Geometry<f64>>, props: serde_json::Value) -> Feature {
        Feature {
            id: None,
            geometry,
            properties: props.as_object().unwrap().clone(),
        }
    }

    #[test]
    fn rings_are_wound_as_rfc_7946_says_whatever_the_source_stored() {
        // A clockwise exterior (as shapefiles and many NHDPlus layers store
        // them) with a counterclockwise hole, one ring open, one closed.
        let cw_exterior =
            line_string![(x: 0., y: 0.), (x: 0., y: 4.), (x: 4., y: 4.), (x: 4., y: 0.)];
        let ccw_hole = line_string![(x: 1., y: 1.), (x: 2., y: 1.), (x: 2., y: 2.), (x: 1., y: 1.)];
        let stored = geo::Polygon::new(cw_exterior, vec![ccw_hole]);
        let already = polygon![(x: 5., y: 5.), (x: 6., y: 5.), (x: 6., y: 6.)];
        let features = [
            feature(Some(Geometry::Polygon(stored.clone())), json!({})),
            feature(
                Some(Geometry::MultiPolygon(geo::MultiPolygon(vec![
                    already, stored,
                ]))),
                json!({}),
            ),
        ];
        let text = written(&Table::from_features(&features).unwrap());
        let exterior = "[[0.0,0.0],[4.0,0.0],[4.0,4.0],[0.0,4.0],[0.0,0.0]]";
        let hole = "[[1.0,1.0],[2.0,2.0],[2.0,1.0],[1.0,1.0]]";
        let ccw = "[[5.0,5.0],[6.0,5.0],[6.0,6.0],[5.0,5.0]]";
        assert!(
            text.contains(&format!(r#""Polygon","coordinates":[{exterior},{hole}]"#)),
            "{text}"
        );
        assert!(
            text.contains(&format!(r#""coordinates":[[{ccw}],[{exterior},{hole}]]"#)),
            "{text}"
        );
        // The shoelace by hand: 16 twice over for the square, negative clockwise.
        assert_eq!(signed_area(&[0., 0., 0., 4., 4., 4., 4., 0.]), -32.0);
        assert_eq!(signed_area(&[0., 0., 4., 0., 4., 4., 0., 4., 0., 0.]), 32.0);
    }

    #[test]
    fn every_geometry_type_and_edge_case_matches_the_geojson_crate() {
        let open = geo::LineString(vec![Coord { x: 0., y: 0. }, Coord { x: 1., y: 0. }]);
        let holed = geo::Polygon::new(
            line_string![(x: 0., y: 0.), (x: 4., y: 0.), (x: 4., y: 4.), (x: 0., y: 0.)],
            // The hole clockwise, as RFC 7946 winds it (the crate keeps
            // any winding; rewinding is tested below).
            vec![line_string![(x: 1., y: 1.), (x: 2., y: 2.), (x: 2., y: 1.)]],
        );
        let poly = polygon![(x: 0., y: 0.), (x: 1., y: 0.), (x: 1., y: 1.)];
        let rect = geo::Rect::new(Coord { x: 0., y: 0. }, Coord { x: 1., y: 2. });
        let line = geo::Line::new(Coord { x: 0.5, y: 1e-7 }, Coord { x: -3., y: 1e21 });
        let geoms: Vec<Option<Geometry<f64>>> = vec![
            Some(Geometry::Point(point!(x: -89.123_456_789_012_3, y: 43.1))),
            Some(Geometry::LineString(open.clone())),
            Some(Geometry::LineString(geo::LineString(vec![]))),
            Some(Geometry::Polygon(holed.clone())),
            Some(Geometry::MultiPoint(geo::MultiPoint(vec![
                point!(x: 1., y: 2.),
            ]))),
            Some(Geometry::MultiLineString(geo::MultiLineString(vec![
                open.clone(),
                open,
            ]))),
            Some(Geometry::MultiPolygon(geo::MultiPolygon(vec![poly, holed]))),
            Some(Geometry::MultiPolygon(geo::MultiPolygon(vec![]))),
            Some(Geometry::GeometryCollection(geo::GeometryCollection(vec![
                Geometry::Point(point!(x: 1., y: 2.)),
                Geometry::Rect(rect),
                Geometry::GeometryCollection(geo::GeometryCollection(vec![Geometry::Line(line)])),
            ]))),
            Some(Geometry::Rect(rect)),
            Some(Geometry::Line(line)),
            Some(Geometry::Point(point!(x: f64::NAN, y: 1.0))),
            None,
        ];
        let features: Vec<Feature> = geoms.into_iter().map(|g| feature(g, json!({}))).collect();
        let t = Table::from_features(&features).unwrap();
        let text = written(&t);
        assert_eq!(text, reference(&t));
        // Independent of the reference: rings closed, NaN as null, no geometry as null.
        assert!(text.contains("[[1.0,1.0],[2.0,2.0],[2.0,1.0],[1.0,1.0]]"));
        assert!(text.contains(r#""type":"GeometryCollection","geometries":[{"type":"Point""#));
        assert!(text.contains(r#"{"type":"Point","coordinates":[null,1.0]}"#));
        assert!(text.ends_with(r#""geometry":null,"properties":{}}]}"#));
    }

    #[test]
    fn every_property_kind_and_id_matches_the_geojson_crate() {
        let g = Some(Geometry::Point(point!(x: 1., y: 2.)));
        let mut features = vec![
            feature(
                g.clone(),
                json!({"zeta": 1, "alpha": "a\"b\\c\n\u{1}é😀</", "mixed": 510042379.0,
                       "f": 0.1, "big": 1e300, "neg": -0.0, "b": true, "nested": {"k": [1, 2.5, null]},
                       "Upper": 3, "_": null}),
            ),
            feature(
                g.clone(),
                json!({"zeta": -7, "alpha": "", "mixed": 12, "f": 1e-7, "b": false,
                       "nested": "text", "new": 5}),
            ),
            feature(g, json!({"mixed": "N/A", "f": 3.0})),
        ];
        features[0].id = Some(json!(13293970));
        features[1].id = Some(json!("flowline.1"));
        let t = Table::from_features(&features).unwrap();
        assert_eq!(written(&t), reference(&t));
        // Float and other ids.
        for ids in [
            [json!(1.5), json!(2), json!(true)],
            [json!(null), json!({"a": 1}), json!(3)],
        ] {
            for (f, id) in features.iter_mut().zip(&ids) {
                f.id = Some(id.clone());
            }
            let t = Table::from_features(&features).unwrap();
            assert_eq!(written(&t), reference(&t));
        }
    }

    #[test]
    fn an_empty_table_is_an_empty_collection() {
        let t = Table::default();
        assert_eq!(written(&t), r#"{"type":"FeatureCollection","features":[]}"#);
        assert_eq!(written(&t), reference(&t));
    }

    #[test]
    fn sorted_members_put_coordinates_first() {
        let t = Table::from_features(&[feature(
            Some(Geometry::Point(point!(x: 1.25, y: 2.0))),
            json!({}),
        )])
        .unwrap();
        let mut out = Vec::new();
        let form = GeometryForm {
            coord: |x: f64| x.round(),
            sorted_members: true,
        };
        write_geometry(&mut out, t.geometries(), 0, form).unwrap();
        assert_eq!(out, br#"{"coordinates":[1.0,2.0],"type":"Point"}"#);
    }
}
