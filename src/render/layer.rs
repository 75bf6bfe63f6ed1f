//! Drawing a layer straight from its flat geometry buffers
//! ([`Geometries`]): the rows' coordinate slices are projected into chunks
//! of pixel positions (for a large layer on several threads, ahead of the
//! draw), and each row's path is built from the part and ring offsets and
//! drawn in the strips of the canvas it reaches, the strips on several
//! threads ([`strips`]). No `geo` geometry is built per row; only a rare
//! GeometryCollection row, kept whole by the table, is flattened first.

use super::colors::RColor;
use super::strips;
use super::style::Style;
use super::symbols::{self, SymbolPaint};
use super::view::{View, MAP_CRS};
use crate::crs::{MercatorBand, Transformer};
use crate::table::geometry::{kind, Geometries, GeometryBuilder};
use crate::{Error, Result};
use geo::{Geometry, LineString};
use std::ops::Range;
use std::sync::mpsc::Receiver;
use tiny_skia::{FillRule, LineCap, LineJoin, PathBuilder, Pixmap, PixmapMut, Stroke, Transform};

/// Colours and width of lines and polygons.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShapePaint {
    /// Lines and polygon borders (`None`: not drawn).
    pub line: RColor,
    /// Polygon fill (`None`: not filled).
    pub fill: RColor,
    /// Line width in R units.
    pub lwd: f64,
}

/// What the map draws: rows of a layer's geometries in one CRS with one
/// paint. Render knows no plot request or layer: the modules above it (plot
/// data, traces) say what to draw by building views. Borrows the geometries
/// for the draw.
#[derive(Debug, Clone)]
pub struct LayerView<'a> {
    /// The geometries (a table's, or built for the draw).
    pub geometries: &'a Geometries,
    /// The rows drawn, in order (all of them: `(0..geometries.len()).into()`).
    pub rows: Rows<'a>,
    /// Their CRS (`"EPSG:4269"`, ...).
    pub crs: &'a str,
    /// Lines and polygons.
    pub paint: ShapePaint,
    /// Points, as R symbols (`None`: points are not drawn).
    pub symbol: Option<&'a Style>,
    /// Lines and rings drawn on the pixel grid: of consecutive vertices in
    /// one device pixel only the first is drawn (and a line's or ring's
    /// last), and polygon rings (holes, islands) under a pixel across are
    /// left out, which looks the same and draws a dense layer faster. Off:
    /// every vertex and ring (the maps of the samples).
    pub pixel_grid: bool,
}

/// Which rows of its geometries a [`LayerView`] draws, in order. Borrows
/// the list of rows for the draw.
#[derive(Debug, Clone)]
pub enum Rows<'a> {
    /// A range of rows.
    Range(Range<usize>),
    /// These rows (each below the geometries' length).
    List(&'a [usize]),
}

impl From<Range<usize>> for Rows<'_> {
    fn from(rows: Range<usize>) -> Self {
        Rows::Range(rows)
    }
}

impl<'a> From<&'a [usize]> for Rows<'a> {
    fn from(rows: &'a [usize]) -> Self {
        Rows::List(rows)
    }
}

impl Rows<'_> {
    /// The rows, in order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let (range, list) = match self {
            Rows::Range(r) => (r.clone(), &[][..]),
            Rows::List(l) => (0..0, *l),
        };
        range.chain(list.iter().copied())
    }
}

/// Where a layer is drawn: the pixels, their view, the path builder
/// reused from row to row of a draw (freed with it, so a map holds no
/// buffer sized by its largest row), and the threads its strips are drawn
/// on ([`strips`]).
pub(super) struct Canvas<'a> {
    pixmap: &'a mut Pixmap,
    view: &'a View,
    path: PathBuilder,
    threads: usize,
}

impl<'a> Canvas<'a> {
    /// A canvas drawing onto `pixmap`, whose view is `view`, on up to
    /// `threads` threads.
    pub fn new(pixmap: &'a mut Pixmap, view: &'a View, threads: usize) -> Canvas<'a> {
        Canvas {
            pixmap,
            view,
            path: PathBuilder::new(),
            threads,
        }
    }
}

impl Canvas<'_> {
    /// Draws the rows of `layer`. A row whose coordinates cannot be
    /// projected is an error; the rows before it stay drawn. Rows are
    /// projected in chunks of about [`CHUNK_COORDS`] coordinates (for a
    /// large layer on each of the canvas's threads, ahead of the chunk drawn,
    /// and handed over in order), and a chunk's lines and polygons are
    /// drawn in strips on the canvas's threads ([`Canvas::draw_in_strips`]); the
    /// pixels are the same however the rows fall into chunks.
    pub fn draw(&mut self, layer: &LayerView) -> Result<()> {
        let g = layer.geometries;
        let rows: Vec<usize> = layer.rows.iter().collect();
        let (chunks, coords) = chunk_bounds(g, &rows);
        let projector = Projector::new(layer.crs, self.view, coords)?;
        if coords < PIPELINE_COORDS {
            for range in chunks {
                let (chunk, failed) = project_rows(g, &rows[range], &projector);
                self.draw_chunk(&chunk, &projector, layer)?;
                failed.map_or(Ok(()), Err)?;
            }
            return Ok(());
        }
        let projectors = self.threads.max(1);
        std::thread::scope(|s| {
            let (rows, chunks, projector) = (&rows, &chunks, &projector);
            let projected: Vec<Receiver<Projected>> = (0..projectors)
                .map(|first| {
                    let (send, receive) = std::sync::mpsc::sync_channel(1);
                    s.spawn(move || {
                        for range in chunks.iter().skip(first).step_by(projectors) {
                            let (chunk, failed) = project_rows(g, &rows[range.clone()], projector);
                            let last = failed.is_some();
                            if send.send((chunk, failed)).is_err() || last {
                                return;
                            }
                        }
                    });
                    receive
                })
                .collect();
            for i in 0..chunks.len() {
                // A projector stops early only after sending an error.
                let Ok((chunk, failed)) = projected[i % projectors].recv() else {
                    break;
                };
                self.draw_chunk(&chunk, projector, layer)?;
                failed.map_or(Ok(()), Err)?;
            }
            Ok(())
        })
    }

    /// Draws the rows of `chunk` in order: runs of lines and polygons in
    /// strips, each other row (points, a collection, a row of more than
    /// [`ALONE_COORDS`] coordinates) alone on the whole canvas.
    fn draw_chunk(
        &mut self,
        chunk: &Chunk,
        projector: &Projector,
        layer: &LayerView,
    ) -> Result<()> {
        let g = layer.geometries;
        let mut run = 0;
        for (i, (row, at)) in chunk.rows.iter().enumerate() {
            let in_strips = at
                .as_ref()
                .is_some_and(|at| at.len() <= ALONE_COORDS && is_lines_or_polygons(g.kinds[*row]));
            if in_strips {
                continue;
            }
            self.draw_in_strips(&chunk.rows[run..i], &chunk.px, layer);
            run = i + 1;
            match at {
                Some(at) => self.draw_projected(&chunk.px[at.clone()], g, *row..*row + 1, layer),
                None => self.draw_collection(projector, g, *row, layer)?,
            }
        }
        self.draw_in_strips(&chunk.rows[run..], &chunk.px, layer);
        Ok(())
    }

    /// Draws `rows`, lines and polygons whose pixel positions are in `px`,
    /// in the canvas's strips: on its threads when they are many.
    fn draw_in_strips(
        &mut self,
        rows: &[(usize, Option<Range<usize>>)],
        px: &[(f32, f32)],
        layer: &LayerView,
    ) {
        let rows: Vec<(usize, &[(f32, f32)])> = (rows.iter())
            .filter_map(|(row, at)| Some((*row, &px[at.clone()?])))
            .collect();
        if rows.is_empty() {
            return;
        }
        let (g, view) = (layer.geometries, self.view);
        // How far a row's ink reaches past its vertices: half its line and
        // a pixel of anti-aliasing, with a pixel to spare.
        let reach = layer
            .paint
            .line
            .map_or(0.0, |_| view.px(layer.paint.lwd) / 2.0)
            + 2.0;
        let spans: Vec<(f32, f32)> = (rows.iter())
            .map(|(_, px)| {
                let (low, high) = px
                    .iter()
                    .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), p| {
                        (l.min(p.1), h.max(p.1))
                    });
                (low - reach, high + reach)
            })
            .collect();
        let coords: usize = rows.iter().map(|(_, px)| px.len()).sum();
        let threads = if coords < PARALLEL_COORDS {
            1
        } else {
            self.threads
        };
        let hairline = view.px(layer.paint.lwd) <= 1.0;
        strips::draw_in_strips(self.pixmap, &spans, threads, |path, strip, at, items| {
            let top = at as f32;
            // Lines drawn as hairlines are blended segment by segment, one
            // path or many: consecutive ones are gathered in `path` and
            // stroked as one, before the next other row and at the end.
            for &i in items {
                let (row, px) = rows[i];
                let (rings, base, k) = (g.row_rings(row), g.first_coord(row), g.kinds[row]);
                if hairline && !is_polygonal(k) {
                    add_rings(path, top, px, g, rings, base, false, layer.pixel_grid);
                    continue;
                }
                paint_path(strip, path, view, false, layer);
                draw_rings(strip, top, path, view, px, g, rings, base, k, layer);
            }
            paint_path(strip, path, view, false, layer);
        });
    }

    /// Draws the GeometryCollection row `row` of `g`, flattened first.
    fn draw_collection(
        &mut self,
        projector: &Projector,
        g: &Geometries,
        row: usize,
        layer: &LayerView,
    ) -> Result<()> {
        let Some(whole) = g.get(row) else {
            return Ok(());
        };
        let members = flatten(&whole)?;
        let mut px = Vec::new();
        projector.project(&members.xy, &mut px)?;
        self.draw_projected(&px, &members, 0..members.len(), layer);
        Ok(())
    }

    /// Draws `rows` of `g` on the whole canvas, whose coordinates' pixel
    /// positions `px` holds from the first coordinate of `rows.start` on:
    /// lines and rings with the layer's paint, points as its symbol.
    fn draw_projected(
        &mut self,
        px: &[(f32, f32)],
        g: &Geometries,
        rows: Range<usize>,
        layer: &LayerView,
    ) {
        let base = g.first_coord(rows.start);
        for row in rows {
            let rings = g.row_rings(row);
            match g.kinds[row] {
                kind::POINT | kind::MULTIPOINT => {
                    let Some(style) = layer.symbol else { continue };
                    let (a, b) = (g.first_coord(row), g.first_coord(row + 1));
                    let (paint, scale) = (SymbolPaint::of(style), self.view.scale);
                    for &(x, y) in &px[a - base..b - base] {
                        symbols::draw(self.pixmap, x, y, style.pch, paint, style.cex, scale);
                    }
                }
                k if is_lines_or_polygons(k) => {
                    let canvas = &mut self.pixmap.as_mut();
                    let path = &mut self.path;
                    draw_rings(canvas, 0.0, path, self.view, px, g, rings, base, k, layer);
                }
                _ => {}
            }
        }
    }
}

/// Whether rows of kind `k` are lines or polygons (drawn as a path).
fn is_lines_or_polygons(k: u8) -> bool {
    matches!(
        k,
        kind::LINESTRING | kind::MULTILINESTRING | kind::POLYGON | kind::MULTIPOLYGON
    )
}

/// Whether rows of kind `k` are polygons (filled, their rings closed).
fn is_polygonal(k: u8) -> bool {
    matches!(k, kind::POLYGON | kind::MULTIPOLYGON)
}

/// Draws one path of the rings `rings` of `g` (their pixels in `px` from
/// coordinate `base` on) onto `target`, whose row 0 is the canvas's row
/// `top` ([`add_rings`], [`paint_path`]). `path` is the builder reused
/// from row to row.
#[allow(clippy::too_many_arguments)]
fn draw_rings(
    target: &mut PixmapMut,
    top: f32,
    path: &mut PathBuilder,
    view: &View,
    px: &[(f32, f32)],
    g: &Geometries,
    rings: Range<usize>,
    base: usize,
    k: u8,
    layer: &LayerView,
) {
    let polygonal = is_polygonal(k);
    add_rings(path, top, px, g, rings, base, polygonal, layer.pixel_grid);
    paint_path(target, path, view, polygonal, layer);
}

/// Adds the rings `rings` of `g` (their pixels in `px` from coordinate
/// `base` on) to `path` as subpaths, `top` rows up: closed when
/// `polygonal`; on the pixel grid when `pixel_grid`.
#[allow(clippy::too_many_arguments)]
fn add_rings(
    path: &mut PathBuilder,
    top: f32,
    px: &[(f32, f32)],
    g: &Geometries,
    rings: Range<usize>,
    base: usize,
    polygonal: bool,
    pixel_grid: bool,
) {
    for ring in rings {
        let (a, b) = (g.coords[ring] as usize, g.coords[ring + 1] as usize);
        let ring_px = &px[a - base..b - base];
        let Some((&(x0, y0), rest)) = ring_px.split_first() else {
            continue;
        };
        if pixel_grid && polygonal && under_a_pixel(ring_px) {
            continue;
        }
        path.move_to(x0, y0 - top);
        if pixel_grid {
            let pixel = |x: f32, y: f32| (x.floor(), y.floor());
            let mut last = pixel(x0, y0);
            let end = rest.len().saturating_sub(1);
            for (i, &(x, y)) in rest.iter().enumerate() {
                if pixel(x, y) != last || i == end {
                    last = pixel(x, y);
                    path.line_to(x, y - top);
                }
            }
        } else {
            rest.iter().for_each(|&(x, y)| path.line_to(x, y - top));
        }
        if polygonal {
            // A polygon ring ends where it starts (as `geo::Polygon::new`
            // closes an open ring).
            if g.xy[2 * a..2 * a + 2] != g.xy[2 * b - 2..2 * b] {
                path.line_to(x0, y0 - top);
            }
            path.close();
        }
    }
}

/// Paints the subpaths in `path` onto `target` and empties it: filled with
/// the layer's fill when `polygonal` (even-odd), then stroked with its line.
/// Nothing when `path` is empty.
fn paint_path(
    target: &mut PixmapMut,
    path: &mut PathBuilder,
    view: &View,
    polygonal: bool,
    layer: &LayerView,
) {
    if path.is_empty() {
        return;
    }
    let Some(built) = std::mem::take(path).finish() else {
        return;
    };
    let paint = &layer.paint;
    if let (true, Some(c)) = (polygonal, paint.fill) {
        let solid = symbols::solid(c);
        target.fill_path(
            &built,
            &solid,
            FillRule::EvenOdd,
            Transform::identity(),
            None,
        );
    }
    if let Some(c) = paint.line {
        let stroke = Stroke {
            width: view.px(paint.lwd),
            line_cap: LineCap::Round,
            line_join: LineJoin::Round,
            ..Stroke::default()
        };
        let solid = symbols::solid(c);
        target.stroke_path(&built, &solid, &stroke, Transform::identity(), None);
    }
    *path = built.clear();
}

/// Layers with fewer coordinates are projected on the drawing thread.
const PIPELINE_COORDS: usize = 1 << 18;

/// Coordinates per [`Chunk`] projected ahead of the draw.
const CHUNK_COORDS: usize = 1 << 16;

/// Rows of more coordinates are drawn alone on the whole canvas: in every
/// strip they reach, each strip would build and stroke the whole path.
const ALONE_COORDS: usize = 1 << 14;

/// Runs of rows of fewer coordinates are drawn in strips on one thread.
const PARALLEL_COORDS: usize = 1 << 12;

/// Rows of a layer projected for their draw: each row with the range of
/// its pixel positions in `px`, or `None` for a GeometryCollection row,
/// which the drawing thread flattens and projects itself.
struct Chunk {
    rows: Vec<(usize, Option<Range<usize>>)>,
    px: Vec<(f32, f32)>,
}

/// A chunk as projected, and the error of the row it stopped at, if any.
type Projected = (Chunk, Option<Error>);

/// `rows` of `g` cut into runs of about [`CHUNK_COORDS`] coordinates (a
/// run ends with the row that reaches it), as ranges of `rows`; and the
/// coordinates of them all.
fn chunk_bounds(g: &Geometries, rows: &[usize]) -> (Vec<Range<usize>>, usize) {
    let (mut chunks, mut start, mut in_chunk, mut coords) = (Vec::new(), 0, 0, 0);
    for (i, &row) in rows.iter().enumerate() {
        let n = g.row_xy(row).len() / 2;
        (in_chunk, coords) = (in_chunk + n, coords + n);
        if in_chunk >= CHUNK_COORDS {
            chunks.push(start..i + 1);
            (start, in_chunk) = (i + 1, 0);
        }
    }
    if start < rows.len() {
        chunks.push(start..rows.len());
    }
    (chunks, coords)
}

/// Projects `rows` of `g`; at a row that cannot be projected, the rows
/// before it and the error.
fn project_rows(g: &Geometries, rows: &[usize], projector: &Projector) -> Projected {
    let coords: usize = rows.iter().map(|&row| g.row_xy(row).len() / 2).sum();
    let mut chunk = Chunk {
        rows: Vec::with_capacity(rows.len()),
        px: Vec::with_capacity(coords),
    };
    for &row in rows {
        if g.kinds[row] == kind::COLLECTION {
            chunk.rows.push((row, None));
            continue;
        }
        let start = chunk.px.len();
        if let Err(e) = projector.extend(g.row_xy(row), &mut chunk.px) {
            return (chunk, Some(e));
        }
        chunk.rows.push((row, Some(start..chunk.px.len())));
    }
    (chunk, None)
}

/// Layers with fewer coordinates are projected by the closed form alone:
/// a [`MercatorBand`] costs about what projecting this many would.
const BAND_COORDS: usize = 1 << 15;

/// The pixel positions in a view of coordinates in one CRS. Borrows the
/// view; owns the transformer and, for a large layer in longitude and
/// latitude, the band of latitudes its points are looked up in.
struct Projector<'a> {
    to_map: Transformer,
    view: &'a View,
    /// The view's latitudes and as much again below and above.
    band: Option<MercatorBand>,
}

impl<'a> Projector<'a> {
    /// A projector of `crs` coordinates into `view`, for a layer of
    /// `coords` coordinates.
    fn new(crs: &str, view: &'a View, coords: usize) -> Result<Projector<'a>> {
        let to_map = Transformer::new(crs, MAP_CRS)?;
        let band = if coords >= BAND_COORDS {
            let (south, north) = view.latitudes();
            let margin = north - south;
            to_map.mercator_band(south - margin, north + margin)
        } else {
            None
        };
        Ok(Projector { to_map, view, band })
    }

    /// Fills `px` with the pixel positions of `xy` (interleaved x, y), all
    /// or none.
    fn project(&self, xy: &[f64], px: &mut Vec<(f32, f32)>) -> Result<()> {
        px.clear();
        self.extend(xy, px)
    }

    /// Appends the pixel positions of `xy` to `px`, all or none (after an
    /// error `px` is as it was).
    fn extend(&self, xy: &[f64], px: &mut Vec<(f32, f32)>) -> Result<()> {
        let start = px.len();
        px.reserve(xy.len() / 2);
        for p in xy.chunks_exact(2) {
            let banded = self.band.as_ref().and_then(|b| b.point(p[0], p[1]));
            let (x, y) = match banded {
                Some(at) => at,
                None if self.to_map.is_noop() => (p[0], p[1]),
                None => match self.to_map.point(p[0], p[1]) {
                    Ok(at) => at,
                    Err(e) => {
                        px.truncate(start);
                        return Err(e);
                    }
                },
            };
            px.push(self.view.to_px(x, y));
        }
        Ok(())
    }
}

/// True when `px` spans less than a pixel in x and in y.
fn under_a_pixel(px: &[(f32, f32)]) -> bool {
    let (lo, hi) = px.iter().fold(
        (
            (f32::INFINITY, f32::INFINITY),
            (f32::NEG_INFINITY, f32::NEG_INFINITY),
        ),
        |(lo, hi), &(x, y)| ((lo.0.min(x), lo.1.min(y)), (hi.0.max(x), hi.1.max(y))),
    );
    hi.0 - lo.0 < 1.0 && hi.1 - lo.1 < 1.0
}

/// `geometries` as rows of a new [`Geometries`], one per geometry.
pub(super) fn rows_of<'a>(
    geometries: impl IntoIterator<Item = &'a Geometry<f64>>,
) -> Result<Geometries> {
    let mut b = GeometryBuilder::default();
    for g in geometries {
        b.push(g).map_err(Error::Render)?;
    }
    Ok(b.finish())
}

/// A geometry kept whole by the table (a collection, or a Line, Rect or
/// Triangle) as rows of simple geometries, depth first: what is drawn for it.
fn flatten(whole: &Geometry<f64>) -> Result<Geometries> {
    fn members(g: &Geometry<f64>, b: &mut GeometryBuilder) -> std::result::Result<(), String> {
        match g {
            Geometry::GeometryCollection(gc) => gc.iter().try_for_each(|g| members(g, b)),
            Geometry::Line(l) => b.push(&Geometry::LineString(LineString::from(vec![
                l.start, l.end,
            ]))),
            Geometry::Rect(r) => b.push(&Geometry::Polygon(r.to_polygon())),
            Geometry::Triangle(t) => b.push(&Geometry::Polygon(t.to_polygon())),
            simple => b.push(simple),
        }
    }
    let mut b = GeometryBuilder::default();
    members(whole, &mut b).map_err(Error::Render)?;
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::{point, polygon, GeometryCollection};
    use tiny_skia::{Color, ColorU8};

    /// A 100 x 100 canvas showing 3857 metres 0-100 (one metre a pixel),
    /// with `layers` drawn on it in order until one fails.
    fn canvas_draw_all(layers: &[LayerView]) -> (Pixmap, Result<()>) {
        let mut pixmap = Pixmap::new(100, 100).unwrap();
        pixmap.fill(Color::WHITE);
        let view = View {
            extent: [0.0, 0.0, 100.0, 100.0],
            width: 100,
            height: 100,
            scale: 1.0,
        };
        let mut canvas = Canvas::new(&mut pixmap, &view, 2);
        let done = layers.iter().try_for_each(|layer| canvas.draw(layer));
        (pixmap, done)
    }

    /// [`canvas_draw_all`] of one layer.
    fn canvas_draw(layer: &LayerView) -> (Pixmap, Result<()>) {
        canvas_draw_all(std::slice::from_ref(layer))
    }

    fn rgb(p: &Pixmap, x: u32, y: u32) -> [u8; 3] {
        let c = p.pixel(x, y).unwrap().demultiply();
        [c.red(), c.green(), c.blue()]
    }

    const RED: ColorU8 = ColorU8::from_rgba(255, 0, 0, 255);
    const BLUE: ColorU8 = ColorU8::from_rgba(0, 0, 255, 255);

    fn view<'a>(g: &'a Geometries, crs: &'a str, symbol: Option<&'a Style>) -> LayerView<'a> {
        LayerView {
            geometries: g,
            rows: (0..g.len()).into(),
            crs,
            paint: ShapePaint {
                line: Some(ColorU8::from_rgba(0, 0, 0, 255)),
                fill: Some(RED),
                lwd: 1.0,
            },
            symbol,
            pixel_grid: false,
        }
    }

    #[test]
    fn a_list_of_rows_draws_those_rows_in_order() {
        let rows = [1usize, 0];
        let r: Rows = rows.as_slice().into();
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![1, 0]);
        let r: Rows = (2..4).into();
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![2, 3]);
    }

    /// Rows of raw buffers, as a decoder writes them: rings need not be closed.
    fn raw_polygon(rings: &[&[(f64, f64)]]) -> Geometries {
        let mut b = GeometryBuilder::default();
        for ring in rings {
            ring.iter().for_each(|&(x, y)| b.push_xy(x, y));
            b.close_ring().unwrap();
        }
        b.close_part().unwrap();
        b.finish_row(kind::POLYGON).unwrap();
        b.finish()
    }

    #[test]
    fn an_open_ring_is_drawn_closed() {
        let open = raw_polygon(&[&[(10., 10.), (90., 10.), (90., 90.)]]);
        let closed = raw_polygon(&[&[(10., 10.), (90., 10.), (90., 90.), (10., 10.)]]);
        let (a, _) = canvas_draw(&view(&open, "EPSG:3857", None));
        let (b, _) = canvas_draw(&view(&closed, "EPSG:3857", None));
        assert!(a == b, "an open ring draws as its closed form");
        // Inside the triangle (x 70, y 30 m: pixel row 70): filled red.
        assert_eq!(rgb(&a, 70, 70), [255, 0, 0]);
        // On the closing edge's far side: white.
        assert_eq!(rgb(&a, 30, 30), [255, 255, 255]);
    }

    #[test]
    fn a_hole_is_left_unfilled() {
        let g = raw_polygon(&[
            &[(10., 10.), (90., 10.), (90., 90.), (10., 90.), (10., 10.)],
            &[(40., 40.), (60., 40.), (60., 60.), (40., 60.), (40., 40.)],
        ]);
        let (p, done) = canvas_draw(&view(&g, "EPSG:3857", None));
        done.unwrap();
        assert_eq!(rgb(&p, 50, 50), [255, 255, 255]);
        assert_eq!(rgb(&p, 25, 25), [255, 0, 0]);
    }

    #[test]
    fn a_collection_row_draws_its_members() {
        let square =
            polygon![(x: 10., y: 10.), (x: 40., y: 10.), (x: 40., y: 40.), (x: 10., y: 40.)];
        let g = rows_of([&Geometry::GeometryCollection(GeometryCollection(vec![
            Geometry::Polygon(square),
            Geometry::Point(point!(x: 70., y: 70.)),
        ]))])
        .unwrap();
        assert_eq!(g.kinds[0], kind::COLLECTION);
        let dot = Style {
            lwd: 1.0,
            col: Some(BLUE),
            border: None,
            pch: 19,
            cex: 1.0,
        };
        let (p, done) = canvas_draw(&view(&g, "EPSG:3857", Some(&dot)));
        done.unwrap();
        assert_eq!(rgb(&p, 25, 75), [255, 0, 0]);
        assert_eq!(rgb(&p, 70, 30), [0, 0, 255]);
    }

    #[test]
    fn the_pixel_grid_keeps_one_vertex_per_pixel_and_the_ends() {
        // A line that zigzags inside pixel (10, 89) and then goes to
        // (90, 10): drawn on the pixel grid, the zigzag is gone; the ends stay.
        let mut b = GeometryBuilder::default();
        for (x, y) in [(10.1, 10.1), (10.9, 10.2), (10.2, 10.8), (90.5, 10.5)] {
            b.push_xy(x, y);
        }
        b.close_ring().unwrap();
        b.close_part().unwrap();
        b.finish_row(kind::LINESTRING).unwrap();
        let g = b.finish();
        let mut grid = view(&g, "EPSG:3857", None);
        grid.pixel_grid = true;
        let (p, done) = canvas_draw(&grid);
        done.unwrap();
        let (every, _) = canvas_draw(&view(&g, "EPSG:3857", None));
        assert!(p != every, "the zigzag's vertices are left out");
        // Both ends drawn: the start pixel and the far end's.
        assert!(rgb(&p, 10, 89).iter().all(|c| *c < 200));
        assert!(rgb(&p, 89, 89).iter().all(|c| *c < 200));
    }

    /// `n` short lines of `per_line` vertices zigzagging across the 100 m
    /// canvas in lon/lat (EPSG:4326), row `i` at its own height.
    fn many_lines(n: usize, per_line: usize) -> Vec<Geometry<f64>> {
        (0..n)
            .map(|i| {
                let y = 0.0009 * (i % 97) as f64 / 97.0;
                let line: Vec<(f64, f64)> = (0..per_line)
                    .map(|j| {
                        (
                            0.0009 * j as f64 / per_line as f64,
                            y + 1e-5 * (j % 2) as f64,
                        )
                    })
                    .collect();
                Geometry::LineString(LineString::from(line))
            })
            .collect()
    }

    #[test]
    fn a_layer_projected_ahead_on_a_second_thread_draws_the_same_pixels() {
        // Over PIPELINE_COORDS in one view; the same rows in views under it.
        let lines = rows_of(&many_lines(3000, 100)).unwrap();
        assert!(lines.xy.len() / 2 > PIPELINE_COORDS);
        let (whole, done) = canvas_draw(&view(&lines, "EPSG:4326", None));
        done.unwrap();
        let parts: Vec<LayerView> = (0..lines.len())
            .step_by(500)
            .map(|start| LayerView {
                rows: (start..(start + 500).min(lines.len())).into(),
                ..view(&lines, "EPSG:4326", None)
            })
            .collect();
        let (pixmap, done) = canvas_draw_all(&parts);
        done.unwrap();
        assert!(whole == pixmap, "the same pixels, row by row or ahead");
        assert!(rgb(&whole, 50, 50) != [255, 255, 255], "something is drawn");
    }

    #[test]
    fn a_layer_draws_the_same_pixels_on_any_number_of_threads() {
        // Lines (hairlines and wide) and polygons over every strip of a
        // canvas taller than one, projected ahead and not.
        let tall = View {
            extent: [0.0, 0.0, 100.0, 100.0],
            width: 300,
            height: 700,
            scale: 1.0,
        };
        let lines = rows_of(&many_lines(3000, 100)).unwrap();
        let squares: Vec<Geometry<f64>> = (0..400)
            .map(|i| {
                let (x, y) = ((i % 20) as f64 * 5.0, (i / 20) as f64 * 5.0);
                let square = polygon![(x: x, y: y), (x: x + 7., y: y), (x: x + 7., y: y + 7.)];
                Geometry::Polygon(square)
            })
            .collect();
        let squares = rows_of(&squares).unwrap();
        let draw = |threads: usize| {
            let mut pixmap = Pixmap::new(tall.width, tall.height).unwrap();
            pixmap.fill(Color::WHITE);
            let mut canvas = Canvas::new(&mut pixmap, &tall, threads);
            for lwd in [0.5, 3.0] {
                let mut layer = view(&lines, "EPSG:4326", None);
                layer.paint.lwd = lwd;
                canvas.draw(&layer).unwrap();
            }
            canvas.draw(&view(&squares, "EPSG:3857", None)).unwrap();
            pixmap
        };
        let one = draw(1);
        assert!(one.pixels().iter().any(|p| p.red() != p.blue()), "drawn");
        assert!(draw(2) == one && draw(5) == one);
    }

    #[test]
    fn a_row_that_cannot_be_projected_ahead_fails_after_the_rows_before_it() {
        let mut geometries = many_lines(3000, 100);
        geometries.push(Geometry::LineString(LineString::from(vec![
            (0.0, 0.0),
            (0.0, 95.0),
        ])));
        geometries.extend(many_lines(10, 100));
        let lines = rows_of(&geometries).unwrap();
        let (p, done) = canvas_draw(&view(&lines, "EPSG:4326", None));
        let e = done.unwrap_err().to_string();
        assert!(e.contains("(0, 95)"), "{e}");
        let before = rows_of(&geometries[..3000]).unwrap();
        let (q, _) = canvas_draw(&view(&before, "EPSG:4326", None));
        assert!(p == q, "every row before the bad one drawn, none after");
    }

    #[test]
    fn a_row_that_cannot_be_projected_fails_after_the_rows_before_it() {
        // lat 0.0005 deg is 55.66 m north in Web Mercator (pixel row 44).
        let lines = rows_of(&[
            Geometry::LineString(LineString::from(vec![(0.0001, 0.0005), (0.0008, 0.0005)])),
            Geometry::LineString(LineString::from(vec![(0.0, 0.0), (0.0, 95.0)])),
        ])
        .unwrap();
        let (p, done) = canvas_draw(&view(&lines, "EPSG:4326", None));
        let e = done.unwrap_err().to_string();
        assert!(e.contains("(0, 95)"), "{e}");
        let drawn = rgb(&p, 50, 44);
        assert!(drawn.iter().all(|c| *c < 128), "{drawn:?}");
    }
}
