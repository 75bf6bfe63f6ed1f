//! Generates a large, realistic NHDPlusV2 GeoPackage for the benchmarks by
//! replicating the two real samples in `tests/data` (New Hope and Yahara) on a
//! grid, with shifted coordinates and renumbered ids, joined into one network.
//!
//! Run by `bench_make_network --cols C --rows R --out FILE.gpkg [--topology-index] [--seamless]`
//! (`USAGE`), and by its tests (`make_network/tests.rs`) on a small grid.
//!
//! A *unit* is one copy of New Hope (746 flowlines) plus one copy of Yahara
//! (267) whose outlet drains into New Hope's outlet: 1,013 flowlines with their
//! catchments, waterbodies, NHDArea and non-network flowlines, every column of
//! the real files. Unit (c, r) drains into (c, r-1); unit (c, 0) into (c-1, 0);
//! unit (0, 0) is the terminal. So the basin of unit (C-1, R-1) is 1 unit
//! (1,013 flowlines), of (C-1, R-10) 10 units (10,130) and of (0, 0) all.
//! Polygons are written with counter-clockwise exteriors (the samples differ).
//! Copy j (New Hope of unit k is j = 2k, Yahara j = 2k+1) adds (j+1) * 10^9 to
//! every comid, featureid, hydroseq-like and node id, so ids never collide.
//! A unit's New Hope drains into the headwater of the main stem of the unit
//! downstream, and the main stems of the units along row 0 and the last
//! column (the path of largest arbolate sum) share the terminal's
//! `levelpathi`: the grid has one main stem from end to end, as a real
//! basin has.
//!
//! The file is written in one streaming pass with rusqlite (GeoPackage 1.2
//! tables as the crate's writer makes them, SRS 4269, a filled R-tree per
//! layer, an index on COMID / FEATUREID) and a JSON sidecar `FILE.json` names
//! the outlet comid of each benchmark basin. `--topology-index` makes the
//! flowline COMID index cover (COMID, Hydroseq, DnHydroseq, StreamOrde), so
//! that reading the topology scans the index instead of the whole table.
//!
//! By default the copies overlap a little at their seams, so that every basin
//! is one connected area, and their outlines weave around each other.
//! `--seamless` gives the grid what a real basin has, catchments that tile
//! the land: each copy gets a rectangle of its own, and the part of it its
//! catchments leave uncovered is added to its outlet's catchment, with the
//! catchments' own outline vertices (`Dissolver::rings`), so the edges
//! cancel. The basin of the grid is then one rectangle.

use geo::{LineString, MultiPolygon, Polygon};
use hydroplot::feature::Feature;
use hydroplot::gpkg::blob;
use hydroplot::table::dissolve::Dissolver;
use hydroplot::table::Table;
use rusqlite::types::Value;
use rusqlite::{params_from_iter, Connection};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The samples, in copy order within a unit.
const SAMPLES: [&str; 2] = ["tests/data/new_hope.gpkg", "tests/data/yahara_sample.gpkg"];
/// The layers copied (Yahara's schema, a superset of New Hope's, is used).
const LAYERS: [&str; 5] = [
    "NHDFlowline_Network",
    "CatchmentSP",
    "NHDWaterbody",
    "NHDArea",
    "NHDFlowline_NonNetwork",
];
/// Columns holding ids that are renumbered per copy (0 stays 0).
const ID_COLUMNS: [&str; 13] = [
    "comid",
    "featureid",
    "wbareacomi",
    "hydroseq",
    "dnhydroseq",
    "uphydroseq",
    "dnminorhyd",
    "levelpathi",
    "terminalpa",
    "uplevelpat",
    "dnlevelpat",
    "fromnode",
    "tonode",
];
/// Grid spacing of units, degrees. The copies overlap a little (New Hope
/// spans 0.54 x 0.41 degrees, Yahara 0.56 x 0.49) so that every basin is one
/// connected area, as real basins are: the catchments of adjacent copies
/// overlap at the seams instead of leaving gaps.
const UNIT_DX: f64 = 0.8;
const UNIT_DY: f64 = 0.35;
/// Offset of the Yahara copy east of the New Hope copy inside a unit.
const YAHARA_DX: f64 = 0.35;
/// The space around a copy's catchments in its rectangle (`--seamless`).
const MARGIN: f64 = 0.005;
/// South-west corner of the grid.
const ORIGIN: (f64, f64) = (-124.0, 25.0);
const ID_STEP: f64 = 1e9;

struct Sample {
    /// Per layer: column names (the output schema's order) and the rows.
    rows: Vec<Vec<(Vec<u8>, Vec<Value>)>>,
    min: (f64, f64),
    outlet_comid: i64,
    outlet_hydroseq: f64,
    /// The outlet's `levelpathi`: the sample's main stem.
    main_levelpath: f64,
    /// The `hydroseq` of the main stem's headwater flowline (its largest).
    headwater_hydroseq: f64,
    /// The catchments' extent: min x, min y, max x, max y.
    catchment_extent: [f64; 4],
    /// The rings of the catchments' union, vertices as in the file.
    catchment_outline: Vec<LineString<f64>>,
}

/// Units in `cols` columns of `rows`, copies placed by `layout`.
struct Grid {
    cols: usize,
    rows: usize,
    layout: Layout,
}

/// Where the copies go.
enum Layout {
    /// Overlapping at the seams (`UNIT_DX`, `UNIT_DY`, `YAHARA_DX`).
    Overlapping,
    /// Each copy in a rectangle of its own: New Hope's `widths[0]`, then
    /// Yahara's `widths[1]`, both `height` tall.
    Seamless { widths: [f64; 2], height: f64 },
}

impl Layout {
    fn seamless(samples: &[Sample]) -> Layout {
        let size = |s: &Sample, axis: usize| {
            s.catchment_extent[axis + 2] - s.catchment_extent[axis] + 2.0 * MARGIN
        };
        Layout::Seamless {
            widths: [size(&samples[0], 0), size(&samples[1], 0)],
            height: size(&samples[0], 1).max(size(&samples[1], 1)),
        }
    }

    /// The translation of copy `s` of unit (`c`, `r`).
    fn offset(&self, c: usize, r: usize, s: usize, sample: &Sample) -> (f64, f64) {
        match self {
            Layout::Overlapping => (
                ORIGIN.0 + c as f64 * UNIT_DX + s as f64 * YAHARA_DX - sample.min.0,
                ORIGIN.1 + r as f64 * UNIT_DY - sample.min.1,
            ),
            Layout::Seamless { .. } => {
                let [x0, y0, ..] = self.rectangle(c, r, s).expect("seamless");
                let [cx, cy, ..] = sample.catchment_extent;
                (x0 + MARGIN - cx, y0 + MARGIN - cy)
            }
        }
    }

    /// The rectangle of copy `s` of unit (`c`, `r`) when seamless: min x,
    /// min y, max x, max y, each edge computed by the same expression for
    /// both rectangles it bounds, so that neighbours share it bit for bit.
    fn rectangle(&self, c: usize, r: usize, s: usize) -> Option<[f64; 4]> {
        let Layout::Seamless { widths, height } = self else {
            return None;
        };
        let x = |c: usize, s: usize| {
            ORIGIN.0 + c as f64 * (widths[0] + widths[1]) + if s == 1 { widths[0] } else { 0.0 }
        };
        let y = |r: usize| ORIGIN.1 + r as f64 * height;
        Some(match s {
            0 => [x(c, 0), y(r), x(c, 1), y(r + 1)],
            _ => [x(c, 1), y(r), x(c + 1, 0), y(r + 1)],
        })
    }
}

/// The part of `rectangle` the catchments of `outline` (translated by
/// `dx`, `dy`) leave uncovered: the rectangle with each outline reversed as
/// a hole, and each hole of the union reversed as an island, so that every
/// edge of the outline meets its reverse.
fn filler(rectangle: [f64; 4], outline: &[LineString<f64>], dx: f64, dy: f64) -> Vec<Polygon<f64>> {
    let [x0, y0, x1, y1] = rectangle;
    let exterior = LineString::from(vec![(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]);
    let (mut holes, mut islands) = (Vec::new(), Vec::new());
    for ring in outline {
        let mut moved = geo::Translate::translate(ring, dx, dy);
        moved.0.reverse();
        if geo::Area::signed_area(&Polygon::new(ring.clone(), Vec::new())) > 0.0 {
            holes.push(moved);
        } else {
            islands.push(Polygon::new(moved, Vec::new()));
        }
    }
    std::iter::once(Polygon::new(exterior, holes))
        .chain(islands)
        .collect()
}

/// The (multi)polygon `g` with the polygons `filler` added as parts.
fn with_filler(g: geo::Geometry<f64>, filler: Vec<Polygon<f64>>) -> geo::Geometry<f64> {
    let mut parts = match g {
        geo::Geometry::Polygon(p) => vec![p],
        geo::Geometry::MultiPolygon(m) => m.0,
        other => panic!("an outlet catchment is polygonal, not {other:?}"),
    };
    parts.extend(filler);
    geo::Geometry::MultiPolygon(MultiPolygon(parts))
}

/// The extent of the envelopes of `rows` (GeoPackage blobs).
fn extent(rows: &[(Vec<u8>, Vec<Value>)]) -> [f64; 4] {
    let mut e = [f64::MAX, f64::MAX, f64::MIN, f64::MIN];
    for b in rows
        .iter()
        .filter_map(|(g, _)| blob::header(g).ok()?.envelope)
    {
        e = [
            e[0].min(b[0]),
            e[1].min(b[1]),
            e[2].max(b[2]),
            e[3].max(b[3]),
        ];
    }
    e
}

/// The rings of the union of `catchments` (GeoPackage blobs).
fn outline(catchments: &[(Vec<u8>, Vec<Value>)]) -> Vec<LineString<f64>> {
    let features: Vec<Feature> = catchments
        .iter()
        .filter_map(|(g, _)| blob::parse(g).ok().flatten())
        .map(|g| Feature {
            id: None,
            geometry: Some(g),
            properties: Default::default(),
        })
        .collect();
    let table = Table::from_features(&features).expect("catchments");
    let mut union = Dissolver::default();
    union.add_rows(table.geometries(), &(0..table.len()).collect::<Vec<_>>());
    union.rings()
}

/// What to generate: `cols` x `rows` units (at least 1 x 10) written to `out`.
pub struct Options {
    pub cols: usize,
    pub rows: usize,
    pub out: PathBuf,
    /// The flowline COMID index covers (COMID, Hydroseq, DnHydroseq, StreamOrde).
    pub topology_index: bool,
    /// Catchments tile the land (see the module doc).
    pub seamless: bool,
}

impl Options {
    /// The options of `bench_make_network`'s command line (without the
    /// program name); defaults: 5 x 10 units into `target/bench-data/network_50k.gpkg`.
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Options {
        let mut o = Options {
            cols: 5,
            rows: 10,
            out: PathBuf::from("target/bench-data/network_50k.gpkg"),
            topology_index: false,
            seamless: false,
        };
        let mut args = args.into_iter();
        while let Some(a) = args.next() {
            match a.as_str() {
                "--topology-index" => o.topology_index = true,
                "--seamless" => o.seamless = true,
                "--cols" | "--rows" | "--out" => {
                    let v = args.next().unwrap_or_default();
                    match a.as_str() {
                        "--cols" => o.cols = v.parse().expect("--cols N"),
                        "--rows" => o.rows = v.parse().expect("--rows N"),
                        _ => o.out = v.into(),
                    }
                }
                _ => panic!("usage: {USAGE}"),
            }
        }
        o
    }
}

/// The command line `Options::from_args` reads.
pub const USAGE: &str =
    "bench_make_network --cols C --rows R --out FILE.gpkg [--topology-index] [--seamless]";

/// Writes the grid `o` asks for, and its JSON sidecar beside it (returned).
pub fn generate(o: &Options) -> serde_json::Value {
    let Options {
        cols,
        rows,
        ref out,
        topology_index,
        seamless,
    } = *o;
    assert!(cols >= 1 && rows >= 10, "at least 1 column and 10 rows");
    let t = Instant::now();
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let schema = Connection::open(root.join(SAMPLES[1])).expect("Yahara sample");
    let columns: Vec<Vec<String>> = LAYERS.iter().map(|l| table_columns(&schema, l)).collect();
    let samples: Vec<Sample> = SAMPLES
        .iter()
        .map(|s| load_sample(&root.join(s), &columns))
        .collect();
    let layout = match seamless {
        true => Layout::seamless(&samples),
        false => Layout::Overlapping,
    };
    let grid = Grid { cols, rows, layout };
    let n = write(out, &grid, &samples, &schema, &columns, topology_index)
        .expect("writing the network");
    let unit = |c: usize, r: usize| (c * rows + r) as i64;
    let outlet = |k: i64| samples[0].outlet_comid + ((2 * k + 1) as f64 * ID_STEP) as i64;
    let sidecar = serde_json::json!({
        "cols": cols, "rows": rows, "flowlines": n, "seamless": seamless,
        "flowlines_per_unit": samples.iter().map(|s| s.rows[0].len()).sum::<usize>(),
        "outlets": {
            "1k": outlet(unit(cols - 1, rows - 1)),
            "10k": outlet(unit(cols - 1, rows - 10)),
            "all": outlet(unit(0, 0)),
        }
    });
    std::fs::write(out.with_extension("json"), sidecar.to_string()).expect("sidecar");
    println!(
        "{}: {n} flowlines ({cols}x{rows} units) in {:.1} s; outlets {}",
        out.display(),
        t.elapsed().as_secs_f64(),
        sidecar["outlets"]
    );
    sidecar
}

fn table_columns(conn: &Connection, table: &str) -> Vec<String> {
    let mut stmt = conn
        .prepare(&format!("PRAGMA table_info(\"{table}\")"))
        .unwrap();
    let names = stmt.query_map([], |r| r.get::<_, String>(1)).unwrap();
    names
        .map(Result::unwrap)
        .filter(|c| c != "fid" && c != "geom")
        .collect()
}

/// Reads every row of the copied layers, mapped onto the output columns.
fn load_sample(path: &Path, columns: &[Vec<String>]) -> Sample {
    let conn = Connection::open(path).expect("sample GeoPackage");
    let mut min = (f64::MAX, f64::MAX);
    let mut layers = Vec::new();
    for (layer, cols) in LAYERS.iter().zip(columns) {
        let have = table_columns(&conn, layer);
        let select: Vec<String> = cols
            .iter()
            .map(|c| {
                if have.contains(c) {
                    format!("\"{c}\"")
                } else {
                    "NULL".into()
                }
            })
            .collect();
        let sql = format!(
            "SELECT geom, {} FROM \"{layer}\" ORDER BY fid",
            select.join(", ")
        );
        let mut stmt = conn.prepare(&sql).unwrap();
        let rows: Vec<(Vec<u8>, Vec<Value>)> = stmt
            .query_map([], |r| {
                let values = (1..=cols.len())
                    .map(|i| r.get::<_, Value>(i))
                    .collect::<Result<_, _>>()?;
                Ok((r.get::<_, Vec<u8>>(0)?, values))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let e = extent(&rows);
        min = (min.0.min(e[0]), min.1.min(e[1]));
        layers.push(rows);
    }
    let fl = &columns[0];
    let col = |name: &str| {
        fl.iter()
            .position(|c| c.eq_ignore_ascii_case(name))
            .unwrap()
    };
    let (comid, hs, dn, lp) = (
        col("comid"),
        col("hydroseq"),
        col("dnhydroseq"),
        col("levelpathi"),
    );
    let hydroseqs: std::collections::HashSet<i64> = layers[0]
        .iter()
        .map(|(_, v)| number(&v[hs]) as i64)
        .collect();
    let outlet = layers[0]
        .iter()
        .find(|(_, v)| !hydroseqs.contains(&(number(&v[dn]) as i64)))
        .expect("each sample has one terminal flowline");
    let main_levelpath = number(&outlet.1[lp]);
    let headwater_hydroseq = layers[0]
        .iter()
        .filter(|(_, v)| number(&v[lp]) == main_levelpath)
        .map(|(_, v)| number(&v[hs]))
        .fold(f64::MIN, f64::max);
    Sample {
        min,
        outlet_comid: number(&outlet.1[comid]) as i64,
        outlet_hydroseq: number(&outlet.1[hs]),
        main_levelpath,
        headwater_hydroseq,
        catchment_extent: extent(&layers[1]),
        catchment_outline: outline(&layers[1]),
        rows: layers,
    }
}

/// Polygons with counter-clockwise exteriors. The two samples wind their
/// rings in opposite directions, and `geo::unary_union` (the basins of the
/// mock and of local mode) keeps only the polygons winding like the first.
fn oriented(g: geo::Geometry<f64>) -> geo::Geometry<f64> {
    use geo::orient::{Direction, Orient};
    match g {
        geo::Geometry::Polygon(p) => geo::Geometry::Polygon(p.orient(Direction::Default)),
        geo::Geometry::MultiPolygon(m) => geo::Geometry::MultiPolygon(m.orient(Direction::Default)),
        other => other,
    }
}

fn number(v: &Value) -> f64 {
    match v {
        Value::Integer(i) => *i as f64,
        Value::Real(f) => *f,
        _ => 0.0,
    }
}

fn offset_value(v: &Value, by: f64) -> Value {
    match v {
        Value::Integer(0) => Value::Integer(0),
        Value::Integer(i) => Value::Integer(i + by as i64),
        Value::Real(f) if *f != 0.0 => Value::Real(f + by),
        other => other.clone(),
    }
}

/// Writes the file; returns the number of network flowlines.
fn write(
    out: &Path,
    grid: &Grid,
    samples: &[Sample],
    schema: &Connection,
    columns: &[Vec<String>],
    topology_index: bool,
) -> rusqlite::Result<usize> {
    let (cols, rows, layout) = (grid.cols, grid.rows, &grid.layout);
    std::fs::create_dir_all(out.parent().unwrap_or(Path::new("."))).ok();
    let tmp = out.with_extension("gpkg.tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut conn = Connection::open(&tmp)?;
    conn.execute_batch(
        "PRAGMA application_id = 1196444487; PRAGMA user_version = 10200;
         PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -200000;
         CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT NOT NULL, srs_id INTEGER PRIMARY KEY,
           organization TEXT NOT NULL, organization_coordsys_id INTEGER NOT NULL,
           definition TEXT NOT NULL, description TEXT);
         INSERT INTO gpkg_spatial_ref_sys VALUES
           ('Undefined cartesian SRS', -1, 'NONE', -1, 'undefined', NULL),
           ('Undefined geographic SRS', 0, 'NONE', 0, 'undefined', NULL),
           ('WGS 84 geodetic', 4326, 'EPSG', 4326, 'GEOGCS[\"WGS 84\",DATUM[\"WGS_1984\",SPHEROID[\"WGS 84\",6378137,298.257223563]],PRIMEM[\"Greenwich\",0],UNIT[\"degree\",0.0174532925199433],AUTHORITY[\"EPSG\",\"4326\"]]', NULL),
           ('NAD83', 4269, 'EPSG', 4269, 'GEOGCS[\"NAD83\",DATUM[\"North_American_Datum_1983\",SPHEROID[\"GRS 1980\",6378137,298.257222101]],PRIMEM[\"Greenwich\",0],UNIT[\"degree\",0.0174532925199433],AUTHORITY[\"EPSG\",\"4269\"]]', NULL);
         CREATE TABLE gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY, data_type TEXT NOT NULL,
           identifier TEXT UNIQUE, description TEXT DEFAULT '', last_change DATETIME NOT NULL
           DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')), min_x DOUBLE, min_y DOUBLE, max_x DOUBLE,
           max_y DOUBLE, srs_id INTEGER);
         CREATE TABLE gpkg_geometry_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL,
           geometry_type_name TEXT NOT NULL, srs_id INTEGER NOT NULL, z TINYINT NOT NULL,
           m TINYINT NOT NULL, CONSTRAINT pk_geom_cols PRIMARY KEY (table_name, column_name));
         CREATE TABLE gpkg_extensions (table_name TEXT, column_name TEXT, extension_name TEXT NOT NULL,
           definition TEXT NOT NULL, scope TEXT NOT NULL);",
    )?;
    let tx = conn.transaction()?;
    let mut flowlines = 0;
    for (l, layer) in LAYERS.iter().enumerate() {
        let ddl: String = schema.query_row(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [layer],
            |r| r.get(0),
        )?;
        let gtype: String = schema.query_row(
            "SELECT geometry_type_name FROM gpkg_geometry_columns WHERE table_name = ?1",
            [layer],
            |r| r.get(0),
        )?;
        tx.execute_batch(&ddl.replace("CREATE TABLE IF NOT EXISTS", "CREATE TABLE"))?;
        let rtree = format!("rtree_{layer}_geom");
        tx.execute_batch(&format!(
            "CREATE VIRTUAL TABLE \"{rtree}\" USING rtree(id, minx, maxx, miny, maxy)"
        ))?;
        let names: Vec<String> = columns[l].iter().map(|c| format!("\"{c}\"")).collect();
        let marks: Vec<String> = (0..=names.len()).map(|i| format!("?{}", i + 1)).collect();
        let mut insert = tx.prepare(&format!(
            "INSERT INTO \"{layer}\" (geom, {}) VALUES ({})",
            names.join(", "),
            marks.join(", ")
        ))?;
        let mut index = tx.prepare(&format!(
            "INSERT INTO \"{rtree}\" VALUES (?1, ?2, ?3, ?4, ?5)"
        ))?;
        let ids: Vec<usize> = columns[l]
            .iter()
            .enumerate()
            .filter(|(_, c)| ID_COLUMNS.contains(&c.to_ascii_lowercase().as_str()))
            .map(|(i, _)| i)
            .collect();
        let position = |name: &str| columns[l].iter().position(|c| c.eq_ignore_ascii_case(name));
        // The catchment the uncovered part of a seamless rectangle joins.
        let outlet_catchment = match l {
            1 => position("featureid"),
            _ => None,
        };
        let (hs, dn, lp) = match l {
            0 => (
                position("hydroseq"),
                position("dnhydroseq"),
                position("levelpathi"),
            ),
            _ => (None, None, None),
        };
        // The grid's main stem: the level path of the terminal unit's outlet.
        let grid_main_levelpath = samples[0].main_levelpath + ID_STEP;
        let mut extent = [f64::MAX, f64::MAX, f64::MIN, f64::MIN];
        for c in 0..cols {
            for r in 0..rows {
                let k = c * rows + r;
                for (s, sample) in samples.iter().enumerate() {
                    let j = (2 * k + s) as f64;
                    let by = (j + 1.0) * ID_STEP;
                    let (dx, dy) = layout.offset(c, r, s, sample);
                    // Where this copy's outlet drains: Yahara into its unit's
                    // New Hope outlet, New Hope into the headwater of the
                    // main stem of the next unit downstream, so that a main
                    // stem runs on through the units as a river does.
                    let unit_hydroseq =
                        |hydroseq: f64, unit: usize| hydroseq + (2 * unit + 1) as f64 * ID_STEP;
                    let drain = match (s, c, r) {
                        (1, _, _) => Some(unit_hydroseq(samples[0].outlet_hydroseq, k)),
                        (_, 0, 0) => None,
                        (_, _, 0) => {
                            Some(unit_hydroseq(samples[0].headwater_hydroseq, (c - 1) * rows))
                        }
                        _ => Some(unit_hydroseq(samples[0].headwater_hydroseq, k - 1)),
                    };
                    // The units the grid's main stem crosses, as NHDPlus
                    // continues a level path up the larger arbolate sum: row
                    // 0 from the terminal east, then the last column north.
                    let on_grid_main_stem = s == 0 && (r == 0 || c == cols - 1);
                    for (geom, values) in &sample.rows[l] {
                        let mut values: Vec<Value> = values.clone();
                        let rectangle = layout.rectangle(c, r, s).filter(|_| {
                            outlet_catchment
                                .is_some_and(|f| number(&values[f]) as i64 == sample.outlet_comid)
                        });
                        let is_outlet =
                            hs.is_some_and(|h| number(&values[h]) == sample.outlet_hydroseq);
                        let main_stem = lp.filter(|&p| {
                            on_grid_main_stem && number(&values[p]) == sample.main_levelpath
                        });
                        for &i in &ids {
                            values[i] = offset_value(&values[i], by);
                        }
                        if is_outlet {
                            if let Some(d) = dn {
                                values[d] = Value::Real(drain.unwrap_or(0.0));
                            }
                        }
                        if let Some(p) = main_stem {
                            values[p] = Value::Real(grid_main_levelpath);
                        }
                        let shifted = blob::parse(geom).ok().flatten().map(|g| {
                            let g = geo::Translate::translate(&g, dx, dy);
                            oriented(match rectangle {
                                Some(rect) => {
                                    with_filler(g, filler(rect, &sample.catchment_outline, dx, dy))
                                }
                                None => g,
                            })
                        });
                        let (bytes, bbox) = match &shifted {
                            Some(g) => (
                                Value::Blob(blob::write(g, 4269)),
                                geo::BoundingRect::bounding_rect(g),
                            ),
                            None => (Value::Null, None),
                        };
                        insert.execute(params_from_iter(std::iter::once(bytes).chain(values)))?;
                        if let Some(b) = bbox {
                            let id = tx.last_insert_rowid();
                            index.execute(rusqlite::params![
                                id,
                                b.min().x,
                                b.max().x,
                                b.min().y,
                                b.max().y
                            ])?;
                            extent = [
                                extent[0].min(b.min().x),
                                extent[1].min(b.min().y),
                                extent[2].max(b.max().x),
                                extent[3].max(b.max().y),
                            ];
                        }
                        if l == 0 {
                            flowlines += 1;
                        }
                    }
                }
            }
        }
        drop((insert, index));
        tx.execute(
            "INSERT INTO gpkg_contents (table_name, data_type, identifier, min_x, min_y, max_x, max_y, srs_id)
             VALUES (?1, 'features', ?1, ?2, ?3, ?4, ?5, 4269)",
            rusqlite::params![layer, extent[0], extent[1], extent[2], extent[3]],
        )?;
        tx.execute(
            "INSERT INTO gpkg_geometry_columns VALUES (?1, 'geom', ?2, 4269, 0, 0)",
            rusqlite::params![layer, gtype],
        )?;
        tx.execute(
            "INSERT INTO gpkg_extensions VALUES (?1, 'geom', 'gpkg_rtree_index',
             'http://www.geopackage.org/spec120/#extension_rtree', 'write-only')",
            [layer],
        )?;
        let key = match *layer {
            "CatchmentSP" => "\"FEATUREID\"",
            "NHDFlowline_Network" if topology_index => {
                "\"COMID\", \"Hydroseq\", \"DnHydroseq\", \"StreamOrde\""
            }
            _ => "\"COMID\"",
        };
        tx.execute_batch(&format!(
            "CREATE INDEX \"{layer}_key\" ON \"{layer}\" ({key})"
        ))?;
    }
    tx.commit()?;
    drop(conn);
    std::fs::rename(&tmp, out).expect("rename");
    Ok(flowlines)
}

#[cfg(test)]
mod tests;
