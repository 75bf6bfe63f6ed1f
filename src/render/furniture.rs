//! Map furniture: north arrow (top right), scale bar (bottom left) and the
//! basemap attribution (bottom right), drawn over everything else.

use super::font;
use super::view::View;
use tiny_skia::{Color, FillRule, Paint, PathBuilder, Pixmap, Rect, Stroke, Transform};

/// Distance from the canvas edges, logical pixels.
const INSET: f64 = 10.0;

/// Draws the north arrow, the scale bar and, when given, the attribution.
pub fn draw(pixmap: &mut Pixmap, view: &View, attribution: Option<&str>) {
    north_arrow(pixmap, view);
    scale_bar(pixmap, view);
    if let Some(text) = attribution {
        attribution_box(pixmap, view, text);
    }
}

fn paint(color: Color) -> Paint<'static> {
    let mut p = Paint::default();
    p.set_color(color);
    p.anti_alias = true;
    p
}

fn backdrop(pixmap: &mut Pixmap, x: f32, y: f32, w: f32, h: f32) {
    if let Some(r) = Rect::from_xywh(x, y, w, h) {
        pixmap.fill_rect(
            r,
            &paint(Color::from_rgba8(255, 255, 255, 190)),
            Transform::identity(),
            None,
        );
    }
}

/// The round distance for a scale bar at most `max_m` metres long: the
/// largest of 1, 2, 5 x 10^k not above it.
pub fn round_distance(max_m: f64) -> f64 {
    if !(max_m.is_finite() && max_m > 0.0) {
        return 0.0;
    }
    let decade = 10f64.powf(max_m.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|d| *d <= max_m * (1.0 + 1e-9))
        .unwrap_or(decade)
}

/// "500 m", "2 km", "0.5 m".
pub fn distance_label(m: f64) -> String {
    if m >= 1000.0 {
        format!("{} km", m / 1000.0)
    } else {
        format!("{m} m")
    }
}

/// Length in device pixels and label of the scale bar: at most a fifth of
/// the canvas width, measured at the centre latitude.
pub fn scale_bar_length(view: &View) -> (f32, String) {
    let ground = view.ground_resolution();
    let d = round_distance(view.width as f64 / 5.0 * ground);
    ((d / ground) as f32, distance_label(d))
}

fn scale_bar(pixmap: &mut Pixmap, view: &View) {
    let s = view.scale as f32;
    let (len, label) = scale_bar_length(view);
    if len <= 0.0 {
        return;
    }
    let fpx = (2.0 * s).round();
    let text_h = font::HEIGHT as f32 * fpx;
    let x = INSET as f32 * s;
    let bottom = view.height as f32 - INSET as f32 * s;
    let bar_h = 4.0 * s;
    backdrop(
        pixmap,
        x - 4.0 * s,
        bottom - bar_h - text_h - 10.0 * s,
        len + 8.0 * s,
        bar_h + text_h + 14.0 * s,
    );
    // A black and white bar in two halves, outlined.
    let top = bottom - bar_h;
    for (i, c) in [Color::BLACK, Color::WHITE].into_iter().enumerate() {
        if let Some(r) = Rect::from_xywh(x + i as f32 * len / 2.0, top, len / 2.0, bar_h) {
            pixmap.fill_rect(r, &paint(c), Transform::identity(), None);
        }
    }
    if let Some(r) = Rect::from_xywh(x, top, len, bar_h) {
        let path = PathBuilder::from_rect(r);
        pixmap.stroke_path(
            &path,
            &paint(Color::BLACK),
            &Stroke {
                width: s,
                ..Stroke::default()
            },
            Transform::identity(),
            None,
        );
    }
    font::draw(pixmap, &label, x, top - text_h - 4.0 * s, fpx, Color::BLACK);
}

fn north_arrow(pixmap: &mut Pixmap, view: &View) {
    let s = view.scale as f32;
    let (w, h) = (20.0 * s, 32.0 * s);
    let cx = view.width as f32 - INSET as f32 * s - w / 2.0;
    let top = INSET as f32 * s;
    let fpx = (2.0 * s).round();
    let n_top = top + h + 3.0 * s;
    backdrop(
        pixmap,
        cx - w / 2.0 - 4.0 * s,
        top - 4.0 * s,
        w + 8.0 * s,
        h + 11.0 * s + font::HEIGHT as f32 * fpx,
    );
    // Left half black, right half white, both outlined: an arrow pointing up.
    let halves = [(-w / 2.0, Color::BLACK), (w / 2.0, Color::WHITE)];
    for (dx, color) in halves {
        let mut pb = PathBuilder::new();
        pb.move_to(cx, top);
        pb.line_to(cx + dx, top + h);
        pb.line_to(cx, top + h * 0.75);
        pb.close();
        if let Some(p) = pb.finish() {
            pixmap.fill_path(
                &p,
                &paint(color),
                FillRule::Winding,
                Transform::identity(),
                None,
            );
            let stroke = Stroke {
                width: s,
                ..Stroke::default()
            };
            pixmap.stroke_path(
                &p,
                &paint(Color::BLACK),
                &stroke,
                Transform::identity(),
                None,
            );
        }
    }
    font::draw(pixmap, "N", cx - 2.5 * fpx, n_top, fpx, Color::BLACK);
}

/// Splits `text` into lines of at most `max_chars` characters at blanks.
fn wrap(text: &str, max_chars: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > max_chars {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

fn attribution_box(pixmap: &mut Pixmap, view: &View, text: &str) {
    let s = view.scale as f32;
    let fpx = s.round().max(1.0);
    let text = font::printable(text);
    let advance = font::ADVANCE as f32 * fpx;
    let max_chars = ((view.width as f32 * 0.6) / advance).max(8.0) as usize;
    let lines = wrap(&text, max_chars);
    let line_h = (font::HEIGHT as f32 + 3.0) * fpx;
    let w = lines
        .iter()
        .map(|l| font::width(l, fpx))
        .fold(0.0, f32::max);
    let h = lines.len() as f32 * line_h;
    let (x, y) = (
        view.width as f32 - w - 4.0 * s,
        view.height as f32 - h - 3.0 * s,
    );
    backdrop(pixmap, x - 3.0 * s, y - 2.0 * s, w + 7.0 * s, h + 5.0 * s);
    for (i, l) in lines.iter().enumerate() {
        font::draw(
            pixmap,
            l,
            x,
            y + i as f32 * line_h,
            fpx,
            Color::from_rgba8(40, 40, 40, 255),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_distances_follow_1_2_5() {
        assert_eq!(round_distance(7_300.0), 5_000.0);
        assert_eq!(round_distance(4_999.0), 2_000.0);
        assert_eq!(round_distance(2_000.0), 2_000.0);
        assert_eq!(round_distance(1_999.0), 1_000.0);
        assert_eq!(round_distance(0.9), 0.5);
        assert_eq!(distance_label(5_000.0), "5 km");
        assert_eq!(distance_label(500.0), "500 m");
    }

    #[test]
    fn scale_bar_is_corrected_for_latitude() {
        // At 60 degrees north a Mercator metre is half a ground metre.
        let y60 = 8_399_737.889_818_36;
        let v = View::fit(
            [0.0, y60 - 10_000.0, 20_000.0, y60 + 10_000.0],
            (1000, 1000),
            1.0,
        )
        .unwrap();
        let (len, label) = scale_bar_length(&v);
        let ground_per_px = v.resolution() * 0.5;
        // 1000 / 5 px * ground_per_px = max; the label names the round distance below it.
        assert!((v.ground_resolution() - ground_per_px).abs() < 1e-6);
        assert_eq!(label, "2 km");
        assert!((len as f64 - 2000.0 / ground_per_px).abs() < 1e-3);
    }

    #[test]
    fn attribution_wraps_at_blanks() {
        assert_eq!(
            wrap("Tiles (c) Esri - National Geographic", 12),
            ["Tiles (c)", "Esri -", "National", "Geographic"]
        );
    }
}
