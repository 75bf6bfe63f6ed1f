/* plot_hydro through the C API against the mock: real Yahara numbers. */
#include "check.h"
#include "mock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mock_server mock;

static hydroplot_context *mock_context(void) {
    hydroplot_context *ctx = NULL;
    CHECK_OK(hydroplot_context_new(&ctx));
    mock_configure(&mock, ctx);
    return ctx;
}

static size_t count(const hydroplot_plot_data *pd, const char *layer) {
    size_t n = 0;
    CHECK_OK(hydroplot_plot_data_layer_count(pd, layer, &n));
    return n;
}

/* Counts occurrences of `needle` in a buffer. */
static size_t occurrences(const hydroplot_buffer *b, const char *needle) {
    const char *p = (const char *)hydroplot_buffer_data(b);
    size_t len = hydroplot_buffer_len(b), nlen = strlen(needle), n = 0, i;
    for (i = 0; i + nlen <= len; i++)
        if (memcmp(p + i, needle, nlen) == 0) n++;
    return n;
}

static void upstream_of_a_comid(hydroplot_context *ctx) {
    hydroplot_plot_request *req = hydroplot_plot_request_new();
    hydroplot_plot_data *pd = NULL;
    hydroplot_buffer *geojson = NULL;
    const int64_t *comids = NULL;
    size_t n = 0, i;
    int has_outlet = 0;
    double bbox[4];

    CHECK_OK(hydroplot_plot_request_add_comid(req, 13293970));
    CHECK_OK(hydroplot_plot_request_set_actually_plot(req, false));
    CHECK_OK(hydroplot_plot(ctx, req, NULL, &pd));
    CHECK(count(pd, "flowline") == 251);
    CHECK(count(pd, "catchment") == 250);
    CHECK(count(pd, "basin") == 1);
    CHECK(count(pd, "outlets") == 1);
    CHECK(count(pd, "network_wtbd") + count(pd, "off_network_wtbd") > 100);
    CHECK_OK(hydroplot_plot_data_flowline_comids(pd, &comids, &n));
    CHECK(n == 251);
    for (i = 0; i < n; i++) has_outlet |= comids[i] == 13293970;
    CHECK(has_outlet);
    CHECK_OK(hydroplot_plot_data_bbox(pd, bbox));
    CHECK(bbox[0] < -89.5 && bbox[2] > -89.3 && bbox[1] > 42.9 && bbox[3] < 43.4);
    CHECK_OK(hydroplot_plot_data_layer_geojson(pd, "flowline", &geojson));
    CHECK(occurrences(geojson, "\"type\":\"Feature\"") == 251);
    CHECK(occurrences(geojson, "\"comid\":13293970") == 1);
    /* Not plotted: no PNG, a clear status. */
    CHECK_FAILS(hydroplot_plot_data_png(pd, &(hydroplot_buffer *){NULL}), HYDROPLOT_ERR_RENDER, "not plotted");
    CHECK_FAILS(hydroplot_plot_data_layer_count(pd, "rivers", &n), HYDROPLOT_ERR_INVALID_ARGUMENT, "rivers");
    hydroplot_buffer_free(geojson);
    hydroplot_plot_data_free(pd);
    hydroplot_plot_request_free(req);
}

static void a_site_and_a_map(hydroplot_context *ctx) {
    hydroplot_plot_request *req = hydroplot_plot_request_new();
    hydroplot_plot_data *pd = NULL;
    hydroplot_buffer *png = NULL;
    static const unsigned char magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

    CHECK_OK(hydroplot_plot_request_add_site(req, "05429500"));
    CHECK_OK(hydroplot_plot_request_set_size(req, 400, 300));
    CHECK_OK(hydroplot_plot_request_disable_cache(req));
    CHECK_OK(hydroplot_plot(ctx, req, NULL, &pd));
    CHECK(count(pd, "outlets") == 1);
    CHECK(count(pd, "flowline") > 10);
    CHECK_OK(hydroplot_plot_data_png(pd, &png));
    CHECK(hydroplot_buffer_len(png) > 1000);
    CHECK(memcmp(hydroplot_buffer_data(png), magic, 8) == 0);
    hydroplot_buffer_free(png);
    hydroplot_plot_data_free(pd);
    hydroplot_plot_request_free(req);
}

static void the_comid_set_and_errors(hydroplot_context *ctx) {
    static const int64_t set[3] = {13293970, 13294312, 13293454};
    hydroplot_plot_request *req = hydroplot_plot_request_new();
    hydroplot_plot_data *pd = NULL;

    CHECK_OK(hydroplot_plot_request_set_comid_set(req, set, 3));
    CHECK_OK(hydroplot_plot_request_set_actually_plot(req, false));
    CHECK_OK(hydroplot_plot(ctx, req, NULL, &pd));
    CHECK(count(pd, "flowline") == 3);
    hydroplot_plot_data_free(pd);
    pd = NULL;
    hydroplot_plot_request_free(req);

    /* Unknown comid: the index service's 404. */
    req = hydroplot_plot_request_new();
    CHECK_OK(hydroplot_plot_request_add_comid(req, 1));
    CHECK_FAILS(hydroplot_plot(ctx, req, NULL, &pd), HYDROPLOT_ERR_NOT_FOUND, "comid/1");
    CHECK(hydroplot_last_http_status() == 404);
    CHECK(pd == NULL);
    /* Outlets and bbox together; neither. */
    CHECK_OK(hydroplot_plot_request_set_bbox(req, -89.5, 43.0, -89.3, 43.1, "EPSG:4269"));
    CHECK_FAILS(hydroplot_plot(ctx, req, NULL, &pd), HYDROPLOT_ERR_INVALID_ARGUMENT, "both");
    hydroplot_plot_request_free(req);
    req = hydroplot_plot_request_new();
    CHECK_FAILS(hydroplot_plot(ctx, req, NULL, &pd), HYDROPLOT_ERR_INVALID_ARGUMENT, "neither");
    /* Bad values fail where they are set. */
    CHECK_FAILS(hydroplot_plot_request_set_bbox(req, 1, 1, 0, 0, NULL), HYDROPLOT_ERR_INVALID_ARGUMENT, "bbox");
    CHECK_FAILS(hydroplot_plot_request_set_gpkg(req, "out.shp"), HYDROPLOT_ERR_INVALID_ARGUMENT, ".gpkg");
    CHECK_FAILS(hydroplot_plot_request_set_streamorder(req, 0), HYDROPLOT_ERR_INVALID_ARGUMENT, "stream order");
    CHECK_FAILS(hydroplot_plot_request_set_basemap(req, "Stamen.Watercolor"), HYDROPLOT_ERR_INVALID_ARGUMENT,
                "Stamen.Watercolor");
    CHECK_FAILS(hydroplot_plot_request_set_style(req, "flowline", "col", "notacolour"),
                HYDROPLOT_ERR_INVALID_ARGUMENT, "notacolour");
    CHECK_FAILS(hydroplot_plot_request_add_point(req, 0.0, 0.0, "EPSG:999999"), HYDROPLOT_ERR_CRS, "999999");
    hydroplot_plot_request_free(req);
}

static void local_data_needs_no_service(void) {
    hydroplot_context *ctx = NULL;
    hydroplot_plot_request *req = hydroplot_plot_request_new();
    hydroplot_plot_data *pd = NULL;
    char path[1024];
    const char *data = getenv("HYDROPLOT_TEST_DATA");

    CHECK(data != NULL);
    snprintf(path, sizeof path, "%s/yahara_sample.gpkg", data);
    CHECK_OK(hydroplot_context_new(&ctx));
    CHECK_OK(hydroplot_context_set_option(ctx, "index_url", "http://127.0.0.1:9/nldi"));
    CHECK_OK(hydroplot_context_set_option(ctx, "fabric_url", "http://127.0.0.1:9/fabric"));
    CHECK_OK(hydroplot_plot_request_set_hydro_data(req, path));
    CHECK_OK(hydroplot_plot_request_set_bbox(req, -89.56684, 42.99816, -89.24681, 43.17192, "EPSG:4269"));
    CHECK_OK(hydroplot_plot_request_set_streamorder(req, 2));
    CHECK_OK(hydroplot_plot_request_set_actually_plot(req, false));
    CHECK_OK(hydroplot_plot(ctx, req, NULL, &pd));
    CHECK(count(pd, "flowline") == 76);
    CHECK(count(pd, "network_wtbd") == 10);
    CHECK(count(pd, "off_network_wtbd") == 43);
    hydroplot_plot_data_free(pd);
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
}

int main(void) {
    hydroplot_context *ctx;
    mock_start(&mock);
    ctx = mock_context();
    upstream_of_a_comid(ctx);
    a_site_and_a_map(ctx);
    the_comid_set_and_errors(ctx);
    local_data_needs_no_service();
    hydroplot_context_free(ctx);
    mock_stop(&mock);
    puts("test_plot: ok");
    return 0;
}
