//! The mock XYZ tile server: `/tiles/{z}/{x}/{y}.png`, a 256x256 PNG of one
//! colour per tile.

use super::http::Reply;

/// Tile edge in pixels.
const TILE_SIZE: u32 = 256;

/// The colour of tile `z/x/y`: deterministic, and different from every
/// horizontal, vertical and zoom neighbour (red steps with x, green with y,
/// blue with z).
pub fn tile_color(z: u32, x: u32, y: u32) -> [u8; 3] {
    let (z, x, y) = (u64::from(z), u64::from(x), u64::from(y));
    let channel = |v: u64| (40 + v % 200) as u8;
    [
        channel(x * 67 + z * 13),
        channel(y * 89 + z * 7),
        channel(z * 101 + x * 3 + y * 5),
    ]
}

/// Answers `{z}/{x}/{y}.png` (`rest`).
pub(super) fn tile(rest: &str) -> super::http::Reply {
    let parsed = rest.strip_suffix(".png").and_then(|r| {
        let mut it = r.split('/').map(|s| s.parse::<u32>().ok());
        let t = (it.next()??, it.next()??, it.next()??);
        it.next().is_none().then_some(t)
    });
    let Some((z, x, y)) = parsed else {
        return Reply::error(400, format!("not a tile path: /tiles/{rest}"));
    };
    if z > 24 || u64::from(x) >= 1u64 << z || u64::from(y) >= 1u64 << z {
        return Reply::error(404, format!("no tile {z}/{x}/{y}"));
    }
    match encode(tile_color(z, x, y)) {
        Ok(body) => Reply {
            status: 200,
            content_type: "image/png",
            headers: vec![("Cache-Control", "max-age=3600".into())],
            body,
        },
        Err(e) => Reply::error(500, format!("PNG encoding failed: {e}")),
    }
}

fn encode(rgb: [u8; 3]) -> Result<Vec<u8>, png::EncodingError> {
    let pixels: Vec<u8> = rgb
        .iter()
        .copied()
        .cycle()
        .take((TILE_SIZE * TILE_SIZE * 3) as usize)
        .collect();
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, TILE_SIZE, TILE_SIZE);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header()?.write_image_data(&pixels)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::tile_color;

    #[test]
    fn neighbouring_tiles_differ() {
        let c = tile_color(12, 1000, 1500);
        assert_ne!(c, tile_color(12, 1001, 1500));
        assert_ne!(c, tile_color(12, 1000, 1501));
        assert_ne!(c, tile_color(13, 1000, 1500));
        assert_eq!(c, tile_color(12, 1000, 1500));
    }
}
