//! One schema per layer, whatever the source: the Yahara sample read through
//! `hydro_data`, the same basin from the mock services and the same from the
//! plot-data cache give identical Arrow schemas and GeoPackage column types,
//! equal to the types the sample declares (read with plain SQL); an empty
//! layer keeps its fields and geometry type; a value its declared type cannot
//! hold is an error naming it.

use crate::support;

use arrow_schema::{DataType, SchemaRef};
use hydroplot::plot::{plot_hydro, CacheSetting, Layer, Outlet, PlotData, PlotRequest};
use hydroplot::Error;
use hydroplot_mock::{context, MockServer};
use std::path::{Path, PathBuf};

const OUTLET: i64 = 13293970;

fn tmpdir(name: &str) -> PathBuf {
    crate::scratch::temp_dir(&format!("schema-{name}"))
}

fn request(hydro_data: Option<&Path>, gpkg: &Path, cache: CacheSetting) -> PlotRequest {
    PlotRequest {
        outlets: vec![Outlet::Comid(OUTLET)],
        hydro_data: hydro_data.map(Path::to_path_buf),
        gpkg: Some(gpkg.to_path_buf()),
        actually_plot: false,
        cache,
        ..Default::default()
    }
}

/// The Arrow schema of each layer of `d`, as the C stream export gives it.
fn arrow_schemas(d: &PlotData) -> Vec<(Layer, SchemaRef)> {
    (Layer::ALL.into_iter())
        .map(|l| {
            let batch = hydroplot::arrow::layer_batch(d.layer(l), "EPSG:4269").unwrap();
            (l, batch.schema())
        })
        .collect()
}

/// A GeoPackage table: its name, its geometry type and its columns with
/// their declared SQLite types.
type TableTypes = (String, String, Vec<(String, String)>);

/// Each table of a GeoPackage, as plain SQL reads it.
fn gpkg_types(path: &Path) -> Vec<TableTypes> {
    let db = rusqlite::Connection::open(path).unwrap();
    let mut tables = db
        .prepare(
            "SELECT table_name, geometry_type_name FROM gpkg_geometry_columns ORDER BY table_name",
        )
        .unwrap();
    let tables: Vec<(String, String)> = tables
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    tables
        .into_iter()
        .map(|(table, geometry)| {
            let columns = columns(&db, &table);
            (table, geometry, columns)
        })
        .collect()
}

/// (name, declared type) of each column of `table`.
fn columns(db: &rusqlite::Connection, table: &str) -> Vec<(String, String)> {
    let mut stmt = db
        .prepare(&format!("PRAGMA table_info(\"{table}\")"))
        .unwrap();
    let rows = stmt.query_map([], |r| Ok((r.get(1)?, r.get(2)?))).unwrap();
    rows.map(Result::unwrap).collect()
}

/// The NHDPlusV2 types the sample declares, for each of its columns (lower
/// case, key and geometry left out), as Arrow and SQLite types: MEDIUMINT is
/// an integer, REAL a float, TEXT and DATETIME text. Written here by hand,
/// from the sample's `CREATE TABLE`s.
fn sample_declared(table: &str) -> Vec<(String, DataType, &'static str)> {
    let db = support::sample_sql();
    columns(&db, table)
        .into_iter()
        .filter(|(name, _)| name != "fid" && name != "geom")
        .map(|(name, declared)| {
            let (arrow, sql) = match declared.as_str() {
                "MEDIUMINT" => (DataType::Int64, "INTEGER"),
                "REAL" => (DataType::Float64, "REAL"),
                "TEXT" | "DATETIME" => (DataType::Utf8, "TEXT"),
                other => panic!("{table}.{name}: unexpected declared type {other}"),
            };
            (name.to_ascii_lowercase(), arrow, sql)
        })
        .collect()
}

#[test]
fn the_sample_the_services_and_the_cache_give_one_schema_the_sample_declares() {
    let dir = tmpdir("one");
    let server = MockServer::start();
    let ctx = context(&server);
    let cache = CacheSetting::File(dir.join("plot.cache"));
    let sample = support::sample();
    let local = plot_hydro(
        &ctx,
        &request(
            Some(&sample),
            &dir.join("local.gpkg"),
            CacheSetting::Disabled,
        ),
        None,
    )
    .unwrap()
    .data;
    support::assert_yahara_counts(&local);
    let services = plot_hydro(
        &ctx,
        &request(None, &dir.join("services.gpkg"), cache.clone()),
        None,
    )
    .unwrap()
    .data;
    server.clear_requests();
    let cached = plot_hydro(&ctx, &request(None, &dir.join("cached.gpkg"), cache), None)
        .unwrap()
        .data;
    assert!(
        server.requests().is_empty(),
        "the second run reads the cache"
    );
    assert_eq!(services.layer(Layer::Flowline).len(), 251);

    let schemas = arrow_schemas(&local);
    assert_eq!(schemas, arrow_schemas(&services), "local and services");
    assert_eq!(schemas, arrow_schemas(&cached), "local and cache");
    let types = gpkg_types(&dir.join("local.gpkg"));
    assert_eq!(
        types,
        gpkg_types(&dir.join("services.gpkg")),
        "local and services"
    );
    assert_eq!(
        types,
        gpkg_types(&dir.join("cached.gpkg")),
        "local and cache"
    );

    // Each field the sample declares has the sample's type, in the Arrow
    // schema and in the GeoPackage written, whatever the source.
    for (layer, table) in [
        (Layer::Flowline, "NHDFlowline_Network"),
        (Layer::Catchment, "CatchmentSP"),
        (Layer::NetworkWtbd, "NHDWaterbody"),
        (Layer::OffNetworkWtbd, "NHDWaterbody"),
        (Layer::Area, "NHDArea"),
        (Layer::FlowlineNonNetwork, "NHDFlowline_NonNetwork"),
        (Layer::Gage, "Gage"),
    ] {
        let schema = &schemas.iter().find(|(l, _)| *l == layer).unwrap().1;
        for (name, arrow, _) in sample_declared(table) {
            let field = schema.field_with_name(&name).unwrap();
            assert_eq!(field.data_type(), &arrow, "{table}.{name}");
        }
    }
    for (table, _, written) in &types {
        if !["basin", "outlets"].contains(&table.as_str()) {
            for (name, _, sql) in sample_declared(table) {
                let found = written.iter().find(|(n, _)| *n == name);
                assert_eq!(found.map(|(_, t)| t.as_str()), Some(sql), "{table}.{name}");
            }
        }
    }
    // The 13 flowline fields that once were real from the services.
    let flowline = &schemas
        .iter()
        .find(|(l, _)| *l == Layer::Flowline)
        .unwrap()
        .1;
    for name in [
        "streamleve",
        "streamorde",
        "streamcalc",
        "divergence",
        "startflag",
        "terminalfl",
        "dnlevel",
        "dndraincou",
        "rtndiv",
        "vpuin",
        "vpuout",
        "tidal",
        "enabled",
    ] {
        assert_eq!(
            flowline.field_with_name(name).unwrap().data_type(),
            &DataType::Int64
        );
    }
    let geometry = |path: &Path| -> Vec<(String, String)> {
        (gpkg_types(path).into_iter())
            .map(|(t, g, _)| (t, g))
            .collect()
    };
    assert_eq!(
        geometry(&dir.join("services.gpkg")),
        [
            ("CatchmentSP", "MULTIPOLYGON"),
            ("Gage", "POINT"),
            ("NHDArea", "MULTIPOLYGON"),
            ("NHDFlowline_Network", "MULTILINESTRING"),
            ("NHDFlowline_NonNetwork", "MULTILINESTRING"),
            ("NHDWaterbody", "MULTIPOLYGON"),
            ("basin", "MULTIPOLYGON"),
            ("outlets", "POINT"),
        ]
        .map(|(t, g)| (t.to_string(), g.to_string()))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_empty_layer_keeps_its_fields_and_geometry_type() {
    // The services serve no gages: the layer is empty, yet typed.
    let dir = tmpdir("empty");
    let server = MockServer::start();
    let ctx = context(&server);
    let out = dir.join("services.gpkg");
    let d = plot_hydro(&ctx, &request(None, &out, CacheSetting::Disabled), None)
        .unwrap()
        .data;
    assert_eq!(d.layer(Layer::Gage).len(), 0);
    let batch = hydroplot::arrow::layer_batch(d.layer(Layer::Gage), "EPSG:4269").unwrap();
    let schema = batch.schema();
    let geometry = schema.field(0);
    assert_eq!(
        geometry
            .metadata()
            .get("hydroplot:geometry_type")
            .map(String::as_str),
        Some("POINT")
    );
    let declared = sample_declared("Gage");
    let fields: Vec<(String, DataType)> = (schema.fields().iter().skip(1))
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect();
    let want: Vec<(String, DataType)> = declared
        .iter()
        .map(|(n, a, _)| (n.clone(), a.clone()))
        .collect();
    assert_eq!(fields, want);
    // The GeoPackage written has the table, its columns and type, no row.
    let db = rusqlite::Connection::open(&out).unwrap();
    let rows: i64 = db
        .query_row("SELECT count(*) FROM \"Gage\"", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 0);
    let gtype: String = db
        .query_row(
            "SELECT geometry_type_name FROM gpkg_geometry_columns WHERE table_name = 'Gage'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(gtype, "POINT");
    let written: Vec<(String, String)> = columns(&db, "Gage").into_iter().skip(2).collect();
    let want: Vec<(String, String)> = declared
        .iter()
        .map(|(n, _, s)| (n.clone(), s.to_string()))
        .collect();
    assert_eq!(written, want);
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_value_its_declared_type_cannot_hold_is_an_error_naming_it() {
    // The outlet's own flowline with stream order 5.5, in a copy of the
    // sample read locally and served by the mock (a page then sends 5.5).
    let dir = tmpdir("misfit");
    let file = dir.join("yahara.gpkg");
    std::fs::copy(support::sample(), &file).unwrap();
    let db = rusqlite::Connection::open(&file).unwrap();
    // The copy's R-tree triggers call GeoPackage functions plain SQLite
    // lacks; the geometry does not change, so the index needs none.
    let triggers: Vec<String> = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'NHDFlowline_Network'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for t in triggers {
        db.execute_batch(&format!("DROP TRIGGER \"{t}\"")).unwrap();
    }
    let changed = db
        .execute(
            "UPDATE NHDFlowline_Network SET StreamOrde = 5.5 WHERE COMID = ?1",
            [OUTLET],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(db);
    let want = format!(
        "layer flowline, field streamorde (integer), feature comid {OUTLET}: 5.5 is not an integer"
    );
    let server = MockServer::start();
    let ctx = context(&server);
    let local = plot_hydro(
        &ctx,
        &request(Some(&file), &dir.join("local.gpkg"), CacheSetting::Disabled),
        None,
    )
    .err()
    .expect("a local misfit fails");
    assert!(
        matches!(local, Error::Gpkg(_)) && local.to_string().contains(&want),
        "{local}"
    );

    let hostile = MockServer::start_with_data(std::slice::from_ref(&file), 0).unwrap();
    let ctx = context(&hostile);
    let served = plot_hydro(
        &ctx,
        &request(None, &dir.join("services.gpkg"), CacheSetting::Disabled),
        None,
    )
    .err()
    .expect("a served misfit fails");
    assert!(
        matches!(served, Error::Service(_)) && served.to_string().contains(&want),
        "{served}"
    );
    assert!(!dir.join("services.gpkg").exists() && !dir.join("local.gpkg").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
