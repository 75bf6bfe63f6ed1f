//! `hydroplot trace --points` and `hydroplot comid --points` against the
//! loopback mock and the Yahara sample: input order and carried columns
//! kept, failed points listed with their index and counted, the local
//! lookup's file equal to the service's, bad input refused before any
//! request with no file written.

use crate::support;

use hydroplot_mock::MockServer;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use support::{catchment_interiors, sample};

fn temp_dir(name: &str) -> PathBuf {
    crate::scratch::temp_dir(&format!("batch-cli-{name}"))
}

/// `hydroplot ARGS` with the services of `server`.
fn hydroplot(server: &MockServer, args: &[&str]) -> Output {
    let mut cmd = support::cli_command();
    cmd.args(args).args([
        "--option",
        &format!("index_url={}", server.index_url()),
        "--option",
        &format!("fabric_url={}", server.fabric_url()),
    ]);
    cmd.output().unwrap()
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// Three traceable interior points, with their comids.
fn traceable() -> Vec<((f64, f64), i64)> {
    catchment_interiors()
        .into_iter()
        .filter(|c| c.2)
        .take(3)
        .map(|c| (c.0, c.1))
        .collect()
}

#[test]
fn trace_points_keeps_order_and_columns_and_lists_the_failures() {
    let server = MockServer::start();
    let dir = temp_dir("trace");
    let p = traceable();
    // Point 2 is in the Pacific: the service answers 500 for it.
    let csv = format!(
        "site,lon,lat,note\n\"A,1\",{},{},first\nB,{},{},\"say \"\"hi\"\"\"\nC,-125.0,35.0,sea\nD,{},{},\n",
        p[0].0 .0, p[0].0 .1, p[1].0 .0, p[1].0 .1, p[2].0 .0, p[2].0 .1
    );
    let points = dir.join("points.csv");
    std::fs::write(&points, csv).unwrap();
    let (out, errors) = (dir.join("traces.geojson"), dir.join("errors.csv"));
    let run = hydroplot(
        &server,
        &[
            "trace",
            "--points",
            points.to_str().unwrap(),
            "--direction",
            "up",
            "--geojson",
            out.to_str().unwrap(),
            "--errors",
            errors.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("3 traced, 1 failed"), "{stderr}");
    let doc: Value = serde_json::from_str(&text(&out)).unwrap();
    let features = doc["features"].as_array().unwrap();
    assert_eq!(features.len(), 6);
    let rows: Vec<(i64, &str, &str, Option<i64>)> = features
        .iter()
        .map(|f| {
            let p = &f["properties"];
            (
                p["point_index"].as_i64().unwrap(),
                p["site"].as_str().unwrap(),
                p["note"].as_str().unwrap(),
                p["comid"].as_i64(),
            )
        })
        .collect();
    let flowline = |i: usize| rows.iter().find(|r| r.0 == i as i64).unwrap().3;
    assert_eq!(
        rows.iter().map(|r| (r.0, r.1, r.2)).collect::<Vec<_>>(),
        [
            (0, "A,1", "first"),
            (0, "A,1", "first"),
            (1, "B", "say \"hi\""),
            (1, "B", "say \"hi\""),
            (3, "D", ""),
            (3, "D", ""),
        ]
    );
    assert_eq!(
        [flowline(0), flowline(1), flowline(3)],
        [Some(p[0].1), Some(p[1].1), Some(p[2].1)]
    );
    let errors = text(&errors);
    let lines: Vec<&str> = errors.lines().collect();
    assert_eq!(lines[0], "point_index,site,note,error");
    assert!(lines[1].starts_with("2,C,sea,"), "{errors}");
    assert!(lines[1].contains("HTTP 500"), "{errors}");
    assert_eq!(lines.len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn comid_points_locally_and_by_service_write_the_same_file() {
    let server = MockServer::start();
    let dir = temp_dir("comid");
    let p = traceable();
    let feature = |(x, y): (f64, f64), id: Value| {
        serde_json::json!({"type": "Feature", "geometry": {"type": "Point", "coordinates": [x, y]},
                           "properties": {"id": id}})
    };
    let doc = serde_json::json!({"type": "FeatureCollection", "features": [
        feature(p[1].0, Value::from(10)),
        feature((-125.0, 35.0), Value::from("sea")),
        feature(p[0].0, Value::Null),
    ]});
    let points = dir.join("points.geojson");
    std::fs::write(&points, doc.to_string()).unwrap();
    let (remote, local) = (dir.join("remote.csv"), dir.join("local.csv"));
    let run = hydroplot(
        &server,
        &[
            "comid",
            "--points",
            points.to_str().unwrap(),
            "--out",
            remote.to_str().unwrap(),
        ],
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("2 resolved, 1 in no catchment, 0 failed")
    );
    server.clear_requests();
    let run = hydroplot(
        &server,
        &[
            "comid",
            "--points",
            points.to_str().unwrap(),
            "--hydro-data",
            sample().to_str().unwrap(),
            "--out",
            local.to_str().unwrap(),
        ],
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        server.requests().is_empty(),
        "the local lookup asks nothing"
    );
    let expected = format!(
        "point_index,id,comid\n0,10,{}\n1,sea,\n2,,{}\n",
        p[1].1, p[0].1
    );
    assert_eq!(text(&remote), expected);
    assert_eq!(text(&local), expected);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_point_files_fail_before_any_request_and_write_nothing() {
    let server = MockServer::start();
    let dir = temp_dir("bad");
    let out = dir.join("out.csv");
    for (name, content, message) in [
        (
            "nan.csv",
            "lon,lat\n-89.4,43.0\nNaN,43.1\n",
            "line 3: lon \"NaN\"",
        ),
        (
            "short.csv",
            "lon,lat,id\n-89.4,43.0\n",
            "line 2 has 2 fields",
        ),
        (
            "lines.geojson",
            r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":{}}]}"#,
            "feature 0 is not a Point",
        ),
    ] {
        let points = dir.join(name);
        std::fs::write(&points, content).unwrap();
        let run = hydroplot(
            &server,
            &[
                "comid",
                "--points",
                points.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
        );
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success());
        assert!(
            stderr.contains(message) && stderr.contains(name),
            "{stderr}"
        );
    }
    // An output over the input is refused too.
    let points = dir.join("nan.csv");
    let run = hydroplot(
        &server,
        &[
            "comid",
            "--points",
            points.to_str().unwrap(),
            "--out",
            points.to_str().unwrap(),
        ],
    );
    assert!(!run.status.success());
    // So is an output whose folder does not exist, before any request.
    let points = dir.join("good.csv");
    std::fs::write(&points, "lon,lat\n-89.4,43.0\n").unwrap();
    let nowhere = dir.join("missing/out.csv");
    let run = hydroplot(
        &server,
        &[
            "comid",
            "--points",
            points.to_str().unwrap(),
            "--out",
            nowhere.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("its folder") && stderr.contains("does not exist"));
    assert!(!out.exists());
    assert!(server.requests().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
