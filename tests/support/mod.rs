//! Helpers shared by integration tests (`mod support;`): the Yahara sample
//! and its published counts, an offline context, and files read with plain
//! SQL so they check the library from outside. Each test binary uses some
//! of them.
#![allow(dead_code)]

pub mod georef;

use hydroplot::config::Config;
use hydroplot::plot::{Layer, PlotData};
use hydroplot::Context;
use std::path::{Path, PathBuf};

/// The real NHDPlusV2 Yahara sample, `tests/data/yahara_sample.gpkg`.
pub fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/yahara_sample.gpkg")
}

/// A context whose services are unreachable: any request would fail, so
/// local mode is seen to need none.
pub fn offline() -> Context {
    let mut c = Config::default();
    c.set("index_url", "http://127.0.0.1:9/nldi").unwrap();
    c.set("fabric_url", "http://127.0.0.1:9/fabric").unwrap();
    c.set("retries", "0").unwrap();
    Context::new(c).unwrap()
}

/// Upstream of comid 13293970 in the Yahara sample, the published
/// nhdplusTools counts: 251 flowlines, 250 catchments, 3 NHDArea, 117
/// waterbodies, 48 non-network flowlines, 44 gages.
pub fn assert_yahara_counts(d: &PlotData) {
    assert_eq!(d.layer(Layer::Flowline).len(), 251);
    assert_eq!(d.layer(Layer::Catchment).len(), 250);
    assert_eq!(d.layer(Layer::Area).len(), 3);
    assert_eq!(
        d.layer(Layer::NetworkWtbd).len() + d.layer(Layer::OffNetworkWtbd).len(),
        117
    );
    assert_eq!(d.layer(Layer::FlowlineNonNetwork).len(), 48);
    assert_eq!(d.layer(Layer::Gage).len(), 44);
}

/// The names of the indexes on the flowline table of the GeoPackage at `path`.
pub fn index_names(path: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'NHDFlowline_Network' ORDER BY name")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}
