//! `hydroplot`: the command-line face of the library, over the same core.
//!
//! ```text
//! hydroplot plot [outlets | --bbox ...] [options]
//! hydroplot trace --point X,Y[,CRS] [--direction down|up|none] [options]
//! hydroplot trace --points FILE [--crs CRS] [--direction D] --geojson OUT [--errors FILE.csv]
//! hydroplot comid --points FILE [--crs CRS] [--hydro-data NATIONAL.gpkg] --out OUT.csv [--errors FILE.csv]
//! hydroplot index [--beside | --remove | --status] [--option index_dir=DIR] FILE.gpkg
//! hydroplot --version
//! ```
//! Run `hydroplot help` for every flag.

use hydroplot::config::Config;
use hydroplot::gpkg::{
    index_geopackage, index_status, unindex_geopackage, IndexPlace, IndexedParts, PartsOutcome,
    REACHES_PER_PART,
};
use hydroplot::plot::{plot_hydro, CacheSetting, Layer, Layers, Outlet, Plot, PlotRequest};
use hydroplot::render::TileCacheMode;
use hydroplot::services::flowtrace::raindrop_trace;
use hydroplot::trace::map::{trace_map, TraceMapSpec};
use hydroplot::{Context, Error, Result};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `println!`, `print!`, `eprintln!` and `eprint!` that go on when the
/// stream is closed (`hydroplot ... | head`, a log reader gone): the files
/// asked for are still written, since a pipe's reader leaving early does
/// not take them back. `std`'s would panic there.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}
macro_rules! say_part {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
macro_rules! note_part {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

#[path = "hydroplot/batch.rs"]
mod batch;
#[path = "hydroplot/interrupt.rs"]
mod interrupt;
#[path = "hydroplot/terminal.rs"]
mod terminal;

/// The Yahara sample GeoPackage, embedded so the demo runs offline anywhere.
const SAMPLE_GPKG: &[u8] = include_bytes!("../../tests/data/yahara_sample.gpkg");
/// The outlet the sample demo plots: the Yahara below Lake Mendota's inflows.
const SAMPLE_COMID: i64 = 13293970;

const HELP: &str = "\
hydroplot plot: basins, upstream flowlines and waterbodies as a map (PNG) and GeoJSON

  Outlets (combinable)     --comid N   --site ID   --feature SOURCE:ID   --point X,Y[,CRS]
  Or exactly these         --comid-set N,N,...
  Or everything in a box   --bbox XMIN,YMIN,XMAX,YMAX[,CRS]
  --streamorder N          only streams of order >= N (-1 = automatic from basin area)
  --hydro-data PATH        read a local NHDPlus GeoPackage instead of downloading
                           (only read; its first plot stores its network in the
                           index directory for the next ones, and a large
                           basin's first plot its basin parts, see index)
  --no-index               store nothing for the next plots (option index=off)
  --sample                 use the embedded Yahara sample GeoPackage (offline: no
                           basemap unless --basemap); without outlets, comid 13293970
  --gpkg OUT.gpkg          write the subset;  --no-overwrite keeps every existing output
  --flowline-only          only flowlines
  --properties all|plot|N,N,...  columns fetched or read: all, plot (what the map
                           reads: a smaller download, the same map), or flowline
                           columns added to plot (totdasqkm,slope); default: plot
                           when only a map or the counts are asked for (a local file:
                           fewer still), all with --gpkg/--geojson/--html
  --style ELEMENT.PROP=V   plot_config, e.g. flowline.col=red basin.lwd=2 outlets.nwissite.pch=17
  --basemap NAME|none      Esri.NatGeoWorldMap (default), OpenStreetMap, CartoDB.Positron, ...
  --zoom Z  --size WxH     tiles zoom; image size (default 1024x768)
  --no-plot                only the data (alone: the counts of every layer)
  --no-lod                 draw every feature at every scale (default: a map too dense
                           to read shows flowlines by stream order; data never thinned)
  --cache-file PATH | --no-cache
  --out FILE.png           the map (default hydroplot.png, replaced only while it is a
                           map hydroplot drew)
  --world-file             georeference it: FILE.pgw and FILE.png.aux.xml (EPSG:3857) beside it
  --geojson FILE           all layers as one GeoJSON object {layer: FeatureCollection}
  --html FILE.html         an interactive Leaflet map in one self-contained file
  --html-no-catchments     leave the catchments out of it (a smaller page)
  --option KEY=VALUE       a context option (index_url, fabric_url, timeout_s, ...)

hydroplot trace: the raindrop trace of a point
  --point X,Y[,CRS]  --direction down|up|none  --geojson FILE  --option KEY=VALUE
  --out FILE.png           the spec's trace map: the trace's box plus 0.005 degrees,
                           the point, the flowline in red, the raindrop path in black
  --size WxH  --no-cache   its size (default 800x800); no persistent tile cache
  --world-file             with --out: its world file and .aux.xml (EPSG:3857) beside it
  --html FILE.html  --basemap NAME|none   an interactive map of the trace
  --no-overwrite           keep every existing output (an error instead)

hydroplot trace --points FILE --geojson OUT: the raindrop traces of many points
  FILE is a CSV with lon and lat columns (other columns are carried into the output)
  or a GeoJSON FeatureCollection of points (their properties are carried)
  --crs CRS                the CRS of the points (default EPSG:4326)
  --direction D            down (default), up or none
  --errors FILE.csv        the points that failed: point_index, carried columns, error
  --geojson OUT            each point's 2 features with point_index (0-based) and its
                           columns, in input order; N traced, M failed on stderr

hydroplot comid --points FILE --out OUT.csv: the comid of the catchment holding each point
  FILE, --crs, --errors    as for trace --points
  --hydro-data PATH        look up in a local NHDPlus GeoPackage's catchments (no request);
                           without it the fabric service answers, concurrently
  --out OUT.csv            point_index, carried columns, comid (empty: in no catchment)
  --no-overwrite           (both batch commands) keep every existing output

hydroplot index [--beside | --remove | --status] [--option index_dir=DIR] FILE.gpkg
  makes a national-scale NHDPlus GeoPackage fast as --hydro-data: stores its
  flowline network and the basin parts that make its large basins fast
  (outlines of parts of the network) in an index file of hydroplot's own;
  FILE.gpkg is only read, never written (a read-only file works). The index
  records the file's identity (device, inode, size, time, SQLite's change
  counter and schema cookie, the WAL) and rowid range: after any edit or copy
  over the file it is not used until the next index. Refuses other files,
  may run twice. By default the index is in the index directory (option
  index_dir, HYDROPLOT_INDEX_DIR; else $XDG_CACHE_HOME/hydroplot/index or
  ~/.cache/hydroplot/index); plots look beside the file, then there
  --beside                 writes FILE.gpkg.hydroplot-index beside the file
  --status                 says where the index is and whether it is current
  --remove                 deletes the index files, and takes an index of
                           release 0.2 out of FILE.gpkg if it holds one (the
                           only change hydroplot ever makes to a user's file)

hydroplot --version
";

/// The exit status of a command stopped by Ctrl-C or SIGTERM: 128 + SIGINT,
/// as shells report an interrupted program.
const INTERRUPTED: u8 = 130;

fn main() -> ExitCode {
    return_big_buffers_to_the_system();
    let args = match utf8_args() {
        Ok(args) => args,
        Err(e) => {
            note!("hydroplot: {e}");
            return ExitCode::FAILURE;
        }
    };
    // `hydroplot plot --help` (or -h) anywhere: the help, not a flag's value.
    let asked_help = args.iter().skip(1).any(|a| a == "--help" || a == "-h");
    let result = match args.first().map(String::as_str) {
        Some(_) if asked_help => {
            say_part!("{HELP}");
            Ok(())
        }
        Some("plot") => plot(&args[1..]),
        Some("trace") => trace(&args[1..]),
        Some("comid") => comid(&args[1..]),
        Some("index") => index(&args[1..]),
        Some("version" | "--version" | "-V") => {
            say!("hydroplot {}", hydroplot::VERSION);
            Ok(())
        }
        Some("help" | "--help" | "-h") | None => {
            say_part!("{HELP}");
            Ok(())
        }
        Some(other) => Err(Error::InvalidArgument(format!(
            "unknown command {other:?}; try `hydroplot help`"
        ))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ Error::Cancelled(_)) => {
            note!("hydroplot: {e}");
            ExitCode::from(INTERRUPTED)
        }
        Err(e) => {
            note!("hydroplot: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The arguments after the program's name; one that is not UTF-8 text (a
/// file name in another encoding) is an error naming its position, where
/// `std::env::args` would panic.
fn utf8_args() -> Result<Vec<String>> {
    (std::env::args_os().enumerate().skip(1))
        .map(|(i, arg)| {
            arg.into_string().map_err(|arg| {
                bad(&format!(
                    "argument {i} ({}) is not UTF-8 text; rename the file or give a UTF-8 path",
                    arg.to_string_lossy()
                ))
            })
        })
        .collect()
}

fn comid(args: &[String]) -> Result<()> {
    batch::comid(&Flags::parse(args)?)
}

/// Flags as (name, value) pairs; flags without a value get "".
struct Flags(Vec<(String, String)>);

impl Flags {
    const SWITCHES: &'static [&'static str] = &[
        "--sample",
        "--no-overwrite",
        "--flowline-only",
        "--no-plot",
        "--no-lod",
        "--no-cache",
        "--no-index",
        "--html-no-catchments",
        "--world-file",
    ];

    fn parse(args: &[String]) -> Result<Flags> {
        let mut out = Vec::new();
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            if !flag.starts_with("--") {
                return Err(bad(&format!("unexpected argument {flag:?}")));
            }
            let value = if Self::SWITCHES.contains(&flag.as_str()) {
                String::new()
            } else {
                // `--out --geojson x` is a value forgotten, not a file
                // named "--geojson".
                match it.next() {
                    Some(v) if !v.starts_with("--") => v.clone(),
                    next => {
                        let got = next.map_or(String::new(), |v| format!(" (got the flag {v})"));
                        return Err(bad(&format!("{flag} needs a value{got}")));
                    }
                }
            };
            out.push((flag.clone(), value));
        }
        Ok(Flags(out))
    }
}

/// Makes glibc map every allocation of 1 MiB or more on its own, so that a
/// freed one (a layer's buffer, a page, a basin's edge table) goes back to
/// the system at once. Otherwise glibc raises that threshold to 32 MiB after
/// the first such free, and the buffers freed while a million-flowline
/// basin is read stay resident: 120 MB of its peak. The CLI owns its
/// process; the library never changes the allocator of its host's.
fn return_big_buffers_to_the_system() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a tuning parameter; called before any thread.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

fn bad(message: &str) -> Error {
    Error::InvalidArgument(message.to_string())
}

fn numbers(value: &str, flag: &str) -> Result<(Vec<f64>, Option<String>)> {
    let mut parts: Vec<&str> = value.split(',').map(str::trim).collect();
    let crs = match parts.last() {
        Some(last) if last.parse::<f64>().is_err() => {
            Some(parts.pop().unwrap_or_default().to_string())
        }
        _ => None,
    };
    let nums = parts
        .iter()
        .map(|p| {
            p.parse::<f64>()
                .map_err(|_| bad(&format!("{flag}: {p:?} is not a number")))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((nums, crs))
}

/// `WxH` in pixels; the core checks the range.
fn size(value: &str) -> Result<(u32, u32)> {
    let parse = |p: &str| p.trim().parse::<u32>().ok();
    value
        .split_once('x')
        .and_then(|(w, h)| Some((parse(w)?, parse(h)?)))
        .ok_or_else(|| bad(&format!("--size takes WxH in pixels, not {value:?}")))
}

/// The context of `--option KEY=VALUE` flags over the `HYDROPLOT_*`
/// environment (a key given as an option is not read from it).
fn context(flags: &Flags) -> Result<Context> {
    let mut options = (flags.0.iter())
        .filter(|(flag, _)| flag == "--option")
        .map(|(_, value)| {
            value
                .split_once('=')
                .ok_or_else(|| bad("--option takes KEY=VALUE"))
        })
        .collect::<Result<Vec<(&str, &str)>>>()?;
    // The embedded sample is a new temporary copy each run: nothing to
    // store for a next plot.
    let no_index = ["--no-index", "--sample"];
    if flags
        .0
        .iter()
        .any(|(flag, _)| no_index.contains(&flag.as_str()))
    {
        options.push(("index", "off"));
    }
    let ctx = Context::new(Config::from_env_and(&options)?)?;
    interrupt::cancel_on_signal(&ctx.canceller());
    Ok(ctx)
}

fn plot(args: &[String]) -> Result<()> {
    let flags = Flags::parse(args)?;
    let ctx = context(&flags)?.with_observer(Some(terminal::Terminal::on_stderr(false)));
    let mut req = PlotRequest::default();
    let mut out: Option<PathBuf> = None;
    let mut geojson: Option<PathBuf> = None;
    let mut html: Option<PathBuf> = None;
    let mut html_options = hydroplot::html::HtmlOptions::default();
    let mut sample = false;
    for (flag, v) in &flags.0 {
        let int = |v: &str| {
            v.trim()
                .parse::<i64>()
                .map_err(|_| bad(&format!("{flag}: {v:?} is not an integer")))
        };
        match flag.as_str() {
            "--comid" => req.add_comid(int(v)?)?,
            "--site" => req.add_site(v)?,
            "--feature" => {
                let (source, id) = v
                    .split_once(':')
                    .ok_or_else(|| bad("--feature takes SOURCE:ID"))?;
                req.add_feature(source, id)?;
            }
            "--point" => {
                let (n, crs) = numbers(v, flag)?;
                let [x, y] = n[..] else {
                    return Err(bad("--point takes X,Y[,CRS]"));
                };
                req.add_point(x, y, crs.as_deref())?;
            }
            "--comid-set" => {
                req.set_comid_set(&v.split(',').map(int).collect::<Result<Vec<_>>>()?)?
            }
            "--bbox" => {
                let (n, crs) = numbers(v, flag)?;
                let [a, b, c, d] = n[..] else {
                    return Err(bad("--bbox takes XMIN,YMIN,XMAX,YMAX[,CRS]"));
                };
                req.set_bbox([a, b, c, d], crs.as_deref())?;
            }
            "--streamorder" => {
                let order =
                    i32::try_from(int(v)?).map_err(|_| bad("--streamorder: out of range"))?;
                req.set_streamorder(order)?
            }
            "--hydro-data" => req.set_hydro_data(Path::new(v))?,
            "--sample" => sample = true,
            "--gpkg" => req.set_gpkg(Path::new(v))?,
            "--no-overwrite" => req.overwrite = false,
            "--flowline-only" => req.flowline_only = Some(true),
            "--properties" => req.set_properties(v)?,
            "--style" => {
                let (target, value) = v
                    .split_once('=')
                    .ok_or_else(|| bad("--style takes ELEMENT.PROP=VALUE"))?;
                let (element, property) = target
                    .rsplit_once('.')
                    .ok_or_else(|| bad("--style takes ELEMENT.PROP=VALUE"))?;
                req.styles.set(element, property, value)?;
            }
            "--basemap" => req.set_basemap(v)?,
            "--zoom" => req.set_zoom(int(v)?)?,
            "--size" => {
                let (width, height) = size(v)?;
                req.set_size(width, height)?;
            }
            "--no-plot" => req.actually_plot = false,
            "--no-lod" => req.lod = false,
            "--cache-file" => req.set_cache_file(Path::new(v))?,
            "--no-cache" => req.cache = CacheSetting::Disabled,
            "--out" => out = Some(PathBuf::from(v)),
            "--geojson" => geojson = Some(PathBuf::from(v)),
            "--html" => html = Some(PathBuf::from(v)),
            "--html-no-catchments" => html_options.catchments = false,
            "--option" | "--world-file" | "--no-index" => {}
            other => return Err(bad(&format!("unknown flag {other}; try `hydroplot help`"))),
        }
    }
    let _sample_file;
    if sample {
        check_sample_flags(&req)?;
        // Offline demo: no basemap unless one was asked for.
        if !flags.0.iter().any(|(f, _)| f == "--basemap") {
            req.basemap = "none".into();
        }
        let file = SampleFile::write()?;
        req.hydro_data = Some(file.0.path().to_path_buf());
        _sample_file = file;
        if req.outlets.is_empty() && req.comid_set.is_none() && req.bbox.is_none() {
            req.outlets.push(Outlet::Comid(SAMPLE_COMID));
        }
    }
    // Only the columns and layers the outputs need are read: the map alone
    // needs what `--properties plot` reads and the layers it draws (the
    // counts printed are then those layers'); no output at all (`--no-plot`:
    // the counts) needs every layer but, of a local file, only the columns
    // plot_hydro works with, unless `--properties` says otherwise; a data
    // output gets every layer and column.
    let data_out = req.gpkg.is_some() || geojson.is_some() || html.is_some();
    let properties_given = flags.0.iter().any(|(f, _)| f == "--properties");
    if !data_out {
        if !properties_given {
            req.properties = hydroplot::plot::Properties::Plot;
        }
        if req.actually_plot {
            req.layers = Layers::Drawn;
        } else if !properties_given {
            req.layers = Layers::Counted;
        }
    }
    // The core writes the map; the other outputs are checked here against
    // it, the inputs and the cache, and written below (before any request).
    let out = match out {
        Some(_) if !req.actually_plot => {
            return Err(bad(
                "--out names the map, and --no-plot draws none; leave one out",
            ))
        }
        Some(out) => out,
        None => default_map(req.actually_plot)?,
    };
    req.set_png_file(&out)?;
    let read = ctx.files_read();
    let mut files = req.inputs_and(&read);
    files.extend(req.outputs());
    let sidecars = world_files(&flags, req.actually_plot.then_some(out.as_path()))?;
    let mut outputs = vec![
        ("--geojson", geojson.as_deref()),
        ("--html", html.as_deref()),
    ];
    outputs.extend(sidecars.iter().map(|p| ("--world-file", Some(p.as_path()))));
    check_outputs(&files, &outputs, req.overwrite)?;
    let Plot { data, map, drawing } = plot_hydro(&ctx, &req, None)?;
    for w in &data.warnings {
        note!("warning: {w}");
    }
    let listed: &[Layer] = match req.layers {
        Layers::All | Layers::Counted => &Layer::ALL,
        Layers::Drawn => &Layer::DRAWN,
    };
    for &layer in listed {
        say!(
            "{:<20} {:>7} features",
            layer.name(),
            data.layer(layer).len()
        );
    }
    if let Some(map) = &map {
        say!("map        {}", out.display());
        write_world_files(map, &out, &sidecars)?;
    }
    if let Some(path) = geojson {
        hydroplot::output::write_atomically_until(&path, req.overwrite, ctx.stop(), |w| {
            write_layers_json(w, &data)
        })?;
        say!("geojson    {}", path.display());
    }
    if let Some(path) = html {
        let page = hydroplot::html::plot_data_page(&data, &drawing, &html_options)?;
        let mut warnings = Vec::new();
        hydroplot::output::write_atomically_until(&path, req.overwrite, ctx.stop(), |w| {
            warnings = page.write(w)?;
            Ok(())
        })?;
        report_html(&path, &warnings);
    }
    Ok(())
}

/// All layers as one JSON object `{ "flowline": FeatureCollection, ... }`,
/// streamed to `w` layer by layer, row by row.
fn write_layers_json(
    w: &mut dyn std::io::Write,
    data: &hydroplot::plot::PlotData,
) -> std::io::Result<()> {
    w.write_all(b"{")?;
    for (i, layer) in Layer::ALL.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        write!(w, "\"{}\":", layer.name())?;
        hydroplot::table::geojson::write_collection(w, data.layer(*layer))?;
    }
    w.write_all(b"}")
}

fn trace(args: &[String]) -> Result<()> {
    let flags = Flags::parse(args)?;
    if flags.0.iter().any(|(f, _)| f == "--points") {
        return batch::trace_points(&flags);
    }
    let ctx = context(&flags)?;
    let (mut point, mut crs, mut direction, mut geojson, mut html) = (None, None, None, None, None);
    let (mut out, mut map_size, mut cache) = (
        None,
        hydroplot::trace::map::DEFAULT_SIZE,
        TileCacheMode::of(&ctx.config),
    );
    let mut basemap = hydroplot::render::tiles::DEFAULT_PROVIDER.to_string();
    let mut overwrite = true;
    for (flag, v) in &flags.0 {
        match flag.as_str() {
            "--point" => {
                let (n, c) = numbers(v, flag)?;
                let [x, y] = n[..] else {
                    return Err(bad("--point takes X,Y[,CRS]"));
                };
                point = Some([x, y]);
                crs = c;
            }
            "--direction" => direction = Some(v.clone()),
            "--geojson" => geojson = Some(PathBuf::from(v)),
            "--html" => html = Some(PathBuf::from(v)),
            "--out" => out = Some(PathBuf::from(v)),
            "--size" => map_size = size(v)?,
            "--no-cache" => cache = TileCacheMode::Off,
            "--basemap" => {
                hydroplot::render::tiles::check_basemap(v)?;
                basemap = v.clone();
            }
            "--no-overwrite" => overwrite = false,
            "--option" | "--world-file" | "--no-index" => {}
            other => return Err(bad(&format!("unknown flag {other}; try `hydroplot help`"))),
        }
    }
    let [x, y] = point.ok_or_else(|| bad("trace needs --point X,Y[,CRS]"))?;
    let spec = TraceMapSpec {
        point: [x, y],
        crs: crs.as_deref().unwrap_or(hydroplot::crs::DEFAULT_CRS),
        size: map_size,
        basemap: &basemap,
    };
    if let Some(out) = &out {
        spec.check()?;
        hydroplot::render::check_png_name(out)?;
    }
    let sidecars = world_files(&flags, out.as_deref())?;
    let mut outputs = vec![
        ("--out", out.as_deref()),
        ("--geojson", geojson.as_deref()),
        ("--html", html.as_deref()),
    ];
    outputs.extend(sidecars.iter().map(|p| ("--world-file", Some(p.as_path()))));
    let read = ctx.files_read();
    let read: Vec<(&str, &Path)> = hydroplot::paths::as_pairs(&read).collect();
    check_outputs(&read, &outputs, overwrite)?;
    let t = raindrop_trace(&ctx, x, y, crs.as_deref(), direction.as_deref())?;
    for f in &t.features {
        say!(
            "{:<20} comid {:<10} {:<20} {} vertices",
            f.id,
            f.comid.map_or("-".into(), |c| c.to_string()),
            f.gnis_name.as_deref().unwrap_or("-"),
            f.coords.len() / 2
        );
    }
    if let Some(path) = out {
        let mut warnings = Vec::new();
        let map = trace_map(&ctx, &t, &spec, &cache, &mut warnings)?;
        for w in &warnings {
            note!("warning: {w}");
        }
        let png = map.png()?;
        hydroplot::output::write_atomically_until(&path, overwrite, ctx.stop(), |w| {
            w.write_all(&png)
        })?;
        say!("map        {}", path.display());
        write_world_files(&map, &path, &sidecars)?;
    }
    if let Some(path) = geojson {
        let text = t.to_geojson();
        hydroplot::output::write_atomically_until(&path, overwrite, ctx.stop(), |w| {
            w.write_all(&text)
        })?;
    }
    if let Some(path) = html {
        let style = hydroplot::html::TraceStyle::default();
        let page =
            hydroplot::html::trace_html(&t, &style, &basemap, ctx.config.tile_url.as_deref())?;
        hydroplot::output::write_atomically_until(&path, overwrite, ctx.stop(), |w| {
            w.write_all(page.html.as_bytes())
        })?;
        report_html(&path, &page.warnings);
    }
    Ok(())
}

/// The map's name without `--out`.
const DEFAULT_MAP: &str = "hydroplot.png";

/// The map's name when `--out` is not given: [`DEFAULT_MAP`], which a later
/// run replaces only while it is a map this library drew. A file of that
/// name that is not (the user's own image, notes) was never declared an
/// output, so it is refused before any work when a map is to be drawn.
fn default_map(drawn: bool) -> Result<PathBuf> {
    let path = PathBuf::from(DEFAULT_MAP);
    let theirs =
        std::fs::symlink_metadata(&path).is_ok() && !hydroplot::render::is_a_map_drawn_here(&path);
    if drawn && theirs {
        return Err(Error::Exists(format!(
            "{DEFAULT_MAP} exists and is not a map hydroplot drew; name the map with --out FILE.png"
        )));
    }
    Ok(path)
}

/// With `--sample` the data is the embedded sample, copied to a new
/// temporary file each run: `--hydro-data` would be ignored (and never
/// checked against the outputs), and a plot-data cache keyed by that copy
/// would never be hit, only grow. Both are refused.
fn check_sample_flags(req: &PlotRequest) -> Result<()> {
    if req.hydro_data.is_some() {
        return Err(bad(
            "--sample and --hydro-data both name the data to plot; give one of them",
        ));
    }
    if matches!(req.cache, CacheSetting::File(_)) {
        return Err(bad(
            "--sample reads a fresh copy of the sample each run, so a --cache-file would never be hit; leave it out",
        ));
    }
    Ok(())
}

/// Checks the given ones of `outputs` (flag, path) against `others` and
/// each other, and that each can be written, before any work.
fn check_outputs(
    others: &[(&str, &Path)],
    outputs: &[(&str, Option<&Path>)],
    overwrite: bool,
) -> Result<()> {
    let given: Vec<(&str, &Path)> = outputs
        .iter()
        .filter_map(|(flag, path)| Some((*flag, (*path)?)))
        .collect();
    check_files(others, &given, overwrite)
}

/// The library's check of `outputs` against `others`
/// ([`hydroplot::output::check_outputs`]), after refusing `-`, which would
/// otherwise become a file of that name where a user expects stdout.
fn check_files(others: &[(&str, &Path)], outputs: &[(&str, &Path)], overwrite: bool) -> Result<()> {
    if let Some((flag, _)) = outputs.iter().find(|(_, p)| p.as_os_str() == "-") {
        return Err(bad(&format!(
            "{flag} -: outputs go to files, not to standard output; give a file name"
        )));
    }
    hydroplot::output::check_outputs(others, outputs, overwrite)
}

/// The world file and `.aux.xml` that `--world-file` asks for beside the PNG
/// `png` (none without the flag); an error, before any request, when no PNG
/// is made.
fn world_files(flags: &Flags, png: Option<&Path>) -> Result<Vec<PathBuf>> {
    if !flags.0.iter().any(|(f, _)| f == "--world-file") {
        return Ok(Vec::new());
    }
    let png = png.ok_or_else(|| bad("--world-file places the PNG map: it needs a map (--out)"))?;
    Ok(hydroplot::render::georef::sidecar_paths(png)?.to_vec())
}

/// Writes the world files `sidecars` of the map's PNG `png`, when asked for.
fn write_world_files(map: &hydroplot::render::Map, png: &Path, sidecars: &[PathBuf]) -> Result<()> {
    if !sidecars.is_empty() {
        for path in map.write_georeference(png)? {
            say!("world file {}", path.display());
        }
    }
    Ok(())
}

fn index(args: &[String]) -> Result<()> {
    const USAGE: &str =
        "index takes the GeoPackage file, one of --beside, --remove or --status, and --option KEY=VALUE";
    let (mut mode, mut options, mut file) = (None, Vec::new(), None);
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--beside" | "--remove" | "--status" if mode.is_none() => mode = Some(arg.as_str()),
            "--option" => {
                let value = rest.next().ok_or_else(|| bad("--option takes KEY=VALUE"))?;
                options.push(
                    value
                        .split_once('=')
                        .ok_or_else(|| bad("--option takes KEY=VALUE"))?,
                );
            }
            a if !a.starts_with("--") && file.is_none() => file = Some(a),
            _ => return Err(bad(USAGE)),
        }
    }
    let file = Path::new(file.ok_or_else(|| bad(USAGE))?);
    let config = Config::from_env_and(&options)?;
    let canceller = hydroplot::cancel::Canceller::new();
    interrupt::cancel_on_signal(&canceller);
    let stop = canceller.stop_for_call();
    let shown = file.display();
    match mode {
        Some("--remove") => {
            let removed = unindex_geopackage(file, &config.index_dir, &stop)?;
            for path in &removed.index_files {
                say!("deleted {}", path.display());
            }
            let what = match (removed.topology_index, removed.parts) {
                (true, true) => Some("the topology index and the basin parts"),
                (true, false) => Some("the topology index"),
                (false, true) => Some("the basin parts"),
                (false, false) => None,
            };
            if let Some(what) = what {
                say!("removed {what} of release 0.2 from {shown}");
            }
            if removed.index_files.is_empty() && what.is_none() {
                say!("{shown} has no index of hydroplot; nothing changed");
            }
        }
        Some("--status") => {
            let status = index_status(file, &config.index_dir)?;
            for found in &status.found {
                let state = if found.current {
                    "current"
                } else {
                    "stale (not used)"
                };
                let parts = match &found.parts {
                    Some(IndexedParts::Complete { parts }) => format!("; {parts} basin parts"),
                    Some(IndexedParts::Partial { parts: 0 }) => {
                        "; no basin parts yet (the first plot of a large basin or `hydroplot index` makes them)".into()
                    }
                    Some(IndexedParts::Partial { parts }) => format!(
                        "; {parts} basin parts of the basins plotted so far (`hydroplot index` makes the rest)"
                    ),
                    Some(IndexedParts::Skipped { why }) => format!("; no basin parts: {why}"),
                    None => String::new(),
                };
                say!("index {} ({state}){parts}", found.path.display());
            }
            if status.in_file {
                say!("{shown} holds an index of release 0.2 (read while current; `hydroplot index --remove` takes it out)");
            }
            if status.found.is_empty() && !status.in_file {
                say!("{shown} has no index of hydroplot");
            }
        }
        _ => {
            let place = match mode {
                Some("--beside") => IndexPlace::Beside,
                _ => IndexPlace::Dir(&config.index_dir),
            };
            let line = terminal::Terminal::on_stderr(false);
            let mut progress = |done: usize, all: usize| {
                line.progress("basin_parts", done as u64, all as u64);
            };
            let indexed = index_geopackage(
                file,
                place,
                REACHES_PER_PART,
                config.threads,
                &stop,
                &mut progress,
            )?;
            let index = indexed.path.display();
            let parts = match indexed.parts {
                PartsOutcome::Parts { parts } => format!("{parts} basin parts"),
                PartsOutcome::Skipped { why } => format!("no basin parts: {why}"),
            };
            match indexed.written {
                true => say!(
                    "indexed {shown} in {index}: {} flowlines, {parts}",
                    indexed.reaches
                ),
                false => say!(
                    "{index} is current for {shown} ({} flowlines, {parts}); nothing changed",
                    indexed.reaches
                ),
            }
        }
    }
    Ok(())
}

/// The warnings of the page written at `path`, then its name and size.
fn report_html(path: &Path, warnings: &[String]) {
    for w in warnings {
        note!("warning: {w}");
    }
    let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    say!("html       {} ({bytes} bytes)", path.display());
}

/// The embedded sample written to a temporary file of its own, removed on drop.
struct SampleFile(hydroplot::output::TempFile);

impl SampleFile {
    fn write() -> Result<SampleFile> {
        // A fresh name (never an existing file), filled, then kept until drop.
        // One target name for every run, so a run removes what a killed run left.
        let temp = hydroplot::output::TempFile::beside(
            &std::env::temp_dir().join("hydroplot-sample.gpkg"),
        )?;
        std::fs::write(temp.path(), SAMPLE_GPKG)
            .map_err(|e| hydroplot::error::io_error(temp.path(), e))?;
        Ok(SampleFile(temp))
    }
}
