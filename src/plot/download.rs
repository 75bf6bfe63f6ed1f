//! The subset from the services: R1 basins and feature lookups per outlet,
//! R2 catchment lookups for points, R3/R4 items, local navigation.

use super::outlets::{linked_data_id, outlet_point, Resolved};
use super::request::{Outlet, PlotRequest};
use super::subset::{
    extent, flowlines_of_order, ids_of, left_out, retain_keys, union_basin, Basins, Subset,
};
use super::thinning::Thinning;
use crate::collection::Collection;
use crate::context::Context;
use crate::crs::Transformer;
use crate::feature::{union_bbox, Feature};
use crate::network::{upstream_comids, Reach};
use crate::services::fabric::{self, Items, ItemsQuery};
use crate::services::index;
use crate::table::Table;
use crate::{Error, Result};
use std::collections::HashSet;

/// Builds the subset of `req` from the services.
pub fn subset(ctx: &Context, req: &PlotRequest) -> Result<Subset> {
    if let Some(comids) = &req.comid_set {
        return comid_set(ctx, req, comids);
    }
    if let Some((bbox, crs)) = &req.bbox {
        let bbox = Transformer::new(crs, super::data::PLOT_DATA_CRS)?.bbox(*bbox)?;
        return in_bbox(ctx, req, bbox);
    }
    upstream_of_outlets(ctx, req)
}

/// Outlets: resolve each (points through R2), then R1 basin and feature
/// lookup per outlet, flowlines over the basins' bbox, navigation upstream.
fn upstream_of_outlets(ctx: &Context, req: &PlotRequest) -> Result<Subset> {
    let names = ctx.config.names;
    let ids: Vec<(String, String)> = req
        .outlets
        .iter()
        .map(|o| match o {
            Outlet::Point { x, y, crs } => {
                point_comid(ctx, *x, *y, crs).map(|c| ("comid".into(), c.to_string()))
            }
            other => {
                Ok(linked_data_id(other, names).expect("non-point outlets have a linked-data id"))
            }
        })
        .collect::<Result<_>>()?;

    let total = ids.len() as u64;
    let mut done = 0;
    let lookups = crate::parallel::parallel_map(
        ctx.config.concurrency,
        &ids,
        |(source, id)| -> Result<(Resolved, Feature)> {
            let feature = index::feature(ctx, source, id)
                .map_err(|e| e.context(&format!("outlet {source}/{id}")))?;
            let comid = feature
                .get_i64("comid")
                .or_else(|| (source == "comid").then(|| id.parse().ok()).flatten());
            let comid = comid.ok_or_else(|| {
                Error::Service(format!(
                    "the index service's feature {source}/{id} carries no comid"
                ))
            })?;
            let basin = index::basin(ctx, source, id)
                .map_err(|e| e.context(&format!("basin of outlet {source}/{id}")))?;
            let point = feature.geometry.as_ref().and_then(outlet_point);
            Ok((
                Resolved {
                    source: source.clone(),
                    id: id.clone(),
                    comid,
                    point,
                },
                basin,
            ))
        },
        |_, _| {
            done += 1;
            ctx.progress("basin", done, total);
        },
    );
    let mut resolved = Vec::new();
    let mut basins = Basins::default();
    for r in lookups {
        let (outlet, basin) = r?;
        basins.push_sent(&basin, &outlet)?;
        resolved.push(outlet);
    }
    let basins = basins.finish()?;
    let bbox = basins
        .bbox()
        .or_else(|| {
            resolved
                .iter()
                .filter_map(|o| o.point)
                .map(|p| [p.x(), p.y(), p.x(), p.y()])
                .reduce(union_bbox)
        })
        .ok_or_else(|| Error::Service("the basins of the outlets have no geometry".into()))?;

    let thinning = Thinning::decide(req, &basins);
    let Items {
        table: flowlines,
        mut warnings,
    } = flowlines_in(ctx, req, bbox, thinning.streamorder)?;
    let outlet_comids: Vec<i64> = resolved.iter().map(|o| o.comid).collect();
    let upstream: HashSet<i64> = upstream_comids(&reaches_of(&flowlines), &outlet_comids)
        .into_iter()
        .collect();
    let flowlines = retain_keys(&flowlines, "comid", &upstream);
    warnings.extend(
        left_out(&resolved, &upstream, "fetched")
            .into_iter()
            .map(|w| ctx.warn(w)),
    );

    let mut subset = Subset {
        outlets: resolved,
        basins,
        flowlines,
        warnings,
        ..Default::default()
    };
    if !thinning.flowline_only {
        add_bbox_layers(ctx, req, &mut subset, bbox, &BOX_LAYERS)?;
        subset.catchments = retain_keys(&subset.catchments, "featureid", &upstream);
    }
    Ok(subset)
}

/// The integer comid set: exactly these flowlines (R3) of the stream order
/// or more, and their catchments; the basin is the union of the catchments
/// of the whole set (what an automatic stream order follows), fetched
/// whatever is drawn, as a local read folds them into its basin.
fn comid_set(ctx: &Context, req: &PlotRequest, comids: &[i64]) -> Result<Subset> {
    let flowlines = by_ids(ctx, req, Collection::FlowlineNetwork, comids, "flowline")?;
    if flowlines.table.is_empty() {
        return Err(Error::not_found(format!(
            "none of the {} comids of the comid set is a network flowline",
            comids.len()
        )));
    }
    let Items {
        table: mut catchments,
        warnings,
    } = by_ids(ctx, req, Collection::Catchment, comids, "catchment")?;
    let mut subset = Subset {
        flowlines: flowlines.table,
        warnings: [flowlines.warnings, warnings].concat(),
        ..Default::default()
    };
    if !catchments.is_empty() {
        let mut basins = Basins::default();
        basins.push(
            union_basin(&catchments, ctx.config.threads, ctx.stop())?.as_ref(),
            None,
        )?;
        subset.basins = basins.finish()?;
    }
    let catchment_bbox = catchments.bbox();
    let thinning = Thinning::decide(req, &subset.basins);
    if let Some(n) = thinning.streamorder {
        subset.flowlines = flowlines_of_order(&subset.flowlines, n);
        let drawn = ids_of(&subset.flowlines, "comid");
        let warnings = left_out(&[], &drawn, "fetched").into_iter();
        subset.warnings.extend(warnings.map(|w| ctx.warn(w)));
        // The catchments of the flowlines drawn, as upstream of outlets.
        catchments = retain_keys(&catchments, "featureid", &drawn);
    }
    if thinning.flowline_only {
        return Ok(subset);
    }
    let bbox = extent(catchment_bbox, &subset.flowlines).ok_or_else(|| {
        Error::Service(
            "neither the network flowlines of the comid set nor their catchments have a geometry in the fabric service's answer"
                .into(),
        )
    })?;
    subset.catchments = catchments;
    // Its catchments it has by id: only the other layers by the box.
    add_bbox_layers(ctx, req, &mut subset, bbox, &BOX_LAYERS[1..])?;
    Ok(subset)
}

/// R3: the features of `collection` whose id property is one of `ids`.
fn by_ids(
    ctx: &Context,
    req: &PlotRequest,
    collection: Collection,
    ids: &[i64],
    stage: &str,
) -> Result<Items> {
    let query = ItemsQuery::In {
        property: collection.id_property(),
        ids,
    };
    let properties = properties(req, collection);
    fabric::items_table(ctx, collection, &query, properties.as_deref(), stage)
}

/// Everything in a box (R4), no navigation and no basin.
fn in_bbox(ctx: &Context, req: &PlotRequest, bbox: [f64; 4]) -> Result<Subset> {
    let streamorder = req.streamorder.filter(|&n| n > 0);
    let flowlines = flowlines_in(ctx, req, bbox, streamorder)?;
    let mut subset = Subset {
        flowlines: flowlines.table,
        warnings: flowlines.warnings,
        requested_bbox: Some(bbox),
        ..Default::default()
    };
    if !req.flowline_only.unwrap_or(false) {
        add_bbox_layers(ctx, req, &mut subset, bbox, &BOX_LAYERS)?;
    }
    Ok(subset)
}

/// R4: network flowlines in `bbox`, with `filter=streamorde > N-1` for stream order N.
fn flowlines_in(
    ctx: &Context,
    req: &PlotRequest,
    bbox: [f64; 4],
    streamorder: Option<i32>,
) -> Result<Items> {
    let filter = streamorder.map(|n| format!("streamorde > {}", n - 1));
    fabric::items_table(
        ctx,
        Collection::FlowlineNetwork,
        &ItemsQuery::BBox { bbox, filter },
        properties(req, Collection::FlowlineNetwork).as_deref(),
        "flowline",
    )
}

/// The `properties=` value of `req` for `collection` (`None`: all).
fn properties(req: &PlotRequest, collection: Collection) -> Option<String> {
    req.properties.query_value(collection)
}

/// The layers read by the flowlines' bbox, with their progress stages;
/// the catchments first.
const BOX_LAYERS: [(Collection, &str); 4] = [
    (Collection::Catchment, "catchment"),
    (Collection::Waterbody, "waterbody"),
    (Collection::Area, "nhdarea"),
    (Collection::FlowlineNonNetwork, "flowline_nonnetwork"),
];

/// The `layers` (of [`BOX_LAYERS`]) by the same bbox.
fn add_bbox_layers(
    ctx: &Context,
    req: &PlotRequest,
    subset: &mut Subset,
    bbox: [f64; 4],
    layers: &[(Collection, &str)],
) -> Result<()> {
    for &(collection, stage) in layers {
        let query = ItemsQuery::BBox { bbox, filter: None };
        let properties = properties(req, collection);
        let table = match fabric::items_table(ctx, collection, &query, properties.as_deref(), stage)
        {
            Ok(items) => {
                subset.warnings.extend(items.warnings);
                items.table
            }
            Err(Error::NotFound { .. }) => {
                subset.warnings.push(ctx.warn(format!(
                    "the fabric service has no {stage} layer; it is left out"
                )));
                Table::default()
            }
            Err(e) => return Err(e),
        };
        *match collection {
            Collection::Catchment => &mut subset.catchments,
            Collection::Waterbody => &mut subset.waterbodies,
            Collection::Area => &mut subset.areas,
            _ => &mut subset.nonnetwork,
        } = table;
    }
    Ok(())
}

/// R2: the comid of the catchment holding a point.
fn point_comid(ctx: &Context, x: f64, y: f64, crs: &str) -> Result<i64> {
    let (lon, lat) = Transformer::new(crs, super::data::PLOT_DATA_CRS)?.point(x, y)?;
    let ids = fabric::catchments_at_point(ctx, lon, lat)?;
    ids.first().copied().ok_or_else(|| {
        Error::not_found(format!(
            "no catchment holds the point ({x}, {y}) in {crs}: it lies outside the NHDPlus network (in the sea, or outside the US?)"
        ))
    })
}

/// The topology of the flowlines, read from their comid, hydroseq,
/// dnhydroseq and streamorde columns in one pass; rows without a comid or
/// hydroseq are left out.
pub fn reaches_of(flowlines: &Table) -> Vec<Reach> {
    let (Some(comid), Some(hydroseq)) = (flowlines.column("comid"), flowlines.column("hydroseq"))
    else {
        return Vec::new();
    };
    let dnhydroseq = flowlines.column("dnhydroseq");
    let streamorde = flowlines.column("streamorde");
    (0..flowlines.len())
        .filter_map(|r| {
            Some(Reach {
                comid: comid.i64(r)?,
                hydroseq: hydroseq.i64(r)?,
                dnhydroseq: dnhydroseq.and_then(|c| c.i64(r)).unwrap_or(0),
                streamorder: streamorde.and_then(|c| c.i64(r)).unwrap_or(0) as i32,
            })
        })
        .collect()
}
