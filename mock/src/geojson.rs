//! GeoJSON geometry objects (RFC 7946 section 3.1), built by the mock as
//! serde_json values: `{"type": ..., "coordinates": ...}` with positions
//! `[x, y]`, or `{"type": "GeometryCollection", "geometries": [...]}`.

use geo::{Coord, Geometry, LineString, Polygon};
use serde_json::{json, Value};

/// The GeoJSON object of `geometry`. A `Line` is written as the LineString
/// it is, a `Rect` or `Triangle` as the Polygon it is.
pub fn geometry(geometry: &Geometry<f64>) -> Value {
    let (kind, coordinates) = match geometry {
        Geometry::Point(p) => ("Point", position(p.0)),
        Geometry::MultiPoint(m) => ("MultiPoint", m.0.iter().map(|p| position(p.0)).collect()),
        Geometry::Line(l) => ("LineString", json!([position(l.start), position(l.end)])),
        Geometry::LineString(l) => ("LineString", line(l)),
        Geometry::MultiLineString(m) => ("MultiLineString", m.0.iter().map(line).collect()),
        Geometry::Polygon(p) => ("Polygon", rings(p)),
        Geometry::MultiPolygon(m) => ("MultiPolygon", m.0.iter().map(rings).collect()),
        Geometry::Rect(r) => ("Polygon", rings(&r.to_polygon())),
        Geometry::Triangle(t) => ("Polygon", rings(&t.to_polygon())),
        Geometry::GeometryCollection(c) => {
            let members: Vec<Value> = c.0.iter().map(self::geometry).collect();
            return json!({"type": "GeometryCollection", "geometries": members});
        }
    };
    json!({"type": kind, "coordinates": coordinates})
}

fn position(c: Coord<f64>) -> Value {
    json!([c.x, c.y])
}

fn line(l: &LineString<f64>) -> Value {
    l.0.iter().copied().map(position).collect()
}

/// The exterior ring, then the holes.
fn rings(p: &Polygon<f64>) -> Value {
    std::iter::once(p.exterior())
        .chain(p.interiors())
        .map(line)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::{line_string, point, polygon, GeometryCollection, MultiLineString};

    #[test]
    fn geometries_are_written_as_rfc_7946_lays_them_out() {
        let holed = polygon!(
            exterior: [(x: 0.0, y: 0.0), (x: 4.0, y: 0.0), (x: 4.0, y: 4.0), (x: 0.0, y: 0.0)],
            interiors: [[(x: 1.0, y: 1.0), (x: 2.0, y: 1.0), (x: 2.0, y: 2.0), (x: 1.0, y: 1.0)]],
        );
        let collection = Geometry::GeometryCollection(GeometryCollection(vec![
            Geometry::Point(point!(x: -89.5, y: 43.25)),
            Geometry::MultiLineString(MultiLineString(vec![
                line_string![(x: 1.0, y: 2.0), (x: 3.0, y: 4.5)],
            ])),
            Geometry::Polygon(holed),
        ]));
        assert_eq!(
            geometry(&collection).to_string(),
            concat!(
                r#"{"geometries":["#,
                r#"{"coordinates":[-89.5,43.25],"type":"Point"},"#,
                r#"{"coordinates":[[[1.0,2.0],[3.0,4.5]]],"type":"MultiLineString"},"#,
                r#"{"coordinates":[[[0.0,0.0],[4.0,0.0],[4.0,4.0],[0.0,0.0]],"#,
                r#"[[1.0,1.0],[2.0,1.0],[2.0,2.0],[1.0,1.0]]],"type":"Polygon"}"#,
                r#"],"type":"GeometryCollection"}"#
            )
        );
    }
}
