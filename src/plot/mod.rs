//! plot_hydro: requests, the plot data they produce, and the pipelines that
//! produce it from the services or from a local GeoPackage.

pub mod cached;
pub mod data;
mod download;
pub mod draw;
mod local;
pub mod lod;
mod outlets;
pub mod request;
mod site;
mod subset;
mod thinning;

pub use data::{Drawing, Layer, Plot, PlotData, PLOT_DATA_CRS};
pub use draw::draw_plot_data;
pub use request::{CacheSetting, Layers, Outlet, PlotRequest, Properties};
pub use site::site_id;

use crate::cancel::Stop;
use crate::context::Context;
use crate::render::{Map, TileCacheMode};
use crate::table::Table;
use crate::Result;

/// Runs plot_hydro: checks the request and its outputs, builds the plot
/// data of `req` (from `hydro_data` or the services), writes `gpkg` when
/// asked, and draws it, onto `map` when given (add = TRUE: no new basemap)
/// or onto a new map kept in the result; the drawn map goes to `png_file`
/// when asked.
pub fn plot_hydro(ctx: &Context, req: &PlotRequest, map: Option<&mut Map>) -> Result<Plot> {
    req.validate(ctx)?;
    let data = match &req.cache {
        CacheSetting::File(path) => {
            cached::cached_plot_data(ctx, req, path, || plot_data(ctx, req))
        }
        _ => plot_data(ctx, req),
    };
    let mut data = data.map_err(|e| e.unless_cancelled(ctx.stop()))?;
    ctx.check_stop()?;
    if let Some(out) = &req.gpkg {
        write_gpkg(&data, out, req.overwrite, ctx.stop())?;
    }
    let drawing = Drawing {
        styles: req.styles.clone(),
        basemap: req.basemap.clone(),
        tile_url: ctx.config.tile_url.clone(),
        lod: req.lod,
    };
    let map = match map {
        _ if !req.actually_plot => None,
        // Drawn onto a copy, which replaces the caller's map only when the
        // call succeeds: a failed or cancelled call leaves it as it was.
        Some(map) => {
            let mut drawn = map.clone();
            draw_plot_data(&mut drawn, &data, &req.styles, req.lod)?;
            ctx.check_stop()?;
            write_png(ctx, &drawn, req)?;
            *map = drawn;
            None
        }
        None => {
            let tiles = match req.cache {
                CacheSetting::Disabled => TileCacheMode::Off,
                _ => TileCacheMode::of(&ctx.config),
            };
            let mut map = Map::new(
                ctx,
                data.bbox,
                PLOT_DATA_CRS,
                req.size,
                &req.basemap,
                req.zoom,
                &tiles,
                &mut data.warnings,
            )?;
            draw_plot_data(&mut map, &data, &req.styles, req.lod)?;
            write_png(ctx, &map, req)?;
            Some(map)
        }
    };
    Ok(Plot { data, map, drawing })
}

/// Writes `map` to the request's `png_file`, if any, atomically and
/// honouring `overwrite`.
fn write_png(ctx: &Context, map: &Map, req: &PlotRequest) -> Result<()> {
    match &req.png_file {
        Some(path) => {
            let png = map.png()?;
            crate::output::write_atomically_until(path, req.overwrite, ctx.stop(), |w| {
                w.write_all(&png)
            })
        }
        None => Ok(()),
    }
}

/// Builds the plot data of `req` from its source.
fn plot_data(ctx: &Context, req: &PlotRequest) -> Result<PlotData> {
    let subset = match &req.hydro_data {
        Some(path) => local::subset(ctx, req, path)?,
        None => download::subset(ctx, req)?,
    };
    subset.into_plot_data(req)
}

/// Writes the subset as a GeoPackage with the NHDPlus layer names (so it can
/// serve as `hydro_data` again), plus the basins and outlets. The layers are
/// written from their tables; only the two waterbody layers are joined (copied)
/// into the one `NHDWaterbody` table, under their declared schema. Every
/// layer is written, an empty one too (its columns and geometry type
/// declared), so the file's tables are the same whatever the source.
fn write_gpkg(data: &PlotData, path: &std::path::Path, overwrite: bool, stop: &Stop) -> Result<()> {
    let waterbodies = Table::concat(&[
        data.layer(Layer::NetworkWtbd).clone(),
        data.layer(Layer::OffNetworkWtbd).clone(),
    ])
    .and_then(|t| t.conform(&Layer::NetworkWtbd.schema(), "NHDWaterbody", Some(&[])))
    .map_err(crate::Error::Gpkg)?;
    let all: [(&str, &Table); 8] = [
        ("NHDFlowline_Network", data.layer(Layer::Flowline)),
        ("CatchmentSP", data.layer(Layer::Catchment)),
        ("NHDWaterbody", &waterbodies),
        ("NHDArea", data.layer(Layer::Area)),
        (
            "NHDFlowline_NonNetwork",
            data.layer(Layer::FlowlineNonNetwork),
        ),
        ("Gage", data.layer(Layer::Gage)),
        ("basin", data.layer(Layer::Basin)),
        ("outlets", data.layer(Layer::Outlets)),
    ];
    crate::gpkg::write(path, &all, overwrite, stop)
}
