//! Plot data on a map: turns layers and plot_config into the render
//! module's [`LayerView`]s, in the reference order. The views borrow the
//! tables' geometry buffers: nothing is copied per row.

use super::data::{Layer, PlotData, PLOT_DATA_CRS};
use crate::render::style::{PlotStyles, Style};
use crate::render::{LayerView, Map, ShapePaint};
use crate::Result;

/// Draws `data` on `map` in the reference order: basin, network_wtbd,
/// off_network_wtbd, flowline, then the outlets, each styled by its `type`
/// property (the feature source).
pub fn draw_plot_data(map: &mut Map, data: &PlotData, styles: &PlotStyles) -> Result<()> {
    let layers = [
        (Layer::Basin, &styles.basin),
        (Layer::NetworkWtbd, &styles.network_wtbd),
        (Layer::OffNetworkWtbd, &styles.off_network_wtbd),
        (Layer::Flowline, &styles.flowline),
    ];
    for (layer, style) in layers {
        let table = data.layer(layer);
        map.draw(&LayerView {
            geometries: table.geometries(),
            rows: 0..table.len(),
            crs: PLOT_DATA_CRS,
            paint: layer_paint(layer, style),
            symbol: None,
        })?;
    }
    let no_lines = ShapePaint {
        line: None,
        fill: None,
        lwd: 1.0,
    };
    let outlets = data.layer(Layer::Outlets);
    for row in 0..outlets.len() {
        map.draw(&LayerView {
            geometries: outlets.geometries(),
            rows: row..row + 1,
            crs: PLOT_DATA_CRS,
            paint: no_lines,
            symbol: Some(styles.outlet(outlets.get_str(row, "type").unwrap_or("default"))),
        })?;
    }
    Ok(())
}

/// Flowlines are lines in `col`; the polygon layers are filled with `col`
/// and outlined in `border` (R's `plot` of sf polygons).
fn layer_paint(layer: Layer, style: &Style) -> ShapePaint {
    let (line, fill) = if layer == Layer::Flowline {
        (style.col, None)
    } else {
        (style.border, style.col)
    };
    ShapePaint {
        line,
        fill,
        lwd: style.lwd,
    }
}
