//! `hydroplot_gpkg_index`, `hydroplot_gpkg_unindex`: a national NHDPlus
//! GeoPackage made fast for local reads (`hydro_data`), and back.

use super::context::hydroplot_context;
use super::{arg_ref, arg_str, boundary, hydroplot_status};
use crate::context::{Context, LogLevel};
use crate::gpkg::{
    index_geopackage, unindex_geopackage, IndexPlace, PartsOutcome, REACHES_PER_PART,
};
use std::ffi::c_char;
use std::path::Path;

/// Makes the NHDPlus GeoPackage `path` fast as `hydro_data`, as the CLI's
/// `hydroplot index` does, without writing it: the flowline network and,
/// with a catchment layer, the basin parts (outlines of parts of the
/// network, so that a large basin is folded from them and the catchments
/// near its outlet; about 3 s for a million flowlines) are stored in an
/// index file of hydroplot's own in the context's `index_dir` (by default
/// `$XDG_CACHE_HOME/hydroplot/index`), named after the file's canonical
/// path. A read-only file is indexed like any other. The basins are the
/// same to the bit with or without the index. The index records the file's
/// identity (device, inode, size, modification time, SQLite's change
/// counter and schema cookie, the WAL file) and its tables' least and greatest rowids; a
/// plot uses it only while all of them match, so an edit by any program or
/// a copy over the file leaves it unused until the next call. Running it
/// again on an unchanged file changes nothing. The index file is written
/// under a temporary name and renamed: a cancel or a failure leaves the
/// old index, if any. What was done is logged (level info); progress is
/// reported as stage `"basin_parts"` (parts made of all). Cancel it with
/// `hydroplot_context_cancel`.
///
/// \param ctx  The context; only read (its `index_dir`, callbacks, cancel).
/// \param path The GeoPackage (UTF-8 path), only read.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `ctx` or `path` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `path` is not UTF-8.
/// - `HYDROPLOT_ERR_GPKG`: `path` is not an NHDPlus GeoPackage with a
///   flowline layer and its topology columns, or the file was written to
///   while it was indexed (run again).
/// - `HYDROPLOT_ERR_IO`: `path` cannot be read, or `index_dir` written.
/// - `HYDROPLOT_ERR_CANCELLED`: the context was cancelled.
///
/// \par Ownership
/// Nothing is allocated; `path` is only read during the call.
///
/// \par Thread safety
/// Any thread; `ctx` may be shared. Two calls on one file both end with a
/// correct index (the last one written is kept).
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
        let place = IndexPlace::Dir(&ctx.config.index_dir);
        let threads = ctx.config.threads;
        let indexed = index_geopackage(
            path,
            place,
            REACHES_PER_PART,
            threads,
            ctx.stop(),
            &mut progress,
        )?;
        let parts = match indexed.parts {
            PartsOutcome::Parts { parts } => format!("{parts} basin parts"),
            PartsOutcome::Skipped { why } => format!("no basin parts: {why}"),
        };
        let done = if indexed.written {
            "indexed in"
        } else {
            "current index"
        };
        Ok(format!(
            "{done} {}: {} flowlines, {parts}",
            indexed.path.display(),
            indexed.reaches
        ))
    })
}

/// Removes the indexes of the GeoPackage `path`: the index files of
/// `hydroplot_gpkg_index` (in the context's `index_dir`, and beside the
/// file, `FILE.gpkg.hydroplot-index`), and an index that release 0.2 wrote
/// inside the file (the index `hydroplot_topology`, the tables
/// `hydroplot_basin_parts` and `hydroplot_basin_network`, their
/// `gpkg_contents` row and triggers), in one transaction: the only write
/// this library makes to a user's file, made only when such an index is
/// there. What was removed is logged (level info).
///
/// \param ctx  The context; only read (its `index_dir`, callbacks, cancel).
/// \param path The GeoPackage (UTF-8 path); written only to take out an
///             index of release 0.2.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `ctx` or `path` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `path` is not UTF-8.
/// - `HYDROPLOT_ERR_GPKG`: `path` is not an SQLite database (nothing is
///   changed).
/// - `HYDROPLOT_ERR_IO`: `path` cannot be read, or an index not removed.
/// - `HYDROPLOT_ERR_CANCELLED`: the context was cancelled.
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
        let removed = unindex_geopackage(path, &ctx.config.index_dir, ctx.stop())?;
        let mut said: Vec<String> = (removed.index_files.iter())
            .map(|p| format!("deleted {}", p.display()))
            .collect();
        if removed.topology_index || removed.parts {
            said.push("removed the index of release 0.2 from the file".into());
        }
        if said.is_empty() {
            said.push("nothing of hydroplot's to remove".into());
        }
        Ok(said.join("; "))
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
