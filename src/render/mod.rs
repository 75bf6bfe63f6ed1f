//! Drawing maps: a Web Mercator (EPSG:3857) canvas with a tiled basemap, the
//! plot layers in the reference order with R-like styles, and map furniture
//! (north arrow, scale bar, attribution), encoded as PNG.

pub mod style;
pub mod tiles;

use crate::context::Context;
use crate::Result;
use std::path::PathBuf;

/// Where basemap tiles are kept between calls.
#[derive(Debug, Clone, PartialEq)]
pub enum TileCacheMode {
    /// A persistent cache directory (created when missing).
    Dir(PathBuf),
    /// `cache_data = FALSE`: nothing persistent is written or read.
    Off,
}

/// A map canvas in EPSG:3857: the pixels, the view that maps 3857 metres to
/// pixels, and the basemap attribution. Layers are drawn onto it in call
/// order; the furniture is added when the PNG is encoded.
pub struct Map {}

impl Map {
    /// A new map fitted to `bbox` (in `crs`) at `size` pixels, with the basemap
    /// `basemap` (a provider name, or `"none"`). Tiles that fail become
    /// `warnings`, never an error.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        _ctx: &Context,
        _bbox: [f64; 4],
        _crs: &str,
        _size: (u32, u32),
        _basemap: &str,
        _zoom: Option<u8>,
        _cache: &TileCacheMode,
        _warnings: &mut Vec<String>,
    ) -> Result<Map> {
        todo!()
    }

    /// Draws plot data in the reference order: basin, network_wtbd,
    /// off_network_wtbd, flowline, outlets (styled by their `type`).
    pub fn draw_plot_data(&mut self, _data: &crate::plot::PlotData, _styles: &style::PlotStyles) -> Result<()> {
        todo!()
    }

    /// Draws any GeoJSON (geometry, Feature or FeatureCollection) in `crs`.
    pub fn add_geojson(
        &mut self,
        _geojson: &[u8],
        _crs: &str,
        _col: Option<&str>,
        _fill: Option<&str>,
        _lwd: f64,
    ) -> Result<()> {
        todo!()
    }

    /// Draws one R `pch` symbol at (`x`, `y`) in `crs`.
    pub fn add_point(&mut self, _x: f64, _y: f64, _crs: &str, _pch: i32, _col: &str, _cex: f64) -> Result<()> {
        todo!()
    }

    /// The map as PNG bytes, with the furniture composited on a copy.
    pub fn png(&self) -> Result<Vec<u8>> {
        todo!()
    }
}
