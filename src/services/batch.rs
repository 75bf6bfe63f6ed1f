//! What batches of requests to the services share: how they slow down when
//! a service says "too many requests" (HTTP 429).

use crate::context::{Context, LogLevel};
use crate::parallel::Throttle;
use crate::Result;

/// The throttle of a batch of requests ([`crate::parallel::adaptive_map`]):
/// a result that is an HTTP 429 (after the client's own retries, which
/// honour `Retry-After`) is re-queued and the requests in flight are
/// halved; each re-queue is a warning naming `what`, the point's index and
/// the new number of requests at once. Borrows `ctx` for the batch.
pub fn throttled<'a, T>(ctx: &'a Context, what: &'a str) -> Throttle<'a, Result<T>> {
    Throttle {
        is_throttled: Box::new(|r: &Result<T>| matches!(r, Err(e) if e.http_status() == 429)),
        on_requeue: Box::new(move |i, window| {
            ctx.log(
                LogLevel::Warning,
                &format!(
                    "{what} of point {i}: rate limited (HTTP 429); queued again, \
                     at most {window} requests at once"
                ),
            )
        }),
    }
}
