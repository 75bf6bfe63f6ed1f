/* arrow_stream: fetch the network upstream of an outlet and read one layer
 * as an Arrow C stream with nothing but the structs the header declares:
 * the columns (name and Arrow format of the first few), the row count over all batches and the
 * first values of the comid column.
 *
 *   arrow_stream [COMID [LAYER]]   (default 13293970 flowline)
 *
 * Any Arrow consumer takes the same stream: pyarrow, polars, DuckDB,
 * nanoarrow, GDAL. Services are the public USGS ones unless HYDROPLOT_INDEX_URL
 * and HYDROPLOT_FABRIC_URL point elsewhere (the tests point them at the mock). */
#include "hydroplot.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, hydroplot_status s) {
    fprintf(stderr, "%s: %s: %s\n", what, hydroplot_status_str(s), hydroplot_last_error());
    return 1;
}

/* Prints up to `max` values of an int64 column ("l"), null as NA. */
static void print_int64(const struct ArrowArray *a, int64_t max) {
    const uint8_t *validity = (const uint8_t *)a->buffers[0];
    const int64_t *values = (const int64_t *)a->buffers[1];
    int64_t i;
    for (i = 0; i < a->length && i < max; i++) {
        int64_t j = a->offset + i;
        if (validity != NULL && !((validity[j / 8] >> (j % 8)) & 1))
            printf(" NA");
        else
            printf(" %" PRId64, values[j]);
    }
}

/* Reads the whole stream, then releases it. */
static int read_stream(struct ArrowArrayStream *stream) {
    struct ArrowSchema schema;
    struct ArrowArray batch;
    int64_t rows = 0, i, comid = -1;
    int batches = 0, rc = 0;

    if (stream->get_schema(stream, &schema) != 0) {
        fprintf(stderr, "get_schema: %s\n", stream->get_last_error(stream));
        stream->release(stream);
        return 1;
    }
    printf("columns (%" PRId64 "):\n", schema.n_children);
    for (i = 0; i < schema.n_children; i++) {
        if (i < 6)
            printf("  %-22s %s\n", schema.children[i]->name, schema.children[i]->format);
        else if (i == 6)
            printf("  ... (%" PRId64 " more)\n", schema.n_children - 6);
        if (strcmp(schema.children[i]->name, "comid") == 0 &&
            strcmp(schema.children[i]->format, "l") == 0)
            comid = i;
    }
    for (;;) {
        if (stream->get_next(stream, &batch) != 0) {
            fprintf(stderr, "get_next: %s\n", stream->get_last_error(stream));
            rc = 1;
            break;
        }
        if (batch.release == NULL) break; /* released: the end of the stream */
        if (batches++ == 0 && comid >= 0) {
            printf("first comids:");
            print_int64(batch.children[comid], 5);
            printf("\n");
        }
        rows += batch.length;
        batch.release(&batch);
    }
    printf("rows %" PRId64 " in %d batch(es)\n", rows, batches);
    schema.release(&schema);
    stream->release(stream);
    return rc;
}

int main(int argc, char **argv) {
    long long comid = argc > 1 ? atoll(argv[1]) : 13293970LL;
    const char *layer = argc > 2 ? argv[2] : "flowline";
    hydroplot_context *ctx = NULL;
    hydroplot_plot_request *req = NULL;
    hydroplot_plot_data *pd = NULL;
    struct ArrowArrayStream stream;
    hydroplot_status s;
    int rc = 0;

    s = hydroplot_context_new(&ctx);
    if (s != HYDROPLOT_OK) return fail("context", s);
    req = hydroplot_plot_request_new();
    if ((s = hydroplot_plot_request_add_comid(req, (int64_t)comid)) != HYDROPLOT_OK ||
        (s = hydroplot_plot_request_set_actually_plot(req, false)) != HYDROPLOT_OK ||
        (s = hydroplot_plot(ctx, req, NULL, &pd)) != HYDROPLOT_OK) {
        rc = fail("plot", s);
        goto done;
    }
    if ((s = hydroplot_plot_data_layer_arrow(pd, layer, &stream)) != HYDROPLOT_OK) {
        rc = fail(layer, s);
        goto done;
    }
    /* The stream owns its data: the plot data may go first. */
    hydroplot_plot_data_free(pd);
    pd = NULL;
    printf("layer %s upstream of comid %lld\n", layer, comid);
    rc = read_stream(&stream);

done:
    hydroplot_plot_data_free(pd);
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
    return rc;
}
