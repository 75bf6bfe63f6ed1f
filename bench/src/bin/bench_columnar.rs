//! Single-thread page decode: the columnar decoder (`table::decode`)
//! against the one it replaces (the geojson crate's FeatureCollection, then
//! `feature::from_geojson_feature`, as `fabric::parse_items_page` did), on
//! pages of 500 real flowlines (the mock's wire form of the fixtures'
//! flowlines, repeated to about 50 MB), and the memory each result holds.
//!
//! Usage: `cargo run --release -p hydroplot-bench --bin bench_columnar [MB [REPS|profile]]`
//! (`REPS`, 5 by default: the decode speeds are the best and the median of
//! that many passes, as the machine is shared; `profile`: only the columnar
//! decoder, five times, for `perf record`).

use hydroplot::collection::Collection;
use hydroplot::feature::{from_geojson_feature, Feature};
use hydroplot::table::{decode::decode_page, Table};
use hydroplot_mock::data::Data;
use std::time::Instant;

const PAGE: usize = 500;

fn main() {
    let target_mb: f64 = std::env::args()
        .nth(1)
        .map_or(50.0, |a| a.parse().expect("a size in MB"));
    let data = Data::load().expect("the fixtures");
    let items = data.layer(Collection::FlowlineNetwork);
    // Pages of PAGE features cycling through the served flowlines.
    let mut pages: Vec<Vec<u8>> = Vec::new();
    let (mut total, mut next) = (0usize, 0usize);
    while (total as f64) < target_mb * 1e6 {
        let mut page = br#"{"type":"FeatureCollection","features":["#.to_vec();
        for k in 0..PAGE {
            if k > 0 {
                page.push(b',');
            }
            page.extend_from_slice(items[next % items.len()].json.as_bytes());
            next += 1;
        }
        page.extend_from_slice(
            format!(r#"],"numberMatched":100000,"numberReturned":{PAGE},"links":[{{"rel":"next","href":"x"}}]}}"#)
                .as_bytes(),
        );
        total += page.len();
        pages.push(page);
    }
    let mb = total as f64 / 1e6;
    let features = pages.len() * PAGE;
    println!(
        "{} pages of {PAGE} flowlines, {features} features, {mb:.1} MB of GeoJSON ({:.0} B/feature)",
        pages.len(),
        total as f64 / features as f64
    );

    if std::env::args().nth(2).as_deref() == Some("profile") {
        // Only the columnar decoder, for `perf record`.
        for _ in 0..5 {
            for p in &pages {
                decode_page(p).expect("a page");
            }
        }
        return;
    }
    let reps: usize = std::env::args()
        .nth(2)
        .map_or(5, |a| a.parse().expect("a number of passes, or profile"));
    // Columnar first (the allocator keeps what the other path freed), its
    // first pass measuring memory too.
    let rss0 = rss();
    let t = Instant::now();
    let tables: Vec<Table> = pages
        .iter()
        .map(|p| decode_page(p).expect("a page").table)
        .collect();
    let first = t.elapsed().as_secs_f64();
    let held = rss().saturating_sub(rss0);
    // Interleaved passes, so that a burst of load elsewhere hits all three.
    let (mut ignored, mut touched, mut columnar) = (vec![], vec![], vec![]);
    for _ in 0..reps {
        // The floor of any serde_json decoder: validating the pages, keeping nothing.
        ignored.push(time(|| {
            for p in &pages {
                serde_json::from_slice::<serde::de::IgnoredAny>(p).expect("a page");
            }
        }));
        // The floor of a serde_json decoder that reads every value: each
        // string checked and each number parsed, nothing kept.
        touched.push(time(|| {
            for p in &pages {
                serde_json::from_slice::<Touch>(p).expect("a page");
            }
        }));
        columnar.push(time(|| {
            for p in &pages {
                decode_page(p).expect("a page");
            }
        }));
    }
    for (name, runs) in [
        ("serde_json IgnoredAny (scan only, 1 thread)", &mut ignored),
        ("serde_json reading every value (1 thread)", &mut touched),
        ("columnar decode_page (1 thread)", &mut columnar),
    ] {
        if runs.is_empty() {
            continue;
        }
        runs.sort_by(f64::total_cmp);
        println!(
            "{name:<44} {:>7.0} MB/s best, {:.0} median of {}",
            mb / runs[0],
            mb / runs[runs.len() / 2],
            runs.len()
        );
    }
    let heap: usize = tables.iter().map(Table::heap_bytes).sum();
    let coords: usize = tables
        .iter()
        .map(|t| t.geometries().coordinate_count())
        .sum();
    println!(
        "{:<44} {:>7.0} MB/s (first pass, keeping the tables)",
        "columnar decode_page (1 thread)",
        mb / first
    );
    println!(
        "{:<44} {:>7.0} B/feature held ({:.2}x the JSON; RSS growth {:.2}x), {:.1} vertices/feature",
        "  columns + geometry buffers",
        heap as f64 / features as f64,
        heap as f64 / total as f64,
        held as f64 / total as f64,
        coords as f64 / features as f64
    );
    let t = Instant::now();
    let all = Table::concat(&tables).expect("concatenated");
    println!(
        "{:<44} {:>7.0} MB/s  {:.3} s",
        "  concatenating the pages",
        mb / t.elapsed().as_secs_f64(),
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let n: usize = tables.iter().map(|t| t.to_features().len()).sum();
    println!(
        "{:<44} {:>7.0} MB/s  {:.3} s ({n} features)",
        "  to Vec<Feature> (the boundary for now)",
        mb / t.elapsed().as_secs_f64(),
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let comids: i64 = match all.column("comid") {
        Some(c) => (0..all.len()).filter_map(|i| c.i64(i)).sum(),
        None => 0,
    };
    println!(
        "{:<44} {:>7.1} ns/row (checksum {comids})",
        "  comid of every row via Column::i64",
        t.elapsed().as_secs_f64() * 1e9 / all.len() as f64
    );
    drop((tables, all));

    let rss0 = rss();
    let t = Instant::now();
    let current: Vec<_> = pages.iter().map(|p| geojson_features(p)).collect();
    let s = t.elapsed().as_secs_f64();
    let held = rss().saturating_sub(rss0);
    assert_eq!(current.iter().map(Vec::len).sum::<usize>(), features);
    println!(
        "{:<44} {:>7.0} MB/s  {s:.3} s",
        "geojson + from_geojson_feature (1 thread)",
        mb / s
    );
    println!(
        "{:<44} {:>7.0} B/feature held by RSS growth ({:.2}x the JSON)",
        "  Vec<Feature>",
        held as f64 / features as f64,
        held as f64 / total as f64
    );
}

/// A page as the fabric client decoded it before the columnar store.
fn geojson_features(page: &[u8]) -> Vec<Feature> {
    let fc: geojson::FeatureCollection = serde_json::from_slice(page).expect("a page");
    fc.features
        .into_iter()
        .map(|f| from_geojson_feature(f).expect("a feature"))
        .collect()
}

/// Seconds taken by `f`.
fn time(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

/// Any JSON value, read through and dropped: strings are checked (keys
/// included) and numbers parsed, as a decoder must, but nothing is kept.
struct Touch;

impl<'de> serde::Deserialize<'de> for Touch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Touch, D::Error> {
        d.deserialize_any(TouchVisitor)
    }
}

struct TouchVisitor;

impl<'de> serde::de::Visitor<'de> for TouchVisitor {
    type Value = Touch;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Touch, E> {
        std::hint::black_box(v);
        Ok(Touch)
    }
    fn visit_i64<E>(self, v: i64) -> Result<Touch, E> {
        std::hint::black_box(v);
        Ok(Touch)
    }
    fn visit_u64<E>(self, v: u64) -> Result<Touch, E> {
        std::hint::black_box(v);
        Ok(Touch)
    }
    fn visit_f64<E>(self, v: f64) -> Result<Touch, E> {
        std::hint::black_box(v);
        Ok(Touch)
    }
    fn visit_str<E>(self, v: &str) -> Result<Touch, E> {
        std::hint::black_box(v);
        Ok(Touch)
    }
    fn visit_unit<E>(self) -> Result<Touch, E> {
        Ok(Touch)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Touch, A::Error> {
        while seq.next_element::<Touch>()?.is_some() {}
        Ok(Touch)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Touch, A::Error> {
        while map.next_entry::<Touch, Touch>()?.is_some() {}
        Ok(Touch)
    }
}

/// The resident set size in bytes (Linux), 0 elsewhere.
fn rss() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<usize>().ok())
        .map_or(0, |pages| pages * 4096)
}
