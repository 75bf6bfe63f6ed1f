//! The OGC API Features "fabric" service: items by bbox (R4), by id list (R3)
//! and the catchments at a point (R2), with paging that never truncates and
//! always ends.
//!
//! Paging: the first page is requested as the interface spec says
//! (`limit=<page_size>&offset=0`), and every page of a query, the first
//! included, adds `sortby=<the collection's id property>`: pygeoapi on a
//! database promises no row order without it, so pages cut by offset from
//! different scans could skip or repeat features. When the first page
//! states `numberMatched` and its `next` link (if any) is the offset the
//! pages predict, the remaining offsets are fetched concurrently, stepping
//! by the first page's `numberReturned` (pygeoapi silently clamps `limit`).
//! Otherwise pages are requested one after the other: by offset while the
//! service's `next` link agrees, by the `next` link itself when it does not
//! (a server paging by cursor). Features are deduplicated by id across
//! pages; a page that adds no new feature stops the query with an error
//! naming its URL (`next` links that go round in a circle), and a final
//! count that differs from `numberMatched` is an error rather than a silent
//! truncation.
//!
//! A service that refuses `sortby` (400, as pygeoapi does for providers
//! that cannot sort) is asked again without it, and its pages are then
//! fetched one at a time by its `next` links, with a warning that their
//! order was not guaranteed.
//!
//! A caller may narrow the columns: `properties=` (pygeoapi answers 400 to
//! a name the collection lacks) then goes on every page of the query.
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
/// once, as features: [`items_table`]'s rows (every property) for callers
/// that want them; warnings go to the observer only.
pub fn items(
    ctx: &Context,
    collection: Collection,
    query: &ItemsQuery,
    stage: &str,
) -> Result<Vec<Feature>> {
    items_table(ctx, collection, query, None, stage).map(|i| i.table.to_features())
}

/// The answer to one items query.
#[derive(Debug, Default)]
pub struct Items {
    /// The features (owned by the caller).
    pub table: Table,
    /// Warnings about the answer (also sent to the observer), such as pages
    /// fetched without `sortby` because the service refused it.
    pub warnings: Vec<String>,
}

/// Every feature of `collection` matching `query`, in service order, each
/// once, as one table (the pages' tables concatenated; owned by the caller).
/// `properties` is sent as `properties=` on every page (a comma list the
/// caller has checked; `None`: every property). `stage` names the progress
/// reports (one per page).
pub fn items_table(
    ctx: &Context,
    collection: Collection,
    query: &ItemsQuery,
    properties: Option<&str>,
    stage: &str,
) -> Result<Items> {
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
            params.extend(properties.map(|p| ("properties", p)));
            params.push(("limit", &limit));
            let pager = Pager {
                ctx,
                stage,
                post: None,
            };
            pager.fetch_all(&|offset, sorted| {
                let offset = offset.unwrap_or(0).to_string();
                let mut p = params.clone();
                p.push(("offset", offset.as_str()));
                p.extend(sorted.then_some(("sortby", sortby)));
                with_query(&base, &p)
            })
        }
        ItemsQuery::In { property, ids } => {
            let mut unique = HashSet::new();
            let ids: Vec<i64> = ids
                .iter()
                .copied()
                .filter(|id| unique.insert(*id))
                .collect();
            let mut tables = Vec::new();
            let mut warnings = Vec::new();
            for chunk in ids.chunks(IN_CHUNK) {
                let body = serde_json::json!({"op": "in", "args": [{"property": property}, chunk]})
                    .to_string();
                let pager = Pager {
                    ctx,
                    stage,
                    post: Some(body.as_bytes()),
                };
                let items = pager.fetch_all(&|offset, sorted| {
                    let offset = offset.unwrap_or(0).to_string();
                    let mut p: Vec<(&str, &str)> =
                        properties.map(|p| ("properties", p)).into_iter().collect();
                    p.extend([("limit", limit.as_str()), ("offset", &offset)]);
                    p.extend(sorted.then_some(("sortby", sortby)));
                    with_query(&base, &p)
                })?;
                tables.push(items.table);
                warnings.extend(items.warnings);
            }
            Ok(Items {
                table: concat(&tables)?,
                warnings,
            })
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
    let sortby = ("sortby", Collection::Catchment.id_property());
    let fixed = [
        ("bbox", bbox.as_str()),
        ("properties", "featureid"),
        ("skipGeometry", "true"),
    ];
    let limit = ctx.config.page_size.to_string();
    let pager = Pager {
        ctx,
        stage: "catchment lookup",
        post: None,
    };
    let table = pager
        .fetch_all(&|offset, sorted| {
            let offset = offset.map(|o| o.to_string());
            let mut p = fixed.to_vec();
            p.extend(sorted.then_some(sortby));
            if let Some(offset) = &offset {
                p.extend([("limit", limit.as_str()), ("offset", offset.as_str())]);
            }
            with_query(&base, &p)
        })?
        .table;
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
    /// The `href` of the page's `rel=next` link.
    next: Option<String>,
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
        next: page.next,
    })
}

/// The rows of `tables` one after the other (a failure here is a page too
/// large for the columns' 32-bit offsets).
fn concat(tables: &[Table]) -> Result<Table> {
    Table::concat(tables).map_err(|e| Error::Service(format!("the fabric service's pages: {e}")))
}

/// The URL of a page of one query: `url_for(None, sorted)` is the first
/// page's, `url_for(Some(offset), sorted)` a later one's; `sorted` adds
/// `sortby` on the collection's id.
type UrlFor<'a> = dyn Fn(Option<u64>, bool) -> String + Sync + 'a;

/// Fetches every page of one query.
struct Pager<'a> {
    ctx: &'a Context,
    stage: &'a str,
    /// The CQL2-JSON body of a POST query; `None` for GET.
    post: Option<&'a [u8]>,
}

/// What one query has gathered so far.
struct Gathered {
    /// The first page's URL, which errors name.
    first_url: String,
    /// Whether the pages carry `sortby`.
    sorted: bool,
    /// The warning given when the service refused `sortby`.
    unsorted: Option<String>,
    /// `numberMatched` of the first page.
    matched: Option<u64>,
    /// The distinct features so far.
    out: Unique,
    /// Pages fetched so far.
    pages: u64,
}

impl Gathered {
    fn over_limit(&self, max_features: u64) -> Error {
        Error::Limit(format!(
            "{} returns more than max_features ({max_features}) features; use a smaller area, a stream order filter or raise max_features",
            redact_url(&self.first_url),
        ))
    }
}

impl Pager<'_> {
    fn request(&self, url: &str) -> Result<Page> {
        let response = match self.post {
            None => self.ctx.get(Service::Fabric, url),
            Some(body) => self.ctx.post(Service::Fabric, url, CQL_JSON, body),
        };
        response.and_then(|r| parse_page(&r.body, url))
    }

    /// The first page, sorted; when the service refuses `sortby` (400, as
    /// pygeoapi does for providers that cannot sort), unsorted, with a warning.
    fn first_page(&self, url_for: &UrlFor) -> Result<(Page, Gathered)> {
        let sorted_url = url_for(None, true);
        let (first_url, page, unsorted) = match self.request(&sorted_url) {
            Err(e) if e.http_status() == 400 => {
                let url = url_for(None, false);
                let page = self.request(&url)?;
                let warning = self.ctx.warn(format!(
                    "the fabric service refused to sort {} ({e}); its pages were fetched without sortby by following its next links, so their order was not guaranteed (features are still deduplicated by id and counted against numberMatched)",
                    redact_url(&url)
                ));
                (url, page, Some(warning))
            }
            answer => (sorted_url, answer?, None),
        };
        let gathered = Gathered {
            first_url,
            sorted: unsorted.is_none(),
            unsorted,
            matched: page.number_matched,
            out: Unique::default(),
            pages: 1,
        };
        Ok((page, gathered))
    }

    /// Every feature of one query, each id once.
    ///
    /// Fast path: a sorted query whose first page states `numberMatched`
    /// and whose `next` link (if any) is the offset the pages predict gets
    /// its remaining offsets concurrently. Otherwise pages are fetched one
    /// after the other ([`Pager::follow`]).
    fn fetch_all(&self, url_for: &UrlFor) -> Result<Items> {
        let ctx = self.ctx;
        let max = ctx.config.max_features;
        let (first, mut g) = self.first_page(url_for)?;
        let step = first.returned;
        if let Some(matched) = g.matched.filter(|&m| m > max) {
            return Err(Error::Limit(format!(
                "{} matches {matched} features, more than max_features ({max}); use a smaller area, a stream order filter or raise max_features",
                redact_url(&g.first_url),
            )));
        }
        let more = first.next.is_some() || g.matched.is_some_and(|m| m > step);
        let predictable = first
            .next
            .as_deref()
            .is_none_or(|href| agrees(href, &url_for(Some(step), g.sorted), step));
        let next = first.next;
        add_unique(&mut g.out, first.table);
        if g.out.rows as u64 > max {
            return Err(g.over_limit(max));
        }
        match g.matched {
            Some(matched) if more && step > 0 && g.sorted && predictable => {
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
                    |&offset| self.request(&url_for(Some(offset), true)),
                    |_, _| {
                        done += 1;
                        ctx.progress(self.stage, done, total);
                    },
                );
                for page in pages {
                    add_unique(&mut g.out, page?.table);
                }
            }
            Some(_) if !more => ctx.progress(self.stage, 1, 1),
            _ => self.follow(url_for, &mut g, next, step)?,
        }
        if let Some(matched) = g.matched {
            let got = g.out.rows as u64;
            if got != matched {
                return Err(Error::Service(format!(
                    "the fabric service said {} matches {matched} features but its pages held {got} distinct ones; the result would be incomplete",
                    redact_url(&g.first_url)
                )));
            }
        }
        Ok(Items {
            table: concat(&g.out.tables)?,
            warnings: g.unsorted.into_iter().collect(),
        })
    }

    /// Fetches the pages after the first one at a time: the offset the
    /// pages predict while the service's `next` link agrees with it, the
    /// `next` link itself when it does not (a cursor). Ends when a page has
    /// no `next` link (and `numberMatched`, when stated, is reached) or is
    /// empty; a page that adds no new feature is an error naming its URL,
    /// so a service whose links go round in a circle cannot keep the client
    /// requesting forever.
    fn follow(
        &self,
        url_for: &UrlFor,
        g: &mut Gathered,
        mut next: Option<String>,
        mut returned: u64,
    ) -> Result<()> {
        let (ctx, max) = (self.ctx, self.ctx.config.max_features);
        let mut offset = returned;
        ctx.progress(self.stage, g.pages, 0);
        let short = |g: &Gathered| g.matched.is_some_and(|m| (g.out.rows as u64) < m);
        while returned > 0 && (next.is_some() || short(g)) {
            let predicted = url_for(Some(offset), g.sorted);
            let url = match next {
                Some(href) if !agrees(&href, &predicted, offset) => {
                    followable(&href, &ctx.config.fabric_url)?
                }
                _ => predicted,
            };
            let page = self.request(&url)?;
            g.pages += 1;
            ctx.progress(self.stage, g.pages, 0);
            if add_unique(&mut g.out, page.table) == 0 && page.returned > 0 {
                return Err(Error::Service(format!(
                    "the fabric service's page {} repeats only features of earlier pages: its next links do not advance, so paging stopped after {} requests",
                    redact_url(&url),
                    g.pages
                )));
            }
            if g.out.rows as u64 > max {
                return Err(g.over_limit(max));
            }
            (next, returned) = (page.next, page.returned);
            offset += returned;
        }
        Ok(())
    }
}

/// Whether the service's `next` link `href` is the page `predicted` by
/// offsets: it carries `offset=<offset>` and no parameter the client did
/// not send (but `f`). A cursor, or an offset other than the predicted
/// one, makes it differ. Only parameter names are compared (values may be
/// encoded differently), and no host: a service behind a proxy may name
/// another one.
fn agrees(href: &str, predicted: &str, offset: u64) -> bool {
    let (href_path, href_query) = path_and_query(href);
    let (path, query) = path_and_query(predicted);
    let names = |q: &'_ str| -> Vec<String> {
        q.split('&')
            .map(|pair| pair.split('=').next().unwrap_or("").to_string())
            .collect()
    };
    let sent = names(query);
    let offset = format!("offset={offset}");
    href_path == path
        && href_query.split('&').any(|pair| pair == offset)
        && names(href_query)
            .iter()
            .all(|n| n == "f" || n.is_empty() || sent.contains(n))
}

/// The path and query of an absolute URL (no scheme, host or fragment).
fn path_and_query(url: &str) -> (&str, &str) {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let rest = rest.find('/').map_or("", |i| &rest[i..]);
    let rest = rest.split('#').next().unwrap_or("");
    rest.split_once('?').unwrap_or((rest, ""))
}

/// `href`, when it is on the fabric service's own scheme, host and port:
/// a `next` link elsewhere is not followed (requests go to the configured
/// service only).
fn followable(href: &str, fabric_url: &str) -> Result<String> {
    let own = origin(fabric_url);
    if href.contains("://") && origin(href) == own {
        Ok(href.to_string())
    } else {
        Err(Error::Service(format!(
            "the fabric service's next link {} is not on {own}; it is not followed",
            redact_url(href)
        )))
    }
}

/// `scheme://host[:port]` of an absolute URL, lower-case, without
/// credentials and without the scheme's default port (pygeoapi writes
/// `https://host:443/...`).
fn origin(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (scheme, host) = (scheme.to_ascii_lowercase(), host.to_ascii_lowercase());
    let default_port = match scheme.as_str() {
        "https" => ":443",
        "http" => ":80",
        _ => "",
    };
    let host = host.strip_suffix(default_port).unwrap_or(&host);
    format!("{scheme}://{host}")
}

/// The pages of one query, each feature id once.
#[derive(Default)]
struct Unique {
    tables: Vec<Table>,
    rows: usize,
    /// The ids of the rows kept, as JSON text.
    seen: HashSet<String>,
}

/// Appends the rows of `page` whose id is not among the ids seen (rows
/// without an id are kept) and returns how many it kept.
fn add_unique(out: &mut Unique, page: Table) -> usize {
    let seen = &mut out.seen;
    let keep: Vec<bool> = (0..page.len())
        .map(|row| page.id(row).is_none_or(|id| seen.insert(id.to_string())))
        .collect();
    let page = if keep.iter().all(|&k| k) {
        page
    } else {
        page.filter(&keep)
    };
    let kept = page.len();
    out.rows += kept;
    out.tables.push(page);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A next link as pygeoapi writes it (host with its default port, `f`,
    /// parameters in its own order and encoding).
    const PYGEOAPI_NEXT: &str = "https://api.water.usgs.gov:443/fabric/pygeoapi/collections/nhdflowline_network/items?offset=500&f=json&bbox=-89.5,42.9,-89.2,43.1&filter=streamorde+%3E+1&limit=500&sortby=comid";
    const PREDICTED: &str = "https://api.water.usgs.gov/fabric/pygeoapi/collections/nhdflowline_network/items?bbox=-89.5,42.9,-89.2,43.1&filter=streamorde%20%3E%201&limit=500&offset=500&sortby=comid";

    #[test]
    fn a_pygeoapi_next_link_agrees_with_the_predicted_offset() {
        assert!(agrees(PYGEOAPI_NEXT, PREDICTED, 500));
        assert!(!agrees(PYGEOAPI_NEXT, PREDICTED, 1000), "another offset");
        let cursor = PYGEOAPI_NEXT.replace("offset=500", "offset=500&cursor=a1b2");
        assert!(!agrees(&cursor, PREDICTED, 500), "a cursor");
        let no_offset = PYGEOAPI_NEXT.replace("offset=500&", "");
        assert!(!agrees(&no_offset, PREDICTED, 500));
        let elsewhere = PYGEOAPI_NEXT.replace("nhdflowline_network", "catchmentsp");
        assert!(!agrees(&elsewhere, PREDICTED, 500), "another path");
    }

    #[test]
    fn next_links_are_followed_on_the_services_own_origin_only() {
        let fabric = "https://api.water.usgs.gov/fabric/pygeoapi";
        assert_eq!(
            followable(PYGEOAPI_NEXT, fabric).as_deref(),
            Ok(PYGEOAPI_NEXT)
        );
        assert!(followable("HTTPS://API.water.usgs.gov/x?cursor=1", fabric).is_ok());
        for foreign in [
            "https://example.com/fabric/pygeoapi/collections/x/items?cursor=1",
            "http://api.water.usgs.gov/fabric/pygeoapi/collections/x/items?cursor=1",
            "https://api.water.usgs.gov:8443/x?cursor=1",
            "/fabric/pygeoapi/collections/x/items?cursor=1",
        ] {
            let e = followable(foreign, fabric).unwrap_err();
            assert!(matches!(e, Error::Service(_)), "{foreign}: {e}");
        }
    }
}
