//! A layer's geometries in flat buffers: GeoArrow's multipolygon layout
//! (row -> parts -> rings -> interleaved x, y) for every geometry type, plus
//! one type code per row so that a Polygon stays a Polygon.
//!
//! Every row uses the same three levels of offsets:
//! - Point: one part, one ring, one coordinate;
//! - LineString, MultiPoint: one part, one ring of n coordinates;
//! - Polygon (rings), MultiLineString (lines): one part of n rings;
//! - MultiPolygon: n parts.
//!
//! A row's coordinates are therefore one contiguous slice of `xy`, which is
//! what bounding boxes and projection need. Z and M are dropped (no source
//! of this library sends them and no output writes them). The rare
//! GeometryCollection row is kept whole beside the buffers.

use arrow_buffer::{ArrowNativeType, OffsetBuffer, ScalarBuffer};
use geo::{Coord, Geometry, LineString, MultiLineString, MultiPoint, MultiPolygon, Point, Polygon};
use std::sync::OnceLock;

/// Type codes, as in WKB.
pub mod kind {
    pub const NONE: u8 = 0;
    pub const POINT: u8 = 1;
    pub const LINESTRING: u8 = 2;
    pub const POLYGON: u8 = 3;
    pub const MULTIPOINT: u8 = 4;
    pub const MULTILINESTRING: u8 = 5;
    pub const MULTIPOLYGON: u8 = 6;
    pub const COLLECTION: u8 = 7;

    /// The OGC geometry type name of a type code (`"MULTIPOLYGON"`), as
    /// GeoPackages declare it; `"GEOMETRY"` for any other code.
    pub fn name(code: u8) -> &'static str {
        match code {
            POINT => "POINT",
            LINESTRING => "LINESTRING",
            POLYGON => "POLYGON",
            MULTIPOINT => "MULTIPOINT",
            MULTILINESTRING => "MULTILINESTRING",
            MULTIPOLYGON => "MULTIPOLYGON",
            COLLECTION => "GEOMETRYCOLLECTION",
            _ => "GEOMETRY",
        }
    }
}

const TOO_MANY: &str = "a layer holds more than 2^31 coordinates, rings or parts";

/// Geometries under construction. Owns growing vectors; see [`Geometries`].
#[derive(Debug, Clone)]
pub struct GeometryBuilder {
    kinds: Vec<u8>,
    parts: Vec<i32>,
    rings: Vec<i32>,
    coords: Vec<i32>,
    xy: Vec<f64>,
    collections: Vec<(usize, Geometry<f64>)>,
    /// How many of the first coordinates have a known box, and that box
    /// (`None` without a coordinate): measured on the builder's thread
    /// ([`GeometryBuilder::measure_extent`]) or appended with geometries
    /// whose box was known ([`GeometryBuilder::append_all`]). `finish`
    /// hands it to [`Geometries::bbox_of_all`] when it covers every row.
    measured: (usize, Option<[f64; 4]>),
}

impl Default for GeometryBuilder {
    fn default() -> Self {
        GeometryBuilder {
            kinds: Vec::new(),
            parts: vec![0],
            rings: vec![0],
            coords: vec![0],
            xy: Vec::new(),
            collections: Vec::new(),
            measured: (0, None),
        }
    }
}

fn offset(n: usize) -> Result<i32, String> {
    i32::try_from(n).map_err(|_| TOO_MANY.to_string())
}

impl GeometryBuilder {
    /// Rows finished so far.
    pub fn rows(&self) -> usize {
        self.kinds.len()
    }

    /// Appends one coordinate to the open ring.
    pub fn push_xy(&mut self, x: f64, y: f64) {
        self.xy.extend_from_slice(&[x, y]);
    }

    /// Pushes every coordinate of `points` to the open ring.
    pub fn extend_xy(&mut self, points: impl ExactSizeIterator<Item = [f64; 2]>) {
        self.xy.reserve(2 * points.len());
        for [x, y] in points {
            self.xy.extend_from_slice(&[x, y]);
        }
    }

    /// Makes room for `n` more coordinates of the open ring.
    pub fn reserve_xy(&mut self, n: usize) {
        self.xy.reserve(2 * n);
    }

    /// Closes the open ring (line, point list) after its coordinates.
    pub fn close_ring(&mut self) -> Result<(), String> {
        self.coords.push(offset(self.xy.len() / 2)?);
        Ok(())
    }

    /// Closes the open part (polygon) after its rings.
    pub fn close_part(&mut self) -> Result<(), String> {
        self.rings.push(offset(self.coords.len() - 1)?);
        Ok(())
    }

    /// Ends a row of type `kind` after its parts.
    pub fn finish_row(&mut self, kind: u8) -> Result<(), String> {
        self.parts.push(offset(self.rings.len() - 1)?);
        self.kinds.push(kind);
        Ok(())
    }

    /// Drops whatever was pushed after the last finished row.
    pub fn abandon_row(&mut self) {
        let parts = *self.parts.last().unwrap_or(&0) as usize;
        self.rings.truncate(parts + 1);
        let rings = self.rings[parts] as usize;
        self.coords.truncate(rings + 1);
        self.xy.truncate(self.coords[rings] as usize * 2);
        // A row dropped after it was measured: its box is not known.
        if self.measured.0 > self.finished_coords() {
            self.measured = (0, None);
        }
    }

    /// How many coordinates the finished rows have.
    fn finished_coords(&self) -> usize {
        let rings = self.rings[*self.parts.last().unwrap_or(&0) as usize] as usize;
        self.coords[rings] as usize
    }

    /// Measures, on the calling thread, the box of the finished rows'
    /// coordinates not measured yet. A layer read in shares on several
    /// threads, each share measured on its own, then knows its box once
    /// they are joined ([`GeometryBuilder::append_all`]), without another
    /// pass over every coordinate on one thread.
    pub fn measure_extent(&mut self) {
        let (from, to) = (self.measured.0, self.finished_coords());
        let more = extent_of(&self.xy[2 * from..2 * to]);
        self.measured = (to, united(self.measured.1, more));
    }

    /// Appends every row of `from`, with its box when both its box and
    /// every coordinate here so far are known.
    pub fn append_all(&mut self, from: &Geometries) -> Result<(), String> {
        let known = (self.measured.0 == self.finished_coords())
            .then_some(self.measured.1)
            .zip(from.extent.get().copied());
        self.extend_from(from, 0..from.len())?;
        if let Some((here, there)) = known {
            self.measured = (self.finished_coords(), united(here, there));
        }
        Ok(())
    }

    /// Drops the last finished row (nothing when there is none), for a
    /// filler that decides to keep a row only once it is built.
    pub fn pop_row(&mut self) {
        match self.kinds.pop() {
            None => return,
            Some(kind::COLLECTION) => {
                self.collections.pop();
            }
            Some(_) => {}
        }
        self.parts.pop();
        self.abandon_row();
    }

    /// A row without geometry.
    pub fn push_none(&mut self) -> Result<(), String> {
        self.finish_row(kind::NONE)
    }

    /// Appends a `geo` geometry as one row.
    pub fn push(&mut self, g: &Geometry<f64>) -> Result<(), String> {
        let ring = |b: &mut Self, c: &mut dyn Iterator<Item = Coord<f64>>| {
            for c in c {
                b.push_xy(c.x, c.y);
            }
            b.close_ring()
        };
        let polygon = |b: &mut Self, p: &Polygon<f64>| {
            ring(b, &mut p.exterior().0.iter().copied())?;
            for r in p.interiors() {
                ring(b, &mut r.0.iter().copied())?;
            }
            b.close_part()
        };
        let kind = match g {
            Geometry::Point(p) => {
                ring(self, &mut std::iter::once(p.0))?;
                self.close_part()?;
                kind::POINT
            }
            Geometry::MultiPoint(m) => {
                ring(self, &mut m.0.iter().map(|p| p.0))?;
                self.close_part()?;
                kind::MULTIPOINT
            }
            Geometry::LineString(l) => {
                ring(self, &mut l.0.iter().copied())?;
                self.close_part()?;
                kind::LINESTRING
            }
            Geometry::MultiLineString(m) => {
                for l in &m.0 {
                    ring(self, &mut l.0.iter().copied())?;
                }
                self.close_part()?;
                kind::MULTILINESTRING
            }
            Geometry::Polygon(p) => {
                polygon(self, p)?;
                kind::POLYGON
            }
            Geometry::MultiPolygon(m) => {
                for p in &m.0 {
                    polygon(self, p)?;
                }
                kind::MULTIPOLYGON
            }
            other => {
                self.collections.push((self.rows(), other.clone()));
                kind::COLLECTION
            }
        };
        self.finish_row(kind)
    }

    /// Appends a row kept whole (a GeometryCollection).
    pub fn push_collection(&mut self, g: Geometry<f64>) -> Result<(), String> {
        self.collections.push((self.rows(), g));
        self.finish_row(kind::COLLECTION)
    }

    /// Appends rows `rows` of `from`.
    pub fn extend_from(
        &mut self,
        from: &Geometries,
        rows: impl IntoIterator<Item = usize>,
    ) -> Result<(), String> {
        for row in rows {
            let k = from.kinds[row];
            if k == kind::COLLECTION {
                if let Some(g) = from.collection(row) {
                    self.push_collection(g.clone())?;
                }
                continue;
            }
            for part in from.parts[row] as usize..from.parts[row + 1] as usize {
                for ring in from.rings[part] as usize..from.rings[part + 1] as usize {
                    let (a, b) = (from.coords[ring] as usize, from.coords[ring + 1] as usize);
                    self.xy.extend_from_slice(&from.xy[2 * a..2 * b]);
                    self.close_ring()?;
                }
                self.close_part()?;
            }
            self.finish_row(k)?;
        }
        Ok(())
    }

    /// Freezes the buffers (moved, not copied), with their box when every
    /// row's is known.
    pub fn finish(self) -> Geometries {
        let extent = OnceLock::new();
        // A collection's box is not among the coordinates measured.
        if self.measured.0 == self.finished_coords() && self.collections.is_empty() {
            let _ = extent.set(self.measured.1);
        }
        Geometries {
            kinds: ScalarBuffer::from(self.kinds),
            parts: OffsetBuffer::new(ScalarBuffer::from(self.parts)),
            rings: OffsetBuffer::new(ScalarBuffer::from(self.rings)),
            coords: OffsetBuffer::new(ScalarBuffer::from(self.coords)),
            xy: ScalarBuffer::from(self.xy),
            collections: self.collections,
            extent,
        }
    }
}

/// Twice the signed area of the ring of interleaved `xy` (shoelace, the
/// ring closed whether or not its last point repeats the first): positive
/// when counterclockwise. The dissolve and the GeoJSON writer wind rings
/// by its sign.
pub(super) fn signed_area(xy: &[f64]) -> f64 {
    let n = xy.len() / 2;
    (0..n)
        .map(|i| {
            let j = (i + 1) % n;
            xy[2 * i] * xy[2 * j + 1] - xy[2 * j] * xy[2 * i + 1]
        })
        .sum()
}

/// The least and greatest x and y of the interleaved `xy`, as
/// `[xmin, ymin, xmax, ymax]`; `None` without a coordinate. NaN is passed
/// over, as `f64::min` does, unless every value of an axis is NaN (then
/// that axis is NaN). Four points at a time, in lanes the compiler keeps
/// in vector registers: a million flowlines' coordinates are hundreds of
/// megabytes.
fn extent_of(xy: &[f64]) -> Option<[f64; 4]> {
    const LANES: usize = 8;
    if xy.len() < 2 {
        return None;
    }
    let mut lo = [f64::INFINITY; LANES];
    let mut hi = [f64::NEG_INFINITY; LANES];
    let mut chunks = xy.chunks_exact(LANES);
    for chunk in &mut chunks {
        for k in 0..LANES {
            if chunk[k] < lo[k] {
                lo[k] = chunk[k];
            }
            if chunk[k] > hi[k] {
                hi[k] = chunk[k];
            }
        }
    }
    for (k, &v) in chunks.remainder().iter().enumerate() {
        if v < lo[k] {
            lo[k] = v;
        }
        if v > hi[k] {
            hi[k] = v;
        }
    }
    // Lanes 0, 2, 4, 6 hold x; 1, 3, 5, 7 hold y.
    let axis = |axis: usize| {
        let least = lo[axis..]
            .iter()
            .step_by(2)
            .fold(f64::INFINITY, |a, &v| a.min(v));
        let greatest = (hi[axis..].iter().step_by(2)).fold(f64::NEG_INFINITY, |a, &v| a.max(v));
        match least <= greatest {
            true => (least, greatest),
            false => (f64::NAN, f64::NAN),
        }
    };
    let ((xmin, xmax), (ymin, ymax)) = (axis(0), axis(1));
    Some([xmin, ymin, xmax, ymax])
}

/// The union of two boxes, either of which may be none.
fn united(a: Option<[f64; 4]>, b: Option<[f64; 4]>) -> Option<[f64; 4]> {
    a.into_iter().chain(b).reduce(crate::feature::union_bbox)
}

/// A layer's geometries, immutable; clones share the buffers.
#[derive(Debug, Clone)]
pub struct Geometries {
    /// The type code of each row ([`kind`]).
    pub kinds: ScalarBuffer<u8>,
    /// Row -> its parts (`parts[row]..parts[row + 1]`).
    pub parts: OffsetBuffer<i32>,
    /// Part -> its rings.
    pub rings: OffsetBuffer<i32>,
    /// Ring -> its coordinates.
    pub coords: OffsetBuffer<i32>,
    /// Interleaved x, y (lon, lat unless stated).
    pub xy: ScalarBuffer<f64>,
    /// The GeometryCollection rows, by row, ascending.
    collections: Vec<(usize, Geometry<f64>)>,
    /// [`Geometries::bbox_of_all`], once asked for.
    extent: OnceLock<Option<[f64; 4]>>,
}

impl Default for Geometries {
    fn default() -> Self {
        GeometryBuilder::default().finish()
    }
}

impl Geometries {
    /// Geometries from their buffers (as [`Geometries`] documents them) and
    /// the GeometryCollection rows, checked so that every accessor stays in
    /// bounds: one type code per row, each offset level indexing the next.
    pub(super) fn from_buffers(
        kinds: ScalarBuffer<u8>,
        parts: OffsetBuffer<i32>,
        rings: OffsetBuffer<i32>,
        coords: OffsetBuffer<i32>,
        xy: ScalarBuffer<f64>,
        collections: Vec<(usize, Geometry<f64>)>,
    ) -> Result<Geometries, String> {
        let ends = |o: &OffsetBuffer<i32>| *o.last().unwrap_or(&0) as usize;
        let fits = kinds.len() + 1 == parts.len()
            && ends(&parts) < rings.len()
            && ends(&rings) < coords.len()
            && 2 * ends(&coords) <= xy.len()
            && kinds.iter().all(|&k| k <= kind::COLLECTION)
            && collections.windows(2).all(|w| w[0].0 < w[1].0)
            && collections
                .iter()
                .all(|(row, _)| kinds.get(*row) == Some(&kind::COLLECTION));
        if !fits {
            return Err("inconsistent geometry buffers".into());
        }
        Ok(Geometries {
            kinds,
            parts,
            rings,
            coords,
            xy,
            collections,
            extent: OnceLock::new(),
        })
    }

    /// An empty builder that fills these buffers' memory again (each buffer
    /// no clone shares; a shared one is left to its clones), for a layer
    /// read a batch at a time: the next batch is written into pages
    /// already touched instead of fresh ones.
    pub fn recycle(self) -> GeometryBuilder {
        fn emptied<T: ArrowNativeType>(buffer: ScalarBuffer<T>, first: &[T]) -> Vec<T> {
            let mut v = buffer.into_inner().into_vec().unwrap_or_default();
            v.clear();
            v.extend_from_slice(first);
            v
        }
        GeometryBuilder {
            kinds: emptied(self.kinds, &[]),
            parts: emptied(self.parts.into_inner(), &[0]),
            rings: emptied(self.rings.into_inner(), &[0]),
            coords: emptied(self.coords.into_inner(), &[0]),
            xy: emptied(self.xy, &[]),
            collections: Vec::new(),
            measured: (0, None),
        }
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// The geometries with each row of the single type of `multi` (a Point,
    /// LineString or Polygon for MultiPoint, MultiLineString, MultiPolygon)
    /// made that multi type of one member. Only the type codes change: a
    /// single is laid out as its multi of one member already (module doc).
    /// Shares every buffer when no row changes.
    pub fn promoted_to(&self, multi: u8) -> Geometries {
        let single = match multi {
            kind::MULTIPOINT => kind::POINT,
            kind::MULTILINESTRING => kind::LINESTRING,
            kind::MULTIPOLYGON => kind::POLYGON,
            _ => return self.clone(),
        };
        if !self.kinds.contains(&single) {
            return self.clone();
        }
        let kinds = self
            .kinds
            .iter()
            .map(|&k| if k == single { multi } else { k });
        Geometries {
            kinds: ScalarBuffer::from(kinds.collect::<Vec<u8>>()),
            ..self.clone()
        }
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    fn collection(&self, row: usize) -> Option<&Geometry<f64>> {
        let i = self
            .collections
            .binary_search_by_key(&row, |(r, _)| *r)
            .ok()?;
        Some(&self.collections[i].1)
    }

    /// The indexes of the rings of row `row`, every part's in order (ring
    /// `r`'s coordinates are `coords[r]..coords[r + 1]`).
    pub fn row_rings(&self, row: usize) -> std::ops::Range<usize> {
        self.rings[self.parts[row] as usize] as usize
            ..self.rings[self.parts[row + 1] as usize] as usize
    }

    /// The interleaved x, y of ring `ring` (an index into `coords`, as
    /// [`Geometries::row_rings`] gives them).
    pub fn ring_xy(&self, ring: usize) -> &[f64] {
        &self.xy[2 * self.coords[ring] as usize..2 * self.coords[ring + 1] as usize]
    }

    /// The index of the first coordinate of row `row` (the number of
    /// coordinates for `row == self.len()`).
    pub fn first_coord(&self, row: usize) -> usize {
        self.coords[self.rings[self.parts[row] as usize] as usize] as usize
    }

    /// The interleaved x, y of row `row`, every part and ring in order
    /// (empty for a row without geometry or a collection).
    pub fn row_xy(&self, row: usize) -> &[f64] {
        &self.xy[2 * self.first_coord(row)..2 * self.first_coord(row + 1)]
    }

    /// The bounding box `[xmin, ymin, xmax, ymax]` of every row; `None`
    /// when no row has a coordinate. The union of the rows' [`bbox`]es, in
    /// one pass over the coordinates when no row is a collection (the least
    /// and greatest of a set of numbers do not depend on how they are
    /// grouped).
    ///
    /// [`bbox`]: Geometries::bbox
    pub fn bbox_of_all(&self) -> Option<[f64; 4]> {
        *self.extent.get_or_init(|| {
            if !self.collections.is_empty() {
                return (0..self.len())
                    .filter_map(|r| self.bbox(r))
                    .reduce(crate::feature::union_bbox);
            }
            extent_of(&self.xy[2 * self.first_coord(0)..2 * self.first_coord(self.len())])
        })
    }

    /// The bounding box `[xmin, ymin, xmax, ymax]` of row `row`.
    pub fn bbox(&self, row: usize) -> Option<[f64; 4]> {
        if self.kinds[row] == kind::COLLECTION {
            let r = geo::BoundingRect::bounding_rect(self.collection(row)?)?;
            return Some([r.min().x, r.min().y, r.max().x, r.max().y]);
        }
        extent_of(self.row_xy(row))
    }

    /// Row `row` as a `geo` geometry (`None` for a row without one).
    pub fn get(&self, row: usize) -> Option<Geometry<f64>> {
        let ring = |r: usize| {
            LineString(
                self.ring_xy(r)
                    .chunks_exact(2)
                    .map(|p| Coord { x: p[0], y: p[1] })
                    .collect(),
            )
        };
        let rings = |part: usize| self.rings[part] as usize..self.rings[part + 1] as usize;
        let polygon = |part: usize| {
            let mut rs = rings(part).map(ring);
            let exterior = rs.next().unwrap_or_else(|| LineString(Vec::new()));
            Polygon::new(exterior, rs.collect())
        };
        let parts = self.parts[row] as usize..self.parts[row + 1] as usize;
        let first_ring = || parts.clone().next().and_then(|p| rings(p).next()).map(ring);
        Some(match self.kinds[row] {
            kind::POINT => Geometry::Point(Point(*first_ring()?.0.first()?)),
            kind::MULTIPOINT => Geometry::MultiPoint(MultiPoint(
                first_ring().map_or(Vec::new(), |l| l.0.into_iter().map(Point).collect()),
            )),
            kind::LINESTRING => Geometry::LineString(first_ring().unwrap_or(LineString(vec![]))),
            kind::MULTILINESTRING => Geometry::MultiLineString(MultiLineString(
                parts.clone().flat_map(rings).map(ring).collect(),
            )),
            kind::POLYGON => match parts.clone().next() {
                Some(p) => Geometry::Polygon(polygon(p)),
                None => Geometry::Polygon(Polygon::new(LineString(vec![]), vec![])),
            },
            kind::MULTIPOLYGON => {
                Geometry::MultiPolygon(MultiPolygon(parts.map(polygon).collect()))
            }
            kind::COLLECTION => self.collection(row)?.clone(),
            _ => return None,
        })
    }

    /// Coordinates held (a rough measure of size).
    pub fn coordinate_count(&self) -> usize {
        self.xy.len() / 2
    }

    /// Bytes held by the buffers.
    pub fn heap_bytes(&self) -> usize {
        self.kinds.len()
            + 4 * (self.parts.len() + self.rings.len() + self.coords.len())
            + 8 * self.xy.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::{line_string, point, polygon};

    #[test]
    fn every_type_round_trips() {
        let poly = polygon![(x: 0., y: 0.), (x: 1., y: 0.), (x: 1., y: 1.), (x: 0., y: 0.)];
        let holed = Polygon::new(
            line_string![(x: 0., y: 0.), (x: 4., y: 0.), (x: 4., y: 4.), (x: 0., y: 0.)],
            vec![line_string![(x: 1., y: 1.), (x: 2., y: 1.), (x: 2., y: 2.), (x: 1., y: 1.)]],
        );
        let line = line_string![(x: 5., y: 5.), (x: 6., y: 7.)];
        let all: Vec<Geometry<f64>> = vec![
            Geometry::Point(point!(x: 1.5, y: -2.5)),
            Geometry::LineString(line.clone()),
            Geometry::Polygon(holed.clone()),
            Geometry::MultiPoint(MultiPoint(vec![point!(x: 1., y: 2.), point!(x: 3., y: 4.)])),
            Geometry::MultiLineString(MultiLineString(vec![line.clone(), line.clone()])),
            Geometry::MultiPolygon(MultiPolygon(vec![poly.clone(), holed])),
            Geometry::GeometryCollection(geo::GeometryCollection(vec![Geometry::Polygon(poly)])),
            Geometry::LineString(LineString(vec![])),
            Geometry::MultiPolygon(MultiPolygon(vec![])),
        ];
        let mut b = GeometryBuilder::default();
        for g in &all {
            b.push(g).unwrap();
        }
        b.push_none().unwrap();
        let geoms = b.finish();
        for (i, g) in all.iter().enumerate() {
            assert_eq!(geoms.get(i).as_ref(), Some(g), "row {i}");
        }
        assert_eq!(geoms.get(all.len()), None);
        assert_eq!(geoms.bbox(2), Some([0., 0., 4., 4.]));
        assert_eq!(geoms.bbox(all.len()), None);
        // Copying rows keeps them.
        let mut c = GeometryBuilder::default();
        c.extend_from(&geoms, [6, 5, 0]).unwrap();
        let c = c.finish();
        assert_eq!(c.get(0).as_ref(), Some(&all[6]));
        assert_eq!(c.get(1).as_ref(), Some(&all[5]));
        assert_eq!(c.get(2).as_ref(), Some(&all[0]));
    }

    #[test]
    fn an_extent_is_the_least_and_greatest_of_each_axis_nan_passed_over() {
        // Every length up to past two chunks of lanes, values from a
        // linear congruential sequence, some NaN; against `f64::min` and
        // `f64::max` folded from the first point.
        let mut state = 12_345_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            match state >> 60 {
                0 => f64::NAN,
                _ => (state >> 11) as f64 / (1u64 << 53) as f64 * 360.0 - 180.0,
            }
        };
        for points in 0..20 {
            let xy: Vec<f64> = (0..2 * points).map(|_| next()).collect();
            let folded = xy.split_first_chunk::<2>().map(|(&[x, y], rest)| {
                rest.chunks_exact(2).fold([x, y, x, y], |[a, b, c, d], p| {
                    [a.min(p[0]), b.min(p[1]), c.max(p[0]), d.max(p[1])]
                })
            });
            let same = |a: [f64; 4], b: [f64; 4]| {
                (a.iter().zip(&b)).all(|(u, v)| u == v || (u.is_nan() && v.is_nan()))
            };
            match (extent_of(&xy), folded) {
                (Some(a), Some(b)) => assert!(same(a, b), "{points} points: {a:?} {b:?}"),
                (a, b) => assert_eq!(a, b, "{points} points"),
            }
        }
        // An axis of NaN alone is NaN.
        let e = extent_of(&[f64::NAN, 1.0, f64::NAN, -2.0]).unwrap();
        assert!(e[0].is_nan() && e[2].is_nan());
        assert_eq!([e[1], e[3]], [-2.0, 1.0]);
    }

    /// The union of the rows' boxes, row by row.
    fn rows_united(g: &Geometries) -> Option<[f64; 4]> {
        (0..g.len())
            .filter_map(|r| g.bbox(r))
            .reduce(crate::feature::union_bbox)
    }

    #[test]
    fn the_box_of_all_rows_is_the_union_of_their_boxes() {
        let rows = [
            Geometry::LineString(LineString(vec![])),
            Geometry::LineString(line_string![(x: 5., y: -5.), (x: 6., y: 7.)]),
            Geometry::Point(point!(x: -80.25, y: 35.5)),
            Geometry::Polygon(polygon![(x: 0., y: 0.), (x: 9., y: 0.), (x: 9., y: 1.)]),
        ];
        let mut b = GeometryBuilder::default();
        b.push_none().unwrap();
        for g in &rows {
            b.push(g).unwrap();
        }
        let g = b.finish();
        assert_eq!(g.bbox_of_all(), Some([-80.25, -5., 9., 35.5]));
        assert_eq!(g.bbox_of_all(), rows_united(&g));
        // A collection's box is its members'.
        let far = Geometry::GeometryCollection(geo::GeometryCollection(vec![Geometry::Point(
            point!(x: 100., y: -60.),
        )]));
        let mut b = GeometryBuilder::default();
        b.extend_from(&g, 0..g.len()).unwrap();
        b.push(&far).unwrap();
        let g = b.finish();
        assert_eq!(g.bbox_of_all(), Some([-80.25, -60., 100., 35.5]));
        assert_eq!(g.bbox_of_all(), rows_united(&g));
        assert_eq!(Geometries::default().bbox_of_all(), None);
        let mut none = GeometryBuilder::default();
        none.push_none().unwrap();
        assert_eq!(none.finish().bbox_of_all(), None);
    }

    #[test]
    fn geometries_joined_from_measured_shares_know_the_box_of_all() {
        let line = |a: f64, b: f64| Geometry::LineString(line_string![(x: a, y: b), (x: b, y: a)]);
        let share = |rows: &[Geometry<f64>]| {
            let mut b = GeometryBuilder::default();
            for g in rows {
                b.push(g).unwrap();
            }
            b.measure_extent();
            b
        };
        let first = share(&[line(1., 2.), line(f64::NAN, 3.)]);
        let second = share(&[line(-4., 0.5), line(7., f64::NAN)]).finish();
        let empty = share(&[]).finish();
        let mut joined = first.clone();
        joined.append_all(&empty).unwrap();
        joined.append_all(&second).unwrap();
        let joined = joined.finish();
        let known = *joined.extent.get().expect("known without a pass");
        assert_eq!(known, Some([-4., -4., 7., 7.]));
        assert_eq!(known, extent_of(&joined.xy), "what one pass measures");
        assert_eq!(known, rows_united(&joined));
        // Not known: a share never measured, a row dropped after its
        // measure, a collection among the rows.
        let mut unmeasured = first.clone();
        unmeasured.push(&line(9., 9.)).unwrap();
        unmeasured.append_all(&second).unwrap();
        assert_eq!(unmeasured.finish().extent.get(), None);
        let mut dropped = first.clone();
        dropped.pop_row();
        assert_eq!(dropped.clone().finish().extent.get(), None);
        dropped.measure_extent();
        assert_eq!(dropped.finish().extent.get(), Some(&Some([1., 1., 2., 2.])));
        let mut with_collection = first;
        let gc = Geometry::GeometryCollection(geo::GeometryCollection(vec![line(50., 60.)]));
        with_collection.push(&gc).unwrap();
        with_collection.measure_extent();
        let with_collection = with_collection.finish();
        assert_eq!(with_collection.extent.get(), None);
        assert_eq!(with_collection.bbox_of_all(), Some([1., 1., 60., 60.]));
    }

    #[test]
    fn pop_row_drops_the_last_row_only() {
        let line = Geometry::LineString(line_string![(x: 5., y: 5.), (x: 6., y: 7.)]);
        let gc = Geometry::GeometryCollection(geo::GeometryCollection(vec![line.clone()]));
        let mut b = GeometryBuilder::default();
        b.push(&line).unwrap();
        b.push(&gc).unwrap();
        b.pop_row();
        b.push(&Geometry::Point(point!(x: 1., y: 2.))).unwrap();
        b.pop_row();
        b.push(&gc).unwrap();
        let g = b.finish();
        assert_eq!(g.len(), 2);
        assert_eq!(g.get(0), Some(line));
        assert_eq!(g.get(1), Some(gc));
        assert_eq!(g.coordinate_count(), 2);
        let mut empty = GeometryBuilder::default();
        empty.pop_row();
        assert_eq!(empty.rows(), 0);
    }

    #[test]
    fn a_recycled_builder_is_empty_keeps_its_memory_and_builds_as_a_new_one() {
        let square = Geometry::Polygon(
            polygon![(x: 0., y: 0.), (x: 1., y: 0.), (x: 1., y: 1.), (x: 0., y: 0.)],
        );
        let mut b = GeometryBuilder::default();
        for _ in 0..1000 {
            b.push(&square).unwrap();
        }
        let first = b.finish();
        let xy = first.xy.as_ptr();
        let mut again = first.recycle();
        assert_eq!(again.rows(), 0);
        assert!(again.xy.capacity() >= 8000);
        again.push(&square).unwrap();
        assert_eq!(again.xy.as_ptr(), xy, "the same memory");
        let line = Geometry::LineString(line_string![(x: 5., y: 5.), (x: 6., y: 7.)]);
        again.push(&line).unwrap();
        let again = again.finish();
        assert_eq!(again.len(), 2);
        assert_eq!(again.get(0), Some(square.clone()));
        assert_eq!(again.get(1), Some(line));
        // Buffers a clone shares stay the clone's: the builder starts anew.
        let shared = again.clone();
        let fresh = again.recycle();
        assert_eq!(fresh.rows(), 0);
        assert_eq!(shared.get(0), Some(square));
    }
}
