//! Point-to-comid lookup for many points: the comid (`featureid`; in a
//! local GeoPackage, else `nhdplusid` or `comid`, the keys the plot reads)
//! of the NHDPlus catchment holding each point, from the fabric service (R2, one
//! request per distinct point, concurrent, slowing down on HTTP 429) or
//! from a local GeoPackage's catchments (its R-tree, then an exact test of
//! the point against each candidate polygon; no request at all).
//!
//! A point on the shared edge of two catchments is in both: the smaller
//! featureid is its answer, from either source, so both agree.

use crate::collection::Collection;
use crate::context::Context;
use crate::crs::{Transformer, DEFAULT_CRS};
use crate::gpkg::{catchment_key, GeoPackage};
use crate::parallel::adaptive_map;
use crate::services::batch::throttled;
use crate::services::fabric;
use crate::table::Table;
use crate::{Error, Result};
use std::collections::HashMap;
use std::path::Path;

/// The CRS the catchments are looked up in (NHDPlus's NAD83 lon/lat).
const LOOKUP_CRS: &str = "EPSG:4269";

/// The progress stage of a lookup.
pub const STAGE: &str = "comid";

/// The comid of the catchment holding each of `points` (in `crs`, `None`:
/// EPSG:4326, x = longitude), in input order: `Ok(None)` for a point in no
/// catchment, `Err` for a point that could not be looked up (not finite or
/// off the globe, a service error after retries). With `hydro_data` the
/// GeoPackage's catchments answer and no request is made; otherwise the
/// fabric service does. The outer error is a bad CRS or an unreadable
/// GeoPackage, before any lookup. Progress: stage [`STAGE`], done/total.
pub fn comids_at_points(
    ctx: &Context,
    points: &[(f64, f64)],
    crs: Option<&str>,
    hydro_data: Option<&Path>,
) -> Result<Vec<Result<Option<i64>>>> {
    let transformer = Transformer::new(crs.unwrap_or(DEFAULT_CRS), LOOKUP_CRS)?;
    let lonlat: Vec<Result<(f64, f64)>> = points
        .iter()
        .map(|&(x, y)| to_lonlat(&transformer, x, y))
        .collect();
    let found = match hydro_data {
        Some(path) => {
            crate::output::check_path_given(path, "hydro_data")?;
            crate::paths::check_regular(path, "hydro_data")?;
            let gpkg = GeoPackage::open_watched(path, ctx.stop());
            gpkg.and_then(|gpkg| local(ctx, &gpkg, &lonlat))
                .map_err(|e| e.unless_cancelled(ctx.stop()))?
        }
        None => service(ctx, &lonlat),
    };
    // A cancel ends the whole call, not only the points it reached.
    ctx.check_stop()?;
    Ok(found)
}

/// Checks a point and transforms it to lon/lat.
fn to_lonlat(t: &Transformer, x: f64, y: f64) -> Result<(f64, f64)> {
    let off = |why: String| {
        Error::InvalidArgument(format!("The point ({x}, {y}) in {} {why}.", t.from_crs()))
    };
    if !x.is_finite() || !y.is_finite() {
        return Err(off("is not a pair of finite numbers".into()));
    }
    let (lon, lat) = t.point(x, y)?;
    if !(-180.0..=180.0).contains(&lon) || !(-90.0..=90.0).contains(&lat) {
        return Err(off(format!(
            "is longitude {lon}, latitude {lat}, outside [-180, 180] x [-90, 90]"
        )));
    }
    Ok((lon, lat))
}

/// The smallest of the featureids (the rule for a point on a shared edge).
fn answer(ids: impl IntoIterator<Item = i64>) -> Option<i64> {
    ids.into_iter().min()
}

/// R2 for each distinct point, at most `concurrency` at once.
fn service(ctx: &Context, lonlat: &[Result<(f64, f64)>]) -> Vec<Result<Option<i64>>> {
    let mut distinct: Vec<(f64, f64)> = Vec::new();
    let mut slot: HashMap<(u64, u64), usize> = HashMap::new();
    // Each point's index in `distinct`, or its own error.
    let slots: Vec<Result<usize>> = lonlat
        .iter()
        .map(|p| {
            let &(lon, lat) = p.as_ref().map_err(Clone::clone)?;
            Ok(*slot
                .entry((lon.to_bits(), lat.to_bits()))
                .or_insert_with(|| {
                    distinct.push((lon, lat));
                    distinct.len() - 1
                }))
        })
        .collect();
    let total = distinct.len() as u64;
    let mut done = 0;
    ctx.progress(STAGE, 0, total);
    let found = adaptive_map(
        ctx.config.concurrency,
        &distinct,
        |&(lon, lat)| {
            fabric::catchments_at_point(ctx, lon, lat)
                .map(answer)
                .map_err(|e| e.context(&format!("Catchment lookup at ({lon}, {lat})")))
        },
        &throttled(ctx, "catchment lookup"),
        |_, _| {
            done += 1;
            ctx.progress(STAGE, done, total);
        },
    );
    slots
        .into_iter()
        .map(|s| s.and_then(|s| found[s].clone()))
        .collect()
}

/// The GeoPackage's catchments holding each point, one after the other.
fn local(
    ctx: &Context,
    gpkg: &GeoPackage,
    lonlat: &[Result<(f64, f64)>],
) -> Result<Vec<Result<Option<i64>>>> {
    if !gpkg.has_layer(Collection::Catchment) {
        return Err(Error::Gpkg(format!(
            "{gpkg:?} has no catchment layer ({}) to look points up in.",
            Collection::Catchment.gpkg_names().join(" or ")
        )));
    }
    let total = lonlat.len() as u64;
    let step = (total / 100).max(1);
    ctx.progress(STAGE, 0, total);
    let mut out = Vec::with_capacity(lonlat.len());
    for (i, p) in lonlat.iter().enumerate() {
        // Each point's statements are too short for SQLite's progress
        // handler to look at the stop: look here.
        ctx.check_stop()?;
        out.push(match p {
            Err(e) => Err(e.clone()),
            Ok((lon, lat)) => gpkg
                .read_bbox(Collection::Catchment, [*lon, *lat, *lon, *lat])
                .and_then(|t| featureids(&t))
                .map(answer),
        });
        let done = i as u64 + 1;
        if done % step == 0 || done == total {
            ctx.progress(STAGE, done, total);
        }
    }
    Ok(out)
}

/// The comid of every row of a catchment table: its key as the plot reads
/// it ([`catchment_key`]: `featureid`, else `nhdplusid` or `comid`).
fn featureids(t: &Table) -> Result<Vec<i64>> {
    let column = catchment_key(t);
    (0..t.len())
        .map(|row| {
            column.and_then(|c| c.i64(row)).ok_or_else(|| {
                Error::Gpkg(
                    "a catchment of the GeoPackage has no featureid, nhdplusid or comid.".into(),
                )
            })
        })
        .collect()
}
