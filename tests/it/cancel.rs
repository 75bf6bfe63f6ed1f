//! Cancelling calls in flight (`Context::cancel`, `hydroplot_context_cancel`,
//! the CLI's Ctrl-C): a cancelled call ends with `Error::Cancelled`, even
//! while a server sends nothing; it leaves no output and no temporary file;
//! a cancelled request is not retried; calls begun afterwards run.
//!
//! The mock's slow answers take longer than the context's timeout, so a
//! wait that a cancel did not end would fail as a timeout, not as a cancel:
//! no test here reads a clock.

use crate::support;

use hydroplot::cancel::{Canceller, Stop};
use hydroplot::collection::Collection;
use hydroplot::gpkg::GeoPackage;
use hydroplot::plot::{plot_hydro, CacheSetting, Layer, Outlet, PlotRequest};
use hydroplot::Error;
use hydroplot_mock::{self as mock, Fault, FaultKind, MockServer};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Longer than the mock context's 20 s timeout.
const SILENT: Duration = Duration::from_secs(120);

fn temp_dir(name: &str) -> PathBuf {
    crate::scratch::temp_dir(&format!("cancel-{name}"))
}

/// The names of the files in `dir`, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every request whose path contains `path` is answered after [`SILENT`].
fn silent(server: &MockServer, path: &str) {
    server.set_fault(Fault {
        path_contains: path.to_string(),
        kind: FaultKind::Slow(SILENT),
        times: None,
    });
}

/// Plots `req` with a call of `ctx` while the mock's answers to requests
/// whose path contains `path` are silent, and cancels the call once the
/// mock has received one; the call's error, a cancel.
fn plot_cancelled_once_asked(
    ctx: &hydroplot::Context,
    server: &MockServer,
    path: &str,
    req: &PlotRequest,
) -> Error {
    silent(server, path);
    let (call, canceller) = (ctx.for_call(), ctx.canceller());
    let result = std::thread::scope(|s| {
        s.spawn(move || {
            // Bounded, so a request never sent cannot hang the test: the
            // call is cancelled either way, and the assertions on the
            // requests say what was sent.
            server.wait_for_request(|r| r.path.contains(path), Duration::from_secs(20));
            canceller.cancel();
        });
        plot_hydro(&call, req, None)
    });
    let e = result.err().expect("the call was cancelled");
    assert!(matches!(e, Error::Cancelled(_)), "{e:?}");
    e
}

/// The Yahara basin above 13293970 with a map and a GeoPackage in `dir`.
fn basin_request(dir: &Path, basemap: &str) -> PlotRequest {
    let mut req = PlotRequest {
        outlets: vec![Outlet::Comid(13293970)],
        cache: CacheSetting::Disabled,
        ..Default::default()
    };
    req.set_png_file(&dir.join("map.png")).unwrap();
    req.set_gpkg(&dir.join("basin.gpkg")).unwrap();
    req.set_basemap(basemap).unwrap();
    req
}

#[test]
fn a_cancel_ends_a_request_on_a_silent_server_and_later_calls_run() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let dir = temp_dir("silent");
    let req = basin_request(&dir, "none");
    let e = plot_cancelled_once_asked(&ctx, &server, "/linked-data/", &req);
    assert!(e.to_string().starts_with("cancelled"), "{e}");
    assert_eq!(files_in(&dir), Vec::<String>::new());
    // Not retried: the one request the server is still answering.
    assert_eq!(server.requests().len(), 1, "{:?}", server.requests());

    server.clear_faults();
    let done = plot_hydro(&ctx.for_call(), &req, None).unwrap();
    assert_eq!(done.data.layer(Layer::Flowline).len(), 251);
    assert_eq!(files_in(&dir), ["basin.gpkg", "map.png"]);
}

#[test]
fn a_cancel_while_tiles_download_is_no_map_with_blank_tiles() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let dir = temp_dir("tiles");
    let req = basin_request(&dir, "OpenStreetMap");
    plot_cancelled_once_asked(&ctx, &server, "/tiles/", &req);
    // The GeoPackage was finished before the tiles were asked for; the map
    // was never written.
    assert_eq!(files_in(&dir), ["basin.gpkg"]);
}

#[test]
fn a_cancelled_context_stops_a_local_read_and_its_outputs() {
    let ctx = support::offline();
    let dir = temp_dir("local");
    let mut req = basin_request(&dir, "none");
    req.set_hydro_data(&support::sample()).unwrap();
    ctx.cancel();
    let e = plot_hydro(&ctx, &req, None).err().expect("cancelled");
    assert!(matches!(e, Error::Cancelled(_)), "{e:?}");
    assert_eq!(files_in(&dir), Vec::<String>::new());
    // A call begun after the cancel runs.
    let done = plot_hydro(&ctx.for_call(), &req, None).unwrap();
    support::assert_yahara_counts(&done.data);
}

#[test]
fn a_watched_geopackage_ends_its_statements_once_cancelled() {
    let canceller = Canceller::new();
    let stop = canceller.stop_for_call();
    let mut gpkg = GeoPackage::open(&support::sample()).unwrap();
    gpkg.watch(&stop);
    let second = gpkg.reopen().unwrap();
    assert!(gpkg.read_all(Collection::FlowlineNetwork).is_ok());
    canceller.cancel();
    for g in [&gpkg, &second] {
        let e = g.read_all(Collection::FlowlineNetwork).unwrap_err();
        assert!(matches!(e, Error::Cancelled(_)), "{e:?}");
    }
    let mut fresh = GeoPackage::open(&support::sample()).unwrap();
    fresh.watch(&Stop::never());
    assert!(fresh.read_all(Collection::FlowlineNetwork).is_ok());
}

/// The CLI plotting the Yahara basin into `dir` from `server`, whose index
/// is silent, started with SIGINT as `sigint` (`SIG_DFL`: a terminal's
/// foreground job, whatever this test runner was started with; `SIG_IGN`:
/// a background job of a shell without job control); returns once it has
/// asked.
#[cfg(unix)]
fn cli_waiting(server: &MockServer, dir: &Path, sigint: libc::sighandler_t) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(env!("CARGO_BIN_EXE_hydroplot"));
    // SAFETY: signal(2) between fork and exec is async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            libc::signal(libc::SIGINT, sigint);
            Ok(())
        });
    }
    let mut child = command
        .args(["plot", "--comid", "13293970", "--basemap", "none"])
        .args(["--no-cache", "--out", "map.png", "--gpkg", "basin.gpkg"])
        .args(["--geojson", "all.json"])
        .args(["--option", &format!("index_url={}", server.index_url())])
        .args(["--option", &format!("fabric_url={}", server.fabric_url())])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Woken by the first request; between waits, the CLI must still run.
    while !server.wait_for_request(|_| true, Duration::from_millis(100)) {
        assert!(child.try_wait().unwrap().is_none(), "the CLI ended first");
    }
    child
}

/// Sends `signal` to `child`, waits for it, and checks that it was cancelled.
#[cfg(unix)]
fn assert_cancelled_by(child: std::process::Child, signal: libc::c_int, dir: &Path) {
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("hydroplot: cancelled"), "{stderr}");
    assert_eq!(files_in(dir), Vec::<String>::new());
}

#[cfg(unix)]
#[test]
fn ctrl_c_ends_the_cli_with_130_and_no_output() {
    let server = MockServer::start();
    silent(&server, "/linked-data/");
    let dir = temp_dir("cli");
    let child = cli_waiting(&server, &dir, libc::SIG_DFL);
    assert_cancelled_by(child, libc::SIGINT, &dir);
}

#[cfg(unix)]
#[test]
fn a_cli_started_with_sigint_ignored_keeps_ignoring_it() {
    let server = MockServer::start();
    // The first index request is answered late, well within the timeout:
    // the SIGINT arrives while it waits.
    server.set_fault(Fault {
        path_contains: "/linked-data/".to_string(),
        kind: FaultKind::Slow(Duration::from_secs(2)),
        times: Some(1),
    });
    let dir = temp_dir("cli-background");
    let child = cli_waiting(&server, &dir, libc::SIG_IGN);
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(files_in(&dir), ["all.json", "basin.gpkg", "map.png"]);
}

/// Cancels its context at the first progress report and records them all.
struct CancelAtFirstReport {
    canceller: Canceller,
    reports: std::sync::Mutex<Vec<(u64, u64)>>,
}

impl hydroplot::context::Observer for CancelAtFirstReport {
    fn log(&self, _: hydroplot::context::LogLevel, _: &str) {}
    fn progress(&self, _: &str, done: u64, total: u64) {
        self.canceller.cancel();
        self.reports.lock().unwrap().push((done, total));
    }
}

#[test]
fn a_local_point_lookup_stops_at_the_next_point() {
    let ctx = support::offline();
    let observer = std::sync::Arc::new(CancelAtFirstReport {
        canceller: ctx.canceller(),
        reports: Default::default(),
    });
    let ctx = ctx.with_observer(Some(observer.clone()));
    let points: Vec<(f64, f64)> = support::catchment_points().iter().map(|p| p.0).collect();
    assert!(points.len() > 100);
    let e = hydroplot::lookup::comids_at_points(&ctx, &points, None, Some(&support::sample()))
        .unwrap_err();
    assert!(matches!(e, Error::Cancelled(_)), "{e:?}");
    // Only the report before the first point: none looked up after it.
    assert_eq!(
        *observer.reports.lock().unwrap(),
        [(0, points.len() as u64)]
    );
}

#[test]
fn a_cancelled_cache_write_rolls_its_entry_back() {
    use hydroplot::cache::PlotCache;
    let ctx = support::offline();
    let path = temp_dir("cache").join("plot.cache");
    let call = ctx.for_call();
    let mut warnings = Vec::new();
    let mut cache = PlotCache::open(&call, &path, &mut warnings).expect("a new cache");
    cache.put("before", b"kept").unwrap();
    ctx.cancel();
    let parts = || (0..3).map(|i| Ok((format!("part {i}"), vec![7u8; 1000])));
    assert!(cache.put_entry("during", b"body", parts).is_err());
    assert_eq!(cache.get("during"), None);
    assert_eq!(cache.get_part("during", "part 0"), None);
    assert_eq!(cache.get("before"), Some(b"kept".to_vec()));
}

/// A copy of the sample that another connection holds locked (an exclusive
/// transaction: readers wait), with the holder. Drop the holder to unlock.
fn locked_sample(dir: &Path) -> (PathBuf, rusqlite::Connection) {
    let copy = dir.join("locked.gpkg");
    std::fs::copy(support::sample(), &copy).unwrap();
    let holder = rusqlite::Connection::open(&copy).unwrap();
    holder
        .execute_batch("PRAGMA journal_mode = DELETE; BEGIN EXCLUSIVE;")
        .unwrap();
    (copy, holder)
}

/// The offline context with `lock_timeout_s` set to `seconds`.
fn lock_timeout(seconds: &str) -> hydroplot::Context {
    let mut config = support::offline().config.clone();
    config.set("lock_timeout_s", seconds).unwrap();
    hydroplot::Context::new(config).unwrap()
}

#[test]
fn a_locked_geopackage_fails_after_lock_timeout_s_naming_the_lock() {
    let dir = temp_dir("locked");
    let (copy, holder) = locked_sample(&dir);
    let ctx = lock_timeout("0.2");
    let req = PlotRequest {
        outlets: vec![Outlet::Comid(13293970)],
        hydro_data: Some(copy.clone()),
        actually_plot: false,
        cache: CacheSetting::Disabled,
        ..Default::default()
    };
    let e = plot_hydro(&ctx, &req, None).map(|_| ()).unwrap_err();
    assert!(matches!(e, Error::Gpkg(_)), "{e:?}");
    let message = e.to_string();
    for part in [
        "locked.gpkg",
        "is locked",
        "SQLite's lock",
        "lock_timeout_s",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
    let points = [(-89.4, 43.0)];
    let e = hydroplot::lookup::comids_at_points(&ctx, &points, None, Some(&copy)).unwrap_err();
    assert!(e.to_string().contains("lock_timeout_s"), "{e}");
    // Once the holder lets go, the same file plots.
    drop(holder);
    let plot = plot_hydro(&ctx, &req, None).unwrap();
    assert_eq!(plot.data.layer(Layer::Flowline).len(), 251);
}

#[test]
fn a_cancel_ends_a_wait_for_a_locked_geopackage() {
    let dir = temp_dir("locked-cancel");
    let (copy, _holder) = locked_sample(&dir);
    // An hour's wait allowed: only the cancel can end the call.
    let ctx = lock_timeout("3600");
    let canceller = ctx.canceller();
    let cancel = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        canceller.cancel();
    });
    let points = [(-89.4, 43.0)];
    let e = hydroplot::lookup::comids_at_points(&ctx, &points, None, Some(&copy)).unwrap_err();
    cancel.join().unwrap();
    assert!(matches!(e, Error::Cancelled(_)), "{e:?}");
}
