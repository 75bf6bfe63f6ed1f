/* raindrop: trace where a raindrop falling on a point flows, print the trace
 * and draw it, as the interface spec's example does: a map over the trace's
 * bounding box enlarged by 0.005 degrees on each side, the point, the flowline
 * portion in red and the raindrop's path in black, written as a PNG.
 *
 *   raindrop [LON LAT [DIRECTION [OUT.png]]]
 *
 * Defaults: lon -89.2158, lat 42.9561 (WGS 84, next to the Yahara River near
 * Stoughton, WI), direction "up", raindrop.png.
 *
 * Services and tiles are the public ones unless HYDROPLOT_INDEX_URL (and
 * HYDROPLOT_TILE_URL) point elsewhere (the tests point them at the mock).
 * As in the spec's example, caching is off: the trace is never cached, and
 * the context's `tile_cache` option is set to `off` so no tile is kept. */
#include "hydroplot.h"

#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, hydroplot_status s) {
    fprintf(stderr, "%s: %s: %s\n", what, hydroplot_status_str(s), hydroplot_last_error());
    return 1;
}

static void print_feature(const hydroplot_trace *t, size_t i) {
    const char *name = hydroplot_trace_gnis_name(t, i);
    const char *reach = hydroplot_trace_reachcode(t, i);
    int64_t comid;
    double v, p[2];
    size_t n;

    hydroplot_trace_coords(t, i, &n);
    printf("%s: %zu vertices", hydroplot_trace_id(t, i), n);
    if (hydroplot_trace_comid(t, i, &comid)) printf(", comid %lld", (long long)comid);
    if (name) printf(", %s", name);
    if (reach) printf(", reachcode %s", reach);
    if (hydroplot_trace_raindrop_path_dist(t, i, &v)) printf(", raindrop path %.2f m", v);
    if (hydroplot_trace_measure(t, i, &v)) printf(", measure %.2f", v);
    if (hydroplot_trace_intersection_point(t, i, p) == 2) printf(", meets it at %.6f %.6f", p[0], p[1]);
    printf("\n");
}

int main(int argc, char **argv) {
    double lon = argc > 2 ? atof(argv[1]) : -89.2158;
    double lat = argc > 2 ? atof(argv[2]) : 42.9561;
    const char *direction = argc > 3 ? argv[3] : "up";
    const char *out = argc > 4 ? argv[4] : "raindrop.png";
    hydroplot_context *ctx = NULL;
    hydroplot_trace *trace = NULL;
    hydroplot_map *map = NULL;
    hydroplot_status s;
    size_t i;
    int rc = 0;

    if ((s = hydroplot_context_new(&ctx)) != HYDROPLOT_OK) return fail("context", s);
    if ((s = hydroplot_context_set_option(ctx, "tile_cache", "off")) != HYDROPLOT_OK) {
        hydroplot_context_free(ctx);
        return fail("tile_cache", s);
    }
    if ((s = hydroplot_raindrop_trace(ctx, lon, lat, NULL, direction, &trace)) != HYDROPLOT_OK) {
        rc = fail("trace", s);
        goto done;
    }
    for (i = 0; i < hydroplot_trace_len(trace); i++) print_feature(trace, i);

    /* The spec's trace map: the trace's box plus 0.005 degrees, the point, the
     * flowline portion in red, the raindrop's path in black; 800 x 800 pixels. */
    if ((s = hydroplot_trace_map(ctx, trace, lon, lat, "EPSG:4326", 0, 0, NULL, &map)) != HYDROPLOT_OK ||
        (s = hydroplot_map_write_png(map, out)) != HYDROPLOT_OK) {
        rc = fail("map", s);
        goto done;
    }
    printf("wrote %s\n", out);

done:
    hydroplot_map_free(map);
    hydroplot_trace_free(trace);
    hydroplot_context_free(ctx);
    return rc;
}
