//! A bounded, deterministic mutation fuzzer over every parser of outside
//! bytes, for the stable toolchain (libFuzzer needs nightly; the same entry
//! points are the cargo-fuzz targets in `fuzz/`). Seeds are the recorded
//! service answers, real GeoPackage blobs, a real plot-cache entry and
//! tiles; each input is a seed with 1 to 4 mutations (bit flips, byte
//! changes, JSON tokens, inserts, deletes, duplications, splices,
//! truncation). A panic fails the test and saves the input under
//! `target/fuzz-findings/`.
//!
//! Each target runs `HYDROPLOT_FUZZ_SECONDS` seconds (default 2), from a
//! fixed seed, so a run is repeatable up to its length.

use crate::targets;

use hydroplot::render::tile_cache::TileCache;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn budget() -> Duration {
    let s: f64 = std::env::var("HYDROPLOT_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    Duration::from_secs_f64(s)
}

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Tokens that steer JSON and binary parsers into their corners.
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b",",
    b":",
    b"null",
    b"true",
    b"-",
    b"1e309",
    b"-0",
    b"NaN",
    b"18446744073709551616",
    b"\"type\"",
    b"\"features\"",
    b"\"geometry\"",
    b"\"coordinates\"",
    b"\"FeatureCollection\"",
    b"\"LineString\"",
    b"\"numberMatched\"",
    b"\\u0000",
    b"\\ud800",
    b"\xff",
    b"\x00",
    b"\x7f\xff\xff\xff",
    b"\xff\xff\xff\xff",
    b"GP",
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8",
];

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>], input: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        let len = input.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                input[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                input[i] = rng.next() as u8;
            }
            2 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                let i = rng.below(len + 1);
                input.splice(i..i, t.iter().copied());
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(64));
                input.drain(i..i + n);
            }
            4 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(256));
                let chunk: Vec<u8> = input[i..i + n].to_vec();
                let at = rng.below(len + 1);
                input.splice(at..at, chunk);
            }
            5 => {
                let other = &seeds[rng.below(seeds.len())];
                if !other.is_empty() {
                    let (a, b) = (rng.below(other.len()), rng.below(len + 1));
                    input.truncate(b);
                    input.extend_from_slice(&other[a..]);
                }
            }
            6 if len > 0 => input.truncate(rng.below(len)),
            7 if len >= 4 => {
                // An interesting 32-bit value (lengths, counts, sizes).
                let i = rng.below(len - 3);
                let v: u32 = [0, 1, 0x7fff_ffff, 0xffff_ffff, 0x8000_0000, 65535][rng.below(6)];
                input[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
            _ => {
                let i = rng.below(len + 1);
                input.insert(i, rng.next() as u8);
            }
        }
    }
}

/// Runs `target` on mutants of `seeds` for the budget; returns the count.
fn fuzz(name: &str, seeds: Vec<Vec<u8>>, target: impl Fn(&[u8])) -> u64 {
    assert!(!seeds.is_empty(), "{name}: no seeds");
    for s in &seeds {
        target(s);
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ name.len() as u64);
    let started = Instant::now();
    let mut runs = 0u64;
    while started.elapsed() < budget() {
        let mut input = seeds[rng.below(seeds.len())].clone();
        mutate(&mut rng, &seeds, &mut input);
        if catch_unwind(AssertUnwindSafe(|| target(&input))).is_err() {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-findings");
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join(format!("{name}-{runs}.bin"));
            std::fs::write(&path, &input).unwrap();
            panic!("{name}: input {runs} panicked; saved as {}", path.display());
        }
        runs += 1;
    }
    println!(
        "fuzz {name}: {runs} inputs in {:?}, no panic",
        started.elapsed()
    );
    runs
}

fn responses(names: &[&str]) -> Vec<Vec<u8>> {
    names
        .iter()
        .map(|n| std::fs::read(data_dir().join("responses").join(n)).unwrap())
        .collect()
}

/// Real geometry blobs of each type from the Yahara sample (small ones).
fn blobs() -> Vec<Vec<u8>> {
    let db = rusqlite::Connection::open(data_dir().join("yahara_sample.gpkg")).unwrap();
    let mut out = Vec::new();
    for table in ["Gage", "NHDFlowline_Network", "CatchmentSP", "NHDWaterbody"] {
        let sql = format!("SELECT geom FROM \"{table}\" ORDER BY length(geom) LIMIT 2");
        let mut stmt = db.prepare(&sql).unwrap();
        out.extend(
            stmt.query_map([], |r| r.get::<_, Vec<u8>>(0))
                .unwrap()
                .map(|b| b.unwrap()),
        );
    }
    out
}

#[test]
fn fuzz_feature_pages() {
    let seeds = responses(&[
        "flowline_items_comid_13293454.json",
        "flowline_items_empty.json",
        "catchment_point_lookup.json",
        "waterbody_items_comid.json",
    ]);
    assert!(fuzz("feature_page", seeds, targets::feature_page) > 0);
}

#[test]
fn fuzz_trace_answers() {
    let seeds = responses(&["flowtrace_up_yahara.json"]);
    assert!(fuzz("trace", seeds, targets::trace) > 0);
}

#[test]
fn fuzz_gpkg_blobs() {
    let seeds = blobs();
    assert_eq!(seeds.len(), 8);
    assert!(fuzz("gpkg_blob", seeds, targets::gpkg_blob) > 0);
}

#[test]
fn fuzz_plot_cache_entries() {
    // A real layer's cache part (the Arrow IPC stream of a fabric page's
    // table), fuzzed past its CRC: malformed streams reach the Arrow reader.
    let page =
        std::fs::read(data_dir().join("responses/flowline_items_comid_13293454.json")).unwrap();
    let features = hydroplot::services::fabric::parse_items_page(&page).unwrap();
    assert_eq!(features.len(), 1);
    let table = hydroplot::table::Table::from_features(&features).unwrap();
    let mut entry = hydroplot::plot::cached::encode_layer(&table).unwrap();
    let back = hydroplot::plot::cached::decode_layer(entry.clone()).unwrap();
    assert_eq!(back.to_features(), table.to_features());
    entry.truncate(entry.len() - 4); // the stream, without its CRC
    assert!(fuzz("plot_cache_entry", vec![entry], targets::plot_cache_entry) > 0);
}

#[test]
fn fuzz_tile_images() {
    // A 4x4 RGB PNG and a 2x2 RGBA one.
    let png = |w: u32, color: png::ColorType, px: usize| {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, w, w);
        enc.set_color(color);
        let mut writer = enc.write_header().unwrap();
        writer
            .write_image_data(&vec![0x5a; (w * w) as usize * px])
            .unwrap();
        writer.finish().unwrap();
        out
    };
    let seeds = vec![
        png(4, png::ColorType::Rgb, 3),
        png(2, png::ColorType::Rgba, 4),
    ];
    assert!(fuzz("tile_image", seeds, targets::tile_image) > 0);
}

#[test]
fn fuzz_tile_cache_entries() {
    let dir = crate::scratch::temp_dir("fuzz-tiles");
    let cache = TileCache::open(&dir, 1 << 20).unwrap();
    let url = "http://127.0.0.1/tiles/1/0/0.png";
    cache.put(url, &[], b"\x89PNG tile bytes").unwrap();
    let seed = std::fs::read(cache.path_for(url)).unwrap();
    assert!(
        fuzz("tile_cache_entry", vec![seed], |d| {
            targets::tile_cache_entry(&cache, d)
        }) > 0
    );
    let _ = std::fs::remove_dir_all(&dir);
}
