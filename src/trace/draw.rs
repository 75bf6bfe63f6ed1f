//! A trace on a map: its flowline portion and the raindrop's path as the
//! render module's [`LayerView`]s.

use super::{Trace, RAINDROP_PATH_ID, TRACE_CRS};
use crate::render::{LayerView, Map, ShapePaint};
use crate::Result;
use geo::{Geometry, LineString};

impl Trace {
    /// Draws the trace on `map`: its flowline portion in `flowline_col`, the
    /// raindrop's path in `trace_col` (R colour names), both `lwd` wide.
    pub fn draw(&self, map: &mut Map, flowline_col: &str, trace_col: &str, lwd: f64) -> Result<()> {
        let flowline = ShapePaint::lines(flowline_col, lwd)?;
        let path = ShapePaint::lines(trace_col, lwd)?;
        for f in &self.features {
            let line: LineString<f64> = f
                .coords
                .chunks_exact(2)
                .map(|c| geo::coord! { x: c[0], y: c[1] })
                .collect();
            let geometry = Geometry::LineString(line);
            map.draw(&LayerView {
                geometries: vec![&geometry],
                crs: TRACE_CRS,
                paint: if f.id == RAINDROP_PATH_ID {
                    path
                } else {
                    flowline
                },
                symbol: None,
            })?;
        }
        Ok(())
    }
}
