//! Raindrop traces against the loopback mock: the R5 request, the recorded
//! Yahara answer, every direction, every error path, a 1,000-point batch with
//! faults switched on, and the C accessors.

use crate::support;

use hydroplot::config::{Config, Names};
use hydroplot::context::{LogLevel, Observer};
use hydroplot::crs::Transformer;
use hydroplot::ffi::context::{
    hydroplot_context, hydroplot_context_free, hydroplot_context_new, hydroplot_context_set_option,
};
use hydroplot::ffi::hydroplot_status;
use hydroplot::ffi::trace::*;
use hydroplot::ffi::trace_batch::*;
use hydroplot::services::flowtrace::{raindrop_trace, raindrop_trace_batch};
use hydroplot::{Context, Error};
use hydroplot_mock::{self as mock, Fault, FaultKind, MockServer};
use std::ffi::{c_char, CStr, CString};
use std::sync::{Arc, Mutex};
use support::catchment_points;

/// The recorded point (lon, lat), traced up.
const YAHARA: (f64, f64) = (-89.2158, 42.9561);
const PATH: &str = "/nldi/pygeoapi/processes/nldi-flowtrace/execution";

fn context_with(server: &MockServer, edit: impl FnOnce(&mut Config)) -> Context {
    let mut config = mock::context(server).config.clone();
    edit(&mut config);
    Context::new(config).unwrap()
}

/// The (id, value) pairs of a logged request body.
fn inputs(body: &str) -> Vec<(String, String)> {
    let doc: serde_json::Value = serde_json::from_str(body).unwrap();
    doc["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            assert_eq!(i["type"], "text/plain");
            (
                i["id"].as_str().unwrap().to_string(),
                i["value"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn recorded_yahara_trace_up() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let t = raindrop_trace(&ctx, YAHARA.0, YAHARA.1, None, Some("up")).unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        (requests[0].method.as_str(), requests[0].path.as_str()),
        ("POST", PATH)
    );
    assert_eq!(
        inputs(&requests[0].body),
        pairs(&[
            ("lat", "42.9561"),
            ("lon", "-89.2158"),
            ("raindroptrace", "true"),
            ("direction", "up")
        ])
    );
    let (f, r) = (&t.features[0], &t.features[1]);
    assert_eq!(
        (f.id.as_str(), r.id.as_str()),
        ("upstreamFlowline", "raindropPath")
    );
    assert_eq!(f.comid, Some(13297178));
    assert_eq!(f.gnis_name.as_deref(), Some("Yahara River"));
    assert_eq!(f.reachcode.as_deref(), Some("07090002007369"));
    assert_eq!(
        (f.raindrop_path_dist, f.measure),
        (Some(242.09), Some(30.15))
    );
    assert_eq!(
        f.intersection_point,
        Some([-89.21324480351977, 42.956821579907405])
    );
    assert_eq!((f.coords.len() / 2, r.coords.len() / 2), (17, 7));
    assert_eq!(r.intersection_point, None);
    // The envelope of every vertex of both features, read off the recorded JSON.
    assert_eq!(t.bbox(), [-89.222294, 42.956, -89.212523, 42.969406]);
}

#[test]
fn point_in_another_crs_is_sent_as_wgs84() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let (x, y) = Transformer::new("EPSG:4326", "EPSG:3857")
        .unwrap()
        .point(YAHARA.0, YAHARA.1)
        .unwrap();
    let t = raindrop_trace(&ctx, x, y, Some("EPSG:3857"), Some("up")).unwrap();
    assert_eq!(t.features[0].comid, Some(13297178));
    assert_eq!(
        t.features[0].raindrop_path_dist,
        Some(242.09),
        "the recorded answer, not a synthesized one"
    );
    let ((lon, lat), comid) = traceable_point();
    let (ax, ay) = Transformer::new("EPSG:4326", "EPSG:5070")
        .unwrap()
        .point(lon, lat)
        .unwrap();
    let t = raindrop_trace(&ctx, ax, ay, Some("epsg:5070"), Some("down")).unwrap();
    assert_eq!(t.features[0].comid, Some(comid));
    let sent = inputs(&server.requests()[1].body);
    let sent_lat: f64 = sent[0].1.parse().unwrap();
    let sent_lon: f64 = sent[1].1.parse().unwrap();
    assert!(
        (sent_lat - lat).abs() < 1e-7 && (sent_lon - lon).abs() < 1e-7,
        "{sent_lat} {sent_lon}"
    );
}

/// Equal to 1e-12 degrees (the mock's JSON round trip may move the last bit).
fn near(a: &[f64], b: [f64; 2]) -> bool {
    (a[0] - b[0]).abs() < 1e-12 && (a[1] - b[1]).abs() < 1e-12
}

/// An interior point of a catchment with a network flowline, and its comid.
fn traceable_point() -> ((f64, f64), i64) {
    catchment_points()
        .into_iter()
        .find_map(|(p, c)| Some((p, c?)))
        .unwrap()
}

#[test]
fn every_direction() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let ((x, y), comid) = traceable_point();
    for (direction, sent, id) in [
        (None, "down", "downstreamFlowline"),
        (Some("down"), "down", "downstreamFlowline"),
        (Some("none"), "none", "nhdFlowline"),
        (Some("Up"), "up", "upstreamFlowline"),
    ] {
        server.clear_requests();
        let t = raindrop_trace(&ctx, x, y, None, direction).unwrap();
        assert_eq!(
            inputs(&server.requests()[0].body)[3],
            ("direction".into(), sent.into())
        );
        assert_eq!(t.features[0].id, id);
        assert_eq!(t.features[0].comid, Some(comid));
        assert_eq!(t.features[1].id, "raindropPath");
        assert!(
            near(&t.features[1].coords[..2], [x, y]),
            "the path starts at the point"
        );
    }
}

#[test]
fn neutral_names_use_the_specs_path() {
    let server = MockServer::start();
    server.set_names(Names::Neutral);
    let ctx = context_with(&server, |c| c.names = Names::Neutral);
    raindrop_trace(&ctx, YAHARA.0, YAHARA.1, None, Some("up")).unwrap();
    assert_eq!(
        server.requests()[0].path,
        "/nldi/processes/index-flowtrace/execution"
    );
}

fn invalid<T: std::fmt::Debug>(r: hydroplot::Result<T>, needle: &str) {
    match r {
        Err(Error::InvalidArgument(m)) => assert!(m.contains(needle), "{m}"),
        other => panic!("{needle}: {other:?}"),
    }
}

#[test]
fn bad_arguments_fail_before_any_request() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    invalid(
        raindrop_trace(&ctx, YAHARA.0, YAHARA.1, None, Some("sideways")),
        "\"sideways\"",
    );
    invalid(
        raindrop_trace(&ctx, f64::NAN, 42.0, None, None),
        "not a pair of finite numbers",
    );
    invalid(
        raindrop_trace(&ctx, -89.0, f64::INFINITY, None, None),
        "not a pair of finite numbers",
    );
    invalid(
        raindrop_trace(&ctx, -89.0, 95.0, None, None),
        "outside [-180, 180] x [-90, 90]",
    );
    invalid(
        raindrop_trace(&ctx, 200.0, 42.0, Some("EPSG:4269"), None),
        "outside",
    );
    invalid(
        raindrop_trace_batch(&ctx, &[YAHARA], None, Some("left")),
        "\"left\"",
    );
    assert!(matches!(
        raindrop_trace(&ctx, 1.0, 2.0, Some("EPSG:999999"), None),
        Err(Error::Crs(_))
    ));
    assert!(matches!(
        raindrop_trace_batch(&ctx, &[YAHARA], Some("bogus"), None),
        Err(Error::Crs(_))
    ));
    assert!(server.requests().is_empty());
}

#[test]
fn point_outside_the_domain_is_an_http_error_with_the_description() {
    let server = MockServer::start();
    let ctx = context_with(&server, |c| c.retries = 1);
    match raindrop_trace(&ctx, -120.0, 35.0, None, None) {
        Err(Error::Http {
            status: 500,
            message,
        }) => {
            assert!(
                message.contains("no NHDPlusV2 catchment contains the point"),
                "{message}"
            );
            assert!(message.contains("(-120, 35)"), "names the point: {message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.requests().len(), 2, "one retry");
}

#[test]
fn service_faults() {
    let server = MockServer::start();
    let ctx = context_with(&server, |c| c.retries = 1);
    let fault = |kind| Fault {
        path_contains: "flowtrace".into(),
        kind,
        times: None,
    };

    server.set_fault(fault(FaultKind::Html));
    assert!(
        matches!(raindrop_trace(&ctx, YAHARA.0, YAHARA.1, None, Some("up")), Err(Error::Service(m)) if m.contains("not JSON"))
    );
    server.clear_faults();

    server.set_fault(fault(FaultKind::Status(400)));
    assert!(matches!(
        raindrop_trace(&ctx, YAHARA.0, YAHARA.1, None, None),
        Err(Error::Http { status: 400, .. })
    ));
    server.clear_faults();

    server.set_fault(fault(FaultKind::DropConnection));
    assert!(matches!(
        raindrop_trace(&ctx, YAHARA.0, YAHARA.1, None, None),
        Err(Error::Network(_))
    ));
    server.clear_faults();

    // A passing outage is retried away.
    server.clear_requests();
    server.set_fault(Fault {
        times: Some(1),
        ..fault(FaultKind::Status(503))
    });
    let t = raindrop_trace(&ctx, YAHARA.0, YAHARA.1, None, Some("up")).unwrap();
    assert_eq!(t.features[0].comid, Some(13297178));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_200_that_is_not_a_two_feature_collection_is_a_service_error() {
    let server = MockServer::start();
    let ctx = context_with(&server, |c| c.retries = 0);
    server.set_fault(Fault {
        path_contains: "flowtrace".into(),
        kind: FaultKind::Html,
        times: None,
    });
    match raindrop_trace(&ctx, YAHARA.0, YAHARA.1, None, None) {
        Err(Error::Service(m)) => assert!(m.contains("flowtrace process"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[derive(Default)]
struct Progress {
    calls: Mutex<Vec<(String, u64, u64, std::thread::ThreadId)>>,
}

impl Observer for Progress {
    fn log(&self, _: LogLevel, _: &str) {}
    fn progress(&self, stage: &str, done: u64, total: u64) {
        self.calls
            .lock()
            .unwrap()
            .push((stage.into(), done, total, std::thread::current().id()));
    }
}

/// Transient failures the retry loop gives up on.
fn transient(e: &Error) -> bool {
    matches!(
        e,
        Error::Network(_)
            | Error::Http {
                status: 503 | 429,
                ..
            }
    )
}

#[test]
fn batch_of_1000_points_with_faults() {
    const RETRIES: u32 = 4;
    const FAULTS: usize = 50;
    let server = MockServer::start();
    let progress = Arc::new(Progress::default());
    let ctx = context_with(&server, |c| {
        c.retries = RETRIES;
        c.concurrency = 4;
    })
    .with_observer(Some(progress.clone()));
    let mut cases = catchment_points();
    assert!(cases.len() > 900, "{}", cases.len());
    cases.truncate(990);
    // Points that fail on their own: outside the domain, not a number.
    cases.splice(100..100, [((-120.0, 35.0), None), ((f64::NAN, 1.0), None)]);
    while cases.len() < 1000 {
        cases.push(cases[cases.len() % 50]);
    }
    let points: Vec<(f64, f64)> = cases.iter().map(|c| c.0).collect();
    for (kind, times) in [
        (FaultKind::Status(503), FAULTS / 2),
        (FaultKind::DropConnection, FAULTS / 5),
        (FaultKind::TooManyRequests { retry_after_s: 0 }, FAULTS / 5),
        (FaultKind::TruncatedBody, FAULTS / 10),
    ] {
        server.set_fault(Fault {
            path_contains: "flowtrace".into(),
            kind,
            times: Some(times as u32),
        });
    }
    let results = raindrop_trace_batch(&ctx, &points, None, None).unwrap();
    assert_eq!(results.len(), 1000);
    // A point fails on faults only when all its RETRIES + 1 attempts met one.
    let (mut ok, mut gave_up) = (0, 0);
    for (i, (((x, y), comid), result)) in cases.iter().zip(&results).enumerate() {
        match (comid, result) {
            (Some(c), Ok(t)) => {
                ok += 1;
                assert_eq!(t.features[0].comid, Some(*c), "point {i}");
                assert!(
                    near(&t.features[1].coords[..2], [*x, *y]),
                    "point {i}: the path starts at the point"
                );
            }
            (_, Err(e)) if transient(e) => gave_up += 1,
            (None, Err(Error::InvalidArgument(m))) => assert!(x.is_nan(), "point {i}: {m}"),
            (
                None,
                Err(Error::Http {
                    status: 500,
                    message,
                }),
            ) => {
                assert!(
                    message.contains(&format!("({x}, {y})")),
                    "point {i}: {message}"
                )
            }
            (_, other) => panic!("point {i} ({x}, {y}), expected comid {comid:?}: {other:?}"),
        }
    }
    assert!(gave_up <= FAULTS / (RETRIES as usize + 1), "{gave_up}");
    let expected_ok = cases.iter().filter(|c| c.1.is_some()).count();
    assert!(
        ok + gave_up >= expected_ok && ok > 900,
        "{ok} {gave_up} {expected_ok}"
    );
    // Every fault was met: more requests than traced points.
    let sent = server.requests().iter().filter(|r| r.path == PATH).count();
    assert!(sent >= ok + FAULTS, "{sent}");
    let calls = progress.calls.lock().unwrap();
    assert_eq!(calls.len(), 1001);
    assert_eq!((calls[0].1, calls[0].2), (0, 1000));
    assert_eq!(
        (calls[1000].0.as_str(), calls[1000].1, calls[1000].2),
        ("trace", 1000, 1000)
    );
    assert!(
        calls.iter().all(|c| c.3 == std::thread::current().id()),
        "progress on the calling thread"
    );
}

// ---------------------------------------------------------------- C ABI

fn ffi_context(server: &MockServer) -> *mut hydroplot_context {
    let mut ctx = std::ptr::null_mut();
    assert_eq!(
        hydroplot_context_new(&mut ctx),
        hydroplot_status::HYDROPLOT_OK
    );
    for (k, v) in [("index_url", server.index_url()), ("retries", "0".into())] {
        let (k, v) = (CString::new(k).unwrap(), CString::new(v).unwrap());
        assert_eq!(
            hydroplot_context_set_option(ctx, k.as_ptr(), v.as_ptr()),
            hydroplot_status::HYDROPLOT_OK
        );
    }
    ctx
}

fn text(p: *const c_char) -> Option<String> {
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string())
}

#[test]
fn c_accessors() {
    let server = MockServer::start();
    let ctx = ffi_context(&server);
    let mut t = std::ptr::null_mut();
    assert_eq!(
        hydroplot_raindrop_trace(
            ctx,
            YAHARA.0,
            YAHARA.1,
            std::ptr::null(),
            c"up".as_ptr(),
            &mut t
        ),
        hydroplot_status::HYDROPLOT_OK
    );
    assert_eq!(hydroplot_trace_len(t), 2);
    assert_eq!(
        text(hydroplot_trace_id(t, 0)).as_deref(),
        Some("upstreamFlowline")
    );
    assert_eq!(
        text(hydroplot_trace_id(t, 1)).as_deref(),
        Some("raindropPath")
    );
    assert_eq!(text(hydroplot_trace_id(t, 2)), None);
    assert_eq!(
        text(hydroplot_trace_gnis_name(t, 0)).as_deref(),
        Some("Yahara River")
    );
    assert_eq!(text(hydroplot_trace_gnis_name(t, 1)), None);
    assert_eq!(
        text(hydroplot_trace_reachcode(t, 0)).as_deref(),
        Some("07090002007369")
    );
    let (mut comid, mut dist, mut measure) = (0i64, 0.0, 0.0);
    assert!(hydroplot_trace_comid(t, 0, &mut comid) && comid == 13297178);
    assert!(!hydroplot_trace_comid(t, 1, &mut comid) && comid == 13297178);
    assert!(hydroplot_trace_raindrop_path_dist(t, 0, &mut dist) && dist == 242.09);
    assert!(hydroplot_trace_measure(t, 0, &mut measure) && measure == 30.15);
    assert!(!hydroplot_trace_measure(t, 0, std::ptr::null_mut()));
    let mut p = [0.0; 2];
    assert_eq!(hydroplot_trace_intersection_point(t, 0, p.as_mut_ptr()), 2);
    assert_eq!(p, [-89.21324480351977, 42.956821579907405]);
    assert_eq!(hydroplot_trace_intersection_point(t, 1, p.as_mut_ptr()), 0);
    let mut n = 99;
    let xy = hydroplot_trace_coords(t, 1, &mut n);
    assert_eq!(n, 7);
    let xy = unsafe { std::slice::from_raw_parts(xy, 2 * n) };
    assert_eq!(
        (xy[0], xy[1], xy[12], xy[13]),
        (-89.2158, 42.9561, -89.213245, 42.956822)
    );
    assert!(hydroplot_trace_coords(t, 5, &mut n).is_null() && n == 0);
    let mut b = [0.0; 4];
    assert_eq!(
        hydroplot_trace_bbox(t, b.as_mut_ptr()),
        hydroplot_status::HYDROPLOT_OK
    );
    assert_eq!(b, [-89.222294, 42.956, -89.212523, 42.969406]);
    let mut buf = std::ptr::null_mut();
    assert_eq!(
        hydroplot_trace_geojson(t, &mut buf),
        hydroplot_status::HYDROPLOT_OK
    );
    let json = unsafe {
        std::slice::from_raw_parts(
            hydroplot::ffi::buffer::hydroplot_buffer_data(buf),
            hydroplot::ffi::buffer::hydroplot_buffer_len(buf),
        )
    };
    let again = hydroplot::trace::Trace::parse(json).unwrap();
    assert_eq!(again.features[0].comid, Some(13297178));
    hydroplot::ffi::buffer::hydroplot_buffer_free(buf);
    hydroplot_trace_free(t);

    // NULLs and errors.
    assert_eq!(hydroplot_trace_len(std::ptr::null()), 0);
    assert!(hydroplot_trace_id(std::ptr::null(), 0).is_null());
    assert_eq!(
        hydroplot_trace_bbox(std::ptr::null(), b.as_mut_ptr()),
        hydroplot_status::HYDROPLOT_ERR_NULL_ARGUMENT
    );
    let mut t = std::ptr::null_mut();
    let bad = hydroplot_raindrop_trace(
        ctx,
        YAHARA.0,
        YAHARA.1,
        std::ptr::null(),
        c"west".as_ptr(),
        &mut t,
    );
    assert_eq!(
        (bad, t.is_null()),
        (hydroplot_status::HYDROPLOT_ERR_INVALID_ARGUMENT, true)
    );
    let outside = hydroplot_raindrop_trace(
        ctx,
        -120.0,
        35.0,
        std::ptr::null(),
        std::ptr::null(),
        &mut t,
    );
    assert_eq!(outside, hydroplot_status::HYDROPLOT_ERR_HTTP);
    assert_eq!(hydroplot::ffi::library::hydroplot_last_http_status(), 500);
    assert!(text(hydroplot::ffi::library::hydroplot_last_error())
        .unwrap()
        .contains("outside the data's domain"));
    let crs = hydroplot_raindrop_trace(ctx, 0.0, 0.0, c"EPSG:0".as_ptr(), std::ptr::null(), &mut t);
    assert_eq!(crs, hydroplot_status::HYDROPLOT_ERR_CRS);
    hydroplot_context_free(ctx);
}

#[test]
fn c_batch() {
    let server = MockServer::start();
    let ctx = ffi_context(&server);
    let xy = [YAHARA.0, YAHARA.1, -120.0, 35.0, f64::NAN, 0.0];
    let mut b = std::ptr::null_mut();
    assert_eq!(
        hydroplot_raindrop_trace_batch(
            ctx,
            xy.as_ptr(),
            3,
            std::ptr::null(),
            c"up".as_ptr(),
            &mut b
        ),
        hydroplot_status::HYDROPLOT_OK
    );
    assert_eq!(hydroplot_trace_batch_len(b), 3);
    use hydroplot_status::*;
    let statuses: Vec<_> = (0..4).map(|i| hydroplot_trace_batch_status(b, i)).collect();
    assert_eq!(
        statuses,
        [
            HYDROPLOT_OK,
            HYDROPLOT_ERR_HTTP,
            HYDROPLOT_ERR_INVALID_ARGUMENT,
            HYDROPLOT_ERR_INVALID_ARGUMENT
        ]
    );
    assert_eq!(
        (
            hydroplot_trace_batch_http_status(b, 0),
            hydroplot_trace_batch_http_status(b, 1)
        ),
        (0, 500)
    );
    assert_eq!(text(hydroplot_trace_batch_error(b, 0)), None);
    assert!(text(hydroplot_trace_batch_error(b, 1))
        .unwrap()
        .contains("outside the data's domain"));
    assert!(text(hydroplot_trace_batch_error(b, 2))
        .unwrap()
        .contains("not a pair of finite numbers"));
    let t = hydroplot_trace_batch_get(b, 0);
    let mut comid = 0;
    assert!(hydroplot_trace_comid(t, 0, &mut comid) && comid == 13297178);
    assert!(hydroplot_trace_batch_get(b, 1).is_null() && hydroplot_trace_batch_get(b, 9).is_null());
    hydroplot_trace_batch_free(b);
    let mut b = std::ptr::null_mut();
    let null_xy = hydroplot_raindrop_trace_batch(
        ctx,
        std::ptr::null(),
        2,
        std::ptr::null(),
        std::ptr::null(),
        &mut b,
    );
    assert_eq!((null_xy, b.is_null()), (HYDROPLOT_ERR_NULL_ARGUMENT, true));
    let bad = hydroplot_raindrop_trace_batch(
        ctx,
        xy.as_ptr(),
        3,
        std::ptr::null(),
        c"uphill".as_ptr(),
        &mut b,
    );
    assert_eq!(bad, HYDROPLOT_ERR_INVALID_ARGUMENT);
    assert_eq!(
        server.requests().len(),
        2,
        "the NaN point and the bad direction sent nothing"
    );
    hydroplot_context_free(ctx);
}

/// A trace's Arrow stream, read back through the C stream interface as a
/// consumer (pyarrow, nanoarrow) reads it.
fn arrow_of(t: *const hydroplot_trace) -> arrow_array::RecordBatch {
    use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
    let mut stream = FFI_ArrowArrayStream::empty();
    assert_eq!(
        hydroplot_trace_arrow(t, &mut stream),
        hydroplot_status::HYDROPLOT_OK
    );
    let mut reader = ArrowArrayStreamReader::try_new(stream).unwrap();
    let batch = reader.next().unwrap().unwrap();
    assert!(reader.next().is_none(), "one batch");
    batch
}

/// The GeoJSON of a trace, parsed.
fn geojson_of(t: *const hydroplot_trace) -> serde_json::Value {
    let mut buf = std::ptr::null_mut();
    assert_eq!(
        hydroplot_trace_geojson(t, &mut buf),
        hydroplot_status::HYDROPLOT_OK
    );
    let doc = serde_json::from_slice(unsafe {
        std::slice::from_raw_parts(
            hydroplot::ffi::buffer::hydroplot_buffer_data(buf),
            hydroplot::ffi::buffer::hydroplot_buffer_len(buf),
        )
    })
    .unwrap();
    hydroplot::ffi::buffer::hydroplot_buffer_free(buf);
    doc
}

/// The spec's 7 trace fields, in its order ("Trace result" in the interface spec).
const SPEC_FIELDS: &str =
    "id gnis_name comid reachcode raindrop_pathDist measure intersection_point";

/// Every output of a trace has the spec's 7 fields, typed, even when the
/// service left one blank in both features: here a flowline without a GNIS
/// name (the service sends `"none"`), so `gnis_name` is null twice.
#[test]
fn every_output_has_the_specs_7_fields_even_when_one_is_blank_everywhere() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Float64Type;
    use arrow_array::Array;
    use arrow_schema::DataType;
    let data = mock::data::Data::shared().unwrap();
    let unnamed = |comid: i64| {
        data.flowline(comid)
            .is_some_and(|f| f.get_str("gnis_name").is_none_or(|n| n.trim().is_empty()))
    };
    let ((x, y), comid) = catchment_points()
        .into_iter()
        .find_map(|(p, c)| c.filter(|&c| unnamed(c)).map(|c| (p, c)))
        .expect("a traceable point on an unnamed flowline");
    let server = MockServer::start();
    let ctx = ffi_context(&server);
    for (point, direction, named) in [((x, y), c"down", false), (YAHARA, c"up", true)] {
        let mut t = std::ptr::null_mut();
        assert_eq!(
            hydroplot_raindrop_trace(
                ctx,
                point.0,
                point.1,
                std::ptr::null(),
                direction.as_ptr(),
                &mut t
            ),
            hydroplot_status::HYDROPLOT_OK
        );
        assert_eq!(text(hydroplot_trace_gnis_name(t, 0)).is_some(), named);

        let batch = arrow_of(t);
        let schema = batch.schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names[0], "geometry");
        assert_eq!(names[1..].join(" "), SPEC_FIELDS);
        let types: Vec<&DataType> = schema.fields().iter().map(|f| f.data_type()).collect();
        let list = DataType::new_list(DataType::Float64, true);
        assert_eq!(
            types[1..],
            [
                &DataType::Utf8,
                &DataType::Utf8,
                &DataType::Int64,
                &DataType::Utf8,
                &DataType::Float64,
                &DataType::Float64,
                &list
            ]
        );
        let gnis = batch.column(2);
        assert_eq!(gnis.null_count(), if named { 1 } else { 2 });
        let comids = batch
            .column(3)
            .as_primitive::<arrow_array::types::Int64Type>();
        if !named {
            assert_eq!(comids.value(0), comid);
        }
        assert!(comids.is_null(1));
        let points = batch.column(7).as_list::<i32>();
        assert_eq!(points.null_count(), 0, "an empty list, not a null");
        let mut p = [0.0; 2];
        assert_eq!(hydroplot_trace_intersection_point(t, 0, p.as_mut_ptr()), 2);
        assert_eq!(points.value(0).as_primitive::<Float64Type>().values(), &p);
        assert_eq!(points.value(1).len(), 0);

        let doc = geojson_of(t);
        for (i, f) in doc["features"].as_array().unwrap().iter().enumerate() {
            let props = f["properties"].as_object().unwrap();
            let keys: Vec<&str> = props.keys().map(String::as_str).collect();
            let mut want: Vec<&str> = SPEC_FIELDS.split(' ').collect();
            want.sort();
            assert_eq!(keys, want, "feature {i}");
            assert_eq!(props["id"], f["id"]);
        }
        let (flowline, path) = (&doc["features"][0], &doc["features"][1]);
        assert_eq!(
            flowline["properties"]["intersection_point"],
            serde_json::json!(p)
        );
        assert_eq!(
            path["properties"]["intersection_point"],
            serde_json::json!([])
        );
        assert!(path["properties"]["comid"].is_null() && path["properties"]["measure"].is_null());
        assert_eq!(flowline["properties"]["gnis_name"].is_null(), !named);
        hydroplot_trace_free(t);
    }
    hydroplot_context_free(ctx);
}
