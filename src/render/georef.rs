//! Georeferencing a map's PNG for GIS: the world file beside it (GDAL's
//! convention: `.pgw` for `.png`, pixel centres) and `<png>.aux.xml`, the
//! GDAL side-car that names its CRS, EPSG:3857. GDAL, QGIS and ArcGIS read
//! both, so the picture opens in place.

use crate::output::write_atomically;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

use super::view::View;

/// EPSG:3857 in WKT 1, as GDAL writes it (`gdalsrsinfo -o wkt1 EPSG:3857`).
const EPSG_3857_WKT: &str = concat!(
    r#"PROJCS["WGS 84 / Pseudo-Mercator",GEOGCS["WGS 84",DATUM["WGS_1984","#,
    r#"SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],"#,
    r#"AUTHORITY["EPSG","6326"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],"#,
    r#"UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AUTHORITY["EPSG","4326"]],"#,
    r#"PROJECTION["Mercator_1SP"],PARAMETER["central_meridian",0],PARAMETER["scale_factor",1],"#,
    r#"PARAMETER["false_easting",0],PARAMETER["false_northing",0],"#,
    r#"UNIT["metre",1,AUTHORITY["EPSG","9001"]],AXIS["Easting",EAST],AXIS["Northing",NORTH],"#,
    r#"EXTENSION["PROJ4","+proj=merc +a=6378137 +b=6378137 +lat_ts=0 +lon_0=0 +x_0=0 +y_0=0 +k=1 +units=m +nadgrids=@null +wktext +no_defs"],"#,
    r#"AUTHORITY["EPSG","3857"]]"#
);

/// The six lines of the world file of a PNG drawn with `view`: the pixel
/// size in x, two rotations (0), the pixel size in y (negative: rows go
/// south), and the centre of the top-left pixel. The pixel size is that of
/// the PNG's real (device) pixels, so a HiDPI map's is smaller.
pub fn world_file(view: &View) -> String {
    let res = view.resolution();
    let [xmin, _, _, ymax] = view.extent;
    format!(
        "{res}\n0\n0\n{}\n{}\n{}\n",
        -res,
        xmin + res / 2.0,
        ymax - res / 2.0
    )
}

/// The `<png>.aux.xml` text: the image's CRS, EPSG:3857.
pub fn aux_xml() -> String {
    format!(
        "<PAMDataset>\n  <SRS dataAxisToSRSAxisMapping=\"1,2\">{}</SRS>\n</PAMDataset>\n",
        EPSG_3857_WKT.replace('"', "&quot;")
    )
}

/// The world file's path for the image at `png`, as GDAL looks for it: the
/// extension's first and last letters and a `w` (`map.png` -> `map.pgw`,
/// `MAP.PNG` -> `MAP.PGW`); `.wld` for an image without a usable extension.
/// An error when that would name the image itself (`x.www`).
pub fn world_file_path(png: &Path) -> Result<PathBuf> {
    let ext = png.extension().and_then(|e| e.to_str()).unwrap_or("");
    let (first, last) = (ext.chars().next(), ext.chars().last());
    let world_ext = match (first, last) {
        (Some(f), Some(l)) if ext.chars().count() >= 2 => {
            let w = if l.is_ascii_uppercase() { 'W' } else { 'w' };
            format!("{f}{l}{w}")
        }
        _ => "wld".to_string(),
    };
    let path = png.with_extension(world_ext);
    if path == png {
        return Err(Error::InvalidArgument(format!(
            "{}: its world file would be the image itself; name the image .png",
            png.display()
        )));
    }
    Ok(path)
}

/// The CRS side-car's path: `<png>.aux.xml`.
pub fn aux_xml_path(png: &Path) -> PathBuf {
    let mut name = png.as_os_str().to_owned();
    name.push(".aux.xml");
    PathBuf::from(name)
}

/// The two side-cars of the image at `png`: its world file and `.aux.xml`.
/// An empty path, or one naming a device or folder (`/dev/null`: no image
/// is there to place), is `Error::InvalidArgument`.
pub fn sidecar_paths(png: &Path) -> Result<[PathBuf; 2]> {
    crate::output::check_path_given(png, "PNG file")?;
    if std::fs::metadata(png).is_ok_and(|m| !m.is_file()) {
        return Err(Error::InvalidArgument(format!(
            "{} is not a regular file: no map is there to place with a world file",
            png.display()
        )));
    }
    Ok([world_file_path(png)?, aux_xml_path(png)])
}

/// Writes the world file and `.aux.xml` of a PNG drawn with `view` beside
/// `png` (which need not exist yet), each atomically (a temporary sibling
/// renamed), replacing earlier ones. Returns their paths.
pub fn write_sidecars(view: &View, png: &Path) -> Result<[PathBuf; 2]> {
    let [world, aux] = sidecar_paths(png)?;
    write_atomically(&world, world_file(view).as_bytes())?;
    write_atomically(&aux, aux_xml().as_bytes())?;
    Ok([world, aux])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A view of 100 x 50 pixels of 10 m over x 1000..2000, y 5000..5500.
    fn view(scale: f64) -> View {
        View {
            extent: [1000.0, 5000.0, 2000.0, 5500.0],
            width: (100.0 * scale) as u32,
            height: (50.0 * scale) as u32,
            scale,
        }
    }

    #[test]
    fn world_file_names_pixel_centres() {
        // Pixel 10 m: the top-left pixel's centre is 5 m in from the corner.
        assert_eq!(world_file(&view(1.0)), "10\n0\n0\n-10\n1005\n5495\n");
        // HiDPI: twice the pixels over the same extent, 5 m each.
        assert_eq!(world_file(&view(2.0)), "5\n0\n0\n-5\n1002.5\n5497.5\n");
    }

    #[test]
    fn sidecar_names_follow_gdal() {
        let p = |s: &str| world_file_path(Path::new(s)).map(|p| p.display().to_string());
        assert_eq!(p("out/map.png").unwrap(), "out/map.pgw");
        assert_eq!(p("MAP.PNG").unwrap(), "MAP.PGW");
        assert_eq!(p("map").unwrap(), "map.wld");
        assert!(p("x.www").is_err());
        assert_eq!(
            aux_xml_path(Path::new("out/map.png")),
            Path::new("out/map.png.aux.xml")
        );
    }

    #[test]
    fn aux_xml_names_epsg_3857() {
        let xml = aux_xml();
        assert!(
            xml.starts_with("<PAMDataset>")
                && xml.contains("AUTHORITY[&quot;EPSG&quot;,&quot;3857&quot;]]</SRS>")
        );
        assert!(!xml.contains('"') || xml.matches('"').count() == 2, "{xml}");
    }
}
