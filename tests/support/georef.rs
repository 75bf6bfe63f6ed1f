//! Georeferencing truths computed in the tests, not by the library: Web
//! Mercator by hand, a map's extent by hand, world files read back, and what
//! `gdalinfo` (when installed) reads from a georeferenced PNG.

use std::path::Path;
use std::process::Command;

/// Web Mercator metres of a WGS 84 point: x = R·λ, y = R·ln(tan(π/4 + φ/2)).
pub fn mercator(lon: f64, lat: f64) -> (f64, f64) {
    const R: f64 = 6_378_137.0;
    let (lon, lat) = (lon.to_radians(), lat.to_radians());
    (
        R * lon,
        R * (std::f64::consts::FRAC_PI_4 + lat / 2.0).tan().ln(),
    )
}

/// The 3857 extent of a `w` x `h` canvas showing the lon/lat `bbox`:
/// centred, aspect kept, 4 % of the canvas free on each side (as
/// `render::view` documents).
pub fn extent_by_hand(bbox: [f64; 4], (w, h): (f64, f64)) -> [f64; 4] {
    let (x0, y0) = mercator(bbox[0], bbox[1]);
    let (x1, y1) = mercator(bbox[2], bbox[3]);
    let res = ((x1 - x0) / (w * 0.92)).max((y1 - y0) / (h * 0.92));
    let (cx, cy) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
    [
        cx - w / 2.0 * res,
        cy - h / 2.0 * res,
        cx + w / 2.0 * res,
        cy + h / 2.0 * res,
    ]
}

pub fn assert_close(a: [f64; 4], b: [f64; 4], tol: f64) {
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol, "{a:?} != {b:?}");
    }
}

/// The six numbers of a world file.
pub fn world_file(path: &Path) -> [f64; 6] {
    let text = std::fs::read_to_string(path).unwrap();
    let v: Vec<f64> = text.lines().map(|l| l.trim().parse().unwrap()).collect();
    v.try_into().unwrap()
}

/// The extent a world file gives a `w` x `h` image (its centres moved out
/// half a pixel to the outer edges).
pub fn world_extent(wf: [f64; 6], (w, h): (u32, u32)) -> [f64; 4] {
    let [a, d, b, e, c, f] = wf;
    assert_eq!((d, b), (0.0, 0.0), "no rotation");
    let (left, top) = (c - a / 2.0, f - e / 2.0);
    [left, top + e * f64::from(h), left + a * f64::from(w), top]
}

/// gdalinfo prints corner coordinates to the millimetre.
pub const GDAL_MM: f64 = 1.0e-3;

/// `gdalinfo -json` of a file: its size, corner extent and CRS WKT; None
/// when GDAL is not installed (a local skip; a failure under `CI=true`).
pub fn gdalinfo(path: &Path) -> Option<((u32, u32), [f64; 4], String)> {
    let ran = Command::new("gdalinfo")
        .arg("-json")
        .arg(path)
        .output()
        .ok();
    let out = super::tool::required(ran, "gdalinfo (GDAL, Debian gdal-bin)")?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let size = (
        info["size"][0].as_u64().unwrap() as u32,
        info["size"][1].as_u64().unwrap() as u32,
    );
    let corner = |name: &str, i: usize| info["cornerCoordinates"][name][i].as_f64().unwrap();
    let extent = [
        corner("lowerLeft", 0),
        corner("lowerLeft", 1),
        corner("upperRight", 0),
        corner("upperRight", 1),
    ];
    let wkt = info["coordinateSystem"]["wkt"]
        .as_str()
        .unwrap_or("")
        .to_string();
    Some((size, extent, wkt))
}

/// Decodes a PNG into (width, height, RGBA bytes).
pub fn rgba(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

pub fn assert_epsg_3857(wkt: &str) {
    assert!(
        wkt.contains("Pseudo-Mercator") && wkt.replace(' ', "").contains("ID[\"EPSG\",3857]"),
        "GDAL does not read EPSG:3857: {wkt}"
    );
}
