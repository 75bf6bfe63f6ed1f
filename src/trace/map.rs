//! The interface spec's trace map: after a raindrop trace, a map over the
//! trace's bounding box enlarged by [`MARGIN_DEG`] on each side, with the
//! traced point, the flowline portion in red and the raindrop's path in black.
//! One definition for every face of the library (CLI, C, bindings).

use super::{Trace, TRACE_CRS};
use crate::context::Context;
use crate::crs::Transformer;
use crate::render::view::View;
use crate::render::{tiles, Map, MapSpec, TileCacheMode, MAP_CRS};
use crate::Result;

/// Degrees added to each side of the trace's bounding box.
pub const MARGIN_DEG: f64 = 0.005;
/// The colour of the flowline portion.
pub const FLOWLINE_COL: &str = "red";
/// The colour of the raindrop's path and of the point.
pub const TRACE_COL: &str = "black";
/// Line width of both parts of the trace, in R units.
pub const LWD: f64 = 2.0;
/// R's filled circle, for the traced point.
pub const POINT_PCH: i32 = 19;
/// The size, pixels, when the caller has no preference (the C example's).
pub const DEFAULT_SIZE: (u32, u32) = (800, 800);

/// What a trace map shows besides the trace: the traced point and the canvas.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceMapSpec<'a> {
    /// The point that was traced, `[x, y]` in `crs`.
    pub point: [f64; 2],
    pub crs: &'a str,
    /// Output size in pixels.
    pub size: (u32, u32),
    /// A provider name (see [`tiles::PROVIDERS`]) or `"none"`.
    pub basemap: &'a str,
}

impl TraceMapSpec<'_> {
    /// Checks everything but the trace: the point and its CRS, the size and
    /// the basemap name, so a caller can refuse bad input before requesting
    /// the trace. [`trace_map`] checks again.
    pub fn check(&self) -> Result<()> {
        let [x, y] = self.point;
        Transformer::new(self.crs, MAP_CRS)?.point(x, y)?;
        View::device_size(self.size, 1.0)?;
        tiles::check_basemap(self.basemap)
    }
}

/// Draws the trace map of `trace`. Tiles that fail become `warnings` (also
/// sent to the context's log), never an error; a bad point or CRS is an error.
/// The map is the caller's, to add layers to or encode.
pub fn trace_map(
    ctx: &Context,
    trace: &Trace,
    spec: &TraceMapSpec,
    cache: &TileCacheMode,
    warnings: &mut Vec<String>,
) -> Result<Map> {
    spec.check()?;
    let [xmin, ymin, xmax, ymax] = trace.bbox();
    let bbox = [
        xmin - MARGIN_DEG,
        ymin - MARGIN_DEG,
        xmax + MARGIN_DEG,
        ymax + MARGIN_DEG,
    ];
    let map_spec = MapSpec {
        bbox,
        crs: TRACE_CRS,
        size: spec.size,
        scale: 1.0,
        basemap: spec.basemap,
        zoom: None,
    };
    let mut map = Map::with_spec(ctx, &map_spec, cache, warnings)?;
    trace.draw(&mut map, FLOWLINE_COL, TRACE_COL, LWD)?;
    let [x, y] = spec.point;
    map.add_point(x, y, spec.crs, POINT_PCH, TRACE_COL, 1.0)?;
    Ok(map)
}
