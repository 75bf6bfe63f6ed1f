//! Ctrl-C (SIGINT) and SIGTERM cancel the command's work: it ends at its
//! next checkpoint with "cancelled", no output partly written and no
//! temporary file left, exit status 130. A second signal ends the process
//! at once, whichever of the two it is (both default actions are back
//! after the first). A signal
//! the program was started with ignored stays ignored: a shell without job
//! control starts background commands with SIGINT ignored, so that Ctrl-C
//! meant for the foreground does not reach them.
//!
//! The one `extern "C"` of the program (a signal handler is one), apart
//! from the library's C ABI; it does one atomic add.

use hydroplot::cancel::Canceller;
use std::sync::OnceLock;

/// The canceller the signals reach: the first one given.
static CANCELLER: OnceLock<Canceller> = OnceLock::new();

/// The signals that cancel.
#[cfg(unix)]
const SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

/// Which of [`SIGNALS`] have the handler (not those started ignored).
#[cfg(unix)]
static HANDLED: [std::sync::atomic::AtomicBool; 2] =
    [const { std::sync::atomic::AtomicBool::new(false) }; 2];

/// From now on SIGINT and SIGTERM cancel the calls of `canceller`, unless
/// the program was started with the signal ignored. The program runs one
/// command: a second canceller given is ignored.
pub fn cancel_on_signal(canceller: &Canceller) {
    if CANCELLER.set(canceller.clone()).is_err() {
        return;
    }
    #[cfg(unix)]
    for (signal, handled) in SIGNALS.iter().copied().zip(&HANDLED) {
        // SAFETY: a zeroed sigaction is a valid empty one; the handler only
        // reads a set OnceLock and adds to an atomic, both signal-safe.
        unsafe {
            let mut now: libc::sigaction = std::mem::zeroed();
            let read = libc::sigaction(signal, std::ptr::null(), &mut now);
            if read != 0 || now.sa_sigaction == libc::SIG_IGN {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESETHAND | libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(signal, &action, std::ptr::null_mut()) == 0 {
                handled.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
    }
}

/// Cancels, and gives both signals back their default action, so that the
/// next one of either ends the process.
#[cfg(unix)]
extern "C" fn on_signal(_: libc::c_int) {
    for (signal, handled) in SIGNALS.iter().copied().zip(&HANDLED) {
        if handled.load(std::sync::atomic::Ordering::SeqCst) {
            // SAFETY: sigaction(2) is async-signal-safe; a zeroed one with
            // SIG_DFL (0) is the default action.
            unsafe {
                let default: libc::sigaction = std::mem::zeroed();
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
    }
    if let Some(canceller) = CANCELLER.get() {
        canceller.cancel();
    }
}
