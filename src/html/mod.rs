//! Interactive maps as one self-contained HTML file (the reference's
//! `map_nhdplus()`): Leaflet (vendored from npm, see `assets/leaflet/`), the
//! layers as GeoJSON, their plot_config styles, popups with each feature's
//! key attributes, a layer control, a scale bar and the basemap tiles of the
//! chosen provider or `tile_url` with its attribution.
//!
//! A page needs no server and loads nothing but basemap tiles: its
//! Content-Security-Policy allows images from the tile server's origin(s)
//! and `data:` only, and no other request of any kind.
//!
//! Size: coordinates are rounded to 6 decimals and only popup attributes are
//! kept (the Yahara sample page for comid 13293970 is about 1.2 MB). Pages
//! above [`SIZE_WARNING_BYTES`] come with a warning suggesting to leave out
//! the catchments ([`HtmlOptions::catchments`]), usually the largest layer.
//!
//! With the request's level of detail on (`PlotRequest::lod`), the page
//! carries the flowline lengths by stream order ([`crate::plot::lod::Density`])
//! and the rule's constants, and at each zoom level hides the flowline
//! orders the static map would leave out at that scale, widths growing with
//! order, the main stem always shown (`page.js`, the same rule).
//!
//! Opening a page with the URL fragment `#selftest` gives the map a fixed
//! 960x600 size and makes the page write, into a
//! `<pre id="hydroplot-selftest">`, the feature count of every layer, the
//! position on the map of the flowline vertex nearest its centre, and the
//! text of the popup that a click on that flowline opened (the browser test).

mod features;
mod style;

use crate::plot::lod::{self, Density};
use crate::plot::{Drawing, Layer, PlotData};
use crate::render::colors::{self, RColor};
use crate::render::style::Style;
use crate::render::tiles::TileSource;
use crate::table::geojson::write_str;
use crate::table::Table;
use crate::trace::{Trace, RAINDROP_PATH_ID};
use crate::Result;
use serde_json::{json, Value};
use std::io::{self, Write};

pub use features::COORD_DECIMALS;

/// Pages larger than this (5 MB) come with a warning: browsers get slow.
pub const SIZE_WARNING_BYTES: usize = 5_000_000;

const LEAFLET_JS: &str = include_str!("../../assets/leaflet/leaflet.js");
const LEAFLET_CSS: &str = include_str!("../../assets/leaflet/leaflet.css");
const LEAFLET_LICENSE: &str = include_str!("../../assets/leaflet/LICENSE");
const PAGE_JS: &str = include_str!("page.js");
const PAGE_CSS: &str = "html,body,#map{height:100%;margin:0;padding:0}\
.hp-popup table{border-collapse:collapse}.hp-popup th{text-align:left;padding-right:8px;font-weight:600}\
.hp-symbol{background:none;border:none}#hydroplot-selftest{display:none}";

/// What a plot data page holds.
#[derive(Debug, Clone, PartialEq)]
pub struct HtmlOptions {
    /// Include the catchment layer (default true); leave it out to shrink the page.
    pub catchments: bool,
}

impl Default for HtmlOptions {
    fn default() -> Self {
        HtmlOptions { catchments: true }
    }
}

/// A rendered page and the warnings met while making it.
#[derive(Debug, Clone, PartialEq)]
pub struct HtmlPage {
    /// The HTML document (UTF-8).
    pub html: String,
    /// E.g. the page is above [`SIZE_WARNING_BYTES`].
    pub warnings: Vec<String>,
}

/// How a trace page draws the trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceStyle {
    /// The flowline portion (default `red`, as the spec's trace map and the
    /// PNG draw it).
    pub flowline: RColor,
    /// The raindrop's path (default `black`, likewise).
    pub path: RColor,
    /// Width of both lines in R units (default 2).
    pub lwd: f64,
    /// The traced point (default black pch 19).
    pub point: Style,
}

impl Default for TraceStyle {
    fn default() -> Self {
        let c = |v: &str| colors::parse(v).expect("default trace colours are R colours");
        TraceStyle {
            flowline: c("red"),
            path: c("black"),
            lwd: 2.0,
            point: Style {
                lwd: 1.0,
                col: c("black"),
                border: None,
                pch: 19,
                cex: 1.0,
            },
        }
    }
}

/// Catchments have no plot_config element (the PNG leaves them out): thin grey outlines.
fn catchment_style() -> Value {
    style::path_options(
        colors::parse("grey50").expect("grey50 is an R colour"),
        None,
        0.5,
    )
}

/// What the page script needs to apply the level of detail per zoom level:
/// the flowline lengths by stream order (`[order, metres]`, ascending), the
/// data area, the main stem's comids, the flowline `lwd`, the rule's
/// constants ([`lod`]) and the width of the Web Mercator world in metres.
/// Lengths and area are whole metres, the world's width millimetres: short
/// numbers that read back exactly.
fn lod_config(data: &PlotData, lwd: f64) -> Value {
    let density = Density::of(data);
    let metres = |m: f64| m.round() as u64;
    json!({
        "antialias": lod::ANTIALIAS_PX,
        "area": metres(density.area_m2),
        "base": lod::BASE_WIDTH,
        "budget": lod::INK_BUDGET,
        "dense": lod::DENSE_INK,
        "lengths": density.length_m.iter().map(|(o, l)| json!([o, metres(*l)])).collect::<Vec<_>>(),
        "lwd": lwd,
        "mainstem": density.main_stem,
        "step": lod::ORDER_WIDTH,
        "world": (2e3 * crate::render::view::HALF_WORLD_M).round() / 1e3,
    })
}

/// One layer of a page: its id, its label in the layer control, Leaflet
/// path options, the GeoJSON, and for point layers the icons by `type`.
/// Borrows the table it shows for the time the page is written.
struct PageLayer<'a> {
    name: &'a str,
    label: &'a str,
    style: Value,
    data: LayerData<'a>,
    icons: Option<Value>,
}

/// The GeoJSON of a page layer.
enum LayerData<'a> {
    /// The rows of a table, written straight into the page, with the
    /// properties named in `keep` (see [`features::write_collection`]).
    Rows {
        table: &'a Table,
        keep: &'a [&'a str],
    },
    /// A FeatureCollection already made (the trace page's few features).
    Json(Value),
}

fn layer<'a>(
    name: &'a str,
    label: &'a str,
    style: Value,
    data: LayerData<'a>,
    icons: Option<Value>,
) -> PageLayer<'a> {
    PageLayer {
        name,
        label,
        style,
        data,
        icons,
    }
}

impl PageLayer<'_> {
    /// The layer as the JSON object the page script reads (members sorted,
    /// as a serde_json `Value` writes them).
    fn write<W: Write + ?Sized>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(br#"{"data":"#)?;
        match &self.data {
            LayerData::Rows { table, keep } => features::write_collection(w, table, keep)?,
            LayerData::Json(v) => serde_json::to_writer(&mut *w, v)?,
        }
        w.write_all(br#","icons":"#)?;
        serde_json::to_writer(&mut *w, &self.icons)?;
        w.write_all(br#","label":"#)?;
        write_str(w, self.label)?;
        w.write_all(br#","name":"#)?;
        write_str(w, self.name)?;
        w.write_all(br#","style":"#)?;
        serde_json::to_writer(&mut *w, &self.style)?;
        w.write_all(b"}")
    }
}

/// The HTML map of plot data (see [`plot_data_page`]), made whole in memory.
pub fn plot_data_html(
    data: &PlotData,
    drawing: &Drawing,
    options: &HtmlOptions,
) -> Result<HtmlPage> {
    Ok(plot_data_page(data, drawing, options)?.to_html())
}

/// The HTML map of plot data, ready to be written: basin, catchments (unless
/// left out), network and off-network waterbodies, flowlines and outlets,
/// styled by the request's plot_config, over its basemap, fitted to the plot
/// bbox. The page borrows `data` until it is written. Errors: an unknown
/// basemap name (`Error::InvalidArgument`).
pub fn plot_data_page<'a>(
    data: &'a PlotData,
    drawing: &Drawing,
    options: &HtmlOptions,
) -> Result<Page<'a>> {
    let s = &drawing.styles;
    let polygon = |st: &Style| style::path_options(st.border, st.col, st.lwd);
    let rows = |l: Layer, keep| LayerData::Rows {
        table: data.layer(l),
        keep,
    };
    let mut layers = vec![layer(
        Layer::Basin.name(),
        "Basin",
        polygon(&s.basin),
        rows(Layer::Basin, &["id", "comid", "identifier", "name"]),
        None,
    )];
    if options.catchments {
        layers.push(layer(
            Layer::Catchment.name(),
            "Catchments",
            catchment_style(),
            rows(Layer::Catchment, &["featureid", "areasqkm"]),
            None,
        ));
    }
    let waterbody = &["comid", "gnis_name", "ftype", "reachcode", "areasqkm"];
    layers.push(layer(
        Layer::NetworkWtbd.name(),
        "Network waterbodies",
        polygon(&s.network_wtbd),
        rows(Layer::NetworkWtbd, waterbody),
        None,
    ));
    layers.push(layer(
        Layer::OffNetworkWtbd.name(),
        "Off-network waterbodies",
        polygon(&s.off_network_wtbd),
        rows(Layer::OffNetworkWtbd, waterbody),
        None,
    ));
    layers.push(layer(
        Layer::Flowline.name(),
        "Flowlines",
        style::path_options(s.flowline.col, None, s.flowline.lwd),
        rows(
            Layer::Flowline,
            &["comid", "gnis_name", "streamorde", "reachcode"],
        ),
        None,
    ));
    let outlets = data.layer(Layer::Outlets);
    let mut icons = serde_json::Map::new();
    icons.insert("default".into(), style::symbol_icon(s.outlet("default"))?);
    for source in (0..outlets.len()).filter_map(|r| outlets.get_str(r, "type")) {
        if !icons.contains_key(source) {
            icons.insert(source.to_string(), style::symbol_icon(s.outlet(source))?);
        }
    }
    layers.push(layer(
        Layer::Outlets.name(),
        "Outlets",
        Value::Null,
        rows(Layer::Outlets, &["type", "id", "comid"]),
        Some(Value::Object(icons)),
    ));
    Ok(Page {
        title: "hydroplot map",
        bbox: data.bbox,
        basemap: basemap(&drawing.basemap, drawing.tile_url.as_deref())?,
        layers,
        lod: drawing.lod.then(|| lod_config(data, s.flowline.lwd)),
    })
}

/// The HTML map of a raindrop trace: the flowline portion, the raindrop's
/// path and the traced point (the path's start), over `basemap` (a provider
/// name, `"none"` or empty for none; `tile_url` overrides its tiles).
pub fn trace_html(
    trace: &Trace,
    style: &TraceStyle,
    basemap_name: &str,
    tile_url: Option<&str>,
) -> Result<HtmlPage> {
    let line = |c: RColor| style::path_options(c, None, style.lwd);
    let mut layers = vec![
        layer(
            "trace_flowline",
            "Flowline portion",
            line(style.flowline),
            LayerData::Json(features::trace_lines(trace, false)),
            None,
        ),
        layer(
            "raindrop_path",
            "Raindrop path",
            line(style.path),
            LayerData::Json(features::trace_lines(trace, true)),
            None,
        ),
    ];
    let start = trace
        .features
        .iter()
        .find(|f| f.id == RAINDROP_PATH_ID && f.coords.len() >= 2)
        .map(|f| [f.coords[0], f.coords[1]])
        .or_else(|| trace.features.iter().find_map(|f| f.intersection_point));
    if let Some(p) = start {
        let icons = json!({ "default": style::symbol_icon(&style.point)? });
        let props = json!({ "lon": features::round(p[0]), "lat": features::round(p[1]) });
        layers.push(layer(
            "point",
            "Point",
            Value::Null,
            LayerData::Json(features::point(p, props)),
            Some(icons),
        ));
    }
    let page = Page {
        title: "hydroplot raindrop trace",
        bbox: trace.bbox(),
        basemap: basemap(basemap_name, tile_url)?,
        layers,
        lod: None,
    };
    Ok(page.to_html())
}

/// The tile source of a basemap name; `None` for `"none"` or empty.
fn basemap(name: &str, tile_url: Option<&str>) -> Result<Option<TileSource>> {
    match name.trim() {
        n if n.is_empty() || n.eq_ignore_ascii_case("none") => Ok(None),
        n => TileSource::new(n, tile_url).map(Some),
    }
}

/// The origins (`scheme://host[:port]`) tiles of `source` come from, one per subdomain.
fn tile_origins(source: &TileSource) -> Vec<String> {
    let origin = |url: &str| -> String {
        let (scheme, rest) = url.split_once("://").unwrap_or(("https", url));
        format!("{scheme}://{}", rest.split('/').next().unwrap_or(rest))
    };
    let template = origin(&crate::url::without_credentials(&source.template));
    if template.contains("{s}") {
        source
            .subdomains
            .iter()
            .map(|s| template.replace("{s}", s))
            .collect()
    } else {
        vec![template]
    }
}

/// Escapes text for HTML content and attribute values.
fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Writes JSON into a `<script>` element: every `<` becomes `\u003c`
/// (which JSON reads back as `<`; in JSON it occurs only inside strings),
/// so no value can end the element early (`</script>`) or switch the
/// HTML parser into its escaped states (`<!--<script>`, which made the
/// real `</script>` part of the data and the page blank). Borrows the page
/// being written.
struct ScriptSafe<'a, W: ?Sized> {
    out: &'a mut W,
}

impl<W: Write + ?Sized> Write for ScriptSafe<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for (i, part) in buf.split(|&b| b == b'<').enumerate() {
            if i > 0 {
                self.out.write_all(b"\\u003c")?;
            }
            self.out.write_all(part)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The page data: `{"basemap":…,"bbox":…,"layers":[…]}` and, with the
/// level of detail, `"lod":…` ([`lod_config`]), each layer's features
/// written from its rows.
fn write_config<W: Write + ?Sized>(
    w: &mut W,
    bbox: [f64; 4],
    basemap: Option<&TileSource>,
    layers: &[PageLayer],
    lod: Option<&Value>,
) -> io::Result<()> {
    let basemap = basemap.map(|b| {
        json!({
            "template": crate::url::without_credentials(&b.template),
            "subdomains": b.subdomains,
            "maxZoom": b.max_zoom,
            "attribution": escape_html(&b.attribution),
        })
    });
    w.write_all(br#"{"basemap":"#)?;
    serde_json::to_writer(&mut *w, &basemap)?;
    w.write_all(br#","bbox":"#)?;
    serde_json::to_writer(&mut *w, &bbox.map(features::round))?;
    w.write_all(br#","layers":["#)?;
    for (i, l) in layers.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        l.write(w)?;
    }
    w.write_all(b"]")?;
    if let Some(lod) = lod {
        w.write_all(br#","lod":"#)?;
        serde_json::to_writer(&mut *w, lod)?;
    }
    w.write_all(b"}")
}

/// A page ready to be written: its title, view, basemap and layers, which
/// borrow the tables they show until the page is written.
pub struct Page<'a> {
    title: &'a str,
    bbox: [f64; 4],
    basemap: Option<TileSource>,
    layers: Vec<PageLayer<'a>>,
    /// The level of detail's data ([`lod_config`]); `None`: every flowline
    /// at every zoom.
    lod: Option<Value>,
}

impl Page<'_> {
    /// The document made whole in memory.
    pub fn to_html(&self) -> HtmlPage {
        let mut out = Vec::new();
        let warnings = self.write(&mut out).expect("writing to a Vec never fails");
        let html = String::from_utf8(out).expect("every piece of the page is UTF-8");
        HtmlPage { html, warnings }
    }

    /// Writes the document to `w` as it is made (Leaflet and the page script
    /// inline, the page data as JSON, each layer from its rows), never held
    /// whole; returns the page's warnings (e.g. its size). Errors: `w`'s.
    pub fn write<W: Write + ?Sized>(&self, w: &mut W) -> io::Result<Vec<String>> {
        let mut w = Counted { inner: w, bytes: 0 };
        let img_src: Vec<String> = std::iter::once("data:".to_string())
            .chain(self.basemap.iter().flat_map(tile_origins))
            .collect();
        let csp = format!(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src {}",
            img_src.join(" ")
        );
        let leaflet_js = LEAFLET_JS
            .trim_end()
            .trim_end_matches("//# sourceMappingURL=leaflet.js.map");
        write!(
            w,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{title}</title>\n<!-- Leaflet 1.9.4, https://leafletjs.com\n{license}-->\n\
             <style>\n{css}\n{PAGE_CSS}\n</style>\n<script>\n{leaflet_js}\n</script>\n</head>\n<body>\n\
             <div id=\"map\"></div>\n<script type=\"application/json\" id=\"hydroplot-data\">",
            csp = escape_html(&csp),
            title = escape_html(self.title),
            license = LEAFLET_LICENSE.replace("--", "- -"),
            css = without_image_urls(LEAFLET_CSS),
        )?;
        let mut data = ScriptSafe { out: &mut w };
        write_config(
            &mut data,
            self.bbox,
            self.basemap.as_ref(),
            &self.layers,
            self.lod.as_ref(),
        )?;
        write!(
            w,
            "</script>\n<script>\n{PAGE_JS}\n</script>\n</body>\n</html>\n"
        )?;
        let mut warnings = Vec::new();
        if w.bytes > SIZE_WARNING_BYTES {
            warnings.push(format!(
                "the HTML map is {:.1} MB, above {} MB: browsers may be slow to open it; leaving out the catchments makes it smaller",
                w.bytes as f64 / 1e6,
                SIZE_WARNING_BYTES / 1_000_000
            ));
        }
        Ok(warnings)
    }
}

/// A writer that counts the bytes written through it. Borrows the writer.
struct Counted<'w, W: ?Sized> {
    inner: &'w mut W,
    bytes: usize,
}

impl<W: Write + ?Sized> Write for Counted<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Leaflet's CSS with its `url(images/...)` icons replaced by `none`: the
/// pages use neither marker images nor the collapsed layer control's icon.
fn without_image_urls(css: &str) -> String {
    let mut out = String::with_capacity(css.len());
    let mut rest = css;
    while let Some(i) = rest.find("url(images/") {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest.find(')').map_or(rest.len(), |e| e + 1);
        out.push_str("none");
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn css_keeps_no_image_url() {
        let css = without_image_urls(LEAFLET_CSS);
        assert!(!css.contains("images/"));
        assert_eq!(css.matches("background-image: none").count(), 3);
    }

    #[test]
    fn csp_allows_images_only_from_each_tile_subdomain() {
        let carto = TileSource::new("CartoDB.Positron", None).unwrap();
        assert_eq!(
            tile_origins(&carto),
            ["a", "b", "c", "d"]
                .map(|s| format!("https://{s}.basemaps.cartocdn.com"))
                .to_vec()
        );
        let mock = TileSource::new(
            "OpenStreetMap",
            Some("http://127.0.0.1:8123/tiles/{z}/{x}/{y}.png"),
        )
        .unwrap();
        let p = page("t", [0.0, 0.0, 1.0, 1.0], Some(&mock), vec![]);
        assert!(
            p.html.contains("img-src data: http://127.0.0.1:8123\""),
            "CSP names the mock origin"
        );
        assert!(!p.html.contains("sourceMappingURL"));
        assert!(p.warnings.is_empty());
    }

    /// The page of these layers, made whole.
    fn page<'a>(
        title: &'a str,
        bbox: [f64; 4],
        basemap: Option<&TileSource>,
        layers: Vec<PageLayer<'a>>,
    ) -> HtmlPage {
        let page = Page {
            title,
            bbox,
            basemap: basemap.cloned(),
            layers,
            lod: None,
        };
        page.to_html()
    }

    #[test]
    fn pages_above_the_documented_size_warn() {
        let label = "x".repeat(SIZE_WARNING_BYTES);
        let big = layer("x", &label, Value::Null, LayerData::Json(json!({})), None);
        let p = page("t", [0.0; 4], None, vec![big]);
        assert_eq!(p.warnings.len(), 1);
        assert!(
            p.warnings[0].contains("above 5 MB") && p.warnings[0].contains("catchments"),
            "{}",
            p.warnings[0]
        );
    }

    #[test]
    fn script_data_can_neither_close_its_element_nor_switch_the_parser() {
        // `<!--<script>` in a value put the HTML parser in its escaped
        // state: the page's real `</script>` became data, the page blank.
        for label in ["</script><b>", "<!--<script>", "a </SCRIPT b", "<<>"] {
            let l = layer("x", label, Value::Null, LayerData::Json(json!({})), None);
            let p = page("t", [0.0; 4], None, vec![l]);
            assert_eq!(p.html.matches("</script>").count(), 3, "{label}");
            assert!(!p.html.contains(label), "{label}");
            // The value reads back whole from JSON.
            let written = serde_json::to_string(label)
                .unwrap()
                .replace('<', "\\u003c");
            assert!(p.html.contains(&written), "{label}");
            assert_eq!(serde_json::from_str::<String>(&written).unwrap(), label);
        }
    }
}
