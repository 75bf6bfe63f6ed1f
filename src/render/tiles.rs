//! Basemap tiles: the provider table, XYZ URL templates, zoom choice, and the
//! fetching (parallel, cached), decoding and stitching of the tiles under a
//! view.

use super::strips;
use super::tile_cache::{Entry, TileCache, TileCacheMode, DEFAULT_MAX_BYTES};
use super::view::{View, HALF_WORLD_M};
use crate::config::Config;
use crate::context::Context;
use crate::http::Service;
use crate::parallel::parallel_map;
use crate::url::redact_url;
use crate::{Error, Result};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};
use tiny_skia::{FilterQuality, IntSize, Pixmap, PixmapPaint, Transform};

/// The default basemap provider.
pub const DEFAULT_PROVIDER: &str = "Esri.NatGeoWorldMap";

/// Tile edge in pixels at `{r}` = "" (256; `@2x` tiles are 512).
pub const TILE_PX: u32 = 256;

/// At most this many tiles are fetched for one map; a zoom needing more is lowered.
pub const MAX_TILES: usize = 256;

/// An XYZ tile provider.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Provider {
    /// The name users give (`basemap`), matched case-insensitively.
    pub name: &'static str,
    /// URL template with `{z}`, `{x}`, `{y}` and optional `{s}`, `{r}`.
    pub url: &'static str,
    /// Values of `{s}`.
    pub subdomains: &'static [&'static str],
    /// The highest zoom the provider serves.
    pub max_zoom: u8,
    /// The attribution its licence requires on the map.
    pub attribution: &'static str,
}

/// Every known provider (leaflet-providers' templates, zooms and attributions).
pub const PROVIDERS: [Provider; 5] = [
    Provider {
        name: "Esri.NatGeoWorldMap",
        url: "https://server.arcgisonline.com/ArcGIS/rest/services/NatGeo_World_Map/MapServer/tile/{z}/{y}/{x}",
        subdomains: &[],
        max_zoom: 16,
        attribution: "Tiles © Esri — National Geographic, Esri, DeLorme, NAVTEQ, UNEP-WCMC, USGS, NASA, ESA, METI, NRCAN, GEBCO, NOAA, iPC",
    },
    Provider {
        name: "OpenStreetMap",
        url: "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
        subdomains: &[],
        max_zoom: 19,
        attribution: "© OpenStreetMap contributors",
    },
    Provider {
        name: "CartoDB.Positron",
        url: "https://{s}.basemaps.cartocdn.com/light_all/{z}/{x}/{y}{r}.png",
        subdomains: &["a", "b", "c", "d"],
        max_zoom: 20,
        attribution: "© OpenStreetMap contributors © CARTO",
    },
    Provider {
        name: "Esri.WorldImagery",
        url: "https://server.arcgisonline.com/ArcGIS/rest/services/World_Imagery/MapServer/tile/{z}/{y}/{x}",
        subdomains: &[],
        max_zoom: 18,
        attribution: "Tiles © Esri — Source: Esri, i-cubed, USDA, USGS, AEX, GeoEye, Getmapping, Aerogrid, IGN, IGP, UPR-EGP, and the GIS User Community",
    },
    Provider {
        name: "Esri.WorldTopoMap",
        url: "https://server.arcgisonline.com/ArcGIS/rest/services/World_Topo_Map/MapServer/tile/{z}/{y}/{x}",
        subdomains: &[],
        max_zoom: 18,
        attribution: "Tiles © Esri — Esri, DeLorme, NAVTEQ, TomTom, Intermap, iPC, USGS, FAO, NPS, NRCAN, GeoBase, Kadaster NL, Ordnance Survey, Esri Japan, METI, Esri China (Hong Kong), and the GIS User Community",
    },
];

/// The highest zoom any tile request may ask for (web maps stop at 22).
pub const MAX_ZOOM: u8 = 22;

/// Checks a requested zoom against [`MAX_ZOOM`].
pub fn check_zoom(zoom: i64) -> Result<u8> {
    u8::try_from(zoom)
        .ok()
        .filter(|z| *z <= MAX_ZOOM)
        .ok_or_else(|| Error::InvalidArgument(format!("zoom {zoom} must be 0..={MAX_ZOOM}")))
}

/// Highest zoom assumed for a `tile_url` template.
const TEMPLATE_MAX_ZOOM: u8 = 19;

/// The provider named `name` (case-insensitive); an unknown name is an
/// `Error::InvalidArgument` listing the known ones.
pub fn provider(name: &str) -> Result<&'static Provider> {
    PROVIDERS
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(name.trim()))
        .ok_or_else(|| {
            let names: Vec<&str> = PROVIDERS.iter().map(|p| p.name).collect();
            Error::InvalidArgument(format!(
                "unknown basemap {name:?}; known: {}, or \"none\"",
                names.join(", ")
            ))
        })
}

/// Checks a basemap name: `"none"` or a provider's (any case, spaces
/// around ignored); else the error of [`provider`].
pub fn check_basemap(name: &str) -> Result<()> {
    if !name.trim().eq_ignore_ascii_case("none") {
        provider(name)?;
    }
    Ok(())
}

/// The tile source of a map: a provider, or the context's `tile_url`
/// (which overrides the provider's template, keeping nothing of it).
#[derive(Debug, Clone, PartialEq)]
pub struct TileSource {
    pub template: String,
    pub subdomains: Vec<String>,
    pub max_zoom: u8,
    pub attribution: String,
}

impl TileSource {
    /// The source for `basemap` (a provider name) given the context's
    /// `tile_url` override.
    pub fn new(basemap: &str, tile_url: Option<&str>) -> Result<TileSource> {
        let p = provider(basemap)?;
        Ok(match tile_url {
            Some(t) => TileSource {
                template: t.to_string(),
                subdomains: vec!["a".into(), "b".into(), "c".into()],
                max_zoom: TEMPLATE_MAX_ZOOM,
                attribution: format!("Tiles: {}", host_of(t)),
            },
            None => TileSource {
                template: p.url.to_string(),
                subdomains: p.subdomains.iter().map(|s| s.to_string()).collect(),
                max_zoom: p.max_zoom,
                attribution: p.attribution.to_string(),
            },
        })
    }

    /// Whether `{r}` asks for double-resolution tiles at this HiDPI scale.
    fn retina(&self, scale: f64) -> bool {
        self.template.contains("{r}") && scale >= 1.5
    }

    /// The URL of tile (`z`, `x`, `y`): `{s}` rotates over the subdomains by
    /// tile, `{r}` is `@2x` when `retina`.
    pub fn url(&self, z: u8, x: u32, y: u32, retina: bool) -> String {
        let s = match self.subdomains.len() {
            0 => "",
            n => self.subdomains[(x as usize + y as usize) % n].as_str(),
        };
        self.template
            .replace("{z}", &z.to_string())
            .replace("{x}", &x.to_string())
            .replace("{y}", &y.to_string())
            .replace("{s}", s)
            .replace("{r}", if retina { "@2x" } else { "" })
    }
}

/// The host of a URL, without scheme, credentials (`user:password@`),
/// port, path or query ([`crate::url::host_of`], then the port dropped):
/// all the attribution shows, since it is drawn on the map and written
/// into the HTML page for anyone to read.
fn host_of(url: &str) -> &str {
    let host_port = crate::url::host_of(url);
    match host_port.find(']') {
        // An IPv6 literal, `[::1]:8080`: its colons are no port.
        Some(end) if host_port.starts_with('[') => &host_port[..=end],
        _ => host_port.split(':').next().unwrap_or(host_port),
    }
}

/// The zoom whose tiles best match `resolution` (3857 metres per device
/// pixel) for tiles of `tile_px` pixels: the nearest on a log scale, so a
/// tile pixel covers between 0.71 and 1.41 canvas pixels; clamped to `0..=max_zoom`.
pub fn zoom_for(resolution: f64, tile_px: u32, max_zoom: u8) -> u8 {
    let world_px_at_z0 = 2.0 * HALF_WORLD_M / tile_px as f64;
    let z = (world_px_at_z0 / resolution).log2().round();
    if z.is_nan() {
        return 0;
    }
    z.clamp(0.0, max_zoom as f64) as u8
}

/// The tile rows and columns covering `view` at zoom `z`: (x0, x1, y0, y1),
/// inclusive; x may run past the antimeridian (wrapped when fetched), y is
/// clamped to the world.
pub fn tile_range(view: &View, z: u8) -> (i64, i64, i64, i64) {
    let n = 1i64 << z;
    let size = 2.0 * HALF_WORLD_M / n as f64;
    let [x0, y0, x1, y1] = view.extent;
    let col = |x: f64| ((x + HALF_WORLD_M) / size).floor() as i64;
    let row = |y: f64| (((HALF_WORLD_M - y) / size).floor() as i64).clamp(0, n - 1);
    (col(x0), col(x1 - 1e-6), row(y1), row(y0 + 1e-6))
}

/// The basemap as a whole may take this many times `timeout_s` (two
/// minutes at the default): a server that answers delivers even the
/// largest map's [`MAX_TILES`] in seconds, while one that accepts
/// connections and never answers would cost every tile its timeout and
/// retries in turn (25 minutes at the defaults) for an optional background.
/// Once it is spent no tile is asked of the server (the tile cache still
/// serves); a request in flight still ends by its own timeout. A multiple
/// of `timeout_s` rather than a constant, so that a user who allows a slow
/// link more time per request allows the basemap more too.
const BUDGET_TIMEOUTS: u32 = 2;

/// The time a basemap may take (see [`BUDGET_TIMEOUTS`]), from its start.
struct Budget {
    start: Instant,
    length: Duration,
}

impl Budget {
    /// The budget of a basemap starting now under `config`.
    fn start(config: &Config) -> Budget {
        Budget {
            start: Instant::now(),
            length: config.timeout.saturating_mul(BUDGET_TIMEOUTS),
        }
    }

    /// Whether it is spent: no more tile is asked of the server.
    fn spent(&self) -> bool {
        self.start.elapsed() >= self.length
    }
}

/// A tile as [`fetch_tile`] got it.
struct Fetched {
    pixmap: Result<Pixmap>,
    cache_error: Option<Error>,
}

/// What became of a tile that was asked for: drawn into the mosaic or why
/// not, and whether caching it failed. Holds no pixels, so the decoded
/// tiles never pile up while the others are fetched.
struct Outcome {
    drawn: Result<()>,
    cache_error: Option<Error>,
}

/// The tiles of a basemap: zoom `z`, columns `x0..=x1` (unwrapped) and rows
/// `y0..=y1`, each `tile_px` pixels a side in the mosaic.
struct Grid {
    z: u8,
    x0: i64,
    x1: i64,
    y0: i64,
    y1: i64,
    tile_px: u32,
}

impl Grid {
    /// The tiles, row by row.
    fn tiles(&self) -> Vec<(i64, i64)> {
        let (x0, x1) = (self.x0, self.x1);
        (self.y0..=self.y1)
            .flat_map(|y| (x0..=x1).map(move |x| (x, y)))
            .collect()
    }

    /// The column of `x` within the world (`x` may run past the antimeridian).
    fn wrap(&self, x: i64) -> u32 {
        x.rem_euclid(1i64 << self.z) as u32
    }

    /// The blank mosaic holding every tile; `None` when it cannot be allocated.
    fn mosaic(&self) -> Option<Pixmap> {
        let cols = (self.x1 - self.x0 + 1) as u32;
        let rows = (self.y1 - self.y0 + 1) as u32;
        Pixmap::new(cols * self.tile_px, rows * self.tile_px)
    }

    /// Draws `tile` into the mosaic at its place, scaled to `tile_px` a side
    /// (a server may send another size than asked for).
    fn paste(&self, mosaic: &Mutex<Pixmap>, (x, y): (i64, i64), tile: &Pixmap) {
        let px = self.tile_px as f32;
        let t = Transform::from_row(
            px / tile.width() as f32,
            0.0,
            0.0,
            px / tile.height() as f32,
            (x - self.x0) as f32 * px,
            (y - self.y0) as f32 * px,
        );
        let mut mosaic = mosaic.lock().unwrap_or_else(PoisonError::into_inner);
        mosaic.draw_pixmap(0, 0, tile.as_ref(), &PixmapPaint::default(), t, None);
    }
}

/// Draws the basemap of `source` under `view` onto `canvas`. Tiles that
/// cannot be fetched or decoded, or are not asked of the server once the
/// [`Budget`] is spent, are left blank and summed up in `warnings`.
/// Each tile is drawn into the mosaic as soon as it is decoded, so at most
/// one decoded tile per download thread is held at a time. A cancel of the
/// call is `Error::Cancelled`, not tiles left blank.
pub fn draw_basemap(
    ctx: &Context,
    canvas: &mut Pixmap,
    view: &View,
    source: &TileSource,
    zoom: Option<u8>,
    cache: &TileCacheMode,
    warnings: &mut Vec<String>,
) -> Result<()> {
    let retina = source.retina(view.scale);
    let tile_px = if retina { 2 * TILE_PX } else { TILE_PX };
    let z = basemap_zoom(ctx, view, source, zoom, tile_px, warnings);
    let (x0, x1, y0, y1) = tile_range(view, z);
    let grid = Grid {
        z,
        x0,
        x1,
        y0,
        y1,
        tile_px,
    };
    let Some(mosaic) = grid.mosaic() else {
        return Ok(());
    };
    let mosaic = Mutex::new(mosaic);
    let tile_cache = open_cache(ctx, cache, warnings);
    let tiles = grid.tiles();
    let total = tiles.len() as u64;
    let mut done = 0;
    let budget = Budget::start(&ctx.config);
    let outcomes = parallel_map(
        ctx.config.concurrency,
        &tiles,
        |&(x, y)| {
            let url = source.url(z, grid.wrap(x), y as u32, retina);
            let fetched = fetch_tile(ctx, tile_cache.as_ref(), &url, &budget)?;
            Some(Outcome {
                drawn: fetched
                    .pixmap
                    .map(|tile| grid.paste(&mosaic, (x, y), &tile)),
                cache_error: fetched.cache_error,
            })
        },
        |_, _| {
            done += 1;
            ctx.progress("tiles", done, total);
        },
    );
    if let Some(c) = &tile_cache {
        c.evict();
    }
    ctx.check_stop()?;
    report(ctx, &grid, &tiles, outcomes, budget.length, warnings);
    let mosaic = mosaic.into_inner().unwrap_or_else(PoisonError::into_inner);
    place(canvas, view, &grid, &mosaic, ctx.config.threads);
    Ok(())
}

/// The zoom of the basemap: `zoom` if given, else the one matching the
/// view's resolution; at most the provider's, and lowered until the view
/// needs at most [`MAX_TILES`] (a warning when a given zoom is lowered).
fn basemap_zoom(
    ctx: &Context,
    view: &View,
    source: &TileSource,
    zoom: Option<u8>,
    tile_px: u32,
    warnings: &mut Vec<String>,
) -> u8 {
    let mut z = zoom
        .unwrap_or_else(|| zoom_for(view.resolution(), tile_px, source.max_zoom))
        .min(source.max_zoom);
    let count = |z: u8| {
        let (x0, x1, y0, y1) = tile_range(view, z);
        ((x1 - x0 + 1) * (y1 - y0 + 1)) as usize
    };
    while z > 0 && count(z) > MAX_TILES {
        z -= 1;
    }
    if zoom.is_some_and(|wanted| wanted > z) {
        warnings.push(ctx.warn(format!(
            "basemap zoom {} lowered to {z} (at most {} tiles per map, provider maximum {})",
            zoom.unwrap_or(z),
            MAX_TILES,
            source.max_zoom
        )));
    }
    z
}

/// The tile cache of `cache`, if any; one that cannot be opened is a
/// warning, and the tiles are fetched without it.
fn open_cache(
    ctx: &Context,
    cache: &TileCacheMode,
    warnings: &mut Vec<String>,
) -> Option<TileCache> {
    match cache {
        TileCacheMode::Off => None,
        TileCacheMode::Dir(dir) => match TileCache::open(dir, DEFAULT_MAX_BYTES) {
            Ok(c) => Some(c),
            Err(e) => {
                warnings.push(ctx.warn(format!("{e}; tiles are fetched without a cache")));
                None
            }
        },
    }
}

/// Sums up in `warnings` the tiles left blank (those that failed, those not
/// asked for once the `budget` was spent: `None`) and those not cached,
/// one warning each, naming the first failure.
fn report(
    ctx: &Context,
    grid: &Grid,
    tiles: &[(i64, i64)],
    outcomes: Vec<Option<Outcome>>,
    budget: Duration,
    warnings: &mut Vec<String>,
) {
    let mut failures = Vec::new();
    let mut cache_errors = Vec::new();
    let mut skipped = 0;
    for (&(x, y), outcome) in tiles.iter().zip(outcomes) {
        let Some(outcome) = outcome else {
            skipped += 1;
            continue;
        };
        cache_errors.extend(outcome.cache_error);
        if let Err(e) = outcome.drawn {
            failures.push(format!("tile {}/{}/{y}: {e}", grid.z, grid.wrap(x)));
        }
    }
    if let Some(first) = failures.first() {
        warnings.push(ctx.warn(format!(
            "{} of {} basemap tiles could not be used and are left blank; the first: {first}",
            failures.len(),
            tiles.len()
        )));
    }
    if skipped > 0 {
        warnings.push(ctx.warn(format!(
            "{skipped} of {} basemap tiles were not requested and are left blank: the \
             basemap's time budget ({budget:?}, {BUDGET_TIMEOUTS} times timeout_s) was spent",
            tiles.len()
        )));
    }
    if let Some(e) = cache_errors.first() {
        warnings.push(ctx.warn(format!(
            "{} basemap tiles could not be cached; the first: {e}",
            cache_errors.len()
        )));
    }
}

/// Draws the `mosaic` of `grid` onto `canvas`, scaled to the view (its
/// top-left corner is tile (x0, y0)), in strips on up to `threads` threads.
fn place(canvas: &mut Pixmap, view: &View, grid: &Grid, mosaic: &Pixmap, threads: usize) {
    let size = 2.0 * HALF_WORLD_M / (1i64 << grid.z) as f64;
    let (left, top) = view.to_px(
        grid.x0 as f64 * size - HALF_WORLD_M,
        HALF_WORLD_M - grid.y0 as f64 * size,
    );
    let k = (size / grid.tile_px as f64 / view.resolution()) as f32;
    let paint = PixmapPaint {
        quality: FilterQuality::Bilinear,
        ..PixmapPaint::default()
    };
    // One item over every strip: each strip samples its rows of the mosaic.
    let every_row = [(f32::NEG_INFINITY, f32::INFINITY)];
    strips::draw_in_strips(canvas, &every_row, threads, |_: &mut (), strip, at, _| {
        let to_strip = Transform::from_row(k, 0.0, 0.0, k, left, top - at as f32);
        strip.draw_pixmap(0, 0, mosaic.as_ref(), &paint, to_strip, None);
    });
}

/// One tile: from the cache when fresh (or, in offline mode, whatever its
/// age); when expired, revalidated with the server (`304 Not Modified`
/// renews the entry, no download); else fetched from the server (then cached).
/// `None` when the server would be asked once the `budget` is spent.
fn fetch_tile(
    ctx: &Context,
    cache: Option<&TileCache>,
    url: &str,
    budget: &Budget,
) -> Option<Fetched> {
    let cached = cache.and_then(|c| c.lookup(url));
    let stale = match cached {
        Some(entry) if entry.is_fresh() || ctx.config.offline => match decode(&entry.body) {
            Ok(p) => return Some(fetched(Ok(p), None)),
            Err(_) => None,
        },
        other => other,
    };
    if budget.spent() {
        return None;
    }
    let validators = stale.as_ref().map(Entry::validators).unwrap_or_default();
    let mut response = ctx.get_conditional(Service::Tiles, url, &validators);
    if let (Ok(r), Some(entry), Some(c)) = (&response, stale, cache) {
        if r.status == 304 {
            if let Ok(p) = decode(&entry.body) {
                return Some(fetched(Ok(p), c.refresh(url, &r.headers, entry).err()));
            }
            // The kept copy is unreadable: fetch the tile afresh.
            response = ctx.get(Service::Tiles, url);
        }
    }
    let response = match response {
        Ok(r) => r,
        Err(e) => return Some(fetched(Err(e), None)),
    };
    let pixmap = decode(&response.body).map_err(|e| e.context(&redact_url(url)));
    let cache_error = match (&pixmap, cache) {
        (Ok(_), Some(c)) => c.put(url, &response.headers, &response.body).err(),
        _ => None,
    };
    Some(fetched(pixmap, cache_error))
}

fn fetched(pixmap: Result<Pixmap>, cache_error: Option<Error>) -> Fetched {
    Fetched {
        pixmap,
        cache_error,
    }
}

/// Decodes a PNG or JPEG tile into a premultiplied RGBA pixmap.
pub fn decode(bytes: &[u8]) -> Result<Pixmap> {
    let bad =
        |what: &str| Error::Service(format!("the tile server sent an unreadable image ({what})"));
    let (width, height, rgba) = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        decode_png(bytes).map_err(|e| bad(&format!("PNG: {e}")))?
    } else if bytes.starts_with(&[0xFF, 0xD8]) {
        decode_jpeg(bytes).map_err(|e| bad(&format!("JPEG: {e}")))?
    } else {
        return Err(bad("neither PNG nor JPEG"));
    };
    let size = IntSize::from_wh(width, height).ok_or_else(|| bad("empty image"))?;
    let mut data = rgba;
    for px in data.chunks_exact_mut(4) {
        let a = px[3] as u16;
        for c in &mut px[..3] {
            *c = ((*c as u16 * a + 127) / 255) as u8;
        }
    }
    Pixmap::from_vec(data, size).ok_or_else(|| bad("wrong pixel count"))
}

/// Tiles larger than this a side are refused from the image header, before
/// any pixel is decoded. Tile servers send 256 or 512 pixels, and 1,024 for
/// the `@2x` of 512-pixel tiles (Mapbox, MapTiler): a tile decodes to at
/// most 4 MiB. At 4,096 a tile decoded to 64 MiB, and a map of them took
/// gigabytes from a server that sends 70 KB PNGs.
const MAX_TILE_SIDE: u32 = 1024;

/// Refuses an image of `w` x `h` pixels larger than a tile (see [`MAX_TILE_SIDE`]).
fn check_tile_size(w: u32, h: u32) -> std::result::Result<(), String> {
    if w > MAX_TILE_SIDE || h > MAX_TILE_SIDE {
        return Err(format!(
            "{w}x{h} pixels; a tile has at most {MAX_TILE_SIDE} a side"
        ));
    }
    Ok(())
}

fn decode_png(bytes: &[u8]) -> std::result::Result<(u32, u32, Vec<u8>), String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
    let (w, h) = (reader.info().width, reader.info().height);
    check_tile_size(w, h)?;
    let mut buf = vec![0; reader.output_buffer_size().ok_or("image too large")?];
    let frame = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
    buf.truncate(frame.buffer_size());
    let rgba = match frame.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        png::ColorType::GrayscaleAlpha => buf
            .chunks_exact(2)
            .flat_map(|p| [p[0], p[0], p[0], p[1]])
            .collect(),
        png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        png::ColorType::Indexed => return Err("palette not expanded".into()),
    };
    Ok((w, h, rgba))
}

fn decode_jpeg(bytes: &[u8]) -> std::result::Result<(u32, u32, Vec<u8>), String> {
    let mut decoder = jpeg_decoder::Decoder::new(bytes);
    decoder.read_info().map_err(|e| e.to_string())?;
    let info = decoder.info().ok_or("no image header")?;
    let (w, h) = (info.width as u32, info.height as u32);
    check_tile_size(w, h)?;
    let pixels = decoder.decode().map_err(|e| e.to_string())?;
    let rgba = match info.pixel_format {
        jpeg_decoder::PixelFormat::RGB24 => pixels
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        jpeg_decoder::PixelFormat::L8 => pixels.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        other => return Err(format!("unsupported pixel format {other:?}")),
    };
    Ok((w, h, rgba))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_and_the_tile_url_override() {
        let s = TileSource::new("esri.natgeoworldmap", None).unwrap();
        assert_eq!(s.max_zoom, 16);
        assert_eq!(
            s.url(12, 1032, 1497, false),
            "https://server.arcgisonline.com/ArcGIS/rest/services/NatGeo_World_Map/MapServer/tile/12/1497/1032"
        );
        let c = TileSource::new("CartoDB.Positron", None).unwrap();
        assert_eq!(
            c.url(3, 1, 2, true),
            "https://d.basemaps.cartocdn.com/light_all/3/1/2@2x.png"
        );
        assert_eq!(
            c.url(3, 1, 1, false),
            "https://c.basemaps.cartocdn.com/light_all/3/1/1.png"
        );
        let o = TileSource::new(
            "OpenStreetMap",
            Some("http://127.0.0.1:9/t/{z}/{x}/{y}.png"),
        )
        .unwrap();
        assert_eq!(o.url(5, 8, 11, false), "http://127.0.0.1:9/t/5/8/11.png");
        assert_eq!(o.attribution, "Tiles: 127.0.0.1");
        let e = provider("Stamen.Toner").unwrap_err();
        assert!(e.to_string().contains("Stamen.Toner") && e.to_string().contains("OpenStreetMap"));
    }

    #[test]
    fn the_attribution_shows_the_host_and_no_credentials() {
        let cases = [
            (
                "http://agent:hunter2@127.0.0.1:9/{z}/{x}/{y}.png",
                "127.0.0.1",
            ),
            (
                "https://agent@tiles.example/{z}/{x}/{y}.png",
                "tiles.example",
            ),
            (
                "https://a:b@c@tiles.example:8443/{z}/{x}/{y}.png",
                "tiles.example",
            ),
            (
                "https://tiles.example?apikey=s3cret&t={z}/{x}/{y}",
                "tiles.example",
            ),
            ("https://tiles.example#u:p@evil.example", "tiles.example"),
            ("http://u:p@[::1]:8080/{z}/{x}/{y}.png", "[::1]"),
            ("http://[::1]/{z}/{x}/{y}.png", "[::1]"),
        ];
        for (template, host) in cases {
            let s = TileSource::new("OpenStreetMap", Some(template)).unwrap();
            assert_eq!(s.attribution, format!("Tiles: {host}"), "{template}");
            // The fetch keeps what it needs.
            assert_eq!(s.template, template);
        }
    }

    #[test]
    fn zoom_table() {
        // (metres per pixel, expected zoom): z has 156543.03 / 2^z m per pixel.
        let table = [
            (156_543.03, 0),
            (611.5, 8),
            (152.87, 10),
            (120.0, 10),
            (100.0, 11),
            (38.2, 12),
            (19.1, 13),
            (2.39, 16),
            (0.3, 16),
            (1e9, 0),
        ];
        for (res, z) in table {
            assert_eq!(zoom_for(res, TILE_PX, 16), z, "resolution {res}");
        }
        assert_eq!(zoom_for(0.3, TILE_PX, 19), 19);
        // @2x tiles: one zoom level less for the same resolution.
        assert_eq!(zoom_for(19.1, 2 * TILE_PX, 16), 12);
    }

    #[test]
    fn tile_range_covers_the_view() {
        // The whole world at zoom 1: 2 x 2 tiles.
        let v = View {
            extent: [-HALF_WORLD_M, -HALF_WORLD_M, HALF_WORLD_M, HALF_WORLD_M],
            width: 512,
            height: 512,
            scale: 1.0,
        };
        assert_eq!(tile_range(&v, 1), (0, 1, 0, 1));
        // A small view just north-east of (q, q) at zoom 2: the top-right tile (3, 0).
        let q = HALF_WORLD_M / 2.0;
        let v = View {
            extent: [q + 1000.0, q + 1000.0, q + 2000.0, q + 2000.0],
            width: 10,
            height: 10,
            scale: 1.0,
        };
        assert_eq!(tile_range(&v, 2), (3, 3, 0, 0));
        assert_eq!(tile_range(&v, 3), (6, 6, 1, 1));
    }

    fn png_bytes(w: u32, h: u32, color: png::ColorType, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(color);
        enc.set_depth(png::BitDepth::Eight);
        enc.write_header().unwrap().write_image_data(data).unwrap();
        out
    }

    #[test]
    fn decodes_png_kinds_and_refuses_garbage() {
        let p = decode(&png_bytes(
            2,
            1,
            png::ColorType::Rgb,
            &[255, 0, 0, 0, 0, 255],
        ))
        .unwrap();
        assert_eq!((p.width(), p.height()), (2, 1));
        let c = p.pixel(1, 0).unwrap();
        assert_eq!([c.red(), c.green(), c.blue(), c.alpha()], [0, 0, 255, 255]);
        let p = decode(&png_bytes(1, 1, png::ColorType::Rgba, &[200, 100, 50, 0])).unwrap();
        assert_eq!(p.pixel(0, 0).unwrap().alpha(), 0);
        let g = decode(&png_bytes(1, 1, png::ColorType::Grayscale, &[77])).unwrap();
        assert_eq!(g.pixel(0, 0).unwrap().green(), 77);
        assert!(matches!(
            decode(b"<html>busy</html>"),
            Err(Error::Service(_))
        ));
        assert!(decode(b"\x89PNG\r\n\x1a\ntruncated").is_err());
        assert!(decode(&[0xFF, 0xD8, 0xFF, 0x00]).is_err());
    }

    /// A PNG chunk: length, type, data, CRC.
    fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut crc = crc32fast::Hasher::new();
        crc.update(kind);
        crc.update(data);
        let mut out = (data.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&crc.finalize().to_be_bytes());
        out
    }

    #[test]
    fn tiles_larger_than_servers_send_are_refused_from_the_header() {
        // Up to 1,024 pixels a side: the `@2x` of a 512-pixel tile.
        let wide = decode(&png_bytes(1024, 1, png::ColorType::Grayscale, &[9; 1024])).unwrap();
        assert_eq!((wide.width(), wide.height()), (1024, 1));
        for (w, h) in [(1025, 1), (1, 1025)] {
            let bytes = png_bytes(w, h, png::ColorType::Grayscale, &vec![9; (w * h) as usize]);
            let e = decode(&bytes).unwrap_err().to_string();
            assert!(e.contains(&format!("{w}x{h} pixels")), "{e}");
        }
        // A 2048 x 2048 RGBA header over pixel data that does not inflate:
        // refused for its size, so no pixel was decoded (nor 16 MiB allocated).
        let mut ihdr = 2048u32.to_be_bytes().repeat(2);
        ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
        let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
        bytes.extend(chunk(b"IHDR", &ihdr));
        bytes.extend(chunk(b"IDAT", b"not zlib"));
        bytes.extend(chunk(b"IEND", b""));
        let e = decode(&bytes).unwrap_err().to_string();
        assert!(e.contains("2048x2048 pixels"), "{e}");
    }
}
