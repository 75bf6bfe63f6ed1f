/* The R glue: converts R values to hydroplot calls and results back to R
 * values (GeoJSON text, raw PNG bytes, external pointers for contexts and
 * maps). Everything else (argument forms, GeoJSON parsing, sf) is R code in
 * R/. Every failure becomes an R error naming the status and carrying
 * hydroplot_last_error(); every handle is freed on every path. */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>

#include <hydroplot.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An R error from a failed status: "HYDROPLOT_ERR_HTTP (HTTP 500): message".
 * Copies the message first: Rf_error does not return, so no handle may be
 * live when it is called. */
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

static SEXP buffer_to_raw(hydroplot_buffer *b) {
    size_t n = hydroplot_buffer_len(b);
    SEXP out = PROTECT(Rf_allocVector(RAWSXP, (R_xlen_t)n));
    if (n > 0) memcpy(RAW(out), hydroplot_buffer_data(b), n);
    hydroplot_buffer_free(b);
    UNPROTECT(1);
    return out;
}

static SEXP buffer_to_string(hydroplot_buffer *b) {
    SEXP chr = PROTECT(Rf_mkCharLenCE((const char *)hydroplot_buffer_data(b), (int)hydroplot_buffer_len(b), CE_UTF8));
    hydroplot_buffer_free(b);
    SEXP out = Rf_ScalarString(chr);
    UNPROTECT(1);
    return out;
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

static SEXP wrap(void *handle, const char *tag, R_CFinalizer_t finalizer) {
    SEXP ptr = PROTECT(R_MakeExternalPtr(handle, Rf_install(tag), R_NilValue));
    R_RegisterCFinalizerEx(ptr, finalizer, TRUE);
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

/* options: a named character vector of hydroplot_context_set_option keys. */
static SEXP r_context_new(SEXP options) {
    hydroplot_context *ctx = NULL;
    hydroplot_status s = hydroplot_context_new(&ctx);
    SEXP names = Rf_getAttrib(options, R_NamesSymbol);
    R_xlen_t i;
    if (s != HYDROPLOT_OK) stop_status(s);
    for (i = 0; i < XLENGTH(options); i++) {
        s = hydroplot_context_set_option(ctx, Rf_translateCharUTF8(STRING_ELT(names, i)),
                                         Rf_translateCharUTF8(STRING_ELT(options, i)));
        if (s != HYDROPLOT_OK) {
            hydroplot_context_free(ctx);
            stop_status(s);
        }
    }
    return wrap(ctx, "hydroplot_context", context_finalizer);
}

static SEXP r_version(void) { return Rf_mkString(hydroplot_version()); }

static SEXP r_map_png(SEXP map) {
    hydroplot_buffer *b = NULL;
    hydroplot_status s = hydroplot_map_png(unwrap(map, "hydroplot_map"), &b);
    if (s != HYDROPLOT_OK) stop_status(s);
    return buffer_to_raw(b);
}

/* --- plot_hydro ------------------------------------------------------------ */

static SEXP field(SEXP list, const char *name) {
    SEXP names = Rf_getAttrib(list, R_NamesSymbol);
    R_xlen_t i;
    for (i = 0; i < XLENGTH(list); i++)
        if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0) return VECTOR_ELT(list, i);
    return R_NilValue;
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
    for (i = 0; i < XLENGTH(v); i++) TRY(hydroplot_plot_request_add_site(req, Rf_translateCharUTF8(STRING_ELT(v, i))));
    v = field(a, "features"); /* source1, id1, source2, id2, ... */
    for (i = 0; i + 1 < XLENGTH(v); i += 2)
        TRY(hydroplot_plot_request_add_feature(req, Rf_translateCharUTF8(STRING_ELT(v, i)),
                                               Rf_translateCharUTF8(STRING_ELT(v, i + 1))));
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
    v = field(a, "styles"); /* element1, property1, value1, ... */
    n = XLENGTH(v);
    for (i = 0; i + 2 < n; i += 3)
        TRY(hydroplot_plot_request_set_style(req, Rf_translateCharUTF8(STRING_ELT(v, i)),
                                             Rf_translateCharUTF8(STRING_ELT(v, i + 1)),
                                             Rf_translateCharUTF8(STRING_ELT(v, i + 2))));
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
#undef TRY
    return s;
}

/* Runs hydroplot_plot; returns list(layers = named GeoJSON strings,
 * bbox, warnings, map = external pointer or NULL). `map` NULL: a new map;
 * else the map to draw onto (add = TRUE). */
static SEXP r_plot(SEXP ctx_ptr, SEXP args, SEXP layers, SEXP map_ptr) {
    hydroplot_context *ctx = unwrap(ctx_ptr, "hydroplot_context");
    hydroplot_map *onto = Rf_isNull(map_ptr) ? NULL : unwrap(map_ptr, "hydroplot_map");
    hydroplot_plot_request *req = hydroplot_plot_request_new();
    hydroplot_plot_data *pd = NULL;
    hydroplot_map *taken = NULL;
    hydroplot_buffer *b = NULL;
    hydroplot_status s;
    double bbox[4];
    size_t i, nw;
    SEXP out, json, warnings, box;
    const char *names[] = {"layers", "bbox", "warnings", "map", ""};

    s = fill_request(req, args);
    if (s == HYDROPLOT_OK) s = hydroplot_plot(ctx, req, onto, &pd);
    hydroplot_plot_request_free(req);
    if (s != HYDROPLOT_OK) stop_status(s);

    out = PROTECT(Rf_mkNamed(VECSXP, names));
    json = PROTECT(Rf_allocVector(STRSXP, XLENGTH(layers)));
    for (i = 0; i < (size_t)XLENGTH(layers); i++) {
        s = hydroplot_plot_data_layer_geojson(pd, CHAR(STRING_ELT(layers, i)), &b);
        if (s != HYDROPLOT_OK) break;
        SET_STRING_ELT(json, i, Rf_mkCharLenCE((const char *)hydroplot_buffer_data(b), (int)hydroplot_buffer_len(b), CE_UTF8));
        hydroplot_buffer_free(b);
    }
    if (s == HYDROPLOT_OK) s = hydroplot_plot_data_bbox(pd, bbox);
    if (s == HYDROPLOT_OK && onto == NULL && Rf_asLogical(field(args, "actually_plot")) == TRUE)
        s = hydroplot_plot_data_take_map(pd, &taken);
    if (s != HYDROPLOT_OK) {
        hydroplot_plot_data_free(pd);
        stop_status(s);
    }
    Rf_setAttrib(json, R_NamesSymbol, layers);
    SET_VECTOR_ELT(out, 0, json);
    box = Rf_allocVector(REALSXP, 4);
    SET_VECTOR_ELT(out, 1, box);
    memcpy(REAL(box), bbox, sizeof bbox);
    nw = hydroplot_plot_data_warning_count(pd);
    warnings = Rf_allocVector(STRSXP, (R_xlen_t)nw);
    SET_VECTOR_ELT(out, 2, warnings);
    for (i = 0; i < nw; i++) SET_STRING_ELT(warnings, i, Rf_mkCharCE(hydroplot_plot_data_warning(pd, i), CE_UTF8));
    hydroplot_plot_data_free(pd);
    if (taken != NULL) SET_VECTOR_ELT(out, 3, wrap(taken, "hydroplot_map", map_finalizer));
    else if (onto != NULL) SET_VECTOR_ELT(out, 3, map_ptr);
    UNPROTECT(2);
    return out;
}

/* --- get_raindrop_trace ---------------------------------------------------- */

/* The trace from (x, y) in crs as GeoJSON text. */
static SEXP r_trace(SEXP ctx_ptr, SEXP x, SEXP y, SEXP crs, SEXP direction) {
    hydroplot_trace *t = NULL;
    hydroplot_buffer *b = NULL;
    hydroplot_status s = hydroplot_raindrop_trace(unwrap(ctx_ptr, "hydroplot_context"), Rf_asReal(x), Rf_asReal(y),
                                                  str_or_null(crs), str_or_null(direction), &t);
    if (s != HYDROPLOT_OK) stop_status(s);
    s = hydroplot_trace_geojson(t, &b);
    hydroplot_trace_free(t);
    if (s != HYDROPLOT_OK) stop_status(s);
    return buffer_to_string(b);
}

static const R_CallMethodDef call_methods[] = {
    {"hp_context_new", (DL_FUNC)&r_context_new, 1},
    {"hp_version", (DL_FUNC)&r_version, 0},
    {"hp_map_png", (DL_FUNC)&r_map_png, 1},
    {"hp_plot", (DL_FUNC)&r_plot, 4},
    {"hp_trace", (DL_FUNC)&r_trace, 5},
    {NULL, NULL, 0}};

void R_init_hydroplot(DllInfo *dll) {
    R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}
