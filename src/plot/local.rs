//! The subset from a local NHDPlus GeoPackage (`hydro_data`): navigation
//! over the topology columns alone, then geometries for the subset only.

use super::outlets::{linked_data_id, outlet_point, Resolved};
use super::request::{Layers, Outlet, PlotRequest};
use super::site::site_number;
use super::subset::{
    extent, flowlines_of_order, ids_of, left_out, network_rows, retain_keys, wbareacomi_of, Basins,
    Subset,
};
use super::thinning::Thinning;
use crate::cancel::Stop;
use crate::collection::Collection;
use crate::context::Context;
use crate::crs::Transformer;
use crate::feature::union_bbox;
use crate::gpkg::{
    catchment_key, make_basin_parts, read_network_and_index, GeoPackage, IndexWrite, NetworkRead,
    NewIndex, Share, REACHES_PER_PART,
};
use crate::network::{upstream_comids, IdSet, Network, Reach};
use crate::services::index;
use crate::table::dissolve::{dissolve, Dissolver};
use crate::table::{Table, TableBuilder};
use crate::{Error, Result};
use geo::Point;
use std::borrow::Cow;
use std::path::Path;

/// Builds the subset of `req` from the GeoPackage at `path`.
pub fn subset(ctx: &Context, req: &PlotRequest, path: &Path) -> Result<Subset> {
    let mut gpkg = GeoPackage::open_watched(path, ctx.stop())?;
    for c in Collection::ALL {
        if let Some(names) = req.properties.names(c) {
            gpkg.narrow(c, &names);
        }
        if req.layers.narrows_columns() {
            gpkg.narrow(c, c.drawn_properties());
        }
    }
    if !gpkg.has_layer(Collection::FlowlineNetwork) {
        return Err(Error::Gpkg(format!(
            "{} has no network flowline layer (NHDFlowline_Network)",
            path.display()
        )));
    }
    let indexed = match gpkg.use_index(&ctx.config.index_dir) {
        Some(index) => {
            let message = format!("{}: using the index {}", path.display(), index.display());
            ctx.log(crate::context::LogLevel::Debug, &message);
            true
        }
        None => false,
    };
    if let Some((bbox, crs)) = &req.bbox {
        let bbox = Transformer::new(crs, super::data::PLOT_DATA_CRS)?.bbox(*bbox)?;
        return in_bbox(ctx, &gpkg, req, bbox);
    }
    ctx.progress("topology", 0, 0);
    // With an index in use, the outlets are resolved first and the
    // upstream of their comids alone is read from it, in place.
    let early = match (indexed, &req.comid_set) {
        (true, None) => Some(resolve_early(ctx, &gpkg, &req.outlets)?),
        _ => None,
    };
    let parts_may_be_made = folds(req) && ctx.config.index;
    let upstream = early.as_ref().and_then(|early| {
        let comids: Vec<i64> = early.iter().map(EarlyOutlet::comid).collect();
        gpkg.upstream_from_index(&comids, parts_may_be_made)
    });
    // Why the index was not stored, if it was not: kept on the result.
    let mut index_warnings = Vec::new();
    let ((reaches, network), total, new_index) = match upstream {
        Some((upstream, total)) => (upstream, total, None),
        None => {
            let (read, new_index) = read_network(ctx, &mut gpkg, indexed, &mut index_warnings)?;
            let total = read.0.len();
            (read, total, new_index)
        }
    };
    ctx.progress("topology", total as u64, total as u64);
    if let Some(comids) = &req.comid_set {
        let read = (reaches.as_slice(), &network);
        index_warnings.extend(store_index(ctx, &mut gpkg, read, new_index));
        let asked: IdSet = comids.iter().copied().collect();
        let keep: Vec<bool> = reaches.iter().map(|r| asked.contains(&r.comid)).collect();
        let basins = BasinSources {
            per_outlet: Vec::new(),
            splits: None,
        };
        let subset = with_flowlines(ctx, &gpkg, req, &reaches, &keep, Vec::new(), basins);
        return with_warnings(subset, index_warnings);
    }
    let outlets = match early {
        Some(early) => (early.into_iter().zip(&req.outlets))
            .map(|(e, o)| match e {
                EarlyOutlet::Resolved(r) => Ok(r),
                EarlyOutlet::Comid(_) => resolve(ctx, &gpkg, o),
            })
            .collect::<Result<Vec<_>>>()?,
        None => (req.outlets.iter())
            .map(|o| ctx.check_stop().and_then(|()| resolve(ctx, &gpkg, o)))
            .collect::<Result<Vec<_>>>()?,
    };

    let comids: Vec<i64> = outlets.iter().map(|o| o.comid).collect();
    let mut at = Vec::with_capacity(outlets.len());
    for (o, i) in outlets.iter().zip(network.index_of_each(&comids)) {
        at.push(i.ok_or_else(|| {
            Error::not_found(format!(
                "outlet {}/{}: comid {} is not in {}",
                o.source,
                o.id,
                o.comid,
                path.display()
            ))
        })?);
    }
    // The index storing the parts made is written while the layers are read.
    let parts_written = match folds(req) && ctx.config.index {
        true => Some(make_basin_parts_needed(
            ctx,
            &mut gpkg,
            (&reaches, &network),
            &at,
            new_index,
        )?),
        false => {
            let read = (reaches.as_slice(), &network);
            index_warnings.extend(store_index(ctx, &mut gpkg, read, new_index));
            None
        }
    };
    let mut per_outlet = Vec::with_capacity(outlets.len());
    let mut all = vec![false; reaches.len()];
    // With stored basin parts, which a fold of the catchments adds whole.
    let closes = match folds(req) {
        true => gpkg.basin_parts()?.filter(|p| !p.is_empty()),
        false => None,
    }
    .map(|p| {
        reaches
            .iter()
            .map(|r| p.contains(&r.comid))
            .collect::<Vec<_>>()
    });
    let mut splits = Vec::new();
    for i in at {
        let mask = match &closes {
            Some(closes) => {
                let split = network.split_upstream(i, closes);
                let comids_of = |at: Vec<usize>| at.into_iter().map(|i| reaches[i].comid).collect();
                splits.push(SplitBasin {
                    parts: comids_of(split.parts),
                    rest: comids_of(split.rest),
                });
                split.mask
            }
            None => network.upstream_mask(&[i]),
        };
        for (a, m) in all.iter_mut().zip(&mask) {
            *a |= m;
        }
        // A single outlet's upstream is every reach kept: no set needed.
        per_outlet.push((outlets.len() > 1).then(|| masked_comids(&reaches, &mask)));
    }
    drop(network); // not held while the layers are read
    let basins = BasinSources {
        per_outlet,
        splits: closes.map(|_| splits),
    };
    let subset = with_flowlines(ctx, &gpkg, req, &reaches, &all, outlets, basins);
    index_warnings.extend(parts_written.and_then(|w| w.wait(ctx, &gpkg)));
    with_warnings(subset, index_warnings)
}

/// `subset` with `warnings` added to its own.
fn with_warnings(subset: Result<Subset>, warnings: Vec<String>) -> Result<Subset> {
    subset.map(|mut subset| {
        subset.warnings.extend(warnings);
        subset
    })
}

/// The network of `gpkg`, and the index to store it in when it has none
/// in use (`indexed` false) and the context allows one
/// ([`read_network_and_index`]: one that cannot be stored is a warning, in
/// `warnings`); else read alone ([`GeoPackage::read_network`]).
fn read_network(
    ctx: &Context,
    gpkg: &mut GeoPackage,
    indexed: bool,
    warnings: &mut Vec<String>,
) -> Result<(NetworkRead, Option<NewIndex>)> {
    if !indexed && ctx.config.index && gpkg.stored_network()?.is_none() {
        let dir = &ctx.config.index_dir;
        let (read, new_index) = read_network_and_index(gpkg, dir, ctx.config.threads)?;
        let new_index = new_index
            .map_err(|why| warnings.push(not_stored_network(ctx, gpkg, &why)))
            .ok();
        return Ok((read, new_index));
    }
    Ok((gpkg.read_network(ctx.config.threads)?, None))
}

/// Stores the network of `gpkg` as the index `new_index`, if any, for the
/// next plots ([`NewIndex::store`]); a failure is a warning, returned.
fn store_index(
    ctx: &Context,
    gpkg: &mut GeoPackage,
    network: (&[Reach], &Network),
    new_index: Option<NewIndex>,
) -> Option<String> {
    match new_index.map(|new| new.store(gpkg, network)) {
        Some(Err(why)) => Some(not_stored_network(ctx, gpkg, &why)),
        _ => None,
    }
}

/// The warning that the network of `gpkg` was not stored as its index,
/// for the reason `why` (sent to the observer too).
fn not_stored_network(ctx: &Context, gpkg: &GeoPackage, why: &Error) -> String {
    ctx.warn(format!(
        "{}: its network was not stored for the next plots in {} ({why})",
        gpkg.path().display(),
        ctx.config.index_dir.display()
    ))
}

/// An outlet before the network is read: resolved, or the comid it names,
/// resolved once its flowline can be read by rowid.
enum EarlyOutlet {
    Resolved(Resolved),
    Comid(i64),
}

impl EarlyOutlet {
    fn comid(&self) -> i64 {
        match self {
            EarlyOutlet::Resolved(r) => r.comid,
            EarlyOutlet::Comid(c) => *c,
        }
    }
}

/// `outlets` resolved, except those naming a comid: their comid alone
/// ([`EarlyOutlet`]).
fn resolve_early(ctx: &Context, gpkg: &GeoPackage, outlets: &[Outlet]) -> Result<Vec<EarlyOutlet>> {
    let mut early = Vec::with_capacity(outlets.len());
    for outlet in outlets {
        ctx.check_stop()?;
        let named = match outlet {
            Outlet::Point { .. } => None,
            _ => linked_data_id(outlet, ctx.config.names)
                .filter(|(source, _)| source == "comid")
                .and_then(|(_, id)| id.parse().ok()),
        };
        early.push(match named {
            Some(comid) => EarlyOutlet::Comid(comid),
            None => EarlyOutlet::Resolved(resolve(ctx, gpkg, outlet)?),
        });
    }
    Ok(early)
}

/// Makes the basin parts that the upstream of the reaches `outlets` of
/// `network` needs and the index in use of `gpkg` (or `new_index`, stored
/// with them) lacks ([`make_basin_parts`]), progress as stage
/// `"basin_parts"`; the index that stores them is being written.
fn make_basin_parts_needed(
    ctx: &Context,
    gpkg: &mut GeoPackage,
    network: (&[Reach], &Network),
    outlets: &[usize],
    new_index: Option<NewIndex>,
) -> Result<PartsWritten> {
    let mut progress =
        |done: usize, all: usize| ctx.progress("basin_parts", done as u64, all as u64);
    let size = ctx.config.reaches_per_part.unwrap_or(REACHES_PER_PART);
    let (made, writing) = make_basin_parts(
        gpkg,
        network,
        outlets,
        size,
        ctx.config.threads,
        new_index,
        ctx.stop(),
        &mut progress,
    )?;
    Ok(PartsWritten { made, writing })
}

/// The basin parts a plot made, and the write of the index file that
/// stores them (or its network alone, none made).
struct PartsWritten {
    made: usize,
    writing: IndexWrite,
}

impl PartsWritten {
    /// Waits for the index file of `gpkg` to be written; one that could not
    /// be is a warning, returned (and sent to the observer).
    fn wait(self, ctx: &Context, gpkg: &GeoPackage) -> Option<String> {
        match self.writing.wait() {
            Ok(()) => None,
            Err(why) if self.made == 0 => Some(not_stored_network(ctx, gpkg, &why)),
            Err(why) => Some(ctx.warn(format!(
                "{}: its {} new basin parts were not stored for the next plots in {} ({why})",
                gpkg.path().display(),
                self.made,
                ctx.config.index_dir.display()
            ))),
        }
    }
}

/// Whether the catchments of `req` are folded into its basins as they are
/// read, never held ([`with_flowlines`]).
fn folds(req: &PlotRequest) -> bool {
    !req.layers.has_every_layer() || Thinning::before_basins(req).is_some_and(|t| t.flowline_only)
}

/// What the basins are made of: the catchments of each outlet's upstream
/// (`per_outlet`: its comids; `None` when it is every reach kept), or, with
/// stored basin parts ([`GeoPackage::basin_parts`]) and catchments folded,
/// `splits`: per outlet the parts it holds whole and its other catchments.
struct BasinSources {
    per_outlet: Vec<Option<IdSet>>,
    splits: Option<Vec<SplitBasin>>,
}

/// One basin from stored parts and catchments.
struct SplitBasin {
    /// The comids closing the stored parts the basin holds whole.
    parts: Vec<i64>,
    /// The comids of its catchments in no such part.
    rest: Vec<i64>,
}

/// The flowline layer read by comid.
const FLOWLINES: Collection = Collection::FlowlineNetwork;

/// The comids of the reaches marked in `mask`.
fn masked_comids(reaches: &[Reach], mask: &[bool]) -> IdSet {
    reaches
        .iter()
        .zip(mask)
        .filter(|(_, &m)| m)
        .map(|(r, _)| r.comid)
        .collect()
}

/// The subset for the reaches marked in `keep` (upstream of the outlets, or
/// the comid set without outlets), layer for layer what the services give:
/// the flowlines of the stream order ([`comids_of_order`]) and their
/// catchments, one basin per outlet (the union of its upstream catchments
/// of every order: the comids of `per_outlet`, where `None` is every reach
/// kept; without outlets, one basin of them all), and the other layers by
/// the box of the basins' catchments. The flowlines are read on a second
/// connection while this thread reads the catchments; without catchments
/// in the result, they are folded into the basins a batch at a time and
/// never held, and the basins' outlines are resolved on other threads
/// while the other layers are read.
fn with_flowlines(
    ctx: &Context,
    gpkg: &GeoPackage,
    req: &PlotRequest,
    reaches: &[Reach],
    keep: &[bool],
    outlets: Vec<Resolved>,
    basins: BasinSources,
) -> Result<Subset> {
    let per_outlet = &basins.per_outlet;
    let threads = ctx.config.threads;
    let kept = || reaches.iter().zip(keep).filter(|(_, &k)| k).map(|(r, _)| r);
    let ids: Vec<i64> = kept().map(|r| r.comid).collect();
    if ids.is_empty() {
        return Err(Error::not_found(
            "no network flowline of the request is in the GeoPackage",
        ));
    }
    let outlet_comids: Vec<i64> = outlets.iter().map(|o| o.comid).collect();
    let flowline_ids = |thinning: &Thinning| -> Vec<i64> {
        match thinning.streamorder {
            Some(n) => comids_of_order(kept(), &outlet_comids, n),
            None => ids.clone(),
        }
    };
    // Known before the basins unless the stream order follows their area.
    let early = Thinning::before_basins(req);
    // And with it whether the box layers are wanted: they are then read
    // while the basins are resolved.
    let box_layers_first = early.as_ref().is_some_and(|t| !t.flowline_only);
    // Stages as the download reports them, from this thread only (the
    // readers' threads report nothing: callbacks stay on the caller's).
    let stage =
        |name: &str, done: usize, total: usize| ctx.progress(name, done as u64, total as u64);
    stage("catchment", 0, ids.len());
    let (mut subset, basins, catchments, catchment_bbox) = std::thread::scope(|s| -> Result<_> {
        let reader = match &early {
            Some(t) => {
                let (second, ids) = (gpkg.reopen()?, flowline_ids(t));
                let read = move || second.read_by_ids_in_shares(FLOWLINES, &ids, threads);
                Some(s.spawn(read))
            }
            None => None,
        };
        // Catchments held only when the result has them.
        let (catchments, pending, catchment_bbox) = if folds(req) {
            let (dissolvers, bbox) = fold_basins(gpkg, &ids, &basins, threads)?;
            (Table::default(), PendingBasins::Folded(dissolvers), bbox)
        } else {
            let catchments = gpkg.read_by_ids_unordered(Collection::Catchment, &ids)?;
            let basins = basins_of(
                &catchments,
                &outlets,
                per_outlet,
                ids.len(),
                threads,
                ctx.stop(),
            )?;
            let bbox = catchments.bbox();
            (catchments, PendingBasins::Ready(Box::new(basins)), bbox)
        };
        stage("catchment", ids.len(), ids.len());
        let mut subset = Subset::default();
        let basins = match reader {
            // The basins' outlines are resolved on other threads while the
            // flowline reader ends and the box layers are read.
            Some(reader) => {
                let outlets = &outlets;
                let stop = ctx.stop();
                let finishing = s.spawn(move || -> Result<Table> {
                    let basins = pending.finish(outlets, threads, stop)?;
                    // Their box, which the plot's box takes, measured here
                    // while the flowlines are read (millions of vertices).
                    basins.bbox();
                    Ok(basins)
                });
                subset.flowlines = reader.join().expect("the flowline reader does not panic")?;
                stage("flowline", subset.flowlines.len(), subset.flowlines.len());
                if box_layers_first {
                    add_layers_around(gpkg, &mut subset, catchment_bbox, req.layers, threads)?;
                }
                finishing
                    .join()
                    .expect("the basins' overlay does not panic")?
            }
            // The stream order follows the basins' area: they come first.
            None => {
                let basins = pending.finish(&outlets, threads, ctx.stop())?;
                let t = Thinning::decide(req, &basins);
                subset.flowlines =
                    gpkg.read_by_ids_in_shares(FLOWLINES, &flowline_ids(&t), threads)?;
                stage("flowline", subset.flowlines.len(), subset.flowlines.len());
                basins
            }
        };
        Ok((subset, basins, catchments, catchment_bbox))
    })?;
    stage("basin", basins.len(), basins.len());
    let thinning = Thinning::decide(req, &basins);
    let drawn = thinning
        .streamorder
        .map(|_| ids_of(&subset.flowlines, "comid"));
    if let Some(drawn) = &drawn {
        let warnings = left_out(&outlets, drawn, "read").into_iter();
        subset.warnings.extend(warnings.map(|w| ctx.warn(w)));
    }
    if !thinning.flowline_only {
        if !box_layers_first {
            add_layers_around(gpkg, &mut subset, catchment_bbox, req.layers, threads)?;
        }
        // The catchments of the flowlines drawn, as the download keeps them.
        subset.catchments = match &drawn {
            Some(drawn) => retain_keys(&catchments, "featureid", drawn),
            None => catchments,
        };
        subset.catchment_bbox = catchment_bbox;
    }
    subset.outlets = outlets;
    subset.basins = basins;
    Ok(subset)
}

/// The comids of the flowlines drawn at stream order `n`, of the `reaches`
/// kept: for outlets, those of order `n` or more that drain to one through
/// such reaches alone (what the download navigates: the services' answer
/// filtered by order, R4); without outlets (a comid set), every one of
/// order `n` or more.
fn comids_of_order<'a>(
    reaches: impl Iterator<Item = &'a Reach>,
    outlets: &[i64],
    n: i32,
) -> Vec<i64> {
    let ordered: Vec<Reach> = reaches.filter(|r| r.streamorder >= n).copied().collect();
    match outlets {
        [] => ordered.iter().map(|r| r.comid).collect(),
        _ => upstream_comids(&ordered, outlets),
    }
}

/// The layers of [`add_bbox_layers`] in the box around the flowlines of
/// `subset` and the catchments' box `catchment_bbox`, read on `threads`.
fn add_layers_around(
    gpkg: &GeoPackage,
    subset: &mut Subset,
    catchment_bbox: Option<[f64; 4]>,
    layers: Layers,
    threads: usize,
) -> Result<()> {
    let bbox = extent(catchment_bbox, &subset.flowlines).ok_or_else(|| {
        Error::Gpkg(
            "neither the network flowlines of the request nor their catchments have a geometry in the GeoPackage"
                .into(),
        )
    })?;
    add_bbox_layers(gpkg, subset, bbox, layers, threads)
}

/// The basins of a local read: made, or still the edge counts of their
/// catchments ([`fold_basins`]), to be resolved into outlines.
enum PendingBasins {
    Ready(Box<Table>),
    /// One per outlet, or one for all without outlets.
    Folded(Vec<Dissolver>),
}

impl PendingBasins {
    /// The basins table, one row per outlet of `outlets` (the dissolvers'
    /// order), or one without outlets unless it covers nothing.
    fn finish(self, outlets: &[Resolved], threads: usize, stop: &Stop) -> Result<Table> {
        let dissolvers = match self {
            PendingBasins::Ready(table) => return Ok(*table),
            PendingBasins::Folded(dissolvers) => dissolvers,
        };
        let mut basins = Basins::default();
        for (i, dissolver) in dissolvers.into_iter().enumerate() {
            let union = dissolver.finish(threads, stop)?;
            match outlets.get(i) {
                Some(o) => basins.push(union.as_ref(), Some(o))?,
                None if union.is_some() => basins.push(union.as_ref(), None)?,
                None => {}
            }
        }
        basins.finish()
    }
}

/// The edge counts of the basins (one per outlet, or one for all of `ids`
/// without outlets) from the catchments `ids` or, with stored parts
/// (`sources.splits`), from the parts and the other catchments, counted on
/// up to `threads` threads; and the box around them (`None` when none has
/// a geometry).
fn fold_basins(
    gpkg: &GeoPackage,
    ids: &[i64],
    sources: &BasinSources,
    threads: usize,
) -> Result<(Vec<Dissolver>, Option<[f64; 4]>)> {
    let per_outlet = &sources.per_outlet;
    let folds = per_outlet.len().max(1);
    // The other catchments of each basin, when there are several.
    let rests: Vec<IdSet> = match &sources.splits {
        Some(splits) if splits.len() > 1 => (splits.iter())
            .map(|s| s.rest.iter().copied().collect())
            .collect(),
        _ => Vec::new(),
    };
    let (read, sets): (Cow<[i64]>, Vec<Option<&IdSet>>) = match &sources.splits {
        Some(_) if !rests.is_empty() => {
            let read: IdSet = rests.iter().flatten().copied().collect();
            (read.into_iter().collect(), rests.iter().map(Some).collect())
        }
        Some(splits) => (splits[0].rest.as_slice().into(), vec![None]),
        None => (
            ids.into(),
            (0..folds)
                .map(|i| per_outlet.get(i).and_then(Option::as_ref))
                .collect(),
        ),
    };
    let route = |batch: &Table| -> Vec<Vec<usize>> {
        (sets.iter())
            .map(|set| basin_rows(batch, *set, read.len()))
            .collect()
    };
    let mut done = gpkg.fold_catchments(&read, folds, &route, threads)?;
    if let Some(splits) = &sources.splits {
        for (fold, split) in done.iter_mut().zip(splits) {
            gpkg.add_basin_parts(&split.parts, fold)?;
        }
        // A write between the look at the parts and these reads withdrew
        // them: the catchments read may not match the parts.
        if gpkg.basin_parts()?.is_none() {
            return Err(Error::Gpkg(format!(
                "{}: the flowlines or catchments changed while they were read; try again",
                gpkg.path().display()
            )));
        }
    }
    let bbox = done.iter().filter_map(|f| f.bbox).reduce(union_bbox);
    Ok((done.into_iter().map(|f| f.dissolver).collect(), bbox))
}

/// The basins of `outlets` from the catchments held in `catchments`, read
/// by `ids` ids, each dissolved on up to `threads` threads.
fn basins_of(
    catchments: &Table,
    outlets: &[Resolved],
    per_outlet: &[Option<IdSet>],
    ids: usize,
    threads: usize,
    stop: &Stop,
) -> Result<Table> {
    let mut basins = Basins::default();
    let union = |set| {
        let rows = basin_rows(catchments, set, ids);
        dissolve(catchments.geometries(), &rows, threads, stop)
    };
    if per_outlet.is_empty() && !catchments.is_empty() {
        basins.push(union(None)?.as_ref(), None)?;
    }
    for (o, set) in outlets.iter().zip(per_outlet) {
        basins.push(union(set.as_ref())?.as_ref(), Some(o))?;
    }
    basins.finish()
}

/// The rows of the catchments `table` (read by `ids` ids) whose key
/// (`featureid`, else `nhdplusid` or `comid`) is in `set`, or every row without one or when `set` holds
/// as many ids as were read (one outlet: every row read is its).
fn basin_rows(table: &Table, set: Option<&IdSet>, ids: usize) -> Vec<usize> {
    match set {
        Some(set) if set.len() < ids => {
            let key = catchment_key(table);
            (0..table.len())
                .filter(|&r| {
                    key.and_then(|k| k.i64(r))
                        .is_some_and(|id| set.contains(&id))
                })
                .collect()
        }
        _ => (0..table.len()).collect(),
    }
}

/// Everything in a box, no download: flowlines (by stream order, as the
/// services filter them), with the waterbody split by the `wbareacomi` of
/// every flowline in the box, whatever its order: nhdplusTools' published
/// figures for the sample's box at order 2 (10 network, 43 off-network
/// waterbodies). Downloaded, the services' filter hides the lower orders,
/// so the split there is by the flowlines fetched (docs: README).
fn in_bbox(ctx: &Context, gpkg: &GeoPackage, req: &PlotRequest, bbox: [f64; 4]) -> Result<Subset> {
    ctx.progress("flowline", 0, 0);
    let mut flowlines = gpkg.read_bbox(Collection::FlowlineNetwork, bbox)?;
    ctx.progress("flowline", flowlines.len() as u64, flowlines.len() as u64);
    let wbareacomi = wbareacomi_of(&flowlines);
    if let Some(n) = req.streamorder.filter(|&n| n > 0) {
        flowlines = flowlines_of_order(&flowlines, n);
    }
    let mut subset = Subset {
        flowlines,
        network_wbareacomi: Some(wbareacomi),
        requested_bbox: Some(bbox),
        ..Default::default()
    };
    if !req.flowline_only.unwrap_or(false) {
        if req.layers.has_every_layer() {
            subset.catchments = gpkg.read_bbox(Collection::Catchment, bbox)?;
        }
        add_bbox_layers(gpkg, &mut subset, bbox, req.layers, ctx.config.threads)?;
    }
    Ok(subset)
}

/// Waterbodies, NHDArea, non-network flowlines and gages intersecting `bbox`
/// (the waterbodies alone for [`Layers::Drawn`]); layers the file lacks stay
/// empty. The waterbodies are read in shares by fid, one per core, each on
/// a connection of its own while this thread reads the rest, and split into
/// network and off-network ones a batch at a time, so the layer is never
/// held twice.
fn add_bbox_layers(
    gpkg: &GeoPackage,
    subset: &mut Subset,
    bbox: [f64; 4],
    layers: Layers,
    threads: usize,
) -> Result<()> {
    let wbareacomi = (gpkg.has_layer(Collection::Waterbody)).then(|| {
        (subset.network_wbareacomi.take()).unwrap_or_else(|| wbareacomi_of(&subset.flowlines))
    });
    let shares = threads;
    let waterbodies = std::thread::scope(|s| -> Result<_> {
        let mut readers = Vec::new();
        if let Some(wbareacomi) = &wbareacomi {
            for index in 0..shares {
                let (own, share) = (gpkg.reopen()?, Share { index, of: shares });
                readers.push(s.spawn(move || waterbodies_in_bbox(&own, bbox, share, wbareacomi)));
            }
        }
        for (collection, target) in [
            (Collection::Area, &mut subset.areas),
            (Collection::FlowlineNonNetwork, &mut subset.nonnetwork),
            (Collection::Gage, &mut subset.gages),
        ] {
            if layers.has_every_layer() && gpkg.has_layer(collection) {
                *target = gpkg.read_bbox(collection, bbox)?;
            }
        }
        (readers.into_iter())
            .map(|r| r.join().expect("a waterbody reader does not panic"))
            .collect::<Result<Vec<_>>>()
    })?;
    if wbareacomi.is_some() {
        let (network, off_network): (Vec<_>, Vec<_>) = waterbodies.into_iter().unzip();
        subset.network_waterbodies = Some(one_after_another(network)?);
        subset.waterbodies = one_after_another(off_network)?;
    }
    Ok(())
}

/// The rows of `shares` one after the other, in one table: appended to the
/// first share's buffers, so only the later shares' rows are copied.
fn one_after_another(shares: Vec<TableBuilder>) -> Result<Table> {
    let mut shares = shares.into_iter();
    let mut all = shares.next().unwrap_or_default();
    for share in shares {
        all.append_table(&share.finish().map_err(Error::Gpkg)?)
            .map_err(Error::Gpkg)?;
    }
    all.finish().map_err(Error::Gpkg)
}

/// The network and off-network waterbodies of `gpkg`'s `share` intersecting
/// `bbox` (network: their `comid` in `wbareacomi`), read in batches whose
/// rows are copied once, each into its own table.
fn waterbodies_in_bbox(
    gpkg: &GeoPackage,
    bbox: [f64; 4],
    share: Share,
    wbareacomi: &std::collections::HashSet<i64>,
) -> Result<(TableBuilder, TableBuilder)> {
    let (mut network, mut off_network) = (TableBuilder::default(), TableBuilder::default());
    let mut split = |batch: Table| {
        let (n, o) = network_rows(&batch, wbareacomi);
        network.append_rows(&batch, &n).map_err(Error::Gpkg)?;
        off_network.append_rows(&batch, &o).map_err(Error::Gpkg)?;
        Ok(Some(batch.into_geometries().recycle()))
    };
    gpkg.for_each_in_bbox(
        Collection::Waterbody,
        bbox,
        share,
        WATERBODY_BATCH,
        &mut split,
    )?;
    Ok((network, off_network))
}

/// Waterbodies per batch while they are split.
const WATERBODY_BATCH: usize = 16_384;

/// Resolves an outlet locally: comids directly, gauge sites through the
/// `Gage` layer (the index service only when the file has none), points by
/// the catchment that holds them, other sources through the index service.
fn resolve(ctx: &Context, gpkg: &GeoPackage, outlet: &Outlet) -> Result<Resolved> {
    if let Outlet::Point { x, y, crs } = outlet {
        let (lon, lat) = Transformer::new(crs, super::data::PLOT_DATA_CRS)?.point(*x, *y)?;
        let hits = gpkg.read_bbox(Collection::Catchment, [lon, lat, lon, lat])?;
        let comid = (0..hits.len())
            .find_map(|row| hits.get_i64(row, "featureid"))
            .ok_or_else(|| {
                Error::not_found(format!(
                    "no catchment of the GeoPackage holds the point ({x}, {y}) in {crs}"
                ))
            })?;
        return Ok(Resolved {
            source: "comid".into(),
            id: comid.to_string(),
            comid,
            point: Some(Point::new(lon, lat)),
        });
    }
    let (source, id) =
        linked_data_id(outlet, ctx.config.names).expect("non-point outlets have a linked-data id");
    if source == "comid" {
        let comid = id
            .parse()
            .map_err(|_| Error::InvalidArgument(format!("comid {id:?} is not an integer")))?;
        let flowline = gpkg.read_by_ids(Collection::FlowlineNetwork, &[comid])?;
        let point = (!flowline.is_empty())
            .then(|| flowline.geometry(0))
            .flatten()
            .as_ref()
            .and_then(outlet_point);
        return Ok(Resolved {
            source,
            id,
            comid,
            point,
        });
    }
    if source == ctx.config.names.gauge_source() && gpkg.has_layer(Collection::Gage) {
        let gage = gpkg.gage(site_number(&id))?;
        if gage.is_empty() {
            return Err(Error::not_found(format!(
                "gauge site {id} is not in the GeoPackage's Gage layer"
            )));
        }
        let comid = gage.get_i64(0, "flcomid").ok_or_else(|| {
            Error::Gpkg(format!("gauge site {id} has no FLComID in the Gage layer"))
        })?;
        let point = gage.geometry(0).as_ref().and_then(outlet_point);
        return Ok(Resolved {
            source,
            id,
            comid,
            point,
        });
    }
    let feature = index::feature(ctx, &source, &id)
        .map_err(|e| e.context(&format!("outlet {source}/{id}")))?;
    let comid = feature.get_i64("comid").ok_or_else(|| {
        Error::Service(format!(
            "the index service's feature {source}/{id} carries no comid"
        ))
    })?;
    let point = feature.geometry.as_ref().and_then(outlet_point);
    Ok(Resolved {
        source,
        id,
        comid,
        point,
    })
}
