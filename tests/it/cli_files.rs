//! File safety through the CLI, as a new user meets it: a cache or output
//! path on a file the library did not create never changes that file.
//! Offline (local data and the embedded sample); bytes compared before and after.

use std::path::{Path, PathBuf};
use std::process::Command;

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/yahara_sample.gpkg");

fn tmpdir(name: &str) -> PathBuf {
    crate::scratch::temp_dir(&format!("cli-files-{name}"))
}

/// Runs `hydroplot plot ARGS` in `dir`: (success, stdout, stderr).
fn plot(dir: &Path, args: &[&str]) -> (bool, String, String) {
    hydroplot(dir, &[&["plot"], args].concat(), &[])
}

/// Runs `hydroplot ARGS` in `dir` with the variables `env` set; services
/// point where nothing listens, so any request fails. A panic (exit 101)
/// fails the test: every error is a message and exit 1.
fn hydroplot(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hydroplot"))
        .args(args)
        .envs(env.iter().copied())
        .env("HYDROPLOT_INDEX_URL", "http://127.0.0.1:9/nldi")
        .env("HYDROPLOT_FABRIC_URL", "http://127.0.0.1:9/fabric")
        .current_dir(dir)
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    assert_ne!(out.status.code(), Some(101), "{}", text(out.stderr.clone()));
    (out.status.success(), text(out.stdout), text(out.stderr))
}

#[test]
fn a_cache_file_on_a_users_file_leaves_it_untouched() {
    let dir = tmpdir("cache-on-user-file");
    let rds = b"\x1f\x8b\x08\x00 an nhdplusTools .rds cache".to_vec();
    std::fs::write(dir.join("yahara.rds"), &rds).unwrap();
    std::fs::copy(SAMPLE, dir.join("other.gpkg")).unwrap();
    std::fs::copy(SAMPLE, dir.join("sample.gpkg")).unwrap();
    let gpkg = std::fs::read(dir.join("other.gpkg")).unwrap();
    for (file, before) in [("yahara.rds", &rds), ("other.gpkg", &gpkg)] {
        let args = [
            "--hydro-data",
            "sample.gpkg",
            "--comid",
            "13293970",
            "--no-plot",
        ];
        let (ok, stdout, stderr) = plot(&dir, &[&args[..], &["--cache-file", file]].concat());
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
        ["--html", "../FOLDER/national.gpkg"],
    ] {
        let folder = dir.file_name().unwrap().to_str().unwrap();
        let extra = extra.map(|a| a.replace("FOLDER", folder));
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

#[test]
fn the_sample_never_hides_a_hydro_data_given_beside_it() {
    // --sample used to replace --hydro-data silently, so the user's file
    // was never compared with the outputs: `--out mine.gpkg` drew over it.
    let dir = tmpdir("sample-and-hydro-data");
    std::fs::copy(SAMPLE, dir.join("mine.gpkg")).unwrap();
    let before = std::fs::read(dir.join("mine.gpkg")).unwrap();
    for out in [["--out", "mine.gpkg"], ["--gpkg", "mine.gpkg"]] {
        let args = [&["--sample", "--hydro-data", "mine.gpkg"], &out[..]].concat();
        let (ok, _, stderr) = plot(&dir, &args);
        assert!(
            !ok && stderr.contains("--sample and --hydro-data"),
            "{stderr}"
        );
        assert_eq!(std::fs::read(dir.join("mine.gpkg")).unwrap(), before);
    }
    // A cache of the sample's fresh copy would never be hit, only grow.
    let (ok, _, stderr) = plot(&dir, &["--sample", "--no-plot", "--cache-file", "c.sqlite"]);
    assert!(!ok && stderr.contains("--cache-file"), "{stderr}");
    assert!(!dir.join("c.sqlite").exists());
}

#[test]
fn the_default_map_name_replaces_only_a_map_drawn_here() {
    let dir = tmpdir("default-map");
    let png = dir.join("hydroplot.png");
    // The user's own file of that name: refused before any work, kept.
    std::fs::write(&png, b"my own figure").unwrap();
    let (ok, _, stderr) = plot(&dir, &["--sample", "--geojson", "y.json"]);
    assert!(
        !ok && stderr.contains("hydroplot.png") && stderr.contains("--out"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&png).unwrap(), b"my own figure");
    assert!(!dir.join("y.json").exists());
    // Without a map to draw, the name is not used: the file stays.
    let (ok, _, stderr) = plot(&dir, &["--sample", "--no-plot"]);
    assert!(ok, "{stderr}");
    assert_eq!(std::fs::read(&png).unwrap(), b"my own figure");
    // A map drawn here is replaced by the next run's.
    std::fs::remove_file(&png).unwrap();
    for run in 0..2 {
        let (ok, stdout, stderr) = plot(&dir, &["--sample"]);
        assert!(
            ok && stdout.contains("hydroplot.png"),
            "run {run}: {stderr}"
        );
        assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    }
}

#[test]
fn the_ca_bundle_is_an_input_no_output_may_name() {
    let dir = tmpdir("ca-bundle-output");
    let pem = "-----BEGIN CERTIFICATE-----\nnot a real one\n-----END CERTIFICATE-----\n";
    std::fs::write(dir.join("ca.pem"), pem).unwrap();
    let by_option = ["--option", "ca_bundle=ca.pem"];
    let ca = dir.join("ca.pem");
    let ca = ca.to_str().unwrap();
    for (args, env) in [
        (
            vec!["plot", "--sample", "--out", "ca.pem"],
            vec![("SSL_CERT_FILE", ca)],
        ),
        (
            [
                &["plot", "--sample", "--geojson", "./ca.pem"][..],
                &by_option,
            ]
            .concat(),
            vec![],
        ),
        (
            [
                &["trace", "--point", "-89.2,42.9", "--geojson", "ca.pem"][..],
                &by_option,
            ]
            .concat(),
            vec![],
        ),
    ] {
        let (ok, _, stderr) = hydroplot(&dir, &args, &env);
        assert!(
            !ok && stderr.contains("name the same file"),
            "{args:?}: {stderr}"
        );
        assert_eq!(std::fs::read_to_string(dir.join("ca.pem")).unwrap(), pem);
    }
}

#[test]
fn bad_arguments_are_refused_before_any_request_without_a_panic() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tmpdir("bad-arguments");
    // A file name that is not UTF-8: a message, not a panic.
    let out = Command::new(env!("CARGO_BIN_EXE_hydroplot"))
        .args(["plot", "--sample", "--out"])
        .arg(std::ffi::OsStr::from_bytes(b"bad\xff.png"))
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("not UTF-8"), "{stderr}");
    for (args, want) in [
        // A basemap is checked when given, not when a page is drawn.
        (
            &["plot", "--sample", "--no-plot", "--basemap", "bogus"][..],
            "unknown basemap",
        ),
        (
            &[
                "trace",
                "--point",
                "-89.2,42.9",
                "--basemap",
                "bogus",
                "--html",
                "t.html",
            ],
            "unknown basemap",
        ),
        (
            &["plot", "--hydro-data", "", "--comid", "1"],
            "hydro_data path is empty",
        ),
        (
            &["plot", "--sample", "--gpkg", ".gpkg"],
            "no name before .gpkg",
        ),
        // A value forgotten is not a file named after the next flag.
        (
            &["plot", "--sample", "--out", "--geojson", "x.json"],
            "--out needs a value (got the flag --geojson)",
        ),
        // `-` is not stdout here, and not a file of that name either.
        (
            &["plot", "--sample", "--no-plot", "--geojson", "-"],
            "--geojson -: outputs go to files",
        ),
        (
            &["trace", "--points", "p.csv", "--geojson", "-"],
            "--geojson -: outputs go to files",
        ),
        // A map named and none drawn: one of the two is a mistake.
        (
            &["plot", "--sample", "--no-plot", "--out", "x.png"],
            "--no-plot draws none",
        ),
    ] {
        let (ok, _, stderr) = hydroplot(&dir, args, &[]);
        assert!(!ok && stderr.contains(want), "{args:?}: {stderr}");
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    // Each command's --help is the help, not a value or a file name.
    for command in ["plot", "trace", "comid", "index"] {
        let (ok, stdout, stderr) = hydroplot(&dir, &[command, "--help"], &[]);
        assert!(
            ok && stdout.contains("hydroplot trace --points"),
            "{command}: {stderr}"
        );
    }
    // An option named on the command line overrides a bad variable of the
    // same key instead of failing on it; unnamed, the variable is refused.
    let bad_timeout = [("HYDROPLOT_TIMEOUT_S", "abc")];
    let args = ["plot", "--sample", "--no-plot"];
    let (ok, _, stderr) = hydroplot(&dir, &args, &bad_timeout);
    assert!(!ok && stderr.contains("HYDROPLOT_TIMEOUT_S"), "{stderr}");
    let with_option = [&args[..], &["--option", "timeout_s=5"]].concat();
    let (ok, _, stderr) = hydroplot(&dir, &with_option, &bad_timeout);
    assert!(ok, "{stderr}");
    // An empty variable is an unset one, as for SSL_CERT_FILE.
    let (ok, _, stderr) = hydroplot(
        &dir,
        &["plot", "--sample", "--no-plot"],
        &[("HYDROPLOT_OFFLINE", "")],
    );
    assert!(ok, "{stderr}");
}

#[test]
fn no_overwrite_keeps_the_outputs_of_every_command() {
    let dir = tmpdir("no-overwrite-everywhere");
    std::fs::write(dir.join("points.csv"), "lon,lat\n-89.4,43.1\n").unwrap();
    std::fs::copy(SAMPLE, dir.join("sample.gpkg")).unwrap();
    for name in ["t.json", "c.csv"] {
        std::fs::write(dir.join(name), b"kept").unwrap();
    }
    // The local lookup makes no request, so only the flag can stop it.
    let lookup = [
        "comid",
        "--points",
        "points.csv",
        "--hydro-data",
        "sample.gpkg",
        "--out",
        "c.csv",
    ];
    let no = ["--no-overwrite"];
    for args in [
        vec![
            "trace",
            "--point",
            "-89.2,42.9",
            "--geojson",
            "t.json",
            "--no-overwrite",
        ],
        vec![
            "trace",
            "--points",
            "points.csv",
            "--geojson",
            "t.json",
            "--no-overwrite",
        ],
        [&lookup[..], &no].concat(),
    ] {
        let (ok, _, stderr) = hydroplot(&dir, &args, &[]);
        assert!(
            !ok && stderr.contains("overwrite is off"),
            "{args:?}: {stderr}"
        );
    }
    for name in ["t.json", "c.csv"] {
        assert_eq!(std::fs::read(dir.join(name)).unwrap(), b"kept");
    }
    // Without the flag the lookup replaces its output.
    let (ok, _, stderr) = hydroplot(&dir, &lookup, &[]);
    assert!(ok, "{stderr}");
    assert!(std::fs::read_to_string(dir.join("c.csv"))
        .unwrap()
        .starts_with("point_index"));
}

#[test]
fn a_symbolic_link_as_an_output_is_refused_and_left_as_it_is() {
    // The rename that writes an output would replace the link with a file
    // and leave its target as it was (a link to /dev/stdout as root
    // replaced the system's); the link and its target stay untouched.
    let dir = tmpdir("symlink");
    std::fs::write(dir.join("real.json"), "mine").unwrap();
    std::os::unix::fs::symlink("real.json", dir.join("link.json")).unwrap();
    std::fs::write(dir.join("p.csv"), "lon,lat\n-89.2158,42.9561\n").unwrap();
    for args in [
        &["plot", "--sample", "--no-plot", "--geojson", "link.json"][..],
        &["plot", "--sample", "--out", "link.json"],
        &["trace", "--points", "p.csv", "--geojson", "link.json"],
    ] {
        let (ok, _, stderr) = hydroplot(&dir, args, &[]);
        assert!(
            !ok && stderr.contains("symbolic link"),
            "{args:?}: {stderr}"
        );
        assert!(dir
            .join("link.json")
            .symlink_metadata()
            .unwrap()
            .is_symlink());
        assert_eq!(
            std::fs::read_to_string(dir.join("real.json")).unwrap(),
            "mine"
        );
    }
    // The last of a flag given twice counts in the batch commands too, as
    // in `plot`: a bad last one is not hidden by a good first one.
    let twice = [
        "trace",
        "--points",
        "p.csv",
        "--direction",
        "up",
        "--direction",
        "bogus",
    ];
    let (ok, _, stderr) = hydroplot(&dir, &[&twice[..], &["--geojson", "t.json"]].concat(), &[]);
    assert!(!ok && stderr.contains("direction"), "{stderr}");
    assert!(!dir.join("t.json").exists());
}

#[test]
fn a_closed_stdout_or_stderr_still_gets_every_file_written() {
    // `hydroplot ... | head -c 10`: the reader is gone before the summary
    // is printed; the outputs are written all the same, without a panic.
    use std::process::Stdio;
    let dir = tmpdir("closed-pipe");
    let mut child = Command::new(env!("CARGO_BIN_EXE_hydroplot"))
        .args([
            "plot",
            "--sample",
            "--out",
            "p.png",
            "--geojson",
            "p.json",
            "--world-file",
        ])
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    for file in ["p.png", "p.json", "p.pgw", "p.png.aux.xml"] {
        assert!(dir.join(file).is_file(), "{file} not written");
    }
}
