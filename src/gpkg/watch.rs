//! What a call's stop does to a SQLite connection: a cancel interrupts its
//! statements (the progress handler), and a wait for another program's
//! lock on the file (SQLite's busy handler) lasts at most the call's lock
//! timeout ([`Stop::lock_timeout`], the `lock_timeout_s` option), a cancel
//! ending it at once.
//!
//! The busy handler is a C callback whose argument is the [`LockWait`] the
//! progress handler's closure owns: the two are installed together, the
//! busy handler first, so the state outlives every call of the handler
//! that points to it (rusqlite drops the closure when the connection
//! closes or the next watch replaces it, when no statement runs).

use crate::cancel::Stop;
use rusqlite::Connection;
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::time::{Duration, Instant};

/// How many SQLite virtual machine steps pass between two looks at a
/// call's stop: a few microseconds of work, so a cancel ends a scan of a
/// national file at once and the look costs nothing measurable.
const STEPS_PER_LOOK: c_int = 10_000;

/// How long one wait for a lock sleeps before SQLite tries the lock again
/// (and the stop is looked at).
const LOCK_POLL: Duration = Duration::from_millis(10);

/// The state of a connection's waits for a lock: the call's stop and when
/// the current wait began. Used only by the thread running the statement.
struct LockWait {
    stop: Stop,
    began: Cell<Option<Instant>>,
}

impl LockWait {
    /// SQLite's question after its `count`-th failed try of one lock:
    /// wait and try again? No once the lock timeout has passed since the
    /// first try, or the call was cancelled.
    fn again(&self, count: c_int) -> bool {
        let now = Instant::now();
        if count == 0 || self.began.get().is_none() {
            self.began.set(Some(now));
        }
        let waited = now - self.began.get().unwrap_or(now);
        let left = self.stop.lock_timeout().saturating_sub(waited);
        if left.is_zero() || self.stop.is_requested() {
            return false;
        }
        std::thread::sleep(left.min(LOCK_POLL));
        !self.stop.is_requested()
    }
}

/// SQLite's busy handler: `arg` is the connection's [`LockWait`].
unsafe extern "C" fn on_busy(arg: *mut c_void, count: c_int) -> c_int {
    // SAFETY: `arg` is the LockWait owned by the progress handler installed
    // with this busy handler (see the module doc); SQLite calls it on the
    // thread running a statement, never after the connection closes.
    let wait = unsafe { &*(arg as *const LockWait) };
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| wait.again(count)));
    c_int::from(again.unwrap_or(false))
}

/// Makes `conn`'s statements end once `stop` is cancelled (SQLite's
/// "interrupted", which the core reads as `Error::Cancelled`), and its
/// waits for a lock last at most `stop`'s lock timeout (then SQLite's
/// "database is locked", which the core reads as the lock's error), a
/// cancel ending them at once.
pub(crate) fn watch_connection(conn: &Connection, stop: &Stop) {
    let wait = Box::new(LockWait {
        stop: stop.clone(),
        began: Cell::new(None),
    });
    let arg = std::ptr::from_ref::<LockWait>(&wait)
        .cast_mut()
        .cast::<c_void>();
    // SAFETY: the handle is this open connection's; `arg` stays valid as
    // long as the closure below owns `wait` (see the module doc).
    unsafe {
        rusqlite::ffi::sqlite3_busy_handler(conn.handle(), Some(on_busy), arg);
    }
    conn.progress_handler(STEPS_PER_LOOK, Some(move || wait.stop.is_requested()));
}
