//! A trace on a map: its flowline portion and the raindrop's path as the
//! render module's [`LayerView`]s.

use super::{Trace, RAINDROP_PATH_ID, TRACE_CRS};
use crate::render::{LayerView, Map, ShapePaint};
use crate::table::geometry::{kind, Geometries, GeometryBuilder};
use crate::{Error, Result};

impl Trace {
    /// Draws the trace on `map`: its flowline portion in `flowline_col`, the
    /// raindrop's path in `trace_col` (R colour names), both `lwd` wide.
    pub fn draw(&self, map: &mut Map, flowline_col: &str, trace_col: &str, lwd: f64) -> Result<()> {
        let flowline = ShapePaint::lines(flowline_col, lwd)?;
        let path = ShapePaint::lines(trace_col, lwd)?;
        let lines = self.lines().map_err(Error::Internal)?;
        for (row, f) in self.features.iter().enumerate() {
            map.draw(&LayerView {
                geometries: &lines,
                rows: (row..row + 1).into(),
                crs: TRACE_CRS,
                paint: if f.id == RAINDROP_PATH_ID {
                    path
                } else {
                    flowline
                },
                symbol: None,
                pixel_grid: false,
            })?;
        }
        Ok(())
    }

    /// The features' lines, one row each, in order.
    fn lines(&self) -> std::result::Result<Geometries, String> {
        let mut b = GeometryBuilder::default();
        for f in &self.features {
            f.coords.chunks_exact(2).for_each(|c| b.push_xy(c[0], c[1]));
            b.close_ring()?;
            b.close_part()?;
            b.finish_row(kind::LINESTRING)?;
        }
        Ok(b.finish())
    }
}
