//! Issue 26's case: the whole basin of a million-flowline generated network
//! (`bench_make_network --cols 50 --rows 20 --topology-index`) from the local
//! file, against the cost of reading its bytes.
//!
//! Usage: `bench_million NETWORK.gpkg HYDROPLOT OUTLET MAP.png [OUT.json [PREFIX]]`;
//! the figures are named `PREFIX_...` (default `million`).
//! Each first plot starts from no index (`hydroplot index --remove`; the
//! index directory is `HYDROPLOT_INDEX_DIR`'s, compare.sh's own). Measures,
//! page cache warm:
//! - the SQLite scan bound: every geometry blob of the flowlines, catchments
//!   and waterbodies stepped through by SQLite alone (this process), the
//!   best of three passes before the plots and three after them, so that a
//!   busy minute on this shared machine cannot inflate the bound, and with
//!   it flatter every ratio;
//! - the first `hydroplot plot` of the outlet's basin with its map, which
//!   stores the index it needs on the way (the network, the basin parts of
//!   the basin), three times, each from no index: the median wall, the
//!   largest peak RSS;
//! - then `hydroplot plot` with its map (no basemap), and flowline-only
//!   without a map, each a child process under GNU time, three times: the
//!   median wall, the largest peak RSS;
//! - `hydroplot index` afterwards (what it adds to the plots' index), and
//!   the index file's size beside the GeoPackage's;
//! - R's `sf::st_read` of the flowline layer (the reference's first step)
//!   when `Rscript` has sf, with the default prefix only: the generator's
//!   layouts differ in their catchments, not in the flowline layer;
//! - the map's ink: the share of the data area's pixels that are not the
//!   white background, the data area being the network's extent projected
//!   with the Web Mercator formula through the map's world file.

use hydroplot_bench::{measured, run, Figures, Run};
use std::path::{Path, PathBuf};
use std::time::Instant;

const USAGE: &str =
    "usage: bench_million NETWORK.gpkg HYDROPLOT OUTLET MAP.png [OUT.json [PREFIX]]";

/// Runs of each hydroplot command. One run on this shared machine moves
/// by a fifth either way (the page cache is reclaimed under it), so the
/// median of three counts.
const RUNS: usize = 3;

/// The figures' prefix unless one is given.
const DEFAULT_PREFIX: &str = "million";

/// Passes of the scan bound that count, before the plots and again after.
const SCANS: usize = 3;

/// The layers the scan bound reads, as the generator names them.
const SCANNED: [&str; 3] = ["NHDFlowline_Network", "CatchmentSP", "NHDWaterbody"];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [network, cli, outlet, map] = [0, 1, 2, 3].map(|i| args.get(i).expect(USAGE).clone());
    let (network, cli, map) = (
        PathBuf::from(network),
        PathBuf::from(cli),
        PathBuf::from(map),
    );
    let work = std::env::temp_dir().join(format!("bench-million-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("a scratch folder");
    let stats = work.join("time.txt");
    let prefix = args.get(5).map_or(DEFAULT_PREFIX, String::as_str);
    let name = |figure: &str| format!("{prefix}_{figure}");
    let mut f = Figures::default();

    // The first pass warms the page cache; three then count, and three more
    // after the plots ([`SCANS`]).
    let mut scans: Vec<(f64, usize)> = (0..=SCANS).map(|_| scan_bound(&network)).skip(1).collect();

    let plot_once = |extra: &[&str]| -> Run {
        let mut cmd = measured(&cli, &stats);
        cmd.args(["plot", "--comid", &outlet, "--hydro-data"])
            .arg(&network)
            .args(extra);
        run(&mut cmd, &stats)
    };
    let with_map = [
        "--basemap",
        "none",
        "--world-file",
        "--out",
        map.to_str().expect(USAGE),
    ];
    // Each command [`RUNS`] times, `before` each run: the run of median
    // wall counts, with the largest peak RSS of them all; the fastest and
    // slowest walls beside.
    let mut plot = |figure: &str, extra: &[&str], before: &dyn Fn()| -> Run {
        let mut runs: Vec<Run> = (0..RUNS)
            .map(|_| {
                before();
                plot_once(extra)
            })
            .collect();
        runs.sort_by(|a, b| a.wall.total_cmp(&b.wall));
        let (fastest, slowest) = (runs[0].wall, runs[RUNS - 1].wall);
        let peak = runs.iter().map(|r| r.peak_rss_mb).fold(0.0, f64::max);
        let mut median = runs.swap_remove(RUNS / 2);
        median.peak_rss_mb = peak;
        f.put_run(&name(figure), &median);
        f.put(&name(&format!("{figure}_wall_fastest")), fastest, "s");
        f.put(&name(&format!("{figure}_wall_slowest")), slowest, "s");
        median
    };
    // The first plot stores the network and the basin parts of its basin:
    // each of its runs starts from no index (one run alone moves by a fifth).
    let no_index = || {
        let mut remove = measured(&cli, &stats);
        run(remove.args(["index", "--remove"]).arg(&network), &stats);
        let _ = std::fs::remove_file(&map);
    };
    let first = plot("first_plot", &with_map, &no_index);
    let full = plot("full", &with_map, &|| {});
    let lean = plot("flowline_only", &["--flowline-only", "--no-plot"], &|| {});
    scans.extend((0..SCANS).map(|_| scan_bound(&network)));
    let bound = scans.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
    f.put(&name("scan_bound_wall"), bound, "s");
    f.put(&name("scan_bytes"), scans[0].1 as f64 / 1e9, "GB");

    // `hydroplot index` then adds the parts no plot needed yet.
    let mut index = measured(&cli, &stats);
    f.put_run(
        &name("index"),
        &run(index.arg("index").arg(&network), &stats),
    );
    f.put(&name("index_size"), index_size(&cli, &network) / 1e9, "GB");
    let gpkg_size = std::fs::metadata(&network).expect("the network").len();
    f.put(&name("gpkg_size"), gpkg_size as f64 / 1e9, "GB");
    f.put(&name("flowlines"), count(&full.stdout, "flowline"), "");
    f.put(&name("first_plot_over_bound"), first.wall / bound, "x");
    f.put(&name("full_over_bound"), full.wall / bound, "x");
    f.put(&name("flowline_only_over_bound"), lean.wall / bound, "x");
    f.put(&name("ink"), ink(&map, extent(&network)), "");

    if prefix == DEFAULT_PREFIX && r_has_sf() {
        let mut cmd = measured("Rscript", &stats);
        let read = format!(
            "invisible(sf::st_read({:?}, 'NHDFlowline_Network', quiet = TRUE))",
            network.display().to_string()
        );
        cmd.args(["-e", &read]);
        f.put_run(&name("sf_st_read"), &run(&mut cmd, &stats));
    }
    let _ = std::fs::remove_dir_all(&work);
    f.save(args.get(4).cloned());
}

/// The bytes of the current index file of `network`, as `hydroplot index
/// --status` names it.
fn index_size(cli: &Path, network: &Path) -> f64 {
    let out = std::process::Command::new(cli)
        .args(["index", "--status"])
        .arg(network)
        .output()
        .expect("hydroplot index --status");
    let status = String::from_utf8_lossy(&out.stdout).into_owned();
    let current = status
        .lines()
        .find(|l| l.contains("(current"))
        .unwrap_or_else(|| panic!("no current index in:\n{status}"));
    let path = current
        .split_whitespace()
        .find(|w| w.ends_with(".hydroplot-index"))
        .unwrap_or_else(|| panic!("no index file named in: {current}"));
    std::fs::metadata(path).expect("the index file").len() as f64
}

fn count(stdout: &str, layer: &str) -> f64 {
    hydroplot_bench::printed_count(stdout, layer)
}

/// Seconds for SQLite to step through every geometry of [`SCANNED`], and the
/// blob bytes it handed over (each blob's first and last byte are read).
fn scan_bound(network: &Path) -> (f64, usize) {
    let db =
        rusqlite::Connection::open_with_flags(network, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("the network GeoPackage");
    let t = Instant::now();
    let (mut bytes, mut touched) = (0usize, 0u64);
    for table in SCANNED {
        let mut stmt = db
            .prepare(&format!("SELECT geom FROM \"{table}\""))
            .expect("a geometry query");
        let mut rows = stmt.query([]).expect("the scan");
        while let Some(row) = rows.next().expect("a row") {
            if let Ok(blob) = row.get_ref(0).expect("a column").as_blob() {
                bytes += blob.len();
                touched += u64::from(blob.first().copied().unwrap_or(0))
                    + u64::from(blob.last().copied().unwrap_or(0));
            }
        }
    }
    std::hint::black_box(touched);
    (t.elapsed().as_secs_f64(), bytes)
}

/// The box around the flowlines and catchments (`gpkg_contents`), lon/lat.
fn extent(network: &Path) -> [f64; 4] {
    let db =
        rusqlite::Connection::open_with_flags(network, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("the network GeoPackage");
    db.query_row(
        "SELECT min(min_x), min(min_y), max(max_x), max(max_y) FROM gpkg_contents \
         WHERE table_name IN ('NHDFlowline_Network', 'CatchmentSP')",
        [],
        |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?]),
    )
    .expect("the extent")
}

/// The share of the pixels inside `extent` (lon/lat) that are not white,
/// located through the world file beside `png` (`.pgw`: pixel size x, two
/// rotations, pixel size y, then the centre of the top-left pixel, metres).
fn ink(png: &Path, extent: [f64; 4]) -> f64 {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png).expect("the map"),
    ));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("the pixels");
    let channels = info.color_type.samples();
    let world: Vec<f64> = std::fs::read_to_string(png.with_extension("pgw"))
        .expect("the world file")
        .split_whitespace()
        .map(|v| v.parse().expect("a number"))
        .collect();
    let (sx, sy, x0, y0) = (world[0], world[3], world[4], world[5]);
    let mercator = |lon: f64, lat: f64| {
        const R: f64 = 6_378_137.0;
        let (l, p) = (lon.to_radians(), lat.to_radians());
        (
            R * l,
            R * (std::f64::consts::FRAC_PI_4 + p / 2.0).tan().ln(),
        )
    };
    let (ax, ay) = mercator(extent[0], extent[3]);
    let (bx, by) = mercator(extent[2], extent[1]);
    let column = |x: f64| ((x - x0) / sx + 0.5).clamp(0.0, f64::from(info.width)) as u32;
    let row = |y: f64| ((y - y0) / sy + 0.5).clamp(0.0, f64::from(info.height)) as u32;
    let (mut inked, mut all) = (0u64, 0u64);
    for r in row(ay)..row(by) {
        for c in column(ax)..column(bx) {
            let at = (r * info.width + c) as usize * channels;
            let pixel = &buf[at..at + channels.min(3)];
            inked += u64::from(pixel.iter().any(|&v| v != 255));
            all += 1;
        }
    }
    inked as f64 / all.max(1) as f64
}

/// True when `Rscript` runs and has the sf package.
fn r_has_sf() -> bool {
    std::process::Command::new("Rscript")
        .args([
            "-e",
            "quit(status = !requireNamespace('sf', quietly = TRUE))",
        ])
        .output()
        .is_ok_and(|o| o.status.success())
}
