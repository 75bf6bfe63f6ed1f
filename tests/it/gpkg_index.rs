//! The topology index (`hydroplot index`): created on a copy of the Yahara
//! sample with every other table unchanged, idempotent, recognizing an index
//! made by hand, and refusing files that are not NHDPlus GeoPackages without
//! changing a byte of them.

use crate::support;

use hydroplot::cancel::Stop;
use hydroplot::gpkg::{create_topology_index, GeoPackage, IndexOutcome, TOPOLOGY_INDEX};
use hydroplot::Error;
use rusqlite::Connection;
use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/yahara_sample.gpkg");

/// A fresh directory of this test's own.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "hydroplot-gpkg-index-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn sample_copy(dir: &Path) -> PathBuf {
    let path = dir.join("yahara.gpkg");
    std::fs::copy(SAMPLE, &path).unwrap();
    path
}

/// Per table: (row count, a hash of every row's values in rowid order).
fn table_digests(path: &Path) -> BTreeMap<String, (usize, u64)> {
    let conn = Connection::open(path).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    tables
        .into_iter()
        .map(|t| {
            let mut stmt = conn
                .prepare(&format!("SELECT * FROM \"{t}\" ORDER BY rowid"))
                .unwrap();
            let n = stmt.column_count();
            let mut rows = stmt.query([]).unwrap();
            let (mut count, mut h) = (0, DefaultHasher::new());
            while let Some(row) = rows.next().unwrap() {
                count += 1;
                for i in 0..n {
                    format!("{:?}", row.get_ref(i).unwrap()).hash(&mut h);
                }
            }
            (t, (count, h.finish()))
        })
        .collect()
}

/// Every schema object except indexes: (type, name, sql).
fn schema_without_indexes(path: &Path) -> Vec<(String, String, Option<String>)> {
    let conn = Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare("SELECT type, name, sql FROM sqlite_master WHERE type != 'index' ORDER BY name")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// SQLite's plan for the topology read: which index, if any, it uses.
fn topology_plan(path: &Path) -> String {
    let conn = Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare("EXPLAIN QUERY PLAN SELECT COMID, Hydroseq, DnHydroseq, StreamOrde FROM NHDFlowline_Network")
        .unwrap();
    let details: Vec<String> = stmt
        .query_map([], |r| r.get(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    details.join("; ")
}

#[test]
fn creates_the_index_and_changes_nothing_else() {
    let dir = temp_dir("create");
    let path = sample_copy(&dir);
    let tables = table_digests(&path);
    let schema = schema_without_indexes(&path);
    let topology = GeoPackage::open(&path).unwrap().read_topology().unwrap();
    assert!(!topology_plan(&path).contains(TOPOLOGY_INDEX));

    let created = create_topology_index(&path, &Stop::never()).unwrap();
    assert_eq!(
        created,
        IndexOutcome::Created {
            name: TOPOLOGY_INDEX.into(),
            table: "NHDFlowline_Network".into()
        }
    );
    // SQLite reads the topology from the index alone.
    let plan = topology_plan(&path);
    assert!(
        plan.contains(&format!("COVERING INDEX {TOPOLOGY_INDEX}")),
        "{plan}"
    );
    assert_eq!(table_digests(&path), tables);
    assert_eq!(schema_without_indexes(&path), schema);
    assert_eq!(support::index_names(&path), [TOPOLOGY_INDEX]);
    let gpkg = GeoPackage::open(&path).unwrap();
    assert_eq!(gpkg.read_topology().unwrap(), topology);
    drop(gpkg);

    // Twice is fine: the index is found, nothing changes.
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(
        create_topology_index(&path, &Stop::never()).unwrap(),
        IndexOutcome::Existing {
            name: TOPOLOGY_INDEX.into(),
            table: "NHDFlowline_Network".into()
        }
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn runs_at_once_on_one_file_take_turns() {
    // Each looked for the index, then created it: all but the first failed
    // with "index hydroplot_topology already exists".
    let dir = temp_dir("at-once");
    let path = sample_copy(&dir);
    let start = std::sync::Barrier::new(4);
    let outcomes: Vec<IndexOutcome> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    create_topology_index(&path, &Stop::never()).unwrap()
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let created = outcomes
        .iter()
        .filter(|o| matches!(o, IndexOutcome::Created { .. }))
        .count();
    assert_eq!(created, 1, "{outcomes:?}");
    assert_eq!(support::index_names(&path), [TOPOLOGY_INDEX]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_index_made_by_hand_as_the_readme_said_is_enough() {
    let dir = temp_dir("by-hand");
    let path = sample_copy(&dir);
    Connection::open(&path)
        .unwrap()
        .execute_batch(
            "CREATE INDEX topo ON NHDFlowline_Network (COMID, Hydroseq, DnHydroseq, StreamOrde);",
        )
        .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(
        create_topology_index(&path, &Stop::never()).unwrap(),
        IndexOutcome::Existing {
            name: "topo".into(),
            table: "NHDFlowline_Network".into()
        }
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(support::index_names(&path), ["topo"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Asserts `path` is refused with an `Error::Gpkg` containing `reason` and
/// left byte-for-byte as it was, with no file added beside it.
fn refused(path: &Path, reason: &str) {
    let before = std::fs::read(path).unwrap();
    let siblings = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
    match create_topology_index(path, &Stop::never()) {
        Err(Error::Gpkg(m)) => {
            assert!(m.contains(reason), "{m}");
            assert!(
                m.contains("only for NHDPlus GeoPackages, nothing was changed"),
                "{m}"
            );
        }
        other => panic!("{}: {other:?}", path.display()),
    }
    assert_eq!(std::fs::read(path).unwrap(), before, "{}", path.display());
    let after = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
    assert_eq!(after, siblings, "no journal or other file was left");
}

#[test]
fn files_that_are_not_nhdplus_geopackages_are_refused_untouched() {
    let dir = temp_dir("refuse");
    let text = dir.join("notes.gpkg");
    std::fs::write(&text, "COMID,Hydroseq\n13293970,1\n").unwrap();
    refused(&text, "not an SQLite database");

    let empty = dir.join("empty.gpkg");
    std::fs::write(&empty, b"").unwrap();
    refused(&empty, "not an SQLite database");

    let plain = dir.join("plain.sqlite");
    Connection::open(&plain)
        .unwrap()
        .execute_batch(
            "CREATE TABLE NHDFlowline_Network (COMID INTEGER, Hydroseq REAL, DnHydroseq REAL, StreamOrde INTEGER);
             INSERT INTO NHDFlowline_Network VALUES (1, 2, 3, 4);",
        )
        .unwrap();
    refused(&plain, "gpkg_contents");

    // A real GeoPackage without the network flowline layer.
    let no_flowlines = sample_copy(&dir);
    Connection::open(&no_flowlines)
        .unwrap()
        .execute_batch("PRAGMA foreign_keys = OFF; DELETE FROM gpkg_contents WHERE table_name = 'NHDFlowline_Network';")
        .unwrap();
    refused(&no_flowlines, "NHDFlowline_Network");

    let missing = dir.join("missing.gpkg");
    assert!(matches!(
        create_topology_index(&missing, &Stop::never()),
        Err(Error::Io(_))
    ));
    assert!(!missing.exists(), "a missing file is not created");
    std::fs::remove_dir_all(&dir).unwrap();
}
