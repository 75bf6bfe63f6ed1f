//! The dissolve's reading of one polygon row's rings: the region GEOS's
//! `MakeValid` (its default "linework" method) gives it, so that a basin is
//! `union(make_valid(catchments))` whatever the catchments' defects.
//!
//! The rule (docs/reliability.md): a row's region is the set of points
//! inside an odd number of its rings (all rings of all parts, whatever their
//! role and winding), after repeated points are dropped and every ring is
//! closed. For a valid polygon or multipolygon that is its region; for an
//! invalid one it is what `MakeValid` builds from the noded linework (a
//! self-crossing ring's lobes are all area, a hole outside its shell is an
//! area, a part inside another part cuts a hole in it, spikes and zero-area
//! parts cover nothing).
//!
//! Most rows are read without any overlay: when no two edges of the row's
//! rings meet except consecutive edges at their shared vertex (a sweep over
//! the edges sorted by x, near-linear for catchment outlines), each ring is
//! counted counter-clockwise when it lies inside an even number of the
//! row's other rings, else clockwise, which for a valid polygon is exterior
//! counter-clockwise and holes clockwise, as before. Rings that only touch
//! at a vertex they share, without crossing there, are read the same way:
//! the parts of a raster-derived catchment that meet corner to corner
//! (every multipolygon row of the real samples, one catchment in sixteen),
//! or a hole that touches its shell. Only a row whose edges cross, overlap,
//! touch elsewhere than at a shared vertex, or cross at one, is overlaid
//! (geo's even-odd overlay) and its result's vertices taken back to the
//! row's own vertices they round from, so that its shared edges still
//! cancel against its neighbours'.

use super::edge_counts::{vertex, Vertex};
use super::snap::region_of;
use geo::kernels::{Kernel, Orientation, RobustKernel};
use geo::{Coord, MultiPolygon};
use i_overlay::core::fill_rule::FillRule;

/// How to count a row's rings, from [`RingCheck::read`].
pub(super) enum Reading {
    /// Count ring `r` (the row's rings in order, over all parts)
    /// counter-clockwise when `exterior[r]`, else clockwise; rings of fewer
    /// than three distinct points are left out (they cover nothing).
    AsTheyAre { exterior: Vec<bool> },
    /// Count these valid polygons instead of the row's rings.
    Repaired(MultiPolygon<f64>),
}

/// One edge of a row, for the sweep: its box (computed once: the sort and
/// the sweep compare it), its ring and the index of its first point in the
/// row's points.
#[derive(Clone, Copy)]
struct Edge {
    min_x: f64,
    max_x: f64,
    min_y: f64,
    max_y: f64,
    ring: u32,
    start: u32,
}

/// The checks' buffers, kept from row to row so that reading a row
/// allocates nothing once they have grown. Owned by one dissolver.
#[derive(Default)]
pub(super) struct RingCheck {
    /// Every ring's distinct vertices in order, without the closing one.
    points: Vec<Coord<f64>>,
    /// Ring `r`'s points are `points[starts[r]..starts[r + 1]]`.
    starts: Vec<usize>,
    edges: Vec<Edge>,
    /// The vertices where two edges touch, sorted by [`key`], once each.
    touches: Vec<Coord<f64>>,
    /// Each pass of a ring through a touch: the touch's index in
    /// `touches`, the ring's points before and after it.
    passes: Vec<(usize, Coord<f64>, Coord<f64>)>,
}

impl RingCheck {
    /// Reads the rings `rings` (interleaved x, y; closed or not) of one
    /// polygon or multipolygon row.
    pub fn read<'a>(&mut self, rings: impl Iterator<Item = &'a [f64]>) -> Reading {
        self.points.clear();
        self.starts.clear();
        self.starts.push(0);
        for xy in rings {
            self.push_ring(xy);
        }
        let count = self.starts.len() - 1;
        if self.edges_meet() {
            return Reading::Repaired(self.even_odd_region());
        }
        let exterior = match count {
            1 => Some(vec![true]),
            _ => (0..count)
                .map(|r| self.depth(r).map(|d| d % 2 == 0))
                .collect(),
        };
        match exterior {
            Some(exterior) => Reading::AsTheyAre { exterior },
            // A ring whose every vertex touches another: no point of it
            // tells whether it lies inside them.
            None => Reading::Repaired(self.even_odd_region()),
        }
    }

    /// Ring `r`'s distinct vertices (none when it has fewer than three).
    fn ring(&self, r: usize) -> &[Coord<f64>] {
        &self.points[self.starts[r]..self.starts[r + 1]]
    }

    /// Appends the ring `xy` without repeated points and its closing point;
    /// empty when fewer than three distinct points remain.
    fn push_ring(&mut self, xy: &[f64]) {
        let start = self.points.len();
        for p in xy.chunks_exact(2) {
            let c = Coord { x: p[0], y: p[1] };
            if self.points.len() == start || self.points.last() != Some(&c) {
                self.points.push(c);
            }
        }
        while self.points.len() > start + 1 && self.points.last() == self.points.get(start) {
            self.points.pop();
        }
        if self.points.len() < start + 3 {
            self.points.truncate(start);
        }
        self.starts.push(self.points.len());
    }

    /// Whether any two edges of the rings meet other than consecutive edges
    /// of a ring at their shared vertex, or edges that touch only at a
    /// vertex both have where their rings do not cross ([`Self::touches`]):
    /// a crossing, an overlap, a touch elsewhere, a spike (consecutive
    /// edges doubling back).
    fn edges_meet(&mut self) -> bool {
        let count = self.starts.len() - 1;
        self.edges.clear();
        self.touches.clear();
        for r in 0..count {
            let (first, end) = (self.starts[r], self.starts[r + 1]);
            let ring = &self.points[first..end];
            let n = ring.len();
            let at = |i: usize| ring[if i < n { i } else { i - n }];
            for (i, &a) in ring.iter().enumerate() {
                let (b, c) = (at(i + 1), at(i + 2));
                if doubles_back(a, b, c) {
                    return true;
                }
                self.edges.push(Edge {
                    min_x: a.x.min(b.x),
                    max_x: a.x.max(b.x),
                    min_y: a.y.min(b.y),
                    max_y: a.y.max(b.y),
                    ring: r as u32,
                    start: (first + i) as u32,
                });
            }
        }
        self.edges
            .sort_unstable_by(|e, f| e.min_x.total_cmp(&f.min_x));
        let edges = &self.edges;
        for (i, e) in edges.iter().enumerate() {
            for f in edges[i + 1..].iter().take_while(|f| f.min_x <= e.max_x) {
                let apart_in_y = e.max_y < f.min_y || f.max_y < e.min_y;
                if !apart_in_y && !self.consecutive(e, f) {
                    let ([a, b], [c, d]) = (self.ends(e), self.ends(f));
                    if segments_meet(a, b, c, d) {
                        match only_shared_end(a, b, c, d) {
                            Some(v) => self.touches.push(v),
                            None => return true,
                        }
                    }
                }
            }
        }
        !self.touches.is_empty() && self.rings_cross_at_touches()
    }

    /// Whether the rings cross at a vertex where their edges touch: two
    /// passes through it (of two rings, or of one ring twice) of which one
    /// has its points before and after on either side of the other. Sorts
    /// `touches` and gathers the passes.
    fn rings_cross_at_touches(&mut self) -> bool {
        self.touches.sort_unstable_by_key(key);
        self.touches.dedup_by_key(|t| key(t));
        self.passes.clear();
        for r in 0..self.starts.len() - 1 {
            // The field, not `self.ring`: `passes` is pushed to meanwhile.
            let ring = &self.points[self.starts[r]..self.starts[r + 1]];
            let n = ring.len();
            for (i, p) in ring.iter().enumerate() {
                if let Ok(t) = self.touches.binary_search_by_key(&key(p), key) {
                    self.passes
                        .push((t, ring[(i + n - 1) % n], ring[(i + 1) % n]));
                }
            }
        }
        self.passes.sort_unstable_by_key(|pass| pass.0);
        (self.passes.chunk_by(|p, q| p.0 == q.0)).any(|at| {
            let v = self.touches[at[0].0];
            at.iter().enumerate().any(|(i, &(_, a, b))| {
                at[i + 1..]
                    .iter()
                    .any(|&(_, c, d)| passes_cross(v, [a, b], [c, d]))
            })
        })
    }

    /// Whether `p` is a vertex where edges touch ([`Self::touches`]).
    fn touches_at(&self, p: &Coord<f64>) -> bool {
        self.touches.binary_search_by_key(&key(p), key).is_ok()
    }

    /// The two points of edge `e`.
    fn ends(&self, e: &Edge) -> [Coord<f64>; 2] {
        let ring = e.ring as usize;
        let start = e.start as usize;
        let next = match start + 1 {
            end if end == self.starts[ring + 1] => self.starts[ring],
            next => next,
        };
        [self.points[start], self.points[next]]
    }

    /// Whether `e` and `f` follow one another in their ring.
    fn consecutive(&self, e: &Edge, f: &Edge) -> bool {
        if e.ring != f.ring {
            return false;
        }
        let ring = e.ring as usize;
        let n = self.starts[ring + 1] - self.starts[ring];
        // Next to each other, or the last edge and the first.
        let apart = e.start.abs_diff(f.start) as usize;
        apart == 1 || apart == n - 1
    }

    /// How many of the row's other rings contain ring `r` (whose edges meet
    /// none of theirs but at the vertices where they touch, so any other of
    /// its vertices is inside or outside each); `None` when every vertex of
    /// `r` is one where edges touch.
    fn depth(&self, r: usize) -> Option<usize> {
        let Some(&p) = self.ring(r).iter().find(|p| !self.touches_at(p)) else {
            return self.ring(r).is_empty().then_some(0);
        };
        let inside = |s: usize| s != r && winding_number(self.ring(s), p) != 0;
        Some((0..self.starts.len() - 1).filter(|&s| inside(s)).count())
    }

    /// The points inside an odd number of the rings, by geo's overlay
    /// engine, each vertex of the result that rounds from one of the rings'
    /// taken back to it bit for bit ([`region_of`]).
    fn even_odd_region(&self) -> MultiPolygon<f64> {
        let rings: Vec<&[Coord<f64>]> = (0..self.starts.len() - 1)
            .map(|r| self.ring(r))
            .filter(|ring| !ring.is_empty())
            .collect();
        MultiPolygon(region_of(&rings, FillRule::EvenOdd))
    }
}

fn orient(p: Coord<f64>, q: Coord<f64>, r: Coord<f64>) -> Orientation {
    RobustKernel::orient2d(p, q, r)
}

/// Whether the edges `a -> b -> c` double back on themselves (a spike).
fn doubles_back(a: Coord<f64>, b: Coord<f64>, c: Coord<f64>) -> bool {
    // The cheap test first: most corners are not acute.
    (a.x - b.x) * (c.x - b.x) + (a.y - b.y) * (c.y - b.y) > 0.0
        && orient(a, b, c) == Orientation::Collinear
}

/// Whether `r`, collinear with `p` and `q`, lies on the closed segment
/// `p q` (within its box).
fn within(p: Coord<f64>, q: Coord<f64>, r: Coord<f64>) -> bool {
    r.x >= p.x.min(q.x) && r.x <= p.x.max(q.x) && r.y >= p.y.min(q.y) && r.y <= p.y.max(q.y)
}

/// Whether `r` lies on the closed segment `p q`.
fn on_segment(p: Coord<f64>, q: Coord<f64>, r: Coord<f64>) -> bool {
    orient(p, q, r) == Orientation::Collinear && within(p, q, r)
}

/// The end the segments `a b` and `c d` (which meet) share, when it is the
/// only point they have in common: two segments with an end in common and
/// the other ends apart meet nowhere else unless they overlap.
fn only_shared_end(
    a: Coord<f64>,
    b: Coord<f64>,
    c: Coord<f64>,
    d: Coord<f64>,
) -> Option<Coord<f64>> {
    // The shared end, and each segment's other end.
    let (v, e, f) = if a == c {
        (a, b, d)
    } else if a == d {
        (a, b, c)
    } else if b == c {
        (b, a, d)
    } else if b == d {
        (b, a, c)
    } else {
        return None;
    };
    let overlap = e == f || on_segment(v, e, f) || on_segment(v, f, e);
    (!overlap).then_some(v)
}

/// Whether two passes of rings through the vertex `v`, from `a` to `b`
/// and from `c` to `d` (each point other than `v`), cross there: `c` and
/// `d` lie on either side of the path `a v b`, or one lies on it (an edge
/// along an edge).
fn passes_cross(v: Coord<f64>, [a, b]: [Coord<f64>; 2], [c, d]: [Coord<f64>; 2]) -> bool {
    let on_ray = |towards: Coord<f64>, p: Coord<f64>| {
        orient(v, towards, p) == Orientation::Collinear
            && (towards.x - v.x) * (p.x - v.x) + (towards.y - v.y) * (p.y - v.y) > 0.0
    };
    if [c, d].iter().any(|&p| on_ray(a, p) || on_ray(b, p)) {
        return true;
    }
    between(v, a, b, c) != between(v, a, b, d)
}

/// Whether `p` lies strictly inside the angle swept counter-clockwise about
/// `v` from the ray towards `from` to the ray towards `to`.
fn between(v: Coord<f64>, from: Coord<f64>, to: Coord<f64>, p: Coord<f64>) -> bool {
    use Orientation::{Clockwise as Cw, Collinear, CounterClockwise as Ccw};
    let (left_of_from, left_of_to) = (orient(v, from, p), orient(v, to, p));
    match orient(v, from, to) {
        // Less than a half turn: left of the first ray, right of the second.
        Ccw => left_of_from == Ccw && left_of_to == Cw,
        // More than a half turn: not in the rest, which is less.
        Cw => left_of_from == Ccw || left_of_to == Cw,
        // A straight pass (a spike is refused before): the half-plane left of it.
        Collinear => left_of_from == Ccw,
    }
}

/// Whether the closed segments `a b` and `c d` have a point in common.
fn segments_meet(a: Coord<f64>, b: Coord<f64>, c: Coord<f64>, d: Coord<f64>) -> bool {
    use Orientation::{Clockwise as Cw, Collinear, CounterClockwise as Ccw};
    let opposite = |s: Orientation, t: Orientation| matches!((s, t), (Cw, Ccw) | (Ccw, Cw));
    let (o1, o2) = (orient(a, b, c), orient(a, b, d));
    let (o3, o4) = (orient(c, d, a), orient(c, d, b));
    (opposite(o1, o2) && opposite(o3, o4))
        || (o1 == Collinear && within(a, b, c))
        || (o2 == Collinear && within(a, b, d))
        || (o3 == Collinear && within(c, d, a))
        || (o4 == Collinear && within(c, d, b))
}

/// A point's sort key: its [`Vertex`] (`-0.0` read as `0.0`, as `==`
/// reads it).
fn key(p: &Coord<f64>) -> Vertex {
    vertex(p.x, p.y)
}

/// The winding number of the closed `ring` (without its closing point)
/// around `p`, which is not on it: zero outside.
fn winding_number(ring: &[Coord<f64>], p: Coord<f64>) -> i32 {
    let n = ring.len();
    let mut winding = 0;
    for i in 0..n {
        let (a, b) = (ring[i], ring[(i + 1) % n]);
        if a.y <= p.y {
            if b.y > p.y && orient(a, b, p) == Orientation::CounterClockwise {
                winding += 1;
            }
        } else if b.y <= p.y && orient(a, b, p) == Orientation::Clockwise {
            winding -= 1;
        }
    }
    winding
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::Area;

    fn read(rings: &[&[(f64, f64)]]) -> Reading {
        let flat: Vec<Vec<f64>> = (rings.iter())
            .map(|r| r.iter().flat_map(|&(x, y)| [x, y]).collect())
            .collect();
        RingCheck::default().read(flat.iter().map(Vec::as_slice))
    }

    fn area(reading: Reading) -> f64 {
        match reading {
            Reading::Repaired(region) => region.unsigned_area(),
            Reading::AsTheyAre { .. } => panic!("a repair expected"),
        }
    }

    const SQUARE: &[(f64, f64)] = &[(0.0, 0.0), (4.0, 0.0), (4.0, 4.0), (0.0, 4.0), (0.0, 0.0)];

    #[test]
    fn valid_rings_are_counted_as_they_are_by_their_depth() {
        let hole: &[(f64, f64)] = &[(1.0, 1.0), (1.0, 2.0), (2.0, 2.0), (2.0, 1.0)];
        let island: &[(f64, f64)] = &[(1.2, 1.2), (1.8, 1.2), (1.8, 1.8), (1.2, 1.8)];
        let far: &[(f64, f64)] = &[(9.0, 9.0), (8.0, 9.0), (8.0, 8.0), (9.0, 8.0)];
        match read(&[SQUARE, hole, island, far]) {
            Reading::AsTheyAre { exterior } => assert_eq!(exterior, [true, false, true, true]),
            Reading::Repaired(_) => panic!("valid rings repaired"),
        }
    }

    #[test]
    fn a_hole_outside_its_shell_counts_as_an_exterior() {
        let outside: &[(f64, f64)] = &[(5.0, 0.0), (6.0, 0.0), (6.0, 1.0), (5.0, 1.0)];
        match read(&[SQUARE, outside]) {
            Reading::AsTheyAre { exterior } => assert_eq!(exterior, [true, true]),
            Reading::Repaired(_) => panic!("disjoint rings repaired"),
        }
    }

    #[test]
    fn a_bow_tie_is_both_its_lobes() {
        // Two vertices of the square swapped: lobes of area 4 each.
        let bow_tie: &[(f64, f64)] = &[(0.0, 0.0), (4.0, 0.0), (0.0, 4.0), (4.0, 4.0)];
        assert_eq!(area(read(&[bow_tie])), 8.0);
    }

    #[test]
    fn spikes_repeated_points_and_zero_area_rings_cover_nothing_more() {
        let spiked: &[(f64, f64)] = &[
            (0.0, 0.0),
            (4.0, 0.0),
            (4.0, 0.0),
            (4.0, 4.0),
            (6.0, 6.0),
            (4.0, 4.0),
            (0.0, 4.0),
        ];
        assert_eq!(area(read(&[spiked])), 16.0);
        let flat: &[(f64, f64)] = &[(0.0, 0.0), (1.0, 1.0), (2.0, 2.0), (0.0, 0.0)];
        assert_eq!(area(read(&[flat])), 0.0);
    }

    #[test]
    fn overlapping_parts_leave_what_only_one_covers() {
        let shifted: &[(f64, f64)] = &[(2.0, 0.0), (6.0, 0.0), (6.0, 4.0), (2.0, 4.0)];
        assert_eq!(area(read(&[SQUARE, shifted])), 16.0);
    }

    fn as_they_are(reading: Reading) -> Vec<bool> {
        match reading {
            Reading::AsTheyAre { exterior } => exterior,
            Reading::Repaired(region) => panic!("read as they are expected, got {region:?}"),
        }
    }

    #[test]
    fn rings_that_touch_at_a_shared_vertex_are_read_as_they_are() {
        // Two parts corner to corner, as raster-derived catchments' parts
        // meet; a hole touching its shell at a corner; a ring that touches
        // itself (a notch closed at its mouth: an inverted hole).
        let corner: &[(f64, f64)] = &[(4.0, 4.0), (8.0, 4.0), (8.0, 8.0), (4.0, 8.0)];
        assert_eq!(as_they_are(read(&[SQUARE, corner])), [true, true]);
        let hole: &[(f64, f64)] = &[(4.0, 4.0), (2.0, 3.0), (3.0, 2.0)];
        assert_eq!(as_they_are(read(&[SQUARE, hole])), [true, false]);
        let notched: &[(f64, f64)] = &[
            (0.0, 0.0),
            (4.0, 0.0),
            (4.0, 4.0),
            (2.0, 4.0),
            (3.0, 2.0),
            (1.0, 2.0),
            (2.0, 4.0),
            (0.0, 4.0),
        ];
        assert_eq!(as_they_are(read(&[notched])), [true]);
    }

    #[test]
    fn rings_that_cross_at_a_shared_vertex_or_touch_an_edge_are_repaired() {
        // B enters the triangle A through A's apex and leaves through A's
        // corner: the triangle between them (area 1) is inside both, so it
        // is left out of the even-odd region: 4 + 7.5 - 2 * 1.
        let a: &[(f64, f64)] = &[(0.0, 0.0), (4.0, 0.0), (2.0, 2.0)];
        let b: &[(f64, f64)] = &[(0.0, 3.0), (2.0, 2.0), (2.0, 1.0), (4.0, 0.0), (5.0, 3.0)];
        assert_eq!(area(read(&[a, b])), 9.5);
        // A corner of one ring on an edge of the other, not a vertex of it.
        let beside: &[(f64, f64)] = &[(4.0, 2.0), (6.0, 1.0), (6.0, 3.0)];
        assert_eq!(area(read(&[SQUARE, beside])), 18.0);
    }

    #[test]
    fn a_ring_that_touches_at_every_vertex_is_repaired() {
        // A diamond inside the square, its corners on the square's edge
        // midpoints (vertices of the square too): no vertex of the diamond
        // says whether it lies inside. Even-odd: four corner triangles.
        let square: &[(f64, f64)] = &[
            (0.0, 0.0),
            (2.0, 0.0),
            (4.0, 0.0),
            (4.0, 2.0),
            (4.0, 4.0),
            (2.0, 4.0),
            (0.0, 4.0),
            (0.0, 2.0),
        ];
        let diamond: &[(f64, f64)] = &[(2.0, 0.0), (4.0, 2.0), (2.0, 4.0), (0.0, 2.0)];
        assert_eq!(area(read(&[square, diamond])), 8.0);
    }

    #[test]
    fn repaired_vertices_are_the_rings_own() {
        let bow_tie: &[(f64, f64)] = &[(0.1, 0.3), (4.7, 0.1), (0.3, 4.1), (4.9, 4.3)];
        let Reading::Repaired(region) = read(&[bow_tie]) else {
            panic!("a repair expected");
        };
        let corners: Vec<Coord<f64>> = bow_tie.iter().map(|&c| c.into()).collect();
        let own = (region.0.iter())
            .flat_map(|p| p.exterior().0.iter())
            .filter(|c| corners.contains(c))
            .count();
        // Every corner, in the lobes' closed rings (each ring's first
        // corner twice), and the crossing point, which is new.
        assert!(own >= 4, "{region:?}");
    }
}
