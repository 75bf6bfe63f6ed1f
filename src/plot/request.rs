//! A plot_hydro request: the spec's parameters, and the one place their
//! values are checked.
//!
//! The checked setters (`add_comid`, `set_bbox`, `set_zoom`, ...) refuse a
//! bad value when it is given; the C setters, the CLI and the bindings are
//! thin adapters over them, so all of them refuse the same values with the
//! same message. [`PlotRequest::validate`], which `plot_hydro` runs before
//! anything is read, fetched or written, checks every field again with the
//! same functions, so a request built field by field in Rust is held to the
//! same rules, and adds the rules across fields (outlets or bbox, distinct
//! files, outputs that can be written).

use crate::collection::{is_flowline_network_property, Collection};
use crate::context::Context;
use crate::crs::Transformer;
use crate::output::check_path_given;
use crate::render::style::PlotStyles;
use crate::render::{tiles, view};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

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

/// Which layers the plot data must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layers {
    /// Every layer of plot_hydro's result (the default).
    #[default]
    All,
    /// Those the map draws (basin, flowlines, waterbodies, outlets), for a
    /// caller that only writes the map: reading a local file, the
    /// catchments are folded into the basins and never held, and NHDArea,
    /// the non-network flowlines and the gages are not read, so those
    /// layers are empty, and of the others only the columns the map draws
    /// with are read ([`Collection::drawn_properties`]). The map and the
    /// plot bbox are the same.
    Drawn,
    /// Every layer, row for row, for a caller that keeps no property and
    /// only counts the features (the CLI with no output): reading a local
    /// file, only the columns plot_hydro itself works with are read
    /// ([`Collection::drawn_properties`]); from the services, what
    /// `properties` asks for, as with `All`. The rows, geometries and plot
    /// bbox are those of `All`.
    Counted,
}

impl Layers {
    /// Whether a local file's layers are read with only the columns
    /// [`Collection::drawn_properties`] names.
    pub fn narrows_columns(self) -> bool {
        self != Layers::All
    }

    /// Whether every layer of the result is read (not only those drawn).
    pub fn has_every_layer(self) -> bool {
        self != Layers::Drawn
    }
}

/// Which properties the fabric requests ask for (`properties=`).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Properties {
    /// Every property (no `properties=`; the default).
    #[default]
    All,
    /// What plot_hydro reads from each layer ([`Collection::plot_properties`]).
    Plot,
    /// `Plot`, and on the network flowlines also these properties (lower
    /// case, each [`is_flowline_network_property`]).
    With(Vec<String>),
}

impl Properties {
    /// Parses `all`, `plot` or a comma list of network flowline properties
    /// (case-insensitive, spaces around names ignored); anything else is
    /// `Error::InvalidArgument` naming the word refused.
    pub fn parse(spec: &str) -> Result<Properties> {
        match spec.trim().to_ascii_lowercase().as_str() {
            "all" => Ok(Properties::All),
            "plot" => Ok(Properties::Plot),
            list => {
                let names: Vec<String> = list.split(',').map(|n| n.trim().to_string()).collect();
                let properties = Properties::With(names);
                check_properties(&properties)?;
                Ok(properties)
            }
        }
    }

    /// The `properties=` value for the requests on `collection`, or `None`
    /// to ask for every property.
    pub fn query_value(&self, collection: Collection) -> Option<String> {
        self.names(collection).map(|names| names.join(","))
    }

    /// The properties to read of `collection`, or `None` for every one.
    pub fn names(&self, collection: Collection) -> Option<Vec<&str>> {
        let plot = collection.plot_properties();
        let extra: &[String] = match self {
            Properties::All => return None,
            Properties::Plot => &[],
            Properties::With(_) if collection != Collection::FlowlineNetwork => &[],
            Properties::With(names) => names,
        };
        let mut names: Vec<&str> = plot.to_vec();
        for name in extra {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
        Some(names)
    }
}

/// Each listed name is a property of the network flowlines.
fn check_properties(properties: &Properties) -> Result<()> {
    let Properties::With(names) = properties else {
        return Ok(());
    };
    if let Some(bad) = names.iter().find(|n| !is_flowline_network_property(n)) {
        return Err(Error::InvalidArgument(format!(
            "properties: {bad:?} is not a network flowline property; give \"all\", \"plot\" or a comma list of flowline properties such as \"totdasqkm,slope\""
        )));
    }
    Ok(())
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
    /// A PNG file to write the drawn map to (`file`), when the map is drawn.
    pub png_file: Option<PathBuf>,
    /// Overwrite `gpkg` and `png_file` when they exist (default true).
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
    /// The properties asked of the fabric service (default all).
    pub properties: Properties,
    /// The level of detail (default true): a map too dense to read is drawn
    /// by stream order (`plot::lod`); the plot data is the same either way.
    pub lod: bool,
    /// The layers the plot data holds (default all).
    pub layers: Layers,
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
            png_file: None,
            overwrite: true,
            flowline_only: None,
            styles: PlotStyles::default(),
            basemap: tiles::DEFAULT_PROVIDER.to_string(),
            zoom: None,
            size: view::DEFAULT_SIZE,
            actually_plot: true,
            cache: CacheSetting::Default,
            properties: Properties::All,
            lod: true,
            layers: Layers::All,
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
    /// [`MAX_COMID_SET`], that `hydro_data` and the cache file are regular
    /// files when they exist ([`crate::paths::check_regular`]: a FIFO, a
    /// directory or a device is refused before anything opens it), that they
    /// and the outputs
    /// (`gpkg`, `png_file` when drawn) are different files, and that each
    /// output can be written ([`crate::output::check_outputs`]: its folder
    /// exists and takes a file, it is not a directory, it does not exist when
    /// overwrite is off), nor any file the context `ctx` reads (its CA
    /// bundle, [`Context::files_read`]).
    pub fn validate(&self, ctx: &Context) -> Result<()> {
        let read = ctx.files_read();
        for (role, path) in self.inputs() {
            crate::paths::check_regular(path, role)?;
        }
        crate::output::check_outputs(&self.inputs_and(&read), &self.outputs(), self.overwrite)?;
        for outlet in &self.outlets {
            check_outlet(outlet)?;
        }
        if let Some(set) = &self.comid_set {
            check_comid_set(set)?;
        }
        if let Some((bbox, crs)) = &self.bbox {
            check_bbox(*bbox, crs)?;
        }
        if let Some(order) = self.streamorder {
            check_streamorder(order)?;
        }
        if let Some(gpkg) = &self.gpkg {
            check_gpkg_path(gpkg)?;
        }
        if let Some(png) = &self.png_file {
            crate::render::check_png_name(png)?;
        }
        if let Some(zoom) = self.zoom {
            tiles::check_zoom(i64::from(zoom))?;
        }
        view::check_size(self.size.0, self.size.1)?;
        if let CacheSetting::File(path) = &self.cache {
            check_cache_path(path)?;
        }
        check_properties(&self.properties)?;
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

    /// The files the request reads (`hydro_data`) or keeps (`cache_data`),
    /// each with its parameter name.
    pub fn inputs(&self) -> Vec<(&'static str, &Path)> {
        let cache = match &self.cache {
            CacheSetting::File(path) => Some(path),
            _ => None,
        };
        named([
            ("hydro_data", self.hydro_data.as_ref()),
            ("cache_data", cache),
        ])
    }

    /// [`PlotRequest::inputs`] and the files of `read` (role, path), such
    /// as [`Context::files_read`]: what no output may name.
    pub fn inputs_and<'a>(&'a self, read: &'a [(String, PathBuf)]) -> Vec<(&'a str, &'a Path)> {
        let read = crate::paths::as_pairs(read);
        self.inputs().into_iter().chain(read).collect()
    }

    /// The files the request writes, each with its parameter name: `gpkg`,
    /// and `file` (the PNG) when the map is drawn.
    pub fn outputs(&self) -> Vec<(&'static str, &Path)> {
        let png = self.png_file.as_ref().filter(|_| self.actually_plot);
        named([("gpkg", self.gpkg.as_ref()), ("file", png)])
    }
}

/// The checked setters: each refuses a bad value (`Error::InvalidArgument`,
/// or the CRS error) and leaves the request unchanged.
impl PlotRequest {
    /// Adds a comid outlet (upstream tributaries plotted).
    pub fn add_comid(&mut self, comid: i64) -> Result<()> {
        self.add_outlet(Outlet::Comid(comid))
    }

    /// Adds a gauge site (`05428500` or `USGS-05428500`).
    pub fn add_site(&mut self, site: &str) -> Result<()> {
        self.add_outlet(Outlet::Site(site.trim().to_string()))
    }

    /// Adds a linked-data feature; source `comid` becomes a comid outlet.
    pub fn add_feature(&mut self, source: &str, id: &str) -> Result<()> {
        let (source, id) = (source.trim().to_ascii_lowercase(), id.trim());
        let outlet = if source == "comid" {
            Outlet::Comid(id.parse().map_err(|_| {
                Error::InvalidArgument(format!("comid feature id {id:?} is not an integer"))
            })?)
        } else {
            Outlet::Feature {
                source,
                id: id.to_string(),
            }
        };
        self.add_outlet(outlet)
    }

    /// Adds a point outlet in `crs` (`None`: EPSG:4326).
    pub fn add_point(&mut self, x: f64, y: f64, crs: Option<&str>) -> Result<()> {
        let crs = crate::crs::normalize(crs)?;
        self.add_outlet(Outlet::Point { x, y, crs })
    }

    /// Adds an outlet of any form, checked.
    pub fn add_outlet(&mut self, outlet: Outlet) -> Result<()> {
        check_outlet(&outlet)?;
        self.outlets.push(outlet);
        Ok(())
    }

    /// Sets the integer comid set (exactly these flowlines).
    pub fn set_comid_set(&mut self, comids: &[i64]) -> Result<()> {
        check_comid_set(comids)?;
        self.comid_set = Some(comids.to_vec());
        Ok(())
    }

    /// Sets the bbox `[xmin, ymin, xmax, ymax]` in `crs` (`None`: EPSG:4326).
    pub fn set_bbox(&mut self, bbox: [f64; 4], crs: Option<&str>) -> Result<()> {
        let crs = crate::crs::normalize(crs)?;
        check_bbox(bbox, &crs)?;
        self.bbox = Some((bbox, crs));
        Ok(())
    }

    /// Sets the minimum stream order (1..=12, or -1 = automatic).
    pub fn set_streamorder(&mut self, order: i32) -> Result<()> {
        check_streamorder(order)?;
        self.streamorder = Some(order);
        Ok(())
    }

    /// Sets the local NHDPlus GeoPackage to read (`hydro_data`): any path
    /// but an empty one (the file is opened, and reported, when plotting).
    pub fn set_hydro_data(&mut self, path: &Path) -> Result<()> {
        check_path_given(path, "hydro_data")?;
        self.hydro_data = Some(path.to_path_buf());
        Ok(())
    }

    /// Sets the GeoPackage output (must end in `.gpkg`).
    pub fn set_gpkg(&mut self, path: &Path) -> Result<()> {
        check_gpkg_path(path)?;
        self.gpkg = Some(path.to_path_buf());
        Ok(())
    }

    /// Sets the basemap: a provider of [`tiles::PROVIDERS`] or `"none"`
    /// (any case), checked by [`tiles::check_basemap`].
    pub fn set_basemap(&mut self, name: &str) -> Result<()> {
        tiles::check_basemap(name)?;
        self.basemap = name.to_string();
        Ok(())
    }

    /// Sets the tile zoom (0..=[`tiles::MAX_ZOOM`]).
    pub fn set_zoom(&mut self, zoom: i64) -> Result<()> {
        self.zoom = Some(tiles::check_zoom(zoom)?);
        Ok(())
    }

    /// Sets the map size in pixels (each side in [`view::SIDE_PX`]).
    pub fn set_size(&mut self, width: u32, height: u32) -> Result<()> {
        view::check_size(width, height)?;
        self.size = (width, height);
        Ok(())
    }

    /// Writes the drawn map as a PNG to `path` (`file`), replacing it only
    /// with overwrite on.
    pub fn set_png_file(&mut self, path: &Path) -> Result<()> {
        crate::render::check_png_name(path)?;
        self.png_file = Some(path.to_path_buf());
        Ok(())
    }

    /// Sets the properties asked of the fabric service: `all`, `plot` or a
    /// comma list of network flowline properties (see [`Properties::parse`]).
    pub fn set_properties(&mut self, spec: &str) -> Result<()> {
        self.properties = Properties::parse(spec)?;
        Ok(())
    }

    /// Caches the plot data in the file at `path`.
    pub fn set_cache_file(&mut self, path: &Path) -> Result<()> {
        check_cache_path(path)?;
        self.cache = CacheSetting::File(path.to_path_buf());
        Ok(())
    }
}

/// Comids are positive; sites and feature ids non-empty and without `/`
/// (they become URL path segments); points finite and on the globe.
fn check_outlet(outlet: &Outlet) -> Result<()> {
    let bad = |m: String| Err(Error::InvalidArgument(m));
    match outlet {
        Outlet::Comid(c) if *c <= 0 => bad(format!("comid {c} is not a positive integer")),
        Outlet::Site(s)
            if s.trim().is_empty()
                || s.contains('/')
                || super::site::site_number(s.trim()).is_empty() =>
        {
            bad(format!(
                "gauge site {s:?} must be a non-empty id (a site number after any \
                 agency prefix) without '/'"
            ))
        }
        Outlet::Feature { source, id }
            if source.trim().is_empty()
                || id.trim().is_empty()
                || source.contains('/')
                || id.contains('/') =>
        {
            bad(format!(
                "feature ({source:?}, {id:?}) needs a non-empty source and id without '/'"
            ))
        }
        Outlet::Point { x, y, crs } => {
            let (lon, lat) = Transformer::new(crs, super::data::PLOT_DATA_CRS)
                .and_then(|t| t.point(*x, *y))
                .map_err(|e| Error::InvalidArgument(format!("point ({x}, {y}) in {crs}: {e}")))?;
            check_lon_lat(&format!("point ({x}, {y}) in {crs}"), lon, lat)
        }
        _ => Ok(()),
    }
}

fn check_comid_set(comids: &[i64]) -> Result<()> {
    if comids.is_empty() || comids.iter().any(|&c| c <= 0) {
        return Err(Error::InvalidArgument(
            "a comid set needs at least one comid, all positive".into(),
        ));
    }
    Ok(())
}

/// Finite, `xmin < xmax` and `ymin < ymax`, and on the globe once in lon/lat.
fn check_bbox(b: [f64; 4], crs: &str) -> Result<()> {
    let what = format!("bbox ({}, {}, {}, {}) in {crs}", b[0], b[1], b[2], b[3]);
    if b.iter().any(|v| !v.is_finite()) || b[0] >= b[2] || b[1] >= b[3] {
        return Err(Error::InvalidArgument(format!(
            "{what} must be finite with xmin < xmax and ymin < ymax"
        )));
    }
    let lonlat = Transformer::new(crs, super::data::PLOT_DATA_CRS)
        .and_then(|t| t.bbox(b))
        .map_err(|e| Error::InvalidArgument(format!("{what}: {e}")))?;
    check_lon_lat(&what, lonlat[0], lonlat[1])?;
    check_lon_lat(&what, lonlat[2], lonlat[3])
}

fn check_lon_lat(what: &str, lon: f64, lat: f64) -> Result<()> {
    if (-180.0..=180.0).contains(&lon) && (-90.0..=90.0).contains(&lat) {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "{what} is longitude {lon}, latitude {lat}: outside [-180, 180] x [-90, 90]"
        )))
    }
}

fn check_streamorder(order: i32) -> Result<()> {
    if order == -1 || (1..=12).contains(&order) {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "stream order {order} must be 1..12 or -1 (automatic)"
        )))
    }
}

fn check_gpkg_path(path: &Path) -> Result<()> {
    check_path_given(path, "GeoPackage")?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.eq_ignore_ascii_case(".gpkg") {
        return Err(Error::InvalidArgument(format!(
            "The GeoPackage path {} has no name before .gpkg.",
            path.display()
        )));
    }
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gpkg"))
    {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "The GeoPackage path {} does not end in .gpkg.",
            path.display()
        )))
    }
}

/// The set paths of `files`, each with its role.
fn named<'a, const N: usize>(
    files: [(&'static str, Option<&'a PathBuf>); N],
) -> Vec<(&'static str, &'a Path)> {
    files
        .into_iter()
        .filter_map(|(role, path)| Some((role, path?.as_path())))
        .collect()
}

fn check_cache_path(path: &Path) -> Result<()> {
    check_path_given(path, "cache file")
}
