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
//! by the features the first page holds (pygeoapi silently clamps
//! `limit`). Otherwise pages are requested one after the other: by offset
//! while the service's `next` link agrees, by the `next` link itself when
//! it does not (a server paging by cursor).
//!
//! Paging never stops while the service shows there is more: a `next`
//! link is followed even past `numberMatched` (a count may be an estimate
//! or capped), a count not yet reached asks for the next offset, and a
//! service that gives neither links nor a count is asked for the next
//! offset while its pages come back full (as many features as the `limit`
//! asked), as the reference clients do: there, a short page ends it. An
//! empty page always does.
//! Features are deduplicated by id across pages; a `next` link to a page
//! already requested, or a page that adds no new feature, stops the query
//! with an error naming its URL (`next` links that go round in a circle),
//! and fewer features than `numberMatched` is an error rather than a
//! silent truncation.
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
use crate::http::{with_query, Service};
use crate::parallel::parallel_map;
use crate::table::decode::decode_page;
use crate::table::Table;
use crate::url::redact_url;
use crate::{Error, Result};
use std::cmp::Ordering;
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
    /// Features on this page, counted (a `numberReturned` of 0 beside
    /// features is not believed: offsets step by what a page holds).
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
        returned: page.table.len() as u64,
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
    /// Warnings about the answer (the service refused `sortby`, its
    /// `numberMatched` was too low, ...).
    warnings: Vec<String>,
    /// `numberMatched` of the first page.
    matched: Option<u64>,
    /// Whether a page had a `next` link: the service pages by links, so a
    /// page without one is its last, full or not.
    linked: bool,
    /// The URLs requested, so that a `next` link back to one of them stops
    /// the query at once, even when the features carry no id to repeat.
    asked: HashSet<String>,
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

/// The last page fetched, which tells whether paging goes on.
struct Tail {
    /// Its URL (its `limit` tells whether the page came back full).
    url: String,
    /// Its `next` link.
    next: Option<String>,
    /// Its features.
    returned: u64,
    /// The offset of the page after it.
    offset: u64,
}

/// Why paging goes on past a page.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Onward {
    /// The page has a `next` link (followed even past `numberMatched`: a
    /// count can be an estimate; a link is the service's word).
    Link,
    /// `numberMatched` is not reached yet.
    Count,
    /// The service gives neither links nor a count, and the page was full:
    /// the next offset is asked for, as the reference clients do.
    Full,
}

/// Why paging goes on after `tail`, or `None` when the query is complete:
/// an empty page, a last link, `numberMatched` reached, or, with no hint
/// at all, a page shorter than the `limit` asked.
fn onward(tail: &Tail, g: &Gathered) -> Option<Onward> {
    if tail.returned == 0 {
        return None;
    }
    match (&tail.next, g.matched) {
        (Some(_), _) => Some(Onward::Link),
        (None, Some(matched)) => ((g.out.rows as u64) < matched).then_some(Onward::Count),
        (None, None) => {
            let full = limit_asked(&tail.url).is_some_and(|limit| tail.returned >= limit);
            (full && !g.linked).then_some(Onward::Full)
        }
    }
}

/// The `limit` a page's URL asked for (none on a first page that leaves
/// it to the service).
fn limit_asked(url: &str) -> Option<u64> {
    path_and_query(url)
        .1
        .split('&')
        .find_map(|pair| pair.strip_prefix("limit=")?.parse().ok())
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
            asked: HashSet::from([first_url.clone()]),
            first_url,
            sorted: unsorted.is_none(),
            warnings: unsorted.into_iter().collect(),
            matched: page.number_matched,
            linked: page.next.is_some(),
            out: Unique::default(),
            pages: 1,
        };
        Ok((page, gathered))
    }

    /// Every feature of one query, each id once.
    ///
    /// Fast path: a sorted query whose first page states `numberMatched`
    /// and whose `next` link (if any) is the offset the pages predict gets
    /// its remaining offsets concurrently; a `next` link on the last of
    /// them (a count too low) is followed on. Otherwise pages are fetched
    /// one after the other ([`Pager::follow`]).
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
        let predictable = first
            .next
            .as_deref()
            .is_none_or(|href| agrees(href, &url_for(Some(step), g.sorted), step));
        let tail = Tail {
            url: g.first_url.clone(),
            next: first.next,
            returned: step,
            offset: step,
        };
        add_unique(&mut g.out, first.table);
        if g.out.rows as u64 > max {
            return Err(g.over_limit(max));
        }
        match g.matched {
            Some(matched) if matched > step && step > 0 && g.sorted && predictable => {
                let last = self.fetch_offsets(url_for, &mut g, step, matched)?;
                if last.next.is_some() {
                    self.follow(url_for, &mut g, last)?;
                }
            }
            Some(_) if onward(&tail, &g).is_none() => ctx.progress(self.stage, 1, 1),
            _ => self.follow(url_for, &mut g, tail)?,
        }
        self.check_count(&mut g)?;
        Ok(Items {
            table: concat(&g.out.tables)?,
            warnings: g.warnings,
        })
    }

    /// Fetches the pages at offsets `step`, `2 step`, ... below `matched`
    /// concurrently and returns the last of them.
    fn fetch_offsets(
        &self,
        url_for: &UrlFor,
        g: &mut Gathered,
        step: u64,
        matched: u64,
    ) -> Result<Tail> {
        let ctx = self.ctx;
        let urls: Vec<(u64, String)> = (1..)
            .map(|k| k * step)
            .take_while(|&o| o < matched)
            .map(|o| (o, url_for(Some(o), true)))
            .collect();
        let total = urls.len() as u64 + 1;
        ctx.progress(self.stage, 1, total);
        let mut done = 1;
        let pages = parallel_map(
            ctx.config.concurrency,
            &urls,
            |(_, url)| self.request(url),
            |_, _| {
                done += 1;
                ctx.progress(self.stage, done, total);
            },
        );
        g.pages = total;
        let mut last = None;
        for ((offset, url), page) in urls.into_iter().zip(pages) {
            let page = page?;
            g.asked.insert(url.clone());
            last = Some(Tail {
                url,
                next: page.next,
                returned: page.returned,
                offset: offset + page.returned,
            });
            add_unique(&mut g.out, page.table);
        }
        Ok(last.expect("matched > step: at least one offset"))
    }

    /// Fetches the pages after `tail` one at a time, while [`onward`] says
    /// there are more: the offset the pages predict while the service's
    /// `next` link agrees with it, the `next` link itself when it does not
    /// (a cursor). So that a service whose links go round in a circle
    /// cannot keep the client requesting, a link to a page already
    /// requested, or a page that adds no new feature, is an error naming
    /// its URL. A page asked for only because the one before was full that
    /// brings nothing new shows a service that ignores `offset` (a cursor
    /// server whose features fill exactly one page): the query ends there,
    /// with a warning.
    fn follow(&self, url_for: &UrlFor, g: &mut Gathered, mut tail: Tail) -> Result<()> {
        let (ctx, max) = (self.ctx, self.ctx.config.max_features);
        ctx.progress(self.stage, g.pages, 0);
        while let Some(why) = onward(&tail, g) {
            let url = self.next_url(url_for, g, &tail)?;
            let page = self.request(&url)?;
            g.pages += 1;
            ctx.progress(self.stage, g.pages, 0);
            g.linked |= page.next.is_some();
            let returned = page.returned;
            if add_unique(&mut g.out, page.table) == 0 && returned > 0 {
                return match why {
                    Onward::Full => {
                        g.warnings.push(ctx.warn(format!(
                            "the fabric service's page {} repeats only features of earlier pages; its pages have no next link or numberMatched, so the service seems not to page by offset and the {} features received may not be all",
                            redact_url(&url),
                            g.out.rows
                        )));
                        Ok(())
                    }
                    Onward::Link | Onward::Count => Err(Error::Service(format!(
                        "the fabric service's page {} repeats only features of earlier pages: its next links do not advance, so paging stopped after {} requests",
                        redact_url(&url),
                        g.pages
                    ))),
                };
            }
            if g.out.rows as u64 > max {
                return Err(g.over_limit(max));
            }
            tail = Tail {
                url,
                next: page.next,
                returned,
                offset: tail.offset + returned,
            };
        }
        Ok(())
    }

    /// The URL of the page after `tail`: the offset the pages predict,
    /// unless the service's `next` link says otherwise. A URL this query
    /// has already requested is an error.
    fn next_url(&self, url_for: &UrlFor, g: &mut Gathered, tail: &Tail) -> Result<String> {
        let predicted = url_for(Some(tail.offset), g.sorted);
        let url = match &tail.next {
            Some(href) if !agrees(href, &predicted, tail.offset) => {
                followable(href, &self.ctx.config.fabric_url)?
            }
            _ => predicted,
        };
        if !g.asked.insert(url.clone()) {
            return Err(Error::Service(format!(
                "the fabric service's next link repeats {}, a page already requested: its next links go round in a circle, so paging stopped after {} requests",
                redact_url(&url),
                g.pages
            )));
        }
        Ok(url)
    }

    /// Fewer distinct features than `numberMatched` is an error (the result
    /// would be incomplete); more is a warning: the count was too low and
    /// the service's `next` links were followed past it.
    fn check_count(&self, g: &mut Gathered) -> Result<()> {
        let (Some(matched), got) = (g.matched, g.out.rows as u64) else {
            return Ok(());
        };
        let said = format!(
            "the fabric service said {} matches {matched} features but its pages held {got} distinct ones",
            redact_url(&g.first_url)
        );
        match got.cmp(&matched) {
            Ordering::Less => Err(Error::Service(format!(
                "{said}; the result would be incomplete"
            ))),
            Ordering::Greater => {
                g.warnings
                    .push(self.ctx.warn(format!("{said}; all of them were kept")));
                Ok(())
            }
            Ordering::Equal => Ok(()),
        }
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

    /// A query that has gathered `rows` features, with `matched` and
    /// `linked` as given.
    fn gathered(rows: usize, matched: Option<u64>, linked: bool) -> Gathered {
        Gathered {
            first_url: String::new(),
            sorted: true,
            warnings: Vec::new(),
            matched,
            linked,
            asked: HashSet::new(),
            out: Unique {
                rows,
                ..Unique::default()
            },
            pages: 1,
        }
    }

    /// The last page: `returned` features at `url`, with a `next` link or not.
    fn tail(url: &str, returned: u64, next: bool) -> Tail {
        Tail {
            url: url.to_string(),
            next: next.then(|| format!("{url}&cursor=1")),
            returned,
            offset: returned,
        }
    }

    #[test]
    fn paging_goes_on_while_a_link_a_count_or_a_full_page_says_so() {
        // The last page at `url` with `returned` features and a next link
        // or not, after `rows` features, numberMatched, earlier links.
        let at = |url, returned, next, rows, matched, linked| {
            onward(&tail(url, returned, next), &gathered(rows, matched, linked))
        };
        let page = "https://h/items?bbox=1,2,3,4&limit=100&offset=0";
        // A next link goes on past numberMatched; an empty page never does.
        assert_eq!(
            at(page, 100, true, 100, Some(100), true),
            Some(Onward::Link)
        );
        assert_eq!(at(page, 0, true, 0, None, true), None);
        // Without a link, numberMatched decides, full page or not.
        assert_eq!(
            at(page, 100, false, 100, Some(150), false),
            Some(Onward::Count)
        );
        assert_eq!(at(page, 100, false, 100, Some(100), false), None);
        // Without either, a full page asks for the next offset.
        assert_eq!(at(page, 100, false, 100, None, false), Some(Onward::Full));
        assert_eq!(at(page, 99, false, 99, None, false), None);
        // ... unless earlier pages had links (this one is the last), or
        // the page asked for no limit (the catchment lookup's first page).
        assert_eq!(at(page, 100, false, 300, None, true), None);
        let no_limit = "https://h/items?bbox=1,2,1,2&skipGeometry=true";
        assert_eq!(at(no_limit, 10, false, 10, None, false), None);
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
