//! `hydroplot_buffer`: bytes (GeoJSON, PNG, HTML) handed to the caller.

use super::{boundary_or, take_handle, Opaque};

/// An owned, immutable byte buffer. Read it with `hydroplot_buffer_data` and
/// `hydroplot_buffer_len`; free it once with `hydroplot_buffer_free`.
/// Thread-safe to read.
pub struct hydroplot_buffer {
    _private: [u8; 0],
}

impl Opaque for hydroplot_buffer {
    type Rust = Vec<u8>;
}

/// The bytes of a buffer. They are not NUL-terminated: use
/// `hydroplot_buffer_len`.
///
/// \param b The buffer, or NULL.
///
/// \return The first byte; NULL when `b` is NULL.
///
/// \par Errors
/// None: a NULL `b` gives NULL and leaves `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Owned by `b`, valid until `b` is freed; never free the bytes themselves.
///
/// \par Thread safety
/// Any thread: a buffer is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_buffer_data(b: *const hydroplot_buffer) -> *const u8 {
    boundary_or(std::ptr::null(), || {
        match unsafe { super::arg_ref(b, "b") } {
            Ok(v) => v.as_ptr(),
            Err(_) => std::ptr::null(),
        }
    })
}

/// The length of a buffer in bytes.
///
/// \param b The buffer, or NULL.
///
/// \return The length; 0 when `b` is NULL.
///
/// \par Errors
/// None: a NULL `b` gives 0 and leaves `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// Any thread: a buffer is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_buffer_len(b: *const hydroplot_buffer) -> usize {
    boundary_or(0, || unsafe { super::arg_ref(b, "b") }.map_or(0, Vec::len))
}

/// Frees a buffer.
///
/// \param b The buffer, or NULL (a no-op).
///
/// \par Errors
/// None.
///
/// \par Ownership
/// `b` and the bytes read from it are invalid afterwards. Never free a buffer
/// twice.
///
/// \par Thread safety
/// Not while another thread reads `b`.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_buffer_free(b: *mut hydroplot_buffer) {
    boundary_or((), || drop(unsafe { take_handle(b) }))
}

/// Hands `bytes` to the caller through the out-parameter `out`.
pub(crate) fn give(bytes: Vec<u8>, out: *mut *mut hydroplot_buffer) -> super::FfiResult {
    super::check_out(out, "out")?;
    unsafe { super::write_out(out, hydroplot_buffer::into_handle(bytes), "out") }
}
