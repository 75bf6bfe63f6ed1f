//! The flowtrace process (spec R5): the raindrop trace from a point, one
//! point at a time or a batch with bounded concurrency.
//!
//! Request: `POST {process_base}/processes/{flowtrace id}/execution`,
//! `Content-Type: application/json`, body
//! `{"inputs":[{"id":"lat",..},{"id":"lon",..},{"id":"raindroptrace",..,"value":"true"},{"id":"direction",..}]}`
//! with every value a string and the point in WGS 84 decimal degrees.

use crate::context::Context;
use crate::crs::{Transformer, DEFAULT_CRS};
use crate::error::{Error, Result};
use crate::http::Service;
use crate::parallel::adaptive_map;
use crate::services::batch::throttled;
use crate::trace::Trace;
use crate::url::redact_url;

/// The directions the process accepts; the first is the default.
pub const DIRECTIONS: [&str; 3] = ["down", "up", "none"];

/// Traces a raindrop from (`x`, `y`) in `crs` (NULL: EPSG:4326, x = longitude).
///
/// `direction` is `"down"` (the default for `None`), `"up"` or `"none"`, in any
/// case. A
/// bad direction or CRS, or a non-finite or out-of-range point, fails before
/// any request. A point outside the service's domain is an `Error::Http`
/// carrying the service's description; an answer that is not a 2-feature
/// trace is an `Error::Service`.
pub fn raindrop_trace(
    ctx: &Context,
    x: f64,
    y: f64,
    crs: Option<&str>,
    direction: Option<&str>,
) -> Result<Trace> {
    let plan = Plan::new(ctx, crs, direction)?;
    trace_point(ctx, &plan, x, y)
}

/// One R5 request for the point (`x`, `y`) and its parsed answer; errors
/// name the point.
fn trace_point(ctx: &Context, plan: &Plan, x: f64, y: f64) -> Result<Trace> {
    plan.body(x, y)
        .and_then(|body| ctx.post(Service::Process, &plan.url, "application/json", &body))
        .and_then(|r| parse_answer(&r.body, &plan.url))
        .map_err(|e| e.context(&at(x, y)))
}

/// Traces every point of `points` (in `crs`, as [`raindrop_trace`]) with at
/// most `concurrency` requests at once. The outer error is a bad direction or
/// CRS (no request made); otherwise each point has its own result, in input
/// order, and a failing point does not fail the others. Progress is reported
/// as stage `"trace"`, done/total, on the calling thread.
///
/// Rate limits: a point whose request still ends in HTTP 429 after the
/// client's retries goes back in the queue (after the server's
/// `Retry-After`, which holds the whole client) and the number of requests
/// in flight is halved, growing back as answers come
/// ([`crate::services::batch::throttled`]).
pub fn raindrop_trace_batch(
    ctx: &Context,
    points: &[(f64, f64)],
    crs: Option<&str>,
    direction: Option<&str>,
) -> Result<Vec<Result<Trace>>> {
    let plan = Plan::new(ctx, crs, direction)?;
    let total = points.len() as u64;
    let mut done = 0;
    ctx.progress("trace", 0, total);
    let results = adaptive_map(
        ctx.config.concurrency,
        points,
        |&(x, y)| trace_point(ctx, &plan, x, y),
        &throttled(ctx, "raindrop trace"),
        |_, _| {
            done += 1;
            ctx.progress("trace", done, total);
        },
    );
    // A cancel ends the whole call, not only the points it reached.
    ctx.check_stop()?;
    Ok(results)
}

/// Parses the process's answer; an unusable one is an error naming the URL.
fn parse_answer(body: &[u8], url: &str) -> Result<Trace> {
    Trace::parse(body)
        .map_err(|e| e.context(&format!("flowtrace process POST {}", redact_url(url))))
}

/// What every point of a call shares: the URL, direction and transformation.
struct Plan {
    url: String,
    direction: &'static str,
    to_wgs84: Transformer,
}

impl Plan {
    fn new(ctx: &Context, crs: Option<&str>, direction: Option<&str>) -> Result<Plan> {
        let direction = parse_direction(direction)?;
        let to_wgs84 = Transformer::new(crs.unwrap_or(DEFAULT_CRS), "EPSG:4326")?;
        let url = format!(
            "{}/processes/{}/execution",
            ctx.config.process_base(),
            ctx.config.names.flowtrace_process()
        );
        Ok(Plan {
            url,
            direction,
            to_wgs84,
        })
    }

    /// The request body for one point, after checking and transforming it.
    fn body(&self, x: f64, y: f64) -> Result<Vec<u8>> {
        if !x.is_finite() || !y.is_finite() {
            return Err(Error::InvalidArgument(format!(
                "The raindrop trace point ({x}, {y}) is not a pair of finite numbers."
            )));
        }
        let (lon, lat) = self.to_wgs84.point(x, y)?;
        if !(-180.0..=180.0).contains(&lon) || !(-90.0..=90.0).contains(&lat) {
            return Err(Error::InvalidArgument(format!(
                "The raindrop trace point ({x}, {y}) in {} is longitude {lon}, latitude {lat}, \
                 outside [-180, 180] x [-90, 90].",
                self.to_wgs84.from_crs()
            )));
        }
        Ok(request_body(lat, lon, self.direction))
    }
}

fn parse_direction(direction: Option<&str>) -> Result<&'static str> {
    let Some(given) = direction else {
        return Ok(DIRECTIONS[0]);
    };
    DIRECTIONS
        .into_iter()
        .find(|d| given.trim().eq_ignore_ascii_case(d))
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
            "The raindrop trace direction \"{given}\" is not one of \"down\", \"up\" or \"none\"."
        ))
        })
}

/// The R5 body: four string inputs in the order lat, lon, raindroptrace, direction.
/// Rust's shortest round-trip formatting never uses an exponent, so the values
/// are plain decimal degrees.
fn request_body(lat: f64, lon: f64, direction: &str) -> Vec<u8> {
    let input = |id: &str, value: String| serde_json::json!({ "id": id, "type": "text/plain", "value": value });
    let doc = serde_json::json!({ "inputs": [
        input("lat", lat.to_string()),
        input("lon", lon.to_string()),
        input("raindroptrace", "true".to_string()),
        input("direction", direction.to_string()),
    ]});
    serde_json::to_vec(&doc).expect("a JSON value always serializes")
}

fn at(x: f64, y: f64) -> String {
    format!("Raindrop trace from ({x}, {y})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_has_the_four_string_inputs_in_order() {
        let body: serde_json::Value =
            serde_json::from_slice(&request_body(42.9561, -89.2158, "up")).unwrap();
        let inputs = body["inputs"].as_array().unwrap();
        let got: Vec<(&str, &str, &str)> = inputs
            .iter()
            .map(|i| {
                (
                    i["id"].as_str().unwrap(),
                    i["type"].as_str().unwrap(),
                    i["value"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("lat", "text/plain", "42.9561"),
                ("lon", "text/plain", "-89.2158"),
                ("raindroptrace", "text/plain", "true"),
                ("direction", "text/plain", "up"),
            ]
        );
        let tiny = String::from_utf8(request_body(1e-7, -1e-7, "down")).unwrap();
        assert!(
            tiny.contains("\"0.0000001\"") && tiny.contains("\"-0.0000001\""),
            "{tiny}"
        );
    }

    #[test]
    fn directions() {
        assert_eq!(parse_direction(None).unwrap(), "down");
        assert_eq!(parse_direction(Some("up")).unwrap(), "up");
        assert_eq!(parse_direction(Some("NONE")).unwrap(), "none");
        assert!(
            matches!(parse_direction(Some("sideways")), Err(Error::InvalidArgument(m)) if m.contains("\"sideways\""))
        );
    }
}
