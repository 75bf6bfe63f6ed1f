//! plot_config styles as Leaflet path options, and R symbols as small PNG
//! icons drawn by the same code as the static map.

use crate::render::colors::RColor;
use crate::render::style::Style;
use crate::render::symbols::{self, SymbolPaint};
use crate::Result;
use serde_json::{json, Value};

/// Device pixels per CSS pixel of symbol icons: drawn at 2x, shown at 1x, so
/// they stay sharp on HiDPI screens.
const ICON_SCALE: f64 = 2.0;

/// Leaflet path options for a line or polygon: stroke `line`, fill `fill`,
/// `lwd` R units wide (1 = one CSS pixel, as on the PNG). NA colours turn
/// the stroke or fill off; alpha becomes opacity.
pub fn path_options(line: RColor, fill: RColor, lwd: f64) -> Value {
    let (color, opacity) = css(line);
    let (fill_color, fill_opacity) = css(fill);
    json!({
        "stroke": line.is_some() && lwd > 0.0,
        "color": color,
        "opacity": opacity,
        "weight": lwd,
        "fill": fill.is_some(),
        "fillColor": fill_color,
        "fillOpacity": fill_opacity,
    })
}

/// `#rrggbb` and opacity of a colour (NA: black, 0).
fn css(c: RColor) -> (String, f64) {
    match c {
        Some(c) => (
            format!("#{:02x}{:02x}{:02x}", c.red(), c.green(), c.blue()),
            f64::from(c.alpha()) / 255.0,
        ),
        None => ("#000000".into(), 0.0),
    }
}

/// An outlet symbol as `{ "url": data URI of a PNG, "size": CSS pixels }`:
/// R symbol `style.pch` at `style.cex`, coloured as the static map colours
/// it (pch 21-25 filled with `col`, outlined with `border`).
pub fn symbol_icon(style: &Style) -> Result<Value> {
    let size_css = (24.0 * style.cex.max(0.1)).ceil();
    let px = (size_css * ICON_SCALE) as u32;
    let mut pixmap = tiny_skia::Pixmap::new(px, px).ok_or_else(|| {
        crate::Error::Render(format!("a {px}x{px} symbol icon cannot be allocated"))
    })?;
    let paint = SymbolPaint::of(style);
    let centre = px as f32 / 2.0;
    symbols::draw(
        &mut pixmap,
        centre,
        centre,
        style.pch,
        paint,
        style.cex,
        ICON_SCALE,
    );
    let png = crate::render::encode_png(&pixmap)?;
    Ok(json!({ "url": format!("data:image/png;base64,{}", base64(&png)), "size": size_css }))
}

/// Standard base64 (RFC 4648, with padding).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::colors::parse;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn path_options_follow_r_colours() {
        let o = path_options(parse("blue").unwrap(), None, 2.0);
        assert_eq!(o["color"], "#0000ff");
        assert_eq!(o["weight"], 2.0);
        assert_eq!(
            (o["stroke"].as_bool(), o["fill"].as_bool()),
            (Some(true), Some(false))
        );
        let o = path_options(parse("black").unwrap(), parse("#add8e680").unwrap(), 1.0);
        assert_eq!(o["fillColor"], "#add8e6");
        assert!((o["fillOpacity"].as_f64().unwrap() - 128.0 / 255.0).abs() < 1e-9);
    }

    #[test]
    fn symbol_icon_is_a_png_data_uri_sized_by_cex() {
        let styles = crate::render::style::PlotStyles::default();
        let icon = symbol_icon(styles.outlet("huc12pp")).unwrap();
        assert!(icon["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,iVBORw0KGgo"));
        assert_eq!(icon["size"], 24.0);
    }
}
