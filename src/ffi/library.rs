//! Library-wide functions: version, last error, status names.

use std::ffi::{c_char, c_int};

/// The library's version, `"MAJOR.MINOR.PATCH"` (compare it with
/// `HYDROPLOT_VERSION`, the version of the header you compiled against).
///
/// \return The version; never NULL.
///
/// \par Errors
/// None.
///
/// \par Ownership
/// A static string: never free it; valid for the life of the process.
///
/// \par Thread safety
/// Any thread, at any time.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_version() -> *const c_char {
    static VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    VERSION.as_ptr().cast()
}

/// The message of the last failure on the calling thread.
///
/// \return The message; never NULL (empty when this thread has had no failure).
///
/// \par Errors
/// None. Getters that answer NULL or an out-of-range index with 0, NULL or
/// false do not change it.
///
/// \par Ownership
/// Owned by the library and valid until the next failure on this thread; copy
/// it to keep it. Never free it.
///
/// \par Thread safety
/// Any thread; each thread has its own last error.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_last_error() -> *const c_char {
    super::last_error_ptr()
}

/// The HTTP status behind the last failure on the calling thread (e.g. 500 for
/// a point outside the trace service's domain, 404 for an unknown feature).
///
/// \return The HTTP status; 0 when the last failure had none (a NULL argument,
/// an invalid value, a network error) or there was no failure.
///
/// \par Errors
/// None.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// Any thread; each thread has its own last failure.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_last_http_status() -> i32 {
    super::last_http_status()
}

/// The name of a status, e.g. `"HYDROPLOT_ERR_HTTP"`.
///
/// \param status A status number. Any `int` is safe: a number no status has
///        gives `"unknown status"`.
///
/// \return The name, or `"unknown status"`; never NULL.
///
/// \par Errors
/// None.
///
/// \par Ownership
/// A static string: never free it; valid for the life of the process.
///
/// \par Thread safety
/// Any thread, at any time.
///
/// \since 0.1 (declared with an `enum hydroplot_status` parameter until it
/// took an `int`; the ABI is the same)
#[no_mangle]
pub extern "C" fn hydroplot_status_str(status: c_int) -> *const c_char {
    super::status::name_of_code(status).as_ptr()
}
