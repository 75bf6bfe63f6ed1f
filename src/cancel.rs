//! Stopping calls in flight: the [`Canceller`] a context owns, which any
//! thread may use at any time, and the [`Stop`] each call checks at its
//! checkpoints (before and while waiting on each request, at each SQLite
//! step and while waiting for a file's lock, before each output is
//! written). A stop also carries how long the call waits for another
//! program's lock on a file ([`Stop::lock_timeout`]).
//!
//! A cancel reaches the calls running when it is asked for, never a later
//! one: a call's [`Stop`] remembers how many cancels had been asked for when
//! it began, and a later count means stop. So a shared context serves again
//! as soon as the cancelled calls have returned, without a reset that could
//! race with them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a wait (a backoff, a `Retry-After`, a request on the wire)
/// looks for a cancel: the longest a cancelled wait goes on.
pub const POLL: Duration = Duration::from_millis(25);

/// How long a call waits for another program's lock on a file unless told
/// otherwise (the `lock_timeout_s` option's default; SQLite's usual 5 s).
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(5);

/// What a checkpoint returns once a cancel was asked for; the core's
/// `Error::Cancelled` ([`crate::error`]) carries its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

impl Cancelled {
    /// The message every interface shows for a cancelled call.
    pub const MESSAGE: &'static str =
        "cancelled: the call was asked to stop and ended before it finished; \
         no output of it was left partly written";
}

/// Asks the calls begun with its [`Stop`]s to end. Cheap to clone (one
/// shared counter); any thread, including a signal handler's
/// ([`Canceller::cancel`] is one atomic add).
#[derive(Debug, Clone, Default)]
pub struct Canceller {
    asked: Arc<AtomicU64>,
}

impl Canceller {
    /// A canceller no call watches yet.
    pub fn new() -> Canceller {
        Canceller::default()
    }

    /// Every call whose [`Stop`] came from this canceller before now ends
    /// at its next checkpoint with [`Cancelled`]; calls begun later run.
    pub fn cancel(&self) {
        self.asked.fetch_add(1, Ordering::SeqCst);
    }

    /// The stop of a call that begins now.
    pub fn stop_for_call(&self) -> Stop {
        Stop {
            asked: Arc::clone(&self.asked),
            at_start: self.asked.load(Ordering::SeqCst),
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
        }
    }
}

/// One call's view of its canceller: has a cancel been asked for since the
/// call began? Clone it into the threads that do the call's work.
#[derive(Debug, Clone)]
pub struct Stop {
    asked: Arc<AtomicU64>,
    at_start: u64,
    lock_timeout: Duration,
}

impl Stop {
    /// A stop no canceller can reach: for work that runs to its end.
    pub fn never() -> Stop {
        Canceller::new().stop_for_call()
    }

    /// The canceller whose cancels this stop sees.
    pub fn canceller(&self) -> Canceller {
        Canceller {
            asked: Arc::clone(&self.asked),
        }
    }

    /// This stop, its call waiting at most `timeout` for a file's lock.
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Stop {
        self.lock_timeout = timeout;
        self
    }

    /// How long the call waits for another program's lock on a file
    /// before it fails (a cancel ends the wait sooner).
    pub fn lock_timeout(&self) -> Duration {
        self.lock_timeout
    }

    /// True once a cancel was asked for after the call began.
    pub fn is_requested(&self) -> bool {
        self.asked.load(Ordering::Relaxed) != self.at_start
    }

    /// A checkpoint: `Err(Cancelled)` once a cancel was asked for.
    pub fn check(&self) -> Result<(), Cancelled> {
        match self.is_requested() {
            true => Err(Cancelled),
            false => Ok(()),
        }
    }

    /// Sleeps `duration`, or less when a cancel comes first (noticed within
    /// [`POLL`]).
    pub fn sleep(&self, duration: Duration) -> Result<(), Cancelled> {
        let end = Instant::now() + duration;
        loop {
            self.check()?;
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            std::thread::sleep(left.min(POLL));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_reaches_the_calls_begun_before_it_and_no_later_one() {
        let canceller = Canceller::new();
        let running = canceller.stop_for_call();
        let other = running.clone();
        assert_eq!(running.check(), Ok(()));
        canceller.cancel();
        assert_eq!(running.check(), Err(Cancelled));
        assert!(
            other.is_requested(),
            "a clone on another thread sees it too"
        );
        let later = canceller.stop_for_call();
        assert_eq!(later.check(), Ok(()));
        assert_eq!(later.sleep(Duration::ZERO), Ok(()));
        assert_eq!(running.sleep(Duration::from_secs(3600)), Err(Cancelled));
    }

    #[test]
    fn a_stop_of_its_own_is_never_requested() {
        let stop = Stop::never();
        Canceller::new().cancel();
        assert!(!stop.is_requested());
    }
}
