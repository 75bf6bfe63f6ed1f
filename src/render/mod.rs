//! Drawing maps: a Web Mercator (EPSG:3857) canvas with a tiled basemap, the
//! plot layers in the reference order with R-like styles, and map furniture
//! (north arrow, scale bar, attribution), encoded as PNG.
//!
//! - [`view`]: the 3857 rectangle shown and the metres-to-pixels mapping;
//! - [`tiles`] and [`tile_cache`]: basemap providers, fetching, caching, stitching;
//! - [`style`], [`colors`], [`symbols`]: plot_config, R colours, `pch` and `lwd`;
//! - [`layer`]: a layer's geometries drawn from their coordinate buffers;
//! - [`strips`]: a pixmap drawn in fixed horizontal strips on several threads;
//! - [`generalize`]: a polygon layer drawn as a dense map's reader sees it;
//! - [`furniture`] and [`font`]: north arrow, scale bar, attribution text;
//! - [`georef`]: the world file and CRS side-car that place the PNG in a GIS;

pub mod colors;
pub mod font;
pub mod furniture;
pub mod generalize;
pub mod georef;
pub mod layer;
mod strips;
pub mod style;
pub mod symbols;
pub mod tile_cache;
pub mod tiles;
pub mod view;

pub use layer::{LayerView, Rows, ShapePaint};
pub use tile_cache::TileCacheMode;

use crate::context::Context;
use crate::crs::Transformer;
use crate::{Error, Result};
use geo::Geometry;
use std::path::Path;
use style::Style;
use symbols::SymbolPaint;
use tiny_skia::{Color, Pixmap};
use view::View;

pub use view::MAP_CRS;

/// What a new map shows: the parameters of [`Map::new`] plus the HiDPI scale.
#[derive(Debug, Clone, PartialEq)]
pub struct MapSpec<'a> {
    /// The area to show `[xmin, ymin, xmax, ymax]` in `crs`.
    pub bbox: [f64; 4],
    pub crs: &'a str,
    /// Output size in logical pixels (the PNG is `size * scale`).
    pub size: (u32, u32),
    /// Device pixels per logical pixel: 1 = 96 dpi, 2 for HiDPI screens.
    pub scale: f64,
    /// A provider name (see [`tiles::PROVIDERS`]) or `"none"`.
    pub basemap: &'a str,
    /// Tile zoom overriding the automatic choice.
    pub zoom: Option<u8>,
}

/// A map canvas in EPSG:3857: the pixels, the view that maps 3857 metres to
/// pixels, the basemap attribution, and the threads it is drawn on (the
/// context's `threads` option; the pixels never depend on them). Layers are
/// drawn onto it in call order; the furniture is added when the PNG is
/// encoded, so it stays on top of layers added later. `Send`: a map may move between threads, and is
/// used by one at a time. A clone is a copy of its pixels.
#[derive(Clone)]
pub struct Map {
    pixmap: Pixmap,
    view: View,
    attribution: Option<String>,
    threads: usize,
}

impl Map {
    /// A new map fitted to `bbox` (in `crs`) at `size` pixels, with the basemap
    /// `basemap` (a provider name, or `"none"`). Tiles that fail become
    /// `warnings` (also sent to the log), never an error.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ctx: &Context,
        bbox: [f64; 4],
        crs: &str,
        size: (u32, u32),
        basemap: &str,
        zoom: Option<u8>,
        cache: &TileCacheMode,
        warnings: &mut Vec<String>,
    ) -> Result<Map> {
        Map::with_spec(
            ctx,
            &MapSpec {
                bbox,
                crs,
                size,
                scale: 1.0,
                basemap,
                zoom,
            },
            cache,
            warnings,
        )
    }

    /// [`Map::new`] with every option, including the HiDPI scale.
    pub fn with_spec(
        ctx: &Context,
        spec: &MapSpec,
        cache: &TileCacheMode,
        warnings: &mut Vec<String>,
    ) -> Result<Map> {
        // Checked before the transform, which orders the corners.
        let [xmin, ymin, xmax, ymax] = spec.bbox;
        if spec.bbox.iter().any(|v| !v.is_finite()) {
            return Err(Error::InvalidArgument(format!(
                "the map's box {:?} is not finite",
                spec.bbox
            )));
        }
        if xmin > xmax || ymin > ymax {
            return Err(Error::InvalidArgument(format!(
                "the map's box {:?} is inverted: give xmin <= xmax and ymin <= ymax",
                spec.bbox
            )));
        }
        let bbox = (Transformer::new(spec.crs, MAP_CRS)?.bbox(spec.bbox)).map_err(|e| {
            Error::Crs(format!(
                "the map's box {:?} in {} cannot be drawn in Web Mercator (EPSG:3857 holds \
                 latitudes within 85.05 degrees of the equator): {e}",
                spec.bbox, spec.crs
            ))
        })?;
        let view = View::fit(bbox, spec.size, spec.scale)?;
        let source = match spec.basemap.trim() {
            b if b.eq_ignore_ascii_case("none") => None,
            b => Some(tiles::TileSource::new(b, ctx.config.tile_url.as_deref())?),
        };
        let mut pixmap = Pixmap::new(view.width, view.height).ok_or_else(|| {
            Error::Render(format!(
                "a {}x{} canvas cannot be allocated",
                view.width, view.height
            ))
        })?;
        pixmap.fill(Color::WHITE);
        if let Some(source) = &source {
            tiles::draw_basemap(ctx, &mut pixmap, &view, source, spec.zoom, cache, warnings)?;
        }
        Ok(Map {
            pixmap,
            view,
            attribution: source.map(|s| s.attribution),
            threads: ctx.config.threads,
        })
    }

    /// The view: the 3857 extent shown and its pixel mapping.
    pub fn view(&self) -> &View {
        &self.view
    }

    /// The 3857 extent of the PNG `[xmin, ymin, xmax, ymax]`: the outer edges
    /// of its corner pixels, which are square.
    pub fn bounds(&self) -> [f64; 4] {
        self.view.extent
    }

    /// Writes the world file and CRS side-car (`.aux.xml`) of this map's PNG
    /// beside `png`, atomically ([`georef::write_sidecars`]); their paths.
    pub fn write_georeference(&self, png: &std::path::Path) -> Result<[std::path::PathBuf; 2]> {
        georef::write_sidecars(&self.view, png)
    }

    /// The most threads the map is drawn on (the context's `threads`
    /// option): for the work that decides what to draw, too.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The pixels drawn so far, without the furniture.
    pub fn pixmap(&self) -> &Pixmap {
        &self.pixmap
    }

    /// Draws one layer view: its rows, transformed from its CRS, with its
    /// paint; points as its symbol (none: not drawn). A row that cannot be
    /// transformed is an error; the rows before it stay drawn.
    pub fn draw(&mut self, layer: &LayerView) -> Result<()> {
        layer::Canvas::new(&mut self.pixmap, &self.view, self.threads).draw(layer)
    }

    /// Draws the polygons of one layer view generalized to the pixel grid
    /// ([`generalize`]): gaps and inlets up to `2 * close_px` device pixels
    /// across closed, then filled and outlined with its paint.
    pub fn draw_generalized(&mut self, layer: &LayerView, close_px: usize) -> Result<()> {
        generalize::draw(&mut self.pixmap, &self.view, layer, close_px, self.threads)
    }

    /// Draws any GeoJSON (a geometry, Feature or FeatureCollection) in `crs`:
    /// lines and polygon borders in `col` (`None`: black), polygons filled
    /// with `fill` (`None`: not filled), points as R's `pch = 19` in `col`;
    /// `lwd` in R units. Colours as R writes them (`"NA"` = none).
    pub fn add_geojson(
        &mut self,
        geojson: &[u8],
        crs: &str,
        col: Option<&str>,
        fill: Option<&str>,
        lwd: f64,
    ) -> Result<()> {
        let line = colors::parse(col.unwrap_or("black"))?;
        let fill = fill.map(colors::parse).transpose()?.flatten();
        check_lwd(lwd)?;
        let text = std::str::from_utf8(geojson)
            .map_err(|_| Error::InvalidArgument("the GeoJSON to draw is not valid UTF-8".into()))?;
        let doc: geojson::GeoJson = text.parse().map_err(|e| {
            Error::InvalidArgument(format!("the GeoJSON to draw cannot be read: {e}"))
        })?;
        let point_style = Style {
            lwd,
            col: line,
            border: None,
            pch: 19,
            cex: 1.0,
        };
        let shapes = layer::rows_of(&geometries(doc)?)?;
        self.draw(&LayerView {
            geometries: &shapes,
            rows: (0..shapes.len()).into(),
            crs,
            paint: ShapePaint { line, fill, lwd },
            symbol: Some(&point_style),
            pixel_grid: false,
        })
    }

    /// Draws R symbol `pch` (0-25) in `col` at (`x`, `y`) in `crs`, `cex`
    /// times R's default size. Symbols 21-25 get an outline in `col` and no
    /// fill, as R's `points()` with its default `bg`.
    pub fn add_point(
        &mut self,
        x: f64,
        y: f64,
        crs: &str,
        pch: i32,
        col: &str,
        cex: f64,
    ) -> Result<()> {
        if !symbols::is_valid_pch(pch) {
            return Err(Error::InvalidArgument(format!(
                "pch {pch} is not an R symbol number 0-25"
            )));
        }
        if !(cex.is_finite() && cex >= 0.0) {
            return Err(Error::InvalidArgument(format!(
                "cex {cex} is not a finite number >= 0"
            )));
        }
        let col = colors::parse(col)?;
        let (mx, my) = Transformer::new(crs, MAP_CRS)?.point(x, y)?;
        let (px, py) = self.view.to_px(mx, my);
        symbols::draw(
            &mut self.pixmap,
            px,
            py,
            pch,
            SymbolPaint { col, bg: None },
            cex,
            self.view.scale,
        );
        Ok(())
    }

    /// The map as PNG bytes, with the furniture drawn on a copy.
    pub fn png(&self) -> Result<Vec<u8>> {
        let mut out = self.pixmap.clone();
        furniture::draw(&mut out, &self.view, self.attribution.as_deref());
        encode_png(&out)
    }
}

impl ShapePaint {
    /// Lines in `col` (an R colour; `"NA"`: none), `lwd` wide, no fill.
    pub fn lines(col: &str, lwd: f64) -> Result<ShapePaint> {
        check_lwd(lwd)?;
        Ok(ShapePaint {
            line: colors::parse(col)?,
            fill: None,
            lwd,
        })
    }
}

fn check_lwd(lwd: f64) -> Result<()> {
    if lwd.is_finite() && lwd >= 0.0 {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "lwd {lwd} is not a finite number >= 0"
        )))
    }
}

/// Every geometry of a GeoJSON document.
fn geometries(doc: geojson::GeoJson) -> Result<Vec<Geometry<f64>>> {
    let convert = |g: geojson::Geometry| {
        crate::feature::geometry_from_geojson(g).map_err(|e| {
            Error::InvalidArgument(format!("the GeoJSON to draw has an invalid geometry: {e}"))
        })
    };
    match doc {
        geojson::GeoJson::Geometry(g) => Ok(vec![convert(g)?]),
        geojson::GeoJson::Feature(f) => f.geometry.map(convert).into_iter().collect(),
        geojson::GeoJson::FeatureCollection(fc) => fc
            .features
            .into_iter()
            .filter_map(|f| f.geometry)
            .map(convert)
            .collect(),
    }
}

/// Extensions of the other image and document formats a map might be asked
/// for: the map is always a PNG, and a PNG under one of these names is a
/// file its viewers refuse or misread.
const OTHER_FORMATS: [&str; 12] = [
    "jpg", "jpeg", "tif", "tiff", "gif", "bmp", "webp", "avif", "svg", "pdf", "eps", "ps",
];

/// Checks that the map, a PNG, may be written to `path`: any name (without
/// an extension too) but an empty one or one ending in another image or
/// document format's extension (`.jpg`, `.pdf`, ... in any case), which is
/// `Error::InvalidArgument` naming the file.
pub fn check_png_name(path: &Path) -> Result<()> {
    crate::output::check_path_given(path, "PNG file")?;
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if OTHER_FORMATS
        .iter()
        .any(|f| f.eq_ignore_ascii_case(extension))
    {
        return Err(Error::InvalidArgument(format!(
            "{}: the map is written as a PNG only; name the file .png (or without an extension)",
            path.display()
        )));
    }
    Ok(())
}

/// The PNG text keyword and value every map carries (PNG's registered
/// `Software` keyword), by which [`is_a_map_drawn_here`] knows the maps
/// this library wrote from the user's own images.
const SOFTWARE_KEY: &str = "Software";
const SOFTWARE: &str = "hydroplot";

/// Whether `path` is a PNG this library wrote (its `Software` text is
/// `hydroplot`): a file a caller may replace under a default name it never
/// declared, where any other file is the user's. Only the chunks before
/// the image data are read.
pub fn is_a_map_drawn_here(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let Ok(reader) = png::Decoder::new(std::io::BufReader::new(file)).read_info() else {
        return false;
    };
    (reader.info().uncompressed_latin1_text.iter())
        .any(|t| t.keyword == SOFTWARE_KEY && t.text == SOFTWARE)
}

/// Encodes a pixmap as an 8-bit RGBA PNG (un-premultiplying the pixels),
/// marked as this library's ([`is_a_map_drawn_here`]).
pub fn encode_png(pixmap: &Pixmap) -> Result<Vec<u8>> {
    let fail =
        |e: png::EncodingError| Error::Render(format!("the map could not be encoded as PNG: {e}"));
    let data: Vec<u8> = pixmap
        .pixels()
        .iter()
        .flat_map(|p| {
            let c = p.demultiply();
            [c.red(), c.green(), c.blue(), c.alpha()]
        })
        .collect();
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, pixmap.width(), pixmap.height());
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder
        .add_text_chunk(SOFTWARE_KEY.into(), SOFTWARE.into())
        .map_err(fail)?;
    // Fast deflate: a 2048 x 2048 map encodes in 0.04 s instead of 0.3 s,
    // for a file about 14% larger (bench/HISTORY.md).
    encoder.set_compression(png::Compression::Fast);
    encoder
        .write_header()
        .map_err(fail)?
        .write_image_data(&data)
        .map_err(fail)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_can_move_between_threads() {
        fn assert_send<T: Send>() {}
        assert_send::<Map>();
    }

    #[test]
    fn a_map_may_have_any_name_but_another_formats() {
        for ok in [
            "map.png",
            "MAP.PNG",
            "map",
            "out/map.v2.png",
            "map.png.part",
            ".jpg",
        ] {
            assert!(check_png_name(Path::new(ok)).is_ok(), "{ok}");
        }
        for bad in [
            "map.jpg", "map.JPEG", "a/b.tif", "x.pdf", "fig.svg", "m.WebP",
        ] {
            let e = check_png_name(Path::new(bad)).unwrap_err();
            assert!(
                matches!(&e, Error::InvalidArgument(m) if m.contains(bad) && m.contains(".png")),
                "{e}"
            );
        }
    }

    #[test]
    fn only_the_maps_written_here_are_known_as_such() {
        let dir = std::env::temp_dir().join(format!("hydroplot-own-map-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ours = dir.join("ours.png");
        std::fs::write(&ours, encode_png(&Pixmap::new(4, 3).unwrap()).unwrap()).unwrap();
        assert!(is_a_map_drawn_here(&ours));
        // Another program's PNG (the same pixels, no text), a text file,
        // a missing file and a folder are not.
        let theirs = dir.join("theirs.png");
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, 4, 3);
        encoder.set_color(png::ColorType::Rgba);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&[0; 48]).unwrap();
        writer.finish().unwrap();
        std::fs::write(&theirs, &bytes).unwrap();
        let text = dir.join("notes.png");
        std::fs::write(&text, "my notes").unwrap();
        for other in [&theirs, &text, &dir.join("missing.png"), &dir] {
            assert!(!is_a_map_drawn_here(other), "{}", other.display());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn png_round_trips_unpremultiplied_pixels() {
        let mut p = Pixmap::new(2, 1).unwrap();
        p.fill(Color::from_rgba8(200, 100, 50, 128));
        let bytes = encode_png(&p).unwrap();
        let mut reader = png::Decoder::new(std::io::Cursor::new(&bytes[..]))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut buf).unwrap();
        assert!(
            buf[..4]
                .iter()
                .zip([200u8, 100, 50, 128])
                .all(|(a, b)| a.abs_diff(b) <= 1),
            "{:?}",
            &buf[..4]
        );
    }
}
