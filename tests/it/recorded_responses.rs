//! The library's parsers against the real service responses recorded in
//! `tests/data/responses/` (nhdplusTools' httptest2 fixtures).
//!
//! Independence: every expected value is either a fact stated in
//! `tests/data/responses/SOURCES.md` (written as a literal here, with the file
//! as its source) or read from the same JSON with plain `serde_json` in this
//! file, which is the independent side of the comparison. None was taken from
//! the library's own output.
//!
//! Parsing entry points: [`fabric::parse_items_page`] for items pages and
//! [`Trace::parse`] for the flowtrace answer. Parsers without a public entry
//! point (the index service's feature reader, the pager's `numberMatched`
//! handling, the catchment lookup) are reached through their public callers
//! ([`index::feature`], [`fabric::items`], [`fabric::catchments_at_point`],
//! [`flowtrace::raindrop_trace`]) against [`Replay`], a small loopback server
//! that answers every request with one recorded body, byte for byte.
//! It is deliberately not the crate's mock, whose answers are built by the
//! library's own code.

use crate::support;
use geo::Geometry;
use hydroplot::collection::Collection;
use hydroplot::config::Config;
use hydroplot::feature::Feature;
use hydroplot::services::fabric::{self, ItemsQuery};
use hydroplot::services::{flowtrace, index};
use hydroplot::trace::Trace;
use hydroplot::{Context, Error};
use loopback::Loopback;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

use crate::loopback;

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/responses")
        .join(name)
}

/// The recorded bytes of `name`.
fn recorded(name: &str) -> Vec<u8> {
    std::fs::read(path(name)).unwrap()
}

/// The independent side: `name` read with serde_json alone.
fn raw(name: &str) -> Value {
    serde_json::from_slice(&recorded(name)).unwrap()
}

/// The features of an items page as the library parses them.
fn page(name: &str) -> Vec<Feature> {
    fabric::parse_items_page(&recorded(name)).unwrap()
}

/// The parsed feature whose `comid` is `comid`.
fn by_comid(features: &[Feature], comid: i64) -> &Feature {
    features
        .iter()
        .find(|f| f.get_i64("comid") == Some(comid))
        .unwrap_or_else(|| panic!("no feature with comid {comid}"))
}

/// The raw JSON feature whose `properties.comid` is `comid`.
fn raw_by_comid(doc: &Value, comid: i64) -> &Value {
    doc["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["properties"]["comid"].as_i64() == Some(comid))
        .unwrap_or_else(|| panic!("no raw feature with comid {comid}"))
}

/// `[x, y]` pairs of a JSON coordinate array of positions.
fn raw_positions(v: &Value) -> Vec<[f64; 2]> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| [p[0].as_f64().unwrap(), p[1].as_f64().unwrap()])
        .collect()
}

/// The vertices of each line of a parsed (Multi)LineString.
fn lines(g: &Geometry<f64>) -> Vec<Vec<[f64; 2]>> {
    let line = |l: &geo::LineString<f64>| l.coords().map(|c| [c.x, c.y]).collect();
    match g {
        Geometry::MultiLineString(m) => m.0.iter().map(line).collect(),
        Geometry::LineString(l) => vec![line(l)],
        other => panic!("not a line geometry: {other:?}"),
    }
}

/// The keys whose value is JSON null.
fn null_keys(props: &serde_json::Map<String, Value>) -> Vec<&str> {
    props
        .iter()
        .filter(|(_, v)| v.is_null())
        .map(|(k, _)| k.as_str())
        .collect()
}

// ---------------------------------------------------------------------------
// Items pages, through fabric::parse_items_page
// ---------------------------------------------------------------------------

#[test]
fn the_flowline_page_of_comid_13293454() {
    // SOURCES.md: 1 feature, MultiLineString, id = comid 13293454, Yahara
    // River, 138 properties.
    let features = page("flowline_items_comid_13293454.json");
    assert_eq!(features.len(), 1);
    let f = &features[0];
    assert_eq!(f.id, Some(Value::from(13293454)));
    assert_eq!(f.get_i64("comid"), Some(13293454));
    assert_eq!(f.get_str("gnis_name"), Some("Yahara River"));
    assert_eq!(f.properties.len(), 138);
    for key in [
        "objectid",
        "comid",
        "fdate",
        "gnis_id",
        "gnis_name",
        "lengthkm",
        "reachcode",
        "ftype",
        "fcode",
        "streamorde",
        "fromnode",
        "tonode",
        "hydroseq",
        "levelpathi",
        "pathlength",
        "terminalpa",
        "dnhydroseq",
        "totdasqkm",
        "qa_ma",
        "ve_12",
        "rpuid",
        "vpuid",
        "enabled",
    ] {
        assert!(f.properties.contains_key(key), "{key} is missing");
    }

    // Types as the service sent them (read by hand in the JSON): comid and
    // fcode integers, lengthkm and the VAA floats, names and codes strings.
    let p = &f.properties;
    assert!(p["comid"].is_i64() && p["fcode"].is_i64());
    assert!(p["lengthkm"].is_f64() && p["streamorde"].is_f64());
    assert_eq!(p["lengthkm"].as_f64(), Some(0.94));
    assert_eq!(p["streamorde"].as_f64(), Some(3.0));
    assert_eq!(p["fcode"].as_i64(), Some(46006));
    assert_eq!(p["reachcode"].as_str(), Some("07090002007638"));
    assert_eq!(p["ftype"].as_str(), Some("StreamRiver"));
    assert_eq!(p["gnis_id"].as_str(), Some("1577073"));
    // hydroseq is sent as 510042379.0; the integer accessor still reads it.
    assert!(p["hydroseq"].is_f64());
    assert_eq!(f.get_i64("hydroseq"), Some(510042379));
    assert_eq!(f.get_i64("dnhydroseq"), Some(510040392));

    // Every property, nulls included, exactly as serde_json reads the file.
    let doc = raw("flowline_items_comid_13293454.json");
    let raw_f = &doc["features"][0];
    let raw_props = raw_f["properties"].as_object().unwrap();
    assert_eq!(&f.properties, raw_props);
    assert_eq!(
        null_keys(&f.properties),
        // (serde_json maps are sorted by key)
        ["hwnodesqkm", "lakefract", "rareahload", "surfarea"]
    );

    // One line of 19 vertices (counted in the JSON), vertex for vertex.
    let geometry = f.geometry.as_ref().unwrap();
    assert!(matches!(geometry, Geometry::MultiLineString(_)));
    let got = lines(geometry);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].len(), 19);
    assert_eq!(got[0], raw_positions(&raw_f["geometry"]["coordinates"][0]));
}

#[test]
fn the_post_in_page_holds_comids_101_and_13293454() {
    // SOURCES.md: 2 features, comids 101 and 13293454; 101 has a blank name
    // (gnis_id/gnis_name a single space), divergence 1.0, va_10/vc_10/ve_10
    // -9998.0; 13293454 is identical to the single-comid page's feature.
    let features = page("flowline_items_post_in.json");
    assert_eq!(features.len(), 2);
    let mut comids: Vec<i64> = features.iter().filter_map(|f| f.get_i64("comid")).collect();
    comids.sort_unstable();
    assert_eq!(comids, [101, 13293454]);

    let blank = by_comid(&features, 101);
    assert_eq!(blank.id, Some(Value::from(101)));
    assert_eq!(blank.get_str("gnis_name"), Some(" "));
    assert_eq!(blank.get_str("gnis_id"), Some(" "));
    assert_eq!(blank.get_f64("divergence"), Some(1.0));
    for key in ["va_10", "vc_10", "ve_10"] {
        assert_eq!(blank.get_f64(key), Some(-9998.0), "{key}");
    }
    assert_eq!(blank.properties.len(), 138);
    let doc = raw("flowline_items_post_in.json");
    let raw_blank = raw_by_comid(&doc, 101);
    assert_eq!(
        &blank.properties,
        raw_blank["properties"].as_object().unwrap()
    );
    let got = lines(blank.geometry.as_ref().unwrap());
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0],
        raw_positions(&raw_blank["geometry"]["coordinates"][0])
    );

    let single = page("flowline_items_comid_13293454.json");
    assert_eq!(by_comid(&features, 13293454), &single[0]);
}

#[test]
fn the_empty_page_has_no_features() {
    // SOURCES.md: 0 features, numberMatched 0, a blank line inside `[ ]`.
    assert!(page("flowline_items_empty.json").is_empty());
    let doc = raw("flowline_items_empty.json");
    assert_eq!(doc["numberMatched"], 0);
    assert_eq!(doc["features"], Value::Array(Vec::new()));
}

#[test]
fn the_bbox_page_holds_two_connected_tobacco_river_reaches() {
    // SOURCES.md: comids 22878631 and 22878633, Tobacco River, streamorde 5.0;
    // the end of 22878633 is the start of 22878631 (22878633 dnhydroseq =
    // 22878631 hydroseq).
    let features = page("flowline_items_bbox_streamorde_gt_2.json");
    assert_eq!(features.len(), 2);
    let down = by_comid(&features, 22878631);
    let up = by_comid(&features, 22878633);
    for f in [down, up] {
        assert_eq!(f.get_str("gnis_name"), Some("Tobacco River"));
        assert_eq!(f.get_f64("streamorde"), Some(5.0));
        assert!(f.properties["streamorde"].is_f64());
        assert_eq!(f.properties.len(), 138);
    }
    assert_eq!(up.get_i64("dnhydroseq"), down.get_i64("hydroseq"));
    let (down_line, up_line) = (
        lines(down.geometry.as_ref().unwrap()),
        lines(up.geometry.as_ref().unwrap()),
    );
    assert_eq!(up_line[0].last(), down_line[0].first());

    let doc = raw("flowline_items_bbox_streamorde_gt_2.json");
    for (f, comid) in [(down, 22878631), (up, 22878633)] {
        let r = raw_by_comid(&doc, comid);
        assert_eq!(f.id, Some(r["id"].clone()));
        assert_eq!(&f.properties, r["properties"].as_object().unwrap());
        let l = lines(f.geometry.as_ref().unwrap());
        assert_eq!(l.len(), 1);
        assert_eq!(l[0], raw_positions(&r["geometry"]["coordinates"][0]));
    }
}

#[test]
fn the_catchment_lookup_feature_id_is_a_row_id_not_the_comid() {
    // SOURCES.md: 1 feature, geometry null, properties only featureid 22879275
    // (the COMID); feature id 2310647 is a server row id.
    let features = page("catchment_point_lookup.json");
    assert_eq!(features.len(), 1);
    let f = &features[0];
    assert_eq!(f.id, Some(Value::from(2310647)));
    assert_eq!(f.geometry, None);
    assert_eq!(f.properties.len(), 1);
    assert_eq!(f.get_i64("featureid"), Some(22879275));
    assert!(f.properties["featureid"].is_i64());
}

#[test]
fn the_waterbody_page_of_gregor_lake() {
    // SOURCES.md: 1 feature, MultiPolygon (one closed 32-vertex ring), id =
    // comid 22887007, "Gregor Lake", ftype LakePond, fcode 39004, 22
    // properties, several null.
    let features = page("waterbody_items_comid.json");
    assert_eq!(features.len(), 1);
    let f = &features[0];
    assert_eq!(f.id, Some(Value::from(22887007)));
    assert_eq!(f.get_i64("comid"), Some(22887007));
    assert_eq!(f.get_str("gnis_name"), Some("Gregor Lake"));
    assert_eq!(f.get_str("ftype"), Some("LakePond"));
    assert_eq!(f.properties["fcode"].as_i64(), Some(39004));
    assert_eq!(f.properties.len(), 22);
    for key in [
        "areasqkm",
        "elevation",
        "reachcode",
        "shape_area",
        "onoffnet",
        "meandepth",
        "lakevolume",
    ] {
        assert!(f.properties.contains_key(key), "{key} is missing");
    }
    // The nulls are kept as nulls, not dropped (they are the ones the JSON has).
    let doc = raw("waterbody_items_comid.json");
    let raw_f = &doc["features"][0];
    let raw_props = raw_f["properties"].as_object().unwrap();
    assert_eq!(null_keys(&f.properties), null_keys(raw_props));
    assert!(null_keys(&f.properties).contains(&"meandepth"));
    assert!(f.properties["areasqkm"].is_f64());
    assert_eq!(&f.properties, raw_props);

    let Some(Geometry::MultiPolygon(mp)) = &f.geometry else {
        panic!("not a MultiPolygon: {:?}", f.geometry);
    };
    assert_eq!(mp.0.len(), 1);
    let ring: Vec<[f64; 2]> = mp.0[0].exterior().coords().map(|c| [c.x, c.y]).collect();
    assert!(mp.0[0].interiors().is_empty());
    assert_eq!(ring.len(), 32);
    assert_eq!(ring.first(), ring.last());
    assert_eq!(ring, raw_positions(&raw_f["geometry"]["coordinates"][0][0]));
}

// ---------------------------------------------------------------------------
// The flowtrace answer, through Trace::parse
// ---------------------------------------------------------------------------

/// The facts SOURCES.md states about `flowtrace_up_yahara.json`, checked on
/// a parsed trace, and its vertices checked against the JSON.
fn assert_is_the_recorded_yahara_trace(t: &Trace) {
    assert_eq!(t.features.len(), 2);
    let (flowline, path) = (&t.features[0], &t.features[1]);
    assert_eq!(flowline.id, "upstreamFlowline");
    assert_eq!(flowline.gnis_name.as_deref(), Some("Yahara River"));
    assert_eq!(flowline.comid, Some(13297178));
    assert_eq!(flowline.reachcode.as_deref(), Some("07090002007369"));
    assert_eq!(flowline.raindrop_path_dist, Some(242.09));
    assert_eq!(flowline.measure, Some(30.15));
    assert_eq!(
        flowline.intersection_point,
        Some([-89.21324480351977, 42.956821579907405])
    );
    assert_eq!(flowline.coords.len(), 17 * 2);

    assert_eq!(path.id, "raindropPath");
    assert_eq!(path.coords.len(), 7 * 2);
    assert_eq!(
        (
            &path.gnis_name,
            path.comid,
            &path.reachcode,
            path.raindrop_path_dist,
            path.measure,
            path.intersection_point
        ),
        (&None, None, &None, None, None, None)
    );
    // The raindrop path starts at the input point (-89.2158, 42.9561) and
    // ends at the flowline's last vertex.
    assert_eq!(&path.coords[..2], &[-89.2158, 42.9561]);
    assert_eq!(path.coords[12..], flowline.coords[32..]);

    let doc = raw("flowtrace_up_yahara.json");
    for (parsed, id) in [(flowline, "upstreamFlowline"), (path, "raindropPath")] {
        let r = doc["features"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == id)
            .unwrap();
        let flat: Vec<f64> = raw_positions(&r["geometry"]["coordinates"])
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(parsed.coords, flat, "{id}");
    }
}

#[test]
fn the_recorded_trace_has_its_seven_fields() {
    let doc = raw("flowtrace_up_yahara.json");
    assert_eq!(doc["features"].as_array().unwrap().len(), 2);
    // raindropPath's properties are `{}` in the recording.
    let raw_path = doc["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "raindropPath")
        .unwrap();
    assert_eq!(raw_path["properties"], serde_json::json!({}));
    let t = Trace::parse(&recorded("flowtrace_up_yahara.json")).unwrap();
    assert_is_the_recorded_yahara_trace(&t);
}

// ---------------------------------------------------------------------------
// Through the public callers, against a byte-for-byte replay
// ---------------------------------------------------------------------------

/// A loopback HTTP server answering every request with `200` and one body.
/// It records each request's method, path and query, and the request body.
struct Replay(Loopback);

impl Replay {
    /// Serves `body` until the test process ends (the thread is detached).
    fn serve(body: Vec<u8>) -> Replay {
        Replay(Loopback::start(move |_| {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            [head.as_bytes(), &body].concat()
        }))
    }

    /// A context whose services all live on this server, under the paths of
    /// the real services (SOURCES.md: `/nldi`, `/fabric/pygeoapi`).
    fn context(&self) -> Context {
        Context::new(Config {
            index_url: format!("{}/nldi", self.0.base),
            fabric_url: format!("{}/fabric/pygeoapi", self.0.base),
            timeout: Duration::from_secs(20),
            retries: 0,
            ..support::config()
        })
        .unwrap()
    }

    /// The requests so far as (method, path, query, body).
    fn requests(&self) -> Vec<(String, String, String, String)> {
        (self.0.requests().into_iter())
            .map(|r| {
                let (p, q) = r.target.split_once('?').unwrap_or((&r.target, ""));
                let body = String::from_utf8_lossy(&r.body).into_owned();
                (r.method, p.to_string(), q.to_string(), body)
            })
            .collect()
    }
}

/// The decoded `key=value` pairs of a query string, sorted.
fn query_pairs(query: &str) -> Vec<(String, String)> {
    let decode = |s: &str| {
        let bytes = s.as_bytes();
        let (mut out, mut i) = (Vec::new(), 0);
        while i < bytes.len() {
            match bytes[i] {
                b'%' => {
                    out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                    i += 3;
                }
                b'+' => {
                    out.push(b' ');
                    i += 1;
                }
                b => {
                    out.push(b);
                    i += 1;
                }
            }
        }
        String::from_utf8(out).unwrap()
    };
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect();
    pairs.sort();
    pairs
}

/// `pairs` as owned, sorted pairs.
fn expected_pairs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    v.sort();
    v
}

#[test]
fn the_index_feature_reader_parses_the_recorded_gage() {
    // SOURCES.md: 1 Point feature [-89.3525, 43.20888889], id
    // "USGS-05427718", properties identifier, navigation, name "YAHARA RIVER
    // AT WINDSOR, WI", source "nwissite", sourceName, comid 13293454, type
    // "hydrolocation", uri, reachcode "07090002007638", measure 95.818,
    // mainstem.
    let replay = Replay::serve(recorded("nldi_feature_nwissite_USGS-05427718.json"));
    let f = index::feature(&replay.context(), "nwissite", "USGS-05427718").unwrap();
    let requests = replay.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        (requests[0].0.as_str(), requests[0].1.as_str()),
        ("GET", "/nldi/linked-data/nwissite/USGS-05427718")
    );

    assert_eq!(f.id, Some(Value::from("USGS-05427718")));
    assert_eq!(
        f.geometry,
        Some(Geometry::Point(geo::Point::new(-89.3525, 43.20888889)))
    );
    assert_eq!(f.properties.len(), 11);
    // Keys are folded to lower case where features enter the library
    // (src/feature.rs): the service's `sourceName` is `sourcename`.
    for key in [
        "identifier",
        "navigation",
        "name",
        "source",
        "sourcename",
        "comid",
        "type",
        "uri",
        "reachcode",
        "measure",
        "mainstem",
    ] {
        assert!(f.properties.contains_key(key), "{key} is missing");
    }
    assert_eq!(f.get_str("identifier"), Some("USGS-05427718"));
    assert_eq!(f.get_str("name"), Some("YAHARA RIVER AT WINDSOR, WI"));
    assert_eq!(f.get_str("source"), Some("nwissite"));
    assert_eq!(f.get_str("type"), Some("hydrolocation"));
    assert_eq!(f.get_str("reachcode"), Some("07090002007638"));
    assert_eq!(f.get_f64("measure"), Some(95.818));
    assert!(f.properties["comid"].is_i64());
    assert_eq!(f.get_i64("comid"), Some(13293454));
    let doc = raw("nldi_feature_nwissite_USGS-05427718.json");
    assert_eq!(
        f.properties["sourcename"],
        doc["features"][0]["properties"]["sourceName"]
    );
}

#[test]
fn the_catchment_lookup_returns_the_featureid_not_the_row_id() {
    let replay = Replay::serve(recorded("catchment_point_lookup.json"));
    let comids = fabric::catchments_at_point(&replay.context(), -115.0535, 48.87996).unwrap();
    assert_eq!(comids, [22879275]);
    assert!(!comids.contains(&2310647));
    // The request the recording answered (SOURCES.md, from links.self), but
    // for the `f=json` pygeoapi adds to it and the `sortby` we add to every
    // paged query (a stable order on a service that promises none).
    let requests = replay.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].1,
        "/fabric/pygeoapi/collections/catchmentsp/items"
    );
    let mut sent = query_pairs(&requests[0].2);
    sent.retain(|(k, _)| k != "f" && k != "sortby");
    assert_eq!(
        sent,
        expected_pairs(&[
            ("bbox", "-115.0535,48.87996,-115.0535,48.87996"),
            ("properties", "featureid"),
            ("skipGeometry", "true"),
        ])
    );
}

#[test]
fn items_by_bbox_return_what_number_matched_says() {
    // SOURCES.md: numberMatched 2 for this query, comids 22878631 and 22878633.
    let replay = Replay::serve(recorded("flowline_items_bbox_streamorde_gt_2.json"));
    let query = ItemsQuery::BBox {
        bbox: [-115.0631, 48.86286, -115.0345, 48.88706],
        filter: Some("streamorde > 2".into()),
    };
    let features = fabric::items(
        &replay.context(),
        Collection::FlowlineNetwork,
        &query,
        "flowlines",
    )
    .unwrap();
    let mut comids: Vec<i64> = features.iter().filter_map(|f| f.get_i64("comid")).collect();
    comids.sort_unstable();
    assert_eq!(comids, [22878631, 22878633]);
    let requests = replay.requests();
    assert_eq!(requests.len(), 1, "numberMatched 2 = numberReturned 2");
    assert_eq!(
        requests[0].1,
        "/fabric/pygeoapi/collections/nhdflowline_network/items"
    );
    let sent = query_pairs(&requests[0].2);
    for pair in expected_pairs(&[
        ("bbox", "-115.0631,48.86286,-115.0345,48.88706"),
        ("filter", "streamorde > 2"),
        ("limit", "500"),
    ]) {
        assert!(sent.contains(&pair), "{pair:?} not in {sent:?}");
    }
}

#[test]
fn number_matched_is_read_from_the_page() {
    // The recorded empty page states numberMatched 0: no feature, no error.
    let replay = Replay::serve(recorded("flowline_items_empty.json"));
    let query = ItemsQuery::In {
        property: "comid",
        ids: &[1],
    };
    let ctx = replay.context();
    let none = fabric::items(&ctx, Collection::FlowlineNetwork, &query, "flowlines").unwrap();
    assert!(none.is_empty());

    // The same recorded bbox page claiming one feature more than it (and
    // every later page) holds is refused instead of silently truncated.
    let mut doc = raw("flowline_items_bbox_streamorde_gt_2.json");
    doc["numberMatched"] = 3.into();
    let replay = Replay::serve(serde_json::to_vec(&doc).unwrap());
    let query = ItemsQuery::BBox {
        bbox: [-115.0631, 48.86286, -115.0345, 48.88706],
        filter: None,
    };
    let e = fabric::items(
        &replay.context(),
        Collection::FlowlineNetwork,
        &query,
        "flowlines",
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Service(m) if m.contains("matches 3 features") && m.contains("held 2")),
        "{e:?}"
    );
}

#[test]
fn the_flowtrace_caller_posts_to_the_recorded_path_and_parses_the_answer() {
    let replay = Replay::serve(recorded("flowtrace_up_yahara.json"));
    // SOURCES.md: input point lon -89.2158, lat 42.9561, direction up.
    let t =
        flowtrace::raindrop_trace(&replay.context(), -89.2158, 42.9561, None, Some("up")).unwrap();
    assert_is_the_recorded_yahara_trace(&t);
    let requests = replay.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        (requests[0].0.as_str(), requests[0].1.as_str()),
        ("POST", "/nldi/pygeoapi/processes/nldi-flowtrace/execution")
    );
    let body: Value = serde_json::from_str(&requests[0].3).unwrap();
    let input = |id: &str| {
        body["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == id)
            .map(|i| i["value"].clone())
    };
    assert_eq!(input("lat"), Some(Value::from("42.9561")));
    assert_eq!(input("lon"), Some(Value::from("-89.2158")));
    assert_eq!(input("direction"), Some(Value::from("up")));
}
