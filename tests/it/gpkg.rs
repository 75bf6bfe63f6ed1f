//! The GeoPackage reader and writer against the real NHDPlusV2 sample files.

use crate::support;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use hydroplot::cancel::Stop;
use hydroplot::collection::Collection;
use hydroplot::gpkg::{self, GeoPackage};
use hydroplot::network::Reach;
use hydroplot::table::Table;
use hydroplot::Error;
use support::wkb::hand_blob;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn yahara() -> GeoPackage {
    GeoPackage::open(&data("yahara_sample.gpkg")).unwrap()
}

/// The tables of the six layers, in the order the layer tests list them.
const TABLES: [&str; 6] = [
    "NHDFlowline_Network",
    "CatchmentSP",
    "Gage",
    "NHDArea",
    "NHDWaterbody",
    "NHDFlowline_NonNetwork",
];

/// The layers of [`TABLES`], in the same order.
const COLLECTIONS: [Collection; 6] = [
    Collection::FlowlineNetwork,
    Collection::Catchment,
    Collection::Gage,
    Collection::Area,
    Collection::Waterbody,
    Collection::FlowlineNonNetwork,
];

/// The independent side of the layer counts: `SELECT count(*)` per table with
/// plain SQLite, not the library's reader.
fn sql_counts(file: &str) -> Vec<usize> {
    let db = rusqlite::Connection::open_with_flags(
        data(file),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    TABLES
        .iter()
        .map(|t| {
            db.query_row(&format!("SELECT count(*) FROM \"{t}\""), [], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap() as usize
        })
        .collect()
}

/// Everything upstream of `outlet` (itself included): X drains to Y when
/// X.dnhydroseq == Y.hydroseq.
fn upstream(reaches: &[Reach], outlet: i64) -> Vec<i64> {
    let mut draining_into: HashMap<i64, Vec<&Reach>> = HashMap::new();
    for r in reaches {
        draining_into.entry(r.dnhydroseq).or_default().push(r);
    }
    let start = reaches
        .iter()
        .find(|r| r.comid == outlet)
        .expect("outlet in topology");
    let (mut out, mut stack) = (vec![], vec![start]);
    while let Some(r) = stack.pop() {
        out.push(r.comid);
        stack.extend(
            draining_into
                .get(&r.hydroseq)
                .into_iter()
                .flatten()
                .filter(|u| u.hydroseq != 0),
        );
    }
    out
}

#[test]
fn layers_and_counts_of_the_yahara_sample() {
    let g = yahara();
    let counts: Vec<usize> = COLLECTIONS
        .iter()
        .map(|&c| g.read_all(c).unwrap().len())
        .collect();
    // Every row of each table (267 flowlines, 266 catchments, 46 gages, 3
    // areas, 128 waterbodies, 49 non-network flowlines).
    assert_eq!(counts, sql_counts("yahara_sample.gpkg"));
    assert_eq!(counts, [267, 266, 46, 3, 128, 49]);
    let flowlines = g.read_all(Collection::FlowlineNetwork).unwrap();
    let f = (0..flowlines.len())
        .find(|&r| flowlines.get_i64(r, "comid") == Some(13294312))
        .unwrap();
    assert_eq!(flowlines.get_str(f, "gnis_name"), Some("Yahara River"));
    assert!(flowlines.column("fid").is_none() && flowlines.column("geom").is_none());
    assert!(matches!(
        flowlines.geometry(f),
        Some(geo::Geometry::MultiLineString(_))
    ));
    let b = g.bounds(Collection::FlowlineNetwork).unwrap().unwrap();
    assert!((b[0] - -89.585366904719).abs() < 1e-9 && (b[3] - 43.3017873994538).abs() < 1e-9);
}

#[test]
fn upstream_of_13293970_with_its_neighbours() {
    let g = yahara();
    let topology = g.read_topology().unwrap();
    assert_eq!(topology.len(), 267);
    let ids = upstream(&topology, 13293970);
    let flowlines = g.read_by_ids(Collection::FlowlineNetwork, &ids).unwrap();
    assert_eq!(flowlines.len(), 251);
    assert_eq!(
        flowlines.get_i64(0, "comid"),
        Some(13293970),
        "in the order of ids"
    );
    let catchments = g.read_by_ids(Collection::Catchment, &ids).unwrap();
    assert_eq!(catchments.len(), 250);
    let have: HashSet<i64> = (0..catchments.len())
        .filter_map(|r| catchments.get_i64(r, "featureid"))
        .collect();
    assert_eq!(
        ids.iter()
            .filter(|id| !have.contains(id))
            .collect::<Vec<_>>(),
        [&13294386]
    );
    let bbox = catchments.bbox().unwrap();
    let n = |c| g.read_bbox(c, bbox).unwrap().len();
    assert_eq!(
        [
            n(Collection::Area),
            n(Collection::Waterbody),
            n(Collection::FlowlineNonNetwork),
            n(Collection::Gage)
        ],
        [3, 117, 48, 44]
    );
}

#[test]
fn bbox_with_stream_order_2() {
    let g = yahara();
    let bbox = [-89.56684, 42.99816, -89.24681, 43.17192];
    let flowlines = g.read_bbox(Collection::FlowlineNetwork, bbox).unwrap();
    let order2 = (0..flowlines.len())
        .filter(|&r| flowlines.get_i64(r, "streamorde").unwrap_or(0) >= 2)
        .count();
    assert_eq!(order2, 76);
}

#[test]
fn gage_by_site_number() {
    let g = yahara();
    let gage = g.gage("05429500").unwrap();
    assert_eq!(gage.len(), 1);
    assert_eq!(gage.get_str(0, "source_fea"), Some("05429500"));
    assert!(gage.get_i64(0, "flcomid").is_some());
    assert!(matches!(gage.geometry(0), Some(geo::Geometry::Point(_))));
    assert!(g.gage("00000000").unwrap().is_empty());
}

/// A scratch directory of this test process, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("hydroplot-gpkg-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn join(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The upstream subset of 13293970: flowlines and catchments.
fn subset() -> (Table, Table) {
    let g = yahara();
    let ids = upstream(&g.read_topology().unwrap(), 13293970);
    (
        g.read_by_ids(Collection::FlowlineNetwork, &ids).unwrap(),
        g.read_by_ids(Collection::Catchment, &ids).unwrap(),
    )
}

#[test]
fn a_read_in_shares_is_the_read_in_one() {
    // The basin's 251 flowlines of 267 are read in one pass over the table,
    // by one to four readers at once, in chunks they claim as they go; the
    // ids backwards, the rows follow.
    let g = yahara();
    let mut ids = upstream(&g.read_topology().unwrap(), 13293970);
    ids.reverse();
    for c in [Collection::FlowlineNetwork, Collection::Catchment] {
        let one = g.read_by_ids(c, &ids).unwrap();
        for shares in 1..=4 {
            let shared = g.read_by_ids_in_shares(c, &ids, shares).unwrap();
            assert_eq!(shared.to_features(), one.to_features(), "{c:?} in {shares}");
            // The box the readers measured, chunk by chunk, is the whole's.
            assert_eq!(shared.bbox(), one.bbox(), "{c:?} in {shares}");
        }
    }
    let key = |t: &hydroplot::table::Table| t.get_i64(0, "comid");
    let shared = g
        .read_by_ids_in_shares(Collection::FlowlineNetwork, &ids, 2)
        .unwrap();
    assert_eq!(key(&shared), Some(ids[0]), "in the order of ids");
    // A few ids are read by key, as `read_by_ids` reads them.
    let few = g
        .read_by_ids_in_shares(Collection::FlowlineNetwork, &ids[..3], 2)
        .unwrap();
    assert_eq!(few.len(), 3);
}

#[test]
fn round_trip_keeps_features_and_attributes() {
    let (flowlines, catchments) = subset();
    let dir = Scratch::new("round_trip");
    let path = dir.join("out.gpkg");
    gpkg::write(
        &path,
        &[
            ("NHDFlowline_Network", &flowlines),
            ("CatchmentSP", &catchments),
        ],
        false,
        &Stop::never(),
    )
    .unwrap();
    let back = GeoPackage::open(&path).unwrap();
    let again = back.read_all(Collection::FlowlineNetwork).unwrap();
    assert_eq!(again.len(), 251);
    let (flowlines, again) = (flowlines.to_features(), again.to_features());
    for (a, b) in flowlines.iter().zip(&again) {
        assert_eq!(a.geometry, b.geometry);
        assert_eq!(a.properties, b.properties);
    }
    assert_eq!(back.read_all(Collection::Catchment).unwrap().len(), 250);
    // The written R-tree answers bbox queries like the source's.
    let bbox = [-89.56684, 42.99816, -89.24681, 43.17192];
    assert_eq!(
        back.read_bbox(Collection::FlowlineNetwork, bbox)
            .unwrap()
            .len(),
        yahara()
            .read_bbox(Collection::FlowlineNetwork, bbox)
            .unwrap()
            .to_features()
            .iter()
            .filter(|f| flowlines.contains(f))
            .count()
    );
    // Topology reads back too (hydroseq was REAL in the source, still integral).
    assert_eq!(back.read_topology().unwrap().len(), 251);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let ids: (i64, i64) = conn
        .query_row(
            "SELECT * FROM pragma_application_id, pragma_user_version",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(ids, (0x4750_4B47, 10200));
    let srs: Vec<i64> = conn
        .prepare("SELECT srs_id FROM gpkg_spatial_ref_sys ORDER BY srs_id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(srs, [-1, 0, 4269, 4326]);
    let (ty, comid_ty): (String, String) = conn
        .query_row("SELECT (SELECT type FROM pragma_table_info('NHDFlowline_Network') WHERE name = 'lengthkm'), (SELECT type FROM pragma_table_info('NHDFlowline_Network') WHERE name = 'comid')", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!((ty.as_str(), comid_ty.as_str()), ("REAL", "INTEGER"));
    let indexed: i64 = conn
        .query_row("SELECT count(*) FROM rtree_CatchmentSP_geom", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(indexed, 250);
}

#[test]
fn write_refuses_bad_paths_and_existing_files() {
    let dir = Scratch::new("refuse");
    let (flowlines, _) = subset();
    let first3 = flowlines.take(&[0, 1, 2]);
    let layers: &[(&str, &Table)] = &[("NHDFlowline_Network", &first3)];
    assert!(matches!(
        gpkg::write(&dir.join("out.sqlite"), layers, true, &Stop::never()),
        Err(Error::InvalidArgument(_))
    ));
    let path = dir.join("out.gpkg");
    std::fs::write(&path, b"keep me").unwrap();
    assert!(matches!(
        gpkg::write(&path, layers, false, &Stop::never()),
        Err(Error::Exists(_))
    ));
    assert_eq!(std::fs::read(&path).unwrap(), b"keep me");
    gpkg::write(&path, layers, true, &Stop::never()).unwrap();
    assert_eq!(
        GeoPackage::open(&path)
            .unwrap()
            .read_all(Collection::FlowlineNetwork)
            .unwrap()
            .len(),
        3
    );
    // A failure half-way (a layer name SQLite cannot take) leaves nothing behind.
    let failed = dir.join("failed.gpkg");
    assert!(gpkg::write(
        &failed,
        &[("ok", &first3), ("bad\0name", &first3)],
        true,
        &Stop::never()
    )
    .is_err());
    let mut left: Vec<String> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["out.gpkg"]);
}

#[test]
fn writing_over_the_open_source_keeps_the_source_readable() {
    let dir = Scratch::new("same_path");
    let path = dir.join("source.gpkg");
    std::fs::copy(data("yahara_sample.gpkg"), &path).unwrap();
    let source = GeoPackage::open(&path).unwrap();
    let flowlines = source
        .read_by_ids(Collection::FlowlineNetwork, &[13293970, 13294312])
        .unwrap();
    gpkg::write(
        &path,
        &[("NHDFlowline_Network", &flowlines)],
        true,
        &Stop::never(),
    )
    .unwrap();
    // The open handle still reads the old file; the path now holds the new one.
    assert_eq!(source.read_all(Collection::Catchment).unwrap().len(), 266);
    assert_eq!(
        GeoPackage::open(&path)
            .unwrap()
            .read_all(Collection::FlowlineNetwork)
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn broken_files_give_clear_errors() {
    let dir = Scratch::new("broken");
    assert!(matches!(
        GeoPackage::open(&dir.join("missing.gpkg")),
        Err(Error::Io(_))
    ));
    let text = dir.join("text.gpkg");
    std::fs::write(
        &text,
        b"this is not a database, just some text ".repeat(100),
    )
    .unwrap();
    let e = GeoPackage::open(&text).unwrap_err();
    assert!(
        matches!(&e, Error::Gpkg(m) if m.contains("is not a GeoPackage")),
        "{e}"
    );
    // A truncated copy: the header survives, the pages do not.
    let bytes = std::fs::read(data("yahara_sample.gpkg")).unwrap();
    let truncated = dir.join("truncated.gpkg");
    std::fs::write(&truncated, &bytes[..bytes.len() / 3]).unwrap();
    let result = GeoPackage::open(&truncated).and_then(|g| g.read_all(Collection::FlowlineNetwork));
    assert!(matches!(&result, Err(Error::Gpkg(_))), "{result:?}");
    // Plain SQLite without GeoPackage tables.
    let plain = dir.join("plain.gpkg");
    rusqlite::Connection::open(&plain)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let e = GeoPackage::open(&plain).unwrap_err();
    assert!(
        matches!(&e, Error::Gpkg(m) if m.contains("no gpkg_contents")),
        "{e}"
    );
    // A GeoPackage without the flowline layer.
    let no_flowlines = dir.join("no_flowlines.gpkg");
    gpkg::write(
        &no_flowlines,
        &[("CatchmentSP", &Table::default())],
        true,
        &Stop::never(),
    )
    .unwrap();
    let g = GeoPackage::open(&no_flowlines).unwrap();
    assert!(!g.has_layer(Collection::FlowlineNetwork) && g.has_layer(Collection::Catchment));
    let e = g.read_topology().unwrap_err();
    assert!(
        matches!(&e, Error::Gpkg(m) if m.contains("no NHDFlowline_Network layer")),
        "{e}"
    );
    // A geometry blob with a bad header.
    let bad_blob = with_a_bad_blob(&dir, "Gage", 1);
    let e = GeoPackage::open(&bad_blob)
        .unwrap()
        .read_all(Collection::Gage)
        .unwrap_err();
    assert!(
        matches!(&e, Error::Gpkg(m) if m.contains("layer Gage, feature 1") && m.contains("envelope kind 7")),
        "{e}"
    );
    // A bad blob among flowlines read in shares: its error, whichever
    // reader meets it.
    let g = GeoPackage::open(&with_a_bad_blob(&dir, "NHDFlowline_Network", 200)).unwrap();
    let ids: Vec<i64> = g.read_topology().unwrap().iter().map(|r| r.comid).collect();
    for shares in 1..=4 {
        let e = (g.read_by_ids_in_shares(Collection::FlowlineNetwork, &ids, shares)).unwrap_err();
        assert!(
            matches!(&e, Error::Gpkg(m) if m.contains("layer NHDFlowline_Network, feature 200")),
            "{shares} shares: {e}"
        );
    }
}

/// A copy of the Yahara sample in `dir` whose feature `fid` of `layer`
/// has a geometry blob with a bad header (envelope kind 7), written past
/// the layer's R-tree triggers (GeoPackage functions SQLite lacks).
fn with_a_bad_blob(dir: &Scratch, layer: &str, fid: i64) -> PathBuf {
    let copy = dir.join(&format!("bad_{layer}.gpkg"));
    std::fs::copy(data("yahara_sample.gpkg"), &copy).unwrap();
    let mut sql: String = (1..=4)
        .map(|i| format!("DROP TRIGGER rtree_{layer}_geom_update{i}; "))
        .collect();
    sql.push_str(&format!(
        "UPDATE {layer} SET geom = X'4750000FE8100000' WHERE fid = {fid}"
    ));
    rusqlite::Connection::open(&copy)
        .unwrap()
        .execute_batch(&sql)
        .unwrap();
    copy
}

/// The rule of support::tool, which every test driving an outside tool
/// follows: a missing tool skips locally and fails under CI=true.
#[test]
fn a_missing_tool_skips_locally_and_fails_in_ci() {
    use support::tool::required_under;
    assert_eq!(required_under(None, Some(1), "a tool"), Some(1));
    assert_eq!(required_under(Some("true"), Some(1), "a tool"), Some(1));
    assert_eq!(required_under(None, None::<()>, "a tool"), None);
    assert_eq!(required_under(Some("false"), None::<()>, "a tool"), None);
    let failed = std::panic::catch_unwind(|| {
        required_under(Some("true"), None::<()>, "frobnicate (Debian frob)")
    });
    let message = *failed.unwrap_err().downcast::<String>().unwrap();
    assert!(
        message.starts_with("frobnicate (Debian frob) is missing"),
        "{message}"
    );
}

#[test]
fn ogrinfo_reads_written_files() {
    if support::tool::required(
        support::tool::runs("ogrinfo"),
        "ogrinfo (GDAL, Debian gdal-bin)",
    )
    .is_none()
    {
        return;
    }
    let (flowlines, catchments) = subset();
    let dir = Scratch::new("ogrinfo");
    let path = dir.join("plot.gpkg");
    gpkg::write(
        &path,
        &[
            ("flowline", &flowlines),
            ("catchment", &catchments),
            ("outlets", &Table::default()),
        ],
        true,
        &Stop::never(),
    )
    .unwrap();
    let out = std::process::Command::new("ogrinfo")
        .args(["-ro", "-so", "-al"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).trim().is_empty(),
        "ogrinfo warned: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let layers: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("Layer name: "))
        .collect();
    assert_eq!(layers, ["flowline", "catchment", "outlets"]);
    let counts: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("Feature Count: "))
        .collect();
    assert_eq!(counts, ["251", "250", "0"]);
    assert!(
        text.contains("ID[\"EPSG\",4269]") || text.contains("AUTHORITY[\"EPSG\",\"4269\"]"),
        "{text}"
    );
}

/// GDAL's GeoPackage validator (`validate_gpkg.py`, Debian python3-gdal's
/// `osgeo_utils.samples`): a Python that imports it, the system's first.
fn validate_gpkg() -> Option<std::process::Command> {
    ["/usr/bin/python3", "python3"]
        .into_iter()
        .find_map(|python| {
            let imports = std::process::Command::new(python)
                .args(["-c", "import osgeo_utils.samples.validate_gpkg"])
                .output()
                .is_ok_and(|out| out.status.success());
            imports.then(|| {
                let mut validate = std::process::Command::new(python);
                validate.args(["-m", "osgeo_utils.samples.validate_gpkg"]);
                validate
            })
        })
}

#[test]
fn validate_gpkg_passes_a_plots_geopackage() {
    let Some(mut validate) = support::tool::required(
        validate_gpkg(),
        "validate_gpkg.py (GDAL's samples, Debian python3-gdal)",
    ) else {
        return;
    };
    let dir = Scratch::new("validate");
    let path = dir.join("plot.gpkg");
    let req = hydroplot::plot::PlotRequest {
        outlets: vec![hydroplot::plot::Outlet::Comid(13293970)],
        hydro_data: Some(support::sample()),
        actually_plot: false,
        gpkg: Some(path.clone()),
        ..Default::default()
    };
    let data = hydroplot::plot::plot_hydro(&support::offline(), &req, None)
        .unwrap()
        .data;
    support::assert_yahara_counts(&data);
    let out = validate.arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "validate_gpkg.py: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Rewrites every geometry of `table` (written by `gpkg::write`, fids 1..)
/// in Conus Albers under a custom srs id whose WKT names EPSG:5070.
fn reproject_to_albers(path: &Path, table: &str, features: &Table) {
    let to_albers = hydroplot::crs::Transformer::new("EPSG:4269", "EPSG:5070").unwrap();
    let mut conn = rusqlite::Connection::open(path).unwrap();
    let conn = conn.transaction().unwrap();
    for t in ["update1", "update2", "update3", "update4"] {
        conn.execute_batch(&format!("DROP TRIGGER rtree_{table}_geom_{t}"))
            .unwrap();
    }
    conn.execute_batch(
        r#"INSERT INTO gpkg_spatial_ref_sys VALUES ('Albers', 100001, 'NONE', 100001,
             'PROJCS["NAD83 / Conus Albers",GEOGCS["NAD83",AUTHORITY["EPSG","4269"]],PROJECTION["Albers_Conic_Equal_Area"],AUTHORITY["EPSG","5070"]]', NULL);
           UPDATE gpkg_geometry_columns SET srs_id = 100001;
           UPDATE gpkg_contents SET srs_id = 100001, min_x = NULL, min_y = NULL, max_x = NULL, max_y = NULL;"#,
    )
    .unwrap();
    for i in 0..features.len() {
        let mut g = features.geometry(i).unwrap();
        to_albers.geometry(&mut g).unwrap();
        let b = geo::BoundingRect::bounding_rect(&g).unwrap();
        let fid = i as i64 + 1;
        conn.execute(
            &format!("UPDATE {table} SET geom = ?1 WHERE fid = ?2"),
            rusqlite::params![gpkg::blob::write(&g, 100001), fid],
        )
        .unwrap();
        conn.execute(
            &format!("UPDATE rtree_{table}_geom SET minx = ?1, maxx = ?2, miny = ?3, maxy = ?4 WHERE id = ?5"),
            rusqlite::params![b.min().x, b.max().x, b.min().y, b.max().y, fid],
        )
        .unwrap();
    }
    conn.commit().unwrap();
}

/// The features of `table` whose envelope meets `bbox`, by the file's own
/// R*Tree, in plain SQL.
fn rtree_hits(db: &rusqlite::Connection, table: &str, bbox: [f64; 4]) -> usize {
    db.query_row(
        &format!(
            "SELECT count(*) FROM rtree_{table}_geom
             WHERE maxx >= ?1 AND minx <= ?3 AND maxy >= ?2 AND miny <= ?4"
        ),
        bbox,
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn projected_files_read_as_nad83_with_and_without_rtree() {
    let dir = Scratch::new("projected");
    let path = dir.join("albers.gpkg");
    let source = yahara();
    let catchments = source.read_all(Collection::Catchment).unwrap();
    gpkg::write(&path, &[("CatchmentSP", &catchments)], true, &Stop::never()).unwrap();
    reproject_to_albers(&path, "CatchmentSP", &catchments);
    let bbox = [-89.56684, 42.99816, -89.24681, 43.17192];
    let expected = source.read_bbox(Collection::Catchment, bbox).unwrap();
    // The catchments whose envelope meets the box, by the file's own R*Tree.
    let sample = rusqlite::Connection::open(data("yahara_sample.gpkg")).unwrap();
    assert_eq!(expected.len(), rtree_hits(&sample, "CatchmentSP", bbox));
    assert_eq!(expected.len(), 166);
    let check = |g: &GeoPackage| {
        let got = g.read_bbox(Collection::Catchment, bbox).unwrap();
        assert_eq!(got.len(), expected.len());
        let rows = |t: &Table| t.geometries().bbox(0).unwrap();
        let (a, b) = (rows(&got), rows(&expected));
        assert!(
            a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-7),
            "{a:?} vs {b:?}"
        );
        assert_eq!(
            got.to_features()[0].properties,
            expected.to_features()[0].properties
        );
    };
    let projected = GeoPackage::open(&path).unwrap();
    check(&projected);
    let bounds = projected.bounds(Collection::Catchment).unwrap().unwrap();
    let truth = source.bounds(Collection::Catchment).unwrap().unwrap();
    assert!(
        bounds[0] <= truth[0]
            && bounds[1] <= truth[1]
            && bounds[2] >= truth[2]
            && bounds[3] >= truth[3]
    );
    assert!(
        bounds.iter().zip(truth).all(|(a, b)| (a - b).abs() < 0.05),
        "{bounds:?}"
    );
    drop(projected);
    // Without the spatial index: a scan that skips blobs by their envelopes.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("DROP TRIGGER rtree_CatchmentSP_geom_insert; DROP TRIGGER rtree_CatchmentSP_geom_delete; DROP TABLE rtree_CatchmentSP_geom; DELETE FROM gpkg_extensions")
        .unwrap();
    check(&GeoPackage::open(&path).unwrap());
}

#[test]
fn new_hope_sample_layers() {
    let g = GeoPackage::open(&data("new_hope.gpkg")).unwrap();
    let counts: Vec<usize> = COLLECTIONS
        .iter()
        .map(|&c| g.read_all(c).unwrap().len())
        .collect();
    assert_eq!(counts, sql_counts("new_hope.gpkg"));
    assert_eq!(counts, [746, 695, 16, 13, 99, 10]);
    assert_eq!(g.read_topology().unwrap().len(), 746);
}

/// Every layer of both samples read whole, against the rows read with plain
/// SQLite (`SELECT *`) and blobs decoded by hand: one column per table
/// column but the key and the geometry (lower-case, in name order), each
/// value as SQLite holds it, the fid as the id, the geometry's type and
/// coordinates (Z and M dropped).
#[test]
fn layers_read_as_tables_match_plain_sqlite_rows() {
    use hydroplot::table::column::Scalar;
    for file in ["yahara_sample.gpkg", "new_hope.gpkg"] {
        let g = GeoPackage::open(&data(file)).unwrap();
        let db = rusqlite::Connection::open_with_flags(
            data(file),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        for (table_name, c) in TABLES.iter().zip(COLLECTIONS) {
            let t = g.read_all(c).unwrap();
            let at = format!("{file} {table_name}");
            let mut stmt = db
                .prepare(&format!("SELECT * FROM \"{table_name}\" ORDER BY fid"))
                .unwrap();
            let names: Vec<String> = stmt.column_names().iter().map(|n| n.to_string()).collect();
            let mut properties: Vec<(String, usize)> = (names.iter().enumerate())
                .filter(|(_, n)| *n != "fid" && *n != "geom")
                .map(|(i, n)| (n.to_ascii_lowercase(), i))
                .collect();
            properties.sort();
            let schema: Vec<&str> = t
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().as_str())
                .collect();
            let want: Vec<&str> = properties.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(schema, want, "{at}");
            let geom = names.iter().position(|n| n == "geom").unwrap();
            let mut rows = stmt.query([]).unwrap();
            let mut row = 0;
            while let Some(r) = rows.next().unwrap() {
                assert_eq!(t.id(row), Some(r.get::<_, i64>(0).unwrap().into()), "{at}");
                for (col, (name, i)) in properties.iter().enumerate() {
                    let got = t.column_at(col).unwrap().scalar(row);
                    use rusqlite::types::ValueRef;
                    let ok = match r.get_ref(*i).unwrap() {
                        ValueRef::Null => got == Scalar::Null,
                        ValueRef::Integer(v) => {
                            got == Scalar::Int(v) || got == Scalar::Float(v as f64)
                        }
                        ValueRef::Real(v) => got == Scalar::Float(v),
                        ValueRef::Text(s) => got == Scalar::Str(std::str::from_utf8(s).unwrap()),
                        ValueRef::Blob(_) => got == Scalar::Null,
                    };
                    assert!(ok, "{at} row {row} {name}: {got:?}");
                }
                let (kind, xy) = hand_blob(r.get_ref(geom).unwrap().as_blob().unwrap());
                let geometries = t.geometries();
                assert_eq!(u32::from(geometries.kinds[row]), kind, "{at} row {row}");
                let got = geometries.row_xy(row);
                assert_eq!(got.len(), xy.len(), "{at} row {row}");
                assert!(
                    got.iter().zip(&xy).all(|(a, b)| (a - b).abs() <= 1e-9),
                    "{at} row {row}"
                );
                row += 1;
            }
            assert_eq!(row, t.len(), "{at}");
        }
    }
}

/// Values of every column kind as a written file holds them: integers and
/// booleans as INTEGER, floats as REAL, strings as TEXT; a column holding a
/// nested value as its JSON text, with its plain strings unquoted; nulls as
/// NULL; a feature without geometry as a NULL blob.
#[test]
fn written_values_by_column_kind() {
    use hydroplot::feature::Feature;
    use serde_json::json;
    let feature = |p: serde_json::Value, geometry| Feature {
        id: None,
        geometry,
        properties: p.as_object().unwrap().clone(),
    };
    let point = Some(geo::Geometry::Point(geo::point!(x: -89.4, y: 43.1)));
    let table = Table::from_features(&[
        feature(
            json!({"n": 7, "x": 1.5, "b": true, "s": "a", "j": "plain"}),
            point,
        ),
        feature(
            json!({"n": null, "x": 2, "b": false, "s": null, "j": {"k": [1, 2]}}),
            None,
        ),
    ])
    .unwrap();
    let dir = Scratch::new("values");
    let path = dir.join("values.gpkg");
    gpkg::write(&path, &[("t", &table)], false, &Stop::never()).unwrap();
    let db = rusqlite::Connection::open(&path).unwrap();
    let rows: Vec<(String, String, String, String, String, String)> = db
        .prepare("SELECT typeof(n), typeof(x), b, typeof(s), j, typeof(geom) FROM t ORDER BY fid")
        .unwrap()
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get::<_, i64>(2)?.to_string(),
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let row = |a: &str, b: &str, c: &str, d: &str, e: &str, f: &str| {
        (a.into(), b.into(), c.into(), d.into(), e.into(), f.into())
    };
    assert_eq!(
        rows,
        [
            row("integer", "real", "1", "text", "plain", "blob"),
            row("null", "real", "0", "null", r#"{"k":[1,2]}"#, "null"),
        ]
    );
}

/// Most of a layer is read in one pass over the table (the key tested in the
/// reader), a few ids by lookups on the key: both give the same rows, in
/// the order of the ids asked for, every column and coordinate alike.
#[test]
fn a_pass_over_the_table_and_lookups_by_key_read_the_same_rows() {
    let g = yahara();
    let ids = upstream(&g.read_topology().unwrap(), 13293970);
    for c in [Collection::FlowlineNetwork, Collection::Catchment] {
        let whole = g.read_by_ids(c, &ids).unwrap(); // 251 of 267 rows: one pass
        let key = if c == Collection::Catchment {
            "featureid"
        } else {
            "comid"
        };
        let mut row = 0;
        for id in &ids {
            let one = g.read_by_ids(c, &[*id]).unwrap(); // 1 of 267: a lookup
            if one.is_empty() {
                continue;
            }
            assert_eq!(
                whole.get_i64(row, key),
                Some(*id),
                "{c:?}: in the order of ids"
            );
            assert_eq!(whole.geometries().row_xy(row), one.geometries().row_xy(0));
            for i in 0..one.schema().fields().len() {
                let name = one.schema().field(i).name();
                let column = whole.column(name).unwrap();
                assert_eq!(
                    column.value(row),
                    one.column(name).unwrap().value(0),
                    "{name}"
                );
            }
            row += 1;
        }
        assert_eq!(row, whole.len());
    }
}

#[test]
fn shares_of_a_layer_read_on_their_own_connections_hold_every_row_once_in_fid_order() {
    let g = yahara();
    let bbox = g.bounds(Collection::Waterbody).unwrap().unwrap();
    let fids = |t: &Table| -> Vec<i64> {
        (0..t.len())
            .map(|r| t.id(r).and_then(|v| v.as_i64()).unwrap())
            .collect()
    };
    let whole_table = g.read_bbox(Collection::Waterbody, bbox).unwrap();
    let whole = fids(&whole_table);
    let whole_geometries: Vec<_> = (0..whole_table.len())
        .map(|r| whole_table.geometry(r))
        .collect();
    // The independent count: plain SQL over the rows with a geometry.
    let db = rusqlite::Connection::open_with_flags(
        data("yahara_sample.gpkg"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let with_geometry: i64 = db
        .query_row(
            "SELECT count(*) FROM NHDWaterbody WHERE geom IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(whole.len() as i64, with_geometry);
    assert!(whole.windows(2).all(|w| w[0] < w[1]));
    for of in [1, 2, 3, 7] {
        let (mut joined, mut geometries) = (Vec::new(), Vec::new());
        for index in 0..of {
            let own = g.reopen().unwrap();
            let share = gpkg::Share { index, of };
            // Each batch's buffers handed back, refilled by the next batch.
            own.for_each_in_bbox(Collection::Waterbody, bbox, share, 10, &mut |t| {
                joined.extend(fids(&t));
                geometries.extend((0..t.len()).map(|r| t.geometry(r)));
                Ok(Some(t.into_geometries().recycle()))
            })
            .unwrap();
        }
        assert_eq!(joined, whole, "{of} shares");
        assert!(geometries == whole_geometries, "{of} shares' geometries");
    }
}

#[test]
fn boxes_small_and_large_read_the_rows_a_file_without_its_index_reads() {
    // Boxes from a corner of the waterbodies' extent to all of it: the
    // small ones meet under an eighth of the rows (read through the R*Tree),
    // the large ones more (one pass over the table). A copy without the
    // R*Tree always takes the pass, testing each blob.
    let dir = Scratch::new("boxes");
    let path = dir.join("no_rtree.gpkg");
    std::fs::copy(data("yahara_sample.gpkg"), &path).unwrap();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP TABLE rtree_NHDWaterbody_geom; \
             DELETE FROM gpkg_extensions WHERE table_name = 'NHDWaterbody'",
        )
        .unwrap();
    let (indexed, plain) = (yahara(), GeoPackage::open(&path).unwrap());
    let db = rusqlite::Connection::open_with_flags(
        data("yahara_sample.gpkg"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let rows: usize = db
        .query_row("SELECT max(fid) FROM NHDWaterbody", [], |r| r.get(0))
        .unwrap();
    let [x0, y0, x1, y1] = indexed.bounds(Collection::Waterbody).unwrap().unwrap();
    let fids = |t: &Table| -> Vec<i64> {
        (0..t.len())
            .map(|r| t.id(r).and_then(|v| v.as_i64()).unwrap())
            .collect()
    };
    let (mut through_index, mut by_pass) = (0, 0);
    for part in [0.02, 0.1, 0.3, 0.6, 1.0] {
        let bbox = [x0, y0, x0 + (x1 - x0) * part, y0 + (y1 - y0) * part];
        if rtree_hits(&db, "NHDWaterbody", bbox) * 8 < rows {
            through_index += 1;
        } else {
            by_pass += 1;
        }
        let a = indexed.read_bbox(Collection::Waterbody, bbox).unwrap();
        let b = plain.read_bbox(Collection::Waterbody, bbox).unwrap();
        assert_eq!(fids(&a), fids(&b), "box {part} of the extent");
        assert!(
            (0..a.len()).all(|r| a.geometry(r) == b.geometry(r)),
            "box {part}: geometries"
        );
    }
    assert!(
        through_index > 0 && by_pass > 0,
        "{through_index} / {by_pass}"
    );
}

#[test]
fn nad83_in_esri_wkt_reads_as_nad83() {
    // ArcGIS writes NAD83 as organization ESRI with its own WKT spelling
    // (`D_North_American_1983` on `GRS_1980`); gdalsrsinfo reads it as
    // EPSG:4269, and so does the reader: the same rows, the same vertices.
    let dir = Scratch::new("esri-wkt");
    let path = dir.join("esri.gpkg");
    std::fs::copy(data("yahara_sample.gpkg"), &path).unwrap();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            r#"INSERT INTO gpkg_spatial_ref_sys VALUES ('GCS_North_American_1983', 104269, 'ESRI', 4269,
                 'GEOGCS["GCS_North_American_1983",DATUM["D_North_American_1983",SPHEROID["GRS_1980",6378137.0,298.257222101]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]', NULL);
               UPDATE gpkg_geometry_columns SET srs_id = 104269;
               UPDATE gpkg_contents SET srs_id = 104269;"#,
        )
        .unwrap();
    let esri = GeoPackage::open(&path).unwrap();
    let got = esri.read_all(Collection::FlowlineNetwork).unwrap();
    let expected = yahara().read_all(Collection::FlowlineNetwork).unwrap();
    assert_eq!(got.len(), expected.len());
    assert_eq!(got.geometries().row_xy(0), expected.geometries().row_xy(0));
}
