//! A stream order gives the same plot data whatever the source. The
//! services filter the flowlines by order (R4, `streamorde > N-1`) and the
//! download navigates what they return, so a local GeoPackage is read the
//! same way: the flowlines of order N or more that drain to the outlet
//! through such flowlines alone, their catchments, the whole upstream basin,
//! and the waterbodies split by the drawn flowlines' `wbareacomi` (a box
//! read locally splits them by every flowline in it, as the reference's
//! published figures do: see the last test). Each case
//! is computed three ways: downloaded from the mock, read from the sample,
//! and with plain SQL over the sample (none of the library's code).

use crate::support;

use hydroplot::plot::{plot_hydro, Layer, Outlet, PlotData, PlotRequest};
use hydroplot_mock::{context, MockServer};
use rusqlite::{Connection, ToSql};
use support::{offline, sample};

/// `req` downloaded from the mock, and read from the sample.
fn both(req: PlotRequest) -> [PlotData; 2] {
    let server = MockServer::start();
    let downloaded = plot_hydro(&context(&server), &req, None).unwrap().data;
    let local = PlotRequest {
        hydro_data: Some(sample()),
        ..req
    };
    let read = plot_hydro(&offline(), &local, None).unwrap().data;
    [downloaded, read]
}

/// A request for the data alone.
fn data_only(streamorder: i32) -> PlotRequest {
    PlotRequest {
        streamorder: Some(streamorder),
        actually_plot: false,
        ..Default::default()
    }
}

/// The key of a layer's rows (`None`: the basins, which have no id of
/// their own, and the gages, which only a file has).
fn key(layer: Layer) -> Option<&'static str> {
    match layer {
        Layer::Basin | Layer::Gage => None,
        Layer::Catchment => Some("featureid"),
        _ => Some("comid"),
    }
}

/// The sorted ids of a layer.
fn ids(d: &PlotData, layer: Layer) -> Vec<i64> {
    let key = key(layer).expect("a keyed layer");
    let mut out: Vec<i64> = (d.layer(layer).to_features().iter())
        .map(|f| f.get_i64(key).unwrap())
        .collect();
    out.sort_unstable();
    out
}

/// Both sources give the same rows in every layer the services serve, and
/// the SQL's flowlines, catchments and waterbody split.
fn assert_agree(case: &str, [downloaded, read]: &[PlotData; 2], want: &Want) {
    for layer in Layer::ALL.into_iter().filter(|&l| key(l).is_some()) {
        assert_eq!(
            ids(downloaded, layer),
            ids(read, layer),
            "{case}: {layer:?}"
        );
    }
    let basins = |d: &PlotData| d.layer(Layer::Basin).len();
    assert_eq!(basins(downloaded), basins(read), "{case}: basins");
    for (layer, want) in [
        (Layer::Flowline, &want.flowlines),
        (Layer::Catchment, &want.catchments),
        (Layer::NetworkWtbd, &want.network),
        (Layer::OffNetworkWtbd, &want.off_network),
    ] {
        assert_eq!(&ids(read, layer), want, "{case}: {layer:?}");
    }
}

/// The layers SQL over the sample gives.
struct Want {
    flowlines: Vec<i64>,
    catchments: Vec<i64>,
    network: Vec<i64>,
    off_network: Vec<i64>,
}

/// The independent side: plain SQL over the sample's tables and the R*Tree
/// indexes stored in it.
mod sql {
    use super::*;

    pub use crate::support::{sample_sql as open, sql_ids as ids};

    /// The layers for the CTEs `drawn(comid)` (the flowlines drawn) and
    /// `box(x0, y0, x1, y1)` (where the other layers are read), and the
    /// catchments `catchments` selects from `CatchmentSP`.
    pub fn want(db: &Connection, ctes: &str, catchments: &str, params: &[&dyn ToSql]) -> Want {
        let ctes = format!(
            "{ctes}, wb AS (SELECT w.COMID FROM NHDWaterbody w
                JOIN rtree_NHDWaterbody_geom r ON r.id = w.fid, box
                WHERE r.maxx >= box.x0 AND r.minx <= box.x1 AND r.maxy >= box.y0 AND r.miny <= box.y1),
             marks AS (SELECT WBAREACOMI FROM NHDFlowline_Network WHERE COMID IN (SELECT comid FROM drawn))"
        );
        let ids = |select: &str| {
            let sql = format!("{ctes} {select}");
            ids(db, &sql, rusqlite::params_from_iter(params))
        };
        Want {
            flowlines: ids("SELECT comid FROM drawn"),
            catchments: ids(&format!(
                "SELECT c.FEATUREID FROM CatchmentSP c {catchments}"
            )),
            network: ids("SELECT COMID FROM wb WHERE COMID IN marks"),
            off_network: ids("SELECT COMID FROM wb WHERE COMID NOT IN marks"),
        }
    }

    /// Upstream of `?1` at stream order `?2`: `drawn`, the flowlines of that
    /// order reaching it through such flowlines alone (X drains into Y when
    /// X.DnHydroseq = Y.Hydroseq); `basin`, every flowline reaching it; the
    /// box around the catchments of the basin.
    pub const UPSTREAM: &str = "WITH RECURSIVE
        drawn(comid, hydroseq) AS (
          SELECT COMID, Hydroseq FROM NHDFlowline_Network WHERE COMID = ?1 AND StreamOrde >= ?2
          UNION SELECT f.COMID, f.Hydroseq FROM NHDFlowline_Network f
            JOIN drawn ON f.DnHydroseq = drawn.hydroseq WHERE f.StreamOrde >= ?2),
        basin(comid, hydroseq) AS (
          SELECT COMID, Hydroseq FROM NHDFlowline_Network WHERE COMID = ?1
          UNION SELECT f.COMID, f.Hydroseq FROM NHDFlowline_Network f
            JOIN basin ON f.DnHydroseq = basin.hydroseq),
        box AS (SELECT min(r.minx) x0, min(r.miny) y0, max(r.maxx) x1, max(r.maxy) y1
          FROM rtree_CatchmentSP_geom r JOIN CatchmentSP c ON c.fid = r.id
          WHERE c.FEATUREID IN (SELECT comid FROM basin))";
}

#[test]
fn upstream_of_an_outlet_is_the_same_from_both_sources() {
    let db = sql::open();
    for (outlet, order) in [(13293970, 2), (13293970, 3), (13293970, 4), (13294176, 2)] {
        let case = format!("comid {outlet}, stream order {order}");
        let want = sql::want(
            &db,
            sql::UPSTREAM,
            "WHERE c.FEATUREID IN (SELECT comid FROM drawn)",
            &[&outlet, &order],
        );
        let req = PlotRequest {
            outlets: vec![Outlet::Comid(outlet)],
            ..data_only(order)
        };
        let data = both(req);
        assert_agree(&case, &data, &want);
        assert_eq!(ids(&data[1], Layer::Outlets), [outlet], "{case}");
        assert!(data.iter().all(|d| d.warnings.is_empty()), "{case}");
    }
    // The order-4 chain 13294338 -> 13293852 -> 13294326 drains through
    // 13294330, of order 1: the services' filter leaves it out, so neither
    // source draws it.
    let want = sql::want(&db, sql::UPSTREAM, "", &[&13293970, &4]);
    assert_eq!(want.flowlines.len(), 17);
    assert!(!want.flowlines.contains(&13294338));
}

/// The basin is the whole upstream basin whatever the stream order: the
/// union of every upstream catchment, read locally.
#[test]
fn the_stream_order_leaves_the_basin_whole() {
    use geo::Area;
    let area = |streamorder: Option<i32>| {
        let req = PlotRequest {
            outlets: vec![Outlet::Comid(13293970)],
            hydro_data: Some(sample()),
            streamorder,
            ..data_only(1)
        };
        let d = plot_hydro(&offline(), &req, None).unwrap().data;
        let basins = d.layer(Layer::Basin).to_features();
        assert_eq!(basins.len(), 1);
        basins[0].geometry.as_ref().unwrap().unsigned_area()
    };
    let whole = area(None);
    for order in [2, 4] {
        let thinned = area(Some(order));
        assert!(
            (thinned - whole).abs() <= 1e-12 * whole,
            "{thinned} vs {whole}"
        );
    }
}

/// An outlet below the stream order draws no flowline and says so, from
/// either source; its basin is still drawn.
#[test]
fn an_outlet_below_the_stream_order_is_a_warning_from_both_sources() {
    // 13293456 is of order 1.
    let req = PlotRequest {
        outlets: vec![Outlet::Comid(13293456)],
        ..data_only(2)
    };
    for (source, d) in ["download", "local"].into_iter().zip(both(req)) {
        assert!(d.layer(Layer::Flowline).is_empty(), "{source}");
        assert!(d.layer(Layer::Catchment).is_empty(), "{source}");
        assert_eq!(d.layer(Layer::Basin).len(), 1, "{source}");
        assert_eq!(d.warnings.len(), 1, "{source}: {:?}", d.warnings);
        let w = &d.warnings[0];
        assert!(
            w.starts_with("outlet comid/13293456 (comid 13293456) is not among the flowlines")
                && w.contains("stream order filter?"),
            "{source}: {w}"
        );
    }
}

#[test]
fn a_comid_set_is_filtered_by_stream_order_from_both_sources() {
    let db = sql::open();
    // 13294176 is of order 3, the other two of order 4.
    let set = [13293970, 13293750, 13294176];
    for order in [3, 4] {
        let ctes = "WITH drawn(comid) AS (SELECT COMID FROM NHDFlowline_Network
              WHERE COMID IN (?1, ?2, ?3) AND StreamOrde >= ?4),
            envelopes AS (
              SELECT r.minx, r.miny, r.maxx, r.maxy FROM rtree_CatchmentSP_geom r
                JOIN CatchmentSP c ON c.fid = r.id WHERE c.FEATUREID IN (?1, ?2, ?3)
              UNION ALL SELECT r.minx, r.miny, r.maxx, r.maxy FROM rtree_NHDFlowline_Network_geom r
                JOIN NHDFlowline_Network f ON f.fid = r.id WHERE f.COMID IN drawn),
            box AS (SELECT min(minx) x0, min(miny) y0, max(maxx) x1, max(maxy) y1 FROM envelopes)";
        let want = sql::want(
            &db,
            ctes,
            "WHERE c.FEATUREID IN drawn",
            &[&set[0], &set[1], &set[2], &order],
        );
        let req = PlotRequest {
            comid_set: Some(set.to_vec()),
            ..data_only(order)
        };
        let data = both(req);
        assert_agree(&format!("comid set, stream order {order}"), &data, &want);
        assert_eq!(want.flowlines.len(), if order == 3 { 3 } else { 2 });
    }
}

/// A box: the same flowlines and catchments from both sources. The
/// waterbodies split as each source can: downloaded, by the flowlines the
/// services return (the filter hides the lower orders); read, by every
/// flowline in the box, as nhdplusTools' published figures for this box at
/// order 2 have it (10 network, 43 off-network: tests/it/plot_local.rs).
#[test]
fn a_bbox_is_filtered_by_stream_order_from_both_sources() {
    let db = sql::open();
    let bbox = [-89.57, 42.99, -89.25, 43.17];
    for order in [2, 3] {
        let ctes = "WITH box AS (SELECT ?1 x0, ?2 y0, ?3 x1, ?4 y1),
            drawn(comid) AS (SELECT f.COMID FROM NHDFlowline_Network f
              JOIN rtree_NHDFlowline_Network_geom r ON r.id = f.fid, box
              WHERE r.maxx >= box.x0 AND r.minx <= box.x1 AND r.maxy >= box.y0 AND r.miny <= box.y1
                AND f.StreamOrde >= ?5)";
        let catchments = "JOIN rtree_CatchmentSP_geom r ON r.id = c.fid, box
             WHERE r.maxx >= box.x0 AND r.minx <= box.x1 AND r.maxy >= box.y0 AND r.miny <= box.y1";
        let [downloaded, read] = both(PlotRequest {
            bbox: Some((bbox, "EPSG:4269".into())),
            ..data_only(order)
        });
        let case = format!("bbox, stream order {order}");
        let want = |least: i32| {
            let params: [&dyn ToSql; 5] = [&bbox[0], &bbox[1], &bbox[2], &bbox[3], &least];
            sql::want(&db, ctes, catchments, &params)
        };
        let (by_drawn, by_all) = (want(order), want(0));
        for (d, split) in [(&downloaded, &by_drawn), (&read, &by_all)] {
            assert_eq!(ids(d, Layer::Flowline), by_drawn.flowlines, "{case}");
            assert_eq!(ids(d, Layer::Catchment), by_drawn.catchments, "{case}");
            assert_eq!(ids(d, Layer::NetworkWtbd), split.network, "{case}");
            assert_eq!(ids(d, Layer::OffNetworkWtbd), split.off_network, "{case}");
        }
    }
}
