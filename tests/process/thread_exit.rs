//! The C ABI called from a thread that is exiting: a host's thread-local or
//! pthread-key destructor frees its handles and reads the last error. The
//! library's own thread storage may be gone by then; the calls still answer
//! (a status, a message that is never NULL) instead of aborting the host.
//! Its own binary: on a library that panics there, the process aborts.

use hydroplot::ffi::context::hydroplot_context_set_option;
use hydroplot::ffi::hydroplot_status;
use hydroplot::ffi::library::{hydroplot_last_error, hydroplot_last_http_status};
use std::cell::RefCell;
use std::ffi::CStr;
use std::ptr::{null, null_mut};
use std::sync::mpsc::{channel, Sender};

/// Calls the library when the thread's storage is destroyed, and sends
/// what it answered.
struct AtExit(Sender<(hydroplot_status, String, i32)>);

impl Drop for AtExit {
    fn drop(&mut self) {
        let status = hydroplot_context_set_option(null_mut(), null(), null());
        let message = unsafe { CStr::from_ptr(hydroplot_last_error()) };
        let answer = (
            status,
            message.to_string_lossy().into_owned(),
            hydroplot_last_http_status(),
        );
        self.0.send(answer).unwrap();
    }
}

thread_local! {
    static AT_EXIT: RefCell<Option<AtExit>> = const { RefCell::new(None) };
}

#[test]
fn a_thread_exiting_still_gets_answers() {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        // Registered first, destroyed last: after the library's own
        // storage, which the failure below creates.
        AT_EXIT.with(|a| *a.borrow_mut() = Some(AtExit(tx)));
        let status = hydroplot_context_set_option(null_mut(), null(), null());
        assert_eq!(status, hydroplot_status::HYDROPLOT_ERR_NULL_ARGUMENT);
    })
    .join()
    .unwrap();
    let (status, message, http_status) = rx.recv().unwrap();
    assert_eq!(status, hydroplot_status::HYDROPLOT_ERR_NULL_ARGUMENT);
    assert!(!message.is_empty(), "a message, never NULL");
    assert_eq!(http_status, 0);
}
