/* Many points at once: hydroplot_comid_lookup from the fabric service and
 * from a local GeoPackage: per-point results, progress, ownership. */
#include "check.h"
#include "mock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* A point in the catchment of comid 13293970 (shapely's representative
 * point of that polygon in tests/data/yahara_sample.gpkg), a point in the
 * Pacific, and a point that is not finite. */
static const double POINTS[6] = {-89.30492301879852, 43.0088104217879, -125.0, 35.0, 0.0, HUGE_VAL};

typedef struct {
    int progress;
    char last_stage[32];
    uint64_t last_done, last_total;
} seen;

static void on_progress(void *user, const char *stage, uint64_t done, uint64_t total) {
    seen *s = (seen *)user;
    s->progress++;
    snprintf(s->last_stage, sizeof s->last_stage, "%s", stage);
    s->last_done = done;
    s->last_total = total;
}

static void check_lookup(const hydroplot_comid_batch *b) {
    CHECK(hydroplot_comid_batch_len(b) == 3);
    CHECK(hydroplot_comid_batch_status(b, 0) == HYDROPLOT_OK);
    CHECK(hydroplot_comid_batch_get(b, 0) == 13293970);
    CHECK(hydroplot_comid_batch_error(b, 0) == NULL);
    /* In no catchment: looked up, no comid. */
    CHECK(hydroplot_comid_batch_status(b, 1) == HYDROPLOT_OK);
    CHECK(hydroplot_comid_batch_get(b, 1) == 0);
    /* Not a number: that point alone fails. */
    CHECK(hydroplot_comid_batch_status(b, 2) == HYDROPLOT_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hydroplot_comid_batch_error(b, 2), "finite") != NULL);
    CHECK(hydroplot_comid_batch_status(b, 3) == HYDROPLOT_ERR_INVALID_ARGUMENT);
}

static void comid_lookup(void) {
    mock_server mock;
    seen s;
    hydroplot_context *ctx = NULL;
    hydroplot_comid_batch *b = NULL;
    char gpkg[1024];
    const char *data = getenv("HYDROPLOT_TEST_DATA");

    CHECK(data != NULL);
    snprintf(gpkg, sizeof gpkg, "%s/yahara_sample.gpkg", data);
    memset(&s, 0, sizeof s);
    mock_start(&mock);
    CHECK_OK(hydroplot_context_new(&ctx));
    mock_configure(&mock, ctx);
    CHECK_OK(hydroplot_context_set_progress_callback(ctx, on_progress, &s));

    CHECK_OK(hydroplot_comid_lookup(ctx, POINTS, 3, NULL, NULL, &b));
    check_lookup(b);
    CHECK(strcmp(s.last_stage, "comid") == 0 && s.last_done == 2 && s.last_total == 2);
    hydroplot_comid_batch_free(b);

    b = NULL;
    CHECK_OK(hydroplot_comid_lookup(ctx, POINTS, 3, "EPSG:4326", gpkg, &b));
    check_lookup(b);
    CHECK(s.last_done == 3 && s.last_total == 3);
    hydroplot_comid_batch_free(b);

    /* Errors of the whole call leave *out alone. */
    b = NULL;
    CHECK_FAILS(hydroplot_comid_lookup(ctx, POINTS, 1, "EPSG:999999", NULL, &b), HYDROPLOT_ERR_CRS,
                "999999");
    CHECK_FAILS(hydroplot_comid_lookup(ctx, NULL, 1, NULL, NULL, &b), HYDROPLOT_ERR_NULL_ARGUMENT,
                "xy");
    CHECK(b == NULL);
    CHECK_OK(hydroplot_comid_lookup(ctx, NULL, 0, NULL, NULL, &b));
    CHECK(hydroplot_comid_batch_len(b) == 0);
    hydroplot_comid_batch_free(b);
    hydroplot_comid_batch_free(NULL);
    CHECK(hydroplot_comid_batch_len(NULL) == 0 && hydroplot_comid_batch_get(NULL, 0) == 0);

    hydroplot_context_free(ctx);
    mock_stop(&mock);
}

int main(void) {
    comid_lookup();
    puts("test_batch: ok");
    return 0;
}
