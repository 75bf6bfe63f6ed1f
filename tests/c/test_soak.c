/* Soak: HYDROPLOT_SOAK_ITERATIONS (default 10,000) create/use/free cycles of
 * every handle type, one mock trace every 100 cycles; the resident set size
 * must not grow past a small bound after the first 1,000 cycles (checked
 * only for full runs outside sanitizers and valgrind, whose allocators keep
 * freed memory on purpose). Leaks themselves are the job of the valgrind and
 * AddressSanitizer runs of this same program. */
#include "check.h"
#include "mock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif

/* The RSS may grow at most this much between cycle 1,000 and the end. */
static const long RSS_GROWTH_LIMIT_KB = 4096;

static const char LINE[] = "{\"type\":\"LineString\",\"coordinates\":[[-89.4,43],[-89.3,43.05]]}";

static long rss_kb(void) {
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL) return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * 4;
}

static void one_cycle(const mock_server *mock, long i) {
    hydroplot_context *ctx = NULL;
    hydroplot_plot_request *req = hydroplot_plot_request_new();
    hydroplot_map *map = NULL;
    hydroplot_buffer *png = NULL;
    hydroplot_trace *t = NULL;

    CHECK_OK(hydroplot_context_new(&ctx));
    CHECK_OK(hydroplot_context_set_option(ctx, "retries", "0"));
    mock_configure(mock, ctx);
    CHECK(req != NULL);
    CHECK_OK(hydroplot_plot_request_add_comid(req, 13293970 + i));
    CHECK_OK(hydroplot_plot_request_add_site(req, "USGS-05427718"));
    CHECK_OK(hydroplot_plot_request_set_gpkg(req, "soak.gpkg"));
    CHECK_FAILS(hydroplot_plot_request_set_bbox(req, 1, 1, 0, 0, NULL),
                HYDROPLOT_ERR_INVALID_ARGUMENT, "bbox");

    CHECK_OK(hydroplot_map_new(ctx, -89.5, 42.9, -89.2, 43.1, NULL, 32, 32, "none", &map));
    CHECK_OK(hydroplot_map_add_point(map, -89.3, 43.0, NULL, 19, "red", 1.0));
    CHECK_OK(hydroplot_map_add_geojson(map, LINE, strlen(LINE), NULL, "blue", NULL, 1.0));
    CHECK_OK(hydroplot_map_png(map, &png));
    CHECK(hydroplot_buffer_len(png) > 8 && hydroplot_buffer_data(png)[1] == 'P');
    hydroplot_buffer_free(png);
    hydroplot_map_free(map);

    /* An error path: the message is kept per thread and replaced each time. */
    CHECK_FAILS(hydroplot_raindrop_trace(ctx, NAN, 43.0, NULL, NULL, &t),
                HYDROPLOT_ERR_INVALID_ARGUMENT, "finite");
    if (i % 100 == 0) {
        CHECK_OK(hydroplot_raindrop_trace(ctx, -89.2158, 42.9561, NULL, "up", &t));
        CHECK(hydroplot_trace_len(t) == 2);
        hydroplot_trace_free(t);
    }
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
}

int main(void) {
    const char *env = getenv("HYDROPLOT_SOAK_ITERATIONS");
    long iterations = env != NULL ? atol(env) : 10000;
    long i, rss_start = -1, rss_end;
    mock_server mock;

    mock_start(&mock);
    for (i = 0; i < iterations; i++) {
        one_cycle(&mock, i);
        if (i == 999) rss_start = rss_kb();
    }
    rss_end = rss_kb();
    mock_stop(&mock);
    printf("test_soak: %ld cycles, RSS %ld kB after 1,000, %ld kB at the end\n", iterations,
           rss_start, rss_end);
    if (iterations >= 10000 && !UNDER_SANITIZER && getenv("HYDROPLOT_SOAK_NO_RSS") == NULL) {
        CHECK(rss_start > 0 && rss_end > 0);
        CHECK(rss_end - rss_start <= RSS_GROWTH_LIMIT_KB);
    }
    return 0;
}
