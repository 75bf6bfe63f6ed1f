/* Every pointer argument of every function, NULL in turn: a status of
 * HYDROPLOT_ERR_NULL_ARGUMENT naming the argument, or the documented empty
 * answer, never a crash. Handles come from the mock where a real one is needed. */
#include "check.h"
#include "mock.h"

#include <stdio.h>

/* Yahara River, as in tests/data/responses/flowtrace_up_yahara.json. */
static const double TRACE_LON = -89.2158, TRACE_LAT = 42.9561;

static hydroplot_context *mock_context(const mock_server *mock) {
    hydroplot_context *ctx = NULL;
    CHECK_OK(hydroplot_context_new(&ctx));
    CHECK_OK(hydroplot_context_set_option(ctx, "retries", "0"));
    mock_configure(mock, ctx);
    return ctx;
}

static void context(void) {
    hydroplot_context *ctx = NULL;
    CHECK_FAILS(hydroplot_context_new(NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK_OK(hydroplot_context_new(&ctx));
    CHECK_FAILS(hydroplot_context_set_option(NULL, "retries", "1"), HYDROPLOT_ERR_NULL_ARGUMENT,
                "ctx");
    CHECK_FAILS(hydroplot_context_set_option(ctx, NULL, "1"), HYDROPLOT_ERR_NULL_ARGUMENT, "key");
    CHECK_FAILS(hydroplot_context_set_option(ctx, "retries", NULL), HYDROPLOT_ERR_NULL_ARGUMENT,
                "value");
    CHECK_FAILS(hydroplot_context_set_log_callback(NULL, NULL, NULL), HYDROPLOT_ERR_NULL_ARGUMENT,
                "ctx");
    CHECK_FAILS(hydroplot_context_set_progress_callback(NULL, NULL, NULL),
                HYDROPLOT_ERR_NULL_ARGUMENT, "ctx");
    hydroplot_context_free(NULL);
    hydroplot_context_free(ctx);
}

static void buffer(void) {
    CHECK(hydroplot_buffer_data(NULL) == NULL);
    CHECK(hydroplot_buffer_len(NULL) == 0);
    hydroplot_buffer_free(NULL);
}

static void trace(const hydroplot_context *ctx) {
    hydroplot_trace *t = NULL;
    hydroplot_buffer *geojson = NULL;
    int64_t comid = -1;
    double value = -1, lon_lat[2] = {0, 0}, bbox[4] = {0, 0, 0, 0};
    size_t n = 99;

    CHECK_FAILS(hydroplot_raindrop_trace(NULL, TRACE_LON, TRACE_LAT, NULL, "up", &t),
                HYDROPLOT_ERR_NULL_ARGUMENT, "ctx");
    CHECK_FAILS(hydroplot_raindrop_trace(ctx, TRACE_LON, TRACE_LAT, NULL, "up", NULL),
                HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK(t == NULL);

    /* On NULL handles, the accessors give their empty answers. */
    hydroplot_trace_free(NULL);
    CHECK(hydroplot_trace_len(NULL) == 0);
    CHECK(hydroplot_trace_id(NULL, 0) == NULL);
    CHECK(hydroplot_trace_gnis_name(NULL, 0) == NULL);
    CHECK(hydroplot_trace_reachcode(NULL, 0) == NULL);
    CHECK(!hydroplot_trace_comid(NULL, 0, &comid) && comid == -1);
    CHECK(!hydroplot_trace_raindrop_path_dist(NULL, 0, &value) && value == -1);
    CHECK(!hydroplot_trace_measure(NULL, 0, &value) && value == -1);
    CHECK(hydroplot_trace_intersection_point(NULL, 0, lon_lat) == 0);
    CHECK(hydroplot_trace_coords(NULL, 0, &n) == NULL && n == 0);
    CHECK_FAILS(hydroplot_trace_bbox(NULL, bbox), HYDROPLOT_ERR_NULL_ARGUMENT, "t");
    CHECK_FAILS(hydroplot_trace_geojson(NULL, &geojson), HYDROPLOT_ERR_NULL_ARGUMENT, "t");

    /* A real trace (NULL crs = EPSG:4326), then NULL out-parameters. */
    CHECK_OK(hydroplot_raindrop_trace(ctx, TRACE_LON, TRACE_LAT, NULL, "up", &t));
    CHECK(hydroplot_trace_len(t) == 2);
    CHECK(!hydroplot_trace_comid(t, 0, NULL));
    CHECK(!hydroplot_trace_raindrop_path_dist(t, 0, NULL));
    CHECK(!hydroplot_trace_measure(t, 0, NULL));
    CHECK(hydroplot_trace_intersection_point(t, 0, NULL) == 0);
    CHECK(hydroplot_trace_coords(t, 0, NULL) != NULL);
    CHECK_FAILS(hydroplot_trace_bbox(t, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK_FAILS(hydroplot_trace_geojson(t, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    hydroplot_trace_free(t);
}

static void trace_batch(const hydroplot_context *ctx) {
    const double xy[2] = {TRACE_LON, TRACE_LAT};
    hydroplot_trace_batch *b = NULL;

    CHECK_FAILS(hydroplot_raindrop_trace_batch(NULL, xy, 1, NULL, "up", &b),
                HYDROPLOT_ERR_NULL_ARGUMENT, "ctx");
    CHECK_FAILS(hydroplot_raindrop_trace_batch(ctx, NULL, 1, NULL, "up", &b),
                HYDROPLOT_ERR_NULL_ARGUMENT, "xy");
    CHECK_FAILS(hydroplot_raindrop_trace_batch(ctx, xy, 1, NULL, "up", NULL),
                HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK(b == NULL);

    hydroplot_trace_batch_free(NULL);
    CHECK(hydroplot_trace_batch_len(NULL) == 0);
    CHECK(hydroplot_trace_batch_status(NULL, 0) == HYDROPLOT_ERR_NULL_ARGUMENT);
    CHECK(hydroplot_trace_batch_get(NULL, 0) == NULL);
    CHECK(hydroplot_trace_batch_error(NULL, 0) == NULL);
    CHECK(hydroplot_trace_batch_http_status(NULL, 0) == 0);
}

int main(void) {
    mock_server mock;
    hydroplot_context *ctx;

    mock_start(&mock);
    ctx = mock_context(&mock);
    context();
    buffer();
    trace(ctx);
    trace_batch(ctx);
    hydroplot_context_free(ctx);
    mock_stop(&mock);
    puts("test_null_args: ok");
    return 0;
}
