//! The CLI refuses bad values with a message and no request: the same
//! checks as the C API, from the core's checked setters.

use hydroplot_mock::MockServer;
use std::process::Command;

#[test]
fn bad_values_are_refused_before_any_request() {
    let server = MockServer::start();
    let services = [
        format!("index_url={}", server.index_url()),
        format!("fabric_url={}", server.fabric_url()),
        format!("tile_url={}", server.tile_url()),
    ];
    let cases: [(&[&str], &str); 7] = [
        (
            &["--comid", "13293970", "--zoom", "23"],
            "zoom 23 must be 0..=22",
        ),
        (&["--bbox", "-89.5,42.9,-89.2,95"], "latitude 95"),
        (&["--comid", "0"], "comid 0 is not a positive integer"),
        (&["--comid", "13293970", "--size", "0x0"], "size 0 x 0"),
        (&["--comid-set", "5,-1"], "all positive"),
        (&["--point", "-89.4,43.1,EPSG:999999"], "999999"),
        (
            &["--comid", "13293970", "--gpkg", "out.txt"],
            "does not end in .gpkg",
        ),
    ];
    for (args, message) in cases {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hydroplot"));
        cmd.arg("plot").args(args).arg("--no-plot");
        for s in &services {
            cmd.args(["--option", s]);
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} accepted");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(server.requests().is_empty(), "{args:?} made a request");
    }
}

/// Runs `hydroplot ARGS` in `dir` against `server`: (success, stderr).
fn run_in(dir: &std::path::Path, server: &MockServer, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hydroplot"))
        .args(args)
        .args(["--option", &format!("index_url={}", server.index_url())])
        .args(["--option", &format!("fabric_url={}", server.fabric_url())])
        .args(["--option", &format!("tile_url={}", server.tile_url())])
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A folder no new file can be made in, even as root (sysfs refuses).
fn unwritable_folder(dir: &std::path::Path) -> std::path::PathBuf {
    if unsafe { libc::geteuid() } == 0 {
        return "/sys".into();
    }
    let ro = dir.join("read-only");
    std::fs::create_dir_all(&ro).unwrap();
    std::fs::set_permissions(&ro, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
    ro
}

#[test]
fn outputs_are_checked_before_any_request() {
    let server = MockServer::start();
    let dir = crate::scratch::temp_dir("cli-outputs");
    std::fs::create_dir_all(dir.join("a-folder")).unwrap();
    let mine = b"the user's own bytes".to_vec();
    for file in ["mine.png", "mine.json"] {
        std::fs::write(dir.join(file), &mine).unwrap();
    }
    let ro = unwritable_folder(&dir).join("map.png");
    let ro = ro.to_str().unwrap();
    let plot = ["plot", "--comid", "13293970", "--basemap", "none"];
    let trace = ["trace", "--point", "-89.36,43.09"];
    let cases: [(&[&str], &[&str], &[&str]); 9] = [
        (
            &plot,
            &["--gpkg", "no/such/folder/out.gpkg"],
            &["no/such/folder/out.gpkg", "does not exist"],
        ),
        (
            &plot,
            &["--out", "no/such/map.png"],
            &["no/such/map.png", "does not exist"],
        ),
        (
            &plot,
            &["--geojson", "no/such/layers.json"],
            &["no/such/layers.json", "does not exist"],
        ),
        (
            &plot,
            &["--out", "a-folder"],
            &["a-folder", "not a regular file"],
        ),
        (&plot, &["--out", ro], &[ro, "does not take a new file"]),
        (
            &plot,
            &["--no-overwrite", "--out", "mine.png"],
            &["mine.png", "overwrite is off"],
        ),
        (
            &plot,
            &["--no-overwrite", "--html", "mine.json"],
            &["mine.json", "overwrite is off"],
        ),
        (
            &trace,
            &["--out", "t.out", "--geojson", "./t.out"],
            &["name the same file"],
        ),
        (
            &trace,
            &["--html", "no/such/t.html"],
            &["no/such/t.html", "does not exist"],
        ),
    ];
    for (command, extra, messages) in cases {
        let args: Vec<&str> = command.iter().chain(extra).copied().collect();
        let (ok, stderr) = run_in(&dir, &server, &args);
        assert!(!ok, "{args:?} accepted");
        for m in messages {
            assert!(stderr.contains(m), "{args:?}: {stderr}");
        }
        assert!(!stderr.contains("hydroplot-tmp"), "{args:?}: {stderr}");
        assert!(server.requests().is_empty(), "{args:?} made a request");
        for file in ["mine.png", "mine.json"] {
            assert_eq!(std::fs::read(dir.join(file)).unwrap(), mine, "{args:?}");
        }
        assert!(!dir.join("t.out").exists(), "{args:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
