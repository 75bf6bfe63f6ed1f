/* The R glue: converts R values to hydroplot calls and results back to R
 * values (layers and traces read from their Arrow C streams as R vectors and
 * raw WKB, raw PNG bytes, external pointers for contexts and maps).
 * Everything else (argument forms, sf) is R code in R/. Every failure becomes an R error naming the status and carrying
 * hydroplot_last_error(). Every handle a call makes is held in a `held`
 * and freed by release(), which R_ExecWithCleanup runs however the call
 * ends: normally, or by an R error (ours, or one R raises inside the glue,
 * e.g. REAL() of a character vector or an allocation failure). */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>

#include <hydroplot.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An R error from a failed status: "HYDROPLOT_ERR_HTTP (HTTP 500): message".
 * Copies the message first: Rf_error does not return (the
 * call's handles are then freed by release()). */
static void stop_status(hydroplot_status s) {
    char msg[2048];
    int http = hydroplot_last_http_status();
    if (http > 0)
        snprintf(msg, sizeof msg, "%s (HTTP %d): %s", hydroplot_status_str(s), http, hydroplot_last_error());
    else
        snprintf(msg, sizeof msg, "%s: %s", hydroplot_status_str(s), hydroplot_last_error());
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

/* options: a named character vector of hydroplot_context_set_option keys. */
static SEXP do_context_new(void *data) {
    call *c = data;
    SEXP options = c->a, names = Rf_getAttrib(options, R_NamesSymbol), ptr;
    hydroplot_status s = hydroplot_context_new(&c->h.ctx);
    R_xlen_t i;
    hold(c->h.ctx);
    if (s != HYDROPLOT_OK) stop_status(s);
    for (i = 0; i < XLENGTH(options); i++) {
        s = hydroplot_context_set_option(c->h.ctx, Rf_translateCharUTF8(STRING_ELT(names, i)),
                                         Rf_translateCharUTF8(STRING_ELT(options, i)));
        if (s != HYDROPLOT_OK) stop_status(s);
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
    if (s != HYDROPLOT_OK) stop_status(s);
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
    if (s != HYDROPLOT_OK) stop_status(s);
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

/* The GeoArrow extension metadata (a JSON object with "crs") of a field, ""
 * when it has none. Arrow metadata: int32 count, then int32 length and bytes
 * of each key and value. */
static SEXP arrow_extension_metadata(const struct ArrowSchema *field) {
    static const char key[] = "ARROW:extension:metadata";
    const char *p = field->metadata;
    int32_t n, i, len;
    if (p == NULL) return Rf_mkString("");
    memcpy(&n, p, 4);
    p += 4;
    for (i = 0; i < n; i++) {
        int match;
        memcpy(&len, p, 4);
        p += 4;
        match = (size_t)len == sizeof key - 1 && memcmp(p, key, sizeof key - 1) == 0;
        p += len;
        memcpy(&len, p, 4);
        p += 4;
        if (match) return Rf_ScalarString(Rf_mkCharLenCE(p, len, CE_UTF8));
        p += len;
    }
    return Rf_mkString("");
}

/* Reads the held stream to its end: list(names, geometry_metadata, batches),
 * each batch a list of R vectors in column order (R/arrow.R binds them).
 * The stream, schema and batches are released on the way, or by release()
 * when an R error ends the call. */
static SEXP read_stream(held *h) {
    const char *names[] = {"names", "geometry_metadata", "batches", ""};
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
    SET_VECTOR_ELT(out, 1, h->schema.n_children > 0 ? arrow_extension_metadata(h->schema.children[0]) : Rf_mkString(""));
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
    double bbox[4];
    size_t i, nw;
    SEXP out, json, warnings, box;
    const char *names[] = {"layers", "bbox", "warnings", "map", ""};

    h->req = hold(hydroplot_plot_request_new());
    s = fill_request(h->req, args);
    if (s == HYDROPLOT_OK) s = hydroplot_plot(ctx, h->req, onto, &h->pd);
    hold(h->pd);
    if (s != HYDROPLOT_OK) stop_status(s);

    out = PROTECT(Rf_mkNamed(VECSXP, names));
    json = PROTECT(Rf_allocVector(arrow ? VECSXP : STRSXP, XLENGTH(layers)));
    for (i = 0; i < (size_t)XLENGTH(layers); i++) {
        const char *layer = CHAR(STRING_ELT(layers, i));
        if (arrow) {
            s = hydroplot_plot_data_layer_arrow(h->pd, layer, &h->stream);
            if (s != HYDROPLOT_OK) stop_status(s);
            SET_VECTOR_ELT(json, i, read_stream(h));
            continue;
        }
        s = hydroplot_plot_data_layer_geojson(h->pd, layer, &h->buf);
        hold(h->buf);
        if (s != HYDROPLOT_OK) stop_status(s);
        SET_STRING_ELT(json, i, buffer_to_char(h));
    }
    s = hydroplot_plot_data_bbox(h->pd, bbox);
    if (s == HYDROPLOT_OK && onto == NULL && plotted) {
        s = hydroplot_plot_data_take_map(h->pd, &h->map);
        hold(h->map);
    }
    if (s != HYDROPLOT_OK) stop_status(s);
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
    hydroplot_status s = hydroplot_raindrop_trace(unwrap(c->a, "hydroplot_context"), Rf_asReal(c->b), Rf_asReal(c->c),
                                                  str_or_null(c->d), str_or_null(c->e), &c->h.trace);
    hold(c->h.trace);
    if (s != HYDROPLOT_OK) stop_status(s);
    if (Rf_asLogical(c->f) != FALSE) {
        s = hydroplot_trace_arrow(c->h.trace, &c->h.stream);
        if (s != HYDROPLOT_OK) stop_status(s);
        return read_stream(&c->h);
    }
    s = hydroplot_trace_geojson(c->h.trace, &c->h.buf);
    hold(c->h.buf);
    if (s != HYDROPLOT_OK) stop_status(s);
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

/* list(tables, errors): per point, its trace as a read_stream() table (NULL
 * when it failed) and its message (NA when traced). */
static SEXP do_trace_batch(void *data) {
    call *c = data;
    const char *names[] = {"tables", "errors", ""};
    R_xlen_t n, i;
    double *xy = interleave(c->b, c->c, &n);
    SEXP out, tables;
    hydroplot_status s = hydroplot_raindrop_trace_batch(unwrap(c->a, "hydroplot_context"), xy, (size_t)n,
                                                        str_or_null(c->d), str_or_null(c->e), &c->h.trace_batch);
    hold(c->h.trace_batch);
    if (s != HYDROPLOT_OK) stop_status(s);
    out = PROTECT(Rf_mkNamed(VECSXP, names));
    tables = Rf_allocVector(VECSXP, n);
    SET_VECTOR_ELT(out, 0, tables);
    SET_VECTOR_ELT(out, 1, point_errors(n, trace_batch_error, c->h.trace_batch));
    for (i = 0; i < n; i++) {
        const hydroplot_trace *t = hydroplot_trace_batch_get(c->h.trace_batch, (size_t)i);
        if (t == NULL) continue;
        s = hydroplot_trace_arrow(t, &c->h.stream);
        if (s != HYDROPLOT_OK) stop_status(s);
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
    double *xy = interleave(c->b, c->c, &n);
    SEXP out, comids;
    hydroplot_status s = hydroplot_comid_lookup(unwrap(c->a, "hydroplot_context"), xy, (size_t)n, str_or_null(c->d),
                                                str_or_null(c->e), &c->h.comid_batch);
    hold(c->h.comid_batch);
    if (s != HYDROPLOT_OK) stop_status(s);
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

static const R_CallMethodDef call_methods[] = {
    {"hp_context_new", (DL_FUNC)&r_context_new, 1},
    {"hp_version", (DL_FUNC)&r_version, 0},
    {"hp_map_png", (DL_FUNC)&r_map_png, 1},
    {"hp_map_bounds", (DL_FUNC)&r_map_bounds, 1},
    {"hp_plot", (DL_FUNC)&r_plot, 5},
    {"hp_trace", (DL_FUNC)&r_trace, 6},
    {"hp_trace_batch", (DL_FUNC)&r_trace_batch, 5},
    {"hp_comid", (DL_FUNC)&r_comid, 5},
    {"hp_held_handles", (DL_FUNC)&r_held_handles, 0},
    {NULL, NULL, 0}};

void R_init_hydroplot(DllInfo *dll) {
    R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}
