//! Basin parts (`hydroplot index`): a basin folded from stored parts is the
//! basin folded from every catchment, bit for bit; stale parts are never
//! used; the file's own tables are left as they were.

use crate::support;

use hydroplot::cancel::{Canceller, Stop};
use hydroplot::gpkg::{
    create_basin_parts, index_geopackage, unindex_geopackage, GeoPackage, PartsOutcome, Unindexed,
    BASIN_PARTS,
};
use hydroplot::network::{Network, Reach};
use hydroplot::plot::{plot_hydro, Layer, Layers, Outlet, PlotRequest};
use hydroplot::Error;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use support::offline;

const NEW_HOPE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/new_hope.gpkg");

/// Reaches per part in these tests: the sample's 746 flowlines make about
/// thirty parts, and most basins hold some whole.
const SMALL_PARTS: usize = 20;

/// A fresh folder of this test's own, with two copies of the New Hope
/// sample: `plain.gpkg` and `parted.gpkg`.
fn copies(name: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "hydroplot-basin-parts-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (plain, parted) = (dir.join("plain.gpkg"), dir.join("parted.gpkg"));
    std::fs::copy(NEW_HOPE, &plain).unwrap();
    std::fs::copy(NEW_HOPE, &parted).unwrap();
    (plain, parted)
}

fn store_parts(path: &Path) -> usize {
    let mut heard = Vec::new();
    let made = create_basin_parts(path, SMALL_PARTS, &Stop::never(), &mut |done, all| {
        heard.push((done, all))
    });
    match made.unwrap() {
        PartsOutcome::Created { parts } => {
            let expected: Vec<(usize, usize)> = (0..=parts).map(|done| (done, parts)).collect();
            assert_eq!(heard, expected, "progress from 0 to every part");
            parts
        }
        other => panic!("parts expected, got {other:?}"),
    }
}

/// The basins (as geometries) and plot box of `outlets` from `file`,
/// folded (flowline-only, or the map's layers alone).
fn basins(file: &Path, outlets: &[i64], layers: Layers) -> (Vec<Option<geo::Geometry>>, [f64; 4]) {
    let req = PlotRequest {
        outlets: outlets.iter().map(|&c| Outlet::Comid(c)).collect(),
        hydro_data: Some(file.to_path_buf()),
        actually_plot: false,
        flowline_only: Some(layers != Layers::Drawn),
        layers,
        ..Default::default()
    };
    let d = plot_hydro(&offline(), &req, None).unwrap().data;
    let geometries = d.layer(Layer::Basin).to_features().into_iter();
    (geometries.map(|f| f.geometry).collect(), d.bbox)
}

/// Comids of the sample's flowlines, with plain SQL: every 23rd, and the
/// outlet of the largest basin (the least hydroseq).
fn some_outlets() -> Vec<i64> {
    let db = Connection::open(NEW_HOPE).unwrap();
    let mut stmt = db
        .prepare("SELECT comid FROM NHDFlowline_Network ORDER BY hydroseq")
        .unwrap();
    let all: Vec<i64> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    all.iter().step_by(23).copied().collect()
}

#[test]
fn basins_from_parts_are_the_basins_from_every_catchment() {
    let (plain, parted) = copies("same");
    let parts = store_parts(&parted);
    assert!(parts >= 20, "{parts} parts");
    for outlet in some_outlets() {
        for layers in [Layers::All, Layers::Drawn] {
            let from_parts = basins(&parted, &[outlet], layers);
            assert_eq!(
                from_parts,
                basins(&plain, &[outlet], layers),
                "outlet {outlet}"
            );
        }
    }
    // The sample's largest basin (its least hydroseq) is there.
    assert!(basins(&parted, &some_outlets()[..1], Layers::All).0[0].is_some());
    // Several outlets at once, nested and apart.
    let outlets = some_outlets();
    let some: Vec<i64> = outlets.iter().step_by(3).copied().collect();
    assert_eq!(
        basins(&parted, &some, Layers::All),
        basins(&plain, &some, Layers::All)
    );
}

#[test]
fn the_parts_are_read_not_the_catchments_they_cover() {
    // Emptying the stored rings behind the parts' own triggers' back leaves
    // the large basin with only its catchments outside the parts; through
    // them, the parts are withdrawn.
    let (plain, parted) = copies("read");
    store_parts(&parted);
    let outlet = some_outlets()[0];
    let db = Connection::open(&parted).unwrap();
    let own: Vec<(String, String)> = db
        .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?1")
        .unwrap()
        .query_map([BASIN_PARTS], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(own.len(), 3);
    for (name, _) in &own {
        db.execute(&format!("DROP TRIGGER \"{name}\""), []).unwrap();
    }
    db.execute(&format!("UPDATE {BASIN_PARTS} SET outline = NULL"), [])
        .unwrap();
    for (_, sql) in &own {
        db.execute(sql, []).unwrap();
    }
    assert_ne!(
        basins(&parted, &[outlet], Layers::All),
        basins(&plain, &[outlet], Layers::All)
    );
    db.execute(
        &format!("DELETE FROM {BASIN_PARTS} WHERE comid = (SELECT min(comid) FROM {BASIN_PARTS})"),
        [],
    )
    .unwrap();
    drop(db);
    assert_eq!(
        GeoPackage::open(&parted).unwrap().basin_parts().unwrap(),
        None
    );
    assert_eq!(
        basins(&parted, &[outlet], Layers::All),
        basins(&plain, &[outlet], Layers::All)
    );
}

#[test]
fn a_column_changed_or_the_parts_dropped_leave_them_unused() {
    for change in [
        "ALTER TABLE CatchmentSP ADD COLUMN note TEXT".to_string(),
        "UPDATE gpkg_geometry_columns SET srs_id = 4326 WHERE table_name = 'CatchmentSP'"
            .to_string(),
        format!("DROP TABLE {BASIN_PARTS}"),
        "DROP TABLE hydroplot_basin_network".to_string(),
        "UPDATE hydroplot_basin_network SET reaches = x'00'".to_string(),
        // No trigger fires on these; the fingerprint changes.
        "ALTER TABLE hydroplot_basin_network RENAME COLUMN reaches TO spoilt".to_string(),
        format!("ALTER TABLE {BASIN_PARTS} RENAME COLUMN outline TO spoilt"),
    ] {
        let (_, parted) = copies("schema");
        store_parts(&parted);
        Connection::open(&parted)
            .unwrap()
            .execute(&change, [])
            .unwrap();
        let gpkg = GeoPackage::open(&parted).unwrap();
        assert_eq!(gpkg.basin_parts().unwrap(), None, "{change}");
        assert!(gpkg.stored_network().unwrap().is_none(), "{change}");
    }
}

/// Drops GDAL's R-tree triggers, which call SpatiaLite's functions that
/// plain SQLite lacks, so that a test can write to the layers.
fn drop_rtree_triggers(db: &Connection) {
    let rtree: Vec<String> = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'rtree_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for name in rtree {
        db.execute(&format!("DROP TRIGGER \"{name}\""), []).unwrap();
    }
}

#[test]
fn an_unreadable_stored_network_is_read_past_and_made_again() {
    let (plain, parted) = copies("unreadable");
    let parts = store_parts(&parted);
    // Its blob spoilt behind the trigger's back (dropped, then made again).
    let db = Connection::open(&parted).unwrap();
    let name = "hydroplot_basin_parts_stale_on_update_hydroplot_basin_network";
    let trigger: String = db
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .unwrap();
    db.execute_batch(&format!(
        "DROP TRIGGER {name}; UPDATE hydroplot_basin_network SET reaches = x'00'; {trigger};"
    ))
    .unwrap();
    drop(db);
    let gpkg = GeoPackage::open(&parted).unwrap();
    assert!(gpkg.basin_parts().unwrap().is_some());
    assert!(gpkg.stored_network().unwrap().is_none());
    drop(gpkg);
    let outlet = some_outlets()[0];
    assert_eq!(
        basins(&parted, &[outlet], Layers::All),
        basins(&plain, &[outlet], Layers::All)
    );
    assert_eq!(store_parts(&parted), parts);
    assert!(GeoPackage::open(&parted)
        .unwrap()
        .stored_network()
        .unwrap()
        .is_some());
}

/// The sample's topology with plain SQL, in row order: comid, hydroseq,
/// dnhydroseq, stream order.
fn topology_by_sql(file: &Path) -> Vec<(i64, i64, i64, i32)> {
    let db = Connection::open(file).unwrap();
    let mut stmt = db
        .prepare("SELECT CAST(comid AS INTEGER), CAST(hydroseq AS INTEGER), CAST(dnhydroseq AS INTEGER), CAST(streamorde AS INTEGER) FROM NHDFlowline_Network ORDER BY rowid")
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap();
    rows.map(Result::unwrap).collect()
}

#[test]
fn the_network_stored_with_the_parts_is_the_flowlines_and_follows_their_writes() {
    let (_, parted) = copies("topology");
    store_parts(&parted);
    let as_tuples = |reaches: &[Reach]| -> Vec<(i64, i64, i64, i32)> {
        (reaches.iter())
            .map(|r| (r.comid, r.hydroseq, r.dnhydroseq, r.streamorder))
            .collect()
    };
    let gpkg = GeoPackage::open(&parted).unwrap();
    let (reaches, network) = gpkg.stored_network().unwrap().expect("stored");
    assert_eq!(as_tuples(&reaches), topology_by_sql(&parted));
    assert_eq!(network.downstream(), Network::new(&reaches).downstream());
    drop(gpkg);
    // A flowline's hydroseq changed: the network read is the new one.
    let db = Connection::open(&parted).unwrap();
    drop_rtree_triggers(&db);
    db.execute(
        "UPDATE NHDFlowline_Network SET hydroseq = hydroseq + 1 WHERE fid = (SELECT min(fid) FROM NHDFlowline_Network)",
        [],
    )
    .unwrap();
    drop(db);
    let gpkg = GeoPackage::open(&parted).unwrap();
    assert!(gpkg.stored_network().unwrap().is_none());
    let (reaches, network) = gpkg.read_network(2).unwrap();
    assert_eq!(as_tuples(&reaches), topology_by_sql(&parted));
    assert_eq!(network.downstream(), Network::new(&reaches).downstream());
}

#[test]
fn a_write_to_the_catchments_or_flowlines_leaves_the_parts_unused_until_made_again() {
    for (table, change) in [
        ("CatchmentSP", "DELETE FROM CatchmentSP WHERE fid = (SELECT min(fid) FROM CatchmentSP)"),
        ("NHDFlowline_Network", "DELETE FROM NHDFlowline_Network WHERE fid = (SELECT max(fid) FROM NHDFlowline_Network)"),
        ("CatchmentSP", "INSERT INTO CatchmentSP (featureid) VALUES (1)"),
        ("CatchmentSP", "UPDATE CatchmentSP SET geom = (SELECT geom FROM CatchmentSP WHERE fid = 2) WHERE fid = 1"),
    ] {
        let (plain, parted) = copies("stale");
        store_parts(&parted);
        for file in [&plain, &parted] {
            let db = Connection::open(file).unwrap();
            drop_rtree_triggers(&db);
            // The user's own write goes through, the triggers beside it.
            db.execute(change, []).unwrap();
        }
        let gpkg = GeoPackage::open(&parted).unwrap();
        assert_eq!(gpkg.basin_parts().unwrap(), None, "after a write to {table}");
        drop(gpkg);
        let outlet = some_outlets()[0];
        assert_eq!(
            basins(&parted, &[outlet], Layers::All),
            basins(&plain, &[outlet], Layers::All),
            "{change}"
        );
        // Made again, they hold the change.
        store_parts(&parted);
        assert_eq!(
            basins(&parted, &[outlet], Layers::All),
            basins(&plain, &[outlet], Layers::All),
            "{change}, parts made again"
        );
    }
}

#[test]
fn a_table_made_again_without_the_triggers_leaves_the_parts_unused() {
    let (_, parted) = copies("remade");
    store_parts(&parted);
    let db = Connection::open(&parted).unwrap();
    db.execute_batch(
        "CREATE TABLE copy AS SELECT * FROM CatchmentSP;
         DROP TABLE CatchmentSP;
         ALTER TABLE copy RENAME TO CatchmentSP;",
    )
    .unwrap();
    drop(db);
    assert_eq!(
        GeoPackage::open(&parted).unwrap().basin_parts().unwrap(),
        None
    );
}

#[test]
fn parts_are_made_once_and_registered_as_attributes() {
    let (_, parted) = copies("once");
    let parts = store_parts(&parted);
    assert_eq!(
        create_basin_parts(&parted, SMALL_PARTS, &Stop::never(), &mut |_, _| {}).unwrap(),
        PartsOutcome::Existing { parts }
    );
    let db = Connection::open(&parted).unwrap();
    let kind: String = db
        .query_row(
            "SELECT data_type FROM gpkg_contents WHERE table_name = ?1",
            [BASIN_PARTS],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kind, "attributes");
    let rows: usize = db
        .query_row(&format!("SELECT count(*) FROM {BASIN_PARTS}"), [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(rows, parts);
    let triggers: usize = db
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'hydroplot_basin_parts_stale_on_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        triggers, 12,
        "on the flowlines, the catchments, the parts and their topology"
    );
}

#[test]
fn a_table_defined_anew_while_the_parts_are_made_leaves_none() {
    let (plain, parted) = copies("defined-anew");
    let mut changed = false;
    // Once the build watches the tables (its progress starts after that),
    // a column is added: no trigger fires, the definition changes.
    let made = create_basin_parts(&parted, SMALL_PARTS, &Stop::never(), &mut |_, _| {
        if !std::mem::replace(&mut changed, true) {
            Connection::open(&parted)
                .unwrap()
                .execute("ALTER TABLE CatchmentSP ADD COLUMN note TEXT", [])
                .unwrap();
        }
    });
    match made {
        Err(Error::Gpkg(why)) => assert!(why.contains("run `hydroplot index` again"), "{why}"),
        other => panic!("an error expected, got {other:?}"),
    }
    let db = Connection::open(&parted).unwrap();
    let ours: i64 = db
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'hydroplot_basin_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(ours, 0, "tables and triggers taken away again");
    drop(db);
    let outlet = some_outlets()[0];
    assert_eq!(
        basins(&parted, &[outlet], Layers::All),
        basins(&plain, &[outlet], Layers::All)
    );
}

#[test]
fn a_cancelled_build_leaves_parts_that_are_never_used() {
    let (plain, parted) = copies("cancel");
    let canceller = Canceller::new();
    let stop = canceller.stop_for_call();
    canceller.cancel();
    assert!(matches!(
        create_basin_parts(&parted, SMALL_PARTS, &stop, &mut |_, _| {}),
        Err(Error::Cancelled(_))
    ));
    assert_eq!(
        GeoPackage::open(&parted).unwrap().basin_parts().unwrap(),
        None
    );
    let outlet = some_outlets()[0];
    assert_eq!(
        basins(&parted, &[outlet], Layers::All),
        basins(&plain, &[outlet], Layers::All)
    );
    store_parts(&parted);
}

#[test]
fn files_without_catchments_get_no_parts_and_others_are_refused() {
    let (_, parted) = copies("refused");
    let db = Connection::open(&parted).unwrap();
    db.execute_batch(
        "PRAGMA foreign_keys = OFF; DELETE FROM gpkg_contents WHERE table_name = 'CatchmentSP';",
    )
    .unwrap();
    drop(db);
    assert!(matches!(
        create_basin_parts(&parted, SMALL_PARTS, &Stop::never(), &mut |_, _| {}).unwrap(),
        PartsOutcome::Skipped { .. }
    ));
    let text = parted.with_file_name("notes.gpkg");
    std::fs::write(&text, "not a database").unwrap();
    let refused = create_basin_parts(&text, SMALL_PARTS, &Stop::never(), &mut |_, _| {});
    assert!(
        matches!(refused, Err(Error::Gpkg(ref m)) if m.contains("not an SQLite database")),
        "{refused:?}"
    );
    assert_eq!(std::fs::read(&text).unwrap(), b"not a database");
}

/// `(type, name)` of every schema object of `path`, sorted.
fn schema(path: &Path) -> Vec<(String, String)> {
    let db = Connection::open(path).unwrap();
    let mut stmt = db
        .prepare("SELECT type, name FROM sqlite_master ORDER BY type, name")
        .unwrap();
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    rows.map(Result::unwrap).collect()
}

fn registered(path: &Path) -> Vec<String> {
    let db = Connection::open(path).unwrap();
    let mut stmt = db
        .prepare("SELECT table_name FROM gpkg_contents ORDER BY table_name")
        .unwrap();
    let rows = stmt.query_map([], |r| r.get(0)).unwrap();
    rows.map(Result::unwrap).collect()
}

#[test]
fn removing_the_index_leaves_the_file_as_it_was() {
    let (plain, parted) = copies("remove");
    let (before, listed) = (schema(&parted), registered(&parted));
    let indexed = index_geopackage(&parted, &Stop::never(), &mut |_, _| {}).unwrap();
    // The sample's 746 flowlines make no part of the default size.
    assert!(
        matches!(indexed.parts, PartsOutcome::Skipped { .. }),
        "{indexed:?}"
    );
    store_parts(&parted);
    assert_ne!(schema(&parted), before);
    let removed = unindex_geopackage(&parted, &Stop::never()).unwrap();
    assert_eq!(
        removed,
        Unindexed {
            topology_index: true,
            parts: true
        }
    );
    assert_eq!(schema(&parted), before);
    assert_eq!(registered(&parted), listed);
    // Nothing left to remove: nothing changes.
    let again = unindex_geopackage(&parted, &Stop::never()).unwrap();
    assert_eq!(
        again,
        Unindexed {
            topology_index: false,
            parts: false
        }
    );
    // An index made by hand under another name stays.
    let db = Connection::open(&plain).unwrap();
    db.execute_batch(
        "CREATE INDEX mine ON NHDFlowline_Network (comid, hydroseq, dnhydroseq, streamorde)",
    )
    .unwrap();
    drop(db);
    let mine = schema(&plain);
    index_geopackage(&plain, &Stop::never(), &mut |_, _| {}).unwrap();
    store_parts(&plain);
    let removed = unindex_geopackage(&plain, &Stop::never()).unwrap();
    assert!(!removed.topology_index && removed.parts);
    assert_eq!(schema(&plain), mine);
}

#[test]
fn catchments_keyed_by_nhdplusid_make_the_same_basins_for_several_outlets() {
    // Before, the basins of several outlets looked for `featureid` alone
    // and came out empty on such a file.
    let (plain, renamed) = copies("nhdplusid");
    Connection::open(&renamed)
        .unwrap()
        .execute(
            "ALTER TABLE CatchmentSP RENAME COLUMN featureid TO nhdplusid",
            [],
        )
        .unwrap();
    let some: Vec<i64> = some_outlets().into_iter().step_by(3).collect();
    for layers in [Layers::All, Layers::Drawn] {
        let expected = basins(&plain, &some, layers);
        assert!(expected.0.iter().filter(|b| b.is_some()).count() > 5);
        assert_eq!(basins(&renamed, &some, layers), expected, "{layers:?}");
    }
}
