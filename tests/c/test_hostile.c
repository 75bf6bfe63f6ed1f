/* Hostile and silly input from a C host (issue 8): invalid UTF-8, non-finite
 * coordinates, inverted and world-sized boxes, a million outlets, huge and
 * deeply nested GeoJSON, tile templates with path tricks. Each call ends in
 * its documented status with a message; none crashes, hangs or exhausts
 * memory. (NULL in every pointer position: test_null_args.c.) */
#include "check.h"
#include "mock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char BAD_UTF8[] = "USGS-\xff\xfe" "05427718";

static hydroplot_context *mock_context(const mock_server *mock) {
    hydroplot_context *ctx = NULL;
    CHECK_OK(hydroplot_context_new(&ctx));
    CHECK_OK(hydroplot_context_set_option(ctx, "retries", "0"));
    mock_configure(mock, ctx);
    return ctx;
}

static void invalid_utf8(hydroplot_context *ctx) {
    hydroplot_plot_request *req = hydroplot_plot_request_new();
    hydroplot_trace *t = NULL;
    CHECK_FAILS(hydroplot_context_set_option(ctx, "user_agent", BAD_UTF8),
                HYDROPLOT_ERR_INVALID_ARGUMENT, "UTF-8");
    CHECK_FAILS(hydroplot_context_set_option(ctx, BAD_UTF8, "1"), HYDROPLOT_ERR_INVALID_ARGUMENT,
                "UTF-8");
    CHECK_FAILS(hydroplot_plot_request_add_site(req, BAD_UTF8), HYDROPLOT_ERR_INVALID_ARGUMENT,
                "UTF-8");
    CHECK_FAILS(hydroplot_plot_request_set_gpkg(req, BAD_UTF8), HYDROPLOT_ERR_INVALID_ARGUMENT,
                "UTF-8");
    CHECK_FAILS(hydroplot_plot_request_set_png_file(req, BAD_UTF8), HYDROPLOT_ERR_INVALID_ARGUMENT,
                "UTF-8");
    CHECK_FAILS(hydroplot_raindrop_trace(ctx, -89.2, 43.0, NULL, BAD_UTF8, &t),
                HYDROPLOT_ERR_INVALID_ARGUMENT, "UTF-8");
    CHECK(t == NULL);
    hydroplot_plot_request_free(req);
}

static void non_finite_points_and_bad_boxes(hydroplot_context *ctx) {
    hydroplot_plot_request *req = hydroplot_plot_request_new();
    hydroplot_trace *t = NULL;
    hydroplot_trace_batch *batch = NULL;
    const double xy[] = {NAN, 43.0, -89.2158, 42.9561, INFINITY, -INFINITY};
    CHECK_FAILS(hydroplot_plot_request_add_point(req, NAN, 43.0, NULL),
                HYDROPLOT_ERR_INVALID_ARGUMENT, "finite");
    CHECK_FAILS(hydroplot_raindrop_trace(ctx, -89.2, INFINITY, NULL, NULL, &t),
                HYDROPLOT_ERR_INVALID_ARGUMENT, "finite");
    CHECK_FAILS(hydroplot_plot_request_set_bbox(req, -89.2, 42.9, -89.5, 43.1, NULL),
                HYDROPLOT_ERR_INVALID_ARGUMENT, "bbox");
    CHECK_FAILS(hydroplot_plot_request_set_bbox(req, -89.5, 42.9, -89.2, NAN, NULL),
                HYDROPLOT_ERR_INVALID_ARGUMENT, "bbox");
    /* One bad point in a batch fails alone. */
    CHECK_OK(hydroplot_raindrop_trace_batch(ctx, xy, 3, NULL, "up", &batch));
    CHECK(hydroplot_trace_batch_len(batch) == 3);
    CHECK(hydroplot_trace_batch_status(batch, 0) == HYDROPLOT_ERR_INVALID_ARGUMENT);
    CHECK(hydroplot_trace_batch_status(batch, 1) == HYDROPLOT_OK);
    CHECK(hydroplot_trace_batch_status(batch, 2) == HYDROPLOT_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hydroplot_trace_batch_error(batch, 0), "finite") != NULL);
    hydroplot_trace_batch_free(batch);
    hydroplot_plot_request_free(req);
}

/* A trace borrowed from a batch, freed by mistake with hydroplot_trace_free:
 * a no-op (the batch still owns it), so the trace stays readable and the
 * batch frees it once (valgrind_test_hostile sees no invalid free). */
static void freeing_a_borrowed_trace_is_a_no_op(hydroplot_context *ctx) {
    hydroplot_trace_batch *batch = NULL;
    const double xy[] = {-89.2158, 42.9561};
    const hydroplot_trace *t;
    hydroplot_buffer *geojson = NULL;
    CHECK_OK(hydroplot_raindrop_trace_batch(ctx, xy, 1, NULL, "up", &batch));
    t = hydroplot_trace_batch_get(batch, 0);
    CHECK(t != NULL);
    hydroplot_trace_free((hydroplot_trace *)t);
    hydroplot_trace_free((hydroplot_trace *)t);
    CHECK(hydroplot_trace_batch_get(batch, 0) == t);
    CHECK(hydroplot_trace_len(t) == 2);
    CHECK(strcmp(hydroplot_trace_id(t, 1), "raindropPath") == 0);
    CHECK_OK(hydroplot_trace_geojson(t, &geojson));
    CHECK(hydroplot_buffer_len(geojson) > 0);
    hydroplot_buffer_free(geojson);
    hydroplot_trace_batch_free(batch);
}

static void world_bbox_stops_at_max_features(hydroplot_context *ctx) {
    hydroplot_plot_request *req = hydroplot_plot_request_new();
    hydroplot_plot_data *pd = NULL;
    CHECK_OK(hydroplot_context_set_option(ctx, "max_features", "1000"));
    CHECK_OK(hydroplot_plot_request_set_bbox(req, -180, -90, 180, 90, NULL));
    CHECK_OK(hydroplot_plot_request_set_actually_plot(req, false));
    CHECK_FAILS(hydroplot_plot(ctx, req, NULL, &pd), HYDROPLOT_ERR_LIMIT, "max_features (1000)");
    CHECK(pd == NULL);
    CHECK_OK(hydroplot_context_set_option(ctx, "max_features", "1000000"));
    hydroplot_plot_request_free(req);
}

static void a_million_outlets_is_a_limit(hydroplot_context *ctx) {
    hydroplot_plot_request *req = hydroplot_plot_request_new();
    hydroplot_plot_data *pd = NULL;
    int64_t comid;
    for (comid = 1; comid <= 1000000; comid++) CHECK_OK(hydroplot_plot_request_add_comid(req, comid));
    CHECK_FAILS(hydroplot_plot(ctx, req, NULL, &pd), HYDROPLOT_ERR_LIMIT, "1000000 outlets");
    CHECK(pd == NULL);
    hydroplot_plot_request_free(req);
}

static void huge_and_nested_geojson(hydroplot_context *ctx) {
    const size_t depth = 200000;
    char *nested = malloc(2 * depth + 1);
    hydroplot_map *map = NULL;
    CHECK(nested != NULL);
    memset(nested, '[', depth);
    memset(nested + depth, ']', depth);
    nested[2 * depth] = '\0';
    CHECK_OK(hydroplot_map_new(ctx, -89.5, 42.9, -89.2, 43.1, NULL, 64, 64, "none", &map));
    CHECK_STATUS(hydroplot_map_add_geojson(map, nested, 2 * depth, NULL, NULL, NULL, 1.0),
                 HYDROPLOT_ERR_INVALID_ARGUMENT);
    /* Not JSON at all, and a length that stops inside a string. */
    CHECK_STATUS(hydroplot_map_add_geojson(map, BAD_UTF8, strlen(BAD_UTF8), NULL, NULL, NULL, 1.0),
                 HYDROPLOT_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hydroplot_map_add_geojson(map, "{\"type\":\"Po", 11, NULL, NULL, NULL, 1.0),
                 HYDROPLOT_ERR_INVALID_ARGUMENT);
    /* A map larger than any screen is refused before allocating. */
    hydroplot_map_free(map);
    map = NULL;
    CHECK_STATUS(hydroplot_map_new(ctx, -89.5, 42.9, -89.2, 43.1, NULL, 200000, 200000, "none", &map),
                 HYDROPLOT_ERR_INVALID_ARGUMENT);
    CHECK(map == NULL);
    free(nested);
}

static void tile_templates_with_path_tricks(hydroplot_context *ctx) {
    static const char *const templates[] = {
        "file:///etc/{z}/{x}/{y}", "/etc/passwd/{z}/{x}/{y}", "http:///{z}/{x}/{y}",
        "http://h/{z}/{x}", "http://h/{z}/{x}/{y}\n.png",
    };
    size_t i;
    hydroplot_plot_request *req = hydroplot_plot_request_new();
    for (i = 0; i < sizeof templates / sizeof templates[0]; i++)
        CHECK_FAILS(hydroplot_context_set_option(ctx, "tile_url", templates[i]),
                    HYDROPLOT_ERR_INVALID_ARGUMENT, "tile_url");
    CHECK_STATUS(hydroplot_plot_request_set_basemap(req, "../../etc/passwd"),
                 HYDROPLOT_ERR_INVALID_ARGUMENT);
    hydroplot_plot_request_free(req);
}

int main(void) {
    mock_server mock;
    hydroplot_context *ctx;
    mock_start(&mock);
    ctx = mock_context(&mock);
    invalid_utf8(ctx);
    non_finite_points_and_bad_boxes(ctx);
    freeing_a_borrowed_trace_is_a_no_op(ctx);
    world_bbox_stops_at_max_features(ctx);
    a_million_outlets_is_a_limit(ctx);
    huge_and_nested_geojson(ctx);
    tile_templates_with_path_tricks(ctx);
    hydroplot_context_free(ctx);
    mock_stop(&mock);
    printf("test_hostile: ok\n");
    return 0;
}
