//! The C API driven from Rust tests: a plot run to its end.

use hydroplot::ffi::context::{hydroplot_context, hydroplot_context_free};
use hydroplot::ffi::hydroplot_status::HYDROPLOT_OK;
use hydroplot::ffi::plot_data::hydroplot_plot_data_free;
use hydroplot::ffi::plot_request::{
    hydroplot_plot, hydroplot_plot_request, hydroplot_plot_request_free,
};

/// Runs `req` on `ctx` (`hydroplot_plot`, asserted to succeed), then frees
/// the plot data, `req` and `ctx`: both pointers dangle afterwards.
pub fn plot_and_free(ctx: *mut hydroplot_context, req: *mut hydroplot_plot_request) {
    let mut pd = std::ptr::null_mut();
    assert_eq!(
        hydroplot_plot(ctx, req, std::ptr::null_mut(), &mut pd),
        HYDROPLOT_OK
    );
    hydroplot_plot_data_free(pd);
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
}
