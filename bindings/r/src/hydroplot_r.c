/* The R glue: converts R values to hydroplot calls and results back to R
 * values (layers and traces read from their Arrow C streams as R vectors and
 * raw WKB, raw PNG bytes, external pointers for contexts and maps).
 * Everything else (argument forms, sf) is R code in R/. Every failure becomes an R error naming the status and carrying
 * hydroplot_last_error(). Every handle a call makes is held in a `held`
 * and freed by release(), which R_ExecWithCleanup runs however the call
 * ends: normally, or by an R error (ours, or one R raises inside the glue,
 * e.g. REAL() of a character vector or an allocation failure). The calls
 * that may take long (plot, trace, trace batch, comid lookup) run on a
 * thread of their own while R's main thread watches for a user interrupt
 * (run_long()). */
/* POSIX threads, signal masks and clock_gettime, also under a strict -std=c99. */
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>

#include <hydroplot.h>

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* An R error from a failed status: "HYDROPLOT_ERR_HTTP (HTTP 500): message".
 * `message` NULL: the calling thread's last failure (hydroplot_last_error()
 * and hydroplot_last_http_status(); `http` is not read). Else the message and
 * HTTP status another thread copied of its own failure (both are
 * thread-local). Copies the message first: Rf_error does not return (the
 * call's handles are then freed by release()). */
static void stop_status(hydroplot_status s, int http, const char *message) {
    char msg[2048];
    if (message == NULL) {
        http = hydroplot_last_http_status();
        message = hydroplot_last_error();
    }
    if (http > 0)
        snprintf(msg, sizeof msg, "%s (HTTP %d): %s", hydroplot_status_str(s), http, message);
    else
        snprintf(msg, sizeof msg, "%s: %s", hydroplot_status_str(s), message);
    Rf_error("%s", msg);
}

static const char *str_or_null(SEXP x) {
    return Rf_isString(x) && XLENGTH(x) > 0 && STRING_ELT(x, 0) != NA_STRING ? Rf_translateCharUTF8(STRING_ELT(x, 0)) : NULL;
}

/* --- the handles of one call ----------------------------------------------- */

/* The handles one call holds. release() frees those still held; a handle
 * given to an R external pointer (contexts, maps) is no longer held. */
typedef struct {
    hydroplot_context *ctx;
    hydroplot_plot_request *req;
    hydroplot_plot_data *pd;
    hydroplot_map *map;
    hydroplot_trace *trace;
    hydroplot_trace_batch *trace_batch;
    hydroplot_comid_batch *comid_batch;
    hydroplot_buffer *buf;
    /* An Arrow stream being read, its schema and its current batch; each is
     * held while its release is set. */
    struct ArrowArrayStream stream;
    struct ArrowSchema schema;
    struct ArrowArray batch;
} held;

/* How many handles calls hold right now: 0 between calls, whatever error
 * ended them (the tests read it through hp_held_handles). */
static int n_held;

/* Counts a handle just made (NULL when its call failed) as held. */
static void *hold(void *handle) {
    if (handle != NULL) n_held++;
    return handle;
}

static void drop_buffer(held *h) {
    if (h->buf == NULL) return;
    hydroplot_buffer_free(h->buf);
    h->buf = NULL;
    n_held--;
}

/* Releases the Arrow structs still held (the batch, the schema, the stream). */
static void drop_arrow(held *h) {
#define RELEASE_ARROW(field)                                                                       \
    if (h->field.release != NULL) {                                                                \
        h->field.release(&h->field);                                                               \
        h->field.release = NULL;                                                                   \
        n_held--;                                                                                  \
    }
    RELEASE_ARROW(batch)
    RELEASE_ARROW(schema)
    RELEASE_ARROW(stream)
#undef RELEASE_ARROW
}

/* Frees every handle still held; the cleanup of R_ExecWithCleanup. */
static void release(void *data) {
    held *h = data;
    drop_buffer(h);
    drop_arrow(h);
#define RELEASE(field, free_fn)                                                                    \
    if (h->field != NULL) {                                                                        \
        free_fn(h->field);                                                                         \
        h->field = NULL;                                                                           \
        n_held--;                                                                                  \
    }
    RELEASE(trace, hydroplot_trace_free)
    RELEASE(trace_batch, hydroplot_trace_batch_free)
    RELEASE(comid_batch, hydroplot_comid_batch_free)
    RELEASE(map, hydroplot_map_free)
    RELEASE(pd, hydroplot_plot_data_free)
    RELEASE(req, hydroplot_plot_request_free)
    RELEASE(ctx, hydroplot_context_free)
#undef RELEASE
}

static SEXP r_held_handles(void) { return Rf_ScalarInteger(n_held); }

/* The held buffer as a raw vector; the buffer is freed. */
static SEXP buffer_to_raw(held *h) {
    size_t n = hydroplot_buffer_len(h->buf);
    SEXP out = PROTECT(Rf_allocVector(RAWSXP, (R_xlen_t)n));
    if (n > 0) memcpy(RAW(out), hydroplot_buffer_data(h->buf), n);
    drop_buffer(h);
    UNPROTECT(1);
    return out;
}

/* The held buffer (UTF-8 text) as a CHARSXP; the buffer is freed. */
static SEXP buffer_to_char(held *h) {
    SEXP chr = Rf_mkCharLenCE((const char *)hydroplot_buffer_data(h->buf), (int)hydroplot_buffer_len(h->buf), CE_UTF8);
    drop_buffer(h);
    return chr;
}

/* --- contexts and maps: external pointers with finalizers ------------------ */

static void context_finalizer(SEXP ptr) {
    hydroplot_context_free(R_ExternalPtrAddr(ptr));
    R_ClearExternalPtr(ptr);
}

static void map_finalizer(SEXP ptr) {
    hydroplot_map_free(R_ExternalPtrAddr(ptr));
    R_ClearExternalPtr(ptr);
}

/* An external pointer that frees `handle` with `finalizer` when collected.
 * The caller stops holding the handle once this returns (until then an R
 * error leaves it held, so release() frees it). */
static SEXP wrap(void *handle, const char *tag, R_CFinalizer_t finalizer) {
    SEXP ptr = PROTECT(R_MakeExternalPtr(NULL, Rf_install(tag), R_NilValue));
    R_RegisterCFinalizerEx(ptr, finalizer, TRUE);
    R_SetExternalPtrAddr(ptr, handle);
    n_held--;
    UNPROTECT(1);
    return ptr;
}

static void *unwrap(SEXP ptr, const char *tag) {
    void *p;
    if (TYPEOF(ptr) != EXTPTRSXP || R_ExternalPtrTag(ptr) != Rf_install(tag))
        Rf_error("expected a %s", tag);
    p = R_ExternalPtrAddr(ptr);
    if (p == NULL) Rf_error("the %s was freed (it does not survive saving and reloading the session)", tag);
    return p;
}

/* Each entry point runs its body through R_ExecWithCleanup, so that
 * release() frees the handles of the call however it ends. */
typedef struct {
    held h;
    SEXP a, b, c, d, e, f; /* the .Call arguments, in order (R_NilValue past the last) */
} call;

static SEXP run(SEXP (*body)(void *), call *c) { return R_ExecWithCleanup(body, c, release, &c->h); }

/* --- long calls: on a worker thread, interruptible -------------------------- */

/* R cannot act on an interrupt (Esc, Ctrl-C) before a .Call returns, and a
 * library call may wait minutes on a slow server. So run_long() runs the call
 * on a thread of its own while R's main thread waits, checking every 50 ms
 * for an interrupt; on one it cancels the call's context, and the call ends
 * soon with HYDROPLOT_ERR_CANCELLED, reported as any failure.
 *
 * The worker runs library code only (the binding sets no callbacks): no R
 * API, no R allocation. Its inputs are made before it starts and live until
 * the join (R_alloc'd memory, CHARs and the .Call arguments too: nothing
 * returns to R meanwhile). The handle it makes goes straight into the call's
 * `held`, which the main thread reads (hold(), release()) only after the
 * join. The last error and HTTP status are thread-local: the worker copies
 * them. */

/* The inputs and output of one long call; each call reads the fields it takes. */
typedef struct {
    const hydroplot_context *ctx;
    const hydroplot_plot_request *req;
    hydroplot_map *onto;
    const double *xy; /* x0, y0, x1, y1, ... */
    size_t n;
    const char *crs, *text; /* text: the direction, or the hydro_data path */
    held *h;                /* receives the handle made */
} long_args;

static hydroplot_status plot_call(void *data) {
    long_args *a = data;
    return hydroplot_plot(a->ctx, a->req, a->onto, &a->h->pd);
}

static hydroplot_status trace_call(void *data) {
    long_args *a = data;
    return hydroplot_raindrop_trace(a->ctx, a->xy[0], a->xy[1], a->crs, a->text, &a->h->trace);
}

static hydroplot_status trace_batch_call(void *data) {
    long_args *a = data;
    return hydroplot_raindrop_trace_batch(a->ctx, a->xy, a->n, a->crs, a->text, &a->h->trace_batch);
}

static hydroplot_status comid_call(void *data) {
    long_args *a = data;
    return hydroplot_comid_lookup(a->ctx, a->xy, a->n, a->crs, a->text, &a->h->comid_batch);
}

static hydroplot_status index_call(void *data) {
    long_args *a = data;
    return hydroplot_gpkg_index(a->ctx, a->text);
}

static hydroplot_status unindex_call(void *data) {
    long_args *a = data;
    return hydroplot_gpkg_unindex(a->ctx, a->text);
}

/* A call in flight: what runs, its outcome, and how the worker says it is done. */
typedef struct {
    hydroplot_status (*fn)(void *);
    void *args;
    hydroplot_status status;
    int http;         /* of a failure, copied on the thread that failed */
    char error[2048]; /* likewise */
    int done;         /* under lock; cond is signalled when it turns 1 */
    pthread_mutex_t lock;
    pthread_cond_t cond;
} long_call;

/* Runs the call on the calling thread and copies its failure. */
static void long_call_exec(long_call *lc) {
    lc->status = lc->fn(lc->args);
    if (lc->status != HYDROPLOT_OK) {
        lc->http = hydroplot_last_http_status();
        snprintf(lc->error, sizeof lc->error, "%s", hydroplot_last_error());
    }
}

static void *long_call_thread(void *data) {
    long_call *lc = data;
    long_call_exec(lc);
    pthread_mutex_lock(&lc->lock);
    lc->done = 1;
    pthread_cond_signal(&lc->cond);
    pthread_mutex_unlock(&lc->lock);
    return NULL;
}

/* Starts the worker: a stack of at least 8 MiB (the main thread's usual
 * size; macOS gives other threads 512 KiB), and asynchronous signals blocked
 * so that the main thread takes them (SIGINT: R's handler only sets a flag,
 * read by R_CheckUserInterrupt) and a SIGPIPE of the worker's own writes is
 * never handed to R's handler, which raises an R error. */
static int long_call_start(pthread_t *thread, long_call *lc) {
    pthread_attr_t attr;
    size_t stack = 0;
    int rc, have_attr = pthread_attr_init(&attr) == 0;
#ifndef _WIN32
    sigset_t block, old;
    sigfillset(&block);
    sigdelset(&block, SIGSEGV);
    sigdelset(&block, SIGBUS);
    sigdelset(&block, SIGFPE);
    sigdelset(&block, SIGILL);
    pthread_sigmask(SIG_BLOCK, &block, &old);
#endif
    if (have_attr && pthread_attr_getstacksize(&attr, &stack) == 0 && stack < ((size_t)8 << 20))
        pthread_attr_setstacksize(&attr, (size_t)8 << 20);
    rc = pthread_create(thread, have_attr ? &attr : NULL, long_call_thread, lc);
#ifndef _WIN32
    pthread_sigmask(SIG_SETMASK, &old, NULL);
#endif
    if (have_attr) pthread_attr_destroy(&attr);
    return rc;
}

static void check_interrupt(void *data) {
    (void)data;
    R_CheckUserInterrupt();
}

/* Runs fn(args), a call with ctx, on a worker thread (on this thread when
 * none can be started), cancelling ctx on a user interrupt; returns once it
 * has ended. Its failure, a cancel included, becomes an R error. */
static void run_long(const hydroplot_context *ctx, hydroplot_status (*fn)(void *), void *args) {
    long_call lc;
    pthread_t thread;
    int sync, interrupted = 0;
    memset(&lc, 0, sizeof lc);
    lc.fn = fn;
    lc.args = args;
    sync = pthread_mutex_init(&lc.lock, NULL) == 0;
    if (sync && pthread_cond_init(&lc.cond, NULL) != 0) {
        pthread_mutex_destroy(&lc.lock);
        sync = 0;
    }
    if (!sync || long_call_start(&thread, &lc) != 0) {
        long_call_exec(&lc); /* as before threads: not interruptible */
    } else {
        pthread_mutex_lock(&lc.lock);
        while (!lc.done) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 50L * 1000 * 1000;
            if (until.tv_nsec >= 1000L * 1000 * 1000) {
                until.tv_sec++;
                until.tv_nsec -= 1000L * 1000 * 1000;
            }
            pthread_cond_timedwait(&lc.cond, &lc.lock, &until);
            if (lc.done) break;
            pthread_mutex_unlock(&lc.lock);
            /* R_ToplevelExec: an interrupt (or another R error, e.g. an
             * elapsed-time limit) jumps no further than its end, so this
             * frame keeps waiting for the worker. */
            if (!R_ToplevelExec(check_interrupt, NULL)) interrupted = 1;
            /* Again at every tick until the call ends: a cancel reaches only
             * the calls begun before it, and an interrupt pending when the
             * worker started may come before the library began the call. A
             * call that ends well all the same returns its result. */
            if (interrupted) hydroplot_context_cancel(ctx);
            pthread_mutex_lock(&lc.lock);
        }
        pthread_mutex_unlock(&lc.lock);
        pthread_join(thread, NULL);
    }
    if (sync) {
        pthread_cond_destroy(&lc.cond);
        pthread_mutex_destroy(&lc.lock);
    }
    if (lc.status != HYDROPLOT_OK) stop_status(lc.status, lc.http, lc.error);
}

/* options: a named character vector of hydroplot_context_set_option keys. */
static SEXP do_context_new(void *data) {
    call *c = data;
    SEXP options = c->a, names = Rf_getAttrib(options, R_NamesSymbol), ptr;
    hydroplot_status s = hydroplot_context_new(&c->h.ctx);
    R_xlen_t i;
    hold(c->h.ctx);
    if (s != HYDROPLOT_OK) stop_status(s, 0, NULL);
    for (i = 0; i < XLENGTH(options); i++) {
        s = hydroplot_context_set_option(c->h.ctx, Rf_translateCharUTF8(STRING_ELT(names, i)),
                                         Rf_translateCharUTF8(STRING_ELT(options, i)));
        if (s != HYDROPLOT_OK) stop_status(s, 0, NULL);
    }
    ptr = wrap(c->h.ctx, "hydroplot_context", context_finalizer);
    c->h.ctx = NULL;
    return ptr;
}

static SEXP r_context_new(SEXP options) {
    call c = {{0}, options, R_NilValue, R_NilValue, R_NilValue, R_NilValue, R_NilValue};
    return run(do_context_new, &c);
}

static SEXP r_version(void) { return Rf_mkString(hydroplot_version()); }

static SEXP do_map_png(void *data) {
    call *c = data;
    hydroplot_status s = hydroplot_map_png(unwrap(c->a, "hydroplot_map"), &c->h.buf);
    hold(c->h.buf);
    if (s != HYDROPLOT_OK) stop_status(s, 0, NULL);
    return buffer_to_raw(&c->h);
}

static SEXP r_map_png(SEXP map) {
    call c = {{0}, map, R_NilValue, R_NilValue, R_NilValue, R_NilValue, R_NilValue};
    return run(do_map_png, &c);
}

static SEXP do_map_bounds(void *data) {
    call *c = data;
    SEXP out = PROTECT(Rf_allocVector(REALSXP, 4));
    hydroplot_status s = hydroplot_map_bounds(unwrap(c->a, "hydroplot_map"), REAL(out));
    if (s != HYDROPLOT_OK) stop_status(s, 0, NULL);
    UNPROTECT(1);
    return out;
}

/* The map's EPSG:3857 extent: c(xmin, ymin, xmax, ymax). */
static SEXP r_map_bounds(SEXP map) {
    call c = {{0}, map, R_NilValue, R_NilValue, R_NilValue, R_NilValue, R_NilValue};
    return run(do_map_bounds, &c);
}

/* --- Arrow streams -> R ------------------------------------------------------ */

static int arrow_valid(const struct ArrowArray *a, int64_t i) {
    const uint8_t *validity = (const uint8_t *)a->buffers[0];
    int64_t j = a->offset + i;
    return validity == NULL || ((validity[j / 8] >> (j % 8)) & 1);
}

/* One column of a batch as an R vector: int64 ("l") as integer when every
 * value fits, else double; float64 ("g") double; bool ("b") logical; utf8
 * ("u") character; binary ("z", the WKB geometry) a list of raw vectors,
 * NULL for a null; a list of float64 ("+l" of "g", the trace's
 * intersection_point) a list of double vectors, NULL for a null. Nulls are
 * NA. R strings cannot hold a NUL byte: a text value holding one is cut at
 * it, with one warning naming the column. */
static SEXP arrow_column(const struct ArrowSchema *field, const struct ArrowArray *a) {
    const char *f = field->format;
    R_xlen_t n = (R_xlen_t)a->length, i, cut = 0;
    SEXP out;
    if (strcmp(f, "+l") == 0 && field->n_children == 1 && a->n_children == 1 &&
        strcmp(field->children[0]->format, "g") == 0) {
        const int32_t *offsets = (const int32_t *)a->buffers[1] + a->offset;
        const struct ArrowArray *child = a->children[0];
        const double *v = (const double *)child->buffers[1] + child->offset;
        out = PROTECT(Rf_allocVector(VECSXP, n));
        for (i = 0; i < n; i++) {
            int32_t j, len = offsets[i + 1] - offsets[i];
            SEXP item;
            if (!arrow_valid(a, i)) continue;
            item = Rf_allocVector(REALSXP, len);
            SET_VECTOR_ELT(out, i, item);
            for (j = 0; j < len; j++)
                REAL(item)[j] = arrow_valid(child, offsets[i] + j) ? v[offsets[i] + j] : NA_REAL;
        }
    } else if (strcmp(f, "l") == 0) {
        const int64_t *v = (const int64_t *)a->buffers[1] + a->offset;
        int fits = 1;
        for (i = 0; i < n && fits; i++) fits = !arrow_valid(a, i) || (v[i] > INT32_MIN && v[i] <= INT32_MAX);
        out = PROTECT(Rf_allocVector(fits ? INTSXP : REALSXP, n));
        for (i = 0; i < n; i++) {
            if (fits)
                INTEGER(out)[i] = arrow_valid(a, i) ? (int)v[i] : NA_INTEGER;
            else
                REAL(out)[i] = arrow_valid(a, i) ? (double)v[i] : NA_REAL;
        }
    } else if (strcmp(f, "g") == 0) {
        const double *v = (const double *)a->buffers[1] + a->offset;
        out = PROTECT(Rf_allocVector(REALSXP, n));
        for (i = 0; i < n; i++) REAL(out)[i] = arrow_valid(a, i) ? v[i] : NA_REAL;
    } else if (strcmp(f, "b") == 0) {
        const uint8_t *bits = (const uint8_t *)a->buffers[1];
        out = PROTECT(Rf_allocVector(LGLSXP, n));
        for (i = 0; i < n; i++) {
            int64_t j = a->offset + i;
            LOGICAL(out)[i] = arrow_valid(a, i) ? (bits[j / 8] >> (j % 8)) & 1 : NA_LOGICAL;
        }
    } else if (strcmp(f, "u") == 0 || strcmp(f, "z") == 0) {
        const int32_t *offsets = (const int32_t *)a->buffers[1] + a->offset;
        const char *data = (const char *)a->buffers[2];
        int text = f[0] == 'u';
        out = PROTECT(Rf_allocVector(text ? STRSXP : VECSXP, n));
        for (i = 0; i < n; i++) {
            int len = (int)(offsets[i + 1] - offsets[i]);
            if (!arrow_valid(a, i)) {
                if (text) SET_STRING_ELT(out, i, NA_STRING);
            } else if (text) {
                const char *nul = len > 0 ? memchr(data + offsets[i], 0, (size_t)len) : NULL;
                if (nul != NULL) {
                    len = (int)(nul - (data + offsets[i]));
                    cut++;
                }
                SET_STRING_ELT(out, i, Rf_mkCharLenCE(data + offsets[i], len, CE_UTF8));
            } else {
                SEXP raw = Rf_allocVector(RAWSXP, len);
                SET_VECTOR_ELT(out, i, raw);
                if (len > 0) memcpy(RAW(raw), data + offsets[i], (size_t)len);
            }
        }
    } else {
        Rf_error("column %s: unsupported Arrow format \"%s\"", field->name, f);
    }
    if (cut > 0)
        Rf_warning("column %s: %ld value(s) held a NUL byte, which R strings cannot hold; cut at it", field->name,
                   (long)cut);
    UNPROTECT(1);
    return out;
}

/* The value of the metadata `key` of a field, "" when it has none: the
 * GeoArrow extension metadata (a JSON object with "crs"), the declared
 * geometry type. Arrow metadata: int32 count, then int32 length and bytes
 * of each key and value. */
static SEXP field_metadata(const struct ArrowSchema *field, const char *key) {
    const char *p = field->metadata;
    size_t key_len = strlen(key);
    int32_t n, i, len;
    if (p == NULL) return Rf_mkString("");
    memcpy(&n, p, 4);
    p += 4;
    for (i = 0; i < n; i++) {
        int match;
        memcpy(&len, p, 4);
        p += 4;
        match = (size_t)len == key_len && memcmp(p, key, key_len) == 0;
        p += len;
        memcpy(&len, p, 4);
        p += 4;
        if (match) return Rf_ScalarString(Rf_mkCharLenCE(p, len, CE_UTF8));
        p += len;
    }
    return Rf_mkString("");
}

/* Reads the held stream to its end: list(names, geometry_metadata, batches,
 * geometry_type),
 * each batch a list of R vectors in column order (R/arrow.R binds them).
 * The stream, schema and batches are released on the way, or by release()
 * when an R error ends the call. */
static SEXP read_stream(held *h) {
    const char *names[] = {"names", "geometry_metadata", "batches", "geometry_type", ""};
    SEXP out, col_names, batches;
    int64_t i;
    R_xlen_t nb = 0;
    n_held++; /* the stream */
    if (h->stream.get_schema(&h->stream, &h->schema) != 0)
        Rf_error("reading an Arrow stream's schema: %s", h->stream.get_last_error(&h->stream));
    n_held++;
    out = PROTECT(Rf_mkNamed(VECSXP, names));
    col_names = Rf_allocVector(STRSXP, (R_xlen_t)h->schema.n_children);
    SET_VECTOR_ELT(out, 0, col_names);
    for (i = 0; i < h->schema.n_children; i++)
        SET_STRING_ELT(col_names, (R_xlen_t)i, Rf_mkCharCE(h->schema.children[i]->name, CE_UTF8));
    SET_VECTOR_ELT(out, 1, h->schema.n_children > 0 ? field_metadata(h->schema.children[0], "ARROW:extension:metadata") : Rf_mkString(""));
    SET_VECTOR_ELT(out, 3, h->schema.n_children > 0 ? field_metadata(h->schema.children[0], "hydroplot:geometry_type") : Rf_mkString(""));
    batches = Rf_allocVector(VECSXP, 1);
    SET_VECTOR_ELT(out, 2, batches);
    for (;;) {
        SEXP cols;
        if (h->stream.get_next(&h->stream, &h->batch) != 0)
            Rf_error("reading an Arrow stream: %s", h->stream.get_last_error(&h->stream));
        if (h->batch.release == NULL) break; /* the end */
        n_held++;
        if (h->batch.n_children != h->schema.n_children) Rf_error("an Arrow batch does not match its schema");
        if (nb == XLENGTH(batches)) {
            SEXP grown = Rf_lengthgets(batches, 2 * nb);
            SET_VECTOR_ELT(out, 2, grown);
            batches = grown;
        }
        cols = Rf_allocVector(VECSXP, (R_xlen_t)h->schema.n_children);
        SET_VECTOR_ELT(batches, nb++, cols);
        for (i = 0; i < h->schema.n_children; i++)
            SET_VECTOR_ELT(cols, (R_xlen_t)i, arrow_column(h->schema.children[i], h->batch.children[i]));
        h->batch.release(&h->batch);
        h->batch.release = NULL;
        n_held--;
    }
    SET_VECTOR_ELT(out, 2, Rf_lengthgets(batches, nb));
    drop_arrow(h);
    UNPROTECT(1);
    return out;
}

/* --- plot_hydro ------------------------------------------------------------ */

static SEXP field(SEXP list, const char *name) {
    SEXP names = Rf_getAttrib(list, R_NamesSymbol);
    R_xlen_t i;
    for (i = 0; i < XLENGTH(list); i++)
        if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0) return VECTOR_ELT(list, i);
    return R_NilValue;
}

/* The UTF-8 text of x[i]. Rf_translateCharUTF8 makes NA the text "NA", a
 * site or feature of that name: R/ refuses NA first, and so does this. */
static const char *text_at(SEXP x, R_xlen_t i) {
    if (STRING_ELT(x, i) == NA_STRING) Rf_error("plot_hydro(): a site id, feature or style is missing (NA)");
    return Rf_translateCharUTF8(STRING_ELT(x, i));
}

/* Applies the request fields R prepared (R/request.R documents them);
 * returns the first failing status. */
static hydroplot_status fill_request(hydroplot_plot_request *req, SEXP a) {
    hydroplot_status s = HYDROPLOT_OK;
    SEXP v;
    R_xlen_t i, n;
#define TRY(call)                              \
    do {                                       \
        if ((s = (call)) != HYDROPLOT_OK) return s; \
    } while (0)
    v = field(a, "comids");
    for (i = 0; i < XLENGTH(v); i++) TRY(hydroplot_plot_request_add_comid(req, (int64_t)REAL(v)[i]));
    v = field(a, "comid_set");
    if (XLENGTH(v) > 0) {
        int64_t *set = (int64_t *)R_alloc((size_t)XLENGTH(v), sizeof *set);
        for (i = 0; i < XLENGTH(v); i++) set[i] = (int64_t)REAL(v)[i];
        TRY(hydroplot_plot_request_set_comid_set(req, set, (size_t)XLENGTH(v)));
    }
    v = field(a, "sites");
    for (i = 0; i < XLENGTH(v); i++) TRY(hydroplot_plot_request_add_site(req, text_at(v, i)));
    v = field(a, "features"); /* source1, id1, source2, id2, ... */
    for (i = 0; i + 1 < XLENGTH(v); i += 2)
        TRY(hydroplot_plot_request_add_feature(req, text_at(v, i), text_at(v, i + 1)));
    v = field(a, "points"); /* x1, y1, x2, y2, ... in points_crs */
    for (i = 0; i + 1 < XLENGTH(v); i += 2)
        TRY(hydroplot_plot_request_add_point(req, REAL(v)[i], REAL(v)[i + 1], str_or_null(field(a, "points_crs"))));
    v = field(a, "bbox");
    if (XLENGTH(v) == 4)
        TRY(hydroplot_plot_request_set_bbox(req, REAL(v)[0], REAL(v)[1], REAL(v)[2], REAL(v)[3],
                                            str_or_null(field(a, "bbox_crs"))));
    v = field(a, "streamorder");
    if (XLENGTH(v) == 1) TRY(hydroplot_plot_request_set_streamorder(req, INTEGER(v)[0]));
    if (str_or_null(field(a, "hydro_data"))) TRY(hydroplot_plot_request_set_hydro_data(req, str_or_null(field(a, "hydro_data"))));
    if (str_or_null(field(a, "gpkg"))) TRY(hydroplot_plot_request_set_gpkg(req, str_or_null(field(a, "gpkg"))));
    if (str_or_null(field(a, "png_file"))) TRY(hydroplot_plot_request_set_png_file(req, str_or_null(field(a, "png_file"))));
    v = field(a, "styles"); /* element1, property1, value1, ... */
    n = XLENGTH(v);
    for (i = 0; i + 2 < n; i += 3)
        TRY(hydroplot_plot_request_set_style(req, text_at(v, i), text_at(v, i + 1), text_at(v, i + 2)));
    if (str_or_null(field(a, "basemap"))) TRY(hydroplot_plot_request_set_basemap(req, str_or_null(field(a, "basemap"))));
    v = field(a, "zoom");
    if (XLENGTH(v) == 1) TRY(hydroplot_plot_request_set_zoom(req, INTEGER(v)[0]));
    v = field(a, "size");
    if (XLENGTH(v) == 2) TRY(hydroplot_plot_request_set_size(req, (uint32_t)INTEGER(v)[0], (uint32_t)INTEGER(v)[1]));
    TRY(hydroplot_plot_request_set_actually_plot(req, Rf_asLogical(field(a, "actually_plot")) == TRUE));
    TRY(hydroplot_plot_request_set_overwrite(req, Rf_asLogical(field(a, "overwrite")) == TRUE));
    v = field(a, "flowline_only");
    if (XLENGTH(v) == 1) TRY(hydroplot_plot_request_set_flowline_only(req, LOGICAL(v)[0] == TRUE));
    if (Rf_asLogical(field(a, "no_cache")) == TRUE) TRY(hydroplot_plot_request_disable_cache(req));
    if (str_or_null(field(a, "cache_file"))) TRY(hydroplot_plot_request_set_cache_file(req, str_or_null(field(a, "cache_file"))));
    if (str_or_null(field(a, "properties"))) TRY(hydroplot_plot_request_set_properties(req, str_or_null(field(a, "properties"))));
    TRY(hydroplot_plot_request_set_lod(req, Rf_asLogical(field(a, "lod")) == TRUE));
#undef TRY
    return s;
}

/* Runs hydroplot_plot; returns list(layers, bbox, warnings, map = external
 * pointer or NULL). `layers` is named: each a read_stream() table, or with
 * `arrow` FALSE (the tests' reference path) GeoJSON text. `map` NULL: a new
 * map; else the map to draw onto (add = TRUE). The returned map is the one
 * drawn: NULL when actually_plot is FALSE, even with add = TRUE (nothing was
 * drawn onto the old map, so R must not show it again). */
static SEXP do_plot(void *data) {
    call *c = data;
    SEXP args = c->b, layers = c->c, map_ptr = c->d;
    int arrow = Rf_asLogical(c->e) != FALSE, plotted = Rf_asLogical(field(args, "actually_plot")) == TRUE;
    hydroplot_context *ctx = unwrap(c->a, "hydroplot_context");
    hydroplot_map *onto = Rf_isNull(map_ptr) ? NULL : unwrap(map_ptr, "hydroplot_map");
    held *h = &c->h;
    hydroplot_status s;
    long_args la = {0};
    double bbox[4];
    size_t i, nw;
    SEXP out, json, warnings, box;
    const char *names[] = {"layers", "bbox", "warnings", "map", ""};

    h->req = hold(hydroplot_plot_request_new());
    s = fill_request(h->req, args);
    if (s != HYDROPLOT_OK) stop_status(s, 0, NULL);
    la.ctx = ctx;
    la.req = h->req;
    la.onto = onto;
    la.h = h;
    run_long(ctx, plot_call, &la);
    hold(h->pd);

    out = PROTECT(Rf_mkNamed(VECSXP, names));
    json = PROTECT(Rf_allocVector(arrow ? VECSXP : STRSXP, XLENGTH(layers)));
    for (i = 0; i < (size_t)XLENGTH(layers); i++) {
        const char *layer = CHAR(STRING_ELT(layers, i));
        if (arrow) {
            s = hydroplot_plot_data_layer_arrow(h->pd, layer, &h->stream);
            if (s != HYDROPLOT_OK) stop_status(s, 0, NULL);
            SET_VECTOR_ELT(json, i, read_stream(h));
            continue;
        }
        s = hydroplot_plot_data_layer_geojson(h->pd, layer, &h->buf);
        hold(h->buf);
        if (s != HYDROPLOT_OK) stop_status(s, 0, NULL);
        SET_STRING_ELT(json, i, buffer_to_char(h));
    }
    s = hydroplot_plot_data_bbox(h->pd, bbox);
    if (s == HYDROPLOT_OK && onto == NULL && plotted) {
        s = hydroplot_plot_data_take_map(h->pd, &h->map);
        hold(h->map);
    }
    if (s != HYDROPLOT_OK) stop_status(s, 0, NULL);
    Rf_setAttrib(json, R_NamesSymbol, layers);
    SET_VECTOR_ELT(out, 0, json);
    box = Rf_allocVector(REALSXP, 4);
    SET_VECTOR_ELT(out, 1, box);
    memcpy(REAL(box), bbox, sizeof bbox);
    nw = hydroplot_plot_data_warning_count(h->pd);
    warnings = Rf_allocVector(STRSXP, (R_xlen_t)nw);
    SET_VECTOR_ELT(out, 2, warnings);
    for (i = 0; i < nw; i++) SET_STRING_ELT(warnings, i, Rf_mkCharCE(hydroplot_plot_data_warning(h->pd, i), CE_UTF8));
    if (h->map != NULL) {
        SET_VECTOR_ELT(out, 3, wrap(h->map, "hydroplot_map", map_finalizer));
        h->map = NULL;
    } else if (onto != NULL && plotted) {
        SET_VECTOR_ELT(out, 3, map_ptr);
    }
    UNPROTECT(2);
    return out;
}

static SEXP r_plot(SEXP ctx_ptr, SEXP args, SEXP layers, SEXP map_ptr, SEXP arrow) {
    call c = {{0}, ctx_ptr, args, layers, map_ptr, arrow, R_NilValue};
    return run(do_plot, &c);
}

/* --- get_raindrop_trace ---------------------------------------------------- */

/* The trace from (x, y) in crs as a read_stream() table, or with `arrow`
 * FALSE (the tests' reference path) as GeoJSON text. */
static SEXP do_trace(void *data) {
    call *c = data;
    SEXP chr, out;
    hydroplot_status s;
    double xy[2];
    long_args la = {0};
    xy[0] = Rf_asReal(c->b);
    xy[1] = Rf_asReal(c->c);
    la.ctx = unwrap(c->a, "hydroplot_context");
    la.xy = xy;
    la.n = 1;
    la.crs = str_or_null(c->d);
    la.text = str_or_null(c->e);
    la.h = &c->h;
    run_long(la.ctx, trace_call, &la);
    hold(c->h.trace);
    if (Rf_asLogical(c->f) != FALSE) {
        s = hydroplot_trace_arrow(c->h.trace, &c->h.stream);
        if (s != HYDROPLOT_OK) stop_status(s, 0, NULL);
        return read_stream(&c->h);
    }
    s = hydroplot_trace_geojson(c->h.trace, &c->h.buf);
    hold(c->h.buf);
    if (s != HYDROPLOT_OK) stop_status(s, 0, NULL);
    chr = PROTECT(buffer_to_char(&c->h));
    out = Rf_ScalarString(chr);
    UNPROTECT(1);
    return out;
}

static SEXP r_trace(SEXP ctx_ptr, SEXP x, SEXP y, SEXP crs, SEXP direction, SEXP arrow) {
    call c = {{0}, ctx_ptr, x, y, crs, direction, arrow};
    return run(do_trace, &c);
}

/* --- many points: the trace batch and the comid lookup ---------------------- */

/* The points of a batch call as 2n doubles x0, y0, x1, y1, ... (R_alloc'd:
 * R frees them when the call ends, however it ends). */
static double *interleave(SEXP x, SEXP y, R_xlen_t *n) {
    double *xy;
    R_xlen_t i;
    *n = XLENGTH(x);
    if (XLENGTH(y) != *n) Rf_error("x and y differ in length");
    xy = (double *)R_alloc((size_t)(*n > 0 ? 2 * *n : 1), sizeof(double));
    for (i = 0; i < *n; i++) {
        xy[2 * i] = REAL(x)[i];
        xy[2 * i + 1] = REAL(y)[i];
    }
    return xy;
}

/* Each point's message, NA when it succeeded. */
static SEXP point_errors(R_xlen_t n, const char *(*error)(const void *, size_t), const void *b) {
    SEXP out = PROTECT(Rf_allocVector(STRSXP, n));
    R_xlen_t i;
    for (i = 0; i < n; i++) {
        const char *m = error(b, (size_t)i);
        SET_STRING_ELT(out, i, m == NULL ? NA_STRING : Rf_mkCharCE(m, CE_UTF8));
    }
    UNPROTECT(1);
    return out;
}

static const char *trace_batch_error(const void *b, size_t i) { return hydroplot_trace_batch_error(b, i); }
static const char *comid_batch_error(const void *b, size_t i) { return hydroplot_comid_batch_error(b, i); }

/* The long_args of a batch call: the points (x = c->b, y = c->c; their
 * count in *n), the context c->a, crs c->d and the direction or path c->e. */
static long_args batch_args(call *c, R_xlen_t *n) {
    long_args la = {0};
    la.xy = interleave(c->b, c->c, n);
    la.n = (size_t)*n;
    la.ctx = unwrap(c->a, "hydroplot_context");
    la.crs = str_or_null(c->d);
    la.text = str_or_null(c->e);
    la.h = &c->h;
    return la;
}

/* list(tables, errors): per point, its trace as a read_stream() table (NULL
 * when it failed) and its message (NA when traced). */
static SEXP do_trace_batch(void *data) {
    call *c = data;
    const char *names[] = {"tables", "errors", ""};
    R_xlen_t n, i;
    SEXP out, tables;
    hydroplot_status s;
    long_args la = batch_args(c, &n);
    run_long(la.ctx, trace_batch_call, &la);
    hold(c->h.trace_batch);
    out = PROTECT(Rf_mkNamed(VECSXP, names));
    tables = Rf_allocVector(VECSXP, n);
    SET_VECTOR_ELT(out, 0, tables);
    SET_VECTOR_ELT(out, 1, point_errors(n, trace_batch_error, c->h.trace_batch));
    for (i = 0; i < n; i++) {
        const hydroplot_trace *t = hydroplot_trace_batch_get(c->h.trace_batch, (size_t)i);
        if (t == NULL) continue;
        s = hydroplot_trace_arrow(t, &c->h.stream);
        if (s != HYDROPLOT_OK) stop_status(s, 0, NULL);
        SET_VECTOR_ELT(tables, i, read_stream(&c->h));
    }
    UNPROTECT(1);
    return out;
}

static SEXP r_trace_batch(SEXP ctx_ptr, SEXP x, SEXP y, SEXP crs, SEXP direction) {
    call c = {{0}, ctx_ptr, x, y, crs, direction, R_NilValue};
    return run(do_trace_batch, &c);
}

/* list(comids, errors): per point, its comid (double; NA when in no
 * catchment or failed) and its message (NA when looked up). */
static SEXP do_comid(void *data) {
    call *c = data;
    const char *names[] = {"comids", "errors", ""};
    R_xlen_t n, i;
    SEXP out, comids;
    long_args la = batch_args(c, &n);
    run_long(la.ctx, comid_call, &la);
    hold(c->h.comid_batch);
    out = PROTECT(Rf_mkNamed(VECSXP, names));
    comids = Rf_allocVector(REALSXP, n);
    SET_VECTOR_ELT(out, 0, comids);
    for (i = 0; i < n; i++) {
        int64_t comid = hydroplot_comid_batch_get(c->h.comid_batch, (size_t)i);
        REAL(comids)[i] = comid > 0 ? (double)comid : NA_REAL;
    }
    SET_VECTOR_ELT(out, 1, point_errors(n, comid_batch_error, c->h.comid_batch));
    UNPROTECT(1);
    return out;
}

static SEXP r_comid(SEXP ctx_ptr, SEXP x, SEXP y, SEXP crs, SEXP hydro_data) {
    call c = {{0}, ctx_ptr, x, y, crs, hydro_data, R_NilValue};
    return run(do_comid, &c);
}

/* NULL, once the GeoPackage `path` is indexed (unindexed when `remove`). */
static SEXP do_index(void *data) {
    call *c = data;
    long_args la = {0};
    la.ctx = unwrap(c->a, "hydroplot_context");
    la.text = str_or_null(c->b);
    run_long(la.ctx, Rf_asLogical(c->c) == TRUE ? unindex_call : index_call, &la);
    return R_NilValue;
}

static SEXP r_index(SEXP ctx_ptr, SEXP path, SEXP remove) {
    call c = {{0}, ctx_ptr, path, remove, R_NilValue, R_NilValue, R_NilValue};
    return run(do_index, &c);
}

static const R_CallMethodDef call_methods[] = {
    {"hp_context_new", (DL_FUNC)&r_context_new, 1},
    {"hp_version", (DL_FUNC)&r_version, 0},
    {"hp_map_png", (DL_FUNC)&r_map_png, 1},
    {"hp_map_bounds", (DL_FUNC)&r_map_bounds, 1},
    {"hp_plot", (DL_FUNC)&r_plot, 5},
    {"hp_trace", (DL_FUNC)&r_trace, 6},
    {"hp_trace_batch", (DL_FUNC)&r_trace_batch, 5},
    {"hp_comid", (DL_FUNC)&r_comid, 5},
    {"hp_index", (DL_FUNC)&r_index, 3},
    {"hp_held_handles", (DL_FUNC)&r_held_handles, 0},
    {NULL, NULL, 0}};

void R_init_hydroplot(DllInfo *dll) {
    R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}
