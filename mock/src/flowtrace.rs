//! The mock flowtrace process (`nldi-flowtrace` / `index-flowtrace`).
//!
//! The recorded point (lat 42.9561, lon -89.2158, direction `up`) answers
//! `tests/data/responses/flowtrace_up_yahara.json` verbatim. Other points in
//! a catchment of the data get a synthesized answer of the same shape: the
//! catchment's flowline cut at its vertex nearest the point, and a straight
//! raindrop path from the point to that vertex. Points outside every
//! catchment get HTTP 500 with a JSON description, as the real service does.

use super::data::Data;
use super::wire::{Reply, Request};
use geo::{Coord, Distance, Geometry, Haversine, Intersects, Point};
use hydroplot::collection::Collection;
use serde_json::{json, Value};

/// The recorded answer for [`RECORDED_POINT`] traced up.
const RECORDED: &[u8] = include_bytes!(concat!(
    concat!(env!("CARGO_MANIFEST_DIR"), "/.."),
    "/tests/data/responses/flowtrace_up_yahara.json"
));
/// (lon, lat) of the recorded trace.
const RECORDED_POINT: (f64, f64) = (-89.2158, 42.9561);

/// Answers one execution request.
pub(super) fn execute(request: &Request, data: &Data) -> Reply {
    let (lon, lat, direction) = match parse_inputs(&request.body) {
        Ok(v) => v,
        Err(why) => return Reply::error(400, why),
    };
    if (lon - RECORDED_POINT.0).abs() < 1e-9
        && (lat - RECORDED_POINT.1).abs() < 1e-9
        && direction == "up"
    {
        return Reply {
            status: 200,
            content_type: "application/json",
            headers: Vec::new(),
            body: RECORDED.to_vec(),
        };
    }
    let point = Point::new(lon, lat);
    let comid = data.layer(Collection::Catchment).iter().find_map(|item| {
        let b = item.bbox?;
        let inside = lon >= b[0] && lon <= b[2] && lat >= b[1] && lat <= b[3];
        (inside && item.feature.geometry.as_ref()?.intersects(&point))
            .then(|| item.feature.get_i64("featureid"))?
    });
    let Some(flowline) = comid.and_then(|c| data.flowline(c)) else {
        return Reply::json(
            500,
            "application/json",
            &json!({"code": "NoApplicableCode", "description": format!(
                "Error executing process: no NHDPlusV2 catchment contains the point ({lon}, {lat}); it is outside the data's domain"
            )}),
        );
    };
    let vertices: Vec<Coord<f64>> = match &flowline.geometry {
        Some(Geometry::LineString(l)) => l.0.clone(),
        Some(Geometry::MultiLineString(m)) => {
            m.0.iter().flat_map(|l| l.0.iter().copied()).collect()
        }
        _ => Vec::new(),
    };
    if vertices.len() < 2 {
        return Reply::json(
            500,
            "application/json",
            &json!({"description": "the flowline has no usable geometry"}),
        );
    }
    let distance = |c: &Coord<f64>| Haversine.distance(point, Point::from(*c));
    let nearest = (0..vertices.len())
        .min_by(|&a, &b| distance(&vertices[a]).total_cmp(&distance(&vertices[b])))
        .unwrap_or(0);
    let along = |from: usize, to: usize| -> f64 {
        vertices[from..=to]
            .windows(2)
            .map(|w| Haversine.distance(Point::from(w[0]), Point::from(w[1])))
            .sum()
    };
    let total = along(0, vertices.len() - 1);
    let measure = if total > 0.0 {
        100.0 * along(nearest, vertices.len() - 1) / total
    } else {
        0.0
    };
    let (id, portion) = match direction.as_str() {
        "up" => ("upstreamFlowline", &vertices[..=nearest.max(1)]),
        "down" => (
            "downstreamFlowline",
            &vertices[nearest.min(vertices.len() - 2)..],
        ),
        _ => ("nhdFlowline", &vertices[..]),
    };
    let hit = vertices[nearest];
    let name = flowline
        .get_str("gnis_name")
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or("none");
    let line =
        |coords: &[Coord<f64>]| -> Value { coords.iter().map(|c| json!([c.x, c.y])).collect() };
    Reply::json(
        200,
        "application/json",
        &json!({
            "type": "FeatureCollection",
            "features": [
                {
                    "type": "Feature", "id": id,
                    "geometry": {"type": "LineString", "coordinates": line(portion)},
                    "properties": {
                        "gnis_name": name, "comid": comid, "intersection_point": [hit.x, hit.y],
                        "reachcode": flowline.get_str("reachcode"),
                        "raindrop_pathDist": round2(distance(&hit)), "measure": round2(measure),
                    },
                },
                {
                    "type": "Feature", "id": "raindropPath",
                    "geometry": {"type": "LineString", "coordinates": line(&[point.0, hit])},
                    "properties": {},
                },
            ],
        }),
    )
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// `{"inputs":[{"id":"lat","value":".."},{"id":"lon",..},{"id":"raindroptrace",..},{"id":"direction",..}]}`.
fn parse_inputs(body: &[u8]) -> Result<(f64, f64, String), String> {
    let doc: Value =
        serde_json::from_slice(body).map_err(|e| format!("the request body is not JSON: {e}"))?;
    let inputs = doc
        .get("inputs")
        .and_then(Value::as_array)
        .ok_or("the body needs an \"inputs\" array")?;
    let input = |id: &str| -> Result<String, String> {
        let value = inputs
            .iter()
            .find(|i| i.get("id").and_then(Value::as_str) == Some(id))
            .and_then(|i| i.get("value"))
            .ok_or_else(|| format!("missing input {id:?}"))?;
        Ok(value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_string))
    };
    let number = |id: &str| -> Result<f64, String> {
        let v = input(id)?;
        v.trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .ok_or_else(|| format!("input {id} is not a number: {v:?}"))
    };
    let (lat, lon) = (number("lat")?, number("lon")?);
    if !(-90.0..=90.0).contains(&lat) || !(-180.0..=180.0).contains(&lon) {
        return Err(format!("lat {lat} / lon {lon} are out of range"));
    }
    let direction = input("direction")?;
    if !["up", "down", "none"].contains(&direction.as_str()) {
        return Err(format!(
            "direction must be up, down or none, got {direction:?}"
        ));
    }
    input("raindroptrace")?;
    Ok((lon, lat, direction))
}
