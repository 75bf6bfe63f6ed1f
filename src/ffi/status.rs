//! `hydroplot_status`: the status codes of every fallible call, and the one
//! place where core errors map to them.

use crate::Error;
use std::ffi::{c_int, CStr};

/// The result of every fallible hydroplot call. `HYDROPLOT_OK` is 0; the
/// numbers are grouped and never reused.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum hydroplot_status {
    /// Success.
    HYDROPLOT_OK = 0,
    /// A required pointer argument was NULL.
    HYDROPLOT_ERR_NULL_ARGUMENT = 1,
    /// A bad value: unknown option or layer, bad direction, both or neither of
    /// outlets/bbox, a gpkg path without `.gpkg`, invalid UTF-8, ...
    HYDROPLOT_ERR_INVALID_ARGUMENT = 2,
    /// Unknown CRS or a coordinate that cannot be transformed.
    HYDROPLOT_ERR_CRS = 3,
    /// Connect, DNS, TLS, timeout or dropped connection, after retries.
    HYDROPLOT_ERR_NETWORK = 100,
    /// The service answered a non-success status, after retries.
    HYDROPLOT_ERR_HTTP = 101,
    /// The service or local data has no such feature (404, empty result).
    HYDROPLOT_ERR_NOT_FOUND = 102,
    /// The service answered something that is not the expected document.
    HYDROPLOT_ERR_SERVICE = 103,
    /// Reading or writing a file failed.
    HYDROPLOT_ERR_IO = 200,
    /// A GeoPackage is missing a required layer or column, or is malformed.
    HYDROPLOT_ERR_GPKG = 201,
    /// The output exists and overwrite is off.
    HYDROPLOT_ERR_EXISTS = 202,
    /// The request would exceed `max_features` or another documented limit;
    /// nothing was downloaded past the first page.
    HYDROPLOT_ERR_LIMIT = 300,
    /// Drawing or PNG encoding failed; also a PNG asked of data not plotted.
    HYDROPLOT_ERR_RENDER = 400,
    /// The call was cancelled (`hydroplot_context_cancel`) before it
    /// finished; no output of it was left partly written.
    HYDROPLOT_ERR_CANCELLED = 500,
    /// A bug, including a caught panic.
    HYDROPLOT_ERR_INTERNAL = 999,
}

/// Every status, in numeric order; a new status is added here and in [`name`].
const ALL: [hydroplot_status; 15] = {
    use hydroplot_status::*;
    [
        HYDROPLOT_OK,
        HYDROPLOT_ERR_NULL_ARGUMENT,
        HYDROPLOT_ERR_INVALID_ARGUMENT,
        HYDROPLOT_ERR_CRS,
        HYDROPLOT_ERR_NETWORK,
        HYDROPLOT_ERR_HTTP,
        HYDROPLOT_ERR_NOT_FOUND,
        HYDROPLOT_ERR_SERVICE,
        HYDROPLOT_ERR_IO,
        HYDROPLOT_ERR_GPKG,
        HYDROPLOT_ERR_EXISTS,
        HYDROPLOT_ERR_LIMIT,
        HYDROPLOT_ERR_RENDER,
        HYDROPLOT_ERR_CANCELLED,
        HYDROPLOT_ERR_INTERNAL,
    ]
};

/// The status a core error is reported as.
pub(crate) fn of_error(e: &Error) -> hydroplot_status {
    use hydroplot_status::*;
    match e {
        Error::InvalidArgument(_) => HYDROPLOT_ERR_INVALID_ARGUMENT,
        Error::Crs(_) => HYDROPLOT_ERR_CRS,
        Error::Network(_) => HYDROPLOT_ERR_NETWORK,
        Error::Http { .. } => HYDROPLOT_ERR_HTTP,
        Error::NotFound { .. } => HYDROPLOT_ERR_NOT_FOUND,
        Error::Service(_) => HYDROPLOT_ERR_SERVICE,
        Error::Io(_) => HYDROPLOT_ERR_IO,
        Error::Gpkg(_) => HYDROPLOT_ERR_GPKG,
        Error::Exists(_) => HYDROPLOT_ERR_EXISTS,
        Error::Limit(_) => HYDROPLOT_ERR_LIMIT,
        Error::Render(_) => HYDROPLOT_ERR_RENDER,
        Error::Internal(_) => HYDROPLOT_ERR_INTERNAL,
        Error::Cancelled(_) => HYDROPLOT_ERR_CANCELLED,
    }
}

/// The static name of the status numbered `code` (any integer a C caller
/// may pass); `"unknown status"` for a number no status has.
pub(crate) fn name_of_code(code: c_int) -> &'static CStr {
    ALL.iter()
        .find(|s| **s as c_int == code)
        .map_or(c"unknown status", |s| name(*s))
}

/// The static name of a status (`"HYDROPLOT_ERR_HTTP"`).
fn name(s: hydroplot_status) -> &'static CStr {
    use hydroplot_status::*;
    match s {
        HYDROPLOT_OK => c"HYDROPLOT_OK",
        HYDROPLOT_ERR_NULL_ARGUMENT => c"HYDROPLOT_ERR_NULL_ARGUMENT",
        HYDROPLOT_ERR_INVALID_ARGUMENT => c"HYDROPLOT_ERR_INVALID_ARGUMENT",
        HYDROPLOT_ERR_CRS => c"HYDROPLOT_ERR_CRS",
        HYDROPLOT_ERR_NETWORK => c"HYDROPLOT_ERR_NETWORK",
        HYDROPLOT_ERR_HTTP => c"HYDROPLOT_ERR_HTTP",
        HYDROPLOT_ERR_NOT_FOUND => c"HYDROPLOT_ERR_NOT_FOUND",
        HYDROPLOT_ERR_SERVICE => c"HYDROPLOT_ERR_SERVICE",
        HYDROPLOT_ERR_IO => c"HYDROPLOT_ERR_IO",
        HYDROPLOT_ERR_GPKG => c"HYDROPLOT_ERR_GPKG",
        HYDROPLOT_ERR_EXISTS => c"HYDROPLOT_ERR_EXISTS",
        HYDROPLOT_ERR_LIMIT => c"HYDROPLOT_ERR_LIMIT",
        HYDROPLOT_ERR_RENDER => c"HYDROPLOT_ERR_RENDER",
        HYDROPLOT_ERR_CANCELLED => c"HYDROPLOT_ERR_CANCELLED",
        HYDROPLOT_ERR_INTERNAL => c"HYDROPLOT_ERR_INTERNAL",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_name_and_other_numbers_are_unknown() {
        for s in ALL {
            assert_eq!(name_of_code(s as c_int), name(s));
        }
        for code in [
            -7,
            -1,
            4,
            99,
            104,
            501,
            998,
            1000,
            12345,
            c_int::MIN,
            c_int::MAX,
        ] {
            assert_eq!(name_of_code(code), c"unknown status");
        }
    }
}
