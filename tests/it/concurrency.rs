//! Concurrency (issue 8, part 5): 16 threads share one context and run
//! plots (services, tiles, a shared tile cache and a shared plot-data cache
//! file) and raindrop traces at once; every result must equal the one the
//! same call gives alone. The C ABI is exercised the same way: one
//! `hydroplot_context` shared by 16 threads, each reading its own
//! thread-local last error.
//!
//! ThreadSanitizer needs a nightly toolchain with the standard library
//! rebuilt (`-Zbuild-std`), which this project's machines do not have; data
//! races are excluded by the type system (the context is `Sync` with only
//! `Mutex`/atomics inside), and this test checks the results.

use crate::support;
use hydroplot::config::Config;
use hydroplot::ffi::context::*;
use hydroplot::ffi::hydroplot_status::*;
use hydroplot::ffi::library::hydroplot_last_error;
use hydroplot::ffi::trace::*;
use hydroplot::plot::{plot_hydro, CacheSetting, Layer, Outlet, Plot, PlotRequest};
use hydroplot::services::flowtrace;
use hydroplot::Context;
use hydroplot_mock::MockServer;
use std::ffi::{CStr, CString};
use std::path::PathBuf;
use std::ptr::{null, null_mut};
use std::sync::Barrier;

const THREADS: usize = 16;
/// Outlets of the Yahara sample (the outlet, and two tributaries).
const OUTLETS: [i64; 3] = [13293970, 13294176, 13293454];
/// Points on the Yahara River and near it.
const POINTS: [(f64, f64); 2] = [(-89.2158, 42.9561), (-89.3617, 43.0832)];

fn temp_dir(name: &str) -> PathBuf {
    crate::scratch::temp_dir(&format!("concurrency-{name}"))
}

/// What a thread's work came to, comparable across runs.
#[derive(Debug, PartialEq)]
struct Outcome {
    flowlines: Vec<i64>,
    catchments: usize,
    png: Vec<u8>,
    trace: Vec<u8>,
}

/// Thread `i`'s work: a drawn plot of one outlet (every other thread through
/// the shared plot-data cache file) and a trace.
fn work(ctx: &Context, i: usize, cache_file: &std::path::Path) -> Outcome {
    let req = PlotRequest {
        outlets: vec![Outlet::Comid(OUTLETS[i % OUTLETS.len()])],
        basemap: "OpenStreetMap".into(),
        size: (320, 240),
        cache: if i % 2 == 0 {
            CacheSetting::File(cache_file.to_path_buf())
        } else {
            CacheSetting::Default
        },
        ..PlotRequest::default()
    };
    let Plot { data, map, .. } =
        plot_hydro(ctx, &req, None).unwrap_or_else(|e| panic!("plot {i}: {e}"));
    assert!(data.warnings.is_empty(), "plot {i}: {:?}", data.warnings);
    let (x, y) = POINTS[i % POINTS.len()];
    let trace = flowtrace::raindrop_trace(ctx, x, y, None, Some("up"))
        .unwrap_or_else(|e| panic!("trace {i}: {e}"));
    Outcome {
        flowlines: data
            .layer(Layer::Flowline)
            .to_features()
            .iter()
            .filter_map(|f| f.get_i64("comid"))
            .collect(),
        catchments: data.layer(Layer::Catchment).len(),
        png: map.unwrap().png().unwrap(),
        trace: trace.to_geojson(),
    }
}

#[test]
fn sixteen_threads_sharing_one_context_get_the_sequential_results() {
    let server = MockServer::start();
    let dir = temp_dir("core");
    let ctx = Context::new(Config {
        index_url: server.index_url(),
        fabric_url: server.fabric_url(),
        tile_url: Some(server.tile_url()),
        tile_cache_dir: dir.join("tiles"),
        retries: 0,
        ..support::config()
    })
    .unwrap();
    let sequential: Vec<Outcome> = (0..OUTLETS.len().max(POINTS.len()) * 2)
        .map(|i| work(&ctx, i, &dir.join("sequential.sqlite")))
        .collect();
    assert_eq!(
        sequential[0].flowlines.len(),
        251,
        "the Yahara outlet's upstream flowlines"
    );
    assert!(sequential[1].flowlines.len() < 251 && !sequential[1].flowlines.is_empty());

    // Fresh caches, so the threads race to fill them.
    std::fs::remove_dir_all(dir.join("tiles")).unwrap();
    let shared_cache = dir.join("shared.sqlite");
    let barrier = Barrier::new(THREADS);
    let concurrent: Vec<Outcome> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|i| {
                let (ctx, barrier, cache) = (&ctx, &barrier, &shared_cache);
                s.spawn(move || {
                    barrier.wait();
                    work(ctx, i, cache)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (i, got) in concurrent.iter().enumerate() {
        let want = &sequential[i % sequential.len()];
        assert_eq!(got.flowlines, want.flowlines, "thread {i}: flowlines");
        assert_eq!(got.catchments, want.catchments, "thread {i}: catchments");
        assert_eq!(got.trace, want.trace, "thread {i}: trace");
        assert!(
            got.png == want.png,
            "thread {i}: the PNG differs from the sequential one"
        );
    }
    // The shared cache file now answers every even thread's request.
    server.clear_requests();
    let again = work(&ctx, 0, &shared_cache);
    assert_eq!(again, sequential[0]);
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.path.contains("/processes/")),
        "only the trace is requested again: {:?}",
        server
            .requests()
            .iter()
            .map(|r| &r.path)
            .collect::<Vec<_>>()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sixteen_threads_sharing_one_c_context_keep_their_own_last_error() {
    let server = MockServer::start();
    let mut ctx = null_mut();
    assert_eq!(hydroplot_context_new(&mut ctx), HYDROPLOT_OK);
    for (k, v) in [
        ("index_url", server.index_url()),
        ("fabric_url", server.fabric_url()),
        ("retries", "0".into()),
    ] {
        let (k, v) = (CString::new(k).unwrap(), CString::new(v).unwrap());
        assert_eq!(
            hydroplot_context_set_option(ctx, k.as_ptr(), v.as_ptr()),
            HYDROPLOT_OK
        );
    }
    let shared = ctx as usize;
    let barrier = Barrier::new(THREADS);
    std::thread::scope(|s| {
        for i in 0..THREADS {
            let barrier = &barrier;
            s.spawn(move || {
                let ctx = shared as *const hydroplot_context;
                barrier.wait();
                for round in 0..5 {
                    let mut t = null_mut();
                    if (i + round) % 2 == 0 {
                        let (x, y) = POINTS[0];
                        assert_eq!(
                            hydroplot_raindrop_trace(ctx, x, y, null(), c"up".as_ptr(), &mut t),
                            HYDROPLOT_OK
                        );
                        assert_eq!(hydroplot_trace_len(t), 2);
                        let mut comid = 0;
                        assert!(hydroplot_trace_comid(t, 0, &mut comid));
                        assert_eq!(comid, 13297178, "the recorded Yahara trace");
                        hydroplot_trace_free(t);
                    } else {
                        let direction = CString::new(format!("sideways-{i}")).unwrap();
                        let s = hydroplot_raindrop_trace(
                            ctx,
                            -89.2,
                            43.0,
                            null(),
                            direction.as_ptr(),
                            &mut t,
                        );
                        assert_eq!(s, HYDROPLOT_ERR_INVALID_ARGUMENT);
                        let message = unsafe { CStr::from_ptr(hydroplot_last_error()) }
                            .to_string_lossy()
                            .into_owned();
                        assert!(
                            message.contains(&format!("sideways-{i}")),
                            "thread {i} read another thread's error: {message}"
                        );
                    }
                }
            });
        }
    });
    hydroplot_context_free(ctx);
}
