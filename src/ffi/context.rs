//! `hydroplot_context`: services, network settings, caches and callbacks.

use super::hydroplot_status;
use super::{
    arg_mut, arg_ref, arg_str, boundary, boundary_or, check_out, take_handle, write_out, Opaque,
};
use crate::config::Config;
use crate::context::{Context, LogLevel, Observer};
use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;

/// Settings for every call: service URLs, timeouts, retries, concurrency,
/// caches and callbacks. Create with `hydroplot_context_new`, free once with
/// `hydroplot_context_free`. A configured context is read-only during calls
/// and may be shared by many threads; do not set options while another
/// thread uses it.
pub struct hydroplot_context {
    _private: [u8; 0],
}

/// The Rust side of a context handle: the core context and the callbacks it reports to.
pub(crate) struct FfiContext {
    pub(crate) core: Context,
    callbacks: Arc<Callbacks>,
}

impl Opaque for hydroplot_context {
    type Rust = FfiContext;
}

/// Receives a log line: `level` 1 error, 2 warning, 3 info, 4 debug;
/// `message` is valid only during the call.
pub type hydroplot_log_fn =
    Option<unsafe extern "C" fn(user: *mut c_void, level: i32, message: *const c_char)>;

/// Receives progress of a stage (`"basin"`, `"flowline"`, `"tiles"`, ...);
/// `total` is 0 when unknown; `stage` is valid only during the call.
pub type hydroplot_progress_fn =
    Option<unsafe extern "C" fn(user: *mut c_void, stage: *const c_char, done: u64, total: u64)>;

#[derive(Clone, Copy)]
struct Callbacks {
    log: hydroplot_log_fn,
    log_user: *mut c_void,
    progress: hydroplot_progress_fn,
    progress_user: *mut c_void,
}

// The callbacks are only ever invoked on the thread that made the call
// (see `Observer`), and `user` is passed back untouched.
unsafe impl Send for Callbacks {}
unsafe impl Sync for Callbacks {}

impl Observer for Callbacks {
    fn log(&self, level: LogLevel, message: &str) {
        if let Some(f) = self.log {
            let m = CString::new(message.replace('\0', " ")).unwrap_or_default();
            unsafe { f(self.log_user, level as i32, m.as_ptr()) };
        }
    }

    fn progress(&self, stage: &str, done: u64, total: u64) {
        if let Some(f) = self.progress {
            let s = CString::new(stage.replace('\0', " ")).unwrap_or_default();
            unsafe { f(self.progress_user, s.as_ptr(), done, total) };
        }
    }
}

impl FfiContext {
    fn new(config: Config, callbacks: Callbacks) -> crate::Result<FfiContext> {
        let callbacks = Arc::new(callbacks);
        let observer: Arc<dyn Observer> = callbacks.clone();
        let core = Context::new(config)?.with_observer(Some(observer));
        Ok(FfiContext { core, callbacks })
    }

    /// Rebuilds the core context after a change of settings.
    fn rebuild(&mut self, config: Config) -> crate::Result<()> {
        *self = FfiContext::new(config, *self.callbacks)?;
        Ok(())
    }

    /// Changes the callbacks alone: the HTTP client (its connections, rate
    /// limit slot and `Retry-After` holds) stays, and nothing is read again
    /// from the environment, so this cannot fail.
    fn set_callbacks(&mut self, callbacks: Callbacks) {
        self.callbacks = Arc::new(callbacks);
        let observer: Arc<dyn Observer> = self.callbacks.clone();
        self.core.observe(Some(observer));
    }
}

/// Creates a context with the defaults (the public USGS services; User-Agent
/// `hydroplot/<version>`), then the `HYDROPLOT_<KEY>` environment overrides
/// (the keys of `hydroplot_context_set_option`, upper case).
///
/// \param out Receives the new context on success; not written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `out` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: an environment variable holds an invalid
///   value or is not UTF-8, or the CA bundle named by `SSL_CERT_FILE`,
///   `REQUESTS_CA_BUNDLE` or `CURL_CA_BUNDLE` holds no PEM certificate; the
///   message names the variable.
///
/// \par Ownership
/// On success the caller owns `*out`; free it once with
/// `hydroplot_context_free`.
///
/// \par Thread safety
/// Any thread.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_context_new(out: *mut *mut hydroplot_context) -> hydroplot_status {
    boundary(|| {
        check_out(out, "out")?;
        let callbacks = Callbacks {
            log: None,
            log_user: std::ptr::null_mut(),
            progress: None,
            progress_user: std::ptr::null_mut(),
        };
        let ctx = FfiContext::new(Config::from_env()?, callbacks)?;
        unsafe { write_out(out, hydroplot_context::into_handle(ctx), "out") }
    })
}

/// Sets one option of a context. The keys (the API documentation has the
/// defaults and ranges): `index_url`, `process_url`, `fabric_url`, `names`,
/// `tile_url`, `tile_cache_dir`, `tile_cache` (`on`/`off`), `index_dir`,
/// `index` (`on`/`off`), `timeout_s`,
/// `connect_timeout_s`, `lock_timeout_s`, `retries`, `concurrency`, `threads`,
/// `user_agent`, `page_size`, `rate_limit_per_s`, `max_features`,
/// `ca_bundle`, `proxy`, `offline` (`on`/`off`). docs/network.md says what a
/// user behind an agency network sets.
///
/// `threads` (1 to 256, default the cores this process may use;
/// `HYDROPLOT_THREADS`) bounds the threads of a call's CPU work: reading a
/// local GeoPackage in shares, dissolving basins. `concurrency` bounds its
/// requests in flight. No output depends on either: GeoJSON, GeoPackages and
/// PNGs are the same bytes whatever their values and the machine's cores.
///
/// `lock_timeout_s` (default 5, 0 to 86400; `HYDROPLOT_LOCK_TIMEOUT_S`) is
/// how long a call waits for a GeoPackage another program holds locked
/// (SQLite's lock on the file: QGIS saving edits, `hydroplot index`) before
/// it fails with `HYDROPLOT_ERR_GPKG` naming the lock and this option; 0
/// fails at once. `hydroplot_context_cancel` ends the wait at once
/// (`HYDROPLOT_ERR_CANCELLED`).
///
/// `index_dir` is where `hydroplot_gpkg_index` keeps the index files of
/// local GeoPackages, and where a plot of `hydro_data` looks for one (after
/// `FILE.gpkg.hydroplot-index` beside the file); by default
/// `$XDG_CACHE_HOME/hydroplot/index`, else `$HOME/.cache/hydroplot/index`.
/// The GeoPackages themselves are never written. With `index` on (the
/// default), the first plot of a `hydro_data` file without a current index
/// stores its network there for the next plots (about the cost of reading
/// it), and the first plot of a basin large enough to use basin parts
/// (4,096 reaches or more) makes the parts inside it and adds them to the
/// index (progress stage `"basin_parts"`), so a small basin never waits
/// for a whole build (`hydroplot_gpkg_index` makes every part at once); a
/// directory that cannot be written is one warning in the log, never a
/// failed plot.
///
/// `ca_bundle` names a PEM file of root certificates trusted besides the
/// bundled Mozilla roots and the operating system's store (an agency's
/// TLS-inspecting root, for one). Unset, every bundle the environment
/// variables `SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE` name
/// serves (`REQUESTS_CA_BUNDLE` or `CURL_CA_BUNDLE` set alone replaces the
/// other roots, as in requests and curl). No option turns certificate verification off; a refused
/// certificate is `HYDROPLOT_ERR_NETWORK` at once (no retry), naming the host,
/// the reason and the remedy.
///
/// `proxy` is `http://[user:password@]host:port` (or `https://`), or `none`
/// to ignore the environment; unset, the first set of `HTTPS_PROXY`,
/// `ALL_PROXY`, `HTTP_PROXY` serves (a SOCKS or unparsable one is
/// `HYDROPLOT_ERR_INVALID_ARGUMENT`). `NO_PROXY` applies either way, read as
/// curl reads it. Credentials never appear in messages. Offline, neither the
/// CA bundles nor the proxy are read.
///
/// `offline` on: no request is ever sent. The plot-data cache and local
/// GeoPackages serve, tiles come from the tile cache whatever their age (a
/// missing tile is blank, with one warning), and anything else fails at once
/// with `HYDROPLOT_ERR_NETWORK` naming offline mode and the request.
///
/// `user_agent` replaces the User-Agent, `hydroplot/<version>` by default. Tile
/// providers (OpenStreetMap's usage policy, for one) ask heavy users for a way to
/// reach them: add a contact, e.g. `"hydroplot/0.1.0 (+mailto:you@example.org)"`.
///
/// \param ctx   The context.
/// \param key   The option's name.
/// \param value The new value, as text (`"2.5"`, `"off"`, a URL, ...).
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the context is
/// unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `ctx`, `key` or `value` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: an unknown key, an invalid value (out of
///   range, not a number, an empty or non-printable user agent, a `ca_bundle`
///   that is no file or holds no PEM certificate, a proxy that is not an
///   `http(s)://` URL, ...), or a string that is not UTF-8; the message names
///   the key (never a proxy's credentials).
///
/// \par Ownership
/// `key` and `value` are copied; the caller keeps them.
///
/// \par Thread safety
/// Not while another thread uses `ctx`: set options before sharing it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_context_set_option(
    ctx: *mut hydroplot_context,
    key: *const c_char,
    value: *const c_char,
) -> hydroplot_status {
    boundary(|| {
        let ctx = unsafe { arg_mut(ctx, "ctx") }?;
        let key = unsafe { arg_str(key, "key") }?;
        let value = unsafe { arg_str(value, "value") }?;
        let mut config = ctx.core.config.clone();
        config.set(key, value)?;
        Ok(ctx.rebuild(config)?)
    })
}

/// Sets, or with `fn` NULL removes, the log callback of a context. It is
/// called on the thread that made the call, with every retry and warning
/// (the stages of a call go to the progress callback). `fn` must return
/// normally: no C++ exception or `longjmp` may leave it (nothing can unwind
/// through the library), and it must not change or free `ctx`.
///
/// \param ctx  The context.
/// \param fn   The callback, or NULL to remove it.
/// \param user Passed back to `fn` untouched; may be NULL.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `ctx` is NULL.
///
/// \par Ownership
/// The library keeps `fn` and `user` (never frees `user`) until the callback
/// is replaced or `ctx` is freed; `user` must stay valid that long. The message
/// passed to `fn` is valid only during the call.
///
/// \par Thread safety
/// Not while another thread uses `ctx`. `fn` is called on the thread of the
/// hydroplot call that logs, so several threads sharing `ctx` may call it at
/// once.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_context_set_log_callback(
    ctx: *mut hydroplot_context,
    r#fn: hydroplot_log_fn,
    user: *mut c_void,
) -> hydroplot_status {
    boundary(|| {
        let ctx = unsafe { arg_mut(ctx, "ctx") }?;
        ctx.set_callbacks(Callbacks {
            log: r#fn,
            log_user: user,
            ..*ctx.callbacks
        });
        Ok(())
    })
}

/// Sets, or with `fn` NULL removes, the progress callback of a context, called
/// on the thread that made the call. `fn` must return normally: no C++
/// exception or `longjmp` may leave it, and it must not change or free
/// `ctx`.
///
/// \param ctx  The context.
/// \param fn   The callback, or NULL to remove it.
/// \param user Passed back to `fn` untouched; may be NULL.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `ctx` is NULL.
///
/// \par Ownership
/// The library keeps `fn` and `user` (never frees `user`) until the callback
/// is replaced or `ctx` is freed; `user` must stay valid that long. The stage
/// name passed to `fn` is valid only during the call.
///
/// \par Thread safety
/// Not while another thread uses `ctx`. `fn` is called on the thread of the
/// hydroplot call that reports, so several threads sharing `ctx` may call it
/// at once.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_context_set_progress_callback(
    ctx: *mut hydroplot_context,
    r#fn: hydroplot_progress_fn,
    user: *mut c_void,
) -> hydroplot_status {
    boundary(|| {
        let ctx = unsafe { arg_mut(ctx, "ctx") }?;
        ctx.set_callbacks(Callbacks {
            progress: r#fn,
            progress_user: user,
            ..*ctx.callbacks
        });
        Ok(())
    })
}

/// Asks every call running with `ctx` to stop: each ends soon (a wait on
/// the network, even on a silent server, within a few hundredths of a
/// second; a million-flowline local plot within about a quarter of a second) with
/// `HYDROPLOT_ERR_CANCELLED`, and the outputs it was writing are not left,
/// whole or in part (an output it had finished stays). Calls that start
/// after it run normally, so a shared context serves on at once.
///
/// What a GUI's Cancel button, an interrupt handler (R's, Python's) or a
/// watchdog calls. A cancelled request is not retried; the plot-data cache
/// keeps only entries written whole.
///
/// \param ctx The context, or NULL (a no-op).
///
/// \par Errors
/// None.
///
/// \par Thread safety
/// Any thread, at any time while `ctx` is alive and no thread changes it
/// (`hydroplot_context_set_option`, the callback setters,
/// `hydroplot_context_free`), including from a log or progress callback
/// and from a signal handler (it is one atomic add).
///
/// A request left on the wire by a cancel keeps its connection (and a
/// thread) until the server answers or `timeout_s` passes; a wait for the
/// plot-data cache's file lock (another process writing it, up to 30 s) is
/// not cut short.
///
/// \since 0.3
#[no_mangle]
pub extern "C" fn hydroplot_context_cancel(ctx: *const hydroplot_context) {
    boundary_or((), || {
        if let Ok(ctx) = unsafe { arg_ref(ctx, "ctx") } {
            ctx.core.cancel();
        }
    })
}

/// Frees a context.
///
/// \param ctx The context, or NULL (a no-op).
///
/// \par Errors
/// None.
///
/// \par Ownership
/// `ctx` is invalid afterwards; results made with it (plot data, traces,
/// maps) stay valid. Never free a context twice.
///
/// \par Thread safety
/// Not while any call that uses `ctx` is running.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_context_free(ctx: *mut hydroplot_context) {
    boundary_or((), || drop(unsafe { take_handle(ctx) }))
}
