//! Tests that change what the whole process shares, in a binary of their own
//! so the other integration tests (`tests/it/`) never see it: the proxy and
//! trust variables of the environment, and a thread exiting while it calls
//! the library (a library that panicked there would abort the process).
//!
//! The environment is one for all threads: each test that sets variables
//! holds [`environment`] for as long as it does.

use std::sync::{Mutex, MutexGuard};

#[path = "../support/private_ca.rs"]
mod private_ca;
#[path = "../support/scratch.rs"]
mod scratch;

mod proxy;
mod thread_exit;
mod tls_env;

/// The right to change the process environment, held by one test at a time
/// (a failed holder does not keep the others out).
fn environment() -> MutexGuard<'static, ()> {
    static ENVIRONMENT: Mutex<()> = Mutex::new(());
    ENVIRONMENT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
