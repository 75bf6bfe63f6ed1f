//! Plot data on a map: turns layers and plot_config into the render
//! module's [`LayerView`]s, in the reference order. The views borrow the
//! tables' geometry buffers: nothing is copied per row. With the level of
//! detail on, a dense map is drawn as [`super::lod`] decides.

use super::data::{Layer, PlotData, PLOT_DATA_CRS};
use super::lod;
use crate::render::style::{PlotStyles, Style};
use crate::render::{LayerView, Map, Rows, ShapePaint};
use crate::Result;

/// Draws `data` on `map` in the reference order: basin, network_wtbd,
/// off_network_wtbd, flowline, then the outlets, each styled by its `type`
/// property (the feature source). With `lod` on and the flowlines dense for
/// the map ([`lod::flowline_plan`]), the flowlines are drawn by stream
/// order, waterbodies as [`lod::polygon_plan`] says, the basin generalized
/// to the pixel grid ([`lod::close_px`]) and lines on the pixel grid;
/// otherwise every feature is drawn as styled.
pub fn draw_plot_data(
    map: &mut Map,
    data: &PlotData,
    styles: &PlotStyles,
    lod: bool,
) -> Result<()> {
    let view = *map.view();
    let plan = if lod {
        lod::flowline_plan(data, &view, styles.flowline.lwd, map.threads())
    } else {
        None
    };
    let dense = plan.is_some();
    let basin = layer_view(
        data,
        Layer::Basin,
        (0..data.layer(Layer::Basin).len()).into(),
        layer_paint(Layer::Basin, &styles.basin),
        dense,
    );
    if dense {
        map.draw_generalized(&basin, lod::close_px(&view))?;
    } else {
        map.draw(&basin)?;
    }
    for (layer, style) in [
        (Layer::NetworkWtbd, &styles.network_wtbd),
        (Layer::OffNetworkWtbd, &styles.off_network_wtbd),
    ] {
        let paint = layer_paint(layer, style);
        if !dense {
            let rows = (0..data.layer(layer).len()).into();
            draw_rows(map, data, layer, rows, paint, false)?;
            continue;
        }
        let polygons = lod::polygon_plan(data, layer, &view, map.threads());
        let fill_only = ShapePaint {
            line: None,
            ..paint
        };
        draw_rows(
            map,
            data,
            layer,
            polygons.fill_only.as_slice().into(),
            fill_only,
            true,
        )?;
        draw_rows(
            map,
            data,
            layer,
            polygons.outlined.as_slice().into(),
            paint,
            true,
        )?;
    }
    let flowline = layer_paint(Layer::Flowline, &styles.flowline);
    match &plan {
        Some(plan) => {
            for (lwd, rows) in &plan.groups {
                let paint = ShapePaint {
                    lwd: *lwd,
                    ..flowline
                };
                draw_rows(
                    map,
                    data,
                    Layer::Flowline,
                    rows.as_slice().into(),
                    paint,
                    true,
                )?;
            }
        }
        None => {
            let rows = (0..data.layer(Layer::Flowline).len()).into();
            draw_rows(map, data, Layer::Flowline, rows, flowline, false)?;
        }
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
            rows: (row..row + 1).into(),
            crs: PLOT_DATA_CRS,
            paint: no_lines,
            symbol: Some(styles.outlet(outlets.get_str(row, "type").unwrap_or("default"))),
            pixel_grid: false,
        })?;
    }
    Ok(())
}

/// Draws `rows` of `layer` of `data` with `paint`, on the pixel grid when
/// `pixel_grid`.
fn draw_rows(
    map: &mut Map,
    data: &PlotData,
    layer: Layer,
    rows: Rows,
    paint: ShapePaint,
    pixel_grid: bool,
) -> Result<()> {
    map.draw(&layer_view(data, layer, rows, paint, pixel_grid))
}

/// The view of `rows` of `layer` of `data` with `paint`, without symbols;
/// borrows `data`.
fn layer_view<'a>(
    data: &'a PlotData,
    layer: Layer,
    rows: Rows<'a>,
    paint: ShapePaint,
    pixel_grid: bool,
) -> LayerView<'a> {
    LayerView {
        geometries: data.layer(layer).geometries(),
        rows,
        crs: PLOT_DATA_CRS,
        paint,
        symbol: None,
        pixel_grid,
    }
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
