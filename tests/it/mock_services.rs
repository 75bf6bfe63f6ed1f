//! The service clients against the mock services, with the numbers of the
//! real Yahara (267 flowlines, 266 catchments) and New Hope (746 flowlines,
//! 695 catchments) GeoPackages.

use hydroplot::collection::Collection;
use hydroplot::context::{LogLevel, Observer};
use hydroplot::http::Service;
use hydroplot::services::fabric::{self, ItemsQuery};
use hydroplot::services::index;
use hydroplot::{Context, Error};
use hydroplot_mock::{self as mock, MockServer, Paging};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// A bbox around both GeoPackages (Wisconsin and North Carolina).
const BOTH: [f64; 4] = [-90.0, 35.0, -78.0, 44.0];

fn with_page_size(server: &MockServer, page_size: u32) -> Context {
    let mut config = mock::context(server).config;
    config.page_size = page_size;
    Context::new(config).unwrap()
}

fn comids(features: &[hydroplot::feature::Feature], key: &str) -> Vec<i64> {
    features.iter().map(|f| f.get_i64(key).unwrap()).collect()
}

fn offsets(server: &MockServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|r| {
            r.query
                .split('&')
                .find_map(|p| p.strip_prefix("offset="))
                .unwrap_or("-")
                .to_string()
        })
        .collect()
}

#[test]
fn bbox_with_a_stream_order_filter_gives_76_flowlines_in_one_request() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let query = ItemsQuery::BBox {
        bbox: [-89.56684, 42.99816, -89.24681, 43.17192],
        filter: Some("streamorde > 1".into()),
    };
    let flowlines = fabric::items(&ctx, Collection::FlowlineNetwork, &query, "flowline").unwrap();
    assert_eq!(flowlines.len(), 76);
    assert!(flowlines
        .iter()
        .all(|f| f.get_i64("streamorde").unwrap() >= 2));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "GET");
    assert_eq!(
        requests[0].path,
        "/fabric/pygeoapi/collections/nhdflowline_network/items"
    );
    assert_eq!(
        requests[0].query,
        "bbox=-89.56684,42.99816,-89.24681,43.17192&filter=streamorde%20%3E%201&limit=500&offset=0&sortby=comid"
    );
}

#[test]
fn more_than_one_page_is_fetched_completely_in_comid_order() {
    let server = MockServer::start();
    let ctx = with_page_size(&server, 100);
    let all = ItemsQuery::BBox {
        bbox: BOTH,
        filter: None,
    };
    let flowlines = fabric::items(&ctx, Collection::FlowlineNetwork, &all, "flowline").unwrap();
    assert_eq!(flowlines.len(), 267 + 746);
    assert_eq!(
        comids(&flowlines, "comid")
            .into_iter()
            .collect::<HashSet<_>>()
            .len(),
        1013
    );
    let expected: Vec<String> = (0..11).map(|k| (k * 100).to_string()).collect();
    let mut got = offsets(&server);
    got.sort_by_key(|o| o.parse::<u32>().unwrap());
    assert_eq!(got, expected);
    // Every page sorted on the id: the features come in ascending comid.
    let got = comids(&flowlines, "comid");
    assert!(got.windows(2).all(|w| w[0] < w[1]), "ascending comids");
    assert!(server
        .requests()
        .iter()
        .all(|r| r.query.ends_with("&sortby=comid")));

    server.clear_requests();
    let catchments = fabric::items(&ctx, Collection::Catchment, &all, "catchment").unwrap();
    assert_eq!(catchments.len(), 266 + 695);
    assert_eq!(server.requests().len(), 10);
}

#[test]
fn a_server_clamping_limit_still_yields_every_feature() {
    let server = MockServer::start();
    server.set_max_limit(100);
    let ctx = mock::context(&server); // page_size 500
    let all = ItemsQuery::BBox {
        bbox: BOTH,
        filter: None,
    };
    let flowlines = fabric::items(&ctx, Collection::FlowlineNetwork, &all, "flowline").unwrap();
    assert_eq!(flowlines.len(), 1013);
    assert_eq!(
        comids(&flowlines, "comid")
            .into_iter()
            .collect::<HashSet<_>>()
            .len(),
        1013
    );
    assert_eq!(server.requests().len(), 11);
    assert!(server
        .requests()
        .iter()
        .all(|r| r.query.contains("limit=500")));
}

#[test]
fn max_features_stops_before_the_second_page() {
    let server = MockServer::start();
    let mut config = mock::context(&server).config;
    config.page_size = 100;
    config.max_features = 1000;
    let ctx = Context::new(config).unwrap();
    let e = fabric::items(
        &ctx,
        Collection::FlowlineNetwork,
        &ItemsQuery::BBox {
            bbox: BOTH,
            filter: None,
        },
        "f",
    )
    .unwrap_err();
    assert!(matches!(e, Error::Limit(_)), "{e:?}");
    assert!(e.to_string().contains("1013"), "{e}");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn max_features_holds_without_number_matched() {
    let server = MockServer::start();
    server.set_number_matched(false);
    let limited = |page_size: u32, max_features: u64| {
        let mut config = mock::context(&server).config;
        (config.page_size, config.max_features) = (page_size, max_features);
        Context::new(config).unwrap()
    };
    let all = ItemsQuery::BBox {
        bbox: BOTH,
        filter: None,
    };
    // The first page alone is over the limit: nothing past it is fetched.
    let e = fabric::items(&limited(500, 100), Collection::FlowlineNetwork, &all, "f").unwrap_err();
    assert!(matches!(e, Error::Limit(_)), "{e:?}");
    assert_eq!(server.requests().len(), 1);
    // Pages of 100 under a limit of 250: the third page takes it past.
    server.clear_requests();
    let e = fabric::items(&limited(100, 250), Collection::FlowlineNetwork, &all, "f").unwrap_err();
    assert!(matches!(e, Error::Limit(_)), "{e:?}");
    assert_eq!(server.requests().len(), 3);
    // Within the limit, the next links give every feature once.
    server.clear_requests();
    let got = fabric::items(&limited(100, 1013), Collection::FlowlineNetwork, &all, "f").unwrap();
    assert_eq!(
        comids(&got, "comid")
            .into_iter()
            .collect::<HashSet<_>>()
            .len(),
        1013
    );
    assert_eq!(server.requests().len(), 11);
}

#[derive(Default)]
struct Progress(Mutex<Vec<(String, u64, u64)>>);

impl Observer for Progress {
    fn log(&self, _: LogLevel, _: &str) {}
    fn progress(&self, stage: &str, done: u64, total: u64) {
        self.0
            .lock()
            .unwrap()
            .push((stage.to_string(), done, total));
    }
}

#[test]
fn progress_counts_pages() {
    let server = MockServer::start();
    let progress = Arc::new(Progress::default());
    let ctx =
        with_page_size(&server, 300).with_observer(Some(progress.clone() as Arc<dyn Observer>));
    fabric::items(
        &ctx,
        Collection::Catchment,
        &ItemsQuery::BBox {
            bbox: BOTH,
            filter: None,
        },
        "catchment",
    )
    .unwrap();
    let seen = progress.0.lock().unwrap().clone();
    let want: Vec<(String, u64, u64)> = (1..=4).map(|d| ("catchment".to_string(), d, 4)).collect();
    assert_eq!(seen, want);
}

#[test]
fn post_in_returns_exactly_the_listed_comids() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let ids = [13293454, 13293970, 13294176];
    let query = ItemsQuery::In {
        property: "comid",
        ids: &ids,
    };
    let flowlines = fabric::items(&ctx, Collection::FlowlineNetwork, &query, "flowline").unwrap();
    let got: HashSet<i64> = comids(&flowlines, "comid").into_iter().collect();
    assert_eq!(got, ids.into_iter().collect());
    let r = &server.requests()[0];
    assert_eq!(
        (r.method.as_str(), r.query.as_str()),
        ("POST", "limit=500&offset=0&sortby=comid")
    );
    assert_eq!(
        r.headers
            .iter()
            .find(|(k, _)| k == "content-type")
            .map(|(_, v)| v.as_str()),
        Some("application/query-cql-json")
    );
    assert_eq!(
        r.body,
        r#"{"args":[{"property":"comid"},[13293454,13293970,13294176]],"op":"in"}"#
    );

    // Catchments by featureid; the feature id is a server row id, not the comid.
    let query = ItemsQuery::In {
        property: "featureid",
        ids: &ids,
    };
    let catchments = fabric::items(&ctx, Collection::Catchment, &query, "catchment").unwrap();
    let got: HashSet<i64> = comids(&catchments, "featureid").into_iter().collect();
    assert_eq!(got, ids.into_iter().collect());
    assert!(catchments
        .iter()
        .all(|c| c.id.as_ref().and_then(|v| v.as_i64()).unwrap() >= 2_300_000));
}

#[test]
fn catchment_lookup_at_a_point() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    // The Windsor gage point: indexed to flowline 13293456, but it lies in
    // catchment 13293430 (checked with an independent point-in-polygon test).
    let ids = fabric::catchments_at_point(&ctx, -89.3525, 43.20888889).unwrap();
    assert_eq!(ids, vec![13293430]);
    assert_eq!(
        server.requests()[0].query,
        "bbox=-89.3525,43.20888889,-89.3525,43.20888889&properties=featureid&skipGeometry=true&sortby=featureid"
    );
    assert!(fabric::catchments_at_point(&ctx, -100.0, 40.0)
        .unwrap()
        .is_empty());
}

#[test]
fn upstream_navigation_of_the_mock_data() {
    let data = mock::data::Data::shared().unwrap();
    assert_eq!(data.upstream(13293970).len(), 251);
    assert_eq!(data.upstream(13293750).len(), 168);
    assert_eq!(data.upstream(13294176).len(), 9);
    assert_eq!(data.upstream(13296606).len(), 267); // the sample's outlet: every flowline
    assert!(data.upstream(1).is_empty());
}

#[test]
fn the_basin_of_comid_13293970_is_one_polygon() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let basin = index::basin(&ctx, "comid", "13293970").unwrap();
    let Some(geo::Geometry::Polygon(p)) = &basin.geometry else {
        panic!("{:?}", basin.geometry.map(|_| ()))
    };
    let bbox = basin.bbox().unwrap();
    assert!(p.exterior().0.len() > 100);
    // Inside the Yahara catchments' extent.
    assert!(
        bbox[0] >= -89.605 && bbox[2] <= -89.174 && bbox[1] >= 42.920 && bbox[3] <= 43.367,
        "{bbox:?}"
    );
    assert_eq!(
        server.requests()[0].query,
        "simplify=true&splitCatchment=false"
    );
}

#[test]
fn linked_data_features_in_the_real_shape() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let gage = index::feature(&ctx, "nwissite", "USGS-05427718").unwrap();
    assert_eq!(gage.get_i64("comid"), Some(13293456));
    assert_eq!(gage.get_str("name"), Some("YAHARA RIVER AT WINDSOR, WI"));
    assert_eq!(gage.get_str("identifier"), Some("USGS-05427718"));
    assert!(matches!(gage.geometry, Some(geo::Geometry::Point(_))));
    let huc = index::feature(&ctx, "huc12pp", "070900020603").unwrap();
    assert_eq!(huc.get_i64("comid"), Some(13293970));
    let e = index::feature(&ctx, "comid", "999").unwrap_err();
    assert!(
        matches!(
            e,
            Error::NotFound {
                http_status: 404,
                ..
            }
        ),
        "{e:?}"
    );
    let e = index::basin(&ctx, "nwissite", "USGS-00000000").unwrap_err();
    assert_eq!(e.http_status(), 404);
}

#[test]
fn integer_fields_travel_as_floats_like_the_real_service() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let url = format!(
        "{}/collections/nhdflowline_network/items?f=json&comid=13293454&limit=500",
        server.fabric_url()
    );
    let body = String::from_utf8(ctx.get(Service::Fabric, &url).unwrap().body).unwrap();
    for wire in [
        r#""hydroseq":510042379.0"#,
        r#""streamorde":3.0"#,
        r#""comid":13293454,"#,
        r#""fcode":46006,"#,
        r#""id":13293454"#,
    ] {
        assert!(body.contains(wire), "{wire} missing");
    }
    assert!(body.contains(r#""numberMatched":1"#) && body.contains(r#""numberReturned":1"#));
}

#[test]
fn bad_queries_and_unknown_collections() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let base = server.fabric_url();
    let e = ctx
        .get(Service::Fabric, &format!("{base}/collections/nope/items"))
        .unwrap_err();
    assert_eq!(e.http_status(), 404);
    let e = ctx
        .get(
            Service::Fabric,
            &format!("{base}/collections/catchmentsp/items?bbox=1,2"),
        )
        .unwrap_err();
    assert_eq!(e.http_status(), 400);
    assert!(e.to_string().contains("bbox"), "{e}");
}

#[test]
fn flowtrace_answers_the_recording_and_synthesizes_others() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let body = |lat: &str, lon: &str, dir: &str| {
        format!(
            r#"{{"inputs":[{{"id":"lat","type":"text/plain","value":"{lat}"}},{{"id":"lon","type":"text/plain","value":"{lon}"}},{{"id":"raindroptrace","type":"text/plain","value":"true"}},{{"id":"direction","type":"text/plain","value":"{dir}"}}]}}"#
        )
    };
    let url = format!(
        "{}/pygeoapi/processes/nldi-flowtrace/execution",
        server.index_url()
    );
    let trace = |lat: &str, lon: &str, dir: &str| {
        let body = body(lat, lon, dir);
        ctx.post(Service::Process, &url, "application/json", body.as_bytes())
    };
    let r = trace("42.9561", "-89.2158", "up").unwrap();
    assert_eq!(
        r.body,
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/responses/flowtrace_up_yahara.json"
        ))
        .unwrap()
    );

    let r = trace("43.2085", "-89.3520", "down").unwrap();
    let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["features"][0]["id"], "downstreamFlowline");
    assert_eq!(v["features"][0]["properties"]["comid"], 13293456);
    assert_eq!(v["features"][1]["id"], "raindropPath");
    assert_eq!(
        v["features"][1]["geometry"]["coordinates"][0],
        serde_json::json!([-89.352, 43.2085])
    );

    let e = trace("40", "-100", "up").unwrap_err();
    assert_eq!(e.http_status(), 500);
    assert!(e.to_string().contains("outside"), "{e}");
    let e = trace("40", "-100", "sideways").unwrap_err();
    assert_eq!(e.http_status(), 400);
}

#[test]
fn tiles_are_pngs_of_the_tile_colour() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let url = format!("{}/tiles/12/1030/1500.png", server.base_url());
    let r = ctx.get(Service::Tiles, &url).unwrap();
    assert_eq!(r.header("cache-control"), Some("max-age=3600"));
    let mut reader = png::Decoder::new(std::io::Cursor::new(r.body))
        .read_info()
        .unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((info.width, info.height), (256, 256));
    assert_eq!(&pixels[..3], &mock::tile_color(12, 1030, 1500));
    assert_eq!(
        &pixels[pixels.len() - 3..],
        &mock::tile_color(12, 1030, 1500)
    );
    let e = ctx
        .get(
            Service::Tiles,
            &format!("{}/tiles/1/2/0.png", server.base_url()),
        )
        .unwrap_err();
    assert_eq!(e.http_status(), 404);
}

/// Around the New Hope Creek sample (North Carolina): its 746 flowlines.
const NEW_HOPE: [f64; 4] = [-80.0, 35.0, -78.0, 37.0];

#[test]
fn an_unordered_service_breaks_offset_paging_without_sortby() {
    // The control for the next test: the unordered mock really reorders.
    let server = MockServer::start();
    server.set_unordered(true);
    let ctx = mock::context(&server);
    let mut seen = HashSet::new();
    for offset in [0, 500] {
        let url = format!(
            "{}/collections/nhdflowline_network/items?bbox=-80,35,-78,37&limit=500&offset={offset}",
            server.fabric_url()
        );
        let page = ctx.get(Service::Fabric, &url).unwrap();
        let features = fabric::parse_items_page(&page.body).unwrap();
        seen.extend(comids(&features, "comid"));
    }
    assert!(
        seen.len() < 746,
        "two unsorted pages held {} distinct flowlines",
        seen.len()
    );
}

#[test]
fn paging_an_unordered_service_gets_every_feature_exactly_once() {
    let server = MockServer::start();
    server.set_unordered(true);
    let ctx = mock::context(&server);
    let query = ItemsQuery::BBox {
        bbox: NEW_HOPE,
        filter: None,
    };
    for round in 0..3 {
        server.clear_requests();
        let flowlines =
            fabric::items(&ctx, Collection::FlowlineNetwork, &query, "flowline").unwrap();
        let ids = comids(&flowlines, "comid");
        assert_eq!(ids.len(), 746, "round {round}");
        assert_eq!(
            ids.iter().collect::<HashSet<_>>().len(),
            746,
            "round {round}"
        );
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "round {round}: two pages of 500");
        assert!(requests.iter().all(|r| r.query.contains("sortby=comid")));
    }
    // Every collection, the POST queries included.
    let ids: Vec<i64> = fabric::items(&ctx, Collection::FlowlineNetwork, &query, "flowline")
        .unwrap()
        .iter()
        .map(|f| f.get_i64("comid").unwrap())
        .collect();
    let small = with_page_size(&server, 50);
    let by_id = ItemsQuery::In {
        property: "comid",
        ids: &ids[..300],
    };
    let got = fabric::items(&small, Collection::FlowlineNetwork, &by_id, "flowline").unwrap();
    assert_eq!(
        comids(&got, "comid")
            .into_iter()
            .collect::<HashSet<_>>()
            .len(),
        300
    );
    for (collection, key) in [
        (Collection::Catchment, "featureid"),
        (Collection::Waterbody, "comid"),
        (Collection::FlowlineNonNetwork, "comid"),
        (Collection::Area, "comid"),
    ] {
        let all = ItemsQuery::BBox {
            bbox: BOTH,
            filter: None,
        };
        let got = fabric::items(&small, collection, &all, "layer").unwrap();
        let distinct = comids(&got, key).into_iter().collect::<HashSet<_>>().len();
        assert_eq!(distinct, got.len(), "{collection:?}");
    }
}

/// The status the mock answers to a raw request.
fn status_of(
    server: &MockServer,
    method: &str,
    path_and_query: &str,
    content_type: &str,
    body: &str,
) -> u16 {
    use std::io::{Read, Write};
    let mut stream =
        std::net::TcpStream::connect(server.base_url().trim_start_matches("http://")).unwrap();
    write!(
        stream,
        "{method} {path_and_query} HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer[9..12].parse().unwrap()
}

#[test]
fn the_mock_is_as_strict_as_the_real_services() {
    let server = MockServer::start();
    let items = "/fabric/pygeoapi/collections/nhdflowline_network/items";
    let in_body = r#"{"op":"in","args":[{"property":"comid"},[13293970]]}"#;
    // R3's content type, and nothing else.
    assert_eq!(
        status_of(
            &server,
            "POST",
            &format!("{items}?limit=500"),
            "application/query-cql-json",
            in_body
        ),
        200
    );
    assert_eq!(
        status_of(
            &server,
            "POST",
            &format!("{items}?limit=500"),
            "application/json",
            in_body
        ),
        415
    );
    // Unknown query parameters, and known ones misspelled.
    assert_eq!(
        status_of(
            &server,
            "GET",
            &format!("{items}?limit=5&sort=comid"),
            "text/plain",
            ""
        ),
        400
    );
    assert_eq!(
        status_of(
            &server,
            "GET",
            &format!("{items}?limit=5&sortby=comid"),
            "text/plain",
            ""
        ),
        200
    );
    assert_eq!(
        status_of(
            &server,
            "GET",
            "/nldi/linked-data/comid/13293970/basin?simplify=true&split=false",
            "text/plain",
            ""
        ),
        400
    );
    // R5's content type.
    let process = "/nldi/pygeoapi/processes/nldi-flowtrace/execution";
    let trace = r#"{"inputs":[{"id":"lat","type":"text/plain","value":"42.9561"},{"id":"lon","type":"text/plain","value":"-89.2158"},{"id":"raindroptrace","type":"text/plain","value":"true"},{"id":"direction","type":"text/plain","value":"up"}]}"#;
    assert_eq!(
        status_of(&server, "POST", process, "application/json", trace),
        200
    );
    assert_eq!(
        status_of(&server, "POST", process, "text/plain", trace),
        415
    );
    // Only the served profile's names exist: (request, USGS answer, neutral answer).
    let neutral_items = "/fabric/pygeoapi/collections/flowline_network/items?limit=1";
    let usgs_items = format!("{items}?limit=1");
    let json = "application/json";
    let profiles = [
        (("GET", neutral_items, "text/plain", ""), 404, 200),
        (("GET", usgs_items.as_str(), "text/plain", ""), 200, 404),
        (
            (
                "GET",
                "/nldi/linked-data/nwissite/USGS-05429500",
                "text/plain",
                "",
            ),
            200,
            404,
        ),
        (
            (
                "GET",
                "/nldi/linked-data/gaugesite/USGS-05429500",
                "text/plain",
                "",
            ),
            404,
            200,
        ),
        (
            (
                "POST",
                "/nldi/processes/index-flowtrace/execution",
                json,
                trace,
            ),
            404,
            200,
        ),
    ];
    for names in [
        hydroplot::config::Names::Usgs,
        hydroplot::config::Names::Neutral,
    ] {
        server.set_names(names);
        for ((method, path, content_type, body), usgs, neutral) in &profiles {
            let expected = match names {
                hydroplot::config::Names::Usgs => usgs,
                hydroplot::config::Names::Neutral => neutral,
            };
            assert_eq!(
                status_of(&server, method, path, content_type, body),
                *expected,
                "{names:?}: {method} {path}"
            );
        }
    }
    // Headers are logged.
    assert!(server
        .requests()
        .iter()
        .all(|r| r.headers.iter().any(|(k, v)| k == "host" && v == "x")));
}

#[test]
fn the_library_names_itself_in_every_request() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    index::feature(&ctx, "comid", "13293970").unwrap();
    let agent = format!("hydroplot/{}", hydroplot::VERSION);
    for r in server.requests() {
        let ua = r
            .headers
            .iter()
            .find(|(k, _)| k == "user-agent")
            .map(|(_, v)| v.clone());
        assert!(
            ua.as_deref().is_some_and(|v| v.starts_with(&agent)),
            "{ua:?}"
        );
    }
}

/// The comids, `numberMatched` and `next` link of the items page at `url`.
fn page_at(ctx: &Context, url: &str) -> (Vec<i64>, Option<u64>, Option<String>) {
    let body = ctx.get(Service::Fabric, url).unwrap().body;
    let page: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let ids = page["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["properties"]["comid"].as_i64().unwrap())
        .collect();
    let next = page["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["rel"] == "next")
        .map(|l| l["href"].as_str().unwrap().to_string());
    (ids, page["numberMatched"].as_u64(), next)
}

#[test]
fn the_paging_profiles_page_as_their_servers_do() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let items = format!(
        "{}/collections/nhdflowline_network/items?bbox=-80,35,-78,37&limit=300&sortby=comid",
        server.fabric_url()
    );
    let at = |offset: u32| format!("{items}&offset={offset}");
    // pygeoapi: offsets, numberMatched, next by offset; no cursor parameter.
    let (first, matched, next) = page_at(&ctx, &at(0));
    assert_eq!((first.len(), matched), (300, Some(746)));
    assert!(next.unwrap().contains("offset=300"));
    let cursor = status_of(
        &server,
        "GET",
        &format!("{}&cursor=00", at(0).trim_start_matches(&server.base_url())),
        "text/plain",
        "",
    );
    assert_eq!(cursor, 400);

    // Cursor: offset ignored, no numberMatched, the cursor link goes on.
    server.set_paging(Paging::Cursor);
    let (ignored, matched, next) = page_at(&ctx, &at(300));
    assert_eq!((&ignored, matched), (&first, None));
    let next = next.unwrap();
    assert!(
        next.contains("cursor=") && !next.contains("offset="),
        "{next}"
    );
    let (second, _, next) = page_at(&ctx, &next);
    let (third, _, last) = page_at(&ctx, &next.unwrap());
    let all: HashSet<i64> = first.iter().chain(&second).chain(&third).copied().collect();
    assert_eq!((all.len(), last), (746, None));
    let bogus = format!(
        "{}&cursor=xyz",
        items.trim_start_matches(&server.base_url())
    );
    assert_eq!(status_of(&server, "GET", &bogus, "text/plain", ""), 400);

    // Endless: the next link leads to the first page again.
    server.set_paging(Paging::Endless);
    let (_, _, next) = page_at(&ctx, &at(0));
    assert_eq!(page_at(&ctx, &next.unwrap()).0, first);

    // Unsortable: sortby is a 400, the same query without it is served.
    server.set_paging(Paging::Offset);
    server.set_sortable(false);
    let path = at(0).trim_start_matches(&server.base_url()).to_string();
    assert_eq!(status_of(&server, "GET", &path, "text/plain", ""), 400);
    let unsorted = path.replace("&sortby=comid", "");
    assert_eq!(status_of(&server, "GET", &unsorted, "text/plain", ""), 200);
}

#[test]
fn past_the_request_budget_every_answer_is_a_503() {
    let server = MockServer::start();
    server.set_request_budget(1);
    let path = "/nldi/linked-data/comid/13293970";
    assert_eq!(status_of(&server, "GET", path, "text/plain", ""), 200);
    assert_eq!(status_of(&server, "GET", path, "text/plain", ""), 503);
}
