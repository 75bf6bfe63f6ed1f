//! The HTML maps: contents and size of the Yahara page, and, in a real
//! headless Chromium (skipped with a reason when /usr/bin/chromium is
//! absent, a failure then under `CI=true`), layer counts, a popup opened by a click on a flowline, the
//! flowline colour on a screenshot, and no request but the mock's tiles.

use crate::chromium;
use crate::support;

use hydroplot::html::{plot_data_html, trace_html, HtmlOptions, TraceStyle, SIZE_WARNING_BYTES};
use hydroplot::plot::{plot_hydro, CacheSetting, Layer, Outlet, Plot, PlotRequest};
use hydroplot::services::flowtrace::raindrop_trace;
use hydroplot_mock::{self as mock, MockServer};
use serde_json::Value;
use std::path::PathBuf;

const COMID: i64 = 13293970;
/// Layer counts of comid 13293970 in tests/data/yahara_sample.gpkg: the
/// published nhdplusTools figures (251 flowlines, 250 catchments, 117
/// waterbodies in all), and the network/off-network split of the 117 that
/// plain SQL over the file gives (`tests/it/plot_local.rs`,
/// `upstream_layers_are_the_ones_sql_over_the_file_gives`).
const YAHARA_COUNTS: [(&str, u64); 6] = [
    ("basin", 1),
    ("catchment", 250),
    ("network_wtbd", 14),
    ("off_network_wtbd", 103),
    ("flowline", 251),
    ("outlets", 1),
];

/// Plot data of the Yahara sample for `COMID`, tiles from the mock, flowlines
/// 3 px wide so that a screenshot has pixels of their pure colour.
fn yahara(server: &MockServer) -> Plot {
    let mut req = yahara_request();
    req.styles.set("flowline", "lwd", "3").unwrap();
    plot_hydro(&mock::context(server), &req, None).unwrap()
}

/// The data of the Yahara sample upstream of `COMID`, read from the file.
fn yahara_request() -> PlotRequest {
    PlotRequest {
        outlets: vec![Outlet::Comid(COMID)],
        hydro_data: Some(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/yahara_sample.gpkg"),
        ),
        actually_plot: false,
        cache: CacheSetting::Disabled,
        ..PlotRequest::default()
    }
}

/// A point inside the catchment of `comid` in the mock's data.
fn catchment_interior(comid: i64) -> (f64, f64) {
    use geo::InteriorPoint;
    let data = mock::data::Data::shared().unwrap();
    let catchment = data.catchment(comid).expect("the mock has the catchment");
    let p = catchment
        .geometry
        .as_ref()
        .and_then(|g| g.interior_point())
        .unwrap();
    (p.x(), p.y())
}

/// The page's embedded data (`<script id="hydroplot-data">`).
fn page_data(html: &str) -> Value {
    let start = html
        .find("id=\"hydroplot-data\">")
        .expect("the page has its data")
        + 20;
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

fn layer_counts(data: &Value) -> Vec<(String, u64)> {
    data["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap().to_string(),
                l["data"]["features"].as_array().unwrap().len() as u64,
            )
        })
        .collect()
}

fn expected(counts: &[(&str, u64)]) -> Vec<(String, u64)> {
    counts.iter().map(|(n, c)| (n.to_string(), *c)).collect()
}

/// (z, x, y) of a mock tile path `/tiles/z/x/y.png`.
fn tile_of(path: &str) -> Option<[u32; 3]> {
    let mut it = path
        .strip_prefix("/tiles/")?
        .strip_suffix(".png")?
        .split('/')
        .map(|v| v.parse().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// The longest run of digits after a decimal point in `s`.
fn max_decimals(s: &str) -> usize {
    s.split('.')
        .skip(1)
        .map(|part| part.bytes().take_while(u8::is_ascii_digit).count())
        .max()
        .unwrap_or(0)
}

#[test]
fn yahara_page_holds_every_layer_small_and_rounded() {
    let server = MockServer::start();
    let data = yahara(&server);
    let page = plot_data_html(&data.data, &data.drawing, &HtmlOptions::default()).unwrap();
    let size = page.html.len();
    assert!(
        size < 2_000_000,
        "the Yahara page is {size} bytes, not under 2 MB"
    );
    assert!(page.warnings.is_empty() && size < SIZE_WARNING_BYTES);
    let embedded = page_data(&page.html);
    assert_eq!(layer_counts(&embedded), expected(&YAHARA_COUNTS));
    assert_eq!(
        max_decimals(&embedded["layers"].to_string().replace("\"", " ")),
        6
    );
    let basemap = &embedded["basemap"];
    assert_eq!(basemap["template"], server.tile_url());
    assert_eq!(basemap["attribution"], "Tiles: 127.0.0.1");
    let flowline = &embedded["layers"][4];
    assert_eq!(flowline["style"]["color"], "#0000ff");
    assert_eq!(flowline["style"]["weight"], 3.0);
    let outlet = &flowline["data"]["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["properties"]["comid"] == COMID);
    let props = &outlet.expect("the outlet flowline is on the page")["properties"];
    assert_eq!(props["gnis_name"], "Yahara River");
    assert!(
        props["streamorde"].is_number() && props["reachcode"].is_string(),
        "{props}"
    );
    assert_eq!(
        embedded["layers"][3]["style"]["fillColor"], "#00008b",
        "off-network waterbodies darkblue"
    );
    assert!(
        page.html.contains("BSD 2-Clause License"),
        "Leaflet's licence is kept"
    );

    let small = plot_data_html(
        &data.data,
        &data.drawing,
        &HtmlOptions { catchments: false },
    )
    .unwrap();
    let names: Vec<String> = layer_counts(&page_data(&small.html))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(!names.contains(&"catchment".to_string()) && names.len() == 5);
    assert!(
        small.html.len() * 3 < size * 2,
        "catchments are over a third of the page: {} vs {size}",
        small.html.len()
    );
}

/// The page's data text between its `<script>` tags.
fn page_data_text(html: &str) -> &str {
    let start = html.find("id=\"hydroplot-data\">").unwrap() + 20;
    &html[start..start + html[start..].find("</script>").unwrap()]
}

/// A geometry as the geojson crate writes it once wound as RFC 7946 says,
/// every coordinate rounded to 6 decimals.
fn rounded(g: &geo::Geometry<f64>) -> Value {
    fn round_all(v: &mut Value) {
        match v {
            Value::Array(items) => items.iter_mut().for_each(round_all),
            Value::Number(n) => {
                let x = n.as_f64().unwrap();
                *v = Value::from((x * 1e6).round() / 1e6);
            }
            Value::Object(o) => o.values_mut().for_each(round_all),
            _ => {}
        }
    }
    let g = support::rfc_7946_winding(g.clone());
    let mut v =
        serde_json::to_value(geojson::Geometry::new(geojson::GeometryValue::from(&g))).unwrap();
    round_all(&mut v);
    v
}

/// Each layer on the page, written from the table rows, is the layer's
/// features with a geometry, coordinates rounded and properties among the
/// features' own, in the compact sorted form serde_json writes.
#[test]
fn embedded_layers_are_the_layers_features() {
    let server = MockServer::start();
    let plot = yahara(&server);
    let page = plot_data_html(&plot.data, &plot.drawing, &HtmlOptions::default()).unwrap();
    let text = page_data_text(&page.html);
    let data: Value = serde_json::from_str(text).unwrap();
    assert_eq!(data.to_string().replace('<', "\\u003c"), text);
    for l in data["layers"].as_array().unwrap() {
        let name = l["name"].as_str().unwrap();
        let layer = Layer::ALL.into_iter().find(|l| l.name() == name).unwrap();
        let features: Vec<_> = plot
            .data
            .layer(layer)
            .to_features()
            .into_iter()
            .filter(|f| f.geometry.is_some())
            .collect();
        let embedded = l["data"]["features"].as_array().unwrap();
        assert_eq!(embedded.len(), features.len(), "{name}");
        for (e, f) in embedded.iter().zip(&features) {
            assert_eq!(
                e["geometry"],
                rounded(f.geometry.as_ref().unwrap()),
                "{name}"
            );
            for (k, v) in e["properties"].as_object().unwrap() {
                assert!(!v.is_null() && f.properties.get(k) == Some(v), "{name} {k}");
            }
        }
    }
}

#[test]
fn yahara_page_in_headless_chromium() {
    let Some(browser) = chromium::Chromium::find() else {
        return;
    };
    let server = MockServer::start();
    let data = yahara(&server);
    let page = plot_data_html(&data.data, &data.drawing, &HtmlOptions::default()).unwrap();
    let dir = chromium::TempDir::new("html");
    let file = dir.path().join("yahara.html");
    std::fs::write(&file, &page.html).unwrap();
    server.clear_requests();

    let result = browser.selftest(&file);
    for (layer, count) in YAHARA_COUNTS {
        assert_eq!(
            result["counts"][layer], count,
            "layer {layer} in the DOM: {result}"
        );
    }
    let popup = result["popup"]
        .as_str()
        .unwrap_or_else(|| panic!("no popup opened: {result}"));
    let comid = result["vertex"]["comid"].as_i64().unwrap();
    assert!(
        popup.starts_with("Flowlines") && popup.contains(&format!("comid{comid}")),
        "{popup}"
    );
    assert!(data.data.flowline_comids.contains(&comid));

    // The selftest's fixed map size puts the map where the selftest saw it.
    let shot = browser.screenshot(&file, "#selftest", &dir.path().join("yahara.png"));
    let (x, y) = (
        result["vertex"]["x"].as_f64().unwrap(),
        result["vertex"]["y"].as_f64().unwrap(),
    );
    let blue = shot
        .pixels_near(x, y, 1)
        .into_iter()
        .filter(|p| *p == [0, 0, 255])
        .count();
    assert!(
        blue > 0,
        "no flowline blue around ({x}, {y}): {:?}",
        shot.pixels_near(x, y, 1)
    );
    let requests = server.requests();
    let strays: Vec<&str> = requests
        .iter()
        .map(|r| r.path.as_str())
        .filter(|p| !p.starts_with("/tiles/"))
        .collect();
    assert!(
        strays.is_empty(),
        "the page asked the mock for more than tiles: {strays:?}"
    );
    let tiles: Vec<[u32; 3]> = requests.iter().filter_map(|r| tile_of(&r.path)).collect();
    assert!(tiles.len() >= 4, "the page fetched {} tiles", tiles.len());
    // The basemap shows: the top-left corner has the colour of a fetched mock tile.
    let corner = shot.pixel(2, 2);
    assert!(
        tiles
            .iter()
            .any(|t| mock::tile_color(t[0], t[1], t[2]) == corner),
        "corner {corner:?} is no tile's colour"
    );
    if let Ok(readme_shot) = std::env::var("HYDROPLOT_HTML_SCREENSHOT") {
        browser.screenshot(&file, "", std::path::Path::new(&readme_shot));
    }
}

#[test]
fn trace_page_in_headless_chromium() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let (x, y) = catchment_interior(COMID);
    let trace = raindrop_trace(&ctx, x, y, None, Some("down")).unwrap();
    let page = trace_html(
        &trace,
        &TraceStyle::default(),
        "OpenStreetMap",
        ctx.config.tile_url.as_deref(),
    )
    .unwrap();
    let embedded = page_data(&page.html);
    assert_eq!(
        layer_counts(&embedded),
        expected(&[("trace_flowline", 1), ("raindrop_path", 1), ("point", 1)])
    );
    assert_eq!(
        embedded["layers"][0]["data"]["features"][0]["properties"]["comid"],
        COMID
    );
    let Some(browser) = chromium::Chromium::find() else {
        return;
    };
    let dir = chromium::TempDir::new("trace");
    let file = dir.path().join("trace.html");
    std::fs::write(&file, &page.html).unwrap();
    server.clear_requests();
    let result = browser.selftest(&file);
    for (layer, count) in [("trace_flowline", 1), ("raindrop_path", 1), ("point", 1)] {
        assert_eq!(
            result["counts"][layer], count,
            "layer {layer} in the DOM: {result}"
        );
    }
    assert!(server
        .requests()
        .iter()
        .all(|r| r.path.starts_with("/tiles/")));
}

/// The C API: a page of `hydroplot_plot` data without a PNG, with and without catchments.
#[test]
fn c_api_pages_of_plot_data() {
    use hydroplot::ffi::buffer::*;
    use hydroplot::ffi::context::*;
    use hydroplot::ffi::html::*;
    use hydroplot::ffi::hydroplot_status::*;
    use hydroplot::ffi::plot_data::*;
    use hydroplot::ffi::plot_request::*;
    use std::ffi::CString;
    use std::ptr::{null, null_mut};

    let server = MockServer::start();
    let c = |s: &str| CString::new(s).unwrap();
    let page = |b: *mut hydroplot_buffer| {
        let bytes = unsafe {
            std::slice::from_raw_parts(hydroplot_buffer_data(b), hydroplot_buffer_len(b))
        };
        let html = String::from_utf8(bytes.to_vec()).unwrap();
        hydroplot_buffer_free(b);
        html
    };
    let mut ctx = null_mut();
    assert_eq!(hydroplot_context_new(&mut ctx), HYDROPLOT_OK);
    let tile_url = c(&server.tile_url());
    assert_eq!(
        hydroplot_context_set_option(ctx, c("tile_url").as_ptr(), tile_url.as_ptr()),
        HYDROPLOT_OK
    );
    let req = hydroplot_plot_request_new();
    let gpkg = c(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/yahara_sample.gpkg"
    ));
    assert_eq!(hydroplot_plot_request_add_comid(req, COMID), HYDROPLOT_OK);
    assert_eq!(
        hydroplot_plot_request_set_hydro_data(req, gpkg.as_ptr()),
        HYDROPLOT_OK
    );
    assert_eq!(
        hydroplot_plot_request_set_actually_plot(req, false),
        HYDROPLOT_OK
    );
    let (flowline, col, red) = (c("flowline"), c("col"), c("red"));
    assert_eq!(
        hydroplot_plot_request_set_style(req, flowline.as_ptr(), col.as_ptr(), red.as_ptr()),
        HYDROPLOT_OK
    );
    let mut pd = null_mut();
    assert_eq!(hydroplot_plot(ctx, req, null_mut(), &mut pd), HYDROPLOT_OK);

    let mut buf = null_mut();
    assert_eq!(hydroplot_plot_data_html(pd, &mut buf), HYDROPLOT_OK);
    let full = page_data(&page(buf));
    assert_eq!(layer_counts(&full), expected(&YAHARA_COUNTS));
    assert_eq!(
        full["layers"][4]["style"]["color"], "#ff0000",
        "the request's flowline.col"
    );
    assert_eq!(full["basemap"]["template"], server.tile_url());
    assert_eq!(
        hydroplot_plot_data_html_ex(pd, false, &mut buf),
        HYDROPLOT_OK
    );
    let names: Vec<String> = layer_counts(&page_data(&page(buf)))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        names,
        [
            "basin",
            "network_wtbd",
            "off_network_wtbd",
            "flowline",
            "outlets"
        ]
    );

    assert_eq!(
        hydroplot_plot_data_html(null(), &mut buf),
        HYDROPLOT_ERR_NULL_ARGUMENT
    );
    assert_eq!(
        hydroplot_plot_data_html(pd, null_mut()),
        HYDROPLOT_ERR_NULL_ARGUMENT
    );
    assert_eq!(
        hydroplot_trace_html(ctx, null(), null(), &mut buf),
        HYDROPLOT_ERR_NULL_ARGUMENT
    );
    hydroplot_plot_data_free(pd);
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
}

#[test]
fn tile_credentials_stay_out_of_the_page() {
    // Browsers refuse credentials in the URLs of a page's images, and the
    // page is for anyone to read: the template keeps its path and query
    // (tiles need their key), never the user and password.
    let server = MockServer::start();
    let mut config = mock::context(&server).config;
    let with_password = server.tile_url().replace("://", "://agent:hunter2@");
    config.tile_url = Some(with_password);
    let ctx = hydroplot::Context::new(config).unwrap();
    let data = plot_hydro(&ctx, &yahara_request(), None).unwrap();
    let page = plot_data_html(&data.data, &data.drawing, &HtmlOptions::default()).unwrap();
    assert!(!page.html.contains("hunter2"), "credentials in the page");
    let embedded = page_data(&page.html);
    assert_eq!(embedded["basemap"]["template"], server.tile_url());
    assert_eq!(embedded["basemap"]["attribution"], "Tiles: 127.0.0.1");
}
