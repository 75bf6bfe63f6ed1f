//! The GeoPackage reader and writer against the real NHDPlusV2 sample files.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use hydroplot::collection::Collection;
use hydroplot::feature::{bbox_of, Feature};
use hydroplot::gpkg::{self, GeoPackage};
use hydroplot::network::Reach;
use hydroplot::Error;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn yahara() -> GeoPackage {
    GeoPackage::open(&data("yahara_sample.gpkg")).unwrap()
}

/// Everything upstream of `outlet` (itself included): X drains to Y when
/// X.dnhydroseq == Y.hydroseq.
fn upstream(reaches: &[Reach], outlet: i64) -> Vec<i64> {
    let mut draining_into: HashMap<i64, Vec<&Reach>> = HashMap::new();
    for r in reaches {
        draining_into.entry(r.dnhydroseq).or_default().push(r);
    }
    let start = reaches
        .iter()
        .find(|r| r.comid == outlet)
        .expect("outlet in topology");
    let (mut out, mut stack) = (vec![], vec![start]);
    while let Some(r) = stack.pop() {
        out.push(r.comid);
        stack.extend(
            draining_into
                .get(&r.hydroseq)
                .into_iter()
                .flatten()
                .filter(|u| u.hydroseq != 0),
        );
    }
    out
}

#[test]
fn layers_and_counts_of_the_yahara_sample() {
    let g = yahara();
    let counts: Vec<usize> = [
        Collection::FlowlineNetwork,
        Collection::Catchment,
        Collection::Gage,
        Collection::Area,
        Collection::Waterbody,
        Collection::FlowlineNonNetwork,
    ]
    .iter()
    .map(|&c| g.read_all(c).unwrap().len())
    .collect();
    assert_eq!(counts, [267, 266, 46, 3, 128, 49]);
    let flowlines = g.read_all(Collection::FlowlineNetwork).unwrap();
    let f = flowlines
        .iter()
        .find(|f| f.get_i64("comid") == Some(13294312))
        .unwrap();
    assert_eq!(f.get_str("gnis_name"), Some("Yahara River"));
    assert!(!f.properties.contains_key("fid") && !f.properties.contains_key("geom"));
    assert!(matches!(
        f.geometry,
        Some(geo::Geometry::MultiLineString(_))
    ));
    let b = g.bounds(Collection::FlowlineNetwork).unwrap().unwrap();
    assert!((b[0] - -89.585366904719).abs() < 1e-9 && (b[3] - 43.3017873994538).abs() < 1e-9);
}

#[test]
fn upstream_of_13293970_with_its_neighbours() {
    let g = yahara();
    let topology = g.read_topology().unwrap();
    assert_eq!(topology.len(), 267);
    let ids = upstream(&topology, 13293970);
    let flowlines = g.read_by_ids(Collection::FlowlineNetwork, &ids).unwrap();
    assert_eq!(flowlines.len(), 251);
    assert_eq!(
        flowlines[0].get_i64("comid"),
        Some(13293970),
        "in the order of ids"
    );
    let catchments = g.read_by_ids(Collection::Catchment, &ids).unwrap();
    assert_eq!(catchments.len(), 250);
    let have: HashSet<i64> = catchments
        .iter()
        .filter_map(|f| f.get_i64("featureid"))
        .collect();
    assert_eq!(
        ids.iter()
            .filter(|id| !have.contains(id))
            .collect::<Vec<_>>(),
        [&13294386]
    );
    let bbox = bbox_of(&catchments).unwrap();
    let n = |c| g.read_bbox(c, bbox).unwrap().len();
    assert_eq!(
        [
            n(Collection::Area),
            n(Collection::Waterbody),
            n(Collection::FlowlineNonNetwork),
            n(Collection::Gage)
        ],
        [3, 117, 48, 44]
    );
}

#[test]
fn bbox_with_stream_order_2() {
    let g = yahara();
    let bbox = [-89.56684, 42.99816, -89.24681, 43.17192];
    let flowlines = g.read_bbox(Collection::FlowlineNetwork, bbox).unwrap();
    let order2 = flowlines
        .iter()
        .filter(|f| f.get_i64("streamorde").unwrap_or(0) >= 2)
        .count();
    assert_eq!(order2, 76);
}

#[test]
fn gage_by_site_number() {
    let g = yahara();
    let gage = g.gage("05429500").unwrap().unwrap();
    assert_eq!(gage.get_str("source_fea"), Some("05429500"));
    assert!(gage.get_i64("flcomid").is_some());
    assert!(matches!(gage.geometry, Some(geo::Geometry::Point(_))));
    assert_eq!(g.gage("00000000").unwrap(), None);
}
