//! `struct ArrowArrayStream`: layers and traces handed to C as an Arrow C
//! stream (<https://arrow.apache.org/docs/format/CStreamInterface.html>).
//!
//! The header declares the Arrow C data and stream structs itself, exactly as
//! the specification does and under its `ARROW_C_DATA_INTERFACE` /
//! `ARROW_C_STREAM_INTERFACE` guards (cbindgen.toml), so C code that already
//! includes another Arrow header compiles unchanged. The Rust side is arrow-rs's
//! `FFI_ArrowArrayStream`, which has that layout.

use super::{check_out, write_out, FfiResult};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};

/// The Arrow C stream struct, named as the specification names it.
pub type ArrowArrayStream = FFI_ArrowArrayStream;

/// Checks `out` before the work, so a NULL is reported before any is done.
pub(crate) fn check(out: *mut ArrowArrayStream) -> FfiResult {
    check_out(out, "out")
}

/// Writes a stream of `batch` (one batch) to `out`, overwriting whatever `out`
/// held without releasing it. The stream owns the batch: it outlives the
/// handle it came from, and its `release` frees it.
pub(crate) fn export(batch: RecordBatch, out: *mut ArrowArrayStream) -> FfiResult {
    let schema = batch.schema();
    let reader = RecordBatchIterator::new([Ok(batch)], schema);
    unsafe { write_out(out, FFI_ArrowArrayStream::new(Box::new(reader)), "out") }
}
