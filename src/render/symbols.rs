//! R plotting symbols (`pch` 0-25) and line widths.
//!
//! Units: the canvas is a 96 dpi device at scale 1, so R's `lwd = 1`
//! (1/96 inch) is one device pixel at scale 1, and `scale` device pixels at a
//! HiDPI scale. Symbol sizes follow R's graphics engine (`GESymbol`): at
//! `cex = 1` and R's default 12 point text, a circle has radius
//! 0.375 · 12/72 inch = 6 pixels; squares, diamonds and triangles are sized
//! with R's constants so that their areas match the circle's.

use super::colors::RColor;
use tiny_skia::{FillRule, Paint, Path, PathBuilder, Pixmap, Stroke, Transform};

/// R's symbol radius factor (`RADIUS` in R's engine.c).
const RADIUS: f32 = 0.375;
/// Radius factor of the small circle, pch 20 (`SMALL`).
const SMALL: f32 = 0.25;
/// Square half-side factor, sqrt(pi/4) (`SQRC`).
const SQRC: f32 = 0.886_226_9;
/// Diamond half-diagonal factor, sqrt(pi/4) · sqrt(2) (`DMDC`).
const DMDC: f32 = 1.253_314_1;
/// Triangle circumradius factor, sqrt(4 pi / (3 sqrt 3)) (`TRC0`).
const TRC0: f32 = 1.555_120_3;
/// Device pixels of R's symbol size unit at cex 1, scale 1: 12 pt at 96 dpi.
const GSTR_PX: f32 = 16.0;

/// Colours of one symbol, as R's `points()` takes them: `col` draws the
/// outline (and the whole symbol for pch 0-20); `bg` fills pch 21-25.
#[derive(Debug, Clone, Copy)]
pub struct SymbolPaint {
    pub col: RColor,
    pub bg: RColor,
}

impl SymbolPaint {
    /// The paint of an outlet style: pch 21-25 are filled with `col` and
    /// outlined with `border` (plot_config's convention); the others use `col`.
    pub fn of(style: &super::style::Style) -> SymbolPaint {
        match style.pch {
            21..=25 => SymbolPaint {
                col: style.border,
                bg: style.col,
            },
            _ => SymbolPaint {
                col: style.col,
                bg: None,
            },
        }
    }
}

enum Shape {
    Circle(f32),
    Square(f32),
    Diamond(f32),
    TriangleUp(f32),
    TriangleDown(f32),
    Plus(f32),
    Cross(f32),
}

fn path(shape: &Shape, x: f32, y: f32) -> Option<Path> {
    let mut pb = PathBuilder::new();
    let poly = |pb: &mut PathBuilder, pts: &[(f32, f32)]| {
        pb.move_to(x + pts[0].0, y + pts[0].1);
        for p in &pts[1..] {
            pb.line_to(x + p.0, y + p.1);
        }
        pb.close();
    };
    match *shape {
        Shape::Circle(r) => pb.push_circle(x, y, r),
        Shape::Square(h) => poly(&mut pb, &[(-h, -h), (h, -h), (h, h), (-h, h)]),
        Shape::Diamond(h) => poly(&mut pb, &[(0.0, -h), (h, 0.0), (0.0, h), (-h, 0.0)]),
        Shape::TriangleUp(r) | Shape::TriangleDown(r) => {
            let s = if matches!(shape, Shape::TriangleUp(_)) {
                1.0
            } else {
                -1.0
            };
            let (dx, dy) = (r * 0.866_025_4, r * 0.5);
            poly(&mut pb, &[(0.0, -r * s), (dx, dy * s), (-dx, dy * s)]);
        }
        Shape::Plus(h) => {
            pb.move_to(x - h, y);
            pb.line_to(x + h, y);
            pb.move_to(x, y - h);
            pb.line_to(x, y + h);
        }
        Shape::Cross(h) => {
            pb.move_to(x - h, y - h);
            pb.line_to(x + h, y + h);
            pb.move_to(x - h, y + h);
            pb.line_to(x + h, y - h);
        }
    }
    pb.finish()
}

/// Whether a symbol number is one of R's 0-25.
pub fn is_valid_pch(pch: i32) -> bool {
    (0..=25).contains(&pch)
}

/// Draws R symbol `pch` centred at device pixel (`x`, `y`) with size `cex`
/// at HiDPI `scale`. Symbols outside 0-25 draw nothing (callers validate).
pub fn draw(
    pixmap: &mut Pixmap,
    x: f32,
    y: f32,
    pch: i32,
    paint: SymbolPaint,
    cex: f64,
    scale: f64,
) {
    let u = GSTR_PX * cex as f32 * scale as f32;
    let r = RADIUS * u;
    let lwd = scale as f32;
    // (shape, fill, outline) triples; fill/outline are colours.
    let (col, bg) = (paint.col, paint.bg);
    let parts: Vec<(Shape, RColor, RColor)> = match pch {
        0 => vec![(Shape::Square(SQRC * r), None, col)],
        1 => vec![(Shape::Circle(r), None, col)],
        2 => vec![(Shape::TriangleUp(TRC0 * r), None, col)],
        3 => vec![(Shape::Plus(std::f32::consts::SQRT_2 * r), None, col)],
        4 => vec![(Shape::Cross(r), None, col)],
        5 => vec![(Shape::Diamond(DMDC * r), None, col)],
        6 => vec![(Shape::TriangleDown(TRC0 * r), None, col)],
        7 => vec![(Shape::Square(r), None, col), (Shape::Cross(r), None, col)],
        8 => vec![
            (Shape::Cross(r), None, col),
            (Shape::Plus(std::f32::consts::SQRT_2 * r), None, col),
        ],
        9 => vec![
            (Shape::Diamond(std::f32::consts::SQRT_2 * r), None, col),
            (Shape::Plus(std::f32::consts::SQRT_2 * r), None, col),
        ],
        10 => vec![(Shape::Circle(r), None, col), (Shape::Plus(r), None, col)],
        11 => vec![
            (Shape::TriangleUp(TRC0 * r), None, col),
            (Shape::TriangleDown(TRC0 * r), None, col),
        ],
        12 => vec![(Shape::Square(r), None, col), (Shape::Plus(r), None, col)],
        13 => vec![(Shape::Circle(r), None, col), (Shape::Cross(r), None, col)],
        14 => vec![
            (Shape::Square(r), None, col),
            (Shape::TriangleUp(r), None, col),
        ],
        15 => vec![(Shape::Square(r), col, None)],
        16 => vec![(Shape::Circle(r), col, None)],
        17 => vec![(Shape::TriangleUp(TRC0 * r), col, None)],
        18 => vec![(Shape::Diamond(r), col, None)],
        19 => vec![(Shape::Circle(r), col, col)],
        20 => vec![(Shape::Circle(SMALL * u), col, col)],
        21 => vec![(Shape::Circle(r), bg, col)],
        22 => vec![(Shape::Square(SQRC * r), bg, col)],
        23 => vec![(Shape::Diamond(DMDC * r), bg, col)],
        24 => vec![(Shape::TriangleUp(TRC0 * r), bg, col)],
        25 => vec![(Shape::TriangleDown(TRC0 * r), bg, col)],
        _ => vec![],
    };
    for (shape, fill, outline) in parts {
        let Some(p) = path(&shape, x, y) else {
            continue;
        };
        if let Some(c) = fill {
            pixmap.fill_path(
                &p,
                &solid(c),
                FillRule::Winding,
                Transform::identity(),
                None,
            );
        }
        if let Some(c) = outline {
            let stroke = Stroke {
                width: lwd,
                ..Stroke::default()
            };
            pixmap.stroke_path(&p, &solid(c), &stroke, Transform::identity(), None);
        }
    }
}

/// An anti-aliased solid paint.
pub fn solid(c: tiny_skia::ColorU8) -> Paint<'static> {
    let mut paint = Paint::default();
    paint.set_color_rgba8(c.red(), c.green(), c.blue(), c.alpha());
    paint.anti_alias = true;
    paint
}

#[cfg(test)]
mod tests {
    use super::*;
    use tiny_skia::ColorU8;

    const RED: ColorU8 = ColorU8::from_rgba(255, 0, 0, 255);
    const WHITE: ColorU8 = ColorU8::from_rgba(255, 255, 255, 255);
    const BLACK: ColorU8 = ColorU8::from_rgba(0, 0, 0, 255);

    fn rgb(p: &Pixmap, x: u32, y: u32) -> [u8; 3] {
        let c = p.pixel(x, y).unwrap().demultiply();
        [c.red(), c.green(), c.blue()]
    }

    fn render(pch: i32, col: RColor, bg: RColor, cex: f64) -> Pixmap {
        let mut p = Pixmap::new(64, 64).unwrap();
        p.fill(tiny_skia::Color::from_rgba8(200, 200, 200, 255));
        draw(&mut p, 32.0, 32.0, pch, SymbolPaint { col, bg }, cex, 1.0);
        p
    }

    #[test]
    fn solid_circle_has_r_size() {
        // pch 19 at cex 1: radius 6 px (+ half the 1 px outline).
        let p = render(19, Some(RED), None, 1.0);
        assert_eq!(rgb(&p, 32, 32), [255, 0, 0]);
        assert!(
            rgb(&p, 37, 32)[1] < 10,
            "inside the edge: {:?}",
            rgb(&p, 37, 32)
        );
        assert_eq!(rgb(&p, 40, 32), [200, 200, 200]);
        // cex 2 doubles it.
        let p = render(19, Some(RED), None, 2.0);
        assert!(rgb(&p, 43, 32)[1] < 10);
        assert_eq!(rgb(&p, 47, 32), [200, 200, 200]);
    }

    #[test]
    fn filled_square_22_uses_bg_inside_and_col_outline() {
        let p = render(22, Some(BLACK), Some(WHITE), 1.0);
        assert_eq!(rgb(&p, 32, 32), [255, 255, 255]);
        // Half side 0.886 * 6 = 5.3 px: the outline crosses x = 37.
        assert!(rgb(&p, 37, 32)[0] < 100, "{:?}", rgb(&p, 37, 32));
        assert_eq!(rgb(&p, 40, 32), [200, 200, 200]);
    }

    #[test]
    fn open_symbols_leave_the_centre_and_triangle_points_up() {
        let p = render(1, Some(RED), None, 1.0);
        assert_eq!(rgb(&p, 32, 32), [200, 200, 200]);
        let p = render(17, Some(RED), None, 1.0);
        assert_eq!(rgb(&p, 32, 27), [255, 0, 0], "apex above the centre");
        assert_eq!(rgb(&p, 32, 39), [200, 200, 200], "flat base below");
        // pch 3: a 1 px line through x = 32 covers half of columns 31 and 32.
        let p = render(3, Some(RED), None, 1.0);
        assert_eq!(rgb(&p, 32, 26), [227, 100, 100]);
        assert_eq!(rgb(&p, 36, 28), [200, 200, 200]);
        assert!((0..=25).all(is_valid_pch) && !is_valid_pch(26));
    }
}
