//! Basin parts (`hydroplot index`): a basin folded from stored parts is the
//! basin folded from every catchment, bit for bit; stale parts are never
//! used (any write to the GeoPackage, in rollback-journal or WAL mode, or a
//! copy over it); the GeoPackage is never written; the index of release
//! 0.2 inside a file is still read while current, and removed on request.

use crate::support;

use hydroplot::cancel::{Canceller, Stop};
use hydroplot::context::{Context, LogLevel, Observer};
use hydroplot::gpkg::{
    index_geopackage, index_path, index_status, unindex_geopackage, GeoPackage, IndexPlace,
    IndexedParts, PartsOutcome, Unindexed, BASIN_PARTS, REACHES_PER_PART,
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
    let dir = crate::scratch::temp_dir(&format!("basin-parts-{name}"));
    let (plain, parted) = (dir.join("plain.gpkg"), dir.join("parted.gpkg"));
    std::fs::copy(NEW_HOPE, &plain).unwrap();
    std::fs::copy(NEW_HOPE, &parted).unwrap();
    (plain, parted)
}

/// Indexes `path` with parts of [`SMALL_PARTS`] reaches, beside it (where
/// plots look first); the number of parts.
fn store_parts(path: &Path) -> usize {
    let mut heard = Vec::new();
    let made = index_geopackage(
        path,
        IndexPlace::Beside,
        SMALL_PARTS,
        2,
        &Stop::never(),
        &mut |done, all| heard.push((done, all)),
    );
    match made.unwrap().parts {
        PartsOutcome::Parts { parts } => {
            let expected: Vec<(usize, usize)> = (0..=parts).map(|done| (done, parts)).collect();
            assert!(
                heard.is_empty() || heard == expected,
                "progress from 0 to every part"
            );
            parts
        }
        other => panic!("parts expected, got {other:?}"),
    }
}

/// A copy of New Hope named after `name`, indexed beside with its parts
/// ([`store_parts`]), and that copy opened with its current index.
fn indexed_copy(name: &str) -> (PathBuf, GeoPackage) {
    let (_, parted) = copies(name);
    store_parts(&parted);
    let mut gpkg = GeoPackage::open(&parted).unwrap();
    gpkg.use_index(Path::new("/nonexistent")).expect("current");
    (parted, gpkg)
}

/// The index file beside `path`, opened with plain SQLite.
fn index_db(path: &Path) -> Connection {
    Connection::open(index_path(path, IndexPlace::Beside).unwrap()).unwrap()
}

/// `path` and its `-wal`, byte for byte.
fn bytes(path: &Path) -> (Vec<u8>, Option<Vec<u8>>) {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    (
        std::fs::read(path).unwrap(),
        std::fs::read(PathBuf::from(wal)).ok(),
    )
}

/// The basins (as geometries) and plot box of `outlets` from `file`,
/// folded (flowline-only, or the map's layers alone).
fn basins(file: &Path, outlets: &[i64], layers: Layers) -> (Vec<Option<geo::Geometry>>, [f64; 4]) {
    basins_with(&offline(), file, outlets, layers)
}

/// [`basins`] with the context `ctx`.
fn basins_with(
    ctx: &Context,
    file: &Path,
    outlets: &[i64],
    layers: Layers,
) -> (Vec<Option<geo::Geometry>>, [f64; 4]) {
    let req = PlotRequest {
        outlets: outlets.iter().map(|&c| Outlet::Comid(c)).collect(),
        hydro_data: Some(file.to_path_buf()),
        actually_plot: false,
        flowline_only: Some(layers != Layers::Drawn),
        layers,
        ..Default::default()
    };
    let d = plot_hydro(ctx, &req, None).unwrap().data;
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

/// The rows of the parts table of the index file beside `path`, in comid
/// order, every column as stored.
fn stored_part_rows(path: &Path) -> Vec<Vec<rusqlite::types::Value>> {
    let db = index_db(path);
    let mut stmt = db
        .prepare(&format!("SELECT * FROM {BASIN_PARTS} ORDER BY 1"))
        .unwrap();
    let columns = stmt.column_count();
    stmt.query_map([], |r| (0..columns).map(|i| r.get(i)).collect())
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn the_parts_are_the_same_bytes_on_one_thread_or_three() {
    let (one, three) = copies("threads");
    for (path, threads) in [(&one, 1), (&three, 3)] {
        index_geopackage(
            path,
            IndexPlace::Beside,
            SMALL_PARTS,
            threads,
            &Stop::never(),
            &mut |_, _| {},
        )
        .unwrap();
    }
    let rows = stored_part_rows(&one);
    assert!(rows.len() >= 20, "{} parts", rows.len());
    assert_eq!(rows, stored_part_rows(&three));
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
    // Emptying the stored rings in the index file leaves the large basin
    // with only its catchments outside the parts.
    let (plain, parted) = copies("read");
    store_parts(&parted);
    let outlet = some_outlets()[0];
    index_db(&parted)
        .execute(&format!("UPDATE {BASIN_PARTS} SET outline = NULL"), [])
        .unwrap();
    assert_ne!(
        basins(&parted, &[outlet], Layers::All),
        basins(&plain, &[outlet], Layers::All)
    );
}

/// The flowlines (geometries, in the order given) of the upstream of
/// `outlet` from `file`.
fn flowlines(file: &Path, outlet: i64) -> Vec<geo::Geometry> {
    let req = PlotRequest {
        outlets: vec![Outlet::Comid(outlet)],
        hydro_data: Some(file.to_path_buf()),
        actually_plot: false,
        flowline_only: Some(true),
        ..Default::default()
    };
    let d = plot_hydro(&offline(), &req, None).unwrap().data;
    let features = d.layer(Layer::Flowline).to_features().into_iter();
    features.filter_map(|f| f.geometry).collect()
}

#[test]
fn flowlines_are_read_by_the_rowids_the_index_stores() {
    let (plain, parted) = copies("rowids");
    store_parts(&parted);
    for outlet in some_outlets() {
        assert_eq!(
            flowlines(&parted, outlet),
            flowlines(&plain, outlet),
            "outlet {outlet}"
        );
    }
    // The stored rowids shifted by one: other rows are read.
    let db = index_db(&parted);
    let blob: Vec<u8> = db
        .query_row("SELECT rowids FROM hydroplot_flowline_rowids", [], |r| {
            r.get(0)
        })
        .unwrap();
    let shifted: Vec<u8> = (blob.chunks_exact(8))
        .flat_map(|b| (i64::from_le_bytes(b.try_into().unwrap()) + 1).to_le_bytes())
        .collect();
    db.execute(
        "UPDATE hydroplot_flowline_rowids SET rowids = ?1",
        [shifted],
    )
    .unwrap();
    drop(db);
    let differ = (some_outlets().into_iter())
        .filter(|&o| flowlines(&parted, o) != flowlines(&plain, o))
        .count();
    assert!(differ > 0);
}

#[test]
fn indexing_and_plotting_leave_the_geopackage_byte_identical() {
    let (plain, parted) = copies("untouched");
    let before = bytes(&parted);
    let listed = |dir: &Path| {
        let mut names: Vec<_> = (std::fs::read_dir(dir).unwrap())
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    let parts = store_parts(&parted);
    assert!(parts >= 20, "{parts} parts");
    assert_eq!(bytes(&parted), before);
    // Only the index file was added beside it: no journal, no temporary.
    let dir = parted.parent().unwrap();
    assert_eq!(
        listed(dir),
        ["parted.gpkg", "parted.gpkg.hydroplot-index", "plain.gpkg"]
    );
    // The index, by plain SQL: the network of every flowline, the parts.
    let db = index_db(&parted);
    let blob: usize = db
        .query_row(
            "SELECT length(reaches) FROM hydroplot_basin_network",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(blob, support::stored_network_bytes(&parted));
    let rows: usize = db
        .query_row(&format!("SELECT count(*) FROM {BASIN_PARTS}"), [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(rows, parts);
    let recorded: Vec<(String, i64, i64)> = db
        .prepare("SELECT name, min_rowid, max_rowid FROM source_tables ORDER BY position")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let plain_db = Connection::open(&plain).unwrap();
    let range = |t: &str| -> (String, i64, i64) {
        let sql = format!("SELECT min(rowid), max(rowid) FROM {t}");
        let (min, max) = plain_db
            .query_row(&sql, [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        (t.to_string(), min, max)
    };
    assert_eq!(
        recorded,
        [range("NHDFlowline_Network"), range("CatchmentSP")]
    );
    drop((db, plain_db));
    // Made once: the second run keeps it.
    let again = index_geopackage(
        &parted,
        IndexPlace::Beside,
        SMALL_PARTS,
        2,
        &Stop::never(),
        &mut |_, _| {},
    )
    .unwrap();
    assert!(!again.written);
    assert_eq!(again.parts, PartsOutcome::Parts { parts });
    for outlet in some_outlets().into_iter().take(4) {
        for layers in [Layers::All, Layers::Drawn] {
            basins(&parted, &[outlet], layers);
        }
    }
    assert_eq!(bytes(&parted), before, "plots leave it as it was");
    assert_eq!(listed(dir).len(), 3);
}

#[cfg(unix)]
#[test]
fn a_read_only_geopackage_is_indexed_and_plotted_alike() {
    use std::os::unix::fs::PermissionsExt;
    let (plain, parted) = copies("read-only");
    let before = bytes(&parted);
    let read_only = std::fs::Permissions::from_mode(0o444);
    std::fs::set_permissions(&parted, read_only).unwrap();
    store_parts(&parted);
    for outlet in some_outlets().into_iter().take(6) {
        assert_eq!(
            basins(&parted, &[outlet], Layers::All),
            basins(&plain, &[outlet], Layers::All),
            "outlet {outlet}"
        );
    }
    assert_eq!(bytes(&parted), before);
    std::fs::set_permissions(&parted, std::fs::Permissions::from_mode(0o644)).unwrap();
}

#[test]
fn a_changed_column_or_srs_leaves_the_parts_unused() {
    for change in [
        "ALTER TABLE CatchmentSP ADD COLUMN note TEXT",
        "UPDATE gpkg_geometry_columns SET srs_id = 4326 WHERE table_name = 'CatchmentSP'",
    ] {
        let (_, parted) = copies("schema");
        store_parts(&parted);
        Connection::open(&parted)
            .unwrap()
            .execute(change, [])
            .unwrap();
        let mut gpkg = GeoPackage::open(&parted).unwrap();
        assert_eq!(gpkg.use_index(Path::new("/nonexistent")), None, "{change}");
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
    index_db(&parted)
        .execute("UPDATE hydroplot_basin_network SET reaches = x'00'", [])
        .unwrap();
    let mut gpkg = GeoPackage::open(&parted).unwrap();
    assert!(gpkg.use_index(Path::new("/nonexistent")).is_some());
    assert!(gpkg.basin_parts().unwrap().is_some());
    assert!(gpkg.stored_network().unwrap().is_none());
    drop(gpkg);
    let outlet = some_outlets()[0];
    assert_eq!(
        basins(&parted, &[outlet], Layers::All),
        basins(&plain, &[outlet], Layers::All)
    );
    assert_eq!(store_parts(&parted), parts);
    let mut gpkg = GeoPackage::open(&parted).unwrap();
    gpkg.use_index(Path::new("/nonexistent"));
    assert!(gpkg.stored_network().unwrap().is_some());
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
fn the_stored_network_is_the_flowlines_and_follows_their_writes() {
    let (_, parted) = copies("topology");
    store_parts(&parted);
    let as_tuples = |reaches: &[Reach]| -> Vec<(i64, i64, i64, i32)> {
        (reaches.iter())
            .map(|r| (r.comid, r.hydroseq, r.dnhydroseq, r.streamorder))
            .collect()
    };
    let mut gpkg = GeoPackage::open(&parted).unwrap();
    gpkg.use_index(Path::new("/nonexistent")).expect("current");
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
    let mut gpkg = GeoPackage::open(&parted).unwrap();
    assert_eq!(gpkg.use_index(Path::new("/nonexistent")), None);
    assert!(gpkg.stored_network().unwrap().is_none());
    let (reaches, network) = gpkg.read_network(2).unwrap();
    assert_eq!(as_tuples(&reaches), topology_by_sql(&parted));
    assert_eq!(network.downstream(), Network::new(&reaches).downstream());
}

#[test]
fn an_upstream_read_in_place_is_the_whole_networks_upstream() {
    let (_, mut gpkg) = indexed_copy("in-place");
    let (all, whole) = gpkg.read_network(1).unwrap();
    let outlets = some_outlets();
    // One outlet at a time, then several at once.
    let asks = (outlets.iter().map(|&o| vec![o])).chain([outlets[..3].to_vec()]);
    for ask in asks {
        let ((reaches, network), total) = gpkg.upstream_from_index(&ask, false).expect("read");
        assert_eq!(total, all.len());
        let at: Vec<usize> = (whole.index_of_each(&ask).into_iter())
            .map(Option::unwrap)
            .collect();
        let mask = whole.upstream_mask(&at);
        let expected: Vec<usize> = (0..all.len()).filter(|&i| mask[i]).collect();
        let as_reaches: Vec<Reach> = expected.iter().map(|&i| all[i]).collect();
        assert_eq!(reaches, as_reaches, "outlets {ask:?}");
        // The same links, as indexes into the whole network.
        let downstream: Vec<Option<usize>> = (whole.downstream().into_iter())
            .enumerate()
            .filter(|&(i, _)| mask[i])
            .map(|(_, d)| d.filter(|&d| mask[d]))
            .collect();
        let mapped: Vec<Option<usize>> = (network.downstream().into_iter())
            .map(|d| d.map(|d| expected[d]))
            .collect();
        assert_eq!(mapped, downstream, "outlets {ask:?}");
    }
    // A comid that no flowline has: no upstream in place.
    assert!(gpkg.upstream_from_index(&[-5], false).is_none());
}

/// The writes of the stale tests, each to be made to both copies.
const WRITES: [&str; 4] = [
    "DELETE FROM CatchmentSP WHERE fid = (SELECT min(fid) FROM CatchmentSP)",
    "DELETE FROM NHDFlowline_Network WHERE fid = (SELECT max(fid) FROM NHDFlowline_Network)",
    "INSERT INTO CatchmentSP (featureid) VALUES (1)",
    "UPDATE CatchmentSP SET geom = (SELECT geom FROM CatchmentSP WHERE fid = 2) WHERE fid = 1",
];

/// Asserts the index of `parted` is not used and its basins are those of
/// `plain` (the same data, never indexed).
fn unused_and_alike(plain: &Path, parted: &Path, what: &str) {
    let mut gpkg = GeoPackage::open(parted).unwrap();
    assert_eq!(gpkg.use_index(Path::new("/nonexistent")), None, "{what}");
    drop(gpkg);
    let outlet = some_outlets()[0];
    assert_eq!(
        basins(parted, &[outlet], Layers::All),
        basins(plain, &[outlet], Layers::All),
        "{what}"
    );
}

#[test]
fn a_write_in_rollback_journal_mode_leaves_the_index_unused_until_made_again() {
    for change in WRITES {
        let (plain, parted) = copies("stale");
        store_parts(&parted);
        for file in [&plain, &parted] {
            let db = Connection::open(file).unwrap();
            drop_rtree_triggers(&db);
            db.execute(change, []).unwrap();
        }
        unused_and_alike(&plain, &parted, change);
        // Made again, it holds the change.
        store_parts(&parted);
        let outlet = some_outlets()[0];
        assert_eq!(
            basins(&parted, &[outlet], Layers::All),
            basins(&plain, &[outlet], Layers::All),
            "{change}, made again"
        );
    }
}

#[test]
fn a_write_in_wal_mode_leaves_the_index_unused() {
    for change in WRITES {
        let (plain, parted) = copies("wal");
        for file in [&plain, &parted] {
            let db = Connection::open(file).unwrap();
            drop_rtree_triggers(&db);
            db.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
                .unwrap();
        }
        store_parts(&parted);
        // The writer stays open: its write is in the WAL alone, the file's
        // header as it was.
        let writers: Vec<Connection> = [&plain, &parted]
            .map(|file| {
                let db = Connection::open(file).unwrap();
                db.execute(change, []).unwrap();
                db
            })
            .into();
        unused_and_alike(&plain, &parted, change);
        drop(writers);
        unused_and_alike(&plain, &parted, change);
    }
}

#[test]
fn a_copy_over_the_file_leaves_the_index_unused() {
    let (plain, parted) = copies("copied-over");
    store_parts(&parted);
    // The same bytes copied over it: not the file that was indexed.
    std::fs::copy(NEW_HOPE, &parted).unwrap();
    unused_and_alike(&plain, &parted, "same bytes");
    // Other bytes of the same length, renamed over it.
    store_parts(&parted);
    let other = parted.with_file_name("other.gpkg");
    std::fs::copy(NEW_HOPE, &other).unwrap();
    for file in [&plain, &other] {
        let db = Connection::open(file).unwrap();
        drop_rtree_triggers(&db);
        db.execute(WRITES[0], []).unwrap();
    }
    std::fs::rename(&other, &parted).unwrap();
    unused_and_alike(&plain, &parted, "renamed over");
}

#[test]
fn a_write_while_the_index_is_made_leaves_none() {
    let (plain, parted) = copies("written-meanwhile");
    let mut changed = false;
    let made = index_geopackage(
        &parted,
        IndexPlace::Beside,
        SMALL_PARTS,
        2,
        &Stop::never(),
        &mut |_, _| {
            if !std::mem::replace(&mut changed, true) {
                Connection::open(&parted)
                    .unwrap()
                    .execute("ALTER TABLE CatchmentSP ADD COLUMN note TEXT", [])
                    .unwrap();
            }
        },
    );
    match made {
        Err(Error::Gpkg(why)) => assert!(why.contains("run `hydroplot index` again"), "{why}"),
        other => panic!("an error expected, got {other:?}"),
    }
    assert!(!index_path(&parted, IndexPlace::Beside).unwrap().exists());
    let outlet = some_outlets()[0];
    assert_eq!(
        basins(&parted, &[outlet], Layers::All),
        basins(&plain, &[outlet], Layers::All)
    );
}

#[test]
fn a_cancelled_build_writes_nothing() {
    let (_, parted) = copies("cancel");
    let canceller = Canceller::new();
    let stop = canceller.stop_for_call();
    canceller.cancel();
    assert!(matches!(
        index_geopackage(
            &parted,
            IndexPlace::Beside,
            SMALL_PARTS,
            2,
            &stop,
            &mut |_, _| {}
        ),
        Err(Error::Cancelled(_))
    ));
    assert_eq!(
        std::fs::read_dir(parted.parent().unwrap()).unwrap().count(),
        2
    );
    store_parts(&parted);
}

#[test]
fn two_runs_at_once_both_end_with_a_current_index() {
    let (plain, parted) = copies("concurrent");
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| store_parts(&parted));
        }
    });
    let mut gpkg = GeoPackage::open(&parted).unwrap();
    assert!(gpkg.use_index(Path::new("/nonexistent")).is_some());
    drop(gpkg);
    assert_eq!(
        std::fs::read_dir(parted.parent().unwrap()).unwrap().count(),
        3
    );
    let outlet = some_outlets()[0];
    assert_eq!(
        basins(&parted, &[outlet], Layers::All),
        basins(&plain, &[outlet], Layers::All)
    );
}

#[test]
fn a_plot_keeps_the_index_it_opened() {
    let (parted, gpkg) = indexed_copy("held");
    let parts = gpkg.basin_parts().unwrap().expect("current");
    // Another run replaces it with parts of another size.
    let other = index_geopackage(
        &parted,
        IndexPlace::Beside,
        2 * SMALL_PARTS,
        2,
        &Stop::never(),
        &mut |_, _| {},
    );
    assert!(other.unwrap().written);
    assert_eq!(gpkg.basin_parts().unwrap(), Some(parts));
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
    let indexed = index_geopackage(
        &parted,
        IndexPlace::Beside,
        SMALL_PARTS,
        2,
        &Stop::never(),
        &mut |_, _| {},
    );
    assert!(matches!(
        indexed.unwrap().parts,
        PartsOutcome::Skipped { .. }
    ));
    let text = parted.with_file_name("notes.gpkg");
    std::fs::write(&text, "not a database").unwrap();
    let refused = index_geopackage(
        &text,
        IndexPlace::Beside,
        SMALL_PARTS,
        2,
        &Stop::never(),
        &mut |_, _| {},
    );
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

/// The index release 0.2 wrote into a copy of the New Hope sample (its
/// topology index, then parts of 20 reaches), as SQL statements.
const RELEASE_0_2_INDEX: &str = include_str!("../data/new_hope_release_0_2_index.sql");

#[test]
fn an_index_of_release_0_2_in_the_file_is_read_while_current_and_removed() {
    let (plain, parted) = copies("release-0-2");
    drop_rtree_triggers(&Connection::open(&parted).unwrap());
    let (before, listed) = (schema(&parted), registered(&parted));
    Connection::open(&parted)
        .unwrap()
        .execute_batch(RELEASE_0_2_INDEX)
        .unwrap();
    let gpkg = GeoPackage::open(&parted).unwrap();
    assert!(gpkg.basin_parts().unwrap().is_some_and(|p| p.len() >= 20));
    assert!(gpkg.stored_network().unwrap().is_some());
    drop(gpkg);
    for outlet in some_outlets() {
        assert_eq!(
            basins(&parted, &[outlet], Layers::All),
            basins(&plain, &[outlet], Layers::All),
            "outlet {outlet}"
        );
    }
    // Its triggers still withdraw it at a write.
    let db = Connection::open(&parted).unwrap();
    db.execute(
        "UPDATE CatchmentSP SET featureid = featureid WHERE fid = 1",
        [],
    )
    .unwrap();
    drop(db);
    assert_eq!(
        GeoPackage::open(&parted).unwrap().basin_parts().unwrap(),
        None
    );
    // Removed on request, with an index file beside it.
    store_parts(&parted);
    let removed = unindex_geopackage(&parted, Path::new("/nonexistent"), &Stop::never()).unwrap();
    assert_eq!(
        removed,
        Unindexed {
            index_files: vec![index_path(&parted, IndexPlace::Beside).unwrap()],
            topology_index: true,
            parts: true
        }
    );
    assert_eq!(schema(&parted), before);
    assert_eq!(registered(&parted), listed);
    // Nothing left to remove: the file is not written.
    let now = bytes(&parted);
    let again = unindex_geopackage(&parted, Path::new("/nonexistent"), &Stop::never()).unwrap();
    assert_eq!(
        again,
        Unindexed {
            index_files: Vec::new(),
            topology_index: false,
            parts: false
        }
    );
    assert_eq!(bytes(&parted), now);
}

#[test]
fn the_default_part_size_makes_no_part_of_the_sample() {
    let (_, parted) = copies("default-size");
    let indexed = index_geopackage(
        &parted,
        IndexPlace::Beside,
        REACHES_PER_PART,
        2,
        &Stop::never(),
        &mut |_, _| {},
    )
    .unwrap();
    // The sample's 746 flowlines make no part of the default size; the
    // network is stored all the same.
    assert!(
        matches!(indexed.parts, PartsOutcome::Skipped { .. }),
        "{indexed:?}"
    );
    assert_eq!(indexed.reaches, topology_by_sql(&parted).len());
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

/// The progress of stage `"basin_parts"` heard by an observer.
#[derive(Default)]
struct PartsProgress(std::sync::Mutex<Vec<(u64, u64)>>);

impl Observer for PartsProgress {
    fn log(&self, _: LogLevel, _: &str) {}
    fn progress(&self, stage: &str, done: u64, total: u64) {
        if stage == "basin_parts" {
            self.0.lock().unwrap().push((done, total));
        }
    }
}

impl PartsProgress {
    /// What was heard since the last look.
    fn heard(&self) -> Vec<(u64, u64)> {
        std::mem::take(&mut self.0.lock().unwrap())
    }
}

/// The comids upstream of `outlet` (itself included), by plain SQL.
fn upstream_by_sql(file: &Path, outlet: i64) -> std::collections::HashSet<i64> {
    let db = Connection::open(file).unwrap();
    let mut stmt = db
        .prepare(
            "WITH RECURSIVE up(comid, hydroseq) AS (
                 SELECT comid, hydroseq FROM NHDFlowline_Network WHERE comid = ?1
                 UNION SELECT f.comid, f.hydroseq FROM NHDFlowline_Network f JOIN up ON f.dnhydroseq = up.hydroseq)
             SELECT CAST(comid AS INTEGER) FROM up",
        )
        .unwrap();
    let rows = stmt.query_map([outlet], |r| r.get(0)).unwrap();
    rows.map(Result::unwrap).collect()
}

/// The comids closing the parts in the index file `index`, by plain SQL.
fn parts_by_sql(index: &Path) -> std::collections::BTreeSet<i64> {
    let db = Connection::open(index).unwrap();
    let mut stmt = db
        .prepare(&format!("SELECT comid FROM {BASIN_PARTS}"))
        .unwrap();
    let rows = stmt.query_map([], |r| r.get(0)).unwrap();
    rows.map(Result::unwrap).collect()
}

#[test]
fn a_large_basin_makes_the_parts_it_needs_at_its_first_plot() {
    let (plain, parted) = copies("on-first-use");
    let before = bytes(&parted);
    let indexes = parted.parent().unwrap().join("indexes");
    let index = index_path(&parted, IndexPlace::Dir(&indexes)).unwrap();
    let heard = std::sync::Arc::new(PartsProgress::default());
    let mut ctx = offline().with_observer(Some(heard.clone()));
    ctx.config.index_dir = indexes.clone();
    ctx.config.reaches_per_part = Some(SMALL_PARTS);
    let mut never_indexed = offline();
    never_indexed.config.index = false;
    let plain_basin = |outlet: i64| basins_with(&never_indexed, &plain, &[outlet], Layers::All);
    // Every part of the network, and those inside a basin, which holds a
    // part whole when it holds its closing reach.
    let reaches: Vec<Reach> = (topology_by_sql(&parted).into_iter())
        .map(|(comid, hydroseq, dnhydroseq, streamorder)| Reach {
            comid,
            hydroseq,
            dnhydroseq,
            streamorder,
        })
        .collect();
    let every_part: Vec<i64> = (Network::new(&reaches).parts(SMALL_PARTS).into_iter())
        .map(|i| reaches[i].comid)
        .collect();
    let parts_in = |outlet: i64| -> std::collections::BTreeSet<i64> {
        let upstream = upstream_by_sql(&parted, outlet);
        (every_part.iter().copied())
            .filter(|c| upstream.contains(c))
            .collect()
    };
    let outlets = some_outlets();
    let largest = outlets[0];
    let small = *outlets
        .iter()
        .find(|&&o| upstream_by_sql(&parted, o).len() < SMALL_PARTS)
        .expect("a basin smaller than a part");
    let middle = *outlets
        .iter()
        .find(|&&o| {
            let inside = parts_in(o).len();
            inside >= 2 && inside * 2 < parts_in(largest).len()
        })
        .expect("a basin of a few parts");
    assert!(parts_in(largest).is_superset(&parts_in(middle)));

    // A small basin: the network stored, no part made.
    assert_eq!(
        basins_with(&ctx, &parted, &[small], Layers::All),
        plain_basin(small)
    );
    assert!(parts_by_sql(&index).is_empty());
    assert_eq!(heard.heard(), []);
    let status = index_status(&parted, &indexes).unwrap();
    assert_eq!(
        status.found[0].parts,
        Some(IndexedParts::Partial { parts: 0 })
    );
    // A larger basin: exactly the parts inside it, and its basin is the
    // basin folded from every catchment; the parts made are announced.
    let made = |outlet: i64, layers: Layers| {
        let from_parts = basins_with(&ctx, &parted, &[outlet], layers);
        assert_eq!(
            from_parts,
            basins_with(&never_indexed, &plain, &[outlet], layers)
        );
    };
    made(middle, Layers::All);
    assert_eq!(parts_by_sql(&index), parts_in(middle));
    let total = parts_in(middle).len() as u64;
    let expected: Vec<(u64, u64)> = (0..=total).map(|done| (done, total)).collect();
    assert_eq!(heard.heard(), expected);
    // Plotted again, from the stored parts: nothing more to make.
    made(middle, Layers::Drawn);
    assert_eq!(heard.heard(), []);
    // The largest basin adds the parts it lacks, the others kept.
    made(largest, Layers::All);
    assert_eq!(parts_by_sql(&index), parts_in(largest));
    let added = (parts_in(largest).len() - parts_in(middle).len()) as u64;
    assert_eq!(heard.heard().last(), Some(&(added, added)));
    for outlet in outlets.iter().step_by(2) {
        made(*outlet, Layers::All);
    }
    assert_eq!(heard.heard(), [], "every basin plotted lies in the largest");
    assert_eq!(bytes(&parted), before, "the GeoPackage is only read");
    let status = index_status(&parted, &indexes).unwrap();
    let stored = parts_in(largest).len();
    assert_eq!(
        status.found[0].parts,
        Some(IndexedParts::Partial { parts: stored })
    );

    // `hydroplot index` completes it: every part of the network, those
    // stored kept, the others made.
    let mut last = None;
    let indexed = index_geopackage(
        &parted,
        IndexPlace::Dir(&indexes),
        SMALL_PARTS,
        2,
        &Stop::never(),
        &mut |done, all| last = Some((done, all)),
    )
    .unwrap();
    assert!(indexed.written);
    let all = every_part.len();
    assert_eq!(last, Some((all - stored, all - stored)));
    assert_eq!(indexed.parts, PartsOutcome::Parts { parts: all });
    assert_eq!(parts_by_sql(&index).len(), all);
    let status = index_status(&parted, &indexes).unwrap();
    assert_eq!(
        status.found[0].parts,
        Some(IndexedParts::Complete { parts: all })
    );
    for outlet in outlets.iter().step_by(3) {
        made(*outlet, Layers::All);
    }
    assert_eq!(heard.heard(), []);
    assert_eq!(bytes(&parted), before);
}

#[test]
fn a_first_plot_stores_its_network_and_parts_together_or_uses_them_unstored() {
    let (plain, parted) = copies("first-plot-parts");
    let before = bytes(&parted);
    let mut never_indexed = offline();
    never_indexed.config.index = false;
    let largest = some_outlets()[0];
    let plain_basin = basins_with(&never_indexed, &plain, &[largest], Layers::All);
    let heard = std::sync::Arc::new(PartsProgress::default());
    let mut ctx = offline().with_observer(Some(heard.clone()));
    ctx.config.reaches_per_part = Some(SMALL_PARTS);
    // An index directory that cannot be made: the parts made are used all
    // the same, and nothing is stored.
    let blocker = parted.parent().unwrap().join("a-file");
    std::fs::write(&blocker, "").unwrap();
    ctx.config.index_dir = blocker.join("indexes");
    assert_eq!(
        basins_with(&ctx, &parted, &[largest], Layers::All),
        plain_basin
    );
    let made = heard.heard().last().copied().expect("parts made");
    assert!(made.0 == made.1 && made.1 > 1, "{made:?}");
    // A directory that can be written: the network and the parts, in one
    // index file that the next plot uses whole.
    let indexes = parted.parent().unwrap().join("indexes");
    ctx.config.index_dir = indexes.clone();
    assert_eq!(
        basins_with(&ctx, &parted, &[largest], Layers::All),
        plain_basin
    );
    assert_eq!(heard.heard().last(), Some(&made));
    let status = index_status(&parted, &indexes).unwrap();
    let parts = made.1 as usize;
    assert_eq!(status.found[0].parts, Some(IndexedParts::Partial { parts }));
    let mut gpkg = GeoPackage::open(&parted).unwrap();
    assert!(gpkg.use_index(&indexes).is_some());
    assert!(gpkg.stored_network().unwrap().is_some());
    assert_eq!(gpkg.basin_parts().unwrap().map(|p| p.len()), Some(parts));
    drop(gpkg);
    assert_eq!(
        basins_with(&ctx, &parted, &[largest], Layers::Drawn),
        basins_with(&never_indexed, &plain, &[largest], Layers::Drawn)
    );
    assert_eq!(heard.heard(), [], "nothing more to make");
    assert_eq!(bytes(&parted), before, "the GeoPackage is only read");
}

#[test]
fn no_part_is_made_with_the_index_off_or_beside_complete_parts() {
    let (_, parted) = copies("index-off");
    let indexes = parted.parent().unwrap().join("indexes");
    let heard = std::sync::Arc::new(PartsProgress::default());
    let mut ctx = offline().with_observer(Some(heard.clone()));
    ctx.config.index_dir = indexes.clone();
    ctx.config.reaches_per_part = Some(SMALL_PARTS);
    ctx.config.index = false;
    let largest = some_outlets()[0];
    basins_with(&ctx, &parted, &[largest], Layers::All);
    assert!(!indexes.exists());
    assert_eq!(heard.heard(), []);
    // Parts of another size, complete: kept as they are.
    ctx.config.index = true;
    let parts = store_parts(&parted);
    let beside = index_path(&parted, IndexPlace::Beside).unwrap();
    let stored = parts_by_sql(&beside);
    ctx.config.reaches_per_part = Some(SMALL_PARTS * 2);
    basins_with(&ctx, &parted, &[largest], Layers::All);
    assert_eq!(heard.heard(), []);
    assert_eq!(parts_by_sql(&beside), stored);
    assert_eq!(stored.len(), parts);
    assert!(!indexes.exists());
}
