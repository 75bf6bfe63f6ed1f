//! Vertices an overlay moved, put back: `geo`'s overlay rounds every
//! coordinate to an integer grid over its input's extent, so a vertex it
//! keeps comes out a grid step or so from where it was. Moving each back
//! onto the input vertex it rounds from keeps the coordinates the input's,
//! bit for bit, so that a basin's outline is the catchments' own (what
//! GEOS, which keeps input vertices, gives) and a repaired ring's shared
//! edges still match its neighbours'.

use super::gallop::partition_point_near;
use geo::{Coord, LineString, MultiPolygon, Polygon};

/// The input's vertices sorted by x, for looking up the one an output
/// vertex rounds from. Owns a copy of them.
pub(super) struct InputVertices {
    by_x: Vec<Coord<f64>>,
    /// How far the overlay may move a vertex: a few steps of its grid,
    /// which has at least 2^30 steps across the input's extent.
    tolerance: f64,
}

impl InputVertices {
    pub fn new(vertices: impl Iterator<Item = Coord<f64>>) -> InputVertices {
        let mut by_x: Vec<Coord<f64>> = vertices.collect();
        by_x.sort_unstable_by(|p, q| p.x.total_cmp(&q.x).then(p.y.total_cmp(&q.y)));
        by_x.dedup();
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for p in &by_x {
            (lo[0], lo[1]) = (lo[0].min(p.x), lo[1].min(p.y));
            (hi[0], hi[1]) = (hi[0].max(p.x), hi[1].max(p.y));
        }
        let extent = (hi[0] - lo[0]).max(hi[1] - lo[1]);
        let tolerance = if extent.is_finite() {
            extent * 2f64.powi(-28)
        } else {
            0.0
        };
        InputVertices { by_x, tolerance }
    }

    /// The input vertex nearest `c` within the tolerance, else `c`; the
    /// search starts from `*near` (where the last one ended: a ring's next
    /// vertex is near its last), which it then sets.
    fn nearest(&self, c: Coord<f64>, near: &mut usize) -> Coord<f64> {
        let t = self.tolerance;
        let from = partition_point_near(&self.by_x, *near, |p| p.x < c.x - t);
        *near = from;
        let distance = |p: &Coord<f64>| (p.x - c.x).powi(2) + (p.y - c.y).powi(2);
        (self.by_x[from..].iter())
            .take_while(|p| p.x <= c.x + t)
            .filter(|p| (p.y - c.y).abs() <= t)
            .min_by(|p, q| distance(p).total_cmp(&distance(q)))
            .copied()
            .unwrap_or(c)
    }

    /// `polygon` with each vertex put back on the input vertex it rounds
    /// from, when there is one; a ring in which two consecutive vertices
    /// would go back to the same one stays as the overlay gave it.
    pub fn put_back(&self, polygon: &mut Polygon<f64>) {
        let back = |ring: &mut LineString<f64>| {
            let mut near = 0;
            let mut moved: Vec<Coord<f64>> = (ring.0.iter())
                .map(|&c| self.nearest(c, &mut near))
                .collect();
            let n = moved.len();
            moved.dedup();
            if moved.len() == n {
                ring.0 = moved;
            }
        };
        polygon.exterior_mut(back);
        polygon.interiors_mut(|rings| rings.iter_mut().for_each(back));
    }

    /// Each polygon of `region` put back ([`InputVertices::put_back`]).
    pub fn put_back_all(&self, region: &mut MultiPolygon<f64>) {
        region.0.iter_mut().for_each(|p| self.put_back(p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vertex_a_few_grid_steps_off_goes_back_and_others_stay() {
        let input = InputVertices::new(
            [(0.1, 0.3), (4.7, 0.1), (0.3, 4.1)]
                .into_iter()
                .map(Coord::from),
        );
        let step = 4.6 * 2f64.powi(-30);
        let moved = Coord {
            x: 4.7 - 2.0 * step,
            y: 0.1 + step,
        };
        for mut near in 0..4 {
            assert_eq!(input.nearest(moved, &mut near), Coord { x: 4.7, y: 0.1 });
            let new = Coord { x: 2.0, y: 2.0 };
            assert_eq!(input.nearest(new, &mut near), new);
        }
    }
}
