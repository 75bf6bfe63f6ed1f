//! The OGC API Features "fabric" service: items by bbox (R4), by id list (R3)
//! and the catchments at a point (R2), with paging that never truncates.
//!
//! Paging: the first page is requested as the interface spec says
//! (`limit=<page_size>&offset=0`), and every page of a query, the first
//! included, adds `sortby=<the collection's id property>`: pygeoapi on a
//! database promises no row order without it, so pages cut by offset from
//! different scans could skip or repeat features. When the first page
//! states `numberMatched`, the remaining offsets are fetched concurrently,
//! stepping by the first page's `numberReturned` (pygeoapi silently clamps
//! `limit`); otherwise pages are requested one after the other while the
//! service sends a `rel=next` link. Features are deduplicated by id across
//! pages, and a final count that differs from `numberMatched` is an error
//! rather than a silent truncation.
//!
//! `max_features` holds whatever the service sends: a `numberMatched` over
//! it stops the query after the first page; without `numberMatched`, the
//! query stops at the first page that takes the count past it.

use crate::collection::Collection;
use crate::context::Context;
use crate::feature::Feature;
use crate::http::{redact_url, with_query, Service};
use crate::parallel::parallel_map;
use crate::table::decode::decode_page;
use crate::table::Table;
use crate::{Error, Result};
use std::collections::HashSet;

/// Ids per POST of an `in` query; longer lists are split into several
/// queries (keeps request bodies around 20 KB, well under proxy limits).
pub const IN_CHUNK: usize = 2000;

/// The content type of CQL2-JSON filter bodies.
const CQL_JSON: &str = "application/query-cql-json";

/// What to ask a collection for.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemsQuery<'a> {
    /// R4: features intersecting `[xmin, ymin, xmax, ymax]` (lon/lat), with an
    /// optional CQL2 text filter such as `streamorde > 2`.
    BBox {
        bbox: [f64; 4],
        filter: Option<String>,
    },
    /// R3: features whose integer `property` (`comid`, `featureid`) is in `ids`.
    In { property: &'a str, ids: &'a [i64] },
}

/// Every feature of `collection` matching `query`, in service order, each
/// once, as features: [`items_table`]'s rows for callers that want them.
pub fn items(
    ctx: &Context,
    collection: Collection,
    query: &ItemsQuery,
    stage: &str,
) -> Result<Vec<Feature>> {
    items_table(ctx, collection, query, stage).map(|t| t.to_features())
}

/// Every feature of `collection` matching `query`, in service order, each
/// once, as one table (the pages' tables concatenated; owned by the caller).
/// `stage` names the progress reports (one per page).
pub fn items_table(
    ctx: &Context,
    collection: Collection,
    query: &ItemsQuery,
    stage: &str,
) -> Result<Table> {
    let name = collection.service_name(ctx.config.names).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "the fabric service has no collection for the {collection:?} layer"
        ))
    })?;
    let base = format!("{}/collections/{name}/items", ctx.config.fabric_url);
    let limit = ctx.config.page_size.to_string();
    let sortby = collection.id_property();
    match query {
        ItemsQuery::BBox { bbox, filter } => {
            let bbox = bbox_param(bbox);
            let mut params = vec![("bbox", bbox.as_str())];
            if let Some(filter) = filter {
                params.push(("filter", filter.as_str()));
            }
            params.push(("limit", &limit));
            let pager = Pager {
                ctx,
                stage,
                post: None,
            };
            let table = pager.fetch_all(&|offset| {
                let offset = offset.unwrap_or(0).to_string();
                let mut p = params.clone();
                p.extend([("offset", offset.as_str()), ("sortby", sortby)]);
                with_query(&base, &p)
            })?;
            Ok(table)
        }
        ItemsQuery::In { property, ids } => {
            let mut unique = HashSet::new();
            let ids: Vec<i64> = ids
                .iter()
                .copied()
                .filter(|id| unique.insert(*id))
                .collect();
            let mut tables = Vec::new();
            for chunk in ids.chunks(IN_CHUNK) {
                let body = serde_json::json!({"op": "in", "args": [{"property": property}, chunk]})
                    .to_string();
                let pager = Pager {
                    ctx,
                    stage,
                    post: Some(body.as_bytes()),
                };
                tables.push(pager.fetch_all(&|offset| {
                    let offset = offset.unwrap_or(0).to_string();
                    with_query(
                        &base,
                        &[("limit", &limit), ("offset", &offset), ("sortby", sortby)],
                    )
                })?);
            }
            concat(&tables)
        }
    }
}

/// R2: the comids (`featureid`) of the catchments containing the point.
pub fn catchments_at_point(ctx: &Context, lon: f64, lat: f64) -> Result<Vec<i64>> {
    let name = Collection::Catchment
        .service_name(ctx.config.names)
        .expect("catchments are served");
    let base = format!("{}/collections/{name}/items", ctx.config.fabric_url);
    let bbox = bbox_param(&[lon, lat, lon, lat]);
    let fixed = [
        ("bbox", bbox.as_str()),
        ("properties", "featureid"),
        ("skipGeometry", "true"),
        ("sortby", Collection::Catchment.id_property()),
    ];
    let limit = ctx.config.page_size.to_string();
    let pager = Pager {
        ctx,
        stage: "catchment lookup",
        post: None,
    };
    let table = pager.fetch_all(&|offset| match offset {
        None => with_query(&base, &fixed),
        Some(offset) => {
            let offset = offset.to_string();
            let mut p = fixed.to_vec();
            p.extend([("limit", limit.as_str()), ("offset", offset.as_str())]);
            with_query(&base, &p)
        }
    })?;
    let featureid = table.column("featureid");
    (0..table.len())
        .map(|row| {
            featureid.and_then(|c| c.i64(row)).ok_or_else(|| {
                Error::Service(format!(
                    "the fabric service sent a catchment at ({lon}, {lat}) without a featureid"
                ))
            })
        })
        .collect()
}

/// `xmin,ymin,xmax,ymax` with Rust's shortest round-trip decimals.
fn bbox_param(b: &[f64; 4]) -> String {
    format!("{},{},{},{}", b[0], b[1], b[2], b[3])
}

/// A decoded page.
struct Page {
    table: Table,
    number_matched: Option<u64>,
    /// Features on this page (`numberReturned`, else the count).
    returned: u64,
    has_next: bool,
}

/// The features of one items page, parsed exactly as the pager parses pages
/// (the entry point of the `feature_page` fuzz target).
pub fn parse_items_page(body: &[u8]) -> Result<Vec<Feature>> {
    parse_page(body, "the fuzz input").map(|page| page.table.to_features())
}

/// Decodes a page's bytes straight into columns (the caller drops the bytes).
fn parse_page(body: &[u8], url: &str) -> Result<Page> {
    let not_items = |why: String| {
        Error::Service(format!(
            "the fabric service's answer to {} is not a GeoJSON FeatureCollection: {why}",
            redact_url(url)
        ))
    };
    let page = decode_page(body).map_err(not_items)?;
    if page.kind != "FeatureCollection" {
        return Err(not_items(format!("its type is {:?}", page.kind)));
    }
    Ok(Page {
        returned: page.number_returned.unwrap_or(page.table.len() as u64),
        table: page.table,
        number_matched: page.number_matched,
        has_next: page.has_next,
    })
}

/// The rows of `tables` one after the other (a failure here is a page too
/// large for the columns' 32-bit offsets).
fn concat(tables: &[Table]) -> Result<Table> {
    Table::concat(tables).map_err(|e| Error::Service(format!("the fabric service's pages: {e}")))
}

/// Fetches every page of one query.
struct Pager<'a> {
    ctx: &'a Context,
    stage: &'a str,
    /// The CQL2-JSON body of a POST query; `None` for GET.
    post: Option<&'a [u8]>,
}

impl Pager<'_> {
    fn request(&self, url: &str) -> Result<Page> {
        let response = match self.post {
            None => self.ctx.get(Service::Fabric, url),
            Some(body) => self.ctx.post(Service::Fabric, url, CQL_JSON, body),
        };
        response.and_then(|r| parse_page(&r.body, url))
    }

    /// Every feature of one query, each id once. `url_for(None)` is the first
    /// page's URL, `url_for(Some(offset))` a later one's.
    fn fetch_all(&self, url_for: &(dyn Fn(Option<u64>) -> String + Sync)) -> Result<Table> {
        let (mut out, mut seen) = (Unique::default(), HashSet::new());
        let ctx = self.ctx;
        let first_url = url_for(None);
        let first = self.request(&first_url)?;
        let step = first.returned;
        let matched = first.number_matched;
        if let Some(matched) = matched {
            if matched > ctx.config.max_features {
                return Err(Error::Limit(format!(
                    "{} matches {matched} features, more than max_features ({}); use a smaller area, a stream order filter or raise max_features",
                    redact_url(&first_url),
                    ctx.config.max_features
                )));
            }
        }
        let more = first.has_next || matched.is_some_and(|m| m > step);
        add_unique(&mut out, &mut seen, first.table);
        let over_limit = || {
            Error::Limit(format!(
                "{} returns more than max_features ({}) features; use a smaller area, a stream order filter or raise max_features",
                redact_url(&first_url),
                ctx.config.max_features
            ))
        };
        if out.rows as u64 > ctx.config.max_features {
            return Err(over_limit());
        }

        match matched {
            Some(matched) if more && step > 0 => {
                let offsets: Vec<u64> = (1..)
                    .map(|k| k * step)
                    .take_while(|&o| o < matched)
                    .collect();
                let total = offsets.len() as u64 + 1;
                ctx.progress(self.stage, 1, total);
                let mut done = 1;
                let pages = parallel_map(
                    ctx.config.concurrency,
                    &offsets,
                    |&offset| self.request(&url_for(Some(offset))),
                    |_, _| {
                        done += 1;
                        ctx.progress(self.stage, done, total);
                    },
                );
                for page in pages {
                    add_unique(&mut out, &mut seen, page?.table);
                }
            }
            Some(_) => ctx.progress(self.stage, 1, 1),
            None => {
                let (mut offset, mut has_next, mut returned, mut pages) = (step, more, step, 1);
                ctx.progress(self.stage, pages, 0);
                while has_next && returned > 0 {
                    let page = self.request(&url_for(Some(offset)))?;
                    pages += 1;
                    ctx.progress(self.stage, pages, 0);
                    (has_next, returned) = (page.has_next, page.returned);
                    offset += returned;
                    add_unique(&mut out, &mut seen, page.table);
                    if out.rows as u64 > ctx.config.max_features {
                        return Err(over_limit());
                    }
                }
            }
        }
        if let Some(matched) = matched {
            let got = out.rows as u64;
            if got != matched {
                return Err(Error::Service(format!(
                    "the fabric service said {} matches {matched} features but its pages held {got} distinct ones; the result would be incomplete",
                    redact_url(&first_url)
                )));
            }
        }
        concat(&out.tables)
    }
}

/// The pages of one query, each feature id once.
#[derive(Default)]
struct Unique {
    tables: Vec<Table>,
    rows: usize,
}

/// Appends the rows of `page` whose id is not in `seen` (rows without an id
/// are kept), as the id's JSON text.
fn add_unique(out: &mut Unique, seen: &mut HashSet<String>, page: Table) {
    let keep: Vec<bool> = (0..page.len())
        .map(|row| page.id(row).is_none_or(|id| seen.insert(id.to_string())))
        .collect();
    let page = if keep.iter().all(|&k| k) {
        page
    } else {
        page.filter(&keep)
    };
    out.rows += page.len();
    out.tables.push(page);
}
