//! The map is a georeferenced object: its EPSG:3857 bounds (C:
//! `hydroplot_map_bounds`) and the world file + `.aux.xml` written beside its
//! PNG place it where Web Mercator by hand says, and GDAL (`gdalinfo`, when
//! installed) reads the same extent and EPSG:3857. The CLI's `--world-file`
//! is tested in `tests/it/cli.rs`.

use crate::support;

use hydroplot::ffi::hydroplot_status;
use hydroplot::ffi::map::*;
use hydroplot::render::{Map, MapSpec, TileCacheMode};
use hydroplot_mock::{self as mock, MockServer};
use std::ffi::CString;
use std::path::PathBuf;
use support::georef::*;

/// A lon/lat box on the Yahara.
const BBOX: [f64; 4] = [-89.5, 43.0, -89.3, 43.15];

fn temp_dir(name: &str) -> PathBuf {
    crate::scratch::temp_dir(&format!("georef-{name}"))
}

#[test]
fn c_bounds_and_world_file_place_the_png_where_gdal_reads_it() {
    use hydroplot::ffi::context::*;
    use hydroplot_status::{HYDROPLOT_ERR_NULL_ARGUMENT, HYDROPLOT_OK};
    let dir = temp_dir("c");
    let c = |s: &str| CString::new(s).unwrap();
    let mut ctx = std::ptr::null_mut();
    assert_eq!(hydroplot_context_new(&mut ctx), HYDROPLOT_OK);
    let mut map = std::ptr::null_mut();
    let none = c("none");
    assert_eq!(
        hydroplot_map_new(
            ctx,
            BBOX[0],
            BBOX[1],
            BBOX[2],
            BBOX[3],
            std::ptr::null(),
            300,
            200,
            none.as_ptr(),
            &mut map
        ),
        HYDROPLOT_OK
    );
    let mut bounds = [0.0; 4];
    assert_eq!(hydroplot_map_bounds(map, bounds.as_mut_ptr()), HYDROPLOT_OK);
    assert_close(bounds, extent_by_hand(BBOX, (300.0, 200.0)), 1e-3);
    // Square pixels: the same metres per pixel across and down.
    let res = (bounds[2] - bounds[0]) / 300.0;
    assert!(((bounds[3] - bounds[1]) / 200.0 - res).abs() < 1e-9);
    assert_eq!(
        hydroplot_map_bounds(std::ptr::null(), bounds.as_mut_ptr()),
        HYDROPLOT_ERR_NULL_ARGUMENT
    );
    assert_eq!(
        hydroplot_map_bounds(map, std::ptr::null_mut()),
        HYDROPLOT_ERR_NULL_ARGUMENT
    );
    assert_eq!(
        hydroplot_map_write_world_file(map, std::ptr::null()),
        HYDROPLOT_ERR_NULL_ARGUMENT
    );

    // A point drawn through the C API lands on the pixel the bounds and Web
    // Mercator by hand give it.
    let (lon, lat) = (-89.4012, 43.0731);
    let red = c("#FF0000");
    assert_eq!(
        hydroplot_map_add_point(map, lon, lat, std::ptr::null(), 15, red.as_ptr(), 1.0),
        HYDROPLOT_OK
    );
    let png = dir.join("map.png");
    let png_c = c(png.to_str().unwrap());
    assert_eq!(hydroplot_map_write_png(map, png_c.as_ptr()), HYDROPLOT_OK);
    let (x, y) = mercator(lon, lat);
    let (col, row) = ((x - bounds[0]) / res, (bounds[3] - y) / res);
    let (w, _, px) = rgba(&std::fs::read(&png).unwrap());
    let at = |c: f64, r: f64| {
        let i = (r as usize * w as usize + c as usize) * 4;
        [px[i], px[i + 1], px[i + 2]]
    };
    assert_eq!(at(col, row), [255, 0, 0], "the marker at ({col}, {row})");
    assert_ne!(at(col + 10.0, row), [255, 0, 0], "a small marker");
    assert_eq!(
        hydroplot_map_write_world_file(map, png_c.as_ptr()),
        HYDROPLOT_OK
    );
    let wf = world_file(&dir.join("map.pgw"));
    assert_eq!((wf[0], wf[3]), (res, -res), "pixel size, rows going south");
    assert_close(world_extent(wf, (300, 200)), bounds, 1e-6);
    let aux = std::fs::read_to_string(dir.join("map.png.aux.xml")).unwrap();
    assert!(aux.contains("<SRS") && aux.contains("3857"), "{aux}");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["map.pgw", "map.png", "map.png.aux.xml"],
        "no temporaries left"
    );
    if let Some((size, extent, wkt)) = gdalinfo(&png) {
        assert_eq!(size, (300, 200));
        assert_close(extent, bounds, GDAL_MM);
        assert_epsg_3857(&wkt);
    }
    hydroplot_map_free(map);
    hydroplot_context_free(ctx);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_hidpi_world_file_follows_the_pngs_real_pixels() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let spec = MapSpec {
        bbox: BBOX,
        crs: "EPSG:4326",
        size: (300, 200),
        scale: 2.0,
        basemap: "none",
        zoom: None,
    };
    let map = Map::with_spec(&ctx, &spec, &TileCacheMode::Off, &mut Vec::new()).unwrap();
    // The same extent as at scale 1, in twice the pixels each way.
    let bounds = map.bounds();
    assert_close(bounds, extent_by_hand(BBOX, (300.0, 200.0)), 1e-3);
    let dir = temp_dir("hidpi");
    let png = dir.join("map.png");
    hydroplot::output::write_atomically(&png, &map.png().unwrap()).unwrap();
    map.write_georeference(&png).unwrap();
    let wf = world_file(&dir.join("map.pgw"));
    assert!((wf[0] - (bounds[2] - bounds[0]) / 600.0).abs() < 1e-9);
    assert_close(world_extent(wf, (600, 400)), bounds, 1e-6);
    if let Some((size, extent, wkt)) = gdalinfo(&png) {
        assert_eq!(size, (600, 400));
        assert_close(extent, bounds, GDAL_MM);
        assert_epsg_3857(&wkt);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
