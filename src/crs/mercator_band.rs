//! Web Mercator northings of many latitudes within a band, for drawing a
//! dense layer: the closed form (a sine and a logarithm) tabulated once
//! with its slope at [`INTERVALS`] + 1 latitudes, then interpolated by a
//! cubic (Hermite) polynomial per interval, a few multiplications a point.
//! Within 1e-10 of the band's height in northing of the closed form, or
//! 1e-8 m in a band a few metres tall (half a millimetre over the whole
//! square world, a thousandth of a millimetre over a basin of a degree or
//! two; tested), far below a pixel of any map drawn with it.

use super::{web_mercator_northing, RADIUS};

/// Intervals the band is cut into.
const INTERVALS: usize = 4096;

/// The latitude (degrees) where Web Mercator's square world ends.
pub const MAX_LATITUDE: f64 = 85.051_128_779_806_59;

/// The table of one band of latitudes. Owns its coefficients (32 bytes an
/// interval); cheap to share between threads.
#[derive(Debug, Clone)]
pub struct MercatorBand {
    /// The band's first latitude, degrees.
    south: f64,
    /// Its last latitude, degrees.
    north: f64,
    /// Intervals per degree.
    per_degree: f64,
    /// Per interval, the cubic's coefficients in the fraction of the
    /// interval (constant term first), metres.
    cubics: Vec<[f64; 4]>,
}

impl MercatorBand {
    /// The band from `south` to `north` (degrees; clamped to the Mercator
    /// limits, widened to a millionth of a degree when narrower).
    pub fn new(south: f64, north: f64) -> MercatorBand {
        let clamp = |lat: f64| lat.clamp(-MAX_LATITUDE, MAX_LATITUDE);
        let (mut south, mut north) = (clamp(south.min(north)), clamp(north.max(south)));
        if north - south < 1e-6 {
            (south, north) = (clamp(south - 1e-6), clamp(north + 1e-6));
        }
        let step = (north - south) / INTERVALS as f64;
        let node = |k: usize| {
            let lat = if k == INTERVALS {
                north
            } else {
                south + k as f64 * step
            };
            // The northing and its change over one interval's step.
            let slope = RADIUS / lat.to_radians().cos() * step.to_radians();
            (web_mercator_northing(lat), slope)
        };
        let mut cubics = Vec::with_capacity(INTERVALS);
        let mut from = node(0);
        for k in 1..=INTERVALS {
            let to = node(k);
            let ((y0, d0), (y1, d1)) = (from, to);
            cubics.push([
                y0,
                d0,
                3.0 * (y1 - y0) - 2.0 * d0 - d1,
                2.0 * (y0 - y1) + d0 + d1,
            ]);
            from = to;
        }
        MercatorBand {
            south,
            north,
            per_degree: INTERVALS as f64 / (north - south),
            cubics,
        }
    }

    /// The Web Mercator point of (`lon`, `lat`), degrees: its easting
    /// exactly as [`super::Transformer::point`] gives it, its northing
    /// within 1e-10 of the band's height (or 1e-8 m); `None` when `lat` is outside the band or `lon` beyond
    /// 180 degrees either way (or either is not a number).
    #[inline]
    pub fn point(&self, lon: f64, lat: f64) -> Option<(f64, f64)> {
        if !(-180.0..=180.0).contains(&lon) {
            return None;
        }
        Some((RADIUS * lon.to_radians(), self.northing(lat)?))
    }

    /// The Web Mercator northing (metres) of latitude `lat` (degrees);
    /// `None` outside the band (or not a number).
    #[inline]
    fn northing(&self, lat: f64) -> Option<f64> {
        if !(self.south..=self.north).contains(&lat) {
            return None;
        }
        let t = (lat - self.south) * self.per_degree;
        let k = (t as usize).min(INTERVALS - 1);
        let f = t - k as f64;
        let [c0, c1, c2, c3] = self.cubics[k];
        Some(c0 + f * (c1 + f * (c2 + f * c3)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest distance from the closed form over `samples` latitudes
    /// spread through the band, its ends included, over the band's height
    /// in northing (or over 100 m, in a band lower than that).
    fn worst(band: &MercatorBand, samples: usize) -> f64 {
        let height = web_mercator_northing(band.north) - web_mercator_northing(band.south);
        let height = height.max(100.0);
        let worst = (0..=samples)
            .map(|i| {
                let lat = band.south + (band.north - band.south) * i as f64 / samples as f64;
                let y = band.northing(lat).expect("inside the band");
                (y - web_mercator_northing(lat)).abs()
            })
            .fold(0.0, f64::max);
        worst / height
    }

    #[test]
    fn northings_stay_within_a_ten_billionth_of_the_band_of_the_closed_form() {
        for (south, north) in [
            (-90.0, 90.0),
            (0.0, 85.06),
            (80.0, 85.0),
            (35.0, 36.5),
            (-12.345, -12.3449),
            (44.0, 44.0),
        ] {
            let band = MercatorBand::new(south, north);
            let w = worst(&band, 1_000_003);
            assert!(w < 1e-10, "{south}..{north}: {w}");
        }
    }

    #[test]
    fn points_in_the_band_are_the_transformers_within_a_micrometre() {
        let to_map = super::super::Transformer::new("EPSG:4269", "EPSG:3857").unwrap();
        let band = to_map
            .mercator_band(20.0, 50.0)
            .expect("lon/lat to Web Mercator");
        for (lon, lat) in [(-180.0, 20.0), (-79.1, 35.9), (0.0, 49.99), (180.0, 50.0)] {
            let (x, y) = band.point(lon, lat).expect("inside");
            let (u, v) = to_map.point(lon, lat).unwrap();
            assert_eq!(x, u, "{lon} {lat}");
            assert!((y - v).abs() < 1e-6, "{lon} {lat}");
        }
        assert_eq!(band.point(180.1, 30.0), None);
        assert_eq!(band.point(f64::NAN, 30.0), None);
        let other = super::super::Transformer::new("EPSG:4269", "EPSG:5070").unwrap();
        assert!(other.mercator_band(20.0, 50.0).is_none());
    }

    #[test]
    fn outside_the_band_there_is_no_northing() {
        let band = MercatorBand::new(30.0, 40.0);
        for lat in [29.999_999, 40.000_001, f64::NAN, 90.0, f64::INFINITY] {
            assert_eq!(band.northing(lat), None, "{lat}");
        }
        for lat in [30.0, 40.0] {
            let y = band.northing(lat).expect("an end of the band");
            assert!((y - web_mercator_northing(lat)).abs() < 1e-6, "{lat}");
        }
    }
}
