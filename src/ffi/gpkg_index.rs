//! `hydroplot_gpkg_index`, `hydroplot_gpkg_unindex`: a national NHDPlus
//! GeoPackage made fast for local reads (`hydro_data`), and back.

use super::context::hydroplot_context;
use super::{arg_ref, arg_str, boundary, hydroplot_status};
use crate::context::{Context, LogLevel};
use crate::gpkg::{index_geopackage, unindex_geopackage, IndexOutcome, PartsOutcome};
use std::ffi::c_char;
use std::path::Path;

/// Makes the NHDPlus GeoPackage `path` fast as `hydro_data`, as the CLI's
/// `hydroplot index` does: an index on the flowline layer's comid,
/// hydroseq, dnhydroseq and stream order columns (a 10k-flowline basin of
/// a national file in about a second), then, with a catchment layer, the
/// basin parts (the table `hydroplot_basin_parts`: outlines of parts of the
/// network, so that a large basin is folded from them and the catchments
/// near its outlet; and `hydroplot_basin_network`: the network they were
/// cut from, read by a plot in one step; about 3 s for a million
/// flowlines). The basins are the same to the bit with or without parts.
/// Triggers on the flowline, catchment and parts tables withdraw the parts
/// at any later write to those tables, from any program, until the next
/// call. Running it again changes nothing. What was done is logged (level
/// info); progress is reported as stage `"basin_parts"` (parts made of
/// all). Cancel it with `hydroplot_context_cancel`: the parts made so far
/// are taken away again.
///
/// \param ctx  The context; only read (its callbacks and cancel).
/// \param path The GeoPackage (UTF-8 path), written in place.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `ctx` or `path` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `path` is not UTF-8.
/// - `HYDROPLOT_ERR_GPKG`: `path` is not an NHDPlus GeoPackage with a
///   flowline layer and its topology columns (nothing is changed), or the
///   flowlines or catchments were written to while the parts were made.
/// - `HYDROPLOT_ERR_IO`: `path` cannot be read or written.
/// - `HYDROPLOT_ERR_CANCELLED`: the context was cancelled.
///
/// \par Ownership
/// Nothing is allocated; `path` is only read during the call.
///
/// \par Thread safety
/// Any thread; `ctx` may be shared. Two calls on one file take turns.
///
/// \since 0.3
#[no_mangle]
pub extern "C" fn hydroplot_gpkg_index(
    ctx: *const hydroplot_context,
    path: *const c_char,
) -> hydroplot_status {
    on_file(ctx, path, |ctx, path| {
        let mut progress =
            |done: usize, all: usize| ctx.progress("basin_parts", done as u64, all as u64);
        let indexed = index_geopackage(path, ctx.stop(), &mut progress)?;
        let topology = match indexed.topology {
            IndexOutcome::Created { name, table } => format!("created index {name} on {table}"),
            IndexOutcome::Existing { name, .. } => format!("the topology index {name} was there"),
        };
        let parts = match indexed.parts {
            PartsOutcome::Created { parts } => format!("stored {parts} basin parts"),
            PartsOutcome::Existing { parts } => format!("{parts} current basin parts were there"),
            PartsOutcome::Skipped { why } => format!("no basin parts: {why}"),
        };
        Ok(format!("{topology}; {parts}"))
    })
}

/// Removes from the GeoPackage `path` what `hydroplot_gpkg_index` adds: the
/// index it names `hydroplot_topology` (an index made by hand under another
/// name stays) and the basin parts (their two tables, the `gpkg_contents`
/// row, the triggers), in one transaction. A file with neither is left as it
/// is. What was removed is logged (level info).
///
/// \param ctx  The context; only read (its callbacks and cancel).
/// \param path The GeoPackage (UTF-8 path), written in place.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `ctx` or `path` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `path` is not UTF-8.
/// - `HYDROPLOT_ERR_GPKG`: `path` is not a GeoPackage (nothing is changed).
/// - `HYDROPLOT_ERR_IO`: `path` cannot be read or written.
/// - `HYDROPLOT_ERR_CANCELLED`: the context was cancelled (nothing removed).
///
/// \par Ownership
/// Nothing is allocated; `path` is only read during the call.
///
/// \par Thread safety
/// Any thread; `ctx` may be shared.
///
/// \since 0.3
#[no_mangle]
pub extern "C" fn hydroplot_gpkg_unindex(
    ctx: *const hydroplot_context,
    path: *const c_char,
) -> hydroplot_status {
    on_file(ctx, path, |ctx, path| {
        let removed = unindex_geopackage(path, ctx.stop())?;
        let message = match (removed.topology_index, removed.parts) {
            (false, false) => "nothing of hydroplot's to remove",
            (true, false) => "removed the topology index",
            (false, true) => "removed the basin parts",
            (true, true) => "removed the topology index and the basin parts",
        };
        Ok(message.to_string())
    })
}

/// Runs `f` with a call of the context `ctx` on the file `path` (both
/// checked), and logs what it says it did (level info) after the path.
fn on_file(
    ctx: *const hydroplot_context,
    path: *const c_char,
    f: impl FnOnce(&Context, &Path) -> crate::Result<String>,
) -> hydroplot_status {
    boundary(|| {
        let ctx = unsafe { arg_ref(ctx, "ctx") }?.core.for_call();
        let path = unsafe { arg_str(path, "path") }?;
        let done = f(&ctx, Path::new(path)).map_err(|e| e.unless_cancelled(ctx.stop()))?;
        ctx.log(LogLevel::Info, &format!("{path}: {done}"));
        Ok(())
    })
}
