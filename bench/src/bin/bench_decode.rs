//! Page decode throughput: the fabric client's decoding (serde_json into
//! `geojson::FeatureCollection`, then `from_geojson_feature`) against a
//! prototype that deserializes coordinates straight into `geo` types (no
//! heap vector per position). Pages come from an in-process mock serving the
//! generated network (see `bench_make_network`).
//!
//! Usage: `bench_decode NETWORK.gpkg`

use geo::{Coord, Geometry, LineString, MultiLineString, MultiPolygon, Point, Polygon};
use hydroplot::feature::{from_geojson_feature, lowercase_keys, Feature};
use hydroplot_mock::MockServer;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::time::Instant;

fn main() {
    let file = std::env::args()
        .nth(1)
        .expect("usage: bench_decode NETWORK.gpkg");
    let server = MockServer::start_with_data(&[file.into()], 0).expect("mock");
    server.set_max_limit(1000);
    let agent: ureq::Agent = ureq::Agent::config_builder().build().into();
    let mut pages = Vec::new();
    for offset in (0..).step_by(1000) {
        let url = format!(
            "{}/collections/nhdflowline_network/items?limit=1000&offset={offset}",
            server.fabric_url()
        );
        let body = agent
            .get(&url)
            .call()
            .expect("page")
            .body_mut()
            .with_config()
            .limit(u64::MAX)
            .read_to_vec()
            .expect("body");
        let done =
            !String::from_utf8_lossy(&body[body.len().saturating_sub(2000)..]).contains("\"next\"");
        pages.push(body);
        if done {
            break;
        }
    }
    let mb = pages.iter().map(Vec::len).sum::<usize>() as f64 / 1e6;
    let time = |name: &str, f: &dyn Fn(&[u8]) -> Vec<Feature>| {
        let t = Instant::now();
        let n: usize = pages.iter().map(|p| f(p).len()).sum();
        let s = t.elapsed().as_secs_f64();
        println!(
            "{name:<40} {:>10.1} MB/s ({n} features, {mb:.0} MB, {s:.2} s)",
            mb / s
        );
        n
    };
    let a = time("decode_current", &current);
    let b = time("decode_direct_prototype", &direct);
    assert_eq!(a, b);
    // Same features either way.
    for p in &pages {
        assert_eq!(current(p), direct(p), "the prototype decodes identically");
    }
    println!("identical features: yes");
    // What projecting every vertex to Web Mercator costs, as the map does.
    let features: Vec<Feature> = pages.iter().flat_map(|p| direct(p)).collect();
    let vertices: usize = features
        .iter()
        .filter_map(|f| f.geometry.as_ref())
        .map(geo::CoordsIter::coords_count)
        .sum();
    let to_map = hydroplot::crs::Transformer::new("EPSG:4269", "EPSG:3857").expect("transformer");
    let t = Instant::now();
    for f in &features {
        if let Some(g) = &f.geometry {
            let mut g = g.clone();
            to_map.geometry(&mut g).expect("projected");
        }
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "{:<40} {:>10.1} ns/vertex ({vertices} vertices, {s:.3} s with the clones)",
        "project_4269_to_3857",
        s * 1e9 / vertices as f64
    );
}

fn current(page: &[u8]) -> Vec<Feature> {
    let fc: geojson::FeatureCollection = serde_json::from_slice(page).expect("page");
    fc.features
        .into_iter()
        .map(|f| from_geojson_feature(f).expect("feature"))
        .collect()
}

fn direct(page: &[u8]) -> Vec<Feature> {
    #[derive(Deserialize)]
    struct Page {
        features: Vec<Raw>,
    }
    #[derive(Deserialize)]
    struct Raw {
        id: Option<Value>,
        properties: Option<Map<String, Value>>,
        geometry: Option<Geom>,
    }
    let page: Page = serde_json::from_slice(page).expect("page");
    page.features
        .into_iter()
        .map(|r| Feature {
            id: r.id,
            geometry: r.geometry.map(|g| g.0),
            properties: lowercase_keys(r.properties.unwrap_or_default()),
        })
        .collect()
}

/// Nested coordinate arrays: a position, or a list of them or of lists.
enum Coords {
    Pos(Coord<f64>),
    List(Vec<Coords>),
}

impl<'de> Deserialize<'de> for Coords {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(CoordsVisitor)
    }
}

/// An element of a coordinate array: a number or a nested array.
enum Elem {
    Num(f64),
    Nested(Coords),
}

impl<'de> Deserialize<'de> for Elem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Elem;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number or an array")
            }
            fn visit_f64<E>(self, v: f64) -> Result<Elem, E> {
                Ok(Elem::Num(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Elem, E> {
                Ok(Elem::Num(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Elem, E> {
                Ok(Elem::Num(v as f64))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Elem, A::Error> {
                CoordsVisitor.visit_seq(seq).map(Elem::Nested)
            }
        }
        d.deserialize_any(V)
    }
}

struct CoordsVisitor;

impl<'de> Visitor<'de> for CoordsVisitor {
    type Value = Coords;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("GeoJSON coordinates")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Coords, A::Error> {
        match seq.next_element::<Elem>()? {
            None => Ok(Coords::List(Vec::new())),
            Some(Elem::Num(x)) => {
                let y: f64 = seq.next_element()?.ok_or_else(|| {
                    de::Error::custom("a position has fewer than two coordinates")
                })?;
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(Coords::Pos(Coord { x, y }))
            }
            Some(Elem::Nested(first)) => {
                let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(8) + 1);
                list.push(first);
                while let Some(c) = seq.next_element::<Coords>()? {
                    list.push(c);
                }
                Ok(Coords::List(list))
            }
        }
    }
}

/// A GeoJSON geometry decoded into `geo`, members in any order.
struct Geom(Geometry<f64>);

impl<'de> Deserialize<'de> for Geom {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Geom;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a GeoJSON geometry")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Geom, A::Error> {
                let (mut kind, mut coords) = (None::<String>, None::<Coords>);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "type" => kind = Some(map.next_value()?),
                        "coordinates" => coords = Some(map.next_value()?),
                        _ => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                let (kind, coords) = kind
                    .zip(coords)
                    .ok_or_else(|| de::Error::custom("type and coordinates expected"))?;
                build(&kind, coords).map(Geom).map_err(de::Error::custom)
            }
        }
        d.deserialize_map(V)
    }
}

fn positions(c: Coords) -> Result<Vec<Coord<f64>>, String> {
    match c {
        Coords::List(l) => l
            .into_iter()
            .map(|p| match p {
                Coords::Pos(c) => Ok(c),
                Coords::List(_) => Err("a position expected".to_string()),
            })
            .collect(),
        Coords::Pos(_) => Err("a list of positions expected".into()),
    }
}

fn lists(c: Coords) -> Result<Vec<Coords>, String> {
    match c {
        Coords::List(l) => Ok(l),
        Coords::Pos(_) => Err("a list expected".into()),
    }
}

fn polygon(c: Coords) -> Result<Polygon<f64>, String> {
    let mut rings = lists(c)?.into_iter().map(|r| positions(r).map(LineString));
    let exterior = rings
        .next()
        .transpose()?
        .unwrap_or_else(|| LineString(Vec::new()));
    Ok(Polygon::new(exterior, rings.collect::<Result<_, _>>()?))
}

fn build(kind: &str, c: Coords) -> Result<Geometry<f64>, String> {
    Ok(match kind {
        "Point" => match c {
            Coords::Pos(p) => Geometry::Point(Point(p)),
            _ => return Err("a Point needs one position".into()),
        },
        "MultiPoint" => Geometry::MultiPoint(positions(c)?.into_iter().map(Point).collect()),
        "LineString" => Geometry::LineString(LineString(positions(c)?)),
        "MultiLineString" => Geometry::MultiLineString(MultiLineString(
            lists(c)?
                .into_iter()
                .map(|l| positions(l).map(LineString))
                .collect::<Result<_, _>>()?,
        )),
        "Polygon" => Geometry::Polygon(polygon(c)?),
        "MultiPolygon" => Geometry::MultiPolygon(MultiPolygon(
            lists(c)?
                .into_iter()
                .map(polygon)
                .collect::<Result<_, _>>()?,
        )),
        other => return Err(format!("unsupported geometry type {other}")),
    })
}
