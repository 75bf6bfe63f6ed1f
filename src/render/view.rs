//! The view: which EPSG:3857 rectangle the canvas shows, and the mapping
//! between Web Mercator metres and device pixels.

use crate::{Error, Result};

/// The CRS of the drawn map.
pub const MAP_CRS: &str = "EPSG:3857";

/// The map size when none is given, pixels.
pub const DEFAULT_SIZE: (u32, u32) = (1024, 768);

/// Every side of a map, in pixels, lies in this range.
pub const SIDE_PX: std::ops::RangeInclusive<u32> = 16..=16_384;

/// Checks a map size (`width` x `height` pixels) against [`SIDE_PX`].
pub fn check_size(width: u32, height: u32) -> Result<()> {
    if SIDE_PX.contains(&width) && SIDE_PX.contains(&height) {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "size {width} x {height}: each side must be {}..={} pixels",
            SIDE_PX.start(),
            SIDE_PX.end()
        )))
    }
}

/// Fraction of the canvas left free on each side around the plot bbox.
pub const MARGIN: f64 = 0.04;

/// The smallest extent (metres) a view shows, so that a single point or a
/// degenerate bbox still gives a sensible map.
pub const MIN_EXTENT_M: f64 = 1_000.0;

/// Half the width of the Web Mercator world, metres (π · 6378137).
pub const HALF_WORLD_M: f64 = 20_037_508.342_789_244;

/// Maps EPSG:3857 metres to device pixels: x grows east, y grows down.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    /// The 3857 rectangle the whole canvas covers `[xmin, ymin, xmax, ymax]`.
    pub extent: [f64; 4],
    /// Canvas width in device pixels.
    pub width: u32,
    /// Canvas height in device pixels.
    pub height: u32,
    /// Device pixels per logical pixel (HiDPI scale; 1 = 96 dpi).
    pub scale: f64,
}

impl View {
    /// Fits the 3857 `bbox` into a `size` (logical pixels) canvas at `scale`,
    /// centred, aspect kept (metres per pixel equal in x and y), with
    /// [`MARGIN`] free on each side.
    pub fn fit(bbox: [f64; 4], size: (u32, u32), scale: f64) -> Result<View> {
        if bbox.iter().any(|v| !v.is_finite()) || bbox[0] > bbox[2] || bbox[1] > bbox[3] {
            return Err(Error::InvalidArgument(format!(
                "the map bbox {bbox:?} is not a valid box"
            )));
        }
        let (w, h) = View::device_size(size, scale)?;
        let dx = (bbox[2] - bbox[0]).max(MIN_EXTENT_M);
        let dy = (bbox[3] - bbox[1]).max(MIN_EXTENT_M);
        let usable = 1.0 - 2.0 * MARGIN;
        let res = (dx / (w * usable)).max(dy / (h * usable));
        let (cx, cy) = ((bbox[0] + bbox[2]) / 2.0, (bbox[1] + bbox[3]) / 2.0);
        let (hw, hh) = (w / 2.0 * res, h / 2.0 * res);
        Ok(View {
            extent: [cx - hw, cy - hh, cx + hw, cy + hh],
            width: w as u32,
            height: h as u32,
            scale,
        })
    }

    /// The canvas size in device pixels of `size` logical pixels at `scale`;
    /// an `Error::InvalidArgument` unless the scale is 0.25-8 and each side
    /// 16-16384 device pixels.
    pub fn device_size(size: (u32, u32), scale: f64) -> Result<(f64, f64)> {
        if !(scale.is_finite() && (0.25..=8.0).contains(&scale)) {
            return Err(Error::InvalidArgument(format!(
                "the map scale {scale} is not between 0.25 and 8"
            )));
        }
        let (w, h) = (
            (size.0 as f64 * scale).round(),
            (size.1 as f64 * scale).round(),
        );
        let side = f64::from(*SIDE_PX.start())..=f64::from(*SIDE_PX.end());
        if !side.contains(&w) || !side.contains(&h) {
            return Err(Error::InvalidArgument(format!(
                "the map size {}x{} at scale {scale} is not between {} and {} pixels a side",
                size.0,
                size.1,
                SIDE_PX.start(),
                SIDE_PX.end()
            )));
        }
        Ok((w, h))
    }

    /// Metres per device pixel (the same in x and y).
    pub fn resolution(&self) -> f64 {
        (self.extent[2] - self.extent[0]) / self.width as f64
    }

    /// The device pixel position of a 3857 point (fractional; pixel centres at +0.5).
    pub fn to_px(&self, x: f64, y: f64) -> (f32, f32) {
        let r = self.resolution();
        (
            ((x - self.extent[0]) / r) as f32,
            ((self.extent[3] - y) / r) as f32,
        )
    }

    /// The 3857 point at a device pixel position.
    pub fn to_map(&self, px: f64, py: f64) -> (f64, f64) {
        let r = self.resolution();
        (self.extent[0] + px * r, self.extent[3] - py * r)
    }

    /// Latitude (degrees) of the canvas centre (0 if it cannot be computed,
    /// which a fitted view's finite extent never causes).
    pub fn centre_latitude(&self) -> f64 {
        latitude((self.extent[1] + self.extent[3]) / 2.0)
    }

    /// Latitudes (degrees) of the canvas's bottom and top edges, clamped to
    /// Web Mercator's square world.
    pub fn latitudes(&self) -> (f64, f64) {
        (latitude(self.extent[1]), latitude(self.extent[3]))
    }

    /// Ground metres per device pixel at the canvas centre (Mercator stretches
    /// distances by 1 / cos(latitude)).
    pub fn ground_resolution(&self) -> f64 {
        self.resolution() * self.centre_latitude().to_radians().cos()
    }

    /// A length in R units (line widths, symbol sizes: 1 = 1/96 inch) in device pixels.
    pub fn px(&self, r_units: f64) -> f32 {
        (r_units * self.scale) as f32
    }
}

/// The latitude (degrees) of the 3857 northing `y`, clamped to Web
/// Mercator's square world (0 if it cannot be computed, which a finite `y`
/// never causes; the latitude does not depend on the easting).
fn latitude(y: f64) -> f64 {
    crate::crs::Transformer::new("EPSG:3857", "EPSG:4326")
        .and_then(|t| t.point(0.0, y.clamp(-HALF_WORLD_M, HALF_WORLD_M)))
        .map_or(0.0, |(_, lat)| lat)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_keeps_aspect_centres_and_leaves_margins() {
        // A box twice as wide as tall on a 4:3 canvas: width limits.
        let v = View::fit([0.0, 0.0, 20_000.0, 10_000.0], (1024, 768), 1.0).unwrap();
        assert_eq!((v.width, v.height), (1024, 768));
        let res = 20_000.0 / (1024.0 * 0.92);
        assert!((v.resolution() - res).abs() < 1e-9);
        let (x0, y1) = v.to_px(0.0, 10_000.0);
        let (x1, y0) = v.to_px(20_000.0, 0.0);
        assert!((x0 - 1024.0 * 0.04).abs() < 1e-3 && (x1 - 1024.0 * 0.96).abs() < 1e-3);
        assert!(((y0 + y1) / 2.0 - 384.0).abs() < 1e-3, "vertically centred");
        let (mx, my) = v.to_map(512.0, 384.0);
        assert!((mx - 10_000.0).abs() < 1e-6 && (my - 5_000.0).abs() < 1e-6);
    }

    #[test]
    fn hidpi_doubles_pixels_not_extent() {
        let a = View::fit([0.0, 0.0, 5_000.0, 5_000.0], (400, 300), 1.0).unwrap();
        let b = View::fit([0.0, 0.0, 5_000.0, 5_000.0], (400, 300), 2.0).unwrap();
        assert_eq!((b.width, b.height), (800, 600));
        assert!((a.resolution() - 2.0 * b.resolution()).abs() < 1e-9);
        assert_eq!(b.px(1.5), 3.0);
    }

    #[test]
    fn degenerate_and_bad_boxes() {
        let v = View::fit([100.0, 100.0, 100.0, 100.0], (100, 100), 1.0).unwrap();
        assert!((v.extent[2] - v.extent[0] - MIN_EXTENT_M / 0.92).abs() < 1e-6);
        assert!(View::fit([f64::NAN, 0.0, 1.0, 1.0], (100, 100), 1.0).is_err());
        assert!(View::fit([1.0, 0.0, 0.0, 1.0], (100, 100), 1.0).is_err());
        assert!(View::fit([0.0, 0.0, 1.0, 1.0], (0, 100), 1.0).is_err());
    }

    #[test]
    fn ground_resolution_corrects_for_latitude() {
        // Centred on y = 5 311 972 m, latitude 43.0 degrees.
        let v = View::fit(
            [-10_000.0, 5_301_972.0, 10_000.0, 5_321_972.0],
            (1000, 1000),
            1.0,
        )
        .unwrap();
        assert!(
            (v.centre_latitude() - 43.0).abs() < 1e-3,
            "{}",
            v.centre_latitude()
        );
        assert!((v.ground_resolution() / v.resolution() - 43f64.to_radians().cos()).abs() < 1e-4);
    }
}
