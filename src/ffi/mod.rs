//! The C ABI: a thin layer over the core, one file per exported object.
//!
//! Only the `extern "C"` functions and the C types they use are public; the
//! helpers below are crate-private.
//!
//! Conventions, implemented once here and used by every `extern "C"` function:
//! - every body runs inside `boundary`, which catches panics (they become
//!   `HYDROPLOT_ERR_INTERNAL`), records the message of a failure in the
//!   thread-local last error, and returns a [`hydroplot_status`];
//! - pointer arguments go through `arg_ref`, `arg_mut`, `arg_str`,
//!   `arg_opt_str` and `arg_slice`, which turn NULL into
//!   `HYDROPLOT_ERR_NULL_ARGUMENT` and invalid UTF-8 into
//!   `HYDROPLOT_ERR_INVALID_ARGUMENT`, naming the argument;
//! - opaque handles are zero-sized structs, each mapped to one Rust type
//!   through `Opaque`; they are boxed on the way out and freed exactly once
//!   by their `*_free`. They carry no `#[repr(C)]`, so that cbindgen declares
//!   them as incomplete types (`typedef struct hydroplot_x hydroplot_x;`).

#![allow(non_camel_case_types)]
// Every pointer is checked (arg_ref and friends) before it is read; the
// functions are safe to call with any pointer the contract allows.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod arrow_stream;
pub mod buffer;
pub mod comid_batch;
pub mod context;
pub mod gpkg_index;
pub mod html;
pub mod library;
pub mod map;
pub mod plot_data;
pub mod plot_request;
pub mod status;
pub mod trace;
pub mod trace_batch;

pub use status::hydroplot_status;

use crate::Error;
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Why an ffi call failed: a NULL argument, or a core error.
#[derive(Debug)]
pub(crate) enum FfiError {
    /// The named pointer argument was NULL.
    Null(&'static str),
    /// A core error.
    Core(Error),
}

impl From<Error> for FfiError {
    fn from(e: Error) -> Self {
        FfiError::Core(e)
    }
}

/// The result of an ffi body.
pub(crate) type FfiResult<T = ()> = Result<T, FfiError>;

struct LastError {
    message: CString,
    http_status: i32,
}

thread_local! {
    static LAST_ERROR: RefCell<LastError> =
        RefCell::new(LastError { message: CString::default(), http_status: 0 });
}

/// Records a failure as this thread's last error and returns its status.
pub(crate) fn record(error: FfiError) -> hydroplot_status {
    let (status, message, http_status) = match error {
        FfiError::Null(name) => (
            hydroplot_status::HYDROPLOT_ERR_NULL_ARGUMENT,
            format!("argument {name} is NULL"),
            0,
        ),
        FfiError::Core(e) => (
            status::of_error(&e),
            e.to_string(),
            i32::from(e.http_status()),
        ),
    };
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // `try_with`: a thread that is exiting (a host's thread-local or
    // pthread-key destructor calling in) has no storage left; the status
    // is still returned. `with` would panic where nothing may unwind.
    let _ = LAST_ERROR.try_with(|l| {
        *l.borrow_mut() = LastError {
            message,
            http_status,
        }
    });
    status
}

/// What [`last_error_ptr`] answers on a thread whose storage is gone.
const EXITING: &std::ffi::CStr =
    c"hydroplot: this thread is exiting, and its last error went with it";

/// Pointer to this thread's last error message; valid until the next failure on this thread.
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR
        .try_with(|l| l.borrow().message.as_ptr())
        .unwrap_or(EXITING.as_ptr())
}

/// HTTP status of this thread's last failure, 0 when none.
pub(crate) fn last_http_status() -> i32 {
    LAST_ERROR.try_with(|l| l.borrow().http_status).unwrap_or(0)
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Runs an ffi body: catches panics, records failures, returns the status.
pub(crate) fn boundary(body: impl FnOnce() -> FfiResult) -> hydroplot_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => hydroplot_status::HYDROPLOT_OK,
        Ok(Err(e)) => record(e),
        Err(payload) => record(FfiError::Core(Error::Internal(format!(
            "internal error (a bug in hydroplot, please report it): {}",
            panic_message(&*payload)
        )))),
    }
}

/// Runs an infallible ffi body (accessors, `*_free`): a panic becomes `fallback`.
pub(crate) fn boundary_or<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        record(FfiError::Core(Error::Internal(format!(
            "internal error (a bug in hydroplot, please report it): {}",
            panic_message(&*payload)
        ))));
        fallback
    })
}

/// A C-visible opaque type standing for one Rust type.
pub(crate) trait Opaque: Sized {
    /// The Rust value behind the handle.
    type Rust;

    /// Moves `value` to the heap and returns the handle that owns it.
    fn into_handle(value: Self::Rust) -> *mut Self {
        Box::into_raw(Box::new(value)).cast()
    }
}

/// Borrows the value behind a handle; NULL is `FfiError::Null(name)`.
///
/// # Safety
/// `p` must be NULL or a live handle from [`Opaque::into_handle`].
pub(crate) unsafe fn arg_ref<'a, C: Opaque>(
    p: *const C,
    name: &'static str,
) -> FfiResult<&'a C::Rust> {
    unsafe { p.cast::<C::Rust>().as_ref() }.ok_or(FfiError::Null(name))
}

/// Mutably borrows the value behind a handle; NULL is `FfiError::Null(name)`.
///
/// # Safety
/// As [`arg_ref`], and no other reference to the value may be alive.
pub(crate) unsafe fn arg_mut<'a, C: Opaque>(
    p: *mut C,
    name: &'static str,
) -> FfiResult<&'a mut C::Rust> {
    unsafe { p.cast::<C::Rust>().as_mut() }.ok_or(FfiError::Null(name))
}

/// Takes back ownership of a handle's value (for `*_free`); NULL gives `None`.
///
/// # Safety
/// `p` must be NULL or a live handle, never used again afterwards.
pub(crate) unsafe fn take_handle<C: Opaque>(p: *mut C) -> Option<Box<C::Rust>> {
    (!p.is_null()).then(|| unsafe { Box::from_raw(p.cast::<C::Rust>()) })
}

/// Borrows a NUL-terminated UTF-8 string argument.
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string alive for `'a`.
pub(crate) unsafe fn arg_str<'a>(p: *const c_char, name: &'static str) -> FfiResult<&'a str> {
    unsafe { arg_opt_str(p, name) }?.ok_or(FfiError::Null(name))
}

/// Like [`arg_str`], but NULL is allowed and gives `None`.
///
/// # Safety
/// As [`arg_str`].
pub(crate) unsafe fn arg_opt_str<'a>(
    p: *const c_char,
    name: &'static str,
) -> FfiResult<Option<&'a str>> {
    if p.is_null() {
        return Ok(None);
    }
    let bytes = unsafe { CStr::from_ptr(p) }.to_bytes();
    std::str::from_utf8(bytes)
        .map(Some)
        .map_err(|_| Error::InvalidArgument(format!("argument {name} is not valid UTF-8")).into())
}

/// Borrows `n` elements at `p`; NULL is allowed only when `n` is 0. A
/// count no memory can hold (over `isize::MAX` bytes: a negative number
/// cast to `size_t`, say) is `Error::InvalidArgument` naming `name`, never
/// a slice of it.
///
/// # Safety
/// `p` must be NULL or point to `n` initialized elements alive for `'a`.
pub(crate) unsafe fn arg_slice<'a, T>(
    p: *const T,
    n: usize,
    name: &'static str,
) -> FfiResult<&'a [T]> {
    let bytes = n.checked_mul(std::mem::size_of::<T>());
    if bytes.is_none_or(|b| b > isize::MAX as usize) {
        return Err(Error::InvalidArgument(format!(
            "{name}: {n} items are more than any memory holds (a negative count?)"
        ))
        .into());
    }
    match (p.is_null(), n) {
        (true, 0) => Ok(&[]),
        (true, _) => Err(FfiError::Null(name)),
        (false, _) => Ok(unsafe { std::slice::from_raw_parts(p, n) }),
    }
}

/// Writes an out-parameter; NULL is `FfiError::Null(name)`. Call it only
/// once the result is ready, so outputs are written only on success.
///
/// # Safety
/// `p` must be NULL or valid for a write of `T`.
pub(crate) unsafe fn write_out<T>(p: *mut T, value: T, name: &'static str) -> FfiResult {
    if p.is_null() {
        return Err(FfiError::Null(name));
    }
    unsafe { p.write(value) };
    Ok(())
}

/// Fails with `FfiError::Null(name)` when `p` is NULL; for checking
/// out-parameters before doing the work.
pub(crate) fn check_out<T>(p: *mut T, name: &'static str) -> FfiResult {
    if p.is_null() {
        Err(FfiError::Null(name))
    } else {
        Ok(())
    }
}
