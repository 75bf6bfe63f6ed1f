//! GeoPackage geometry blobs (the `GP` header of the standard, section 2.1.3)
//! and the WKB inside them.
//!
//! [`parse`] reads any blob without panicking: every read is bounds-checked,
//! counts are checked against the bytes left before anything is allocated and
//! nesting is limited. Z and M ordinates are read and dropped. [`write`] produces
//! little-endian blobs with an XY envelope (none for empty geometries).

use geo::{
    Coord, Geometry, GeometryCollection, HasDimensions, LineString, MultiLineString, MultiPoint,
    MultiPolygon, Point, Polygon,
};

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
    let mut r = Reader::new(bytes);
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

/// Parses a GeoPackage geometry blob. `Ok(None)` for an empty geometry (the
/// empty flag, or WKB with no coordinates); an error names what is wrong.
pub fn parse(bytes: &[u8]) -> Result<Option<Geometry<f64>>> {
    let h = header(bytes)?;
    let wkb = &bytes[h.wkb_offset..];
    if h.empty && wkb.is_empty() {
        return Ok(None);
    }
    let geometry = parse_wkb(wkb)?;
    Ok((!h.empty && !geometry.is_empty()).then_some(geometry))
}

/// Parses one WKB geometry (OGC/ISO, with ISO Z/M/ZM codes or EWKB flag bits).
pub fn parse_wkb(bytes: &[u8]) -> Result<Geometry<f64>> {
    let mut r = Reader::new(bytes);
    let g = r.geometry(0)?;
    if r.pos != bytes.len() {
        return Err(bad(&format!(
            "{} bytes follow the WKB geometry",
            bytes.len() - r.pos
        )));
    }
    Ok(g)
}

fn bad(why: &str) -> Error {
    Error::Gpkg(format!("A GeoPackage geometry blob is malformed: {why}."))
}

/// A bounds-checked cursor over WKB bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    little: bool,
}

/// The WKB geometry kinds we read (WKB type codes 1 to 7).
#[derive(Clone, Copy)]
enum Kind {
    Point,
    LineString,
    Polygon,
    MultiPoint,
    MultiLineString,
    MultiPolygon,
    Collection,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Reader {
            bytes,
            pos: 0,
            little: true,
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

    fn geometry(&mut self, depth: usize) -> Result<Geometry<f64>> {
        if depth > MAX_DEPTH {
            return Err(bad("its geometry collections nest too deeply"));
        }
        let (kind, dims) = self.geometry_head()?;
        Ok(match kind {
            Kind::Point => match self.point(dims)? {
                Some(p) => Geometry::Point(p),
                None => Geometry::MultiPoint(MultiPoint(vec![])),
            },
            Kind::LineString => Geometry::LineString(self.line(dims)?),
            Kind::Polygon => Geometry::Polygon(self.polygon(dims)?),
            Kind::MultiPoint => {
                let n = self.count(5)?;
                let mut points = Vec::with_capacity(n);
                for _ in 0..n {
                    points.extend(self.member(Kind::Point, |r, d| r.point(d))?);
                }
                Geometry::MultiPoint(MultiPoint(points))
            }
            Kind::MultiLineString => {
                let n = self.count(9)?;
                let mut lines = Vec::with_capacity(n);
                for _ in 0..n {
                    lines.push(self.member(Kind::LineString, |r, d| r.line(d))?);
                }
                Geometry::MultiLineString(MultiLineString(lines))
            }
            Kind::MultiPolygon => {
                let n = self.count(9)?;
                let mut polygons = Vec::with_capacity(n);
                for _ in 0..n {
                    polygons.push(self.member(Kind::Polygon, |r, d| r.polygon(d))?);
                }
                Geometry::MultiPolygon(MultiPolygon(polygons))
            }
            Kind::Collection => {
                let n = self.count(5)?;
                let mut members = Vec::with_capacity(n);
                for _ in 0..n {
                    members.push(self.geometry(depth + 1)?);
                }
                Geometry::GeometryCollection(GeometryCollection(members))
            }
        })
    }

    /// One member of a multi-geometry, which must be of kind `want`.
    fn member<T>(
        &mut self,
        want: Kind,
        read: impl FnOnce(&mut Self, usize) -> Result<T>,
    ) -> Result<T> {
        let (kind, dims) = self.geometry_head()?;
        if std::mem::discriminant(&kind) != std::mem::discriminant(&want) {
            return Err(bad("a multi-geometry holds a member of another type"));
        }
        read(self, dims)
    }

    fn coord(&mut self, dims: usize) -> Result<(f64, f64)> {
        let (x, y) = (self.f64()?, self.f64()?);
        self.take((dims - 2) * 8)?;
        Ok((x, y))
    }

    fn finite(&self, (x, y): (f64, f64)) -> Result<Coord<f64>> {
        if x.is_finite() && y.is_finite() {
            Ok(Coord { x, y })
        } else {
            Err(bad("it holds a coordinate that is not a finite number"))
        }
    }

    /// A point; `None` for the empty point (NaN coordinates).
    fn point(&mut self, dims: usize) -> Result<Option<Point<f64>>> {
        let xy = self.coord(dims)?;
        if xy.0.is_nan() && xy.1.is_nan() {
            return Ok(None);
        }
        Ok(Some(Point(self.finite(xy)?)))
    }

    fn line(&mut self, dims: usize) -> Result<LineString<f64>> {
        let n = self.count(dims * 8)?;
        let mut coords = Vec::with_capacity(n);
        for _ in 0..n {
            let xy = self.coord(dims)?;
            coords.push(self.finite(xy)?);
        }
        Ok(LineString(coords))
    }

    fn polygon(&mut self, dims: usize) -> Result<Polygon<f64>> {
        let n = self.count(4)?;
        let mut rings = Vec::with_capacity(n);
        for _ in 0..n {
            rings.push(self.line(dims)?);
        }
        let mut rings = rings.into_iter();
        let exterior = rings.next().unwrap_or_else(|| LineString(vec![]));
        Ok(Polygon::new(exterior, rings.collect()))
    }
}

/// Encodes a geometry as a little-endian GeoPackage blob with an XY envelope
/// (envelope-less with the empty flag when the geometry is empty). `Line`,
/// `Rect` and `Triangle` are written as a LineString and Polygons.
pub fn write(geometry: &Geometry<f64>, srs_id: i32) -> Vec<u8> {
    let bbox = geo::BoundingRect::bounding_rect(geometry);
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(b"GP");
    out.push(0);
    match bbox {
        Some(r) if !geometry.is_empty() => {
            out.push(0b0000_0011); // little endian, envelope kind 1
            out.extend_from_slice(&srs_id.to_le_bytes());
            for v in [r.min().x, r.max().x, r.min().y, r.max().y] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        _ => {
            out.push(0b0001_0001); // little endian, empty, no envelope
            out.extend_from_slice(&srs_id.to_le_bytes());
        }
    }
    write_wkb(geometry, &mut out);
    out
}

/// The OGC geometry type name of a geometry as written by [`write`].
pub fn type_name(geometry: &Geometry<f64>) -> &'static str {
    match geometry {
        Geometry::Point(_) => "POINT",
        Geometry::Line(_) | Geometry::LineString(_) => "LINESTRING",
        Geometry::Polygon(_) | Geometry::Rect(_) | Geometry::Triangle(_) => "POLYGON",
        Geometry::MultiPoint(_) => "MULTIPOINT",
        Geometry::MultiLineString(_) => "MULTILINESTRING",
        Geometry::MultiPolygon(_) => "MULTIPOLYGON",
        Geometry::GeometryCollection(_) => "GEOMETRYCOLLECTION",
    }
}

fn head(out: &mut Vec<u8>, code: u32) {
    out.push(1);
    out.extend_from_slice(&code.to_le_bytes());
}

fn coords<'a>(out: &mut Vec<u8>, cs: impl ExactSizeIterator<Item = &'a Coord<f64>>) {
    out.extend_from_slice(&(cs.len() as u32).to_le_bytes());
    for c in cs {
        out.extend_from_slice(&c.x.to_le_bytes());
        out.extend_from_slice(&c.y.to_le_bytes());
    }
}

fn polygon_wkb(p: &Polygon<f64>, out: &mut Vec<u8>) {
    head(out, 3);
    // An empty polygon has no rings at all.
    let rings: Vec<&LineString<f64>> = if p.exterior().0.is_empty() {
        vec![]
    } else {
        std::iter::once(p.exterior()).chain(p.interiors()).collect()
    };
    out.extend_from_slice(&(rings.len() as u32).to_le_bytes());
    for ring in rings {
        coords(out, ring.0.iter());
    }
}

/// Appends the little-endian XY WKB of `g` to `out` (the body of [`write`]'s
/// blob; also the `geoarrow.wkb` column of the Arrow export).
pub fn write_wkb(g: &Geometry<f64>, out: &mut Vec<u8>) {
    match g {
        Geometry::Point(p) => {
            head(out, 1);
            out.extend_from_slice(&p.x().to_le_bytes());
            out.extend_from_slice(&p.y().to_le_bytes());
        }
        Geometry::Line(l) => {
            head(out, 2);
            coords(out, [l.start, l.end].iter());
        }
        Geometry::LineString(l) => {
            head(out, 2);
            coords(out, l.0.iter());
        }
        Geometry::Polygon(p) => polygon_wkb(p, out),
        Geometry::Rect(r) => polygon_wkb(&r.to_polygon(), out),
        Geometry::Triangle(t) => polygon_wkb(&t.to_polygon(), out),
        Geometry::MultiPoint(mp) => {
            head(out, 4);
            out.extend_from_slice(&(mp.0.len() as u32).to_le_bytes());
            for p in &mp.0 {
                write_wkb(&Geometry::Point(*p), out);
            }
        }
        Geometry::MultiLineString(ml) => {
            head(out, 5);
            out.extend_from_slice(&(ml.0.len() as u32).to_le_bytes());
            for l in &ml.0 {
                head(out, 2);
                coords(out, l.0.iter());
            }
        }
        Geometry::MultiPolygon(mp) => {
            head(out, 6);
            out.extend_from_slice(&(mp.0.len() as u32).to_le_bytes());
            for p in &mp.0 {
                polygon_wkb(p, out);
            }
        }
        Geometry::GeometryCollection(gc) => {
            head(out, 7);
            out.extend_from_slice(&(gc.0.len() as u32).to_le_bytes());
            for m in &gc.0 {
                write_wkb(m, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::{line_string, point, polygon};

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
