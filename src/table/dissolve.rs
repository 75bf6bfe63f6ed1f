//! The union of many polygons that share their edges, as catchments do: a
//! basin is the union of up to a million of them.
//!
//! Every ring is added as directed edges, exteriors counter-clockwise and
//! holes clockwise, each polygon read first as GEOS's `MakeValid` reads it
//! (`table::ring_repair`: a ring that crosses itself or a hole outside its
//! shell covers what GEOS says it does). An edge met once in each
//! direction is an edge two polygons share, and is cancelled. Cancelling a pair of opposite edges
//! leaves the winding number of every point unchanged, so what remains
//! bounds exactly the same region: the union, where the winding number is
//! positive. What remains is small (the outline, plus any edge that did not
//! match its neighbour vertex for vertex) and is handed to `geo`'s overlay,
//! which resolves it exactly. The edges of different row ranges are counted
//! on separate threads and merged, the merge cancelling again.

use super::edge_counts::{vertex, EdgeCounts, Vertex};
use super::edge_partitions::EdgePartitions;
use super::gallop::partition_point_near;
use super::geometry::{kind, signed_area, Geometries};
use super::ring_repair::{Reading, RingCheck};
use super::snap::region_of;
use crate::cancel::{Cancelled, Stop};
use geo::{Geometry, LineString, MultiPolygon, Polygon};
use i_overlay::core::fill_rule::FillRule;

/// Rows per unit of work: small enough that a unit's edge counts stay in
/// cache, large enough that most shared edges cancel within the unit.
const ROWS_PER_UNIT: usize = 1024;

/// At most this many groups of rings apart in x, whatever the number of
/// threads: a part of the basin overlaid alone fits the caches better than
/// with its neighbours, and many small groups share the threads evenly. A
/// fixed number, because geo's overlay snaps to a grid derived from each
/// group's extent: the groups, and so the output's low bits, must not
/// depend on the machine's cores or the `threads` option.
const GROUPS: usize = 256;

/// The union of the polygon and multipolygon rows `rows` of `geometries`
/// (other rows are ignored): one Polygon, a MultiPolygon, or `None` when
/// they cover nothing. Runs on up to `threads` threads (at least one);
/// `Cancelled` soon after `stop` is (between steps of [`STEP_ROWS`] rows and
/// between the overlays of parts apart).
pub fn dissolve(
    geometries: &Geometries,
    rows: &[usize],
    threads: usize,
    stop: &Stop,
) -> Result<Option<Geometry<f64>>, Cancelled> {
    let threads = threads.clamp(1, rows.len().div_ceil(ROWS_PER_UNIT).max(1));
    let per_thread = rows.len().div_ceil(threads);
    let counts = std::thread::scope(|s| {
        let handles: Vec<_> = rows
            .chunks(per_thread.max(1))
            .map(|share| {
                s.spawn(move || {
                    let mut d = Dissolver::default();
                    for step in share.chunks(STEP_ROWS) {
                        if stop.is_requested() {
                            break;
                        }
                        d.add_rows(geometries, step);
                    }
                    d
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("edge counting does not panic"))
            .reduce(Dissolver::merge)
    });
    stop.check()?;
    counts.unwrap_or_default().finish(threads, stop)
}

/// Rows counted between two looks at the stop: a few milliseconds of work.
const STEP_ROWS: usize = 16 * ROWS_PER_UNIT;

/// A union being built from polygons added in any number of steps, for
/// layers read a batch at a time: the directed edges not yet cancelled.
///
/// Rows are counted a unit at a time in `unit`, small enough to stay in
/// cache, where the edges the unit's polygons share cancel. What a unit
/// leaves (its outline, about a fifth) moves to `left`, spread over
/// partitions by hash, where the edges units share cancel a partition at a
/// time and only what is never cancelled stays. `unit` is kept, cleared,
/// from one unit to the next, so its memory is allocated and touched once.
/// Rings added whole (stored parts' rings) are kept in `whole` as they
/// are, for the overlay.
#[derive(Default)]
pub struct Dissolver {
    left: EdgePartitions,
    unit: EdgeCounts,
    check: RingCheck,
    whole: Vec<LineString<f64>>,
}

/// The tables a [`Dissolver`] counts in, empty again after each of its
/// steps: a unit's edge counts, the ring check's buffers, the table a list
/// of edges is cancelled in. Owned by a thread that lends them to many
/// dissolvers in turn ([`Dissolver::swap_scratch`]).
#[derive(Default)]
pub struct Scratch {
    unit: EdgeCounts,
    check: RingCheck,
    cancel: EdgeCounts,
}

/// Counts the rings of row `row` of `g` into `counts` when it is a polygon
/// or multipolygon, read by `check` as GEOS's `MakeValid` reads them
/// ([`RingCheck`]): each ring by its depth among the row's rings, or the
/// repaired region when its edges meet.
fn add_row(counts: &mut EdgeCounts, check: &mut RingCheck, g: &Geometries, row: usize) {
    if !matches!(g.kinds[row], kind::POLYGON | kind::MULTIPOLYGON) {
        return;
    }
    let rings = g.row_rings(row);
    match check.read(rings.clone().map(|ring| g.ring_xy(ring))) {
        Reading::AsTheyAre { exterior } => {
            for (ring, exterior) in rings.zip(exterior) {
                add_ring(counts, g.ring_xy(ring), exterior);
            }
        }
        Reading::Repaired(region) => {
            let flat =
                |r: &LineString<f64>| -> Vec<f64> { r.0.iter().flat_map(|c| [c.x, c.y]).collect() };
            for polygon in &region.0 {
                add_ring(counts, &flat(polygon.exterior()), true);
                for hole in polygon.interiors() {
                    add_ring(counts, &flat(hole), false);
                }
            }
        }
    }
}

/// Counts the closed or open ring `xy` (interleaved x, y) into `counts`,
/// counter-clockwise when `exterior`, else clockwise, whatever its own
/// winding.
fn add_ring(counts: &mut EdgeCounts, xy: &[f64], exterior: bool) {
    let n = xy.len() / 2;
    if n < 3 {
        return;
    }
    let forward = (signed_area(xy) > 0.0) == exterior;
    let point = |i: usize| vertex(xy[2 * (i % n)], xy[2 * (i % n) + 1]);
    for i in 0..n {
        let (p, q) = (point(i), point(i + 1));
        if p == q {
            continue;
        }
        if forward {
            counts.add(p, q, 1);
        } else {
            counts.add(q, p, 1);
        }
    }
}

impl Dissolver {
    /// Adds the polygon and multipolygon rows `rows` of `geometries` (other
    /// rows are ignored), a unit of rows at a time.
    pub fn add_rows(&mut self, geometries: &Geometries, rows: &[usize]) {
        for unit in rows.chunks(ROWS_PER_UNIT) {
            // Shared edges cancel as they come: about half are ever held.
            let edges: usize = unit.iter().map(|&r| geometries.row_xy(r).len() / 2).sum();
            self.unit.reserve(edges / 2);
            for &row in unit {
                add_row(&mut self.unit, &mut self.check, geometries, row);
            }
            self.left.take_from(&mut self.unit);
        }
    }

    /// Adds the line rows `rows` of `geometries` (each line, of a line or
    /// multiline row, a closed ring in the direction of its vertices; other
    /// rows are ignored): the [`Dissolver::rings`] of some of the polygons,
    /// stored and added back beside the others. Their edges are not
    /// counted: the rings go to the overlay whole, beside the rings the
    /// counted edges leave. Each point's winding number is the same as if
    /// their polygons had been counted, so the union is the same region;
    /// an edge such a ring shares with another (two parts that meet) is
    /// cancelled by the overlay instead, which costs less than counting
    /// every edge of rings that mostly reach the outline anyway.
    pub fn add_lines(&mut self, geometries: &Geometries, rows: &[usize]) {
        let g = geometries;
        for &row in rows {
            if !matches!(g.kinds[row], kind::LINESTRING | kind::MULTILINESTRING) {
                continue;
            }
            for ring in g.row_rings(row) {
                let xy = g.ring_xy(ring);
                if xy.len() >= 6 {
                    let ring = xy.chunks_exact(2).map(|p| (p[0], p[1]));
                    self.whole.push(LineString::from_iter(ring));
                }
            }
        }
    }

    /// Exchanges the tables this dissolver counts in with `scratch`'s: a
    /// thread that feeds many dissolvers in turn lends them its tables for
    /// each step and takes them back after, so that they are allocated and
    /// touched once, not once per dissolver. The tables are empty between
    /// steps; what is counted stays in the dissolver.
    pub fn swap_scratch(&mut self, scratch: &mut Scratch) {
        std::mem::swap(&mut self.unit, &mut scratch.unit);
        std::mem::swap(&mut self.check, &mut scratch.check);
        self.left.swap_table(&mut scratch.cancel);
    }

    /// Both counts in one.
    pub fn merge(mut self, other: Dissolver) -> Dissolver {
        self.left.append(other.left);
        self.whole.extend(other.whole);
        self
    }

    /// The union of everything added: one Polygon, a MultiPolygon, or
    /// `None` when it covers nothing (the region of positive winding number
    /// the remaining edges bound). Rings far apart (groups whose x extents
    /// do not overlap, at most [`GROUPS`]) are overlaid apart, the groups
    /// shared among up to `threads` threads; the result is the same bytes
    /// whatever `threads`. `Cancelled` once `stop` is, looked at between
    /// the steps (the rings, each group's overlay).
    pub fn finish(self, threads: usize, stop: &Stop) -> Result<Option<Geometry<f64>>, Cancelled> {
        let rings = self.rings();
        stop.check()?;
        let mut groups = apart_in_x(rings, GROUPS);
        let mut polygons = match groups.len() {
            1 => union_of_rings(groups.pop().expect("one group")),
            _ => union_of_groups(groups, threads, stop)?,
        };
        Ok(match polygons.len() {
            0 => None,
            1 => polygons.pop().map(Geometry::Polygon),
            _ => Some(Geometry::MultiPolygon(MultiPolygon(polygons))),
        })
    }

    /// The remaining edges joined into closed rings, each in the direction
    /// of its edges: counter-clockwise around what the polygons added cover
    /// (an outline), clockwise around what they leave uncovered inside it
    /// (a hole). Every vertex has as many edges in as out (each input ring
    /// is closed, and a cancelled pair takes one of each), so a walk from
    /// any edge returns to its start. Then the rings added whole
    /// ([`Dissolver::add_lines`]). The coordinates are those added, bit
    /// for bit.
    ///
    /// The edges are sorted by their start, and the next edge of a walk is
    /// found by galloping from the edge it came by
    /// ([`partition_point_near`]): a walk
    /// goes from a vertex to a near one, so its searches stay in the same
    /// part of the array, and in cache.
    pub fn rings(self) -> Vec<LineString<f64>> {
        let whole = self.whole;
        let mut edges = self.left.into_directed();
        edges.sort_unstable();
        let walked: Vec<std::cell::Cell<bool>> = vec![Default::default(); edges.len()];
        // An edge from `at` not yet walked, marked walked; searched outward
        // from `near`, the edge the walk came by.
        let take = |at: Vertex, near: usize| -> Option<usize> {
            let from = partition_point_near(&edges, near, |e| e[0] < at);
            let i = (from..edges.len())
                .take_while(|&i| edges[i][0] == at)
                .find(|&i| !walked[i].get())?;
            walked[i].set(true);
            Some(i)
        };
        // Marks edge `e` walked; false when it was.
        let take_exactly = |e: usize| !walked[e].replace(true);
        let mut rings = Vec::new();
        for e in 0..edges.len() {
            let [start, mut at] = edges[e];
            if !take_exactly(e) {
                continue; // walked already
            }
            let (mut ring, mut came_by) = (vec![coord(start), coord(at)], e);
            while at != start {
                match take(at, came_by) {
                    Some(next) => {
                        (at, came_by) = (edges[next][1], next);
                        ring.push(coord(at));
                    }
                    // Unreachable for closed input; the part walked is dropped.
                    None => break,
                }
            }
            if at == start && ring.len() >= 4 {
                rings.push(LineString::from(ring));
            }
        }
        rings.extend(whole);
        rings
    }
}

/// The unions of `groups` (rings apart in x, so each group's union is a
/// part of the whole apart from the others) on up to `threads` threads,
/// in the groups' order. The groups are dealt out largest first, each to
/// the thread with the fewest vertices so far. Once `stop` is cancelled no
/// further group is overlaid.
fn union_of_groups(
    groups: Vec<Vec<LineString<f64>>>,
    threads: usize,
    stop: &Stop,
) -> Result<Vec<Polygon<f64>>, Cancelled> {
    /// A group of rings and its index among the groups.
    type Numbered = (usize, Vec<LineString<f64>>);
    let vertices = |g: &[LineString<f64>]| g.iter().map(|r| r.0.len()).sum::<usize>();
    let mut order: Vec<Numbered> = groups.into_iter().enumerate().collect();
    order.sort_by_key(|(_, g)| std::cmp::Reverse(vertices(g)));
    // Each thread's load in vertices and its groups.
    let mut shares: Vec<(usize, Vec<Numbered>)> =
        (0..threads.max(1)).map(|_| (0, Vec::new())).collect();
    for (i, g) in order {
        let least = (shares.iter_mut())
            .min_by_key(|(load, _)| *load)
            .expect("a thread");
        least.0 += vertices(&g);
        least.1.push((i, g));
    }
    let mut done: Vec<(usize, Vec<Polygon<f64>>)> = std::thread::scope(|s| {
        let overlays: Vec<_> = (shares.into_iter())
            .filter(|(_, groups)| !groups.is_empty())
            .map(|(_, groups)| {
                s.spawn(move || {
                    (groups.into_iter())
                        .take_while(|_| !stop.is_requested())
                        .map(|(i, g)| (i, union_of_rings(g)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        (overlays.into_iter())
            .flat_map(|o| o.join().expect("the overlay does not panic"))
            .collect()
    });
    stop.check()?;
    done.sort_unstable_by_key(|(i, _)| *i);
    Ok(done.into_iter().flat_map(|(_, p)| p).collect())
}

/// The region of positive winding number the closed `rings` bound, as
/// polygons (none when it is empty), resolved by `geo`'s overlay engine
/// with the input's vertices put back ([`region_of`]).
fn union_of_rings(rings: Vec<LineString<f64>>) -> Vec<Polygon<f64>> {
    let rings: Vec<&[geo::Coord<f64>]> = rings.iter().map(|r| r.0.as_slice()).collect();
    region_of(&rings, FillRule::Positive)
}

/// `rings` cut into at most `groups` groups of about equal vertex counts,
/// with no ring of one group overlapping another group in x (so each
/// group's union is a part of the whole union, apart from the others).
/// The rings are sorted by their least x and cut where no ring reaches
/// past; `rings` as they are, in one group, when there is no such cut.
fn apart_in_x(rings: Vec<LineString<f64>>, groups: usize) -> Vec<Vec<LineString<f64>>> {
    let mut order: Vec<(f64, f64, usize)> = (rings.iter().enumerate())
        .map(|(i, r)| {
            let (x0, x1) = x_span(r);
            (x0, x1, i)
        })
        .collect();
    order.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let share = rings.iter().map(|r| r.0.len()).sum::<usize>() / groups.max(1);
    // The index in `order` where each group after the first starts.
    let mut cuts = Vec::new();
    let (mut reach, mut count) = (f64::NEG_INFINITY, 0);
    for (at, &(x0, x1, i)) in order.iter().enumerate() {
        if x0 > reach && count >= share && cuts.len() + 1 < groups {
            cuts.push(at);
            count = 0;
        }
        reach = reach.max(x1);
        count += rings[i].0.len();
    }
    if cuts.is_empty() {
        return vec![rings];
    }
    let mut rings: Vec<Option<LineString<f64>>> = rings.into_iter().map(Some).collect();
    let mut take = |range: std::ops::Range<usize>| -> Vec<LineString<f64>> {
        (order[range].iter())
            .filter_map(|&(_, _, i)| rings[i].take())
            .collect()
    };
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for &cut in &cuts {
        out.push(take(start..cut));
        start = cut;
    }
    out.push(take(start..order.len()));
    out
}

/// The least and greatest x of `ring`.
fn x_span(ring: &LineString<f64>) -> (f64, f64) {
    (ring.0.iter()).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), c| {
        (a.min(c.x), b.max(c.x))
    })
}

fn coord(v: Vertex) -> (f64, f64) {
    (f64::from_bits(v[0]), f64::from_bits(v[1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::table::geometry::GeometryBuilder;
    use geo::{Area, MultiLineString};

    /// The unit square at `(x, y)`, counter-clockwise unless `clockwise`.
    fn square(x: f64, y: f64, clockwise: bool) -> Geometry<f64> {
        let mut ring = vec![
            (x, y),
            (x + 1.0, y),
            (x + 1.0, y + 1.0),
            (x, y + 1.0),
            (x, y),
        ];
        if clockwise {
            ring.reverse();
        }
        Geometry::Polygon(Polygon::new(ring.into(), Vec::new()))
    }

    fn geometries(gs: &[Geometry<f64>]) -> Geometries {
        let mut b = GeometryBuilder::default();
        for g in gs {
            b.push(g).unwrap();
        }
        b.finish()
    }

    fn union_of(gs: &[Geometry<f64>], threads: usize) -> Option<Geometry<f64>> {
        let g = geometries(gs);
        dissolve(
            &g,
            &(0..g.len()).collect::<Vec<_>>(),
            threads,
            &Stop::never(),
        )
        .unwrap()
    }

    fn polygons(g: Option<Geometry<f64>>) -> MultiPolygon<f64> {
        match g {
            Some(Geometry::Polygon(p)) => MultiPolygon(vec![p]),
            Some(Geometry::MultiPolygon(m)) => m,
            other => panic!("a polygonal union expected, got {other:?}"),
        }
    }

    #[test]
    fn the_rings_of_some_polygons_added_back_as_lines_give_the_same_union() {
        // A 6 x 4 grid with a hole and an island, mixed windings: the rings
        // of the left half, stored as lines, then the right half's squares.
        let squares: Vec<Geometry<f64>> = (0..24)
            .filter(|i| *i != 9)
            .map(|i| square((i % 6) as f64, (i / 6) as f64, i % 5 == 0))
            .chain([square(10.0, 10.0, false)])
            .collect();
        let g = geometries(&squares);
        let left: Vec<usize> = (0..g.len()).filter(|&r| g.row_xy(r)[0] < 3.0).collect();
        let right: Vec<usize> = (0..g.len()).filter(|r| !left.contains(r)).collect();
        let mut part = Dissolver::default();
        part.add_rows(&g, &left);
        let stored = MultiLineString(part.rings());
        let lines = geometries(&[Geometry::MultiLineString(stored)]);
        let mut whole = Dissolver::default();
        whole.add_lines(&lines, &[0]);
        whole.add_rows(&g, &right);
        let expected = union_of(&squares, 1);
        assert_eq!(whole.finish(2, &Stop::never()).unwrap(), expected);
        assert_eq!(polygons(expected).unsigned_area(), 24.0);
    }

    #[test]
    fn dissolvers_fed_in_turn_from_one_scratch_count_what_each_would_alone() {
        // Two grids far apart, each folded by its own dissolver in batches
        // that alternate, both lent one thread's tables for each batch.
        let grid = |x0: f64| -> Vec<Geometry<f64>> {
            (0..40 * 40)
                .map(|k| square(x0 + f64::from(k % 40), f64::from(k / 40), k % 3 == 0))
                .collect()
        };
        let (left, right) = (geometries(&grid(0.0)), geometries(&grid(100.0)));
        let rows: Vec<usize> = (0..left.len()).collect();
        let mut scratch = Scratch::default();
        let (mut a, mut b) = (Dissolver::default(), Dissolver::default());
        for batch in rows.chunks(300) {
            for (d, g) in [(&mut a, &left), (&mut b, &right)] {
                d.swap_scratch(&mut scratch);
                d.add_rows(g, batch);
                d.swap_scratch(&mut scratch);
            }
        }
        for (d, g) in [(a, &left), (b, &right)] {
            let mut alone = Dissolver::default();
            alone.add_rows(g, &rows);
            assert_eq!(d.rings(), alone.rings());
        }
    }

    #[test]
    fn a_cancelled_union_ends_without_one() {
        let squares: Vec<Geometry<f64>> = (0..3).map(|i| square(i as f64, 0.0, false)).collect();
        let g = geometries(&squares);
        let canceller = crate::cancel::Canceller::new();
        let stop = canceller.stop_for_call();
        let mut counted = Dissolver::default();
        counted.add_rows(&g, &[0, 1, 2]);
        canceller.cancel();
        assert_eq!(dissolve(&g, &[0, 1, 2], 2, &stop), Err(Cancelled));
        assert_eq!(counted.finish(2, &stop), Err(Cancelled));
    }

    #[test]
    fn a_grid_of_squares_of_mixed_winding_is_one_square_without_inner_edges() {
        let mut squares = Vec::new();
        for i in 0..30 {
            for j in 0..30 {
                squares.push(square(f64::from(i), f64::from(j), (i + j) % 3 == 0));
            }
        }
        for threads in [1, 2, 3] {
            let union = polygons(union_of(&squares, threads));
            assert_eq!(union.0.len(), 1);
            let p = &union.0[0];
            assert!(p.interiors().is_empty());
            assert_eq!(p.unsigned_area(), 900.0);
            // The outline only: the corners (collinear vertices may stay).
            let xs: Vec<f64> = p.exterior().0.iter().map(|c| c.x).collect();
            assert!(xs.iter().all(|x| (0.0..=30.0).contains(x)));
        }
    }

    #[test]
    fn a_grid_of_many_units_added_in_uneven_batches_is_one_square() {
        // 150 x 150 squares: 22 units of rows, whose outlines cancel a few
        // units later, added in batches that cut units anywhere.
        let n = 150;
        let squares: Vec<Geometry<f64>> = (0..n * n)
            .map(|k| square(f64::from(k % n), f64::from(k / n), k % 7 == 0))
            .collect();
        let g = geometries(&squares);
        let rows: Vec<usize> = (0..g.len()).collect();
        let mut batched = Dissolver::default();
        for batch in rows.chunks(5_003) {
            batched.add_rows(&g, batch);
        }
        let unions = [
            batched.finish(2, &Stop::never()).unwrap(),
            dissolve(&g, &rows, 1, &Stop::never()).unwrap(),
            dissolve(&g, &rows, 3, &Stop::never()).unwrap(),
        ];
        for union in unions {
            let union = polygons(union);
            assert_eq!(union.0.len(), 1);
            assert!(union.0[0].interiors().is_empty());
            assert_eq!(union.0[0].unsigned_area(), f64::from(n * n));
        }
    }

    #[test]
    fn a_ring_of_squares_keeps_its_hole_and_separate_parts_stay_apart() {
        let mut squares = Vec::new();
        for i in 0..3 {
            for j in 0..3 {
                if (i, j) != (1, 1) {
                    squares.push(square(f64::from(i), f64::from(j), false));
                }
            }
        }
        squares.push(square(10.0, 10.0, true));
        let union = polygons(union_of(&squares, 2));
        assert_eq!(union.0.len(), 2);
        let areas: Vec<f64> = union.0.iter().map(|p| p.unsigned_area()).collect();
        assert!(areas.contains(&8.0) && areas.contains(&1.0), "{areas:?}");
        let ring = union.0.iter().find(|p| p.unsigned_area() == 8.0).unwrap();
        assert_eq!(ring.interiors().len(), 1);
    }

    #[test]
    fn rings_apart_in_x_are_cut_into_groups_that_never_overlap_and_lose_nothing() {
        let ring = |x: f64, width: f64| -> LineString<f64> {
            vec![
                (x, 0.0),
                (x + width, 0.0),
                (x + width, 1.0),
                (x, 1.0),
                (x, 0.0),
            ]
            .into()
        };
        // Columns at x = 0, 10, 20, 30, each of three overlapping rings, given
        // out of order, and one ring bridging the gap before the last.
        let mut rings = Vec::new();
        for column in [3.0, 0.0, 2.0, 1.0] {
            for shift in [0.0, 0.5, 1.0] {
                rings.push(ring(10.0 * column + shift, 2.0));
            }
        }
        rings.push(ring(25.0, 6.0));
        let groups = apart_in_x(rings.clone(), 2);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups.iter().map(Vec::len).sum::<usize>(), rings.len());
        let spans = |g: &[LineString<f64>]| g.iter().map(x_span).collect::<Vec<_>>();
        let (left, right) = (spans(&groups[0]), spans(&groups[1]));
        let reach = left.iter().map(|s| s.1).fold(f64::MIN, f64::max);
        assert!(right.iter().all(|s| s.0 > reach), "{left:?} | {right:?}");
        // One group, as given, when every ring overlaps the next.
        let chain: Vec<_> = (0..6).map(|i| ring(f64::from(i), 1.5)).collect();
        assert_eq!(apart_in_x(chain.clone(), 2), vec![chain]);
    }

    #[test]
    fn basins_far_apart_are_united_separately_and_all_kept() {
        let mut squares = Vec::new();
        for i in 0..40 {
            for j in 0..3 {
                // Two blocks of 20 x 3 squares, 100 apart.
                let x = f64::from(i) + if i < 20 { 0.0 } else { 100.0 };
                squares.push(square(x, f64::from(j), false));
            }
        }
        let union = polygons(union_of(&squares, 2));
        assert_eq!(union.0.len(), 2);
        assert!(union.0.iter().all(|p| p.unsigned_area() == 60.0));
    }

    #[test]
    fn many_parts_apart_in_x_are_shared_among_the_threads_and_kept_in_order() {
        // Twelve blocks 20 apart of 1 to 12 squares (groups of unequal
        // sizes for the threads), given from right to left, of either winding.
        let mut squares = Vec::new();
        for block in (0..12).rev() {
            for k in 0..=block {
                let x = f64::from(20 * block + k);
                squares.push(square(x, 0.0, block % 2 == 1));
            }
        }
        for threads in [1, 2, 3] {
            let g = geometries(&squares);
            let mut dissolver = Dissolver::default();
            dissolver.add_rows(&g, &(0..g.len()).collect::<Vec<_>>());
            let groups = apart_in_x(dissolver.rings(), 64);
            assert_eq!(groups.len(), 12);
            let areas: Vec<f64> = (union_of_groups(groups, threads, &Stop::never())
                .unwrap()
                .iter())
            .map(|p| p.unsigned_area())
            .collect();
            assert_eq!(areas, (1..=12).map(f64::from).collect::<Vec<_>>());
        }
        let union = polygons(union_of(&squares, 2));
        assert_eq!(union.0.len(), 12);
    }

    #[test]
    fn edges_that_do_not_match_vertex_for_vertex_and_overlaps_still_unite() {
        // A T-junction (the right square's left edge has a vertex the left
        // square lacks) and an overlapping square: the overlay resolves them.
        let left = square(0.0, 0.0, false);
        let right = Geometry::Polygon(Polygon::new(
            vec![
                (1.0, 0.0),
                (2.0, 0.0),
                (2.0, 1.0),
                (1.0, 1.0),
                (1.0, 0.5),
                (1.0, 0.0),
            ]
            .into(),
            Vec::new(),
        ));
        let overlap = square(1.5, 0.5, false);
        let union = polygons(union_of(&[left, right, overlap], 1));
        assert_eq!(union.0.len(), 1);
        assert!((union.0[0].unsigned_area() - 2.75).abs() < 1e-12);
    }

    #[test]
    fn holes_of_either_winding_and_non_polygons_are_handled() {
        let outer = vec![(0.0, 0.0), (4.0, 0.0), (4.0, 4.0), (0.0, 4.0), (0.0, 0.0)];
        let mut hole = vec![(1.0, 1.0), (2.0, 1.0), (2.0, 2.0), (1.0, 2.0), (1.0, 1.0)];
        for reverse in [false, true] {
            if reverse {
                hole.reverse();
            }
            let donut = Geometry::Polygon(Polygon::new(
                outer.clone().into(),
                vec![hole.clone().into()],
            ));
            let line = Geometry::LineString(vec![(0.0, 0.0), (9.0, 9.0)].into());
            let union = polygons(union_of(&[donut, line], 1));
            assert_eq!(union.0[0].unsigned_area(), 15.0);
        }
        assert_eq!(union_of(&[], 2), None);
    }

    #[test]
    fn the_union_is_the_same_bits_on_any_number_of_threads() {
        // 300 pairs of overlapping squares far apart in x (more than 32
        // groups can hold apart), at coordinates with many bits, so each
        // pair's crossing edges are cut by the overlay, whose grid follows
        // its group's extent: the groups must not follow the threads.
        let pairs: Vec<Geometry<f64>> = (0..300)
            .flat_map(|i| {
                let (x, y) = (
                    f64::from(i) * 3.1 + 0.1234567,
                    0.7654321 + f64::from(i % 7) * 0.013,
                );
                [square(x, y, false), square(x + 0.31, y + 0.47, false)]
            })
            .collect();
        let g = geometries(&pairs);
        let rows: Vec<usize> = (0..g.len()).collect();
        let union = |threads| {
            let mut d = Dissolver::default();
            d.add_rows(&g, &rows);
            d.finish(threads, &Stop::never()).unwrap()
        };
        let one = union(1);
        assert_eq!(polygons(one.clone()).0.len(), 300);
        for threads in [2, 7, 13] {
            assert!(union(threads) == one, "{threads} threads");
        }
    }
}
