//! Level of detail: maps readable at every scale (issue 26, item 2).
//!
//! A map whose flowlines would cover more of the data area than
//! [`DENSE_INK`] is drawn by stream order: the smallest minimum order whose
//! flowlines, widths growing with order, cover at most [`INK_BUDGET`] of the
//! data area ([`Density::min_order`]); the main stem always, one order
//! wider than the highest; waterbodies smaller than a pixel left out and
//! those under [`OUTLINED_PX`] drawn without outline; the basin's gaps and
//! inlets up to twice [`BASIN_CLOSE_PX`] across closed; lines drawn on the
//! pixel grid, polygon rings under a pixel left out.
//! A sparser map (every sample at its usual sizes) is drawn as before, to
//! the byte. Drawing only: the plot data is never thinned. The HTML page
//! applies the same rule per zoom level from the same [`Density`].
//!
//! Ink is estimated as the sum over flowlines of length times width, in
//! device pixels, over the data area (the plot bbox) in device pixels;
//! overlaps make the real ink smaller. Lengths are measured once in Web
//! Mercator metres, so the estimate at any resolution is a product.

use super::data::{Layer, PlotData};
use crate::parallel::parallel_map;
use crate::render::view::{View, HALF_WORLD_M, MIN_EXTENT_M};
use crate::table::Table;
use std::collections::BTreeMap;
use std::ops::Range;

/// Estimated ink (flowline area over data area) above which the level of
/// detail applies. The samples give at most 0.12 at their usual sizes (New
/// Hope 0.12 at 256 x 192, 0.064 at 480 x 360, 0.030 at 1024 x 768; Yahara
/// 0.055, 0.029, 0.014); a grid of 10 x 10 New Hope copies (74,600
/// flowlines) gives 0.56 at 1024 x 768.
pub const DENSE_INK: f64 = 0.35;

/// The estimated ink the drawn flowlines may cover once the level of detail
/// applies.
pub const INK_BUDGET: f64 = 0.30;

/// What antialiasing adds to a line's width on the map, device pixels:
/// the partly covered pixels along both sides (a 1 px line at an angle
/// tints about 2 px across).
pub const ANTIALIAS_PX: f64 = 1.0;

/// Width of the lowest order drawn, as a multiple of the flowline `lwd`.
pub const BASE_WIDTH: f64 = 0.5;

/// Width added per order above the lowest drawn, as a multiple of `lwd`.
pub const ORDER_WIDTH: f64 = 0.5;

/// Gaps and inlets of the basin up to twice this many pixels across (at
/// scale 1) are closed on a dense map: between two outlines that close,
/// they read as ink, not as shape.
pub const BASIN_CLOSE_PX: f64 = 3.0;

/// The closing radius of the basin on `view`, device pixels
/// ([`BASIN_CLOSE_PX`] at the view's scale).
pub fn close_px(view: &View) -> usize {
    (BASIN_CLOSE_PX * view.scale).round() as usize
}

/// The flowline lengths of plot data by stream order, measured once, from
/// which the ink at any resolution follows.
#[derive(Debug, Clone, PartialEq)]
pub struct Density {
    /// Total length of the flowlines of each stream order, Web Mercator
    /// metres (order 0: flowlines without one).
    pub length_m: BTreeMap<i32, f64>,
    /// The data area (the plot bbox), square Web Mercator metres.
    pub area_m2: f64,
    /// Comids of the main stem: the flowlines on the level path of the
    /// outlet (the flowline of smallest `hydroseq`), when the data has
    /// `levelpathi`.
    pub main_stem: Vec<i64>,
}

/// The flowlines of plot data measured once: their [`Density`], and what
/// a plan of them needs besides (each row's stream order, the main stem's
/// rows).
struct Measured {
    density: Density,
    orders: Vec<i32>,
    stem: Vec<usize>,
}

impl Measured {
    /// Measures the flowlines of `data`, their lengths on up to `threads`
    /// threads (summed in row order, so the same on any number).
    fn of(data: &PlotData, threads: usize) -> Measured {
        let flowlines = data.layer(Layer::Flowline);
        let orders = orders(flowlines);
        let lengths = per_row(flowlines.len(), threads, |row| {
            length(flowlines.geometries().row_xy(row))
        });
        let mut length_m = BTreeMap::new();
        for (&order, length) in orders.iter().zip(lengths) {
            *length_m.entry(order).or_insert(0.0) += length;
        }
        let [x0, y0] = mercator(data.bbox[0], data.bbox[1]);
        let [x1, y1] = mercator(data.bbox[2], data.bbox[3]);
        let stem = main_stem(flowlines);
        let density = Density {
            length_m,
            area_m2: (x1 - x0).abs().max(MIN_EXTENT_M) * (y1 - y0).abs().max(MIN_EXTENT_M),
            main_stem: (stem.iter())
                .filter_map(|&r| flowlines.get_i64(r, "comid"))
                .collect(),
        };
        Measured {
            density,
            orders,
            stem,
        }
    }
}

/// How a dense flowline layer is drawn: groups of rows, each with its width
/// (in R units), lowest order first so that the main stems are on top.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowlinePlan {
    pub groups: Vec<(f64, Vec<usize>)>,
}

impl Density {
    /// Measures the flowlines of `data` and its bbox.
    pub fn of(data: &PlotData) -> Density {
        Measured::of(data, 1).density
    }

    /// The estimated ink of the flowlines of order `min` and above, each
    /// `width(order)` device pixels wide, at `res` metres per device pixel.
    fn ink(&self, res: f64, min: i32, width: impl Fn(i32) -> f64) -> f64 {
        let area_px = self.area_m2 / (res * res);
        let ink_px: f64 = self
            .length_m
            .range(min..)
            .map(|(&o, &l)| l / res * (width(o) + ANTIALIAS_PX))
            .sum();
        ink_px / area_px
    }

    /// The smallest stream order drawn at `res` metres per device pixel
    /// with flowlines `lwd_px` device pixels wide (their `lwd`): `None`
    /// when every flowline is drawn as today (the estimated ink is at most
    /// [`DENSE_INK`]); otherwise the smallest order whose flowlines, drawn
    /// [`width`] wide, stay within [`INK_BUDGET`] (the highest order when
    /// none does).
    pub fn min_order(&self, res: f64, lwd_px: f64) -> Option<i32> {
        if self.ink(res, i32::MIN, |_| lwd_px) <= DENSE_INK {
            return None;
        }
        let highest = *self.length_m.keys().next_back()?;
        self.length_m
            .keys()
            .copied()
            .find(|&min| self.ink(res, min, |o| lwd_px * width(o, min)) <= INK_BUDGET)
            .or(Some(highest))
    }
}

/// The width of order `order` when `min` is the lowest drawn, as a multiple
/// of the flowline `lwd`.
pub fn width(order: i32, min: i32) -> f64 {
    BASE_WIDTH + ORDER_WIDTH * f64::from(order - min)
}

/// How the flowlines of `data` are drawn on `view` with flowline width
/// `lwd` (R units): `None` when every flowline is drawn as today. Measured
/// on up to `threads` threads.
pub fn flowline_plan(
    data: &PlotData,
    view: &View,
    lwd: f64,
    threads: usize,
) -> Option<FlowlinePlan> {
    let Measured {
        density,
        orders,
        stem,
    } = Measured::of(data, threads);
    let min = density.min_order(view.resolution(), f64::from(view.px(lwd)))?;
    let top = orders.iter().copied().max().unwrap_or(min).max(min);
    let mut on_stem = vec![false; orders.len()];
    stem.into_iter().for_each(|r| on_stem[r] = true);
    let mut groups: BTreeMap<i32, Vec<usize>> = BTreeMap::new();
    for (row, &order) in orders.iter().enumerate() {
        // A flowline under a pixel is still drawn: a river is a chain of
        // them, each shorter than a pixel at small scales.
        // The main stem one order wider than the highest, so that it reads
        // as the river from end to end, wherever its own order drops (as it
        // does upstream, and in data whose orders are not Strahler's).
        let drawn = if on_stem[row] {
            Some(top + 1)
        } else if order >= min {
            Some(order)
        } else {
            None
        };
        if let Some(order) = drawn {
            groups.entry(order).or_default().push(row);
        }
    }
    Some(FlowlinePlan {
        groups: groups
            .into_iter()
            .map(|(o, rows)| (lwd * width(o, min), rows))
            .collect(),
    })
}

/// How the polygons of a layer of a dense map are drawn: those at least
/// [`OUTLINED_PX`] across as styled, the smaller ones down to a pixel
/// filled without their outline (which would cover most of them); the rest
/// are left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PolygonPlan {
    pub outlined: Vec<usize>,
    pub fill_only: Vec<usize>,
}

/// The smallest polygon (its bbox's larger side, device pixels) of a dense
/// map drawn with its outline.
pub const OUTLINED_PX: f64 = 8.0;

/// How polygon `layer` of `data` is drawn on `view` when the map is dense;
/// the polygons measured on up to `threads` threads.
pub fn polygon_plan(data: &PlotData, layer: Layer, view: &View, threads: usize) -> PolygonPlan {
    let table = data.layer(layer);
    let res = view.resolution();
    let mut plan = PolygonPlan::default();
    let extents = per_row(table.len(), threads, |row| extent_px(table, row, res));
    for (row, across) in extents.into_iter().enumerate() {
        if across >= OUTLINED_PX {
            plan.outlined.push(row);
        } else if across >= 1.0 {
            plan.fill_only.push(row);
        }
    }
    plan
}

/// Rows per share of a plan's measures: small enough that a few thousand
/// waterbodies of 1,400 vertices each are spread over every thread, large
/// enough that a million flowlines are a thousand shares.
const ROWS_PER_SHARE: usize = 1 << 10;

/// `measure(row)` of each row below `rows`, in row order, on up to
/// `threads` threads (in shares of [`ROWS_PER_SHARE`] rows).
fn per_row<R: Send>(rows: usize, threads: usize, measure: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let shares: Vec<Range<usize>> = (0..rows)
        .step_by(ROWS_PER_SHARE)
        .map(|start| start..(start + ROWS_PER_SHARE).min(rows))
        .collect();
    let measured = parallel_map(
        threads,
        &shares,
        |rows| rows.clone().map(&measure).collect(),
        |_, _| {},
    );
    measured
        .into_iter()
        .flat_map(|share: Vec<R>| share)
        .collect()
}

/// The larger side of row `row`'s bbox in pixels of `res` metres (0 without
/// a geometry).
fn extent_px(table: &Table, row: usize, res: f64) -> f64 {
    table.geometries().bbox(row).map_or(0.0, |b| {
        let ([x0, y0], [x1, y1]) = (mercator(b[0], b[1]), mercator(b[2], b[3]));
        (x1 - x0).max(y1 - y0) / res
    })
}

/// The stream order of each row (`streamorde`; 0 without one).
fn orders(flowlines: &Table) -> Vec<i32> {
    match flowlines.column("streamorde") {
        Some(c) => (c.i64_values().into_iter())
            .map(|o| o.and_then(|o| i32::try_from(o).ok()).unwrap_or(0))
            .collect(),
        None => vec![0; flowlines.len()],
    }
}

/// The rows on the level path (`levelpathi`) of the flowline of smallest
/// `hydroseq`; none without those columns.
fn main_stem(flowlines: &Table) -> Vec<usize> {
    let (Some(path), Some(seq)) = (flowlines.column("levelpathi"), flowlines.column("hydroseq"))
    else {
        return Vec::new();
    };
    let path = path.f64_values();
    let outlet = (seq.f64_values().into_iter().enumerate())
        .filter_map(|(r, s)| Some((s?, r)))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    let Some(stem) = outlet.and_then(|(_, r)| path[r]) else {
        return Vec::new();
    };
    (0..flowlines.len())
        .filter(|&r| path[r] == Some(stem))
        .collect()
}

/// The Web Mercator position (metres) of longitude `lon`, latitude `lat`
/// (degrees; NAD83 taken as WGS84, as the map does), latitude clamped to
/// the Mercator square.
fn mercator(lon: f64, lat: f64) -> [f64; 2] {
    let r = HALF_WORLD_M / 180.0;
    let lat = lat.clamp(-85.051_128_78, 85.051_128_78).to_radians();
    [
        lon * r,
        (std::f64::consts::FRAC_PI_4 + lat / 2.0).tan().ln() * HALF_WORLD_M / std::f64::consts::PI,
    ]
}

/// The length of a line (interleaved lon, lat), Web Mercator metres: its
/// length in degrees times the Mercator scale at its first vertex,
/// sec(latitude). A flowline spans too little latitude for the scale to
/// change (0.2 % over 0.1 degree at 45 degrees north), an estimate of ink
/// needs no more, and no vertex costs a logarithm.
fn length(xy: &[f64]) -> f64 {
    let Some(&lat) = xy.get(1) else {
        return 0.0;
    };
    let metres_per_degree =
        HALF_WORLD_M / 180.0 / lat.clamp(-85.051_128_78, 85.051_128_78).to_radians().cos();
    let points = || xy.chunks_exact(2);
    let degrees: f64 = points()
        .zip(points().skip(1))
        .map(|(a, b)| ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt())
        .sum();
    degrees * metres_per_degree
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::polygon;

    #[test]
    fn rows_measured_on_any_number_of_threads_come_back_in_row_order() {
        let rows = 3 * ROWS_PER_SHARE + 17;
        let one: Vec<usize> = (0..rows).map(|r| r * 3 + 1).collect();
        for threads in [1, 2, 5] {
            assert_eq!(per_row(rows, threads, |r| r * 3 + 1), one, "{threads}");
        }
        assert!(per_row(0, 2, |r| r).is_empty());
    }

    /// 1 km of order 1, 500 m of order 2, 100 m of order 3 over 1 km².
    fn density() -> Density {
        Density {
            length_m: [(1, 1000.0), (2, 500.0), (3, 100.0)].into(),
            area_m2: 1e6,
            main_stem: Vec::new(),
        }
    }

    #[test]
    fn a_sparse_map_is_drawn_whole() {
        // At 100 m a pixel, 1 px lines: 100 m * (1600 m / 100 m * 2 px)
        // over 1e6 m² = 0.32 <= 0.35.
        assert_eq!(density().min_order(100.0, 1.0), None);
    }

    #[test]
    fn a_dense_map_draws_the_smallest_order_within_the_budget() {
        // At 300 m a pixel, 1 px lines: 300 * 1600 * 2 / 1e6 = 0.96 > 0.35.
        // From order 1 (widths 0.5, 1, 1.5 plus 1 px of antialiasing):
        // 300 * (1000 * 1.5 + 500 * 2 + 100 * 2.5) / 1e6 = 0.825 > 0.30.
        // From order 2 (widths 0.5, 1): 300 * (500 * 1.5 + 100 * 2) / 1e6
        // = 0.285 <= 0.30.
        assert_eq!(density().min_order(300.0, 1.0), Some(2));
        // At 3 km a pixel nothing fits: the highest order.
        assert_eq!(density().min_order(3000.0, 1.0), Some(3));
    }

    #[test]
    fn the_main_stem_is_drawn_one_order_wider_than_the_highest() {
        // Degree-long flowlines in a 1 km data area: far too dense, so only
        // the highest order (3) is drawn, with the main stem (level path 1,
        // of the outlet: smallest hydroseq) whatever its own order.
        let line = |order: i64, levelpath: i64, hydroseq: i64| crate::feature::Feature {
            id: None,
            geometry: Some(geo::Geometry::LineString(
                vec![(0.0, 0.0), (1.0, 0.0)].into(),
            )),
            properties: serde_json::json!({
                "comid": hydroseq, "streamorde": order, "levelpathi": levelpath,
                "hydroseq": hydroseq,
            })
            .as_object()
            .cloned()
            .unwrap(),
        };
        let mut data = PlotData::default();
        let flowlines = [line(1, 1, 1), line(1, 1, 2), line(3, 5, 5), line(2, 6, 6)];
        data.set_layer(Layer::Flowline, Table::from_features(&flowlines).unwrap());
        let view = View {
            extent: [0.0, 0.0, 100_000.0, 100_000.0],
            width: 100,
            height: 100,
            scale: 1.0,
        };
        let plan = flowline_plan(&data, &view, 2.0, 2).expect("dense");
        // Widths: lwd 2 x (0.5 + 0.5 x (order - 3)).
        assert_eq!(plan.groups, vec![(1.0, vec![2]), (2.0, vec![0, 1])]);
    }

    #[test]
    fn small_waterbodies_lose_their_outline_and_the_smallest_are_left_out() {
        // On the equator, a view of 1 km a pixel: squares 20 km, 4 km and
        // 0.5 km across (1 degree = 111.32 km).
        let square = |km: f64| {
            let d = km / 111.319_490_793;
            crate::feature::Feature {
                id: None,
                geometry: Some(geo::Geometry::Polygon(polygon![
                    (x: 0.0, y: 0.0), (x: d, y: 0.0), (x: d, y: d), (x: 0.0, y: d)
                ])),
                properties: Default::default(),
            }
        };
        let mut data = PlotData::default();
        let table = Table::from_features(&[square(20.0), square(4.0), square(0.5)]).unwrap();
        data.set_layer(Layer::NetworkWtbd, table);
        let view = View {
            extent: [0.0, 0.0, 100_000.0, 100_000.0],
            width: 100,
            height: 100,
            scale: 1.0,
        };
        let plan = polygon_plan(&data, Layer::NetworkWtbd, &view, 2);
        assert_eq!(plan.outlined, vec![0]);
        assert_eq!(plan.fill_only, vec![1]);
    }

    #[test]
    fn lengths_are_web_mercator_metres() {
        // One degree of longitude on the equator: 2 * HALF_WORLD_M / 360.
        let l = length(&[0.0, 0.0, 0.5, 0.0, 1.0, 0.0]);
        assert!((l - 111_319.490_793).abs() < 1e-3, "{l}");
        // At 60 degrees north Mercator doubles lengths.
        let l = length(&[0.0, 60.0, 0.0, 60.001]);
        assert!((l / (0.001 * 111_319.490_793) - 2.0).abs() < 1e-4, "{l}");
        let [_, y0] = mercator(0.0, 59.999);
        let [_, y1] = mercator(0.0, 60.001);
        assert!(((y1 - y0) / (0.002 * 111_319.490_793) - 2.0).abs() < 1e-4);
    }
}
