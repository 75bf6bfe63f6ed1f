//! The region closed rings cover, by `geo`'s overlay engine (`i_overlay`)
//! on its integer grid, with the input's own vertices put back.
//!
//! The overlay rounds every coordinate to a grid over its input's extent
//! (2^30 steps or more across), so a vertex it keeps would come out a grid
//! step or so from where it was. Each output vertex that is the grid point
//! of an input vertex becomes that input vertex again, bit for bit, so that
//! a basin's outline is the catchments' own (what GEOS, which keeps input
//! vertices, gives) and a repaired ring's shared edges still match its
//! neighbours'. A vertex the overlay made (where edges cross) or moved
//! goes to the input vertex nearest it within a few grid steps, if any.
//!
//! The overlay is called on its grid directly (not through `geo`'s float
//! wrapper, which would round the output back to floats first): the output
//! points are then looked up by their grid point in a hash table of the
//! input's, instead of being searched for among the input sorted.

use geo::{Coord, LineString, Polygon};
use i_overlay::core::fill_rule::FillRule;
use i_overlay::core::overlay::{ContourDirection, IntOverlayOptions, Overlay, ShapeType};
use i_overlay::core::overlay_rule::OverlayRule;
use i_overlay::core::solver::Solver;
use i_overlay::i_float::adapter::FloatPointAdapter;
use i_overlay::i_float::float::rect::FloatRect;
use i_overlay::i_float::int::point::IntPoint;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The region of the plane that `rings` (each closed or not: the overlay
/// closes it) cover under `fill_rule`, as valid polygons (OGC: exteriors
/// counter-clockwise, holes clockwise), none when it is empty. Every vertex
/// is an input vertex, bit for bit, or a point where edges cross.
pub(super) fn region_of(rings: &[&[Coord<f64>]], fill_rule: FillRule) -> Vec<Polygon<f64>> {
    let Some(input) = InputVertices::new(rings) else {
        return Vec::new();
    };
    let points: usize = rings.iter().map(|r| r.len()).sum();
    let mut overlay = Overlay::new_custom(points, OGC, Solver::default());
    for ring in rings {
        let open = match ring {
            [first, .., last] if first == last => &ring[..ring.len() - 1],
            _ => ring,
        };
        overlay.add_path_iter(
            open.iter().map(|c| input.grid.float_to_int(&[c.x, c.y])),
            ShapeType::Subject,
        );
    }
    let shapes = overlay.overlay(OverlayRule::Subject, fill_rule);
    (shapes.into_iter())
        .map(|shape| {
            let mut rings = shape.iter().map(|contour| input.ring(contour));
            let exterior = rings.next().unwrap_or_else(LineString::empty);
            Polygon::new(exterior, rings.collect())
        })
        .collect()
}

/// `geo`'s options for an OGC-valid result (`OverlayOptions::ogc`), on the
/// grid: collinear vertices dropped, exteriors counter-clockwise.
const OGC: IntOverlayOptions = IntOverlayOptions {
    preserve_input_collinear: false,
    output_direction: ContourDirection::CounterClockwise,
    preserve_output_collinear: false,
    min_output_area: 0,
    ogc: true,
};

/// The input's grid and its vertices by the grid point each rounds to,
/// for putting the overlay's output back on them. Owns a copy of them.
struct InputVertices {
    grid: FloatPointAdapter<[f64; 2], f64>,
    /// Each grid point an input vertex rounds to, and that vertex (the one
    /// nearest the grid point when several round to it).
    by_point: HashMap<u64, Coord<f64>, BuildHasherDefault<GridPointHasher>>,
    /// How far the overlay may move a vertex: in the input's units, and in
    /// whole grid steps (a few steps either way).
    tolerance: f64,
    reach: i32,
}

impl InputVertices {
    /// The grid of `rings`' extent (the one `geo`'s wrapper would make) and
    /// their vertices on it; `None` when there are none.
    fn new(rings: &[&[Coord<f64>]]) -> Option<InputVertices> {
        let mut all = rings.iter().flat_map(|r| r.iter());
        let first = *all.next()?;
        let (mut lo, mut hi) = (first, first);
        for p in all.clone() {
            (lo.x, lo.y) = (lo.x.min(p.x), lo.y.min(p.y));
            (hi.x, hi.y) = (hi.x.max(p.x), hi.y.max(p.y));
        }
        let grid = FloatPointAdapter::new(FloatRect::new(lo.x, hi.x, lo.y, hi.y));
        let extent = (hi.x - lo.x).max(hi.y - lo.y);
        let tolerance = if extent.is_finite() {
            extent * 2f64.powi(-28)
        } else {
            0.0
        };
        let reach = (tolerance * grid.dir_scale).ceil().min(16.0) as i32;
        let mut input = InputVertices {
            grid,
            by_point: HashMap::default(),
            tolerance,
            reach,
        };
        let points: usize = rings.iter().map(|r| r.len()).sum();
        input.by_point.reserve(points);
        for &p in std::iter::once(&first).chain(all) {
            let at = input.grid.float_to_int(&[p.x, p.y]);
            let centre = input.centre(at);
            (input.by_point)
                .entry(key(at))
                .and_modify(|kept| {
                    if nearer(p, *kept, centre) {
                        *kept = p;
                    }
                })
                .or_insert(p);
        }
        Some(input)
    }

    /// The grid point `at` in the input's units.
    fn centre(&self, at: IntPoint) -> Coord<f64> {
        let [x, y] = self.grid.int_to_float(&at);
        Coord { x, y }
    }

    /// The input vertex that rounds to `at`; else the input vertex nearest
    /// `at` within the tolerance; else `at` itself, in the input's units.
    fn put_back(&self, at: IntPoint) -> Coord<f64> {
        if let Some(&p) = self.by_point.get(&key(at)) {
            return p;
        }
        let c = self.centre(at);
        let t = self.tolerance;
        let r = self.reach;
        let around = (-r..=r).flat_map(|dx| (-r..=r).map(move |dy| (dx, dy)));
        let near = around.filter_map(|(dx, dy)| {
            let q = IntPoint::new(at.x.checked_add(dx)?, at.y.checked_add(dy)?);
            self.by_point.get(&key(q)).copied()
        });
        near.filter(|p| (p.x - c.x).abs() <= t && (p.y - c.y).abs() <= t)
            .reduce(|best, p| if nearer(p, best, c) { p } else { best })
            .unwrap_or(c)
    }

    /// The output contour `contour` as a closed ring of input vertices
    /// ([`InputVertices::put_back`]); as the overlay gave it (in the
    /// input's units) when two consecutive vertices would go back to the
    /// same one.
    fn ring(&self, contour: &[IntPoint]) -> LineString<f64> {
        let mut back: Vec<Coord<f64>> = contour.iter().map(|&at| self.put_back(at)).collect();
        let n = back.len();
        back.dedup();
        if back.len() != n || (n > 1 && back[0] == back[n - 1]) {
            back = contour.iter().map(|&at| self.centre(at)).collect();
        }
        let mut ring = LineString(back);
        ring.close();
        ring
    }
}

/// Whether `p` is nearer `c` than `q` is (by distance, then by x and y,
/// so that the choice does not depend on the order the vertices come in).
fn nearer(p: Coord<f64>, q: Coord<f64>, c: Coord<f64>) -> bool {
    let distance = |p: Coord<f64>| (p.x - c.x).powi(2) + (p.y - c.y).powi(2);
    let order = |p: Coord<f64>| (distance(p), p.x, p.y);
    let (a, b) = (order(p), order(q));
    a.0.total_cmp(&b.0)
        .then(a.1.total_cmp(&b.1))
        .then(a.2.total_cmp(&b.2))
        .is_lt()
}

/// A grid point as one integer, for the hash table.
fn key(p: IntPoint) -> u64 {
    (u64::from(p.x as u32) << 32) | u64::from(p.y as u32)
}

/// A hasher for grid point keys: one multiplication spreads them (the
/// standard hasher's resistance to chosen keys is not needed for the
/// input's own coordinates, and costs several times more).
#[derive(Default)]
struct GridPointHasher(u64);

impl Hasher for GridPointHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        let h = (self.0 ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vertex_a_few_grid_steps_off_goes_back_and_others_stay() {
        let rings: [&[Coord<f64>]; 1] = [&[
            Coord { x: 0.1, y: 0.3 },
            Coord { x: 4.7, y: 0.1 },
            Coord { x: 0.3, y: 4.1 },
        ]];
        let input = InputVertices::new(&rings).expect("vertices");
        let image = input.grid.float_to_int(&[4.7, 0.1]);
        assert_eq!(input.put_back(image), Coord { x: 4.7, y: 0.1 });
        let moved = IntPoint::new(image.x - 2, image.y + 1);
        assert_eq!(input.put_back(moved), Coord { x: 4.7, y: 0.1 });
        let new = input.grid.float_to_int(&[2.0, 2.0]);
        assert_eq!(input.put_back(new), input.centre(new));
    }

    #[test]
    fn two_overlapping_squares_are_one_region_with_their_own_corners() {
        let square = |x: f64, y: f64| -> Vec<Coord<f64>> {
            [
                (x, y),
                (x + 1.0, y),
                (x + 1.0, y + 1.0),
                (x, y + 1.0),
                (x, y),
            ]
            .map(Coord::from)
            .to_vec()
        };
        let (a, b) = (square(0.1, 0.1), square(0.6, 0.35));
        let region = region_of(&[&a, &b], FillRule::Positive);
        assert_eq!(region.len(), 1);
        let outline = &region[0].exterior().0;
        // Six corners of the squares and the two crossings, closed.
        assert_eq!(outline.len(), 9);
        for corner in [a[0], a[1], a[3], b[1], b[2], b[3]] {
            assert!(outline.contains(&corner), "{corner:?} kept bit for bit");
        }
    }
}
