//! Library-wide functions: version, last error, status names.

use std::ffi::{c_char, c_int};

/// The library version, `"MAJOR.MINOR.PATCH"`. Static; never free it.
#[no_mangle]
pub extern "C" fn hydroplot_version() -> *const c_char {
    static VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    VERSION.as_ptr().cast()
}

/// The message of the last failure on the calling thread; never NULL (empty
/// when none). Owned by the library, valid until the next failure on this
/// thread; copy it to keep it.
#[no_mangle]
pub extern "C" fn hydroplot_last_error() -> *const c_char {
    super::last_error_ptr()
}

/// The HTTP status of the last failed request on the calling thread, 0 when
/// the last failure had none.
#[no_mangle]
pub extern "C" fn hydroplot_last_http_status() -> i32 {
    super::last_http_status()
}

/// The static name of a status, e.g. `"HYDROPLOT_ERR_HTTP"`; `"unknown status"`
/// for a number no status has. Never NULL, never free it.
#[no_mangle]
pub extern "C" fn hydroplot_status_str(status: c_int) -> *const c_char {
    super::status::name_of_code(status).as_ptr()
}
