//! Coordinate reference systems: naming (`normalize`) and point, geometry and
//! bounding-box transformation (`Transformer`).
//!
//! One module hides the backend. By default it is pure Rust: `proj4rs` with the
//! proj strings of `crs-definitions` (identical to PROJ for EPSG:4269/4326 to
//! EPSG:3857, UTM and Albers EPSG:5070). The Cargo feature `proj` switches to the
//! `proj` crate (bundled PROJ: datum grids, every EPSG code PROJ knows).
//!
//! Conventions shared by both backends:
//! - Geographic CRSs are longitude/latitude in degrees with x = longitude
//!   (PROJ's "normalized for visualization" order), whatever the EPSG axis order.
//! - EPSG:4269 (NAD83) and EPSG:4326 (WGS 84) are treated as the same CRS: they
//!   differ by about a metre, far below plotting accuracy, and PROJ's default
//!   ballpark transformation between them is the identity too.
//! - A non-finite input or output coordinate is an [`Error::Crs`].

mod mercator_band;
#[cfg(not(feature = "proj"))]
mod pure;

pub use mercator_band::{MercatorBand, MAX_LATITUDE};
#[cfg(not(feature = "proj"))]
use pure as backend;

#[cfg(feature = "proj")]
mod full;
#[cfg(feature = "proj")]
use full as backend;

use crate::error::{Error, Result};

/// The CRS used when none is given: WGS 84 longitude/latitude.
pub const DEFAULT_CRS: &str = "EPSG:4326";

/// Points per side of a densified bounding box (corners included).
const BBOX_POINTS_PER_SIDE: usize = 21;

/// Returns the canonical `"EPSG:<code>"` name of `crs`.
///
/// `None` means [`DEFAULT_CRS`]. Accepted spellings: `"EPSG:4326"`, any case of
/// the `EPSG` prefix (`"epsg:4326"`), surrounding blanks, and a bare code
/// (`"4326"`). A malformed name or a code the backend does not know is an
/// [`Error::Crs`] naming it.
pub fn normalize(crs: Option<&str>) -> Result<String> {
    let code = code_of(crs)?;
    backend::check_known(code)?;
    Ok(format!("EPSG:{code}"))
}

/// The EPSG code of a CRS name (syntax only; see [`normalize`]).
fn code_of(crs: Option<&str>) -> Result<u32> {
    let Some(name) = crs else { return Ok(4326) };
    let trimmed = name.trim();
    let digits = match trimmed.split_once(':') {
        Some((prefix, rest)) if prefix.trim().eq_ignore_ascii_case("EPSG") => rest.trim(),
        Some(_) => return Err(unknown(name)),
        None => trimmed,
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(unknown(name));
    }
    digits.parse().map_err(|_| unknown(name))
}

fn unknown(name: &str) -> Error {
    Error::Crs(format!(
        "The CRS \"{name}\" is not known; use an EPSG code such as \"EPSG:4326\"."
    ))
}

/// NAD83 and WGS 84 are one CRS at plotting accuracy (see the module docs).
fn same_crs(a: u32, b: u32) -> bool {
    let canon = |c: u32| if c == 4269 { 4326 } else { c };
    canon(a) == canon(b)
}

/// Transforms coordinates from one CRS to another. Cheap to build (definitions
/// are parsed once per process and cached), `Send + Sync`, usable from many
/// threads at once.
pub struct Transformer {
    from: String,
    to: String,
    /// `None` when the transformation is the identity.
    inner: Option<backend::Backend>,
    /// Lon/lat to Web Mercator, the map's hot path, in closed form.
    to_web_mercator: bool,
}

impl std::fmt::Debug for Transformer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Transformer({} -> {})", self.from, self.to)
    }
}

impl Transformer {
    /// A transformer from `from` to `to` (names as accepted by [`normalize`]).
    pub fn new(from: &str, to: &str) -> Result<Transformer> {
        let (a, b) = (code_of(Some(from))?, code_of(Some(to))?);
        backend::check_known(a)?;
        backend::check_known(b)?;
        let inner = if same_crs(a, b) {
            None
        } else {
            Some(backend::Backend::new(a, b)?)
        };
        Ok(Transformer {
            from: format!("EPSG:{a}"),
            to: format!("EPSG:{b}"),
            inner,
            to_web_mercator: same_crs(a, 4326) && b == 3857,
        })
    }

    /// True when this transformer returns its input unchanged.
    pub fn is_noop(&self) -> bool {
        self.inner.is_none()
    }

    /// A table of this transformer's points for latitudes `south` to
    /// `north` ([`MercatorBand`]), for a dense layer; `None` unless it goes
    /// from longitude/latitude to Web Mercator.
    pub fn mercator_band(&self, south: f64, north: f64) -> Option<MercatorBand> {
        self.to_web_mercator
            .then(|| MercatorBand::new(south, north))
    }

    /// Transforms one point. Geographic CRSs are (longitude, latitude) in degrees.
    pub fn point(&self, x: f64, y: f64) -> Result<(f64, f64)> {
        if !x.is_finite() || !y.is_finite() {
            return Err(self.failed(x, y, "the coordinate is not a finite number"));
        }
        let Some(inner) = &self.inner else {
            return Ok((x, y));
        };
        let projected = if self.to_web_mercator {
            web_mercator(x, y)
        } else {
            inner.point(x, y)
        };
        match projected {
            Ok((u, v)) if u.is_finite() && v.is_finite() => Ok((u, v)),
            Ok(_) => Err(self.failed(x, y, "the result is not finite")),
            Err(reason) => Err(self.failed(x, y, &reason)),
        }
    }

    /// Transforms every coordinate of `g` in place. On error `g` may be partly
    /// transformed.
    pub fn geometry(&self, g: &mut geo::Geometry<f64>) -> Result<()> {
        if self.is_noop() {
            return Ok(());
        }
        map_geometry(g, &|c| {
            let (x, y) = self.point(c.x, c.y)?;
            Ok(geo::Coord { x, y })
        })
    }

    /// Transforms a bounding box `[xmin, ymin, xmax, ymax]`, densifying each edge
    /// to 21 points so that edges that become curves are covered.
    pub fn bbox(&self, b: [f64; 4]) -> Result<[f64; 4]> {
        let [x0, y0, x1, y1] = b;
        if b.iter().any(|v| !v.is_finite()) {
            return Err(self.failed(x0, y0, "the bounding box is not finite"));
        }
        if self.is_noop() {
            return Ok(b);
        }
        let mut out = [
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ];
        let n = BBOX_POINTS_PER_SIDE - 1;
        for i in 0..=n {
            let t = i as f64 / n as f64;
            let (x, y) = (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t);
            for (px, py) in [(x, y0), (x, y1), (x0, y), (x1, y)] {
                let (u, v) = self.point(px, py)?;
                out = [out[0].min(u), out[1].min(v), out[2].max(u), out[3].max(v)];
            }
        }
        Ok(out)
    }

    /// The source CRS, canonical `"EPSG:<code>"`.
    pub fn from_crs(&self) -> &str {
        &self.from
    }

    /// The target CRS, canonical `"EPSG:<code>"`.
    pub fn to_crs(&self) -> &str {
        &self.to
    }

    fn failed(&self, x: f64, y: f64, reason: &str) -> Error {
        Error::Crs(format!(
            "Cannot transform ({x}, {y}) from {} to {}: {reason}.",
            self.from, self.to
        ))
    }
}

/// Spherical Mercator (EPSG:3857) of a lon/lat point in degrees, as the
/// backends compute it (longitude wrapped into [-180, 180], the same errors
/// at and beyond the poles) but about 20x faster than proj4rs, which spent
/// a third of the time of drawing 50k flowlines (bench/HISTORY.md).
fn web_mercator(lon: f64, lat: f64) -> std::result::Result<(f64, f64), String> {
    use std::f64::consts::{FRAC_PI_2, PI};
    let (mut lambda, phi) = (lon.to_radians(), lat.to_radians());
    if phi.abs() > FRAC_PI_2 + 1e-12 {
        return Err("Latitude out of range".into());
    }
    if (phi.abs() - FRAC_PI_2).abs() <= 1e-10 {
        return Err("Tolerance condition not satisfied".into());
    }
    if lambda.abs() > PI + 1e-12 {
        lambda += PI;
        lambda -= 2.0 * PI * (lambda / (2.0 * PI)).floor();
        lambda -= PI;
    }
    Ok((RADIUS * lambda, web_mercator_northing(lat)))
}

/// The sphere's radius of Web Mercator (EPSG:3857), metres.
const RADIUS: f64 = 6_378_137.0;

/// The Web Mercator northing of latitude `lat` (degrees, within the
/// poles): asinh(tan(phi)) = atanh(sin(phi)), one sine and one logarithm.
fn web_mercator_northing(lat: f64) -> f64 {
    let sin = lat.to_radians().sin();
    RADIUS * 0.5 * ((1.0 + sin) / (1.0 - sin)).ln()
}

type CoordFn<'a> = dyn Fn(geo::Coord<f64>) -> Result<geo::Coord<f64>> + 'a;

/// Applies `f` to every coordinate. Collections are walked here rather than by
/// geo's `Geometry::try_map_coords_in_place`, whose generic recursion through
/// `GeometryCollection` does not terminate at monomorphization.
fn map_geometry(g: &mut geo::Geometry<f64>, f: &CoordFn) -> Result<()> {
    use geo::{Geometry as G, MapCoordsInPlace};
    match g {
        G::GeometryCollection(gc) => gc.0.iter_mut().try_for_each(|g| map_geometry(g, f)),
        G::Point(x) => x.try_map_coords_in_place(f),
        G::Line(x) => x.try_map_coords_in_place(f),
        G::LineString(x) => x.try_map_coords_in_place(f),
        G::Polygon(x) => x.try_map_coords_in_place(f),
        G::MultiPoint(x) => x.try_map_coords_in_place(f),
        G::MultiLineString(x) => x.try_map_coords_in_place(f),
        G::MultiPolygon(x) => x.try_map_coords_in_place(f),
        G::Rect(x) => x.try_map_coords_in_place(f),
        G::Triangle(x) => x.try_map_coords_in_place(f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalized() {
        assert_eq!(normalize(None).unwrap(), "EPSG:4326");
        assert_eq!(normalize(Some("epsg:5070")).unwrap(), "EPSG:5070");
        assert_eq!(normalize(Some(" EPSG : 3857 ")).unwrap(), "EPSG:3857");
        assert_eq!(normalize(Some("4269")).unwrap(), "EPSG:4269");
    }

    #[test]
    fn bad_names_are_crs_errors_naming_the_input() {
        for bad in [
            "",
            "EPSG:",
            "EPSG:43x6",
            "ESRI:102003",
            "WGS84",
            "EPSG:99999999999",
        ] {
            match normalize(Some(bad)) {
                Err(Error::Crs(m)) => assert!(m.contains(&format!("\"{bad}\"")), "{m}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn nad83_and_wgs84_are_one_crs() {
        assert!(Transformer::new("EPSG:4269", "EPSG:4326")
            .unwrap()
            .is_noop());
        assert!(Transformer::new("4326", "epsg:4326").unwrap().is_noop());
        assert!(!Transformer::new("EPSG:4326", "EPSG:3857")
            .unwrap()
            .is_noop());
    }

    #[test]
    fn web_mercator_matches_the_backend() {
        let fast = Transformer::new("EPSG:4269", "EPSG:3857").unwrap();
        let backend = backend::Backend::new(4326, 3857).unwrap();
        let mut lat = -89.9;
        while lat <= 89.9 {
            for lon in [
                -540.0, -200.0, -180.0, -89.4, 0.0, 1e-9, 33.3, 179.999, 180.0, 200.0,
            ] {
                let (x, y) = fast.point(lon, lat).unwrap();
                let (u, v) = backend.point(lon, lat).unwrap();
                assert!(
                    (x - u).abs() < 1e-6 && (y - v).abs() < 1e-6 * v.abs().max(1.0),
                    "{lon} {lat}: {x} {y} vs {u} {v}"
                );
            }
            lat += 0.7;
        }
        for (lon, lat) in [(10.0, 90.0), (10.0, -90.0), (10.0, 91.0), (0.0, -95.0)] {
            assert!(
                matches!(fast.point(lon, lat), Err(Error::Crs(_))),
                "{lon} {lat}"
            );
            assert!(backend.point(lon, lat).is_err(), "{lon} {lat}");
        }
        assert_eq!(fast.point(0.0, 0.0).unwrap(), (0.0, 0.0));
    }

    #[test]
    fn transformer_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Transformer>();
    }
}
