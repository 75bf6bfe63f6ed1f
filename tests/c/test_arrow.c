/* The Arrow C streams of every layer of the Yahara sample and of a trace,
 * read with nothing but the C structs of the header: schema, GeoArrow
 * metadata, row counts (the published figures), values, and that each stream
 * outlives the handle it came from. Under valgrind in CI: every schema, array
 * and stream is released. */
#include "check.h"
#include "mock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mock_server mock;

/* A stream's schema and every batch, kept until `table_release`. */
typedef struct {
    struct ArrowSchema schema;
    struct ArrowArray batches[8];
    int n_batches;
    int64_t rows;
} table;

static void table_read(struct ArrowArrayStream *stream, table *t) {
    memset(t, 0, sizeof *t);
    CHECK(stream->release != NULL);
    CHECK(stream->get_schema(stream, &t->schema) == 0);
    CHECK(strcmp(t->schema.format, "+s") == 0);
    for (;;) {
        struct ArrowArray batch;
        CHECK(stream->get_next(stream, &batch) == 0);
        if (batch.release == NULL) break; /* the end */
        CHECK(t->n_batches < 8);
        CHECK(batch.n_children == t->schema.n_children);
        t->rows += batch.length;
        t->batches[t->n_batches++] = batch;
    }
    stream->release(stream);
    CHECK(stream->release == NULL);
}

static void table_release(table *t) {
    int i;
    for (i = 0; i < t->n_batches; i++) t->batches[i].release(&t->batches[i]);
    t->schema.release(&t->schema);
    CHECK(t->schema.release == NULL);
}

/* The index of the column called `name`, -1 when there is none. */
static int column(const table *t, const char *name) {
    int64_t i;
    for (i = 0; i < t->schema.n_children; i++)
        if (strcmp(t->schema.children[i]->name, name) == 0) return (int)i;
    return -1;
}

/* The value of `key` in Arrow's binary metadata (int32 count, then int32
 * length and bytes of each key and value), copied into `out`; 0 when absent. */
static int metadata_value(const char *metadata, const char *key, char *out, size_t size) {
    int32_t n, i, len;
    const char *p = metadata;
    if (p == NULL) return 0;
    memcpy(&n, p, 4);
    p += 4;
    for (i = 0; i < n; i++) {
        int match;
        memcpy(&len, p, 4);
        p += 4;
        match = (size_t)len == strlen(key) && memcmp(p, key, (size_t)len) == 0;
        p += len;
        memcpy(&len, p, 4);
        p += 4;
        if (match) {
            CHECK((size_t)len < size);
            memcpy(out, p, (size_t)len);
            out[len] = '\0';
            return 1;
        }
        p += len;
    }
    return 0;
}

/* The geometry column: first, binary, GeoArrow WKB in `crs` ("EPSG:<code>"),
 * given as PROJJSON whose id is that code. */
static void check_geometry_field(const table *t, const char *crs) {
    char value[4096], id[96];
    const struct ArrowSchema *g = t->schema.children[0];
    CHECK(strncmp(crs, "EPSG:", 5) == 0);
    snprintf(id, sizeof id, "\"id\":{\"authority\":\"EPSG\",\"code\":%s}", crs + 5);
    CHECK(strcmp(g->name, "geometry") == 0);
    CHECK(strcmp(g->format, "z") == 0);
    CHECK(metadata_value(g->metadata, "ARROW:extension:name", value, sizeof value));
    CHECK(strcmp(value, "geoarrow.wkb") == 0);
    CHECK(metadata_value(g->metadata, "ARROW:extension:metadata", value, sizeof value));
    CHECK(strstr(value, "\"crs_type\":\"projjson\"") != NULL);
    CHECK(strstr(value, "\"type\":\"GeographicCRS\"") != NULL);
    CHECK(strstr(value, id) != NULL);
}

static int is_valid(const struct ArrowArray *a, int64_t i) {
    const uint8_t *validity = (const uint8_t *)a->buffers[0];
    int64_t j = a->offset + i;
    return validity == NULL || (validity[j / 8] >> (j % 8)) & 1;
}

/* The WKB of row `i` of a binary column, its length in `*len`. */
static const uint8_t *wkb_at(const struct ArrowArray *a, int64_t i, int32_t *len) {
    const int32_t *offsets = (const int32_t *)a->buffers[1];
    *len = offsets[a->offset + i + 1] - offsets[a->offset + i];
    return (const uint8_t *)a->buffers[2] + offsets[a->offset + i];
}

/* Every geometry present, little-endian, of one of the two WKB types given. */
static void check_wkb_types(const table *t, uint32_t single, uint32_t multi) {
    int b;
    int64_t i;
    for (b = 0; b < t->n_batches; b++) {
        const struct ArrowArray *g = t->batches[b].children[0];
        for (i = 0; i < g->length; i++) {
            int32_t len;
            uint32_t type;
            const uint8_t *wkb;
            CHECK(is_valid(g, i));
            wkb = wkb_at(g, i, &len);
            CHECK(len >= 9 && wkb[0] == 1);
            memcpy(&type, wkb + 1, 4);
            CHECK(type == single || type == multi);
        }
    }
}

static void stream_of(const hydroplot_plot_data *pd, const char *layer, table *t) {
    struct ArrowArrayStream stream;
    CHECK_OK(hydroplot_plot_data_layer_arrow(pd, layer, &stream));
    table_read(&stream, t);
}

static int64_t rows_of(const hydroplot_plot_data *pd, const char *layer, const char *crs) {
    table t;
    int64_t rows;
    stream_of(pd, layer, &t);
    check_geometry_field(&t, crs);
    rows = t.rows;
    table_release(&t);
    return rows;
}

static void every_layer_of_the_yahara_sample(hydroplot_context *ctx, const char *sample) {
    hydroplot_plot_request *req = hydroplot_plot_request_new();
    hydroplot_plot_data *pd = NULL;
    struct ArrowArrayStream flowlines, released;
    table t;
    int comid, name, length, b;
    int64_t i, outlets = 0, nulls = 0;

    CHECK_OK(hydroplot_plot_request_add_comid(req, 13293970));
    CHECK_OK(hydroplot_plot_request_set_hydro_data(req, sample));
    CHECK_OK(hydroplot_plot_request_set_actually_plot(req, false));
    CHECK_OK(hydroplot_plot(ctx, req, NULL, &pd));

    /* The published counts of the sample. */
    CHECK(rows_of(pd, "flowline", "EPSG:4269") == 251);
    CHECK(rows_of(pd, "catchment", "EPSG:4269") == 250);
    CHECK(rows_of(pd, "nhdarea", "EPSG:4269") == 3);
    CHECK(rows_of(pd, "network_wtbd", "EPSG:4269") + rows_of(pd, "off_network_wtbd", "EPSG:4269") ==
          117);
    CHECK(rows_of(pd, "flowline_nonnetwork", "EPSG:4269") == 48);
    CHECK(rows_of(pd, "gage", "EPSG:4269") == 44);
    CHECK(rows_of(pd, "basin", "EPSG:4269") == 1);
    CHECK(rows_of(pd, "outlets", "EPSG:4269") == 1);

    /* Geometry types: lines and polygons as the layers hold them. */
    stream_of(pd, "catchment", &t);
    check_wkb_types(&t, 3, 6);
    table_release(&t);
    stream_of(pd, "basin", &t);
    check_wkb_types(&t, 3, 6);
    table_release(&t);

    /* Errors: a status and a message, `out` untouched. */
    memset(&released, 0, sizeof released);
    CHECK_FAILS(hydroplot_plot_data_layer_arrow(pd, "rivers", &released),
                HYDROPLOT_ERR_INVALID_ARGUMENT, "rivers");
    CHECK(released.release == NULL);
    CHECK_FAILS(hydroplot_plot_data_layer_arrow(pd, "flowline", NULL), HYDROPLOT_ERR_NULL_ARGUMENT,
                "out");
    CHECK_FAILS(hydroplot_plot_data_layer_arrow(NULL, "flowline", &released),
                HYDROPLOT_ERR_NULL_ARGUMENT, "pd");
    CHECK_FAILS(hydroplot_plot_data_layer_arrow(pd, NULL, &released), HYDROPLOT_ERR_NULL_ARGUMENT,
                "layer");

    /* The flowline stream outlives the plot data. */
    CHECK_OK(hydroplot_plot_data_layer_arrow(pd, "flowline", &flowlines));
    hydroplot_plot_data_free(pd);
    hydroplot_plot_request_free(req);
    table_read(&flowlines, &t);
    CHECK(t.rows == 251);
    check_wkb_types(&t, 2, 5);
    comid = column(&t, "comid");
    name = column(&t, "gnis_name");
    length = column(&t, "lengthkm");
    CHECK(comid > 0 && name > 0 && length > 0);
    CHECK(strcmp(t.schema.children[comid]->format, "l") == 0);   /* int64 */
    CHECK(strcmp(t.schema.children[name]->format, "u") == 0);    /* utf8 */
    CHECK(strcmp(t.schema.children[length]->format, "g") == 0);  /* float64 */
    for (b = 0; b < t.n_batches; b++) {
        const struct ArrowArray *c = t.batches[b].children[comid];
        const int64_t *values = (const int64_t *)c->buffers[1];
        nulls += c->null_count;
        for (i = 0; i < c->length; i++) outlets += values[c->offset + i] == 13293970;
    }
    CHECK(nulls == 0);
    CHECK(outlets == 1);
    table_release(&t);
}

/* The recorded trace at (-89.2158, 42.9561): flowline comid 13297178 with 17
 * vertices, then the raindrop path (no comid) with 7; the spec's 7 fields in
 * its order, intersection_point a list of doubles (2 on the flowline, 0 on
 * the raindrop path). */
static void a_trace(hydroplot_context *ctx) {
    static const char *const fields[][2] = {
        {"id", "u"}, {"gnis_name", "u"}, {"comid", "l"}, {"reachcode", "u"},
        {"raindrop_pathDist", "g"}, {"measure", "g"}, {"intersection_point", "+l"}};
    hydroplot_trace *tr = NULL;
    struct ArrowArrayStream stream;
    table t;
    const struct ArrowArray *g, *c, *id, *point;
    const int32_t *offsets;
    const double *lon_lat;
    int32_t len;
    int comid, ids, i;

    mock_configure(&mock, ctx);
    CHECK_OK(hydroplot_raindrop_trace(ctx, -89.2158, 42.9561, NULL, "up", &tr));
    CHECK_FAILS(hydroplot_trace_arrow(tr, NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK_FAILS(hydroplot_trace_arrow(NULL, &stream), HYDROPLOT_ERR_NULL_ARGUMENT, "t");
    CHECK_OK(hydroplot_trace_arrow(tr, &stream));
    hydroplot_trace_free(tr);
    table_read(&stream, &t);
    CHECK(t.rows == 2 && t.n_batches == 1);
    check_geometry_field(&t, "EPSG:4326");
    check_wkb_types(&t, 2, 2);
    g = t.batches[0].children[0];
    wkb_at(g, 0, &len);
    CHECK(len == 9 + 17 * 16);
    wkb_at(g, 1, &len);
    CHECK(len == 9 + 7 * 16);
    comid = column(&t, "comid");
    ids = column(&t, "id");
    CHECK(comid > 0 && ids > 0);
    CHECK(strcmp(t.schema.children[comid]->format, "l") == 0);
    c = t.batches[0].children[comid];
    CHECK(is_valid(c, 0) && ((const int64_t *)c->buffers[1])[c->offset] == 13297178);
    CHECK(!is_valid(c, 1));
    id = t.batches[0].children[ids];
    offsets = (const int32_t *)id->buffers[1] + id->offset;
    CHECK(offsets[2] - offsets[1] == 12 &&
          memcmp((const char *)id->buffers[2] + offsets[1], "raindropPath", 12) == 0);
    CHECK(t.schema.n_children == 8);
    for (i = 0; i < 7; i++) {
        CHECK(strcmp(t.schema.children[i + 1]->name, fields[i][0]) == 0);
        CHECK(strcmp(t.schema.children[i + 1]->format, fields[i][1]) == 0);
    }
    CHECK(strcmp(t.schema.children[7]->children[0]->format, "g") == 0);
    point = t.batches[0].children[7];
    CHECK(is_valid(point, 0) && is_valid(point, 1));
    offsets = (const int32_t *)point->buffers[1] + point->offset;
    CHECK(offsets[1] - offsets[0] == 2 && offsets[2] - offsets[1] == 0);
    lon_lat = (const double *)point->children[0]->buffers[1] + point->children[0]->offset + offsets[0];
    CHECK(lon_lat[0] == -89.21324480351977 && lon_lat[1] == 42.956821579907405);
    table_release(&t);
}

int main(void) {
    const char *data = getenv("HYDROPLOT_TEST_DATA");
    char sample[1024];
    hydroplot_context *ctx = NULL;

    CHECK(data != NULL);
    snprintf(sample, sizeof sample, "%s/yahara_sample.gpkg", data);
    CHECK_OK(hydroplot_context_new(&ctx));
    every_layer_of_the_yahara_sample(ctx, sample);
    mock_start(&mock);
    a_trace(ctx);
    mock_stop(&mock);
    hydroplot_context_free(ctx);
    puts("test_arrow: ok");
    return 0;
}
