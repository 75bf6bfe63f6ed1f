//! The mock linked-data index service: `/nldi/linked-data/{source}/{id}` and
//! `.../basin`, in the shape of `nldi_feature_nwissite_USGS-05427718.json`.

use super::data::{Data, SYNTHETIC_FEATURES};
use super::feature::Feature;
use super::geojson;
use super::wire::{Reply, Request};
use geo::orient::{Direction, Orient};
use geo::{Geometry, LineString, Point, Polygon};
use hydroplot::config::Names;
use serde_json::{json, Value};

/// A resolved linked-data feature: its comid and its GeoJSON feature.
struct Located {
    comid: i64,
    feature: Value,
}

/// Answers `{source}/{id}` (no query) or `{source}/{id}/basin` (`rest`;
/// query `simplify`, `splitCatchment`) in the `names` profile: the other
/// profile's gauge source is unknown, as on the real service.
pub(super) fn linked_data(
    rest: &str,
    request: &Request,
    data: &Data,
    base_url: &str,
    names: Names,
) -> Reply {
    let parts: Vec<&str> = rest.split('/').collect();
    let (source, id, basin) = match parts.as_slice() {
        [source, id] => (*source, *id, false),
        [source, id, "basin"] => (*source, *id, true),
        _ => {
            return Reply::error(
                404,
                format!("no such linked-data resource: {}", request.path),
            )
        }
    };
    let allowed: &[&str] = if basin {
        &["simplify", "splitCatchment", "f"]
    } else {
        &["f"]
    };
    if let Err(refusal) = request.only_params(&|k| allowed.contains(&k)) {
        return refusal;
    }
    let source = source.to_ascii_lowercase();
    let other_profile = match names {
        Names::Usgs => Names::Neutral,
        Names::Neutral => Names::Usgs,
    };
    let located = match source.as_str() {
        s if s == other_profile.gauge_source() => None,
        s => locate(s, id, data, base_url),
    };
    let Some(located) = located else {
        return Reply::error(
            404,
            format!("The feature source {source} has no feature {id}."),
        );
    };
    if !basin {
        return geojson_reply(json!({"type": "FeatureCollection", "features": [located.feature]}));
    }
    for name in ["simplify", "splitCatchment"] {
        if let Some(v) = request
            .param(name)
            .filter(|v| *v != "true" && *v != "false")
        {
            return Reply::error(400, format!("{name} must be true or false, got {v:?}"));
        }
    }
    match basin_of(located.comid, data) {
        Some(geometry) => geojson_reply(json!({
            "type": "FeatureCollection",
            "features": [{"type": "Feature", "geometry": geometry, "properties": {}}]
        })),
        None => Reply::error(
            404,
            format!(
                "No catchments upstream of comid {} are known.",
                located.comid
            ),
        ),
    }
}

fn geojson_reply(value: Value) -> Reply {
    let mut reply = Reply::json(200, "application/geo+json", &value);
    reply
        .headers
        .push(("Cache-Control", "public, max-age=3600".into()));
    reply
}

/// The feature `source`/`id`: a comid flowline, a gage of the Gage layers, or
/// one of the synthetic `huc12pp`/`wqp` points.
fn locate(source: &str, id: &str, data: &Data, base_url: &str) -> Option<Located> {
    let navigation = format!("{base_url}/nldi/linked-data/{source}/{id}/navigation");
    match source {
        "comid" => {
            let comid: i64 = id.parse().ok()?;
            let flowline = data.flowline(comid)?;
            let feature = json!({
                "type": "Feature",
                "geometry": flowline.geometry.as_ref().map(single_line_geojson),
                "properties": {
                    "identifier": id, "navigation": navigation, "source": "comid",
                    "sourceName": "NHDPlus comid", "comid": comid,
                },
            });
            Some(Located { comid, feature })
        }
        "nwissite" | "gaugesite" => {
            let gage = data.gage(id.strip_prefix("USGS-")?)?;
            let comid = gage.get_i64("flcomid")?;
            let point = gage.geometry.as_ref().map(geojson::geometry);
            let feature = json!({
                "type": "Feature",
                "geometry": point,
                "properties": {
                    "identifier": id, "navigation": navigation,
                    "name": gage.get_str("station_nm").unwrap_or(""),
                    "source": source, "sourceName": "NWIS Surface Water Sites", "comid": comid,
                    "type": "hydrolocation",
                    "uri": format!("https://waterdata.usgs.gov/monitoring-location/{id}"),
                    "reachcode": gage.get_str("reachcode"), "measure": gage.get_f64("measure"),
                },
                "id": id,
            });
            Some(Located { comid, feature })
        }
        _ => {
            let &(_, _, comid) = SYNTHETIC_FEATURES
                .iter()
                .find(|(s, i, _)| *s == source && *i == id)?;
            let flowline = data.flowline(comid)?;
            let end = downstream_end(flowline)?;
            let feature = json!({
                "type": "Feature",
                "geometry": {"type": "Point", "coordinates": [end.x(), end.y()]},
                "properties": {
                    "identifier": id, "navigation": navigation, "name": flowline.get_str("gnis_name").unwrap_or(""),
                    "source": source, "sourceName": source, "comid": comid, "type": "hydrolocation",
                    "reachcode": flowline.get_str("reachcode"), "measure": 0.0,
                },
                "id": id,
            });
            Some(Located { comid, feature })
        }
    }
}

/// A flowline as the index service sends it: a LineString when it has one part.
fn single_line_geojson(g: &Geometry<f64>) -> Value {
    match g {
        Geometry::MultiLineString(m) if m.0.len() == 1 => {
            geojson::geometry(&Geometry::LineString(m.0[0].clone()))
        }
        other => geojson::geometry(other),
    }
}

/// The last vertex of a flowline (flowlines are digitized downstream).
fn downstream_end(flowline: &Feature) -> Option<Point<f64>> {
    let last = |l: &LineString<f64>| l.0.last().copied();
    match flowline.geometry.as_ref()? {
        Geometry::LineString(l) => last(l),
        Geometry::MultiLineString(m) => m.0.last().and_then(last),
        _ => None,
    }
    .map(Point::from)
}

/// The union of the catchments of `comid` and everything upstream of it:
/// one Polygon, or a MultiPolygon when they fall apart.
fn basin_of(comid: i64, data: &Data) -> Option<Value> {
    let polygons: Vec<Polygon<f64>> = data
        .upstream(comid)
        .into_iter()
        .filter_map(|c| data.catchment(c)?.geometry.as_ref())
        .flat_map(|g| match g {
            Geometry::Polygon(p) => vec![p.clone()],
            Geometry::MultiPolygon(m) => m.0.clone(),
            _ => Vec::new(),
        })
        // geo's unary_union takes its fill rule from the first ring it
        // sees and drops polygons winding the other way: one winding for all.
        .map(|p| p.orient(Direction::Default))
        .collect();
    let mut union = geo::unary_union(polygons.iter());
    let basin = match union.0.len() {
        0 => return None,
        1 => Geometry::Polygon(union.0.remove(0)),
        _ => Geometry::MultiPolygon(union),
    };
    Some(geojson::geometry(&basin))
}
