/* plot_data: fetch the basin and upstream network of an outlet and print
 * the layer counts, without drawing.
 *
 *   plot_data [COMID]          (default 13293970, the Yahara at Madison, WI)
 *
 * Services are the public USGS ones unless HYDROPLOT_INDEX_URL and
 * HYDROPLOT_FABRIC_URL point elsewhere (the tests point them at the mock). */
#include "hydroplot.h"

#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, hydroplot_status s) {
    fprintf(stderr, "%s: %s: %s\n", what, hydroplot_status_str(s), hydroplot_last_error());
    return 1;
}

int main(int argc, char **argv) {
    const char *layers[] = {"outlets", "basin", "flowline", "catchment", "network_wtbd", "off_network_wtbd"};
    long long comid = argc > 1 ? atoll(argv[1]) : 13293970LL;
    hydroplot_context *ctx = NULL;
    hydroplot_plot_request *req = NULL;
    hydroplot_plot_data *pd = NULL;
    hydroplot_status s;
    double bbox[4];
    size_t i, n;
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
    printf("upstream of comid %lld\n", comid);
    for (i = 0; i < sizeof layers / sizeof layers[0]; i++) {
        if ((s = hydroplot_plot_data_layer_count(pd, layers[i], &n)) != HYDROPLOT_OK) {
            rc = fail(layers[i], s);
            goto done;
        }
        printf("  %-18s %zu\n", layers[i], n);
    }
    if ((s = hydroplot_plot_data_bbox(pd, bbox)) != HYDROPLOT_OK) {
        rc = fail("bbox", s);
        goto done;
    }
    printf("  bbox %.5f %.5f %.5f %.5f\n", bbox[0], bbox[1], bbox[2], bbox[3]);
    for (i = 0; i < hydroplot_plot_data_warning_count(pd); i++)
        printf("  warning: %s\n", hydroplot_plot_data_warning(pd, i));

done:
    hydroplot_plot_data_free(pd);
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
    return rc;
}
