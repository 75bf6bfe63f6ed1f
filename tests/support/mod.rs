//! Helpers shared by integration tests (`mod support;`): the Yahara sample
//! and its published counts, an offline context, and files read with plain
//! SQL so they check the library from outside. Each test binary uses some
//! of them.
#![allow(dead_code)]

pub mod c_api;
pub mod georef;
pub mod tool;
pub mod wkb;

use hydroplot::config::Config;
use hydroplot::context::{LogLevel, Observer};
use hydroplot::plot::{Layer, PlotData};
use hydroplot::Context;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// An observer that keeps the log lines it receives, so tests read what the
/// library decided (a retry's wait, say) instead of timing it.
#[derive(Default)]
pub struct Recorder(pub Mutex<Vec<(LogLevel, String)>>);

impl Observer for Recorder {
    fn log(&self, level: LogLevel, message: &str) {
        self.0.lock().unwrap().push((level, message.to_string()));
    }
    fn progress(&self, _stage: &str, _done: u64, _total: u64) {}
}

impl Recorder {
    /// `ctx` with a new recorder as its observer, and the recorder.
    pub fn attach(ctx: Context) -> (Context, Arc<Recorder>) {
        let recorder = Arc::new(Recorder::default());
        let ctx = ctx.with_observer(Some(recorder.clone() as Arc<dyn Observer>));
        (ctx, recorder)
    }

    /// Whether a warning ends with `tail`.
    pub fn warned(&self, tail: &str) -> bool {
        self.0
            .lock()
            .unwrap()
            .iter()
            .any(|(level, m)| *level == LogLevel::Warning && m.ends_with(tail))
    }
}

/// The real NHDPlusV2 Yahara sample, `tests/data/yahara_sample.gpkg`.
pub fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/yahara_sample.gpkg")
}

/// The sample opened read-only with plain SQLite, for the independent side
/// of a comparison.
pub fn sample_sql() -> rusqlite::Connection {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    rusqlite::Connection::open_with_flags(sample(), flags).unwrap()
}

/// The rows of `sql`'s one integer column, sorted.
pub fn sql_ids(db: &rusqlite::Connection, sql: &str, params: impl rusqlite::Params) -> Vec<i64> {
    let mut stmt = db.prepare(sql).unwrap();
    let mut out: Vec<i64> = stmt
        .query_map(params, |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    out.sort_unstable();
    out
}

/// A context whose services are unreachable: any request would fail, so
/// local mode is seen to need none.
pub fn offline() -> Context {
    let mut c = config();
    c.set("index_url", "http://127.0.0.1:9/nldi").unwrap();
    c.set("fabric_url", "http://127.0.0.1:9/fabric").unwrap();
    c.set("retries", "0").unwrap();
    Context::new(c).unwrap()
}

/// The default configuration, but for the index directory: the indexes the
/// tests' local plots store stay in the build tree, never in the user's
/// cache directory.
pub fn config() -> Config {
    Config {
        index_dir: concat!(env!("CARGO_TARGET_TMPDIR"), "/index").into(),
        ..Config::default()
    }
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

/// The length of the stored network blob of an index file for the
/// flowlines (with a comid) of the GeoPackage at `path`, by its documented
/// layout (`stored_network.rs`): magic and header (32 bytes), a 36-byte
/// record and a 4-byte offset and comid-order index per flowline, one more
/// offset, and 4 bytes per link from a flowline to another whose hydroseq
/// is its dnhydroseq, counted here by plain SQL.
pub fn stored_network_bytes(path: &Path) -> usize {
    let conn = rusqlite::Connection::open(path).unwrap();
    let (flowlines, links): (usize, usize) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM NHDFlowline_Network WHERE COMID IS NOT NULL),
                    (SELECT count(*) FROM NHDFlowline_Network a WHERE a.COMID IS NOT NULL
                       AND CAST(a.DnHydroseq AS INTEGER) != 0
                       AND EXISTS (SELECT 1 FROM NHDFlowline_Network b WHERE b.COMID IS NOT NULL
                         AND b.rowid != a.rowid
                         AND CAST(b.Hydroseq AS INTEGER) = CAST(a.DnHydroseq AS INTEGER)))",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    32 + flowlines * (36 + 4 + 4) + 4 + links * 4
}

/// Interior points of the mock's catchments (the real Yahara catchments),
/// each with its featureid and whether that catchment has a network
/// flowline to trace along.
pub fn catchment_interiors() -> Vec<((f64, f64), i64, bool)> {
    use geo::{CoordsIter, InteriorPoint};
    let data = hydroplot_mock::data::Data::shared().unwrap();
    data.layer(hydroplot::collection::Collection::Catchment)
        .iter()
        .filter_map(|item| {
            let comid = item.feature.get_i64("featureid")?;
            let p = item.feature.geometry.as_ref()?.interior_point()?;
            let usable = data
                .flowline(comid)
                .is_some_and(|f| f.geometry.as_ref().is_some_and(|g| g.coords_count() >= 2));
            Some(((p.x(), p.y()), comid, usable))
        })
        .collect()
}

/// Interior points of the mock's catchments and the comid each should give
/// (`None`: the catchment has no network flowline, so the service fails).
pub fn catchment_points() -> Vec<((f64, f64), Option<i64>)> {
    catchment_interiors()
        .into_iter()
        .map(|(p, comid, usable)| (p, usable.then_some(comid)))
        .collect()
}

/// `g` with its polygons wound by geo's `Orient` as RFC 7946 (3.1.6) says
/// GeoJSON's are: exteriors counterclockwise, holes clockwise.
pub fn rfc_7946_winding(g: geo::Geometry<f64>) -> geo::Geometry<f64> {
    use geo::orient::{Direction, Orient};
    use geo::Geometry;
    match g {
        Geometry::Polygon(p) => Geometry::Polygon(p.orient(Direction::Default)),
        Geometry::MultiPolygon(m) => Geometry::MultiPolygon(m.orient(Direction::Default)),
        Geometry::GeometryCollection(c) => {
            Geometry::GeometryCollection(c.0.into_iter().map(rfc_7946_winding).collect())
        }
        other => other,
    }
}

/// `hydroplot`, the CLI of this build, without the `HYDROPLOT_<KEY>`
/// variables of this process's environment but the index directory: each
/// test sets what it uses, and the indexes its plots store stay where the
/// tests' do (`HYDROPLOT_INDEX_DIR`, .cargo/config.toml), never in the
/// user's cache directory.
pub fn cli_command() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_hydroplot"));
    for (k, _) in std::env::vars() {
        if k.starts_with("HYDROPLOT_") && k != "HYDROPLOT_INDEX_DIR" {
            cmd.env_remove(k);
        }
    }
    cmd
}
