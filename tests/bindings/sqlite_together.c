/* A GIS host links the system SQLite and our library into one process: both
 * work, each with its own SQLite. The host's SQLite calls must reach the
 * system library (the version its header names), not the copy bundled in
 * libhydroplot, and our GeoPackage reads must keep working while the host
 * holds its own connection to the same file.
 *
 *   sqlite_together YAHARA_SAMPLE_GPKG      (prints "ok" and exits 0) */
#include "hydroplot.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what) {
    fprintf(stderr, "sqlite_together: %s\n", what);
    return 1;
}

int main(int argc, char **argv) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    hydroplot_context *ctx = NULL;
    hydroplot_plot_request *req = NULL;
    hydroplot_plot_data *pd = NULL;
    size_t flowlines = 0;
    long long rows = -1;
    int rc = 1;

    if (argc != 2) return fail("usage: sqlite_together YAHARA_SAMPLE_GPKG");
    if (strcmp(sqlite3_libversion(), SQLITE_VERSION) != 0) {
        fprintf(stderr, "sqlite3_libversion() is %s, the system header says %s: another SQLite answered\n",
                sqlite3_libversion(), SQLITE_VERSION);
        return 1;
    }
    /* The host's connection stays open while our library reads the same file. */
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT count(*) FROM gpkg_contents", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        fprintf(stderr, "system sqlite on %s: %s\n", argv[1], sqlite3_errmsg(db));
        goto done;
    }
    rows = sqlite3_column_int64(st, 0);

    if (hydroplot_context_new(&ctx) != HYDROPLOT_OK) goto done;
    req = hydroplot_plot_request_new();
    if (hydroplot_plot_request_add_comid(req, 13293970) != HYDROPLOT_OK ||
        hydroplot_plot_request_set_hydro_data(req, argv[1]) != HYDROPLOT_OK ||
        hydroplot_plot_request_set_actually_plot(req, false) != HYDROPLOT_OK ||
        hydroplot_plot(ctx, req, NULL, &pd) != HYDROPLOT_OK ||
        hydroplot_plot_data_layer_count(pd, "flowline", &flowlines) != HYDROPLOT_OK) {
        fprintf(stderr, "hydroplot: %s\n", hydroplot_last_error());
        goto done;
    }
    if (flowlines != 251 || rows < 6) {
        fprintf(stderr, "flowlines %zu (want 251), gpkg_contents rows %lld (want >= 6)\n", flowlines, rows);
        goto done;
    }
    printf("ok: system SQLite %s (%lld tables in gpkg_contents) and hydroplot %s (%zu flowlines) in one process\n",
           sqlite3_libversion(), rows, hydroplot_version(), flowlines);
    rc = 0;
done:
    sqlite3_finalize(st);
    sqlite3_close(db);
    hydroplot_plot_data_free(pd);
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
    return rc;
}
