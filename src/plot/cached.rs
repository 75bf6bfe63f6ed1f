//! The plot-data cache as plot_hydro uses it: the key of a request (the
//! normalized request) and the entry format, over the byte store of
//! [`crate::cache`]. Cache trouble is a warning, never a failed plot.
//!
//! An entry is a JSON body (bbox, warnings, the names of its layers) and
//! one part per layer: the layer's table as an Arrow IPC stream of one
//! batch in the lossless store layout (`Table::to_store_batch`). Layers are
//! encoded and written one at a time; a hit decodes each part from one
//! buffer, its arrays pointing into that buffer (no copy when aligned).

use super::data::{Layer, PlotData};
use super::request::{Layers, Outlet, PlotRequest, Properties};
use super::site::site_id;
use crate::cache::PlotCache;
use crate::context::{Context, LogLevel};
use crate::table::Table;
use crate::{Error, Result};
use arrow_buffer::Buffer;
use arrow_ipc::reader::StreamDecoder;
use arrow_ipc::writer::StreamWriter;
use serde_json::{json, Value};
use std::path::Path;

/// The entry format, part of every key: a new one never reads an old entry.
/// 3: layers conformed to their declared schemas (`Layer::schema`), the
/// geometry type in the schema metadata (2: layers as Arrow IPC parts as
/// their sources typed them; 1 was one GeoJSON document).
const ENTRY_FORMAT: u32 = 3;

/// The plot data of `req` from the cache file at `path`, or built by
/// `build` and added to it.
pub fn cached_plot_data(
    ctx: &Context,
    req: &PlotRequest,
    path: &Path,
    build: impl FnOnce() -> Result<PlotData>,
) -> Result<PlotData> {
    let key = request_key(ctx, req)?;
    let mut warnings = Vec::new();
    let mut cache = PlotCache::open(ctx, path, &mut warnings);
    let hit = cache.as_mut().and_then(|c| read(c, &key));
    ctx.check_stop()?;
    if let Some(mut hit) = hit {
        ctx.log(
            LogLevel::Info,
            &format!("plot data from the cache {}", path.display()),
        );
        hit.warnings.extend(warnings);
        return Ok(hit);
    }
    let mut data = build()?;
    if let Some(cache) = &mut cache {
        let written = write(cache, &key, &data);
        // Cancelled while writing: the entry was rolled back; no warning.
        ctx.check_stop()?;
        warnings.extend(cache.take_warnings());
        if let Err(e) = written {
            warnings.push(ctx.warn(e.to_string()));
        }
    }
    data.warnings.extend(warnings);
    Ok(data)
}

/// The normalized request: everything that changes the plot data, and
/// nothing that only changes the drawing. `PlotRequest` is destructured
/// field by field, so a new field does not compile until it is placed here
/// (in the key, or named as drawing-only).
pub fn request_key(ctx: &Context, req: &PlotRequest) -> Result<String> {
    let PlotRequest {
        outlets,
        comid_set,
        bbox,
        streamorder,
        hydro_data,
        flowline_only,
        properties,
        layers,
        // Only the drawing or the outputs: the data is the same.
        gpkg: _,
        png_file: _,
        overwrite: _,
        styles: _,
        basemap: _,
        zoom: _,
        size: _,
        lod: _,
        actually_plot: _,
        cache: _,
    } = req;
    let source = match hydro_data {
        Some(path) => {
            let meta = std::fs::metadata(path).map_err(|e| crate::error::io_error(path, e))?;
            let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            let mut source = json!({"gpkg": canonical.to_string_lossy(), "modified_ns": modified_ns(&meta), "len": meta.len()});
            // A GeoPackage in WAL mode (as QGIS and GDAL edit them) holds
            // its recent edits in `<file>-wal`, the file itself unchanged
            // until a checkpoint: the log's state is part of the key. Files
            // without a log keep the keys they had.
            let mut wal = canonical.into_os_string();
            wal.push("-wal");
            if let Ok(wal) = std::fs::metadata(wal) {
                source["wal_modified_ns"] = json!(modified_ns(&wal));
                source["wal_len"] = json!(wal.len());
            }
            source
        }
        None => json!({
            "index": ctx.config.index_url,
            "fabric": ctx.config.fabric_url,
            "names": ctx.config.names.as_str(),
        }),
    };
    let outlets: Vec<Value> = outlets
        .iter()
        .map(|o| match o {
            Outlet::Comid(c) => json!(["comid", c]),
            Outlet::Site(s) => json!(["site", site_id(s)]),
            Outlet::Feature { source, id } => json!(["feature", source, id]),
            Outlet::Point { x, y, crs } => json!(["point", x, y, crs]),
        })
        .collect();
    let mut key = json!({
        "format": ENTRY_FORMAT,
        "library": crate::VERSION,
        "source": source,
        "outlets": outlets,
        "comid_set": comid_set,
        "bbox": bbox,
        "streamorder": streamorder,
        "flowline_only": flowline_only,
        "properties": match properties {
            Properties::All => json!("all"),
            Properties::Plot => json!("plot"),
            Properties::With(names) => json!(names),
        },
    });
    // Only a request for fewer layers or columns says so: the keys of
    // every entry written before `layers` existed stay valid.
    match layers {
        Layers::All => {}
        Layers::Drawn => key["layers"] = json!("drawn"),
        Layers::Counted => key["layers"] = json!("counted"),
    }
    Ok(key.to_string())
}

/// A file's modification time in nanoseconds since the epoch, as text (0
/// when the system gives none).
fn modified_ns(meta: &std::fs::Metadata) -> String {
    let modified = meta
        .modified()
        .ok()
        .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    modified.to_string()
}

/// Stores `data` under `key`: the body, then each layer as it is encoded.
pub fn write(cache: &mut PlotCache, key: &str, data: &PlotData) -> Result<()> {
    let names: Vec<&str> = Layer::ALL.iter().map(|l| l.name()).collect();
    let body = json!({"bbox": data.bbox, "warnings": data.warnings, "layers": names});
    let parts = || {
        Layer::ALL
            .iter()
            .map(|&l| Ok((l.name().to_string(), encode_layer(data.layer(l))?)))
    };
    cache.put_entry(key, body.to_string().as_bytes(), parts)
}

/// The plot data stored under `key`, or `None` when it is absent or any
/// part of it is unreadable (a miss).
pub fn read(cache: &mut PlotCache, key: &str) -> Option<PlotData> {
    #[derive(serde::Deserialize)]
    struct Body {
        bbox: [f64; 4],
        warnings: Vec<String>,
        layers: Vec<String>,
    }
    cache.read(|c| {
        let body: Body = serde_json::from_slice(&c.get(key)?).ok()?;
        let mut data = PlotData {
            bbox: body.bbox,
            warnings: body.warnings,
            ..Default::default()
        };
        for name in &body.layers {
            // Cancelled: a miss, which the caller turns into the cancel.
            if c.stop().is_requested() {
                return None;
            }
            let layer = Layer::from_name(name)?;
            data.set_layer(layer, decode_layer(c.get_part(key, name)?).ok()?);
        }
        Some(data)
    })
}

/// A layer as an Arrow IPC stream (one batch, the store layout) followed
/// by the CRC-32 of the stream (4 bytes, little-endian).
pub fn encode_layer(table: &Table) -> Result<Vec<u8>> {
    let internal = |e: String| Error::Internal(format!("encoding a cache entry: {e}"));
    let batch = table.to_store_batch().map_err(internal)?;
    let mut writer =
        StreamWriter::try_new(Vec::new(), &batch.schema()).map_err(|e| internal(e.to_string()))?;
    writer.write(&batch).map_err(|e| internal(e.to_string()))?;
    let mut blob = writer.into_inner().map_err(|e| internal(e.to_string()))?;
    let crc = crc32fast::hash(&blob);
    blob.extend_from_slice(&crc.to_le_bytes());
    Ok(blob)
}

/// A layer back from [`encode_layer`]'s bytes; any defect (a wrong CRC,
/// truncation, another layout, a second batch) is an error, treated as a
/// miss. The arrays share `blob`'s memory (the CRC is a trailer, so the
/// stream keeps the writer's 8-byte alignment).
pub fn decode_layer(mut blob: Vec<u8>) -> Result<Table> {
    let bad = |e: &str| Error::Service(format!("bad cache entry: {e}"));
    let stream = blob.len().checked_sub(4).ok_or_else(|| bad("cut short"))?;
    let crc = u32::from_le_bytes(blob[stream..].try_into().expect("4 bytes"));
    if crc32fast::hash(&blob[..stream]) != crc {
        return Err(bad("its CRC does not match"));
    }
    blob.truncate(stream);
    decode_stream(blob)
}

/// The table of the one batch of an Arrow IPC stream in the store layout
/// (no CRC trailer), sharing `stream`'s memory.
///
/// arrow-ipc 59's reader panics on some malformed streams (a buffer outside
/// its message, a short validity bitmap, a malformed schema: the fuzzer
/// finds each within seconds). [`decode_layer`]'s CRC rejects any damaged blob before the
/// reader sees it, and the reader runs under `catch_unwind`, so that even a
/// stream crafted to pass the CRC is an error (a miss), never a failed plot.
pub fn decode_stream(stream: Vec<u8>) -> Result<Table> {
    let read = || -> std::result::Result<Table, String> {
        let mut buffer = Buffer::from_vec(stream);
        let mut decoder = StreamDecoder::new();
        let mut batches = Vec::new();
        while !buffer.is_empty() {
            if let Some(b) = decoder.decode(&mut buffer).map_err(|e| e.to_string())? {
                batches.push(b);
            }
        }
        decoder.finish().map_err(|e| e.to_string())?;
        match batches.as_slice() {
            [batch] => Table::from_store_batch(batch),
            other => Err(format!("{} batches in a layer", other.len())),
        }
    };
    std::panic::catch_unwind(read)
        .unwrap_or_else(|_| Err("the Arrow IPC reader failed".into()))
        .map_err(|e| Error::Service(format!("bad cache entry: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::Feature;
    use crate::plot::CacheSetting;

    /// A heterogeneous layer through the IPC bytes: a JSON column, a column
    /// mixing numbers, strings and booleans, integers widened to floats,
    /// nulls, a row without geometry, a collection and mixed ids.
    #[test]
    fn a_heterogeneous_layer_round_trips_through_its_ipc_part() {
        let line = geo::Geometry::LineString(vec![(1.0, 2.0), (3.0, 4.0)].into());
        let collection = geo::Geometry::GeometryCollection(geo::GeometryCollection(vec![
            line.clone(),
            geo::Geometry::Point(geo::point!(x: 5.0, y: 6.0)),
        ]));
        let rows = [
            (
                json!({"n": 1, "mixed": 2, "nested": [1, {"a": null}], "flag": true}),
                Some(json!(10)),
                Some(line),
            ),
            (
                json!({"n": 2.5, "mixed": "two", "nested": "s", "none": null}),
                Some(json!("b")),
                None,
            ),
            (json!({"mixed": false}), None, Some(collection)),
        ];
        let table = crate::table::table_of_rows(rows);
        let back = decode_layer(encode_layer(&table).unwrap()).unwrap();
        assert_eq!(back.schema(), table.schema());
        assert_eq!(back.to_features(), table.to_features());
        assert_eq!(back.geometries().kinds, table.geometries().kinds);
        assert_eq!(back.id(0), Some(json!("10")));
        assert_eq!(
            back.column("nested").unwrap().value(0),
            json!([1, {"a": null}])
        );
        assert_eq!(back.get_str(1, "mixed"), Some("two"));
    }

    /// The decoded coordinates and property values point into the blob read
    /// from the cache: nothing is copied.
    #[test]
    fn a_decoded_layer_shares_the_blob() {
        let features: Vec<Feature> = (0..100)
            .map(|i| Feature {
                geometry: Some(geo::Geometry::LineString(
                    vec![(i as f64, 0.5), (i as f64 + 1.0, 1.5)].into(),
                )),
                properties: json!({"comid": i}).as_object().unwrap().clone(),
                ..Default::default()
            })
            .collect();
        let blob = encode_layer(&Table::from_features(&features).unwrap()).unwrap();
        let range = blob.as_ptr_range();
        let inside = |p: *const u8| range.contains(&p);
        let back = decode_layer(blob).unwrap();
        assert!(inside(back.geometries().xy.as_ptr().cast()));
        assert!(inside(back.geometries().coords.as_ptr().cast()));
        let comid = back.column("comid").unwrap().array().to_data();
        assert!(inside(comid.buffers()[0].as_ptr()));
    }

    /// A GeoPackage edited in WAL mode keeps the file's size and time; the
    /// log beside it changes, and with it the key. Without a log the key
    /// is what it was.
    #[test]
    fn an_edit_held_in_the_write_ahead_log_changes_the_key() {
        let dir = std::env::temp_dir().join(format!("hydroplot-wal-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let gpkg = dir.join("n.gpkg");
        std::fs::write(&gpkg, b"the file itself").unwrap();
        let ctx = Context::new(crate::config::Config::default()).unwrap();
        let req = PlotRequest {
            outlets: vec![Outlet::Comid(13293970)],
            hydro_data: Some(gpkg.clone()),
            ..Default::default()
        };
        let key = || request_key(&ctx, &req).unwrap();
        let plain = key();
        let wal = dir.join("n.gpkg-wal");
        std::fs::write(&wal, b"edit 1").unwrap();
        let logged = key();
        assert_ne!(logged, plain);
        std::fs::write(&wal, b"edit 2 and more").unwrap();
        assert_ne!(key(), logged);
        std::fs::remove_file(&wal).unwrap();
        assert_eq!(key(), plain);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Every field that changes the data changes the key; every field that
    /// only changes the drawing or the outputs leaves it. (A new field of
    /// `PlotRequest` does not compile in `request_key` until it is sorted
    /// into one of the two; this test then proves the choice.)
    #[test]
    fn the_key_follows_exactly_the_fields_that_change_the_data() {
        let ctx = Context::new(crate::config::Config::default()).unwrap();
        let base = PlotRequest {
            outlets: vec![Outlet::Comid(13293970)],
            ..Default::default()
        };
        let key = |r: &PlotRequest| request_key(&ctx, r).unwrap();
        let data_changes: Vec<(&str, PlotRequest)> = vec![
            (
                "outlets",
                PlotRequest {
                    outlets: vec![Outlet::Comid(1)],
                    ..base.clone()
                },
            ),
            (
                "comid_set",
                PlotRequest {
                    comid_set: Some(vec![1]),
                    ..base.clone()
                },
            ),
            (
                "bbox",
                PlotRequest {
                    bbox: Some(([0.0, 0.0, 1.0, 1.0], "EPSG:4326".into())),
                    ..base.clone()
                },
            ),
            (
                "streamorder",
                PlotRequest {
                    streamorder: Some(2),
                    ..base.clone()
                },
            ),
            (
                "flowline_only",
                PlotRequest {
                    flowline_only: Some(true),
                    ..base.clone()
                },
            ),
            (
                "properties",
                PlotRequest {
                    properties: Properties::Plot,
                    ..base.clone()
                },
            ),
            (
                "properties list",
                PlotRequest {
                    properties: Properties::With(vec!["slope".into()]),
                    ..base.clone()
                },
            ),
            (
                "layers drawn",
                PlotRequest {
                    layers: Layers::Drawn,
                    ..base.clone()
                },
            ),
            (
                "layers counted",
                PlotRequest {
                    layers: Layers::Counted,
                    ..base.clone()
                },
            ),
            (
                "hydro_data",
                PlotRequest {
                    hydro_data: Some(
                        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/new_hope.gpkg").into(),
                    ),
                    ..base.clone()
                },
            ),
        ];
        for (field, changed) in &data_changes {
            assert_ne!(key(&base), key(changed), "{field} must change the key");
        }
        let drawing_changes: Vec<(&str, PlotRequest)> = vec![
            (
                "gpkg",
                PlotRequest {
                    gpkg: Some("out.gpkg".into()),
                    ..base.clone()
                },
            ),
            (
                "overwrite",
                PlotRequest {
                    overwrite: false,
                    ..base.clone()
                },
            ),
            (
                "styles",
                PlotRequest {
                    styles: {
                        let mut styles = base.styles.clone();
                        styles.set("flowline", "col", "red").unwrap();
                        styles
                    },
                    ..base.clone()
                },
            ),
            (
                "basemap",
                PlotRequest {
                    basemap: "none".into(),
                    ..base.clone()
                },
            ),
            (
                "zoom",
                PlotRequest {
                    zoom: Some(9),
                    ..base.clone()
                },
            ),
            (
                "size",
                PlotRequest {
                    size: (10, 10),
                    ..base.clone()
                },
            ),
            (
                "actually_plot",
                PlotRequest {
                    actually_plot: false,
                    ..base.clone()
                },
            ),
            (
                "cache",
                PlotRequest {
                    cache: CacheSetting::Disabled,
                    ..base.clone()
                },
            ),
        ];
        for (field, changed) in &drawing_changes {
            assert_eq!(key(&base), key(changed), "{field} must not change the key");
        }
    }
}
