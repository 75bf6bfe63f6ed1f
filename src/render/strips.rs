//! A pixmap drawn in fixed horizontal strips, the strips shared among
//! threads: each strip is drawn with every item that reaches into it, in
//! the items' order, clipped to the strip. Items that cross a strip's edge
//! are drawn once in each strip they reach.
//!
//! The strips are [`STRIP_ROWS`] device rows high whatever the number of
//! threads, so where a path is clipped, and with it every pixel, never
//! depends on the threads or the machine that draws it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use tiny_skia::{Pixmap, PixmapMut};

/// Device pixel rows of a strip (the last one of a pixmap may have fewer).
/// Eight strips of a 1024-pixel map keep two cores busy when its data
/// lies in one half of it.
pub const STRIP_ROWS: u32 = 128;

/// Draws items `0..spans.len()` onto `pixmap`, strip by strip, on up to
/// `threads` threads (the calling one among them). `spans[i]` holds the
/// least and greatest device row (fractional, unclipped) that item `i` may
/// ink; `draw(state, strip, top, items)` draws `items`, those that reach
/// the strip, in order, onto `strip`: a pixmap of the rows of `pixmap`
/// from `top` on, in its own coordinates (a device row `y` is the strip's
/// row `y - top`). Each thread makes one `state` (`S::default()`) for the
/// strips it draws: reused buffers. The pixels are the same for any number
/// of threads.
pub fn draw_in_strips<S: Default>(
    pixmap: &mut Pixmap,
    spans: &[(f32, f32)],
    threads: usize,
    draw: impl Fn(&mut S, &mut PixmapMut, u32, &[usize]) + Sync,
) {
    let width = pixmap.width();
    let strip_bytes = (STRIP_ROWS * width * 4) as usize;
    let strips: Vec<Mutex<&mut [u8]>> = (pixmap.data_mut().chunks_mut(strip_bytes))
        .map(Mutex::new)
        .collect();
    let next = AtomicUsize::new(0);
    let work = || {
        let mut state = S::default();
        let mut items = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(strip) = strips.get(i) else {
                return;
            };
            let mut bytes = strip.lock().unwrap_or_else(|e| e.into_inner());
            let rows = (bytes.len() / (width as usize * 4)) as u32;
            let Some(mut strip) = PixmapMut::from_bytes(&mut bytes, width, rows) else {
                continue;
            };
            let top = i as u32 * STRIP_ROWS;
            let (first, last) = (top as f32, (top + rows) as f32);
            items.clear();
            items.extend(
                (spans.iter().enumerate())
                    .filter(|(_, &(low, high))| high >= first && low < last)
                    .map(|(item, _)| item),
            );
            if !items.is_empty() {
                draw(&mut state, &mut strip, top, &items);
            }
        }
    };
    let helpers = threads.min(strips.len()).saturating_sub(1);
    std::thread::scope(|s| {
        for _ in 0..helpers {
            s.spawn(work);
        }
        work();
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use tiny_skia::{Color, FillRule, Paint, PathBuilder, Stroke, Transform};

    /// Shapes drawn with lines only, as map layers are: 20-gons of radius
    /// 30 at `(x, y)` filled half-transparent, and lines across them
    /// stroked 0.8 (a hairline) and 2.5 pixels wide.
    fn centres() -> Vec<(f32, f32)> {
        (0..40)
            .map(|i| (17.0 + 7.3 * i as f32, 11.0 + 13.7 * i as f32))
            .collect()
    }

    /// Draws the shape centred at `(x, y)` onto `target`, whose row 0 is
    /// the canvas's row `top`.
    fn shape(target: &mut PixmapMut, top: f32, (x, y): (f32, f32)) {
        let mut paint = Paint::default();
        paint.set_color(Color::from_rgba8(0, 90, 200, 100));
        paint.anti_alias = true;
        let mut pb = PathBuilder::new();
        for k in 0..20 {
            let a = k as f32 * std::f32::consts::TAU / 20.0;
            let (px, py) = (x + 30.0 * a.cos(), y + 30.0 * a.sin() - top);
            if k == 0 {
                pb.move_to(px, py)
            } else {
                pb.line_to(px, py)
            }
        }
        pb.close();
        let polygon = pb.finish().unwrap();
        target.fill_path(
            &polygon,
            &paint,
            FillRule::EvenOdd,
            Transform::identity(),
            None,
        );
        let mut pb = PathBuilder::new();
        pb.move_to(x - 29.0, y - 25.0 - top);
        pb.line_to(x + 3.0, y + 1.5 - top);
        pb.line_to(x + 28.0, y + 29.0 - top);
        let line = pb.finish().unwrap();
        for width in [0.8, 2.5] {
            let stroke = Stroke {
                width,
                ..Stroke::default()
            };
            target.stroke_path(&line, &paint, &stroke, Transform::identity(), None);
        }
    }

    fn in_strips(threads: usize) -> Pixmap {
        let centres = centres();
        let spans: Vec<(f32, f32)> = centres.iter().map(|&(_, y)| (y - 32.0, y + 32.0)).collect();
        let mut pixmap = Pixmap::new(300, 560).unwrap();
        pixmap.fill(Color::WHITE);
        draw_in_strips(
            &mut pixmap,
            &spans,
            threads,
            |_: &mut (), strip, top, items| {
                for &i in items {
                    shape(strip, top as f32, centres[i]);
                }
            },
        );
        pixmap
    }

    #[test]
    fn any_number_of_threads_draws_the_same_pixels() {
        let one = in_strips(1);
        for threads in [2, 3, 8] {
            assert!(in_strips(threads) == one, "{threads} threads");
        }
    }

    #[test]
    fn strips_draw_the_pixels_of_one_canvas_but_at_their_edges() {
        // The same shapes drawn on the whole pixmap at once. A line clipped
        // at a strip's edge starts its anti-aliasing there: along it, a few
        // rows either side of the edge, a pixel may differ by a few levels.
        let mut whole = Pixmap::new(300, 560).unwrap();
        whole.fill(Color::WHITE);
        for centre in centres() {
            shape(&mut whole.as_mut(), 0.0, centre);
        }
        let strips = in_strips(2);
        let mut differ = 0;
        for (i, (a, b)) in whole.pixels().iter().zip(strips.pixels()).enumerate() {
            let steps = [
                (a.red(), b.red()),
                (a.green(), b.green()),
                (a.blue(), b.blue()),
            ];
            let step = steps.iter().map(|(a, b)| a.abs_diff(*b)).max().unwrap_or(0);
            let row = (i / 300) as u32;
            let from_edge = (row % STRIP_ROWS).min(STRIP_ROWS - row % STRIP_ROWS);
            assert!(
                step == 0 || (step <= 16 && from_edge <= 32),
                "pixel {i}: {step} levels"
            );
            differ += usize::from(step > 0);
        }
        assert!(
            differ * 100 < whole.pixels().len(),
            "{differ} pixels differ"
        );
        let white = whole.pixels()[0];
        let inked = whole.pixels().iter().filter(|&&p| p != white).count();
        assert!(inked > whole.pixels().len() / 4, "{inked} pixels inked");
    }
}
