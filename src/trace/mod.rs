//! The raindrop trace result: the flowline portion the raindrop reaches and
//! the raindrop's path to it, parsed from the flowtrace process's answer.
//!
//! Parsing is pure (no network) and tolerant of the two generations of the
//! service: current field names (`raindrop_pathDist`, `intersection_point`
//! as `[lon, lat]`) and older ones (`raindropPathDist`, `intersectionPoint`,
//! possibly `[lat, lon]`: the order is detected by which reading lies on the
//! flowline). Missing values are `None`: the service's blank markers, the
//! string `"null"` for a number and `"none"` (or an empty string) for
//! `gnis_name`, are read as missing.

mod draw;
pub mod map;

/// The CRS of trace results (WGS 84 longitude/latitude).
pub const TRACE_CRS: &str = "EPSG:4326";

use crate::error::{Error, Result};
use crate::feature::value_as_i64;
use serde_json::{Map, Value};

/// The id the service gives the raindrop's path.
pub const RAINDROP_PATH_ID: &str = "raindropPath";

/// One LineString of a trace, in WGS 84 longitude/latitude.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceFeature {
    /// `upstreamFlowline`, `downstreamFlowline`, `nhdFlowline` or
    /// `raindropPath`; empty when the service gave none.
    pub id: String,
    pub gnis_name: Option<String>,
    pub comid: Option<i64>,
    pub reachcode: Option<String>,
    /// Length of the raindrop's path in metres.
    pub raindrop_path_dist: Option<f64>,
    /// Position of the intersection along the flowline, percent.
    pub measure: Option<f64>,
    /// Where the raindrop meets the flowline, `[lon, lat]`.
    pub intersection_point: Option<[f64; 2]>,
    /// Vertices `x0, y0, x1, y1, ...` (longitude, latitude).
    pub coords: Vec<f64>,
}

/// A raindrop trace: the flowline feature(s) first, the raindrop path last.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub features: Vec<TraceFeature>,
}

impl Trace {
    /// Parses the flowtrace process's answer: a GeoJSON FeatureCollection of
    /// exactly 2 LineString features with at least one vertex between them.
    /// Anything else is an `Error::Service` saying what was wrong.
    pub fn parse(body: &[u8]) -> Result<Trace> {
        let doc: Value = serde_json::from_slice(body)
            .map_err(|e| bad(format!("the answer is not JSON ({e})")))?;
        let features = doc
            .get("features")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("the answer is not a GeoJSON FeatureCollection".into()))?;
        if features.len() != 2 {
            return Err(bad(format!(
                "the answer has {} features instead of 2",
                features.len()
            )));
        }
        let mut features = features
            .iter()
            .enumerate()
            .map(|(i, f)| parse_feature(f).map_err(|m| bad(format!("feature {i}: {m}"))))
            .collect::<Result<Vec<_>>>()?;
        if features.iter().all(|f| f.coords.is_empty()) {
            return Err(bad("both features have empty geometries".into()));
        }
        // Stable: the flowline keeps its place before the raindrop path.
        features.sort_by_key(|f| f.id == RAINDROP_PATH_ID);
        Ok(Trace { features })
    }

    /// `[xmin, ymin, xmax, ymax]` of every vertex (lon/lat degrees).
    pub fn bbox(&self) -> [f64; 4] {
        let init = [
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ];
        self.features
            .iter()
            .flat_map(|f| f.coords.chunks_exact(2))
            .fold(init, |b, p| {
                [
                    b[0].min(p[0]),
                    b[1].min(p[1]),
                    b[2].max(p[0]),
                    b[3].max(p[1]),
                ]
            })
    }

    /// The trace as features: LineString geometries, the GeoJSON document's
    /// properties (the 7 [`FIELDS`], `id` among them, so a table of them
    /// keeps which row is the raindrop path).
    pub fn to_features(&self) -> Vec<crate::feature::Feature> {
        self.features
            .iter()
            .map(|f| crate::feature::Feature {
                id: None,
                geometry: Some(geo::Geometry::LineString(line_string(f))),
                properties: properties(f),
            })
            .collect()
    }

    /// The trace as a GeoJSON FeatureCollection with the current field names:
    /// each feature's `id` member, and properties holding all 7 [`FIELDS`]
    /// (`id` again, so readers that drop the member keep it; a missing value
    /// is `null`; `intersection_point` is `[lon, lat]` or `[]`).
    pub fn to_geojson(&self) -> Vec<u8> {
        let features: Vec<Value> = self.features.iter().map(feature_to_json).collect();
        let doc = serde_json::json!({ "type": "FeatureCollection", "features": features });
        serde_json::to_vec(&doc).expect("a JSON value always serializes")
    }
}

fn bad(reason: String) -> Error {
    Error::Service(format!(
        "The flowtrace process answered an unusable trace: {reason}."
    ))
}

fn parse_feature(f: &Value) -> std::result::Result<TraceFeature, String> {
    let geometry = f.get("geometry").ok_or("it has no geometry")?;
    if geometry.get("type").and_then(Value::as_str) != Some("LineString") {
        return Err("its geometry is not a LineString".into());
    }
    let coords = parse_coords(geometry.get("coordinates"))?;
    let id = match f.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    let empty = Map::new();
    let props = f
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let get = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| props.get(*n))
            .filter(|v| !v.is_null())
    };
    let intersection = get(&["intersection_point", "intersectionPoint"]).and_then(point_of);
    Ok(TraceFeature {
        id,
        gnis_name: get(&["gnis_name"])
            .and_then(Value::as_str)
            .and_then(name_of),
        comid: get(&["comid"]).and_then(value_as_i64),
        reachcode: get(&["reachcode"])
            .and_then(Value::as_str)
            .and_then(name_of),
        raindrop_path_dist: get(&["raindrop_pathDist", "raindropPathDist"]).and_then(number_of),
        measure: get(&["measure"]).and_then(number_of),
        intersection_point: intersection.map(|p| lon_lat_order(p, &coords)),
        coords,
    })
}

/// Vertices of a LineString, flattened; a third ordinate is dropped.
fn parse_coords(v: Option<&Value>) -> std::result::Result<Vec<f64>, String> {
    let vertices = v
        .and_then(Value::as_array)
        .ok_or("its geometry has no coordinates")?;
    let mut out = Vec::with_capacity(vertices.len() * 2);
    for (i, vertex) in vertices.iter().enumerate() {
        let xy = vertex
            .as_array()
            .filter(|a| a.len() >= 2)
            .and_then(|a| point_of_slice(a));
        let [x, y] = xy.ok_or_else(|| format!("vertex {i} is not a pair of finite numbers"))?;
        out.extend([x, y]);
    }
    Ok(out)
}

fn point_of(v: &Value) -> Option<[f64; 2]> {
    v.as_array()
        .filter(|a| a.len() == 2)
        .and_then(|a| point_of_slice(a))
}

fn point_of_slice(a: &[Value]) -> Option<[f64; 2]> {
    Some([finite(a[0].as_f64()?)?, finite(a[1].as_f64()?)?])
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// A number, or a string holding one; `"null"` and other text are missing.
fn number_of(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64().and_then(finite),
        Value::String(s) => s.trim().parse().ok().and_then(finite),
        _ => None,
    }
}

/// A text value; blank and the service's `"none"` are missing.
fn name_of(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty() && !t.eq_ignore_ascii_case("none")).then(|| t.to_string())
}

/// `[lon, lat]` from a point that may be `[lat, lon]`: the reading nearer the
/// line wins (ties and lines without vertices keep the given order).
fn lon_lat_order(p: [f64; 2], coords: &[f64]) -> [f64; 2] {
    let swapped = [p[1], p[0]];
    if distance_to_line(swapped, coords) < distance_to_line(p, coords) {
        swapped
    } else {
        p
    }
}

/// Planar distance (degrees) from `p` to the polyline `coords`; infinite when
/// it has no vertex.
fn distance_to_line(p: [f64; 2], coords: &[f64]) -> f64 {
    let pts: Vec<[f64; 2]> = coords.chunks_exact(2).map(|c| [c[0], c[1]]).collect();
    match pts.as_slice() {
        [] => f64::INFINITY,
        [only] => distance(p, *only),
        _ => pts
            .windows(2)
            .map(|w| distance_to_segment(p, w[0], w[1]))
            .fold(f64::INFINITY, f64::min),
    }
}

fn distance(a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

fn distance_to_segment(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let len2 = dx * dx + dy * dy;
    let t = if len2 == 0.0 {
        0.0
    } else {
        (((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len2).clamp(0.0, 1.0)
    };
    distance(p, [a[0] + t * dx, a[1] + t * dy])
}

/// The spec's trace fields, in its order (`id` first: a feature's `id`).
pub const FIELDS: [&str; 7] = [
    "id",
    "gnis_name",
    "comid",
    "reachcode",
    "raindrop_pathDist",
    "measure",
    "intersection_point",
];

/// The properties of a trace feature: every one of the spec's 7 [`FIELDS`]
/// with the current names, a missing value as `null`, and
/// `intersection_point` as `[lon, lat]` or, when the feature has none (the
/// raindrop path), `[]`.
fn properties(f: &TraceFeature) -> Map<String, Value> {
    let point = f.intersection_point.map_or_else(Vec::new, |p| p.to_vec());
    let values = [
        Value::from(f.id.clone()),
        f.gnis_name.clone().into(),
        f.comid.into(),
        f.reachcode.clone().into(),
        f.raindrop_path_dist.into(),
        f.measure.into(),
        Value::from(point),
    ];
    FIELDS.iter().map(|k| k.to_string()).zip(values).collect()
}

fn line_string(f: &TraceFeature) -> geo::LineString<f64> {
    f.coords
        .chunks_exact(2)
        .map(|c| geo::Coord { x: c[0], y: c[1] })
        .collect()
}

fn feature_to_json(f: &TraceFeature) -> Value {
    let coords: Vec<Value> = f
        .coords
        .chunks_exact(2)
        .map(|c| Value::from(c.to_vec()))
        .collect();
    serde_json::json!({
        "type": "Feature",
        "id": f.id,
        "geometry": { "type": "LineString", "coordinates": coords },
        "properties": properties(f),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const YAHARA: &[u8] = include_bytes!("../../tests/data/responses/flowtrace_up_yahara.json");

    #[test]
    fn parses_the_recorded_yahara_trace() {
        let t = Trace::parse(YAHARA).unwrap();
        assert_eq!(t.features.len(), 2);
        let (f, r) = (&t.features[0], &t.features[1]);
        assert_eq!(f.id, "upstreamFlowline");
        assert_eq!(f.gnis_name.as_deref(), Some("Yahara River"));
        assert_eq!(f.comid, Some(13297178));
        assert_eq!(f.reachcode.as_deref(), Some("07090002007369"));
        assert_eq!(f.raindrop_path_dist, Some(242.09));
        assert_eq!(f.measure, Some(30.15));
        assert_eq!(
            f.intersection_point,
            Some([-89.21324480351977, 42.956821579907405])
        );
        assert_eq!(f.coords.len(), 17 * 2);
        assert_eq!(&f.coords[..2], &[-89.222294, 42.969202]);
        assert_eq!(r.id, RAINDROP_PATH_ID);
        assert_eq!(
            (r.comid, r.gnis_name.as_deref(), r.intersection_point),
            (None, None, None)
        );
        assert_eq!(r.coords.len(), 7 * 2);
        assert_eq!(&r.coords[..2], &[-89.2158, 42.9561]);
        assert_eq!(t.bbox(), [-89.222294, 42.956, -89.212523, 42.969406]);
    }

    #[test]
    fn geojson_round_trips() {
        let t = Trace::parse(YAHARA).unwrap();
        assert_eq!(Trace::parse(&t.to_geojson()).unwrap(), t);
    }

    /// The recorded answer rewritten as the older service wrote it.
    fn older_service(lat_lon: bool) -> Vec<u8> {
        let mut doc: Value = serde_json::from_slice(YAHARA).unwrap();
        let props = doc["features"][0]["properties"].as_object_mut().unwrap();
        let p = props.remove("intersection_point").unwrap();
        let p = if lat_lon {
            serde_json::json!([p[1], p[0]])
        } else {
            p
        };
        props.insert("intersectionPoint".into(), p);
        let d = props.remove("raindrop_pathDist").unwrap();
        props.insert("raindropPathDist".into(), d);
        props.insert("measure".into(), "null".into());
        props.insert("gnis_name".into(), "none".into());
        // Older answers put the raindrop path first.
        doc["features"].as_array_mut().unwrap().reverse();
        serde_json::to_vec(&doc).unwrap()
    }

    #[test]
    fn reads_the_older_services_names_and_lat_lon_order() {
        for lat_lon in [false, true] {
            let t = Trace::parse(&older_service(lat_lon)).unwrap();
            let f = &t.features[0];
            assert_eq!(f.id, "upstreamFlowline");
            assert_eq!(t.features[1].id, RAINDROP_PATH_ID);
            assert_eq!(
                f.intersection_point,
                Some([-89.21324480351977, 42.956821579907405])
            );
            assert_eq!(f.raindrop_path_dist, Some(242.09));
            assert_eq!((f.measure, f.gnis_name.as_deref()), (None, None));
            assert_eq!(f.comid, Some(13297178));
        }
    }

    #[test]
    fn other_documents_are_service_errors() {
        let one = br#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0]]},"properties":{}}]}"#;
        let point = br#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[0,0]},"properties":{}},{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0]]},"properties":{}}]}"#;
        let empty = br#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[]}},{"type":"Feature","geometry":{"type":"LineString","coordinates":[]}}]}"#;
        let bad_vertex = br#"{"features":[{"geometry":{"type":"LineString","coordinates":[["a",1]]}},{"geometry":{"type":"LineString","coordinates":[[0,0]]}}]}"#;
        let cases: [(&[u8], &str); 6] = [
            (b"<html>oops</html>", "not JSON"),
            (b"{\"type\":\"Feature\"}", "not a GeoJSON FeatureCollection"),
            (one, "1 features instead of 2"),
            (point, "feature 0: its geometry is not a LineString"),
            (empty, "both features have empty geometries"),
            (
                bad_vertex,
                "feature 0: vertex 0 is not a pair of finite numbers",
            ),
        ];
        for (body, reason) in cases {
            match Trace::parse(body) {
                Err(Error::Service(m)) => assert!(m.contains(reason), "{m}"),
                other => panic!("{reason}: {other:?}"),
            }
        }
    }
}
