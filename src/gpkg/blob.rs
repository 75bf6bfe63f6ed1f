//! GeoPackage geometry blobs (the `GP` header of the standard, section 2.1.3)
//! and the WKB inside them, read into and written from the flat buffers of
//! [`crate::table::geometry`].
//!
//! [`parse_into`] reads any blob without panicking: every read is
//! bounds-checked, counts are checked against the bytes left before anything
//! is allocated and nesting is limited. Z and M ordinates are read and
//! dropped. [`write_row`] produces little-endian blobs with an XY envelope
//! (none for empty geometries) from a row of [`Geometries`]. [`parse`] and
//! [`write`] are the same for one `geo` geometry, for callers that hold one.

use geo::{BoundingRect, Geometry, GeometryCollection, HasDimensions};

use crate::crs::Transformer;
use crate::table::geometry::{kind, Geometries, GeometryBuilder};
use crate::{Error, Result};

/// Deepest nesting of geometry collections accepted.
const MAX_DEPTH: usize = 32;

/// The parts of a blob header a reader needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Header {
    /// The `srs_id` stored in the blob.
    pub srs_id: i32,
    /// The XY envelope `[minx, miny, maxx, maxy]`, when the blob carries one.
    pub envelope: Option<[f64; 4]>,
    /// The empty-geometry flag.
    pub empty: bool,
    /// Offset of the WKB within the blob.
    wkb_offset: usize,
}

/// Reads the header of a GeoPackage geometry blob.
pub fn header(bytes: &[u8]) -> Result<Header> {
    let mut r = Reader::new(bytes, None);
    if r.take(2)? != b"GP" {
        return Err(bad("it does not start with the magic bytes \"GP\""));
    }
    let version = r.u8()?;
    if version != 0 {
        return Err(bad(&format!(
            "its version is {version}, only version 0 (GeoPackage 1.x) exists"
        )));
    }
    let flags = r.u8()?;
    if flags & 0b0010_0000 != 0 {
        return Err(bad(
            "it is an extended GeoPackage geometry, which is not supported",
        ));
    }
    r.little = flags & 1 == 1;
    let empty = flags & 0b0001_0000 != 0;
    let doubles = match (flags >> 1) & 0b111 {
        0 => 0,
        1 => 4,
        2 | 3 => 6,
        4 => 8,
        k => return Err(bad(&format!("its envelope kind {k} is invalid (0 to 4)"))),
    };
    let srs_id = r.u32()? as i32;
    let envelope = if doubles == 0 {
        None
    } else {
        // minx, maxx, miny, maxy, then z and/or m ranges, which we skip.
        let (minx, maxx, miny, maxy) = (r.f64()?, r.f64()?, r.f64()?, r.f64()?);
        r.take((doubles - 4) * 8)?;
        // An empty geometry's envelope is NaN.
        [minx, maxx, miny, maxy]
            .iter()
            .all(|v| v.is_finite())
            .then_some([minx, miny, maxx, maxy])
    };
    Ok(Header {
        srs_id,
        envelope,
        empty,
        wkb_offset: r.pos,
    })
}

/// Parses a GeoPackage geometry blob into one new row of `out`, each
/// coordinate passed through `to` when given. An empty geometry (the empty
/// flag, or WKB with no coordinates) becomes a row without geometry. Returns
/// the row's bounding box (after `to`), `None` for a row without geometry.
/// On error nothing is added to `out`, and the error names what is wrong.
pub fn parse_into(
    bytes: &[u8],
    out: &mut GeometryBuilder,
    to: Option<&Transformer>,
) -> Result<Option<[f64; 4]>> {
    let h = header(bytes)?;
    let wkb = &bytes[h.wkb_offset..];
    if h.empty && wkb.is_empty() {
        out.push_none().map_err(|e| bad(&e))?;
        return Ok(None);
    }
    let mut r = Reader::new(wkb, to);
    let read = r.geometry(0, out).and_then(|g| match r.pos {
        end if end == wkb.len() => Ok(g),
        end => Err(bad(&format!(
            "{} bytes follow the WKB geometry",
            wkb.len() - end
        ))),
    });
    let pushed = match read {
        Ok(Read::Kind(k)) if !h.empty && r.bbox().is_some() => out.finish_row(k).map(|()| r.bbox()),
        Ok(Read::Collection(g)) if !h.empty && !g.is_empty() => {
            let bbox = g
                .bounding_rect()
                .map(|b| [b.min().x, b.min().y, b.max().x, b.max().y]);
            out.push_collection(g).map(|()| bbox)
        }
        Ok(_) => {
            out.abandon_row();
            out.push_none().map(|()| None)
        }
        Err(e) => {
            out.abandon_row();
            return Err(e);
        }
    };
    pushed.map_err(|e| {
        out.abandon_row();
        bad(&e)
    })
}

/// Parses a GeoPackage geometry blob into a `geo` geometry. `Ok(None)` for
/// an empty geometry; errors as [`parse_into`].
pub fn parse(bytes: &[u8]) -> Result<Option<Geometry<f64>>> {
    let mut b = GeometryBuilder::default();
    parse_into(bytes, &mut b, None)?;
    Ok(b.finish().get(0))
}

fn bad(why: &str) -> Error {
    Error::Gpkg(format!("A GeoPackage geometry blob is malformed: {why}."))
}

/// A bounds-checked cursor over WKB bytes, writing what it reads into a
/// [`GeometryBuilder`].
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    little: bool,
    /// Applied to each coordinate as it is read.
    to: Option<&'a Transformer>,
    /// The bounding box of the coordinates pushed so far, inverted (min
    /// above max) before any: see [`Reader::bbox`].
    bbox: [f64; 4],
}

/// The WKB geometry kinds we read (WKB type codes 1 to 7).
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Point,
    LineString,
    Polygon,
    MultiPoint,
    MultiLineString,
    MultiPolygon,
    Collection,
}

/// What [`Reader::geometry`] read: the buffers of a row of this type code,
/// to be finished by the caller, or a collection kept whole.
enum Read {
    Kind(u8),
    Collection(Geometry<f64>),
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8], to: Option<&'a Transformer>) -> Self {
        Reader {
            bytes,
            pos: 0,
            little: true,
            to,
            bbox: [
                f64::INFINITY,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NEG_INFINITY,
            ],
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                bad(&format!(
                    "it ends after {} bytes, in the middle of a value",
                    self.bytes.len()
                ))
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    fn u32(&mut self) -> Result<u32> {
        let a = self.array()?;
        Ok(if self.little {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        })
    }

    fn f64(&mut self) -> Result<f64> {
        let a = self.array()?;
        Ok(if self.little {
            f64::from_le_bytes(a)
        } else {
            f64::from_be_bytes(a)
        })
    }

    /// A count of items that each take at least `min_bytes`, checked against
    /// the bytes left so a corrupt count cannot trigger a huge allocation.
    fn count(&mut self, min_bytes: usize) -> Result<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_bytes) > self.bytes.len() - self.pos {
            return Err(bad(&format!(
                "it declares {n} items, more than its bytes can hold"
            )));
        }
        Ok(n)
    }

    /// Byte order, type code and ordinate count of the next geometry.
    fn geometry_head(&mut self) -> Result<(Kind, usize)> {
        self.little = match self.u8()? {
            0 => false,
            1 => true,
            b => {
                return Err(bad(&format!(
                    "its WKB byte order marker is {b}, not 0 or 1"
                )))
            }
        };
        let code = self.u32()?;
        // EWKB flag bits: Z, M, SRID.
        let (ez, em, srid) = (
            code & 0x8000_0000 != 0,
            code & 0x4000_0000 != 0,
            code & 0x2000_0000 != 0,
        );
        if srid {
            self.u32()?;
        }
        let iso = code & 0x1FFF_FFFF;
        let (z, m) = match iso / 1000 {
            0 => (false, false),
            1 => (true, false),
            2 => (false, true),
            3 => (true, true),
            _ => return Err(bad(&format!("its WKB geometry type {code} is unknown"))),
        };
        let kind = match iso % 1000 {
            1 => Kind::Point,
            2 => Kind::LineString,
            3 => Kind::Polygon,
            4 => Kind::MultiPoint,
            5 => Kind::MultiLineString,
            6 => Kind::MultiPolygon,
            7 => Kind::Collection,
            t => {
                return Err(bad(&format!(
                    "its WKB geometry type {t} is not supported (1 to 7 are)"
                )))
            }
        };
        Ok((kind, 2 + usize::from(z || ez) + usize::from(m || em)))
    }

    /// Reads one geometry: its parts, rings and coordinates go into `out`
    /// (the row is left open for the caller); a collection is built whole.
    fn geometry(&mut self, depth: usize, out: &mut GeometryBuilder) -> Result<Read> {
        if depth > MAX_DEPTH {
            return Err(bad("its geometry collections nest too deeply"));
        }
        let (kind, dims) = self.geometry_head()?;
        let code = match kind {
            // An empty point (NaN coordinates) is an empty MultiPoint, as a
            // `geo` Point cannot be empty.
            Kind::Point => {
                let code = if self.point(dims, out)? {
                    kind::POINT
                } else {
                    kind::MULTIPOINT
                };
                self.close(out, code)?
            }
            Kind::LineString => {
                self.line(dims, out)?;
                self.close_part(out)?;
                kind::LINESTRING
            }
            Kind::Polygon => {
                self.rings(dims, out)?;
                kind::POLYGON
            }
            Kind::MultiPoint => {
                for _ in 0..self.count(5)? {
                    let d = self.member(Kind::Point)?;
                    self.point(d, out)?;
                }
                self.close(out, kind::MULTIPOINT)?
            }
            Kind::MultiLineString => {
                for _ in 0..self.count(9)? {
                    let d = self.member(Kind::LineString)?;
                    self.line(d, out)?;
                }
                self.close_part(out)?;
                kind::MULTILINESTRING
            }
            Kind::MultiPolygon => {
                for _ in 0..self.count(9)? {
                    let d = self.member(Kind::Polygon)?;
                    self.rings(d, out)?;
                }
                kind::MULTIPOLYGON
            }
            Kind::Collection => {
                let n = self.count(5)?;
                let mut members = GeometryBuilder::default();
                for _ in 0..n {
                    match self.geometry(depth + 1, &mut members)? {
                        Read::Kind(k) => members.finish_row(k),
                        Read::Collection(g) => members.push_collection(g),
                    }
                    .map_err(|e| bad(&e))?;
                }
                let members = members.finish();
                let gc = (0..n).filter_map(|i| members.get(i)).collect();
                return Ok(Read::Collection(Geometry::GeometryCollection(
                    GeometryCollection(gc),
                )));
            }
        };
        Ok(Read::Kind(code))
    }

    /// The head of one member of a multi-geometry, which must be of kind
    /// `want`; its ordinate count.
    fn member(&mut self, want: Kind) -> Result<usize> {
        let (kind, dims) = self.geometry_head()?;
        if kind != want {
            return Err(bad("a multi-geometry holds a member of another type"));
        }
        Ok(dims)
    }

    /// Closes the open ring and part: the row of a point or point list.
    fn close(&mut self, out: &mut GeometryBuilder, code: u8) -> Result<u8> {
        out.close_ring().map_err(|e| bad(&e))?;
        self.close_part(out)?;
        Ok(code)
    }

    fn close_part(&mut self, out: &mut GeometryBuilder) -> Result<()> {
        out.close_part().map_err(|e| bad(&e))
    }

    /// Reads one coordinate and pushes it (transformed) unless it is the
    /// empty point (NaN, NaN): false then.
    fn point(&mut self, dims: usize, out: &mut GeometryBuilder) -> Result<bool> {
        let ordinates = self.take(dims * 8)?;
        self.push_point(ordinates, out)
    }

    /// Pushes the coordinate that starts the `ordinates` of one point
    /// (transformed) unless it is the empty point (NaN, NaN): false then.
    fn push_point(&mut self, ordinates: &[u8], out: &mut GeometryBuilder) -> Result<bool> {
        let (x, y) = (
            self.ordinate(&ordinates[..8]),
            self.ordinate(&ordinates[8..16]),
        );
        if x.is_nan() && y.is_nan() {
            return Ok(false);
        }
        if !x.is_finite() || !y.is_finite() {
            return Err(bad("it holds a coordinate that is not a finite number"));
        }
        let (x, y) = match self.to {
            Some(t) => t.point(x, y)?,
            None => (x, y),
        };
        let [a, b, c, d] = self.bbox;
        self.bbox = [a.min(x), b.min(y), c.max(x), d.max(y)];
        out.push_xy(x, y);
        Ok(true)
    }

    /// The bounding box of the coordinates pushed so far; `None` before any.
    fn bbox(&self) -> Option<[f64; 4]> {
        (self.bbox[0] <= self.bbox[2]).then_some(self.bbox)
    }

    /// The number in the 8 bytes `b`, in the geometry's byte order.
    fn ordinate(&self, b: &[u8]) -> f64 {
        let a: [u8; 8] = b.try_into().expect("8 bytes");
        if self.little {
            f64::from_le_bytes(a)
        } else {
            f64::from_be_bytes(a)
        }
    }

    /// A counted list of coordinates as one ring; an empty point inside it
    /// is an error, as any non-finite coordinate. The list's bytes are
    /// bounds-checked once, then read point by point.
    fn line(&mut self, dims: usize, out: &mut GeometryBuilder) -> Result<()> {
        let n = self.count(dims * 8)?;
        let points = self.take(n * dims * 8)?;
        let all_finite = match self.to {
            None => self.push_line(points, dims, out),
            Some(_) => {
                out.reserve_xy(n);
                let mut all_pushed = true;
                for ordinates in points.chunks_exact(dims * 8) {
                    // An empty point is not pushed; the row is abandoned.
                    all_pushed &= self.push_point(ordinates, out)?;
                }
                all_pushed
            }
        };
        if !all_finite {
            return Err(bad("it holds a coordinate that is not a finite number"));
        }
        out.close_ring().map_err(|e| bad(&e))
    }

    /// Pushes the x and y of each point of `points` (`dims` ordinates each)
    /// untransformed, in one pass that widens the bounding box; false when
    /// one is not a finite number (an error: the row is abandoned).
    fn push_line(&mut self, points: &[u8], dims: usize, out: &mut GeometryBuilder) -> bool {
        let little = self.little;
        let read = |b: &[u8]| -> f64 {
            let a: [u8; 8] = b.try_into().expect("8 bytes");
            if little {
                f64::from_le_bytes(a)
            } else {
                f64::from_be_bytes(a)
            }
        };
        let [mut x0, mut y0, mut x1, mut y1] = self.bbox;
        let mut finite = true;
        out.extend_xy(points.chunks_exact(dims * 8).map(|p| {
            let (x, y) = (read(&p[..8]), read(&p[8..16]));
            finite &= x.is_finite() & y.is_finite();
            (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
            [x, y]
        }));
        self.bbox = [x0, y0, x1, y1];
        finite
    }

    /// A polygon's counted rings as one part.
    fn rings(&mut self, dims: usize, out: &mut GeometryBuilder) -> Result<()> {
        for _ in 0..self.count(4)? {
            self.line(dims, out)?;
        }
        self.close_part(out)
    }
}

/// Appends row `row` of `g` as a little-endian GeoPackage blob with an XY
/// envelope (envelope-less with the empty flag when the row has no
/// coordinates). A row without geometry appends nothing and returns false.
pub fn write_row(g: &Geometries, row: usize, srs_id: i32, out: &mut Vec<u8>) -> bool {
    if g.kinds[row] == kind::NONE {
        return false;
    }
    out.extend_from_slice(b"GP");
    out.push(0);
    match g.bbox(row) {
        Some([x0, y0, x1, y1]) => {
            out.push(0b0000_0011); // little endian, envelope kind 1
            out.extend_from_slice(&srs_id.to_le_bytes());
            for v in [x0, x1, y0, y1] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        None => {
            out.push(0b0001_0001); // little endian, empty, no envelope
            out.extend_from_slice(&srs_id.to_le_bytes());
        }
    }
    wkb_row(g, row, out);
    true
}

/// Encodes a geometry as [`write_row`] does. `Line`, `Rect` and `Triangle`
/// are written as a LineString and Polygons.
pub fn write(geometry: &Geometry<f64>, srs_id: i32) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    write_row(&single(geometry), 0, srs_id, &mut out);
    out
}

/// Appends the little-endian XY WKB of `g` to `out` (the body of [`write`]'s
/// blob; also the `geoarrow.wkb` column of the Arrow export).
pub fn write_wkb(g: &Geometry<f64>, out: &mut Vec<u8>) {
    wkb_row(&single(g), 0, out);
}

/// `g` as the one row of a [`Geometries`] (`Line`, `Rect` and `Triangle`
/// as the LineString and Polygon they are).
fn single(g: &Geometry<f64>) -> Geometries {
    let g = match g {
        Geometry::Line(l) => Geometry::LineString(geo::LineString(vec![l.start, l.end])),
        Geometry::Rect(r) => Geometry::Polygon(r.to_polygon()),
        Geometry::Triangle(t) => Geometry::Polygon(t.to_polygon()),
        g => g.clone(),
    };
    let mut b = GeometryBuilder::default();
    // One geometry holds fewer than 2^31 coordinates.
    let _ = b.push(&g);
    b.finish()
}

fn head(out: &mut Vec<u8>, code: u8) {
    out.push(1);
    out.extend_from_slice(&u32::from(code).to_le_bytes());
}

fn count(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

fn coords(out: &mut Vec<u8>, xy: &[f64]) {
    count(out, xy.len() / 2);
    for v in xy {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// A polygon from part `part` of `g`; an empty polygon has no rings at all.
fn polygon_wkb(g: &Geometries, part: usize, out: &mut Vec<u8>) {
    head(out, kind::POLYGON);
    let rings = g.rings[part] as usize..g.rings[part + 1] as usize;
    if rings.is_empty() || g.ring_xy(rings.start).is_empty() {
        count(out, 0);
        return;
    }
    count(out, rings.len());
    for r in rings {
        coords(out, g.ring_xy(r));
    }
}

/// Appends the little-endian XY WKB of row `row` of `g` (not a row without
/// geometry).
fn wkb_row(g: &Geometries, row: usize, out: &mut Vec<u8>) {
    let parts = g.parts[row] as usize..g.parts[row + 1] as usize;
    let rings = g.rings[parts.start] as usize..g.rings[parts.end] as usize;
    match g.kinds[row] {
        kind::POINT => {
            head(out, kind::POINT);
            // A point row without its coordinate is the empty point.
            let xy = g.row_xy(row);
            let p = xy.get(..2).unwrap_or(&[f64::NAN, f64::NAN]);
            for v in p {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        kind::LINESTRING => {
            head(out, kind::LINESTRING);
            coords(out, g.row_xy(row));
        }
        kind::POLYGON if parts.is_empty() => {
            head(out, kind::POLYGON);
            count(out, 0);
        }
        kind::POLYGON => polygon_wkb(g, parts.start, out),
        kind::MULTIPOINT => {
            head(out, kind::MULTIPOINT);
            let xy = g.row_xy(row);
            count(out, xy.len() / 2);
            for p in xy.chunks_exact(2) {
                head(out, kind::POINT);
                out.extend_from_slice(&p[0].to_le_bytes());
                out.extend_from_slice(&p[1].to_le_bytes());
            }
        }
        kind::MULTILINESTRING => {
            head(out, kind::MULTILINESTRING);
            count(out, rings.len());
            for r in rings {
                head(out, kind::LINESTRING);
                coords(out, g.ring_xy(r));
            }
        }
        kind::MULTIPOLYGON => {
            head(out, kind::MULTIPOLYGON);
            count(out, parts.len());
            for p in parts {
                polygon_wkb(g, p, out);
            }
        }
        _ => match g.get(row) {
            Some(Geometry::GeometryCollection(gc)) => {
                head(out, kind::COLLECTION);
                count(out, gc.0.len());
                for m in &gc.0 {
                    write_wkb(m, out);
                }
            }
            Some(other) => write_wkb(&other, out),
            None => {}
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::{
        line_string, point, polygon, LineString, MultiLineString, MultiPoint, MultiPolygon, Polygon,
    };

    /// A blob header: flags and envelope doubles, with the given byte order.
    fn blob(little: bool, kind: u8, empty: bool, envelope: &[f64], wkb: &[u8]) -> Vec<u8> {
        let mut b = b"GP\0".to_vec();
        b.push(u8::from(little) | (kind << 1) | if empty { 0x10 } else { 0 });
        let e32 = |v: u32| {
            if little {
                v.to_le_bytes()
            } else {
                v.to_be_bytes()
            }
        };
        b.extend_from_slice(&e32(4269));
        for v in envelope {
            b.extend_from_slice(&if little {
                v.to_le_bytes()
            } else {
                v.to_be_bytes()
            });
        }
        b.extend_from_slice(wkb);
        b
    }

    /// A big-endian ISO WKB LineString ZM with two vertices.
    fn big_endian_line_zm() -> Vec<u8> {
        let mut w = vec![0u8];
        w.extend_from_slice(&3002u32.to_be_bytes());
        w.extend_from_slice(&2u32.to_be_bytes());
        for v in [1.0f64, 2.0, 10.0, 20.0, 3.0, 4.0, 30.0, 40.0] {
            w.extend_from_slice(&v.to_be_bytes());
        }
        w
    }

    #[test]
    fn every_envelope_kind_and_both_byte_orders() {
        let wkb = big_endian_line_zm();
        let want = Geometry::LineString(line_string![(x: 1.0, y: 2.0), (x: 3.0, y: 4.0)]);
        for kind in 0..=4u8 {
            let n = [0, 4, 6, 6, 8][kind as usize];
            for little in [true, false] {
                let env = vec![1.0; n];
                let g = parse(&blob(little, kind, false, &env, &wkb)).unwrap();
                assert_eq!(g.as_ref(), Some(&want), "kind {kind} little {little}");
                assert_eq!(
                    header(&blob(little, kind, false, &env, &wkb))
                        .unwrap()
                        .srs_id,
                    4269
                );
            }
        }
    }

    #[test]
    fn ewkb_flags_and_srid_are_understood() {
        let mut w = vec![1u8];
        w.extend_from_slice(&(0xA000_0001u32).to_le_bytes()); // Z + SRID point
        w.extend_from_slice(&4326u32.to_le_bytes());
        for v in [-89.5f64, 43.1, 250.0] {
            w.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(
            parse(&blob(true, 0, false, &[], &w)).unwrap(),
            Some(Geometry::Point(point!(x: -89.5, y: 43.1)))
        );
    }

    #[test]
    fn empty_geometries_are_none() {
        // Empty flag with an empty point (NaN) and NaN envelope.
        let mut w = vec![1u8];
        w.extend_from_slice(&1u32.to_le_bytes());
        w.extend_from_slice(&f64::NAN.to_le_bytes());
        w.extend_from_slice(&f64::NAN.to_le_bytes());
        let nan = [f64::NAN; 4];
        assert_eq!(parse(&blob(true, 1, true, &nan, &w)).unwrap(), None);
        assert_eq!(
            header(&blob(true, 1, true, &nan, &w)).unwrap().envelope,
            None
        );
        // An empty MultiPolygon without the flag.
        let mut w = vec![1u8];
        w.extend_from_slice(&6u32.to_le_bytes());
        w.extend_from_slice(&0u32.to_le_bytes());
        assert_eq!(parse(&blob(true, 0, false, &[], &w)).unwrap(), None);
    }

    #[test]
    fn round_trip_through_write() {
        let poly = polygon![(x: 0.0, y: 0.0), (x: 1.0, y: 0.0), (x: 1.0, y: 1.0), (x: 0.0, y: 0.0)];
        let gs = [
            Geometry::Point(point!(x: -89.4, y: 43.0)),
            Geometry::MultiPolygon(MultiPolygon(vec![poly.clone()])),
            Geometry::GeometryCollection(GeometryCollection(vec![
                Geometry::Polygon(poly),
                Geometry::MultiLineString(MultiLineString(vec![
                    line_string![(x: 0.0, y: 1.0), (x: 2.0, y: 3.0)],
                ])),
            ])),
        ];
        for g in gs {
            let b = write(&g, 4269);
            assert!(header(&b).unwrap().envelope.is_some());
            assert_eq!(parse(&b).unwrap(), Some(g));
        }
        let empty = Geometry::MultiPolygon(MultiPolygon(vec![]));
        assert_eq!(parse(&write(&empty, 4269)).unwrap(), None);
    }

    /// The WKB of each type as the standard lays it out, written by hand.
    #[test]
    fn rows_are_written_as_standard_wkb_and_read_back() {
        let le =
            |words: &[f64]| -> Vec<u8> { words.iter().flat_map(|v| v.to_le_bytes()).collect() };
        let head = |code: u32, n: Option<u32>| {
            let mut h = vec![1u8];
            h.extend_from_slice(&code.to_le_bytes());
            h.extend(n.map(u32::to_le_bytes).into_iter().flatten());
            h
        };
        let ring = [0.0, 0.0, 4.0, 0.0, 4.0, 4.0, 0.0, 0.0];
        let hole = [1.0, 1.0, 2.0, 1.0, 2.0, 2.0, 1.0, 1.0];
        let holed = Polygon::new(
            LineString::from(vec![(0.0, 0.0), (4.0, 0.0), (4.0, 4.0), (0.0, 0.0)]),
            vec![LineString::from(vec![
                (1.0, 1.0),
                (2.0, 1.0),
                (2.0, 2.0),
                (1.0, 1.0),
            ])],
        );
        let polygon_wkb = [
            head(3, Some(2)),
            4u32.to_le_bytes().to_vec(),
            le(&ring),
            4u32.to_le_bytes().to_vec(),
            le(&hole),
        ]
        .concat();
        let mut b = GeometryBuilder::default();
        b.push(&Geometry::Polygon(holed.clone())).unwrap();
        b.push(&Geometry::MultiPoint(MultiPoint(vec![
            point!(x: 1.0, y: 2.0),
            point!(x: 3.0, y: 4.0),
        ])))
        .unwrap();
        b.push(&Geometry::MultiPolygon(MultiPolygon(vec![holed])))
            .unwrap();
        b.push_none().unwrap();
        let g = b.finish();
        let wkb = |row: usize| {
            let mut out = Vec::new();
            assert!(write_row(&g, row, 4269, &mut out));
            let h = header(&out).unwrap();
            assert_eq!(h.envelope, g.bbox(row), "row {row}");
            (out[h.wkb_offset..].to_vec(), out)
        };
        assert_eq!(wkb(0).0, polygon_wkb);
        let multipoint = [
            head(4, Some(2)),
            head(1, None),
            le(&[1.0, 2.0]),
            head(1, None),
            le(&[3.0, 4.0]),
        ];
        assert_eq!(wkb(1).0, multipoint.concat());
        assert_eq!(wkb(2).0, [head(6, Some(1)), polygon_wkb].concat());
        assert!(
            !write_row(&g, 3, 4269, &mut Vec::new()),
            "no blob for a row without geometry"
        );
        // Each blob parses back into the same row.
        let mut back = GeometryBuilder::default();
        for row in 0..3 {
            parse_into(&wkb(row).1, &mut back, None).unwrap();
        }
        let back = back.finish();
        for row in 0..3 {
            assert_eq!(back.get(row), g.get(row));
        }
    }

    #[test]
    fn random_mutations_never_panic() {
        let poly = polygon![(x: 0.0, y: 0.0), (x: 1.0, y: 0.0), (x: 1.0, y: 1.0), (x: 0.0, y: 0.0)];
        let seed = write(
            &Geometry::GeometryCollection(GeometryCollection(vec![Geometry::Polygon(poly)])),
            4269,
        );
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let mut b = seed.clone();
            for _ in 0..1 + next() % 4 {
                let i = (next() % b.len() as u64) as usize;
                b[i] = next() as u8;
            }
            let _ = parse(&b);
        }
    }

    #[test]
    fn a_coordinate_not_finite_in_a_line_is_an_error_that_leaves_nothing() {
        // A little-endian LineString (1, y0) (2, y1) (3, y2).
        let line = |ys: [f64; 3]| {
            let mut w = vec![1u8];
            w.extend_from_slice(&2u32.to_le_bytes());
            w.extend_from_slice(&3u32.to_le_bytes());
            for (x, y) in [1.0f64, 2.0, 3.0].into_iter().zip(ys) {
                w.extend_from_slice(&x.to_le_bytes());
                w.extend_from_slice(&y.to_le_bytes());
            }
            blob(true, 0, false, &[], &w)
        };
        let mut out = GeometryBuilder::default();
        for bad_y in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let e = parse_into(&line([0.0, bad_y, 1.0]), &mut out, None).unwrap_err();
            assert!(e.to_string().contains("not a finite number"), "{e}");
        }
        let bbox = parse_into(&line([5.0, 6.0, 4.0]), &mut out, None).unwrap();
        assert_eq!(bbox, Some([1.0, 4.0, 3.0, 6.0]));
        let g = out.finish();
        assert_eq!(g.len(), 1);
        assert_eq!(g.xy.to_vec(), [1.0, 5.0, 2.0, 6.0, 3.0, 4.0]);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let good = blob(true, 1, false, &[1.0; 4], &big_endian_line_zm());
        for len in 0..good.len() {
            assert!(parse(&good[..len]).is_err(), "truncated at {len}");
        }
        let mut bad_magic = good.clone();
        bad_magic[0] = b'X';
        assert!(parse(&bad_magic).unwrap_err().to_string().contains("magic"));
        let mut bad_kind = good.clone();
        bad_kind[3] = 0b0000_1101; // envelope kind 6
        assert!(parse(&bad_kind)
            .unwrap_err()
            .to_string()
            .contains("envelope kind 6"));
        // A count of 2^32-1 points must not allocate.
        let mut huge = vec![1u8];
        huge.extend_from_slice(&2u32.to_le_bytes());
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(parse(&blob(true, 0, false, &[], &huge)).is_err());
        // Deeply nested collections.
        let mut deep = Vec::new();
        for _ in 0..100 {
            deep.push(1u8);
            deep.extend_from_slice(&7u32.to_le_bytes());
            deep.extend_from_slice(&1u32.to_le_bytes());
        }
        assert!(parse(&blob(true, 0, false, &[], &deep))
            .unwrap_err()
            .to_string()
            .contains("nest"));
    }
}
