/* Every pointer argument of every function, NULL in turn: a status of
 * HYDROPLOT_ERR_NULL_ARGUMENT naming the argument, or the documented empty
 * answer, never a crash. Handles come from the mock where a real one is needed. */
#include "check.h"
#include "mock.h"

#include <stdio.h>
#include <stdlib.h>

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
    CHECK_FAILS(hydroplot_gpkg_index(NULL, "x.gpkg"), HYDROPLOT_ERR_NULL_ARGUMENT, "ctx");
    CHECK_FAILS(hydroplot_gpkg_index(ctx, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "path");
    CHECK_FAILS(hydroplot_gpkg_unindex(NULL, "x.gpkg"), HYDROPLOT_ERR_NULL_ARGUMENT, "ctx");
    CHECK_FAILS(hydroplot_gpkg_unindex(ctx, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "path");
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
    struct ArrowArrayStream stream = {0};
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
    CHECK_FAILS(hydroplot_trace_arrow(NULL, &stream), HYDROPLOT_ERR_NULL_ARGUMENT, "t");

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
    CHECK_FAILS(hydroplot_trace_arrow(t, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK(stream.release == NULL); /* not written on failure */
    CHECK_FAILS(hydroplot_trace_html(NULL, t, "none", &geojson), HYDROPLOT_ERR_NULL_ARGUMENT, "ctx");
    CHECK_FAILS(hydroplot_trace_html(ctx, NULL, "none", &geojson), HYDROPLOT_ERR_NULL_ARGUMENT, "t");
    CHECK_FAILS(hydroplot_trace_html(ctx, t, "none", NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK(geojson == NULL);
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

static void plot_request(void) {
    const int64_t comids[1] = {13293970};
    hydroplot_plot_request *req = hydroplot_plot_request_new();
    hydroplot_plot_data *pd = NULL;
    hydroplot_context *ctx = NULL;

    CHECK(req != NULL);
    hydroplot_plot_request_free(NULL);
    CHECK_FAILS(hydroplot_plot_request_add_comid(NULL, 1), HYDROPLOT_ERR_NULL_ARGUMENT, "req");
    CHECK_FAILS(hydroplot_plot_request_set_comid_set(NULL, comids, 1), HYDROPLOT_ERR_NULL_ARGUMENT,
                "req");
    CHECK_FAILS(hydroplot_plot_request_set_comid_set(req, NULL, 1), HYDROPLOT_ERR_NULL_ARGUMENT,
                "comids");
    CHECK_FAILS(hydroplot_plot_request_add_site(NULL, "05428500"), HYDROPLOT_ERR_NULL_ARGUMENT,
                "req");
    CHECK_FAILS(hydroplot_plot_request_add_site(req, NULL), HYDROPLOT_ERR_NULL_ARGUMENT,
                "site_id");
    CHECK_FAILS(hydroplot_plot_request_add_feature(NULL, "comid", "1"),
                HYDROPLOT_ERR_NULL_ARGUMENT, "req");
    CHECK_FAILS(hydroplot_plot_request_add_feature(req, NULL, "1"), HYDROPLOT_ERR_NULL_ARGUMENT,
                "source");
    CHECK_FAILS(hydroplot_plot_request_add_feature(req, "comid", NULL),
                HYDROPLOT_ERR_NULL_ARGUMENT, "id");
    CHECK_FAILS(hydroplot_plot_request_add_point(NULL, -89.4, 43.1, NULL),
                HYDROPLOT_ERR_NULL_ARGUMENT, "req");
    CHECK_FAILS(hydroplot_plot_request_set_bbox(NULL, -89.5, 43.0, -89.3, 43.2, NULL),
                HYDROPLOT_ERR_NULL_ARGUMENT, "req");
    CHECK_FAILS(hydroplot_plot_request_set_streamorder(NULL, 2), HYDROPLOT_ERR_NULL_ARGUMENT,
                "req");
    CHECK_FAILS(hydroplot_plot_request_set_hydro_data(NULL, "x.gpkg"), HYDROPLOT_ERR_NULL_ARGUMENT,
                "req");
    CHECK_FAILS(hydroplot_plot_request_set_hydro_data(req, NULL), HYDROPLOT_ERR_NULL_ARGUMENT,
                "gpkg_path");
    CHECK_FAILS(hydroplot_plot_request_set_gpkg(NULL, "x.gpkg"), HYDROPLOT_ERR_NULL_ARGUMENT, "req");
    CHECK_FAILS(hydroplot_plot_request_set_gpkg(req, NULL), HYDROPLOT_ERR_NULL_ARGUMENT,
                "out_path");
    CHECK_FAILS(hydroplot_plot_request_set_png_file(NULL, "x.png"), HYDROPLOT_ERR_NULL_ARGUMENT,
                "req");
    CHECK_FAILS(hydroplot_plot_request_set_png_file(req, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "path");
    CHECK_FAILS(hydroplot_plot_request_set_png_file(req, ""), HYDROPLOT_ERR_INVALID_ARGUMENT,
                "PNG file path is empty");
    CHECK_FAILS(hydroplot_plot_request_set_overwrite(NULL, true), HYDROPLOT_ERR_NULL_ARGUMENT,
                "req");
    CHECK_FAILS(hydroplot_plot_request_set_flowline_only(NULL, true), HYDROPLOT_ERR_NULL_ARGUMENT,
                "req");
    CHECK_FAILS(hydroplot_plot_request_set_style(NULL, "flowline", "col", "red"),
                HYDROPLOT_ERR_NULL_ARGUMENT, "req");
    CHECK_FAILS(hydroplot_plot_request_set_style(req, NULL, "col", "red"),
                HYDROPLOT_ERR_NULL_ARGUMENT, "element");
    CHECK_FAILS(hydroplot_plot_request_set_style(req, "flowline", NULL, "red"),
                HYDROPLOT_ERR_NULL_ARGUMENT, "property");
    CHECK_FAILS(hydroplot_plot_request_set_style(req, "flowline", "col", NULL),
                HYDROPLOT_ERR_NULL_ARGUMENT, "value");
    CHECK_FAILS(hydroplot_plot_request_set_basemap(NULL, "none"), HYDROPLOT_ERR_NULL_ARGUMENT,
                "req");
    CHECK_FAILS(hydroplot_plot_request_set_basemap(req, NULL), HYDROPLOT_ERR_NULL_ARGUMENT,
                "provider");
    CHECK_FAILS(hydroplot_plot_request_set_zoom(NULL, 10), HYDROPLOT_ERR_NULL_ARGUMENT, "req");
    CHECK_FAILS(hydroplot_plot_request_set_size(NULL, 64, 64), HYDROPLOT_ERR_NULL_ARGUMENT, "req");
    CHECK_FAILS(hydroplot_plot_request_set_actually_plot(NULL, false), HYDROPLOT_ERR_NULL_ARGUMENT,
                "req");
    CHECK_FAILS(hydroplot_plot_request_set_cache_file(NULL, "c.json"), HYDROPLOT_ERR_NULL_ARGUMENT,
                "req");
    CHECK_FAILS(hydroplot_plot_request_set_cache_file(req, NULL), HYDROPLOT_ERR_NULL_ARGUMENT,
                "path");
    CHECK_FAILS(hydroplot_plot_request_disable_cache(NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "req");

    CHECK_OK(hydroplot_context_new(&ctx));
    CHECK_FAILS(hydroplot_plot(NULL, req, NULL, &pd), HYDROPLOT_ERR_NULL_ARGUMENT, "ctx");
    CHECK_FAILS(hydroplot_plot(ctx, NULL, NULL, &pd), HYDROPLOT_ERR_NULL_ARGUMENT, "req");
    CHECK_FAILS(hydroplot_plot(ctx, req, NULL, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK(pd == NULL);
    hydroplot_context_free(ctx);
    hydroplot_plot_request_free(req);
}

/* Plot data of the bundled Yahara sample: local, no request at all. */
static hydroplot_plot_data *sample_plot(const hydroplot_context *ctx) {
    const char *data = getenv("HYDROPLOT_TEST_DATA");
    char gpkg[1024];
    hydroplot_plot_request *req = hydroplot_plot_request_new();
    hydroplot_plot_data *pd = NULL;

    CHECK(data != NULL);
    CHECK(snprintf(gpkg, sizeof gpkg, "%s/yahara_sample.gpkg", data) < (int)sizeof gpkg);
    CHECK_OK(hydroplot_plot_request_add_comid(req, 13293970));
    CHECK_OK(hydroplot_plot_request_set_hydro_data(req, gpkg));
    CHECK_OK(hydroplot_plot_request_set_basemap(req, "none"));
    CHECK_OK(hydroplot_plot_request_set_size(req, 128, 96));
    CHECK_OK(hydroplot_plot_request_disable_cache(req));
    CHECK_OK(hydroplot_plot(ctx, req, NULL, &pd));
    hydroplot_plot_request_free(req);
    return pd;
}

static void plot_data_and_map(const hydroplot_context *ctx) {
    static const char point[] = "{\"type\":\"Point\",\"coordinates\":[-89.4,43.1]}";
    hydroplot_plot_data *pd = sample_plot(ctx);
    hydroplot_buffer *buf = NULL;
    struct ArrowArrayStream stream = {0};
    hydroplot_map *map = NULL;
    hydroplot_trace *t = NULL;
    const int64_t *comids = NULL;
    double bbox[4];
    size_t n = 0;

    hydroplot_plot_data_free(NULL);
    CHECK_FAILS(hydroplot_plot_data_layer_count(NULL, "flowline", &n), HYDROPLOT_ERR_NULL_ARGUMENT,
                "pd");
    CHECK_FAILS(hydroplot_plot_data_layer_count(pd, NULL, &n), HYDROPLOT_ERR_NULL_ARGUMENT,
                "layer");
    CHECK_FAILS(hydroplot_plot_data_layer_count(pd, "flowline", NULL), HYDROPLOT_ERR_NULL_ARGUMENT,
                "n");
    CHECK_FAILS(hydroplot_plot_data_layer_geojson(NULL, "flowline", &buf),
                HYDROPLOT_ERR_NULL_ARGUMENT, "pd");
    CHECK_FAILS(hydroplot_plot_data_layer_geojson(pd, NULL, &buf), HYDROPLOT_ERR_NULL_ARGUMENT,
                "layer");
    CHECK_FAILS(hydroplot_plot_data_layer_geojson(pd, "flowline", NULL),
                HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK_FAILS(hydroplot_plot_data_layer_arrow(NULL, "flowline", &stream),
                HYDROPLOT_ERR_NULL_ARGUMENT, "pd");
    CHECK_FAILS(hydroplot_plot_data_layer_arrow(pd, NULL, &stream), HYDROPLOT_ERR_NULL_ARGUMENT,
                "layer");
    CHECK_FAILS(hydroplot_plot_data_layer_arrow(pd, "flowline", NULL),
                HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK(stream.release == NULL); /* not written on failure */
    CHECK_FAILS(hydroplot_plot_data_flowline_comids(NULL, &comids, &n), HYDROPLOT_ERR_NULL_ARGUMENT,
                "pd");
    CHECK_FAILS(hydroplot_plot_data_flowline_comids(pd, NULL, &n), HYDROPLOT_ERR_NULL_ARGUMENT,
                "comids");
    CHECK_FAILS(hydroplot_plot_data_flowline_comids(pd, &comids, NULL), HYDROPLOT_ERR_NULL_ARGUMENT,
                "n");
    CHECK_FAILS(hydroplot_plot_data_bbox(NULL, bbox), HYDROPLOT_ERR_NULL_ARGUMENT, "pd");
    CHECK_FAILS(hydroplot_plot_data_bbox(pd, NULL), HYDROPLOT_ERR_NULL_ARGUMENT,
                "out_xmin_ymin_xmax_ymax");
    CHECK_FAILS(hydroplot_plot_data_png(NULL, &buf), HYDROPLOT_ERR_NULL_ARGUMENT, "pd");
    CHECK_FAILS(hydroplot_plot_data_png(pd, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK_FAILS(hydroplot_plot_data_html(NULL, &buf), HYDROPLOT_ERR_NULL_ARGUMENT, "pd");
    CHECK_FAILS(hydroplot_plot_data_html(pd, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK_FAILS(hydroplot_plot_data_html_ex(NULL, false, &buf), HYDROPLOT_ERR_NULL_ARGUMENT, "pd");
    CHECK_FAILS(hydroplot_plot_data_html_ex(pd, false, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK_FAILS(hydroplot_plot_data_take_map(NULL, &map), HYDROPLOT_ERR_NULL_ARGUMENT, "pd");
    CHECK_FAILS(hydroplot_plot_data_take_map(pd, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK(hydroplot_plot_data_warning_count(NULL) == 0);
    CHECK(hydroplot_plot_data_warning(NULL, 0) == NULL);
    CHECK(buf == NULL && map == NULL && comids == NULL);

    /* The map drawn by the plot, then every map function. */
    CHECK_OK(hydroplot_plot_data_take_map(pd, &map));
    CHECK(map != NULL);
    hydroplot_map_free(NULL);
    CHECK_FAILS(hydroplot_map_new(NULL, -89.5, 43.0, -89.3, 43.2, NULL, 64, 64, "none", &map),
                HYDROPLOT_ERR_NULL_ARGUMENT, "ctx");
    CHECK_FAILS(hydroplot_map_new(ctx, -89.5, 43.0, -89.3, 43.2, NULL, 64, 64, "none", NULL),
                HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK_FAILS(hydroplot_map_add_geojson(NULL, point, strlen(point), NULL, NULL, NULL, 1.0),
                HYDROPLOT_ERR_NULL_ARGUMENT, "map");
    CHECK_FAILS(hydroplot_map_add_geojson(map, NULL, strlen(point), NULL, NULL, NULL, 1.0),
                HYDROPLOT_ERR_NULL_ARGUMENT, "geojson");
    CHECK_FAILS(hydroplot_map_add_point(NULL, -89.4, 43.1, NULL, 19, "red", 1.0),
                HYDROPLOT_ERR_NULL_ARGUMENT, "map");
    CHECK_FAILS(hydroplot_map_add_point(map, -89.4, 43.1, NULL, 19, NULL, 1.0),
                HYDROPLOT_ERR_NULL_ARGUMENT, "col");
    CHECK_FAILS(hydroplot_map_add_trace(NULL, t, "red", "black", 1.0), HYDROPLOT_ERR_NULL_ARGUMENT,
                "map");
    CHECK_FAILS(hydroplot_map_add_trace(map, NULL, "red", "black", 1.0),
                HYDROPLOT_ERR_NULL_ARGUMENT, "t");
    CHECK_FAILS(hydroplot_map_png(NULL, &buf), HYDROPLOT_ERR_NULL_ARGUMENT, "map");
    CHECK_FAILS(hydroplot_map_png(map, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK_FAILS(hydroplot_map_write_png(NULL, "x.png"), HYDROPLOT_ERR_NULL_ARGUMENT, "map");
    CHECK_FAILS(hydroplot_map_write_png(map, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "path");
    {
        double bounds[4] = {0, 0, 0, 0};
        CHECK_FAILS(hydroplot_map_bounds(NULL, bounds), HYDROPLOT_ERR_NULL_ARGUMENT, "map");
        CHECK_FAILS(hydroplot_map_bounds(map, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "bounds");
        CHECK(bounds[0] == 0 && bounds[3] == 0);
        CHECK_FAILS(hydroplot_map_write_world_file(NULL, "x.png"), HYDROPLOT_ERR_NULL_ARGUMENT, "map");
        CHECK_FAILS(hydroplot_map_write_world_file(map, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "png_path");
    }

    /* A trace handle for the trace colours' NULL checks. */
    CHECK_OK(hydroplot_raindrop_trace(ctx, TRACE_LON, TRACE_LAT, NULL, "up", &t));
    CHECK_FAILS(hydroplot_map_add_trace(map, t, NULL, "black", 1.0), HYDROPLOT_ERR_NULL_ARGUMENT,
                "flowline_col");
    CHECK_FAILS(hydroplot_map_add_trace(map, t, "red", NULL, 1.0), HYDROPLOT_ERR_NULL_ARGUMENT,
                "trace_col");
    CHECK(buf == NULL);

    /* The trace map: ctx, t and out; crs and basemap may be NULL. */
    {
        hydroplot_map *tm = NULL;
        CHECK_FAILS(hydroplot_trace_map(NULL, t, TRACE_LON, TRACE_LAT, NULL, 64, 64, "none", &tm),
                    HYDROPLOT_ERR_NULL_ARGUMENT, "ctx");
        CHECK_FAILS(hydroplot_trace_map(ctx, NULL, TRACE_LON, TRACE_LAT, NULL, 64, 64, "none", &tm),
                    HYDROPLOT_ERR_NULL_ARGUMENT, "t");
        CHECK_FAILS(hydroplot_trace_map(ctx, t, TRACE_LON, TRACE_LAT, NULL, 64, 64, "none", NULL),
                    HYDROPLOT_ERR_NULL_ARGUMENT, "out");
        CHECK(tm == NULL);
    }

    hydroplot_trace_free(t);
    hydroplot_map_free(map);
    hydroplot_plot_data_free(pd);
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
    plot_request();
    plot_data_and_map(ctx);
    hydroplot_context_free(ctx);
    mock_stop(&mock);
    puts("test_null_args: ok");
    return 0;
}
