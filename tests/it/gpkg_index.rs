//! The index file of `hydroplot index` on a copy of the Yahara sample: kept
//! in the index directory under a name of the file's canonical path, the
//! GeoPackage never written, used by a plot (the published counts), told
//! current or stale by its status, and refusing files that are not NHDPlus
//! GeoPackages without changing a byte of them.

use crate::support;

use hydroplot::cancel::Stop;
use hydroplot::context::Context;
use hydroplot::gpkg::{
    index_geopackage, index_path, index_status, unindex_geopackage, GeoPackage, IndexPlace,
    IndexStatus, IndexedParts, PartsOutcome, REACHES_PER_PART,
};
use hydroplot::plot::{plot_hydro, Outlet, PlotRequest};
use hydroplot::Error;
use rusqlite::Connection;
use std::path::{Path, PathBuf};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/yahara_sample.gpkg");

/// A fresh directory of this test's own.
fn temp_dir(name: &str) -> PathBuf {
    crate::scratch::temp_dir(&format!("gpkg-index-{name}"))
}

fn sample_copy(dir: &Path) -> PathBuf {
    let path = dir.join("yahara.gpkg");
    std::fs::copy(SAMPLE, &path).unwrap();
    path
}

/// Indexes `path` into `dir` with the default part size.
fn index_into(path: &Path, dir: &Path) -> hydroplot::gpkg::Indexed {
    index_geopackage(
        path,
        IndexPlace::Dir(dir),
        REACHES_PER_PART,
        2,
        &Stop::never(),
        &mut |_, _| {},
    )
    .unwrap()
}

/// The index files of `status`, each with whether it is current.
fn found(status: &IndexStatus) -> Vec<(PathBuf, bool)> {
    (status.found.iter())
        .map(|f| (f.path.clone(), f.current))
        .collect()
}

/// An offline context whose index directory is `dir`.
fn context_with_index_dir(dir: &Path) -> Context {
    let mut ctx = support::offline();
    ctx.config.set("index_dir", dir.to_str().unwrap()).unwrap();
    ctx
}

#[test]
fn the_index_is_kept_in_the_index_directory_and_the_file_never_written() {
    let dir = temp_dir("dir");
    let copy = sample_copy(&dir);
    let before = std::fs::read(&copy).unwrap();
    let indexes = dir.join("cache").join("index");
    let indexed = index_into(&copy, &indexes);
    assert!(indexed.written);
    assert!(
        matches!(indexed.parts, PartsOutcome::Skipped { .. }),
        "{indexed:?}"
    );
    // Named after the canonical path: the file's name, then its hash.
    let name = indexed
        .path
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        name.starts_with("yahara.gpkg-") && name.ends_with(".hydroplot-index"),
        "{name}"
    );
    assert_eq!(indexed.path.parent().unwrap(), indexes);
    let by_other_path = dir.join(".").join("yahara.gpkg");
    assert_eq!(
        index_path(&by_other_path, IndexPlace::Dir(&indexes)).unwrap(),
        indexed.path
    );
    let twin_dir = dir.join("twin");
    std::fs::create_dir_all(&twin_dir).unwrap();
    let twin = sample_copy(&twin_dir);
    assert_ne!(
        index_path(&twin, IndexPlace::Dir(&indexes)).unwrap(),
        indexed.path
    );
    // By plain SQL: one source row, every flowline with a comid stored.
    let db = Connection::open(&indexed.path).unwrap();
    let sources: i64 = db
        .query_row("SELECT count(*) FROM source", [], |r| r.get(0))
        .unwrap();
    assert_eq!(sources, 1);
    let blob: usize = db
        .query_row(
            "SELECT length(reaches) FROM hydroplot_basin_network",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let flowlines: usize = Connection::open(SAMPLE)
        .unwrap()
        .query_row(
            "SELECT count(*) FROM NHDFlowline_Network WHERE COMID IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        (blob, indexed.reaches),
        (support::stored_network_bytes(SAMPLE.as_ref()), flowlines)
    );
    drop(db);
    assert!(!index_into(&copy, &indexes).written, "made once");
    // A plot uses it, with the published counts, and writes nothing.
    let ctx = context_with_index_dir(&indexes);
    let mut gpkg = GeoPackage::open(&copy).unwrap();
    assert_eq!(gpkg.use_index(&indexes), Some(indexed.path.as_path()));
    drop(gpkg);
    let req = PlotRequest {
        outlets: vec![Outlet::Comid(13293970)],
        hydro_data: Some(copy.clone()),
        actually_plot: false,
        ..Default::default()
    };
    support::assert_yahara_counts(&plot_hydro(&ctx, &req, None).unwrap().data);
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    let beside: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        beside.len(),
        3,
        "the copy, the index directory, the twin: {beside:?}"
    );
    // Status: current, then stale after a write; removed on request.
    let status = index_status(&copy, &indexes).unwrap();
    assert_eq!(found(&status), [(indexed.path.clone(), true)]);
    assert!(
        matches!(status.found[0].parts, Some(IndexedParts::Skipped { .. })),
        "the sample is smaller than a part: {status:?}"
    );
    assert!(!status.in_file);
    // A write (the GeoPackage's R-tree triggers call SpatiaLite, which
    // plain SQLite lacks: the write is of them).
    Connection::open(&copy)
        .unwrap()
        .execute("DROP TRIGGER rtree_NHDFlowline_Network_geom_update1", [])
        .unwrap();
    let status = index_status(&copy, &indexes).unwrap();
    assert_eq!(found(&status), [(indexed.path.clone(), false)]);
    let mut gpkg = GeoPackage::open(&copy).unwrap();
    assert_eq!(gpkg.use_index(&indexes), None);
    drop(gpkg);
    let edited = std::fs::read(&copy).unwrap();
    let removed = unindex_geopackage(&copy, &indexes, &Stop::never()).unwrap();
    assert_eq!(removed.index_files, std::slice::from_ref(&indexed.path));
    assert!(!indexed.path.exists());
    assert_eq!(std::fs::read(&copy).unwrap(), edited);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Asserts `path` is refused with an `Error::Gpkg` containing `reason` and
/// left byte-for-byte as it was, with no file added beside it.
fn refused(path: &Path, reason: &str) {
    let before = std::fs::read(path).unwrap();
    let siblings = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
    let indexes = path.parent().unwrap().join("indexes");
    match index_geopackage(
        path,
        IndexPlace::Dir(&indexes),
        REACHES_PER_PART,
        2,
        &Stop::never(),
        &mut |_, _| {},
    ) {
        Err(Error::Gpkg(m)) => {
            assert!(m.contains(reason), "{m}");
            assert!(
                m.contains("only NHDPlus GeoPackages are indexed, nothing was changed"),
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
        index_geopackage(
            &missing,
            IndexPlace::Beside,
            REACHES_PER_PART,
            2,
            &Stop::never(),
            &mut |_, _| {}
        ),
        Err(Error::Io(_))
    ));
    assert!(!missing.exists(), "a missing file is not created");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Files of `dir` whose name holds `.hydroplot-tmp.`: temporary files.
fn temporaries(dir: &Path) -> Vec<String> {
    (std::fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".hydroplot-tmp."))
        .collect()
}

#[cfg(unix)]
#[test]
fn a_killed_index_run_leaves_no_index_or_a_whole_one_and_the_file_untouched() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let dir = temp_dir("killed");
    let copy = sample_copy(&dir);
    let before = std::fs::read(&copy).unwrap();
    let index = index_path(&copy, IndexPlace::Beside).unwrap();
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_hydroplot"))
            .args(["index", "--beside", copy.to_str().unwrap()])
            .env_remove("HYDROPLOT_INDEX_DIR")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    // How long a whole run takes here, to spread the kills over it.
    let started = Instant::now();
    assert!(run().wait().unwrap().success());
    let whole = started.elapsed();
    std::fs::remove_file(&index).unwrap();
    for point in 0..20u32 {
        let mut child = run();
        std::thread::sleep(whole * point / 20 + Duration::from_micros(u64::from(point) * 97));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        assert_eq!(std::fs::read(&copy).unwrap(), before, "kill {point}");
        if index.exists() {
            let mut gpkg = GeoPackage::open(&copy).unwrap();
            assert!(
                gpkg.use_index(Path::new("/nonexistent")).is_some(),
                "kill {point}"
            );
            assert!(gpkg.stored_network().unwrap().is_some(), "kill {point}");
        }
    }
    // The next whole run removes what killed runs left.
    assert!(run().wait().unwrap().success());
    assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));
    let mut gpkg = GeoPackage::open(&copy).unwrap();
    assert!(gpkg.use_index(Path::new("/nonexistent")).is_some());
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_first_plot_stores_the_network_for_the_next_unless_told_not_to() {
    let dir = temp_dir("first-use");
    let copy = sample_copy(&dir);
    let before = std::fs::read(&copy).unwrap();
    let indexes = dir.join("indexes");
    let mut ctx = context_with_index_dir(&indexes);
    let req = PlotRequest {
        outlets: vec![Outlet::Comid(13293970)],
        hydro_data: Some(copy.clone()),
        actually_plot: false,
        ..Default::default()
    };
    // Told not to: nothing stored.
    ctx.config.set("index", "off").unwrap();
    support::assert_yahara_counts(&plot_hydro(&ctx, &req, None).unwrap().data);
    assert!(!indexes.exists());
    // The first plot stores the network; the next one uses it.
    ctx.config.set("index", "on").unwrap();
    support::assert_yahara_counts(&plot_hydro(&ctx, &req, None).unwrap().data);
    let index = index_path(&copy, IndexPlace::Dir(&indexes)).unwrap();
    let mut gpkg = GeoPackage::open(&copy).unwrap();
    assert_eq!(gpkg.use_index(&indexes), Some(index.as_path()));
    assert!(gpkg.stored_network().unwrap().is_some());
    assert_eq!(gpkg.basin_parts().unwrap(), Some(Default::default()));
    drop(gpkg);
    support::assert_yahara_counts(&plot_hydro(&ctx, &req, None).unwrap().data);
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    // `hydroplot index` makes it again, with its parts' size.
    let indexed = index_into(&copy, &indexes);
    assert!(indexed.written && indexed.path == index);
    // An index directory that cannot be made: the plot goes on.
    std::fs::write(dir.join("a-file"), "").unwrap();
    let ctx = context_with_index_dir(&dir.join("a-file").join("indexes"));
    let other = dir.join("other.gpkg");
    std::fs::copy(SAMPLE, &other).unwrap();
    let req = PlotRequest {
        hydro_data: Some(other),
        ..req
    };
    support::assert_yahara_counts(&plot_hydro(&ctx, &req, None).unwrap().data);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What the read-only mount test runs in a mount namespace of its own
/// (`unshare -rm`: as root, or as a user where user namespaces are
/// allowed): `$1` bind-mounted read-only on `$2`, then `$3` (hydroplot)
/// indexes and plots the copy of the sample there, with its index in `$4`.
const ON_A_READ_ONLY_MOUNT: &str = r#"set -e
mount --bind "$1" "$2"
mount -o remount,bind,ro "$2"
file="$2/yahara.gpkg"
if touch "$2/probe" 2>/dev/null; then echo "the mount is writable"; exit 3; fi
"$3" index --option index_dir="$4" "$file"
"$3" index --status --option index_dir="$4" "$file"
"$3" plot --comid 13293970 --hydro-data "$file" --no-plot --option index_dir="$4"
if "$3" index --beside "$file"; then echo "--beside wrote on a read-only mount"; exit 4; fi
"#;

#[test]
fn a_geopackage_on_a_read_only_mount_is_indexed_and_plotted() {
    use std::process::Command;
    let unshare = Command::new("unshare")
        .args(["-rm", "true"])
        .output()
        .ok()
        .filter(|o| o.status.success());
    let what = "unshare -rm (util-linux; root, or user namespaces allowed)";
    if support::tool::required(unshare, what).is_none() {
        return;
    }
    let dir = temp_dir("read-only-mount");
    let (data, mount, indexes) = (dir.join("data"), dir.join("mount"), dir.join("indexes"));
    for d in [&data, &mount] {
        std::fs::create_dir_all(d).unwrap();
    }
    let copy = sample_copy(&data);
    let before = std::fs::read(&copy).unwrap();
    let out = Command::new("unshare")
        .args(["-rm", "sh", "-c", ON_A_READ_ONLY_MOUNT, "sh"])
        .args([
            &data,
            &mount,
            Path::new(env!("CARGO_BIN_EXE_hydroplot")),
            &indexes,
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // Indexed into the index directory, current, and used: the published counts.
    assert!(stdout.contains("(current)"), "{stdout}");
    assert!(
        stdout.contains("flowline                 251 features"),
        "{stdout}"
    );
    assert!(
        stdout.contains("catchment                250 features"),
        "{stdout}"
    );
    // --beside names the mount it cannot write on.
    assert!(stderr.contains("yahara.gpkg.hydroplot-index"), "{stderr}");
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    assert_eq!(
        std::fs::read_dir(&data).unwrap().count(),
        1,
        "only the copy in its folder"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
