//! The mock XYZ tile server: `/tiles/{z}/{x}/{y}.png`, a 256x256 PNG of one
//! colour per tile, with the validators real tile servers send (`ETag`,
//! `Last-Modified`) and `304 Not Modified` answers to conditional requests
//! that match them.

use super::date::{http_date, parse_http_date, this_year};
use super::wire::Reply;

/// The `Last-Modified` of every tile (tiles never change), in seconds since
/// 1970: RFC 9110's example date, Sun, 06 Nov 1994 08:49:37 GMT.
const LAST_MODIFIED: i64 = 784_111_777;

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

/// The `ETag` of tile `z/x/y` (strong, quoted).
fn tile_etag(z: u32, x: u32, y: u32) -> String {
    format!("\"tile-{z}-{x}-{y}\"")
}

/// Answers `{z}/{x}/{y}.png` (`rest`) to a request with the given
/// `If-None-Match` and `If-Modified-Since` headers: 304 when they show the
/// client's copy is current (`If-None-Match` decides when present, as in
/// RFC 9110), else the tile.
pub(super) fn tile(
    rest: &str,
    if_none_match: Option<&str>,
    if_modified_since: Option<&str>,
) -> Reply {
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
    let etag = tile_etag(z, x, y);
    let headers = vec![
        ("Cache-Control", "max-age=3600".into()),
        ("ETag", etag.clone()),
        ("Last-Modified", http_date(LAST_MODIFIED)),
    ];
    let not_modified = match (if_none_match, if_modified_since) {
        (Some(tags), _) => tags
            .split(',')
            .map(|t| t.trim().trim_start_matches("W/"))
            .any(|t| t == "*" || t == etag),
        (None, Some(date)) => {
            parse_http_date(date, this_year()).is_some_and(|since| since >= LAST_MODIFIED)
        }
        (None, None) => false,
    };
    if not_modified {
        return Reply {
            status: 304,
            content_type: "image/png",
            headers,
            body: Vec::new(),
        };
    }
    match encode(tile_color(z, x, y)) {
        Ok(body) => Reply {
            status: 200,
            content_type: "image/png",
            headers,
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
    use super::*;

    #[test]
    fn conditional_requests_get_304_when_the_copy_is_current() {
        let full = tile("3/1/2.png", None, None);
        assert_eq!(full.status, 200);
        assert!(!full.body.is_empty());
        let etag = tile_etag(3, 1, 2);
        assert!(full.headers.contains(&("ETag", etag.clone())));
        let last_modified = "Sun, 06 Nov 1994 08:49:37 GMT";
        assert!(full
            .headers
            .contains(&("Last-Modified", last_modified.into())));
        let cases = [
            (Some(etag.as_str()), None, 304),
            (Some("\"other\", W/\"tile-3-1-2\""), None, 304),
            (Some("*"), None, 304),
            (Some("\"tile-3-1-3\""), Some(last_modified), 200),
            (None, Some(last_modified), 304),
            (None, Some("Mon, 07 Nov 1994 08:49:37 GMT"), 304),
            (None, Some("Sat, 05 Nov 1994 08:49:37 GMT"), 200),
            (None, Some("Sun, 06 Nov 1994 08:49:36 GMT"), 200),
            // The obsolete forms RFC 9110 has recipients accept.
            (None, Some("Sunday, 06-Nov-94 08:49:37 GMT"), 304),
            (None, Some("Sun Nov  6 08:49:36 1994"), 200),
            (None, Some("not a date"), 200),
        ];
        for (inm, ims, status) in cases {
            let r = tile("3/1/2.png", inm, ims);
            assert_eq!(r.status, status, "{inm:?} {ims:?}");
            assert_eq!(r.body.is_empty(), status == 304, "{inm:?} {ims:?}");
        }
    }

    #[test]
    fn neighbouring_tiles_differ() {
        let c = tile_color(12, 1000, 1500);
        assert_ne!(c, tile_color(12, 1001, 1500));
        assert_ne!(c, tile_color(12, 1000, 1501));
        assert_ne!(c, tile_color(13, 1000, 1500));
        assert_eq!(c, tile_color(12, 1000, 1500));
    }
}
