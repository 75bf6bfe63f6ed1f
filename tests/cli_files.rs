//! File safety through the CLI, as a new user meets it: a cache or output
//! path on a file the library did not create never changes that file.
//! Offline (local data and the embedded sample); bytes compared before and after.

use std::path::{Path, PathBuf};
use std::process::Command;

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/yahara_sample.gpkg");

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hydroplot-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `hydroplot plot ARGS` in `dir`: (success, stdout, stderr).
fn plot(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hydroplot"))
        .arg("plot")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.success(), text(out.stdout), text(out.stderr))
}

#[test]
fn a_cache_file_on_a_users_file_leaves_it_untouched() {
    let dir = tmpdir("cache-on-user-file");
    let rds = b"\x1f\x8b\x08\x00 an nhdplusTools .rds cache".to_vec();
    std::fs::write(dir.join("yahara.rds"), &rds).unwrap();
    std::fs::copy(SAMPLE, dir.join("other.gpkg")).unwrap();
    let gpkg = std::fs::read(dir.join("other.gpkg")).unwrap();
    for (file, before) in [("yahara.rds", &rds), ("other.gpkg", &gpkg)] {
        let (ok, stdout, stderr) = plot(&dir, &["--sample", "--no-plot", "--cache-file", file]);
        assert!(ok, "{stderr}");
        assert!(
            stdout.contains("flowline") && stdout.contains("251"),
            "{stdout}"
        );
        assert!(
            stderr.contains(file) && stderr.contains("left untouched"),
            "{stderr}"
        );
        assert_eq!(&std::fs::read(dir.join(file)).unwrap(), before, "{file}");
    }
}

#[test]
fn no_cache_or_output_may_name_the_input() {
    let dir = tmpdir("same-as-input");
    std::fs::copy(SAMPLE, dir.join("national.gpkg")).unwrap();
    std::os::unix::fs::symlink("national.gpkg", dir.join("link.gpkg")).unwrap();
    let before = std::fs::read(dir.join("national.gpkg")).unwrap();
    let input = [
        "--hydro-data",
        "national.gpkg",
        "--comid",
        "13293970",
        "--no-plot",
    ];
    for extra in [
        ["--cache-file", "./national.gpkg"],
        ["--gpkg", "link.gpkg"],
        ["--geojson", "national.gpkg"],
        ["--html", "../hydroplot-cli-same-as-input-PID/national.gpkg"],
    ] {
        let extra = extra.map(|a| a.replace("PID", &std::process::id().to_string()));
        let args: Vec<&str> = input
            .iter()
            .copied()
            .chain(extra.iter().map(String::as_str))
            .collect();
        let (ok, _, stderr) = plot(&dir, &args);
        assert!(!ok, "{extra:?} accepted");
        assert!(stderr.contains("name the same file"), "{stderr}");
        assert_eq!(
            std::fs::read(dir.join("national.gpkg")).unwrap(),
            before,
            "{extra:?}"
        );
    }
}

#[test]
fn a_killed_writers_temporary_files_go_with_the_next_write() {
    let dir = tmpdir("stale-temporaries");
    // A process that has ended and been reaped: its pid is gone.
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = format!(".map.png.hydroplot-tmp.{dead}.0");
    // The embedded sample's temporary copy, left by a killed run.
    let stale_sample = format!(".hydroplot-sample.gpkg.hydroplot-tmp.{dead}.0");
    let kept = [
        format!(".map.png.hydroplot-tmp.{}.0", std::process::id()), // a live writer's
        format!(".map.png.hydroplot-tmp.{dead}.0.mine"),            // another name
        format!(".other.png.hydroplot-tmp.{dead}.0"),               // another target's
    ];
    for name in kept.iter().chain([&stale, &stale_sample]) {
        std::fs::write(dir.join(name), b"half a png").unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_hydroplot"))
        .args(["plot", "--sample", "--out", "map.png"])
        .current_dir(&dir)
        .env("TMPDIR", &dir) // where the sample's copy goes
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("map.png"), "{stdout}");
    assert!(std::fs::read(dir.join("map.png"))
        .unwrap()
        .starts_with(b"\x89PNG"));
    assert!(!dir.join(&stale).exists(), "{stale} stayed");
    assert!(!dir.join(&stale_sample).exists(), "{stale_sample} stayed");
    for name in &kept {
        assert_eq!(
            std::fs::read(dir.join(name)).unwrap(),
            b"half a png",
            "{name}"
        );
    }
}

#[test]
fn a_map_is_never_written_under_another_formats_name() {
    // The map is a PNG: a name ending in .jpg or .pdf would be a PNG its
    // viewers refuse. Refused before any work, nothing written; a name
    // without an extension is taken.
    let dir = tmpdir("map-name");
    for name in ["map.jpg", "figure.PDF", "plate.tiff"] {
        let (ok, _, stderr) = plot(&dir, &["--sample", "--basemap", "none", "--out", name]);
        assert!(!ok, "{name}");
        assert!(stderr.contains(name) && stderr.contains(".png"), "{stderr}");
    }
    let trace = Command::new(env!("CARGO_BIN_EXE_hydroplot"))
        .args(["trace", "--point", "-89.2158,42.9561", "--out", "trace.jpg"])
        // Nothing listens there: the name is refused before any request.
        .args(["--option", "fabric_url=http://127.0.0.1:9"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8(trace.stderr).unwrap();
    assert!(
        !trace.status.success() && stderr.contains("trace.jpg"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    let (ok, _, stderr) = plot(&dir, &["--sample", "--basemap", "none", "--out", "map"]);
    assert!(ok, "{stderr}");
    assert!(std::fs::read(dir.join("map"))
        .unwrap()
        .starts_with(b"\x89PNG"));
}
