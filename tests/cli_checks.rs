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
