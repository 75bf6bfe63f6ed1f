//! A polygon layer generalized to the pixel grid, for a map too dense to
//! read (the level of detail): the layer's coverage of the pixels, closed
//! so that gaps and inlets narrower than a few pixels are filled, then
//! filled through that coverage and outlined along its half-covered
//! contour. A basin whose outline weaves between thousands of catchments
//! (or whose parts lie a pixel apart) is drawn as the shape a reader sees
//! at that scale, not as a scribble of outline. Drawing only: the layer's
//! geometries are not changed.

use super::layer::{Canvas, LayerView, ShapePaint};
use super::symbols;
use super::view::View;
use crate::Result;
use tiny_skia::{LineCap, LineJoin, Mask, MaskType, PathBuilder, Pixmap, Rect, Stroke, Transform};

/// Coverage at or above which a pixel is inside the generalized shape: half.
const INSIDE: u8 = 128;

/// Draws the polygons of `layer` onto `pixmap` (whose view is `view`)
/// generalized: gaps and inlets up to `2 * close_px` device pixels across
/// are closed, the result filled with the layer's fill and outlined with
/// its line. Lines and points of the layer are not drawn. Allocates one
/// pixmap and one mask of the map's size for the draw; the polygons are
/// drawn on up to `threads` threads.
pub(super) fn draw(
    pixmap: &mut Pixmap,
    view: &View,
    layer: &LayerView,
    close_px: usize,
    threads: usize,
) -> Result<()> {
    let Some(mut covered) = Pixmap::new(pixmap.width(), pixmap.height()) else {
        return Ok(());
    };
    let solid = ShapePaint {
        line: None,
        fill: Some(tiny_skia::ColorU8::from_rgba(0, 0, 0, 255)),
        lwd: layer.paint.lwd,
    };
    Canvas::new(&mut covered, view, threads).draw(&LayerView {
        paint: solid,
        symbol: None,
        pixel_grid: true,
        ..layer.clone()
    })?;
    let mut mask = Mask::from_pixmap(covered.as_ref(), MaskType::Alpha);
    drop(covered);
    let (width, height) = (mask.width() as usize, mask.height() as usize);
    close(mask.data_mut(), width, height, close_px);
    if let Some(c) = layer.paint.fill {
        let whole = Rect::from_xywh(0.0, 0.0, width as f32, height as f32);
        if let Some(whole) = whole {
            pixmap.fill_rect(
                whole,
                &symbols::solid(c),
                Transform::identity(),
                Some(&mask),
            );
        }
    }
    if let (Some(c), Some(path)) = (layer.paint.line, contour(mask.data(), width, height)) {
        let stroke = Stroke {
            width: view.px(layer.paint.lwd),
            line_cap: LineCap::Round,
            line_join: LineJoin::Round,
            ..Stroke::default()
        };
        pixmap.stroke_path(
            &path,
            &symbols::solid(c),
            &stroke,
            Transform::identity(),
            None,
        );
    }
    Ok(())
}

/// Closes the coverage `data` (`width` x `height`, row-major) in place: the
/// largest value within `r` pixels (a square), then the smallest of those
/// within `r`. Gaps up to `2 r` pixels across fill; a straight edge, its
/// antialiasing included, stays where it was. Beyond the image is empty.
pub fn close(data: &mut [u8], width: usize, height: usize, r: usize) {
    if r == 0 {
        return;
    }
    // Pad by r on every side, so that dilating does not lose what
    // crosses the image's edge before eroding brings it back.
    let (w, h) = (width + 2 * r, height + 2 * r);
    let mut padded = vec![0u8; w * h];
    for y in 0..height {
        padded[(y + r) * w + r..(y + r) * w + r + width]
            .copy_from_slice(&data[y * width..(y + 1) * width]);
    }
    let mut dilated = vec![0u8; w * h];
    square_extreme(&padded, &mut dilated, w, r, u8::max);
    square_extreme(&dilated, &mut padded, w, r, u8::min);
    for y in 0..height {
        data[y * width..(y + 1) * width]
            .copy_from_slice(&padded[(y + r) * w + r..(y + r) * w + r + width]);
    }
}

/// Writes to `out` the `extreme` (`u8::max`: dilation, `u8::min`: erosion)
/// of the values of `image` (rows of `w`, row-major) within `r` pixels of
/// each, a square whose window ends at the image's edges: along rows, then
/// along columns. Each step merges a row with a shifted row, or with a
/// row above or below, over contiguous bytes.
fn square_extreme(
    image: &[u8],
    out: &mut [u8],
    w: usize,
    r: usize,
    extreme: impl Fn(u8, u8) -> u8 + Copy,
) {
    let mut along_rows = image.to_vec();
    for (row, from) in along_rows.chunks_exact_mut(w).zip(image.chunks_exact(w)) {
        for k in 1..=r.min(w - 1) {
            merge(&mut row[..w - k], &from[k..], extreme);
            merge(&mut row[k..], &from[..w - k], extreme);
        }
    }
    out.copy_from_slice(&along_rows);
    let h = image.len() / w;
    for (y, row) in out.chunks_exact_mut(w).enumerate() {
        let rows = y.saturating_sub(r)..(y + r + 1).min(h);
        for other in rows.filter(|&other| other != y) {
            merge(row, &along_rows[other * w..(other + 1) * w], extreme);
        }
    }
}

/// Sets each value of `into` to the `extreme` of it and its peer in `from`.
fn merge(into: &mut [u8], from: &[u8], extreme: impl Fn(u8, u8) -> u8) {
    for (a, &b) in into.iter_mut().zip(from) {
        *a = extreme(*a, b);
    }
}

/// The contour of the coverage `data` (`width` x `height`) at half
/// coverage, by marching squares between pixel centres, in device pixels:
/// one two-point subpath per cell it crosses, interpolated linearly along
/// the cell's edges. Beyond the image is empty, so every contour closes.
/// `None` when nothing is covered.
pub fn contour(data: &[u8], width: usize, height: usize) -> Option<tiny_skia::Path> {
    let at = |x: isize, y: isize| -> u8 {
        if x < 0 || y < 0 || x as usize >= width || y as usize >= height {
            0
        } else {
            data[y as usize * width + x as usize]
        }
    };
    let mut pb = PathBuilder::new();
    for y in -1..height as isize {
        for x in -1..width as isize {
            // Corners clockwise from the top left; edge e runs from corner
            // e to corner e + 1: top, right, bottom, left.
            let corners = [at(x, y), at(x + 1, y), at(x + 1, y + 1), at(x, y + 1)];
            let inside = corners.map(|v| v >= INSIDE);
            if inside.iter().all(|&i| i) || inside.iter().all(|&i| !i) {
                continue;
            }
            let origin = [x as f32 + 0.5, y as f32 + 0.5];
            let crossing = |edge: usize| -> (f32, f32) {
                let (a, b) = (corners[edge], corners[(edge + 1) % 4]);
                let t = (f32::from(INSIDE) - f32::from(a)) / (f32::from(b) - f32::from(a));
                let [(ax, ay), (bx, by)] = [CORNER[edge], CORNER[(edge + 1) % 4]];
                (
                    origin[0] + ax + t * (bx - ax),
                    origin[1] + ay + t * (by - ay),
                )
            };
            let centre_inside =
                corners.iter().map(|&v| u32::from(v)).sum::<u32>() >= 4 * u32::from(INSIDE);
            // The edges whose two corners differ: two, joined by one
            // segment, or four (a saddle), whose corners unlike the centre
            // are cut off, each by the segment between its two edges.
            let mut crossed = (0..4).filter(|&e| inside[e] != inside[(e + 1) % 4]);
            let segments = match (crossed.next(), crossed.next(), crossed.next()) {
                (Some(a), Some(b), None) => [Some((a, b)), None],
                (Some(_), Some(_), Some(_)) if inside[0] != centre_inside => {
                    [Some((3, 0)), Some((1, 2))]
                }
                (Some(_), Some(_), Some(_)) => [Some((0, 1)), Some((2, 3))],
                _ => [None, None],
            };
            for (a, b) in segments.into_iter().flatten() {
                let (p, q) = (crossing(a), crossing(b));
                pb.move_to(p.0, p.1);
                pb.line_to(q.0, q.1);
            }
        }
    }
    pb.finish()
}

/// The corners of a cell, clockwise from the top left, relative to it.
const CORNER: [(f32, f32); 4] = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)];

#[cfg(test)]
mod tests {
    use super::*;

    /// A `width` x `height` coverage, 255 where `inside(x, y)`.
    fn coverage(width: usize, height: usize, inside: impl Fn(usize, usize) -> bool) -> Vec<u8> {
        (0..height)
            .flat_map(|y| (0..width).map(move |x| (x, y)))
            .map(|(x, y)| if inside(x, y) { 255 } else { 0 })
            .collect()
    }

    #[test]
    fn closing_fills_gaps_up_to_twice_the_radius() {
        // Two blocks of columns 2..6 and 6+gap..10+gap, rows 2..8.
        for (gap, filled) in [(1, true), (4, true), (5, false)] {
            let (w, h) = (14 + gap, 10);
            let block = |x: usize, y: usize| {
                (2..8).contains(&y) && ((2..6).contains(&x) || (6 + gap..10 + gap).contains(&x))
            };
            let mut data = coverage(w, h, block);
            close(&mut data, w, h, 2);
            let middle = 6 + gap / 2;
            assert_eq!(data[4 * w + middle] == 255, filled, "gap {gap}");
            // Outside the blocks' rows and columns nothing is added.
            assert!((0..w).all(|x| data[x] == 0 && data[(h - 1) * w + x] == 0));
            assert_eq!(data[4 * w], 0);
            assert_eq!(data[4 * w + w - 1], 0);
        }
    }

    #[test]
    fn closing_keeps_a_straight_antialiased_edge_where_it_was() {
        // A half plane from column 5 on, column 4 a third covered, touching
        // the image's right edge.
        let (w, h) = (9, 6);
        let mut data: Vec<u8> = (0..w * h)
            .map(|i| match i % w {
                x if x >= 5 => 255,
                4 => 85,
                _ => 0,
            })
            .collect();
        let before = data.clone();
        close(&mut data, w, h, 3);
        assert_eq!(data, before);
    }

    #[test]
    fn closing_is_the_square_window_extremes_worked_out_one_by_one() {
        // Pseudo-random coverage; the closing computed pixel by pixel from
        // its definition: padded by r with nothing, the largest value in
        // each square window (cut at the padded image's edges), then the
        // smallest, cropped back.
        let (width, height, r) = (37, 23, 3);
        let mut seed = 12345u32;
        let data: Vec<u8> = (0..width * height)
            .map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                if seed >> 30 == 0 {
                    (seed >> 16) as u8
                } else {
                    0
                }
            })
            .collect();
        let (w, h) = (width + 2 * r, height + 2 * r);
        let at = |img: &[u8], x: usize, y: usize| img[y * w + x];
        let mut padded = vec![0u8; w * h];
        for y in 0..height {
            for x in 0..width {
                padded[(y + r) * w + x + r] = data[y * width + x];
            }
        }
        let window = |img: &[u8], pick: fn(u8, u8) -> u8, start: u8| -> Vec<u8> {
            let mut out = vec![0u8; w * h];
            for y in 0..h {
                for x in 0..w {
                    let mut v = start;
                    for yy in y.saturating_sub(r)..(y + r + 1).min(h) {
                        for xx in x.saturating_sub(r)..(x + r + 1).min(w) {
                            v = pick(v, at(img, xx, yy));
                        }
                    }
                    out[y * w + x] = v;
                }
            }
            out
        };
        let closed = window(&window(&padded, u8::max, 0), u8::min, 255);
        let mut got = data.clone();
        close(&mut got, width, height, r);
        for y in 0..height {
            for x in 0..width {
                assert_eq!(
                    got[y * width + x],
                    closed[(y + r) * w + x + r],
                    "({x}, {y})"
                );
            }
        }
        assert!(got != data, "the closing changed something");
    }

    /// The end points of the subpaths of `path`.
    fn points(path: &tiny_skia::Path) -> Vec<(f32, f32)> {
        path.points().iter().map(|p| (p.x, p.y)).collect()
    }

    #[test]
    fn the_contour_of_a_square_runs_on_its_half_covered_edges_and_closes() {
        // Pixels 2..6 covered: their centres 2.5 .. 5.5. Between the centre
        // 1.5 (0) and 2.5 (255) half coverage is reached 128/255 of the way.
        let (w, h) = (8, 8);
        let data = coverage(w, h, |x, y| (2..6).contains(&x) && (2..6).contains(&y));
        let path = contour(&data, w, h).expect("a contour");
        let low = 1.5 + 128.0 / 255.0;
        let high = 5.5 + 127.0 / 255.0;
        let near = |a: f32, b: f32| (a - b).abs() < 1e-4;
        let ends = points(&path);
        assert!(!ends.is_empty());
        for &(x, y) in &ends {
            let on_side = (near(x, low) || near(x, high))
                && (low - 1e-4..=high + 1e-4).contains(&y)
                || (near(y, low) || near(y, high)) && (low - 1e-4..=high + 1e-4).contains(&x);
            assert!(on_side, "({x}, {y}) is off the square [{low}, {high}]");
        }
        // Closed: every end point is shared by exactly two segments.
        for &p in &ends {
            let shared = ends
                .iter()
                .filter(|&&q| near(p.0, q.0) && near(p.1, q.1))
                .count();
            assert_eq!(shared, 2, "{p:?}");
        }
    }

    #[test]
    fn a_saddle_is_resolved_by_its_centre() {
        // Two pixels touching at a corner: the cell between them is a
        // saddle whose centre (half of 255 + 255 over four) is below half,
        // so the two stay apart: two closed diamonds, eight segments.
        let data = coverage(4, 4, |x, y| (x, y) == (1, 1) || (x, y) == (2, 2));
        let path = contour(&data, 4, 4).expect("a contour");
        assert_eq!(points(&path).len(), 16);
        assert_eq!(contour(&[0; 16], 4, 4), None);
    }
}
