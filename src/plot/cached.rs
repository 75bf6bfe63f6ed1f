//! The plot-data cache as plot_hydro uses it: the key of a request (the
//! normalized request) and the entry format, over the byte store of
//! [`crate::cache`]. Cache trouble is a warning, never a failed plot.

use super::data::{Layer, PlotData};
use super::outlets::site_id;
use super::request::{Outlet, PlotRequest};
use crate::cache::PlotCache;
use crate::context::{Context, LogLevel};
use crate::feature::{from_geojson_feature, to_geojson};
use crate::{Error, Result};
use serde_json::{json, Value};
use std::path::Path;

/// The entry format, part of every key: a new one never reads an old entry.
const ENTRY_FORMAT: u32 = 1;

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
    let cache = PlotCache::open(ctx, path, &mut warnings);
    let hit = cache
        .as_ref()
        .and_then(|c| c.get(&key))
        .and_then(|body| decode(&body).ok());
    if let Some(mut hit) = hit {
        ctx.log(
            LogLevel::Info,
            &format!("plot data from the cache {}", path.display()),
        );
        hit.warnings.extend(warnings);
        return Ok(hit);
    }
    let mut data = build()?;
    if let Some(cache) = &cache {
        if let Err(e) = cache.put(&key, &encode(&data)) {
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
        // Only the drawing or the outputs: the data is the same.
        gpkg: _,
        overwrite: _,
        styles: _,
        basemap: _,
        zoom: _,
        size: _,
        actually_plot: _,
        cache: _,
    } = req;
    let source = match hydro_data {
        Some(path) => {
            let meta = std::fs::metadata(path).map_err(|e| crate::error::io_error(path, e))?;
            let modified = meta
                .modified()
                .ok()
                .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            json!({"gpkg": canonical.to_string_lossy(), "modified_ns": modified.to_string(), "len": meta.len()})
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
    Ok(json!({
        "format": ENTRY_FORMAT,
        "library": crate::VERSION,
        "source": source,
        "outlets": outlets,
        "comid_set": comid_set,
        "bbox": bbox,
        "streamorder": streamorder,
        "flowline_only": flowline_only,
    })
    .to_string())
}

/// The cache entry of `data`: its layers as GeoJSON, bbox and warnings.
pub fn encode(data: &PlotData) -> Vec<u8> {
    let mut layers = serde_json::Map::new();
    for layer in Layer::ALL {
        let fc: Value =
            serde_json::from_slice(&to_geojson(data.layer(layer))).expect("our own GeoJSON parses");
        layers.insert(layer.name().into(), fc);
    }
    serde_json::to_vec(&json!({"bbox": data.bbox, "warnings": data.warnings, "layers": layers}))
        .expect("JSON values always serialize")
}

/// Decodes a cache entry; any defect is an error (treated as a miss).
pub fn decode(body: &[u8]) -> Result<PlotData> {
    #[derive(serde::Deserialize)]
    struct Entry {
        bbox: [f64; 4],
        warnings: Vec<String>,
        layers: std::collections::BTreeMap<String, geojson::FeatureCollection>,
    }
    let entry: Entry = serde_json::from_slice(body)
        .map_err(|e| Error::Service(format!("bad cache entry: {e}")))?;
    let mut data = PlotData {
        bbox: entry.bbox,
        warnings: entry.warnings,
        ..Default::default()
    };
    for (name, fc) in entry.layers {
        let layer = Layer::from_name(&name)
            .ok_or_else(|| Error::Service(format!("bad cache entry: layer {name}")))?;
        let features = fc
            .features
            .into_iter()
            .map(from_geojson_feature)
            .collect::<Result<Vec<_>>>()?;
        data.set_features(layer, &features)?;
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::CacheSetting;

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
