//! Issue 16's benchmark: every flowline of a generated network fetched by
//! bounding box, then the plot-data cache, the map from the cache and the
//! GeoJSON output, for the `hydroplot` CLI and the Python peer, each run as
//! its own child process on the same loopback mock, so wall time, CPU time
//! and peak RSS are measured the same way for both (GNU time's rusage).
//!
//! Usage: `bench_bbox NETWORK.gpkg HYDROPLOT [PYTHON PEER.py] [OUT.json]`,
//! where HYDROPLOT is the release CLI and PEER.py is `bench/peer_bbox.py`.
//! Prints `name value unit` lines, then the targets beside the figures.
//! With `GDAL_DRIVER_PATH` naming the folder of a built `ogr_HYDROPLOT.so`,
//! it also times `ogr2ogr -f GPKG` of the same box through the driver beside
//! `hydroplot plot --flowline-only --gpkg` (issue 25's target: within 1.5x).

use hydroplot_bench::{
    cpu_s, measured, network_box, printed_count, replay, run, BoxArgs, Figures, Mock, Run,
};
use std::path::Path;

/// Features per page, pynhd FabricData's maximum, for both stacks.
const PAGE_SIZE: u32 = 1000;
/// Connections for hydroplot and for the transfer bound (the 8).
const CONNECTIONS: usize = 8;
const MAP_SIZE: &str = "2048x2048";

fn main() {
    let BoxArgs {
        network,
        cli,
        peer,
        out,
    } = BoxArgs::from_env("usage: bench_bbox NETWORK.gpkg HYDROPLOT [PYTHON PEER.py] [OUT.json]");
    let work = std::env::temp_dir().join(format!("bench-bbox-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("work directory");
    let mut mock = Mock::start(&network);
    let bbox = network_box(&network);
    let env = mock.env(&work.join("tiles"), PAGE_SIZE, CONNECTIONS);
    let stats = work.join("time.txt");
    // Every column, as the peer fetches: without a data output the CLI
    // would read only the plot's (`--properties plot`).
    let hydroplot = |extra: &[&str]| {
        let mut cmd = measured(&cli, &stats);
        cmd.args(["plot", "--bbox", &bbox, "--flowline-only"])
            .args(["--properties", "all"])
            .args(extra)
            .envs(env.iter().cloned());
        run(&mut cmd, &stats)
    };
    let mut figures = Figures::default();

    // Untimed: the mock selects and sorts a query's matches at its first
    // page and keeps them (as a database's index would), so every timed run,
    // the peer's too, finds the selection made.
    hydroplot(&["--no-plot", "--no-cache"]);
    mock.take_log();
    let fetch = hydroplot(&["--no-plot", "--no-cache"]);
    let log = mock.take_log();
    let flowlines = printed_count(&fetch.stdout, "flowline");
    figures.put("bbox_flowlines", flowlines, "flowlines");
    figures.put_run("bbox_fetch", &fetch);
    let cpu = cpu_s();
    let (bound, bytes, _) = replay(&log, CONNECTIONS);
    let bound_cpu = cpu_s() - cpu;
    let mb = bytes as f64 / 1e6;
    figures.put("bbox_requests", log.len() as f64, "requests");
    figures.put("bbox_response_bytes", mb, "MB");
    figures.put("bbox_transfer_bound_wall", bound, "s");
    figures.put("bbox_transfer_bound_cpu", bound_cpu, "s");

    let cache = work.join("plot-cache.sqlite");
    let cache_arg = cache.to_str().expect("a UTF-8 temporary path");
    let write = hydroplot(&["--no-plot", "--cache-file", cache_arg]);
    figures.put_run("bbox_cache_write", &write);
    figures.put(
        "bbox_cache_size",
        std::fs::metadata(&cache).map_or(0, |m| m.len()) as f64 / 1e6,
        "MB",
    );
    let hit = hydroplot(&["--no-plot", "--cache-file", cache_arg]);
    assert_eq!(
        printed_count(&hit.stdout, "flowline"),
        flowlines,
        "the hit's flowlines"
    );
    figures.put_run("bbox_cache_hit", &hit);

    let png = work.join("map.png");
    let png_arg = png.to_str().expect("a UTF-8 temporary path");
    let map_args = [
        "--cache-file",
        cache_arg,
        "--size",
        MAP_SIZE,
        "--out",
        png_arg,
    ];
    hydroplot(&map_args); // fills the tile cache
    let map = hydroplot(&map_args);
    figures.put_run("bbox_map_from_cache", &map);

    let geojson = work.join("layers.json");
    let geojson_arg = geojson.to_str().expect("a UTF-8 temporary path");
    let out_json = hydroplot(&[
        "--no-plot",
        "--cache-file",
        cache_arg,
        "--geojson",
        geojson_arg,
    ]);
    figures.put_run("bbox_geojson_out", &out_json);
    figures.put(
        "bbox_geojson_size",
        std::fs::metadata(&geojson).map_or(0, |m| m.len()) as f64 / 1e6,
        "MB",
    );

    if let Some(plugins) = std::env::var_os("GDAL_DRIVER_PATH") {
        gdal_case(&mut figures, &work, &bbox, &env, &plugins, &hydroplot);
    }

    if let Some((python, script)) = &peer {
        let urls = work.join("urls.txt");
        let pages: Vec<&str> = log.iter().map(|(_, url, _)| url.as_str()).collect();
        std::fs::write(&urls, pages.join("\n")).expect("the page URLs");
        let pickle = work.join("flowlines.pickle");
        let peer_run = |mode: &str, extra: &[&Path]| {
            let figures_file = work.join(format!("peer-{mode}.json"));
            let mut cmd = measured(python, &stats);
            cmd.arg(script)
                .arg(mode)
                .arg(&mock.base_url)
                .arg(&bbox)
                .arg(&figures_file)
                .args(extra);
            let r = run(&mut cmd, &stats);
            let own: serde_json::Map<String, serde_json::Value> =
                serde_json::from_slice(&std::fs::read(&figures_file).expect("the peer's figures"))
                    .expect("the peer's figures as JSON");
            (r, own)
        };
        let mut peer_put = |mode: &str, extra: &[&Path]| {
            let (r, own) = peer_run(mode, extra);
            for (k, v) in own {
                figures.put(&format!("py_bbox_{k}"), v.as_f64().unwrap_or(f64::NAN), "");
            }
            figures.put(&format!("py_bbox_{mode}_peak_rss"), r.peak_rss_mb, "MB");
            figures.put(&format!("py_bbox_{mode}_process_cpu"), r.cpu, "s");
        };
        peer_put("pynhd", &[&pickle]);
        peer_put("requests", &[&urls]);
        peer_put("hit", &[&pickle]);
        peer_run("map", &[&pickle, &work.join("py-map.png")]); // fills contextily's cache
        peer_put("map", &[&pickle, &work.join("py-map.png")]);
        peer_put("geojson", &[&pickle, &work.join("py-layers.json")]);
    }
    let _ = std::fs::remove_dir_all(&work);
    let table = targets(&figures);
    figures.save(out);
    println!("{table}");
}

/// The same box written as a GeoPackage by the CLI and by `ogr2ogr` through
/// the GDAL driver in `plugins`, each its own measured child on the same
/// mock; both must hold the same number of flowlines.
fn gdal_case(
    figures: &mut Figures,
    work: &Path,
    bbox: &str,
    env: &[(String, String)],
    plugins: &std::ffi::OsStr,
    hydroplot: &dyn Fn(&[&str]) -> Run,
) {
    let stats = work.join("time-gdal.txt");
    let cli_gpkg = work.join("cli.gpkg");
    let cli = hydroplot(&[
        "--no-plot",
        "--no-cache",
        "--gpkg",
        cli_gpkg.to_str().expect("a UTF-8 temporary path"),
    ]);
    figures.put_run("bbox_cli_gpkg", &cli);
    let ogr_gpkg = work.join("ogr.gpkg");
    let mut cmd = measured("ogr2ogr", &stats);
    cmd.args(["-f", "GPKG"])
        .arg(&ogr_gpkg)
        .arg(format!(
            "HYDROPLOT:bbox={bbox}&flowline_only=true&cache_data=false"
        ))
        .arg("flowline")
        .env("GDAL_DRIVER_PATH", plugins)
        .envs(env.iter().cloned());
    let ogr = run(&mut cmd, &stats);
    figures.put_run("bbox_ogr2ogr_gpkg", &ogr);
    let count = |gpkg: &Path, table: &str| -> f64 {
        let db =
            rusqlite::Connection::open_with_flags(gpkg, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .expect("a written GeoPackage");
        db.query_row(&format!("SELECT count(*) FROM \"{table}\""), [], |r| {
            r.get::<_, i64>(0)
        })
        .expect("its flowline table") as f64
    };
    let written = count(&ogr_gpkg, "flowline");
    assert_eq!(
        written,
        count(&cli_gpkg, "NHDFlowline_Network"),
        "ogr2ogr and the CLI wrote different flowline counts"
    );
    figures.put("bbox_ogr2ogr_flowlines", written, "flowlines");
}

/// The targets beside the figures, as a text table.
fn targets(f: &Figures) -> String {
    let get = |k: &str| f.get(k).unwrap_or(f64::NAN);
    let (bound, bound_cpu, mb) = (
        get("bbox_transfer_bound_wall"),
        get("bbox_transfer_bound_cpu"),
        get("bbox_response_bytes"),
    );
    let mut rows = vec![format!(
        "{:<52} {:>10} {:>10} {:>9} {:>6}",
        "", "hydroplot", "target", "", "python"
    )];
    let mut row = |what: &str, value: f64, limit: f64, unit: &str, peer: &str| {
        let ok = if value <= limit { "MET" } else { "NOT MET" };
        let p = f.get(peer).map_or(String::new(), |v| format!("{v:.2}"));
        rows.push(format!(
            "{what:<52} {value:>10.2} {:>10} {ok:>9} {p:>6}",
            format!("<= {limit:.2}{unit}")
        ));
    };
    row(
        "fetch + decode: wall (s)",
        get("bbox_fetch_wall"),
        2.0 * bound,
        " s",
        "py_bbox_pynhd_wall",
    );
    row(
        "  client CPU (s)",
        get("bbox_fetch_cpu"),
        5.0 * bound_cpu.max(0.01),
        " s",
        "py_bbox_pynhd_process_cpu",
    );
    row(
        "  peak RSS (MB)",
        get("bbox_fetch_peak_rss"),
        2.0 * mb,
        " MB",
        "py_bbox_pynhd_peak_rss",
    );
    row(
        "cache write: peak RSS (MB)",
        get("bbox_cache_write_peak_rss"),
        2.5 * mb,
        " MB",
        "py_bbox_pynhd_peak_rss",
    );
    row(
        "cache hit: wall (s)",
        get("bbox_cache_hit_wall"),
        1.5 * bound,
        " s",
        "py_bbox_hit_wall",
    );
    row(
        "map 2048x2048 from the cache: wall (s)",
        get("bbox_map_from_cache_wall"),
        4.0 * bound,
        " s",
        "py_bbox_map_wall",
    );
    row(
        "  peak RSS (MB)",
        get("bbox_map_from_cache_peak_rss"),
        2.0 * mb,
        " MB",
        "py_bbox_map_peak_rss",
    );
    row(
        "GeoJSON out from the cache: peak RSS (MB), our goal",
        get("bbox_geojson_out_peak_rss"),
        2.0 * mb,
        " MB",
        "py_bbox_geojson_peak_rss",
    );
    if f.get("bbox_ogr2ogr_gpkg_wall").is_some() {
        row(
            "ogr2ogr -f GPKG through the driver: wall (s)",
            get("bbox_ogr2ogr_gpkg_wall"),
            1.5 * get("bbox_cli_gpkg_wall"),
            " s",
            "",
        );
    }
    rows.push(format!(
        "transfer bound: {bound:.2} s wall, {bound_cpu:.2} s CPU, {mb:.1} MB over {CONNECTIONS} connections; \
         the python column is the peer's own figure for the same step (pickle for the cache)"
    ));
    rows.join("\n")
}
