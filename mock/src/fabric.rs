//! The mock fabric service (pygeoapi): `GET` and `POST`
//! `/fabric/pygeoapi/collections/{collection}/items`, with the envelope of
//! `flowline_items_comid_13293454.json` (numberMatched, numberReturned,
//! links with `next`, timeStamp).
//!
//! Query: `bbox`, `filter` (CQL2 text `<property> <op> <value>`), `limit`
//! (default 10, clamped to the server's maximum), `offset`, `properties`,
//! `skipGeometry`, `sortby` (`prop`, `+prop`, `-prop`; stable), property
//! equality (`comid=13293454`, as pygeoapi allows), `cursor` (on a cursor
//! server only); `f`, `bbox-crs` and `filter-lang` are ignored. Any other
//! parameter is a 400. A POST body is
//! a CQL2-JSON `in` filter on an integer property (the router checks its
//! content type). Only the collection names of the served profile exist.
//!
//! Without `sortby` the stored order is kept, or, when the server is
//! unordered, the matches come in a new order at every request, as from a
//! database scan without `ORDER BY`. The sorted matches of a `sortby` query
//! are kept for its next pages ([`Selections`]). A server that cannot sort
//! answers any `sortby` with a 400, as pygeoapi does for such providers.
//!
//! How pages are cut is the server's [`Paging`]: by `offset` (pygeoapi), by
//! an opaque `cursor` in the `next` link (offset ignored, no
//! `numberMatched`), or with hints missing or wrong: no `next` links, a
//! `numberMatched` too low, or `next` links that lead back to the first
//! page forever (with or without feature ids).

use super::data::{wire_json, Data, Item};
use super::date::civil_from_days;
use super::feature::integer;
use super::wire::{Reply, Request};
use geo::{Intersects, Point, Rect};
use hydroplot::collection::Collection;
use hydroplot::config::Names;
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

/// The content type of CQL2-JSON bodies.
pub(super) const CQL_JSON: &str = "application/query-cql-json";

/// The sorted matches of recent `sortby` queries (indexes into their
/// layer), keyed by everything in the query but `offset` and `limit`, so the
/// pages of one query are cut from one selection, as a database serves them
/// from its index, instead of each page filtering and sorting the layer
/// again. Only sorted answers are kept: an unordered one is new each time.
#[derive(Default)]
pub(super) struct Selections(Mutex<HashMap<String, Arc<Selection>>>);

/// The matches of one query in order (indexes into their layer) and, when
/// the query reshapes its features (`properties`, `skipGeometry`), their
/// texts, each made when a page first needs it: a remembered query's pages
/// cost the mock no serializing again (a real service spends that on its
/// own processors, not on the benchmark client's).
pub(super) struct Selection {
    order: Vec<usize>,
    texts: Vec<OnceLock<String>>,
}

impl Selection {
    fn new(order: Vec<usize>, query: &Query) -> Selection {
        let reshaped = query.properties.is_some() || query.skip_geometry;
        let texts = match reshaped {
            true => order.iter().map(|_| OnceLock::new()).collect(),
            false => Vec::new(),
        };
        Selection { order, texts }
    }
}

impl Selections {
    /// Queries remembered at most; the oldest are forgotten all at once.
    const CAPACITY: usize = 32;

    fn get_or_insert(&self, key: String, select: impl FnOnce() -> Selection) -> Arc<Selection> {
        if let Some(hit) = self.0.lock().expect("selections lock").get(&key) {
            return hit.clone();
        }
        let selection = Arc::new(select());
        let mut map = self.0.lock().expect("selections lock");
        if map.len() >= Self::CAPACITY {
            map.clear();
        }
        map.insert(key, selection.clone());
        selection
    }
}

/// How a server cuts the pages of an items query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paging {
    /// pygeoapi: `offset` is the first feature of the page, each `next`
    /// link carries the offset of the next page.
    Offset,
    /// Keyset paging: `offset` is ignored, each `next` link carries an
    /// opaque `cursor` (the only way to the next page), and pages never
    /// state `numberMatched`.
    Cursor,
    /// Broken: `offset` is ignored and every `next` link leads to the same
    /// first page again, forever.
    Endless,
    /// [`Paging::Endless`] with features that carry no `id` (a provider
    /// without an id field): only the repeated link shows the circle.
    EndlessWithoutIds,
    /// By `offset`, but no page has a `next` link (a provider or proxy
    /// that drops them); with `numberMatched` off, a client sees no hint
    /// at all and must go on while pages come back full.
    Unlinked,
    /// By `offset` with `next` links, but `numberMatched` is half the
    /// true count (an estimate, a capped total): the `next` links tell the
    /// truth.
    Undercounted,
}

/// How the server answers items requests.
pub(super) struct Serving<'a> {
    /// The naming profile: the other profile's collection ids are 404.
    pub names: Names,
    /// The largest `limit` honoured.
    pub max_limit: usize,
    /// `Some(seed)`: answer a query without `sortby` in the order this seed gives.
    pub shuffle: Option<u64>,
    /// State `numberMatched` in each page.
    pub number_matched: bool,
    /// The server's remembered selections.
    pub selections: &'a Selections,
    /// How pages are cut.
    pub paging: Paging,
    /// Whether `sortby` is accepted (else it is a 400).
    pub sortable: bool,
}

/// pygeoapi's default `limit`.
const DEFAULT_LIMIT: usize = 10;

/// Query parameters that are not property filters.
const RESERVED: &[&str] = &[
    "bbox",
    "filter",
    "filter-lang",
    "limit",
    "offset",
    "properties",
    "skipGeometry",
    "sortby",
    "f",
    "bbox-crs",
    "cursor",
];

/// Scrambles a position into a cursor token, so clients cannot take it
/// for an offset.
const CURSOR_KEY: u64 = 0x5DEE_CE66_D1CE_4E5B;

/// The collection behind a service collection id in the `names` profile.
fn collection_named(name: &str, names: Names) -> Option<(Collection, &'static str)> {
    Some(match name {
        _ if Collection::FlowlineNetwork.service_name(names) == Some(name) => (
            Collection::FlowlineNetwork,
            "NHDPlusV2 NHD Flowline Network",
        ),
        "catchmentsp" => (Collection::Catchment, "NHDPlusV2 Catchmentsp Features"),
        "nhdwaterbody" => (Collection::Waterbody, "NHDPlusV2 NHD Waterbodies"),
        "nhdarea" => (Collection::Area, "NHDPlusV2 NHD Area"),
        "nhdflowline_nonnetwork" => (
            Collection::FlowlineNonNetwork,
            "NHDPlusV2 NHD Flowline Non-Network",
        ),
        _ => return None,
    })
}

/// A comparison of one property with a value.
struct Comparison {
    property: String,
    op: &'static str,
    value: Value,
}

impl Comparison {
    fn matches(&self, props: &Map<String, Value>) -> bool {
        let Some(actual) = props.get(&self.property) else {
            return false;
        };
        let ordering = match (actual.as_f64(), number_of(&self.value)) {
            (Some(a), Some(b)) => a.partial_cmp(&b),
            _ => match (actual.as_str(), self.value.as_str()) {
                (Some(a), Some(b)) => Some(a.cmp(b)),
                _ => None,
            },
        };
        let Some(o) = ordering else { return false };
        match self.op {
            ">" => o == Ordering::Greater,
            ">=" => o != Ordering::Less,
            "<" => o == Ordering::Less,
            "<=" => o != Ordering::Greater,
            "=" => o == Ordering::Equal,
            _ => o != Ordering::Equal, // "<>"
        }
    }
}

fn number_of(v: &Value) -> Option<f64> {
    v.as_f64().or_else(|| v.as_str()?.trim().parse().ok())
}

/// The parsed request.
struct Query {
    bbox: Option<[f64; 4]>,
    comparisons: Vec<Comparison>,
    ids: Option<(String, HashSet<i64>)>,
    limit: usize,
    offset: usize,
    properties: Option<Vec<String>>,
    skip_geometry: bool,
    sortby: Option<(String, bool)>,
}

/// Answers one items request on `collection` (the service collection id).
pub(super) fn items(
    name: &str,
    request: &Request,
    data: &Data,
    base_url: &str,
    serving: &Serving,
) -> Reply {
    let Some((collection, title)) = collection_named(name, serving.names) else {
        return Reply::ogc_error(404, "NotFound", format!("Collection {name:?} not found"));
    };
    let items = data.layer(collection);
    let known: HashSet<&str> = items
        .first()
        .map(|i| i.feature.properties.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let query = match parse_query(request, &known, serving.max_limit) {
        Ok(q) => q,
        Err(why) => return Reply::ogc_error(400, "InvalidParameterValue", why),
    };
    if query.sortby.is_some() && !serving.sortable {
        return Reply::ogc_error(
            400,
            "InvalidParameterValue",
            format!("the provider of collection {name:?} does not support sorting"),
        );
    }
    let start = match (serving.paging, request.param("cursor")) {
        (Paging::Cursor, Some(token)) => match cursor_position(token) {
            Some(position) => position,
            None => return Reply::ogc_error(400, "InvalidParameterValue", "invalid cursor"),
        },
        (_, Some(_)) => {
            return Reply::ogc_error(
                400,
                "InvalidParameterValue",
                "unknown query parameter \"cursor\"",
            )
        }
        (Paging::Offset | Paging::Unlinked | Paging::Undercounted, None) => query.offset,
        (Paging::Cursor | Paging::Endless | Paging::EndlessWithoutIds, None) => 0,
    };
    let select = || -> Vec<usize> {
        let mut matched: Vec<usize> = (0..items.len())
            .filter(|&i| selects(&query, &items[i]))
            .collect();
        if let Some((property, descending)) = &query.sortby {
            matched.sort_by(|&a, &b| {
                let o = compare_values(
                    items[a].feature.properties.get(property),
                    items[b].feature.properties.get(property),
                );
                if *descending {
                    o.reverse()
                } else {
                    o
                }
            });
        }
        matched
    };
    let selection = match (&query.sortby, serving.shuffle) {
        (Some(_), _) => serving
            .selections
            .get_or_insert(selection_key(name, request), || {
                Selection::new(select(), &query)
            }),
        (None, Some(seed)) => {
            let mut matched = select();
            shuffle(&mut matched, seed);
            Arc::new(Selection::new(matched, &query))
        }
        (None, None) => Arc::new(Selection::new(select(), &query)),
    };
    let matched = selection.order.len();
    let anonymous = serving.paging == Paging::EndlessWithoutIds;
    let page: Vec<Cow<str>> = (start..matched.min(start.saturating_add(query.limit)))
        .map(|at| feature_text(&items[selection.order[at]], &query, selection.texts.get(at)))
        .map(|text| match anonymous {
            true => Cow::Owned(without_id(&text)),
            false => text,
        })
        .collect();
    let self_url = format!("{base_url}{}", request.path);
    let pairs: Vec<(&str, &str)> = request
        .query
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let self_pairs = with_param(&pairs, "f", "json");
    let mut links = vec![json!({
        "type": "application/geo+json", "rel": "self", "title": "This document as GeoJSON",
        "href": with_query(&self_url, &self_pairs),
    })];
    let end = start + query.limit;
    let (offset, cursor) = (end.to_string(), cursor_token(end));
    let next_pairs = match serving.paging {
        _ if end >= matched => None,
        Paging::Offset | Paging::Undercounted => Some(with_param(&self_pairs, "offset", &offset)),
        Paging::Cursor => {
            let pairs: Vec<_> = self_pairs
                .iter()
                .copied()
                .filter(|&(k, _)| k != "offset")
                .collect();
            Some(with_param(&pairs, "cursor", &cursor))
        }
        Paging::Endless | Paging::EndlessWithoutIds => Some(self_pairs.clone()),
        Paging::Unlinked => None,
    };
    if let Some(next_pairs) = next_pairs {
        links.push(json!({
            "type": "application/geo+json", "rel": "next", "title": "items (next)",
            "href": with_query(&self_url, &next_pairs),
        }));
    }
    links.push(json!({
        "type": "application/json", "title": title, "rel": "collection",
        "href": format!("{base_url}/fabric/pygeoapi/collections/{name}"),
    }));
    let stated = match serving.paging {
        Paging::Cursor => None,
        Paging::Undercounted => Some(matched / 2),
        _ => serving.number_matched.then_some(matched),
    };
    Reply::json_bytes(
        200,
        "application/geo+json",
        page_body(&page, stated, &Value::Array(links)),
    )
}

/// A feature's text without its `id` member.
fn without_id(text: &str) -> String {
    let mut feature: Value = serde_json::from_str(text).expect("the mock's own feature text");
    if let Some(members) = feature.as_object_mut() {
        members.remove("id");
    }
    feature.to_string()
}

/// The opaque token of the cursor at `position`.
fn cursor_token(position: usize) -> String {
    format!("{:016x}", position as u64 ^ CURSOR_KEY)
}

/// The position of a cursor token, `None` when it is not one.
fn cursor_position(token: &str) -> Option<usize> {
    let scrambled = u64::from_str_radix(token, 16)
        .ok()
        .filter(|_| token.len() == 16)?;
    usize::try_from(scrambled ^ CURSOR_KEY).ok()
}

/// A feature's JSON text: the one serialized at load, or, when
/// `properties` or `skipGeometry` change the feature, the one in `made`
/// (made now if it is not yet).
fn feature_text<'a>(
    item: &'a Item,
    query: &Query,
    made: Option<&'a OnceLock<String>>,
) -> Cow<'a, str> {
    if query.properties.is_none() && !query.skip_geometry {
        return Cow::Borrowed(&item.json);
    }
    let make = || {
        let keep = query.properties.as_deref();
        wire_json(&item.feature, keep, query.skip_geometry).to_string()
    };
    match made {
        Some(text) => Cow::Borrowed(text.get_or_init(make)),
        None => Cow::Owned(make()),
    }
}

/// The FeatureCollection around already serialized features, with its keys
/// in the order serde_json writes an object (sorted), as pygeoapi's
/// envelope: features, links, numberMatched, numberReturned, timeStamp, type.
fn page_body(features: &[Cow<str>], matched: Option<usize>, links: &Value) -> Vec<u8> {
    let matched = matched.map_or(String::new(), |m| format!(r#""numberMatched":{m},"#));
    let envelope = format!(
        r#"],"links":{links},{matched}"numberReturned":{},"timeStamp":{},"type":"FeatureCollection"}}"#,
        features.len(),
        Value::from(timestamp())
    );
    let size = features.iter().map(|f| f.len() + 1).sum::<usize>() + envelope.len() + 16;
    let mut out = String::with_capacity(size);
    out.push_str(r#"{"features":["#);
    for (i, feature) in features.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(feature);
    }
    out.push_str(&envelope);
    out.into_bytes()
}

/// `base` with the query `pairs`, each name and value percent-encoded but
/// for RFC 3986's unreserved characters and `,` (so a bbox reads
/// `x,y,x,y`), as the links of pygeoapi's pages read.
fn with_query(base: &str, pairs: &[(&str, &str)]) -> String {
    let mut url = base.to_string();
    for (i, (name, value)) in pairs.iter().enumerate() {
        url.push(if i == 0 { '?' } else { '&' });
        percent_encode(name, &mut url);
        url.push('=');
        percent_encode(value, &mut url);
    }
    url
}

/// Appends `text` to `out`, percent-encoded as [`with_query`] says.
fn percent_encode(text: &str, out: &mut String) {
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b',' => {
                out.push(char::from(b))
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
}

/// The query pairs with `name` set to `value` (replacing or appending).
fn with_param<'a>(
    pairs: &[(&'a str, &'a str)],
    name: &'a str,
    value: &'a str,
) -> Vec<(&'a str, &'a str)> {
    let mut out: Vec<(&str, &str)> = pairs
        .iter()
        .map(|&(k, v)| (k, if k == name { value } else { v }))
        .collect();
    if !pairs.iter().any(|(k, _)| *k == name) {
        out.push((name, value));
    }
    out
}

fn parse_query(
    request: &Request,
    known: &HashSet<&str>,
    max_limit: usize,
) -> Result<Query, String> {
    if let Some((k, _)) = request.query.iter().find(|(k, _)| {
        !RESERVED.contains(&k.as_str()) && !known.contains(k.to_ascii_lowercase().as_str())
    }) {
        return Err(format!("unknown query parameter {k:?}"));
    }
    let property = |p: &str| -> Result<String, String> {
        let p = p.trim().to_ascii_lowercase();
        if known.contains(p.as_str()) {
            Ok(p)
        } else {
            Err(format!("unknown property {p:?}"))
        }
    };
    let int = |name: &str, default: usize| -> Result<usize, String> {
        request.param(name).map_or(Ok(default), |v| {
            v.trim()
                .parse()
                .map_err(|_| format!("{name} must be a whole number, got {v:?}"))
        })
    };
    let limit = int("limit", DEFAULT_LIMIT)?;
    if limit == 0 {
        return Err("limit must be at least 1".into());
    }
    let bbox = match request.param("bbox") {
        None => None,
        Some(v) => {
            let n: Vec<f64> = v
                .split(',')
                .map(|s| s.trim().parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|_| format!("bad bbox {v:?}"))?;
            match n.as_slice() {
                [a, b, c, d] if a <= c && b <= d => Some([*a, *b, *c, *d]),
                _ => return Err(format!("bbox must be xmin,ymin,xmax,ymax, got {v:?}")),
            }
        }
    };
    let mut comparisons = Vec::new();
    if let Some(filter) = request.param("filter") {
        comparisons.push(parse_comparison(filter, &property)?);
    }
    for (k, v) in &request.query {
        if !RESERVED.contains(&k.as_str()) && known.contains(k.to_ascii_lowercase().as_str()) {
            comparisons.push(Comparison {
                property: k.to_ascii_lowercase(),
                op: "=",
                value: Value::String(v.clone()),
            });
        }
    }
    let ids = if request.method == "POST" {
        Some(parse_in(&request.body, &property)?)
    } else {
        None
    };
    let properties = request
        .param("properties")
        .map(|v| {
            v.split(',')
                .filter(|s| !s.is_empty())
                .map(&property)
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let sortby = request
        .param("sortby")
        .map(|v| {
            let (desc, name) = match v.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, v.strip_prefix('+').unwrap_or(v)),
            };
            property(name).map(|p| (p, desc))
        })
        .transpose()?;
    Ok(Query {
        bbox,
        comparisons,
        ids,
        limit: limit.min(max_limit),
        offset: int("offset", 0)?,
        properties,
        skip_geometry: request
            .param("skipGeometry")
            .is_some_and(|v| v.eq_ignore_ascii_case("true")),
        sortby,
    })
}

/// `streamorde > 1`, `streamorde >= 2`, `gnis_name = 'Yahara River'`.
fn parse_comparison(
    filter: &str,
    property: &dyn Fn(&str) -> Result<String, String>,
) -> Result<Comparison, String> {
    let (at, op) = ["<>", ">=", "<=", ">", "<", "="]
        .iter()
        .filter_map(|op| filter.find(op).map(|i| (i, *op)))
        .min_by_key(|(i, op)| (*i, std::cmp::Reverse(op.len())))
        .ok_or_else(|| {
            format!("unsupported CQL2 filter {filter:?}: expected <property> <op> <value>")
        })?;
    let raw = filter[at + op.len()..].trim();
    let value = match raw.parse::<f64>() {
        Ok(n) => json!(n),
        Err(_) if raw.len() >= 2 && raw.starts_with('\'') && raw.ends_with('\'') => {
            json!(raw[1..raw.len() - 1])
        }
        Err(_) => {
            return Err(format!(
                "unsupported CQL2 filter value {raw:?} in {filter:?}"
            ))
        }
    };
    Ok(Comparison {
        property: property(&filter[..at])?,
        op,
        value,
    })
}

/// `{"op":"in","args":[{"property":"comid"},[1,2,3]]}`.
fn parse_in(
    body: &[u8],
    property: &dyn Fn(&str) -> Result<String, String>,
) -> Result<(String, HashSet<i64>), String> {
    let doc: Value =
        serde_json::from_slice(body).map_err(|e| format!("the request body is not JSON: {e}"))?;
    if doc.get("op").and_then(Value::as_str) != Some("in") {
        return Err("only the CQL2-JSON \"in\" operator is supported".into());
    }
    let args = doc
        .get("args")
        .and_then(Value::as_array)
        .filter(|a| a.len() == 2)
        .ok_or("\"in\" needs two args")?;
    let name = args[0]
        .get("property")
        .and_then(Value::as_str)
        .ok_or("the first arg must be {\"property\": ...}")?;
    let ids = args[1]
        .as_array()
        .ok_or("the second arg must be an array")?
        .iter()
        .map(|v| integer(v).ok_or_else(|| format!("{v} is not an integer id")))
        .collect::<Result<_, _>>()?;
    Ok((property(name)?, ids))
}

fn selects(query: &Query, item: &Item) -> bool {
    let props = &item.feature.properties;
    if let Some((property, ids)) = &query.ids {
        if !props
            .get(property)
            .and_then(integer)
            .is_some_and(|id| ids.contains(&id))
        {
            return false;
        }
    }
    if !query.comparisons.iter().all(|c| c.matches(props)) {
        return false;
    }
    let Some(b) = query.bbox else { return true };
    let (Some(ib), Some(geometry)) = (item.bbox, item.feature.geometry.as_ref()) else {
        return false;
    };
    if ib[0] > b[2] || ib[2] < b[0] || ib[1] > b[3] || ib[3] < b[1] {
        return false;
    }
    // A geometry inside the box meets it: no exact test (most of a basin's
    // features, for every page of a basin-wide query).
    if b[0] <= ib[0] && ib[2] <= b[2] && b[1] <= ib[1] && ib[3] <= b[3] {
        return true;
    }
    if b[0] == b[2] && b[1] == b[3] {
        geometry.intersects(&Point::new(b[0], b[1]))
    } else {
        geometry.intersects(&Rect::new((b[0], b[1]), (b[2], b[3])))
    }
}

/// What identifies a query's selection: the collection, the body and every
/// query pair but `offset`, `limit` and `cursor`, in order.
fn selection_key(name: &str, request: &Request) -> String {
    let mut key = format!("{name}\n{}\n", String::from_utf8_lossy(&request.body));
    for (k, v) in &request.query {
        if !matches!(k.as_str(), "offset" | "limit" | "cursor") {
            key.push_str(&format!("{k}={v}&"));
        }
    }
    key
}

/// Puts `items` in the order of a pseudo-random permutation drawn from
/// `seed` (Fisher-Yates over a SplitMix64 sequence).
fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut state = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..items.len()).rev() {
        items.swap(i, (next() % (i as u64 + 1)) as usize);
    }
}

fn compare_values(a: Option<&Value>, b: Option<&Value>) -> Ordering {
    match (a, b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) => x
            .as_f64()
            .partial_cmp(&y.as_f64())
            .unwrap_or(Ordering::Equal),
        (Some(Value::String(x)), Some(Value::String(y))) => x.cmp(y),
        (None | Some(Value::Null), Some(_)) => Ordering::Greater,
        (Some(_), None | Some(Value::Null)) => Ordering::Less,
        _ => Ordering::Equal,
    }
}

/// Now as pygeoapi writes it: `2026-05-27T16:24:06.485736Z`.
fn timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let (days, secs) = ((now.as_secs() / 86_400) as i64, now.as_secs() % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        now.subsec_micros()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_parse_with_two_character_operators_first() {
        let known = |p: &str| Ok(p.trim().to_string());
        let c = parse_comparison("streamorde >= 2", &known).unwrap();
        assert_eq!(
            (c.property.as_str(), c.op, c.value.as_f64()),
            ("streamorde", ">=", Some(2.0))
        );
        let c = parse_comparison("streamorde > 1", &known).unwrap();
        assert_eq!(c.op, ">");
        let mut p = Map::new();
        p.insert("streamorde".into(), json!(2.0));
        assert!(c.matches(&p));
        p.insert("streamorde".into(), json!(1.0));
        assert!(!c.matches(&p));
        assert!(parse_comparison("streamorde", &known).is_err());
    }

    /// The body of the answer to a flowline items request with this query.
    fn get(query: &str) -> Vec<u8> {
        get_from(query, &Selections::default())
    }

    /// The same, remembering sorted selections in `selections`.
    fn get_from(query: &str, selections: &Selections) -> Vec<u8> {
        let reply = answer(query, selections);
        assert_eq!(reply.status, 200);
        reply.body
    }

    /// The reply to a flowline items request with this query.
    fn answer(query: &str, selections: &Selections) -> Reply {
        let request = Request {
            method: "GET".into(),
            path: "/fabric/pygeoapi/collections/nhdflowline_network/items".into(),
            raw_query: query.into(),
            query: query
                .split('&')
                .map(|p| p.split_once('=').unwrap())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            headers: Vec::new(),
            body: Vec::new(),
        };
        let data = Data::shared().unwrap();
        let serving = Serving {
            names: Names::Usgs,
            max_limit: 10_000,
            shuffle: None,
            number_matched: true,
            selections,
            paging: Paging::Offset,
            sortable: true,
        };
        items("nhdflowline_network", &request, &data, "http://m", &serving)
    }

    /// The comids of a page, in order.
    fn comids(body: &[u8]) -> Vec<i64> {
        let page: Value = serde_json::from_slice(body).unwrap();
        page["features"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["properties"]["comid"].as_i64().unwrap())
            .collect()
    }

    #[test]
    fn the_pages_of_a_sorted_query_are_cut_from_one_selection() {
        let selections = Selections::default();
        let all = comids(&get("limit=10000&sortby=-comid"));
        assert!(all.len() > 10 && all.windows(2).all(|w| w[0] > w[1]));
        let mut paged = Vec::new();
        for offset in (0..all.len()).step_by(7) {
            paged.extend(comids(&get_from(
                &format!("sortby=-comid&limit=7&offset={offset}"),
                &selections,
            )));
        }
        assert!(
            paged == all,
            "the pages, put together, are the whole answer"
        );
        assert_eq!(
            selections.0.lock().unwrap().len(),
            1,
            "one query, one selection"
        );
    }

    #[test]
    fn a_remembered_query_serializes_its_reshaped_features_once() {
        let selections = Selections::default();
        let query = "sortby=comid&limit=5&offset=3&properties=comid,hydroseq";
        let first = get_from(query, &selections);
        let made = |selections: &Selections| -> usize {
            let map = selections.0.lock().unwrap();
            let selection = map.values().next().unwrap();
            selection.texts.iter().filter(|t| t.get().is_some()).count()
        };
        assert_eq!(made(&selections), 5, "the page's five features, no others");
        let again = get_from(query, &selections);
        let features =
            |body: &[u8]| serde_json::from_slice::<Value>(body).unwrap()["features"].clone();
        assert_eq!(features(&again), features(&first));
        assert_eq!(made(&selections), 5);
        let page: Value = serde_json::from_slice(&first).unwrap();
        let properties = page["features"][0]["properties"].as_object().unwrap();
        assert_eq!(properties.len(), 2, "{properties:?}");
    }

    #[test]
    fn pages_are_assembled_from_the_features_serialized_at_load() {
        let body = get("limit=3&offset=2");
        let data = Data::shared().unwrap();
        let features: Vec<String> = data.layer(Collection::FlowlineNetwork)[2..5]
            .iter()
            .map(|item| wire_json(&item.feature, None, false).to_string())
            .collect();
        let start = format!(r#"{{"features":[{}],"links":["#, features.join(","));
        assert!(body.starts_with(start.as_bytes()));
        let page: Value = serde_json::from_slice(&body).unwrap();
        let ids: Vec<i64> = (0..3)
            .map(|i| page["features"][i]["id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids, [13297160, 13293970, 13293750]);
        assert_eq!(page["features"][0]["properties"]["streamorde"], json!(4.0));
        assert_eq!(page["type"], "FeatureCollection");
        assert_eq!(
            (
                page["numberMatched"].as_u64(),
                page["numberReturned"].as_u64()
            ),
            (Some(1013), Some(3))
        );
        assert_eq!(
            page["links"][1]["href"],
            "http://m/fabric/pygeoapi/collections/nhdflowline_network/items?limit=3&offset=5&f=json"
        );
        assert_eq!(page["timeStamp"].as_str().map(str::len), Some(27));
    }

    #[test]
    fn properties_and_skip_geometry_reshape_the_features() {
        let body = get("properties=comid,streamorde&skipGeometry=true&limit=2");
        let page: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            page["features"],
            json!([
                {"type": "Feature", "id": 13296606, "geometry": null,
                 "properties": {"comid": 13296606, "streamorde": 4.0}},
                {"type": "Feature", "id": 13297170, "geometry": null,
                 "properties": {"comid": 13297170, "streamorde": 4.0}},
            ])
        );
    }

    #[test]
    fn an_unknown_property_name_is_a_400_as_pygeoapi_answers() {
        let reply = answer("properties=comid,nosuch&limit=2", &Selections::default());
        assert_eq!(reply.status, 400);
        let body = String::from_utf8_lossy(&reply.body);
        assert!(body.contains("nosuch"), "{body}");
    }

    #[test]
    fn links_percent_encode_all_but_unreserved_characters_and_commas() {
        let pairs = [
            ("filter", "gnis_name = 'Yahara River'"),
            ("bbox", "-89.5,43.0,-89.2,43.2"),
            ("sortby", "-comid"),
            ("x~y", "caf\u{e9}/&?"),
        ];
        assert_eq!(
            with_query("http://m/items", &pairs),
            "http://m/items?filter=gnis_name%20%3D%20%27Yahara%20River%27\
             &bbox=-89.5,43.0,-89.2,43.2&sortby=-comid&x~y=caf%C3%A9%2F%26%3F"
        );
    }

    #[test]
    fn timestamps_look_like_pygeoapi() {
        let t = timestamp();
        assert_eq!(t.len(), "2026-05-27T16:24:06.485736Z".len());
        assert!(t.starts_with("20") && t.ends_with('Z'));
    }
}
