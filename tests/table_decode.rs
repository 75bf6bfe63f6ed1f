//! The columnar page decoder against the decoder it replaces (the geojson
//! crate's FeatureCollection, then `from_geojson_feature`), on the recorded
//! real responses of the fabric service, and on damaged inputs.

use hydroplot::feature::{from_geojson_feature, Feature};
use hydroplot::table::decode::decode_page;
use serde_json::Value;
use std::path::PathBuf;

fn recorded_pages() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/responses");
    let mut pages: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.contains("items") && name.ends_with(".json")
        })
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    pages.sort();
    assert!(pages.len() >= 5, "the recorded items pages");
    pages
}

/// The features as the geojson crate reads them (the decoder before issue 16).
fn geojson_features(bytes: &[u8]) -> Vec<Feature> {
    let fc: geojson::FeatureCollection = serde_json::from_slice(bytes).unwrap();
    fc.features
        .into_iter()
        .map(|f| from_geojson_feature(f).unwrap())
        .collect()
}

/// Same JSON value, numbers compared as numbers (a float column gives
/// `7.0` for a `7` on a row of a column that also holds fractions).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x
            .as_i64()
            .zip(y.as_i64())
            .map_or(x.as_f64() == y.as_f64(), |(x, y)| x == y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

fn coords(f: &Feature) -> Vec<(f64, f64)> {
    use geo::CoordsIter;
    f.geometry
        .iter()
        .flat_map(|g| g.coords_iter().map(|c| (c.x, c.y)).collect::<Vec<_>>())
        .collect()
}

#[test]
fn recorded_responses_decode_to_the_same_features() {
    let mut checked = 0;
    for (path, bytes) in recorded_pages() {
        let name = path.display();
        let want = geojson_features(&bytes);
        let page = decode_page(&bytes).unwrap();
        let got = page.table.to_features();
        assert_eq!(got.len(), want.len(), "{name}");
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(page.number_matched, doc["numberMatched"].as_u64(), "{name}");
        assert_eq!(
            page.number_returned,
            doc["numberReturned"].as_u64(),
            "{name}"
        );
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.id, w.id, "{name} feature {i} id");
            // Every property of the source, with the same value; a column
            // the feature lacks is null.
            for (k, v) in &w.properties {
                let found = g.properties.get(k).unwrap_or(&Value::Null);
                assert!(
                    same_value(found, v),
                    "{name} feature {i} {k}: {found} != {v}"
                );
                checked += 1;
            }
            for (k, v) in &g.properties {
                assert!(
                    w.properties.contains_key(k) || v.is_null(),
                    "{name} {i} {k}"
                );
            }
            // Same geometry type, same coordinates to 1e-9.
            let kind = |f: &Feature| f.geometry.as_ref().map(std::mem::discriminant);
            assert_eq!(kind(g), kind(w), "{name} feature {i} geometry type");
            let (cg, cw) = (coords(g), coords(w));
            assert_eq!(cg.len(), cw.len(), "{name} feature {i} vertices");
            for (a, b) in cg.iter().zip(&cw) {
                assert!(
                    (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9,
                    "{name} {i}"
                );
            }
            // The accessors agree with the feature's.
            for key in ["comid", "hydroseq", "streamorde", "gnis_name", "lengthkm"] {
                let col = page.table.column(key);
                assert_eq!(
                    col.and_then(|c| c.i64(i)),
                    w.get_i64(key),
                    "{name} {i} {key}"
                );
                assert_eq!(
                    col.and_then(|c| c.f64(i)),
                    w.get_f64(key),
                    "{name} {i} {key}"
                );
                assert_eq!(
                    col.and_then(|c| c.str(i)),
                    w.get_str(key),
                    "{name} {i} {key}"
                );
            }
            assert_eq!(page.table.geometries().bbox(i), w.bbox(), "{name} {i} bbox");
        }
    }
    assert!(checked > 500, "{checked} property values compared");
}

/// A small deterministic generator (no dependency for a fuzz-style test).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
}

#[test]
fn truncated_and_garbled_pages_never_panic() {
    let mut rng = Lcg(16);
    let alphabet = b"{}[],:\"0123456789.-eE ntrufalsx\\";
    for (_, bytes) in recorded_pages() {
        // Every truncation of the smaller pages, a stride of the larger.
        let step = (bytes.len() / 3000).max(1);
        for end in (0..bytes.len()).step_by(step) {
            let _ = decode_page(&bytes[..end]);
        }
        for _ in 0..1000 {
            let mut b = bytes.clone();
            for _ in 0..1 + rng.next() % 4 {
                let at = rng.next() % b.len();
                match rng.next() % 3 {
                    0 => b[at] = alphabet[rng.next() % alphabet.len()],
                    1 => {
                        b.remove(at);
                    }
                    _ => b.insert(at, alphabet[rng.next() % alphabet.len()]),
                }
            }
            if let Ok(page) = decode_page(&b) {
                // Whatever decodes is readable everywhere.
                let t = &page.table;
                for row in 0..t.len() {
                    let _ = (t.geometry(row), t.geometries().bbox(row), t.id(row));
                }
                let _ = t.to_features();
            }
        }
    }
}
