//! GeoPackage geometry blobs (GeoPackage 1.x, section 2.1.3: the `GP`
//! header, then standard WKB) read into `geo` geometries, by the mock's own
//! code so that what it serves does not pass through the library's reader.
//!
//! Both byte orders, ISO WKB type codes with Z, M or ZM (1001 to 3007) and
//! EWKB flag bits are read; Z and M are dropped. A geometry without any
//! coordinate (the empty flag, an empty point's NaN coordinates, empty
//! lists) reads as `None`. Every read is bounds-checked and counts are
//! checked against the bytes left, so a corrupt blob is an error, never a
//! panic or a huge allocation.

use geo::{
    Coord, CoordsIter, Geometry, GeometryCollection, LineString, MultiLineString, MultiPoint,
    MultiPolygon, Point, Polygon,
};

/// Deepest nesting of geometry collections read.
const MAX_DEPTH: usize = 16;

/// The geometry of a GeoPackage blob, `None` when it is empty.
pub fn parse_blob(blob: &[u8]) -> Result<Option<Geometry<f64>>, String> {
    let mut r = Cursor {
        bytes: blob,
        at: 0,
        little: true,
    };
    if r.take(2)? != b"GP" {
        return Err("a geometry blob does not start with \"GP\"".into());
    }
    let version = r.byte()?;
    if version != 0 {
        return Err(format!("a geometry blob has version {version}, not 0"));
    }
    let flags = r.byte()?;
    if flags & 0b0010_0000 != 0 {
        return Err("an extended GeoPackage geometry blob".into());
    }
    r.little = flags & 1 == 1;
    let envelope_doubles = match (flags >> 1) & 0b111 {
        0 => 0,
        1 => 4,
        2 | 3 => 6,
        4 => 8,
        kind => return Err(format!("a geometry blob has envelope kind {kind}")),
    };
    r.take(4 + 8 * envelope_doubles)?; // srs_id, envelope
    if flags & 0b0001_0000 != 0 {
        return Ok(None); // the empty flag
    }
    let geometry = r.geometry(0)?;
    if r.at != blob.len() {
        return Err(format!(
            "{} bytes follow the WKB geometry",
            blob.len() - r.at
        ));
    }
    Ok(geometry.filter(|g| g.coords_count() > 0))
}

/// A bounds-checked reader of bytes in the byte order of the value read.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    little: bool,
}

/// The WKB geometry types (their codes modulo 1000).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Point = 1,
    LineString,
    Polygon,
    MultiPoint,
    MultiLineString,
    MultiPolygon,
    Collection,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = (self.at.checked_add(n))
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| format!("a geometry blob ends after {} bytes", self.bytes.len()))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn byte(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b: [u8; 4] = self.take(4)?.try_into().expect("4 bytes");
        Ok(if self.little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    }

    fn f64(&mut self) -> Result<f64, String> {
        let b: [u8; 8] = self.take(8)?.try_into().expect("8 bytes");
        Ok(if self.little {
            f64::from_le_bytes(b)
        } else {
            f64::from_be_bytes(b)
        })
    }

    /// A count of items of at least `item_bytes` bytes each, which the
    /// bytes left must be able to hold.
    fn count(&mut self, item_bytes: usize) -> Result<usize, String> {
        let n = self.u32()? as usize;
        if n.saturating_mul(item_bytes) > self.bytes.len() - self.at {
            return Err(format!("a WKB count of {n} exceeds the blob"));
        }
        Ok(n)
    }

    /// The byte order, type and ordinates per position of the next geometry.
    fn head(&mut self) -> Result<(Kind, usize), String> {
        self.little = match self.byte()? {
            0 => false,
            1 => true,
            b => return Err(format!("a WKB byte order marker is {b}")),
        };
        let code = self.u32()?;
        let (ewkb_z, ewkb_m) = (code & 0x8000_0000 != 0, code & 0x4000_0000 != 0);
        if code & 0x2000_0000 != 0 {
            self.u32()?; // the EWKB SRID
        }
        let iso = code & 0x1FFF_FFFF;
        let (z, m) = match iso / 1000 {
            0 => (ewkb_z, ewkb_m),
            1 => (true, ewkb_m),
            2 => (ewkb_z, true),
            3 => (true, true),
            _ => return Err(format!("unknown WKB geometry type {code}")),
        };
        let kind = match iso % 1000 {
            1 => Kind::Point,
            2 => Kind::LineString,
            3 => Kind::Polygon,
            4 => Kind::MultiPoint,
            5 => Kind::MultiLineString,
            6 => Kind::MultiPolygon,
            7 => Kind::Collection,
            _ => return Err(format!("unsupported WKB geometry type {code}")),
        };
        Ok((kind, 2 + usize::from(z) + usize::from(m)))
    }

    /// One position of `dims` ordinates: `None` for the empty point (NaN, NaN).
    fn position(&mut self, dims: usize) -> Result<Option<Coord<f64>>, String> {
        let (x, y) = (self.f64()?, self.f64()?);
        self.take(8 * (dims - 2))?;
        match (x.is_finite() && y.is_finite(), x.is_nan() && y.is_nan()) {
            (true, _) => Ok(Some(Coord { x, y })),
            (false, true) => Ok(None),
            (false, false) => Err("a coordinate is not a finite number".into()),
        }
    }

    fn line(&mut self, dims: usize) -> Result<LineString<f64>, String> {
        let n = self.count(8 * dims)?;
        let coords = (0..n)
            .map(|_| {
                self.position(dims)?
                    .ok_or_else(|| "an empty point in a line".to_string())
            })
            .collect::<Result<_, String>>()?;
        Ok(LineString(coords))
    }

    fn polygon(&mut self, dims: usize) -> Result<Polygon<f64>, String> {
        let mut rings = (0..self.count(4)?)
            .map(|_| self.line(dims))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter();
        let exterior = rings.next().unwrap_or_else(|| LineString(Vec::new()));
        Ok(Polygon::new(exterior, rings.collect()))
    }

    /// The members of a multi-geometry, each of kind `member`, read by `read`.
    fn members<T>(
        &mut self,
        member: Kind,
        read: impl Fn(&mut Self, usize) -> Result<T, String>,
    ) -> Result<Vec<T>, String> {
        (0..self.count(9)?)
            .map(|_| match self.head()? {
                (kind, dims) if kind == member => read(self, dims),
                (kind, _) => Err(format!("a {kind:?} inside a Multi{member:?}")),
            })
            .collect()
    }

    /// The next geometry; `None` for an empty point.
    fn geometry(&mut self, depth: usize) -> Result<Option<Geometry<f64>>, String> {
        let (kind, dims) = self.head()?;
        Ok(Some(match kind {
            Kind::Point => return Ok(self.position(dims)?.map(|c| Point(c).into())),
            Kind::LineString => self.line(dims)?.into(),
            Kind::Polygon => self.polygon(dims)?.into(),
            Kind::MultiPoint => {
                let points = self.members(Kind::Point, |r, dims| r.position(dims))?;
                MultiPoint(points.into_iter().flatten().map(Point).collect()).into()
            }
            Kind::MultiLineString => {
                MultiLineString(self.members(Kind::LineString, Self::line)?).into()
            }
            Kind::MultiPolygon => MultiPolygon(self.members(Kind::Polygon, Self::polygon)?).into(),
            Kind::Collection if depth >= MAX_DEPTH => {
                return Err("geometry collections nest too deeply".into())
            }
            Kind::Collection => {
                let members = (0..self.count(9)?)
                    .map(|_| self.geometry(depth + 1))
                    .collect::<Result<Vec<_>, _>>()?;
                let members = members.into_iter().flatten();
                let members = members.filter(|g| g.coords_count() > 0).collect();
                Geometry::GeometryCollection(GeometryCollection(members))
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::{line_string, point, polygon};

    /// A blob: header (byte order, envelope kind, empty flag, srs_id 4269,
    /// `envelope` doubles), then `wkb`.
    fn blob(little: bool, envelope_kind: u8, empty: bool, envelope: &[f64], wkb: &[u8]) -> Vec<u8> {
        let mut b = b"GP\0".to_vec();
        b.push(u8::from(little) | envelope_kind << 1 | if empty { 0x10 } else { 0 });
        let order = |bytes: [u8; 8]| if little { bytes } else { reversed(bytes) };
        b.extend_from_slice(&if little {
            4269u32.to_le_bytes()
        } else {
            4269u32.to_be_bytes()
        });
        for v in envelope {
            b.extend_from_slice(&order(v.to_le_bytes()));
        }
        b.extend_from_slice(wkb);
        b
    }

    fn reversed(mut bytes: [u8; 8]) -> [u8; 8] {
        bytes.reverse();
        bytes
    }

    /// Little-endian WKB words: a marker byte 1, then `u32`s and `f64`s.
    enum W {
        U(u32),
        F(f64),
    }

    fn le(words: &[W]) -> Vec<u8> {
        let mut out = vec![1u8];
        for w in words {
            match w {
                W::U(u) => out.extend_from_slice(&u.to_le_bytes()),
                W::F(f) => out.extend_from_slice(&f.to_le_bytes()),
            }
        }
        out
    }

    /// Big-endian ISO WKB of a LineString ZM (type 3002) of two positions.
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
    fn every_envelope_kind_and_both_byte_orders_read_the_same_line() {
        let want = Geometry::LineString(line_string![(x: 1.0, y: 2.0), (x: 3.0, y: 4.0)]);
        for (kind, doubles) in [(0u8, 0), (1, 4), (2, 6), (3, 6), (4, 8)] {
            for little in [true, false] {
                let b = blob(
                    little,
                    kind,
                    false,
                    &vec![7.0; doubles],
                    &big_endian_line_zm(),
                );
                assert_eq!(parse_blob(&b), Ok(Some(want.clone())), "{kind} {little}");
            }
        }
    }

    #[test]
    fn ewkb_flags_and_their_srid_are_read() {
        let mut w = vec![1u8];
        w.extend_from_slice(&0xA000_0001u32.to_le_bytes()); // Point, Z, SRID
        w.extend_from_slice(&4326u32.to_le_bytes());
        for v in [-89.5f64, 43.1, 250.0] {
            w.extend_from_slice(&v.to_le_bytes());
        }
        let point = Geometry::Point(point!(x: -89.5, y: 43.1));
        assert_eq!(parse_blob(&blob(true, 0, false, &[], &w)), Ok(Some(point)));
    }

    #[test]
    fn a_multipolygon_with_a_hole_reads_as_laid_out() {
        let ring = [0.0, 0.0, 4.0, 0.0, 4.0, 4.0, 0.0, 0.0].map(W::F);
        let hole = [1.0, 1.0, 2.0, 1.0, 2.0, 2.0, 1.0, 1.0].map(W::F);
        let wkb = [
            le(&[W::U(6), W::U(1)]),
            le(&[W::U(3), W::U(2), W::U(4)]),
            le(&ring)[1..].to_vec(),
            W::U(4).bytes(),
            le(&hole)[1..].to_vec(),
        ]
        .concat();
        let want = polygon!(
            exterior: [(x: 0.0, y: 0.0), (x: 4.0, y: 0.0), (x: 4.0, y: 4.0), (x: 0.0, y: 0.0)],
            interiors: [[(x: 1.0, y: 1.0), (x: 2.0, y: 1.0), (x: 2.0, y: 2.0), (x: 1.0, y: 1.0)]],
        );
        assert_eq!(
            parse_blob(&blob(true, 1, false, &[0.0, 4.0, 0.0, 4.0], &wkb)),
            Ok(Some(Geometry::MultiPolygon(MultiPolygon(vec![want]))))
        );
    }

    impl W {
        fn bytes(&self) -> Vec<u8> {
            le(std::slice::from_ref(self))[1..].to_vec()
        }
    }

    #[test]
    fn empty_geometries_are_none() {
        let nan_point = le(&[W::U(1), W::F(f64::NAN), W::F(f64::NAN)]);
        assert_eq!(parse_blob(&blob(true, 0, true, &[], &nan_point)), Ok(None));
        assert_eq!(parse_blob(&blob(true, 0, false, &[], &nan_point)), Ok(None));
        let no_polygons = le(&[W::U(6), W::U(0)]);
        assert_eq!(
            parse_blob(&blob(true, 0, false, &[], &no_polygons)),
            Ok(None)
        );
    }

    #[test]
    fn broken_blobs_are_errors() {
        let good = blob(true, 1, false, &[1.0; 4], &big_endian_line_zm());
        for len in 0..good.len() {
            assert!(parse_blob(&good[..len]).is_err(), "cut at {len}");
        }
        assert!(parse_blob(&[good.as_slice(), &[0]].concat()).is_err());
        let mut magic = good.clone();
        magic[0] = b'X';
        assert!(parse_blob(&magic).is_err());
        let huge = le(&[W::U(2), W::U(u32::MAX)]);
        assert!(parse_blob(&blob(true, 0, false, &[], &huge)).is_err());
        let infinite = le(&[W::U(1), W::F(f64::INFINITY), W::F(1.0)]);
        assert!(parse_blob(&blob(true, 0, false, &[], &infinite)).is_err());
        let deep: Vec<u8> = (0..100).flat_map(|_| le(&[W::U(7), W::U(1)])).collect();
        assert!(parse_blob(&blob(true, 0, false, &[], &deep)).is_err());
        let mixed = [
            le(&[W::U(5), W::U(1)]),
            le(&[W::U(1), W::F(0.0), W::F(0.0)]),
        ]
        .concat();
        assert!(parse_blob(&blob(true, 0, false, &[], &mixed)).is_err());
    }
}
