//! Offline mode (option `offline`, `HYDROPLOT_OFFLINE`): no request is ever
//! sent, whatever asks. The plot-data cache and local GeoPackages serve,
//! tiles come from the tile cache (a missing one is blank, with one
//! warning), anything else fails at once naming offline mode and what was
//! missing. Counted on the mock: zero requests.

use crate::support;

use hydroplot::ffi::context::*;
use hydroplot::ffi::hydroplot_status::*;
use hydroplot::ffi::library::hydroplot_last_error;
use hydroplot::ffi::plot_data::hydroplot_plot_data_free;
use hydroplot::ffi::plot_request::*;
use hydroplot::http::Service;
use hydroplot::plot::{plot_hydro, CacheSetting, Layer, Outlet, PlotRequest};
use hydroplot::render::tile_cache::{TileCache, DEFAULT_MAX_BYTES};
use hydroplot::render::{Map, TileCacheMode};
use hydroplot::services::index;
use hydroplot::{Context, Error};
use hydroplot_mock::{self as mock, MockServer};
use std::ffi::{CStr, CString};
use std::path::PathBuf;
use std::process::Command;
use std::ptr::null_mut;

fn temp_dir(name: &str) -> PathBuf {
    crate::scratch::temp_dir(&format!("offline-{name}"))
}

/// The same context with offline mode on.
fn offline(ctx: &Context) -> Context {
    let mut config = ctx.config.clone();
    config.set("offline", "on").unwrap();
    Context::new(config).unwrap()
}

fn assert_offline_error(e: &Error, missing: &str) {
    let Error::Network(message) = e else {
        panic!("offline refusals are network errors, got {e:?}")
    };
    assert!(message.contains("offline mode"), "{message}");
    assert!(message.contains(missing), "{missing:?} not in {message}");
}

#[test]
fn nothing_is_sent_and_the_error_names_the_request() {
    let server = MockServer::start();
    let ctx = offline(&mock::context(&server));
    let e = index::feature(&ctx, "comid", "13293454").unwrap_err();
    assert_offline_error(&e, "/nldi/linked-data/comid/13293454");
    let url = format!("{}/anything", server.fabric_url());
    let e = ctx
        .post(Service::Process, &url, "application/json", b"{}")
        .unwrap_err();
    assert_offline_error(&e, "flowtrace process POST");
    let cold = PlotRequest {
        outlets: vec![Outlet::Comid(13293970)],
        actually_plot: false,
        cache: CacheSetting::Disabled,
        ..Default::default()
    };
    let e = plot_hydro(&ctx, &cold, None)
        .err()
        .expect("a cold call fails");
    assert_offline_error(&e, "index service");
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[test]
fn a_warm_plot_cache_and_local_geopackages_serve_offline() {
    let server = MockServer::start();
    let online = mock::context(&server);
    let file = temp_dir("plot-cache").join("plot.cache");
    let request = PlotRequest {
        outlets: vec![Outlet::Comid(13293970)],
        actually_plot: false,
        cache: CacheSetting::File(file.clone()),
        ..Default::default()
    };
    plot_hydro(&online, &request, None).unwrap();
    server.clear_requests();
    let ctx = offline(&online);
    let d = plot_hydro(&ctx, &request, None).unwrap().data;
    assert_eq!(d.layer(Layer::Flowline).len(), 251);
    let local = PlotRequest {
        outlets: vec![Outlet::Comid(13293970)],
        hydro_data: Some(support::sample()),
        actually_plot: false,
        cache: CacheSetting::Disabled,
        ..Default::default()
    };
    support::assert_yahara_counts(&plot_hydro(&ctx, &local, None).unwrap().data);
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[test]
fn tiles_come_from_the_tile_cache_and_a_missing_one_is_blank_with_one_warning() {
    let server = MockServer::start();
    let online = mock::context(&server);
    let dir = temp_dir("tiles");
    let mode = TileCacheMode::Dir(dir.clone());
    let draw = |ctx: &Context| {
        let mut warnings = Vec::new();
        Map::new(
            ctx,
            [-89.40, 43.05, -89.30, 43.12],
            "EPSG:4326",
            (512, 512),
            "OpenStreetMap",
            None,
            &mode,
            &mut warnings,
        )
        .unwrap();
        warnings
    };
    assert!(draw(&online).is_empty());
    let urls: Vec<String> = server
        .requests()
        .iter()
        .map(|r| format!("{}{}", server.base_url(), r.path))
        .collect();
    assert!(urls.len() >= 4, "{urls:?}");
    // Expire every tile (offline serves them whatever their age) and lose one.
    let cache = TileCache::open(&dir, DEFAULT_MAX_BYTES).unwrap();
    let expire = [("cache-control".to_string(), "max-age=0".to_string())];
    for url in &urls {
        let entry = cache.lookup(url).unwrap();
        cache.refresh(url, &expire, entry).unwrap();
    }
    std::fs::remove_file(cache.path_for(&urls[0])).unwrap();
    server.clear_requests();

    let warnings = draw(&offline(&online));
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let expected = format!("1 of {} basemap tiles", urls.len());
    assert!(warnings[0].starts_with(&expected), "{}", warnings[0]);
    assert!(warnings[0].contains("offline mode"), "{}", warnings[0]);
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

#[test]
fn the_c_api_takes_the_offline_option() {
    let server = MockServer::start();
    let mut ctx = null_mut();
    assert_eq!(hydroplot_context_new(&mut ctx), HYDROPLOT_OK);
    let set = |k: &str, v: &str| hydroplot_context_set_option(ctx, c(k).as_ptr(), c(v).as_ptr());
    assert_eq!(set("index_url", &server.index_url()), HYDROPLOT_OK);
    assert_eq!(set("offline", "maybe"), HYDROPLOT_ERR_INVALID_ARGUMENT);
    assert_eq!(set("offline", "1"), HYDROPLOT_OK);
    let req = hydroplot_plot_request_new();
    assert_eq!(
        hydroplot_plot_request_add_comid(req, 13293970),
        HYDROPLOT_OK
    );
    assert_eq!(
        hydroplot_plot_request_set_actually_plot(req, false),
        HYDROPLOT_OK
    );
    let mut pd = null_mut();
    let status = hydroplot_plot(ctx, req, null_mut(), &mut pd);
    let message = unsafe { CStr::from_ptr(hydroplot_last_error()) }
        .to_string_lossy()
        .into_owned();
    assert_eq!(status, HYDROPLOT_ERR_NETWORK, "{message}");
    assert!(message.contains("offline mode"), "{message}");
    assert!(server.requests().is_empty());
    hydroplot_plot_data_free(pd);
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
}

#[test]
fn the_cli_fails_at_once_with_hydroplot_offline() {
    let server = MockServer::start();
    let dir = temp_dir("cli");
    let out = Command::new(env!("CARGO_BIN_EXE_hydroplot"))
        .env("HYDROPLOT_OFFLINE", "1")
        .args(["plot", "--comid", "13293970", "--no-plot", "--no-cache"])
        .args(["--option", &format!("index_url={}", server.index_url())])
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("offline mode"), "{stderr}");
    assert!(server.requests().is_empty());
}

#[test]
fn offline_runs_read_neither_the_trust_roots_nor_the_proxy() {
    // A stale CA variable and an unusable proxy variable stop online runs
    // (tests/process/tls_env.rs, tests/process/proxy.rs); offline, nothing is sent, so a
    // run the sample serves goes on.
    let dir = temp_dir("stale-env");
    let out = Command::new(env!("CARGO_BIN_EXE_hydroplot"))
        .env("HYDROPLOT_OFFLINE", "1")
        .env("SSL_CERT_FILE", dir.join("gone.pem"))
        .env("HTTPS_PROXY", "socks5://127.0.0.1:9")
        .current_dir(&dir)
        .args(["plot", "--sample", "--no-plot"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("flowline"));
}
