//! Many points at once (issue 27) in the core: the trace batch and the
//! comid lookup keep every point through a service that answers 429 to one
//! request in ten, the lookup from a local GeoPackage agrees with the
//! fabric service's (the mock answers R2 from the same catchments), and
//! the service lookup asks once per distinct point.

use crate::support;

use hydroplot::collection::Collection;
use hydroplot::config::Config;
use hydroplot::context::{LogLevel, Observer};
use hydroplot::gpkg::GeoPackage;
use hydroplot::lookup::comids_at_points;
use hydroplot::services::flowtrace::raindrop_trace_batch;
use hydroplot::Context;
use hydroplot_mock::{self as mock, FaultKind, MockServer, PeriodicFault};
use std::sync::{Arc, Mutex};
use support::{catchment_interiors, sample};

const FLOWTRACE: &str = "/processes/nldi-flowtrace/execution";
const R2: &str = "/collections/catchmentsp/items";

fn context_with(server: &MockServer, edit: impl FnOnce(&mut Config)) -> Context {
    let mut config = mock::context(server).config.clone();
    edit(&mut config);
    Context::new(config).unwrap()
}

fn requests_to(server: &MockServer, path: &str) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.path.ends_with(path))
        .count()
}

/// Every `every`-th request to `path` is a 429 with `Retry-After: retry_after_s`.
fn throttle(server: &MockServer, path: &str, every: u32, retry_after_s: u32) {
    server.set_periodic_fault(PeriodicFault {
        path_contains: path.into(),
        every,
        kind: FaultKind::TooManyRequests { retry_after_s },
    });
}

#[derive(Default)]
struct Seen {
    warnings: Mutex<Vec<String>>,
    progress: Mutex<Vec<(String, u64, u64)>>,
}

impl Observer for Seen {
    fn log(&self, level: LogLevel, message: &str) {
        if level == LogLevel::Warning {
            self.warnings.lock().unwrap().push(message.into());
        }
    }
    fn progress(&self, stage: &str, done: u64, total: u64) {
        self.progress
            .lock()
            .unwrap()
            .push((stage.into(), done, total));
    }
}

/// A grid of `n` x `n` points over the sample's catchments, a tenth of its
/// width beyond them on each side (so some points are in no catchment).
fn grid(n: usize) -> Vec<(f64, f64)> {
    let gpkg = GeoPackage::open(&sample()).unwrap();
    let [x0, y0, x1, y1] = gpkg.bounds(Collection::Catchment).unwrap().unwrap();
    let (mx, my) = ((x1 - x0) / 10.0, (y1 - y0) / 10.0);
    let at = |lo: f64, hi: f64, m: f64, i: usize| {
        lo - m + (hi - lo + 2.0 * m) * i as f64 / (n - 1) as f64
    };
    (0..n * n)
        .map(|k| (at(x0, x1, mx, k % n), at(y0, y1, my, k / n)))
        .collect()
}

#[test]
fn a_thousand_traces_through_a_429_on_one_request_in_ten() {
    let server = MockServer::start();
    throttle(&server, FLOWTRACE, 10, 0);
    let seen = Arc::new(Seen::default());
    // No retries in the client: every 429 reaches the batch, which must
    // queue the point again rather than lose it.
    let ctx = context_with(&server, |c| {
        c.retries = 0;
        c.concurrency = 4;
    })
    .with_observer(Some(seen.clone()));
    let usable: Vec<((f64, f64), i64)> = catchment_interiors()
        .into_iter()
        .filter_map(|(p, comid, usable)| usable.then_some((p, comid)))
        .collect();
    let cases: Vec<((f64, f64), i64)> = (0..1000).map(|i| usable[i % usable.len()]).collect();
    let points: Vec<(f64, f64)> = cases.iter().map(|c| c.0).collect();

    let results = raindrop_trace_batch(&ctx, &points, None, Some("none")).unwrap();

    assert_eq!(results.len(), 1000);
    for (i, (r, (_, comid))) in results.iter().zip(&cases).enumerate() {
        let t = r.as_ref().unwrap_or_else(|e| panic!("point {i}: {e}"));
        assert_eq!(
            t.features[0].comid,
            Some(*comid),
            "point {i} in input order"
        );
    }
    // The mock turned away requests 10, 20, ...: of the n it received,
    // n / 10 were 429s and the rest are exactly one answer per point.
    let n = requests_to(&server, FLOWTRACE);
    assert!(n >= 1000 + 100, "{n} requests: the 429s must have happened");
    assert_eq!(n - n / 10, 1000, "every point traced once, none twice");
    let warnings = seen.warnings.lock().unwrap();
    assert_eq!(
        warnings.iter().filter(|w| w.contains("HTTP 429")).count(),
        n / 10
    );
    let progress = seen.progress.lock().unwrap();
    assert_eq!(progress.last(), Some(&("trace".to_string(), 1000, 1000)));
    assert_eq!(progress.len(), 1001, "0/1000, then once per point");
}

#[test]
fn retry_after_holds_the_batch_and_the_point_is_traced() {
    let server = MockServer::start();
    // Every second request is turned away with Retry-After: 1.
    throttle(&server, FLOWTRACE, 2, 1);
    let ctx = context_with(&server, |c| {
        c.retries = 0;
        c.concurrency = 2;
    });
    let points: Vec<(f64, f64)> = catchment_interiors()
        .into_iter()
        .filter(|c| c.2)
        .take(3)
        .map(|c| c.0)
        .collect();
    let results = raindrop_trace_batch(&ctx, &points, None, None).unwrap();
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    let n = requests_to(&server, FLOWTRACE);
    assert_eq!(n - n / 2, 3);
}

#[test]
fn the_local_lookup_equals_the_service_lookup_on_a_grid() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let points = grid(25);
    let local = comids_at_points(&support::offline(), &points, None, Some(&sample())).unwrap();
    let remote = comids_at_points(&ctx, &points, None, None).unwrap();
    let local: Vec<Option<i64>> = local.into_iter().map(Result::unwrap).collect();
    let remote: Vec<Option<i64>> = remote.into_iter().map(Result::unwrap).collect();
    assert_eq!(local, remote);
    let inside = local.iter().filter(|c| c.is_some()).count();
    assert!(
        inside > 100 && inside < points.len(),
        "{inside} of {}",
        points.len()
    );
    assert_eq!(requests_to(&server, R2), points.len());
}

/// The featureids of the sample's catchments, by plain SQL.
fn sample_featureids() -> std::collections::HashSet<i64> {
    let conn = rusqlite::Connection::open(sample()).unwrap();
    let mut stmt = conn.prepare("SELECT featureid FROM CatchmentSP").unwrap();
    let ids = stmt.query_map([], |r| r.get(0)).unwrap();
    ids.map(Result::unwrap).collect()
}

#[test]
fn interior_points_resolve_to_their_catchment_locally_and_by_service() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    // The mock also serves a second region; the sample is the Yahara's.
    let in_sample = sample_featureids();
    let cases: Vec<_> = catchment_interiors()
        .into_iter()
        .filter(|c| in_sample.contains(&c.1))
        .collect();
    assert_eq!(cases.len(), in_sample.len());
    let points: Vec<(f64, f64)> = cases.iter().map(|c| c.0).collect();
    let expected: Vec<Option<i64>> = cases.iter().map(|c| Some(c.1)).collect();
    let local = comids_at_points(&support::offline(), &points, None, Some(&sample())).unwrap();
    let local: Vec<Option<i64>> = local.into_iter().map(Result::unwrap).collect();
    assert_eq!(local, expected);
    // The same points in Web Mercator, through the service.
    let to_3857 = hydroplot::crs::Transformer::new("EPSG:4326", "EPSG:3857").unwrap();
    let projected: Vec<(f64, f64)> = points
        .iter()
        .take(20)
        .map(|&(x, y)| to_3857.point(x, y).unwrap())
        .collect();
    let remote = comids_at_points(&ctx, &projected, Some("EPSG:3857"), None).unwrap();
    let remote: Vec<Option<i64>> = remote.into_iter().map(Result::unwrap).collect();
    assert_eq!(remote, expected[..20]);
}

#[test]
fn the_service_lookup_asks_once_per_distinct_point_through_429s() {
    let server = MockServer::start();
    throttle(&server, R2, 5, 0);
    let seen = Arc::new(Seen::default());
    let ctx = context_with(&server, |c| {
        c.retries = 0;
        c.concurrency = 3;
    })
    .with_observer(Some(seen.clone()));
    let distinct: Vec<(f64, f64)> = catchment_interiors().iter().take(40).map(|c| c.0).collect();
    // Each point three times, and two bad points that make no request.
    let mut points: Vec<(f64, f64)> = (0..120).map(|i| distinct[i % 40]).collect();
    points.insert(7, (f64::NAN, 43.0));
    points.insert(50, (-89.0, 95.0));
    let results = comids_at_points(&ctx, &points, None, None).unwrap();
    assert_eq!(results.len(), 122);
    assert!(results[7]
        .as_ref()
        .unwrap_err()
        .to_string()
        .contains("finite"));
    assert!(results[50]
        .as_ref()
        .unwrap_err()
        .to_string()
        .contains("latitude 95"));
    let local = comids_at_points(&support::offline(), &points, None, Some(&sample())).unwrap();
    for (i, (r, l)) in results.iter().zip(&local).enumerate() {
        if i != 7 && i != 50 {
            assert_eq!(r.as_ref().unwrap(), l.as_ref().unwrap(), "point {i}");
        }
    }
    let n = requests_to(&server, R2);
    assert_eq!(n - n / 5, 40, "one answer per distinct point");
    let progress = seen.progress.lock().unwrap();
    assert_eq!(progress.last(), Some(&("comid".to_string(), 40, 40)));
}

#[test]
fn a_gpkg_without_catchments_is_refused_before_any_lookup() {
    let dir = crate::scratch::temp_dir("batch");
    let not_gpkg = dir.join("points.gpkg");
    std::fs::write(&not_gpkg, b"not sqlite").unwrap();
    let e =
        comids_at_points(&support::offline(), &[(-89.4, 43.0)], None, Some(&not_gpkg)).unwrap_err();
    assert!(e.to_string().contains("not a GeoPackage"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_c_comid_lookup_gives_per_point_results() {
    use hydroplot::ffi::comid_batch::*;
    use hydroplot::ffi::context::*;
    use hydroplot::ffi::hydroplot_status::*;
    let server = MockServer::start();
    throttle(&server, R2, 3, 0);
    let mut ctx = std::ptr::null_mut();
    assert_eq!(hydroplot_context_new(&mut ctx), HYDROPLOT_OK);
    for (k, v) in [("fabric_url", server.fabric_url()), ("retries", "0".into())] {
        let (k, v) = (
            std::ffi::CString::new(k).unwrap(),
            std::ffi::CString::new(v).unwrap(),
        );
        assert_eq!(
            hydroplot_context_set_option(ctx, k.as_ptr(), v.as_ptr()),
            HYDROPLOT_OK
        );
    }
    let inside = catchment_interiors()[0];
    let xy = [inside.0 .0, inside.0 .1, -125.0, 35.0, f64::NAN, 0.0];
    let gpkg = std::ffi::CString::new(sample().to_str().unwrap()).unwrap();
    for hydro_data in [std::ptr::null(), gpkg.as_ptr()] {
        let mut b = std::ptr::null_mut();
        assert_eq!(
            hydroplot_comid_lookup(ctx, xy.as_ptr(), 3, std::ptr::null(), hydro_data, &mut b),
            HYDROPLOT_OK
        );
        assert_eq!(hydroplot_comid_batch_len(b), 3);
        let statuses: Vec<_> = (0..4).map(|i| hydroplot_comid_batch_status(b, i)).collect();
        assert_eq!(
            statuses,
            [
                HYDROPLOT_OK,
                HYDROPLOT_OK,
                HYDROPLOT_ERR_INVALID_ARGUMENT,
                HYDROPLOT_ERR_INVALID_ARGUMENT
            ]
        );
        let comids: Vec<i64> = (0..3).map(|i| hydroplot_comid_batch_get(b, i)).collect();
        assert_eq!(comids, [inside.1, 0, 0]);
        assert!(hydroplot_comid_batch_error(b, 0).is_null());
        let message = unsafe { std::ffi::CStr::from_ptr(hydroplot_comid_batch_error(b, 2)) };
        assert!(message.to_str().unwrap().contains("finite"));
        assert_eq!(hydroplot_comid_batch_http_status(b, 2), 0);
        hydroplot_comid_batch_free(b);
    }
    assert_eq!(hydroplot_comid_batch_len(std::ptr::null()), 0);
    assert_eq!(
        hydroplot_comid_batch_status(std::ptr::null(), 0),
        HYDROPLOT_ERR_NULL_ARGUMENT
    );
    hydroplot_comid_batch_free(std::ptr::null_mut());
    let mut b = std::ptr::null_mut();
    let missing = std::ffi::CString::new("/nonexistent/x.gpkg").unwrap();
    assert_eq!(
        hydroplot_comid_lookup(
            ctx,
            xy.as_ptr(),
            1,
            std::ptr::null(),
            missing.as_ptr(),
            &mut b
        ),
        HYDROPLOT_ERR_IO
    );
    assert!(b.is_null());
    hydroplot_context_free(ctx);
}

/// A point exactly on the edge two of the sample's catchments share, found
/// with plain SQL and the blobs decoded by hand: a vertex of exactly two
/// catchments whose neighbours along the first are vertices of the second
/// too (so their shared boundary runs through it). With the two featureids.
fn shared_edge_point() -> ((f64, f64), i64, i64) {
    let db = support::sample_sql();
    let mut stmt = db
        .prepare("SELECT featureid, geom FROM CatchmentSP ORDER BY featureid")
        .unwrap();
    let catchments: Vec<(i64, Vec<(u64, u64)>)> = stmt
        .query_map([], |r| {
            let (_, xy) = support::wkb::hand_blob(r.get_ref(1)?.as_blob()?);
            let vertices = xy.chunks(2).map(|p| (p[0].to_bits(), p[1].to_bits()));
            Ok((r.get(0)?, vertices.collect()))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut owners: std::collections::HashMap<(u64, u64), Vec<i64>> = Default::default();
    for (id, vertices) in &catchments {
        for v in vertices {
            let ids = owners.entry(*v).or_default();
            if ids.last() != Some(id) {
                ids.push(*id);
            }
        }
    }
    for (a, vertices) in &catchments {
        for w in vertices.windows(3) {
            let ids = &owners[&w[1]];
            if ids.len() != 2 {
                continue;
            }
            let b = if ids[0] == *a { ids[1] } else { ids[0] };
            if [w[0], w[2]].iter().all(|n| owners[n].contains(&b)) && w[0] != w[2] {
                let (x, y) = (f64::from_bits(w[1].0), f64::from_bits(w[1].1));
                return ((x, y), *a, b);
            }
        }
    }
    panic!("no two catchments of the sample share an edge");
}

#[test]
fn a_point_on_a_shared_edge_gets_the_smaller_featureid_from_either_source() {
    let (point, a, b) = shared_edge_point();
    let smaller = a.min(b);
    let local = comids_at_points(&support::offline(), &[point], None, Some(&sample())).unwrap();
    assert_eq!(
        local[0].as_ref().unwrap(),
        &Some(smaller),
        "{point:?} on {a} | {b}"
    );
    // EPSG:4269 given, so the point reaches the lookup untransformed.
    let server = MockServer::start();
    let ctx = mock::context(&server);
    // The service answers both catchments: the rule, not the data, decides.
    let mut both =
        hydroplot::services::fabric::catchments_at_point(&ctx, point.0, point.1).unwrap();
    both.sort();
    assert_eq!(both, [smaller, a.max(b)], "{point:?}");
    let remote = comids_at_points(&ctx, &[point], Some("EPSG:4269"), None).unwrap();
    assert_eq!(
        remote[0].as_ref().unwrap(),
        &Some(smaller),
        "{point:?} on {a} | {b}"
    );
}

#[test]
fn the_local_lookup_reads_the_catchment_keys_the_plot_reads() {
    let points: Vec<(f64, f64)> = catchment_interiors().iter().take(30).map(|c| c.0).collect();
    let expected = comids_at_points(&support::offline(), &points, None, Some(&sample())).unwrap();
    assert!(
        expected.iter().all(|r| matches!(r, Ok(Some(_)))),
        "{expected:?}"
    );
    let dir = crate::scratch::temp_dir("batch-keys");
    for key in ["NHDPlusID", "comid"] {
        // The sample with its catchments keyed by `key` instead of FEATUREID.
        let copy = dir.join(format!("{key}.gpkg"));
        std::fs::copy(sample(), &copy).unwrap();
        rusqlite::Connection::open(&copy)
            .unwrap()
            // The rename re-parses every trigger; the sample's empty metadata
            // tables carry two that SQLite no longer parses: gone first.
            .execute_batch(&format!(
                "DROP TRIGGER gpkg_metadata_reference_row_id_value_insert;
                 DROP TRIGGER gpkg_metadata_reference_row_id_value_update;
                 ALTER TABLE CatchmentSP RENAME COLUMN FEATUREID TO {key}"
            ))
            .unwrap();
        let found = comids_at_points(&support::offline(), &points, None, Some(&copy)).unwrap();
        assert_eq!(
            found
                .iter()
                .map(|r| r.as_ref().unwrap())
                .collect::<Vec<_>>(),
            expected
                .iter()
                .map(|r| r.as_ref().unwrap())
                .collect::<Vec<_>>(),
            "{key}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
