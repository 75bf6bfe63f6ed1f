//! CRS transformations against known values. The same file passes with the
//! default backend (proj4rs) and with `--features proj` (PROJ).

use hydroplot::crs::{normalize, Transformer};
use hydroplot::Error;

/// Web Mercator on the WGS 84 sphere radius, the analytic formula.
fn web_mercator(lon: f64, lat: f64) -> (f64, f64) {
    const R: f64 = 6_378_137.0;
    let x = R * lon.to_radians();
    let y = R
        * (std::f64::consts::FRAC_PI_4 + lat.to_radians() / 2.0)
            .tan()
            .ln();
    (x, y)
}

fn close(a: (f64, f64), b: (f64, f64), tol: f64) -> bool {
    (a.0 - b.0).abs() <= tol && (a.1 - b.1).abs() <= tol
}

#[test]
fn wgs84_to_web_mercator_matches_the_formula_to_a_millimetre() {
    let t = Transformer::new("EPSG:4326", "EPSG:3857").unwrap();
    let got = t.point(-89.4, 43.07).unwrap();
    let want = web_mercator(-89.4, 43.07);
    assert!((want.0 - -9_951_962.477).abs() < 1.0, "{want:?}");
    assert!((want.1 - 5_322_632.637).abs() < 1.0, "{want:?}");
    assert!(close(got, want, 1e-3), "{got:?} vs {want:?}");
    // NAD83 input is the same CRS at plotting accuracy.
    let nad = Transformer::new("EPSG:4269", "EPSG:3857").unwrap();
    assert!(close(nad.point(-89.4, 43.07).unwrap(), want, 1e-3));
}

#[test]
fn web_mercator_round_trip() {
    let there = Transformer::new("EPSG:3857", "EPSG:4326").unwrap();
    let back = Transformer::new("EPSG:4326", "EPSG:3857").unwrap();
    for (lon, lat) in [(-89.4, 43.07), (0.0, 0.0), (179.9, -84.0), (-120.5, 60.25)] {
        let (x, y) = back.point(lon, lat).unwrap();
        let (lon2, lat2) = there.point(x, y).unwrap();
        assert!(
            close((lon2, lat2), (lon, lat), 1e-9),
            "{lon2},{lat2} vs {lon},{lat}"
        );
    }
}

#[test]
fn conus_albers_origin_and_round_trip() {
    let to = Transformer::new("EPSG:4269", "EPSG:5070").unwrap();
    let from = Transformer::new("EPSG:5070", "EPSG:4269").unwrap();
    // The projection origin (lat_0 = 23, lon_0 = -96) maps to (0, 0).
    assert!(close(to.point(-96.0, 23.0).unwrap(), (0.0, 0.0), 1e-6));
    // A point on the central meridian has x = 0 and a northing that grows.
    let (x, y) = to.point(-96.0, 40.0).unwrap();
    assert!(
        x.abs() < 1e-6 && (1_800_000.0..2_100_000.0).contains(&y),
        "{x},{y}"
    );
    let (x, y) = to.point(-89.4, 43.07).unwrap();
    assert!((450_000.0..650_000.0).contains(&x) && (2_200_000.0..2_400_000.0).contains(&y));
    let (lon, lat) = from.point(x, y).unwrap();
    assert!(close((lon, lat), (-89.4, 43.07), 1e-7), "{lon},{lat}");
}

#[test]
fn utm_zone_16_known_value_and_round_trip() {
    let to = Transformer::new("EPSG:4326", "EPSG:32616").unwrap();
    let from = Transformer::new("EPSG:32616", "EPSG:4326").unwrap();
    // Central meridian -87 on the equator: false easting, zero northing.
    assert!(close(to.point(-87.0, 0.0).unwrap(), (500_000.0, 0.0), 1e-6));
    // On the central meridian the northing is k0 times the meridian arc
    // (WGS 84 meridian arc to 45 N is 4 984 944.378 m).
    let (x, y) = to.point(-87.0, 45.0).unwrap();
    assert!((x - 500_000.0).abs() < 1e-6);
    assert!((y - 0.9996 * 4_984_944.378).abs() < 0.01, "{y}");
    let (x, y) = to.point(-89.4, 43.07).unwrap();
    let back = from.point(x, y).unwrap();
    assert!(close(back, (-89.4, 43.07), 1e-9), "{back:?}");
}

#[test]
fn bbox_is_densified() {
    let t = Transformer::new("EPSG:4326", "EPSG:5070").unwrap();
    let b = t.bbox([-100.0, 40.0, -92.0, 45.0]).unwrap();
    // Parallels are arcs around the cone's apex in the north: the bottom edge's
    // midpoint (-96, 40) lies below both bottom corners, so a corner-only box
    // would miss it.
    let (_, bottom_mid) = t.point(-96.0, 40.0).unwrap();
    let (_, bottom_corner) = t.point(-100.0, 40.0).unwrap();
    assert!(
        bottom_mid < bottom_corner - 1_000.0,
        "{bottom_mid} {bottom_corner}"
    );
    assert!((b[1] - bottom_mid).abs() < 1e-6, "{b:?} {bottom_mid}");
    assert!(b[0] < b[2] && b[1] < b[3]);
    let noop = Transformer::new("EPSG:4269", "EPSG:4326").unwrap();
    assert_eq!(
        noop.bbox([1.0, 2.0, 3.0, 4.0]).unwrap(),
        [1.0, 2.0, 3.0, 4.0]
    );
}

#[test]
fn geometry_is_transformed_in_place() {
    let t = Transformer::new("EPSG:4326", "EPSG:3857").unwrap();
    let mut g: geo::Geometry<f64> =
        geo::Geometry::GeometryCollection(geo::GeometryCollection(vec![
            geo::Point::new(-89.4, 43.07).into(),
            geo::LineString::from(vec![(0.0, 0.0), (1.0, 1.0)]).into(),
        ]));
    t.geometry(&mut g).unwrap();
    let geo::Geometry::GeometryCollection(gc) = g else {
        panic!()
    };
    let geo::Geometry::Point(p) = gc.0[0] else {
        panic!()
    };
    assert!(close((p.x(), p.y()), web_mercator(-89.4, 43.07), 1e-3));
    let geo::Geometry::LineString(ls) = &gc.0[1] else {
        panic!()
    };
    assert!(close((ls.0[1].x, ls.0[1].y), web_mercator(1.0, 1.0), 1e-3));
}

#[test]
fn non_finite_and_untransformable_points_are_crs_errors() {
    let t = Transformer::new("EPSG:4326", "EPSG:3857").unwrap();
    assert!(matches!(t.point(f64::NAN, 43.0), Err(Error::Crs(_))));
    assert!(matches!(t.point(-89.0, f64::INFINITY), Err(Error::Crs(_))));
    // Beyond the pole (at the pole itself PROJ answers a huge finite northing).
    assert!(matches!(t.point(0.0, 91.0), Err(Error::Crs(_))));
    let noop = Transformer::new("EPSG:4326", "EPSG:4326").unwrap();
    assert!(matches!(noop.point(f64::NAN, 0.0), Err(Error::Crs(_))));
}

#[test]
fn unknown_codes_are_crs_errors_naming_them() {
    for name in ["EPSG:1", "EPSG:999999", "nonsense"] {
        match normalize(Some(name)) {
            Err(Error::Crs(m)) => assert!(m.contains(name.trim_start_matches("x")), "{m}"),
            other => panic!("{name}: {other:?}"),
        }
        assert!(matches!(
            Transformer::new(name, "EPSG:4326"),
            Err(Error::Crs(_))
        ));
    }
    assert_eq!(normalize(None).unwrap(), "EPSG:4326");
}
