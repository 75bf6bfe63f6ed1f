//! A plot_hydro request: the spec's parameters, validated as they are set.

use crate::render::style::PlotStyles;
use crate::{Error, Result};
use std::path::PathBuf;

/// One outlet, in any of the forms that may be combined in one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Outlet {
    /// A comid; its upstream tributaries are plotted.
    Comid(i64),
    /// A gauge site id, with the agency prefix (`USGS-05428500`).
    Site(String),
    /// A linked-data feature (source, id).
    Feature { source: String, id: String },
    /// A point in `crs`; resolved to the catchment that holds it.
    Point { x: f64, y: f64, crs: String },
}

/// Where plot data is cached (`cache_data`).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum CacheSetting {
    /// No plot-data cache file; tiles go to the context's tile cache.
    #[default]
    Default,
    /// Plot data cached in this file; tiles to the context's tile cache.
    File(PathBuf),
    /// `cache_data = FALSE`: no plot-data cache and no persistent tile cache.
    Disabled,
}

/// The parameters of plot_hydro.
#[derive(Debug, Clone)]
pub struct PlotRequest {
    /// Outlets in the combinable forms, in the order given.
    pub outlets: Vec<Outlet>,
    /// The integer comid set: exactly these flowlines, no upstream expansion.
    pub comid_set: Option<Vec<i64>>,
    /// The area to plot and its CRS.
    pub bbox: Option<([f64; 4], String)>,
    /// Minimum stream order; -1 = automatic from the basin area (the reference's rule).
    pub streamorder: Option<i32>,
    /// A local GeoPackage to read instead of downloading.
    pub hydro_data: Option<PathBuf>,
    /// A GeoPackage to write the subset to.
    pub gpkg: Option<PathBuf>,
    /// Overwrite `gpkg` when it exists (default true).
    pub overwrite: bool,
    /// Only flowlines; `None` = automatic (false unless stream order is automatic).
    pub flowline_only: Option<bool>,
    /// plot_config.
    pub styles: PlotStyles,
    /// Basemap provider name, or `"none"`.
    pub basemap: String,
    /// Tile zoom overriding the automatic choice.
    pub zoom: Option<u8>,
    /// Output size in pixels.
    pub size: (u32, u32),
    /// Draw the map (default true).
    pub actually_plot: bool,
    /// `cache_data`.
    pub cache: CacheSetting,
}

impl Default for PlotRequest {
    fn default() -> Self {
        PlotRequest {
            outlets: Vec::new(),
            comid_set: None,
            bbox: None,
            streamorder: None,
            hydro_data: None,
            gpkg: None,
            overwrite: true,
            flowline_only: None,
            styles: PlotStyles::default(),
            basemap: crate::render::tiles::DEFAULT_PROVIDER.to_string(),
            zoom: None,
            size: (1024, 768),
            actually_plot: true,
            cache: CacheSetting::Default,
        }
    }
}

/// At most this many outlets per request (each costs two index-service
/// requests); more is `Error::Limit` before any request is made.
pub const MAX_OUTLETS: usize = 10_000;

/// At most this many comids in an integer comid set (50 POST queries of
/// 2,000 ids); more is `Error::Limit` before any request is made.
pub const MAX_COMID_SET: usize = 100_000;

impl PlotRequest {
    /// Checks that exactly one of outlets, comid set and bbox was given,
    /// that the outlets and comid set are within [`MAX_OUTLETS`] and
    /// [`MAX_COMID_SET`], and that `hydro_data`, `gpkg` and the cache file
    /// are three different files.
    pub fn validate(&self) -> Result<()> {
        crate::paths::check_distinct(&self.files())?;
        if self.outlets.len() > MAX_OUTLETS {
            return Err(Error::Limit(format!(
                "{} outlets given, more than the limit of {MAX_OUTLETS} per request; split them into several requests",
                self.outlets.len()
            )));
        }
        if let Some(set) = self.comid_set.as_ref().filter(|s| s.len() > MAX_COMID_SET) {
            return Err(Error::Limit(format!(
                "a comid set of {} comids, more than the limit of {MAX_COMID_SET} per request; use a bbox or split the set",
                set.len()
            )));
        }
        let has_outlets = !self.outlets.is_empty();
        let has_set = self.comid_set.is_some();
        let has_bbox = self.bbox.is_some();
        match (has_outlets, has_set, has_bbox) {
            (false, false, false) => Err(Error::InvalidArgument(
                "neither outlets nor bbox given: give outlets, or a bbox to plot everything in it"
                    .into(),
            )),
            (true, _, true) | (_, true, true) => Err(Error::InvalidArgument(
                "both outlets and bbox given: give one of them, not both".into(),
            )),
            (true, true, false) => Err(Error::InvalidArgument(
                "an integer comid set cannot be combined with other outlets".into(),
            )),
            _ => Ok(()),
        }
    }

    /// The files the request reads or writes, each with its parameter name.
    pub fn files(&self) -> Vec<(&'static str, &std::path::Path)> {
        let cache = match &self.cache {
            CacheSetting::File(path) => Some(path),
            _ => None,
        };
        [
            ("hydro_data", self.hydro_data.as_ref()),
            ("gpkg", self.gpkg.as_ref()),
            ("cache_data", cache),
        ]
        .into_iter()
        .filter_map(|(role, path)| Some((role, path?.as_path())))
        .collect()
    }
}
