/* File safety through the C API: no cache or output ever lands on the
 * input GeoPackage, and a cache path on a file that is not a hydroplot
 * cache leaves it byte for byte. Offline: local data only. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/hydroplot-files-XXXXXX";

/* Reads a whole file; the caller frees the bytes. */
static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    unsigned char *bytes;
    long n;
    CHECK(f != NULL);
    CHECK(fseek(f, 0, SEEK_END) == 0);
    n = ftell(f);
    CHECK(n >= 0);
    CHECK(fseek(f, 0, SEEK_SET) == 0);
    bytes = malloc((size_t)n + 1);
    CHECK(bytes != NULL);
    CHECK(fread(bytes, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return bytes;
}

static void spit(const char *path, const unsigned char *bytes, size_t len) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(bytes, 1, len, f) == len);
    CHECK(fclose(f) == 0);
}

/* `path` still holds exactly `len` bytes equal to `want`. */
static void unchanged(const char *path, const unsigned char *want, size_t len) {
    size_t got_len = 0;
    unsigned char *got = slurp(path, &got_len);
    CHECK(got_len == len && memcmp(got, want, len) == 0);
    free(got);
}

static hydroplot_plot_request *local_request(const char *input) {
    hydroplot_plot_request *req = hydroplot_plot_request_new();
    CHECK(req != NULL);
    CHECK_OK(hydroplot_plot_request_add_comid(req, 13293970));
    CHECK_OK(hydroplot_plot_request_set_hydro_data(req, input));
    CHECK_OK(hydroplot_plot_request_set_actually_plot(req, false));
    return req;
}

int main(void) {
    const char *data = getenv("HYDROPLOT_TEST_DATA");
    char sample[1024], input[1024], spelled[1024], notes[1024], link[1024], nowhere[1024];
    char indexes[1024];
    static const unsigned char text[] = "my notes, not a cache\n";
    unsigned char *bytes;
    size_t len = 0, i, warned = 0;
    hydroplot_context *ctx = NULL;
    hydroplot_plot_request *req;
    hydroplot_plot_data *pd = NULL;
    const int64_t *comids = NULL;

    CHECK(data != NULL);
    CHECK(mkdtemp(dir) != NULL);
    snprintf(sample, sizeof sample, "%s/yahara_sample.gpkg", data);
    snprintf(input, sizeof input, "%s/national.gpkg", dir);
    snprintf(spelled, sizeof spelled, "%s/./national.gpkg", dir);
    snprintf(notes, sizeof notes, "%s/notes.rds", dir);
    snprintf(link, sizeof link, "%s/link.gpkg", dir);
    snprintf(nowhere, sizeof nowhere, "%s/no/such/folder/map.png", dir);
    snprintf(indexes, sizeof indexes, "%s/indexes", dir);
    bytes = slurp(sample, &len);
    spit(input, bytes, len);
    spit(notes, text, sizeof text - 1);
    CHECK(symlink(input, link) == 0);
    CHECK_OK(hydroplot_context_new(&ctx));
    CHECK_OK(hydroplot_context_set_option(ctx, "index_dir", indexes));

    /* The cache on the input, spelled another way: refused, input intact. */
    req = local_request(input);
    CHECK_OK(hydroplot_plot_request_set_cache_file(req, spelled));
    CHECK_FAILS(hydroplot_plot(ctx, req, NULL, &pd), HYDROPLOT_ERR_INVALID_ARGUMENT, "same file");
    CHECK(pd == NULL);
    hydroplot_plot_request_free(req);
    unchanged(input, bytes, len);

    /* The output GeoPackage on the input through a symbolic link, with
     * overwrite on: refused, input intact. */
    req = local_request(input);
    CHECK_OK(hydroplot_plot_request_set_gpkg(req, link));
    CHECK_OK(hydroplot_plot_request_set_overwrite(req, true));
    CHECK_FAILS(hydroplot_plot(ctx, req, NULL, &pd), HYDROPLOT_ERR_INVALID_ARGUMENT, "same file");
    hydroplot_plot_request_free(req);
    unchanged(input, bytes, len);

    /* The map file on the input, spelled another way, with overwrite on:
     * refused before anything is read, input intact. */
    req = local_request(input);
    CHECK_OK(hydroplot_plot_request_set_actually_plot(req, true));
    CHECK_OK(hydroplot_plot_request_set_basemap(req, "none"));
    CHECK_OK(hydroplot_plot_request_set_png_file(req, spelled));
    CHECK_FAILS(hydroplot_plot(ctx, req, NULL, &pd), HYDROPLOT_ERR_INVALID_ARGUMENT, "same file");
    CHECK(pd == NULL);
    unchanged(input, bytes, len);

    /* The map file in a missing folder: refused before any work, the
     * message names the file (not a temporary name). */
    CHECK_OK(hydroplot_plot_request_set_png_file(req, nowhere));
    CHECK_FAILS(hydroplot_plot(ctx, req, NULL, &pd), HYDROPLOT_ERR_IO, nowhere);
    CHECK(strstr(hydroplot_last_error(), "hydroplot-tmp") == NULL);

    /* The map file on the user's notes without overwrite: kept. */
    CHECK_OK(hydroplot_plot_request_set_png_file(req, notes));
    CHECK_OK(hydroplot_plot_request_set_overwrite(req, false));
    CHECK_FAILS(hydroplot_plot(ctx, req, NULL, &pd), HYDROPLOT_ERR_EXISTS, "notes.rds");
    hydroplot_plot_request_free(req);
    unchanged(notes, text, sizeof text - 1);
    unchanged(input, bytes, len);

    /* A cache path on a user's file: the plot goes on, a warning names the
     * file, the file is byte for byte what it was. */
    req = local_request(input);
    CHECK_OK(hydroplot_plot_request_set_cache_file(req, notes));
    CHECK_OK(hydroplot_plot(ctx, req, NULL, &pd));
    for (i = 0; i < hydroplot_plot_data_warning_count(pd); i++)
        warned += strstr(hydroplot_plot_data_warning(pd, i), "notes.rds") != NULL &&
                  strstr(hydroplot_plot_data_warning(pd, i), "left untouched") != NULL;
    CHECK(warned == 1);
    hydroplot_plot_data_free(pd);
    hydroplot_plot_request_free(req);
    unchanged(notes, text, sizeof text - 1);
    unchanged(input, bytes, len);

    /* The index made in the context's index_dir, never in the copy, used
     * by a plot and removed again; a file that is not a GeoPackage is
     * refused and left as it was. */
    CHECK_FAILS(hydroplot_gpkg_index(ctx, notes), HYDROPLOT_ERR_GPKG, "not an SQLite database");
    CHECK_FAILS(hydroplot_gpkg_unindex(ctx, notes), HYDROPLOT_ERR_GPKG, "not an SQLite database");
    unchanged(notes, text, sizeof text - 1);
    CHECK_OK(hydroplot_gpkg_index(ctx, input));
    CHECK_OK(hydroplot_gpkg_index(ctx, input));
    unchanged(input, bytes, len);
    CHECK(rmdir(indexes) != 0); /* it holds the index file */
    req = local_request(input);
    CHECK_OK(hydroplot_plot(ctx, req, NULL, &pd));
    CHECK_OK(hydroplot_plot_data_flowline_comids(pd, &comids, &i));
    CHECK(i == 251);
    hydroplot_plot_data_free(pd);
    hydroplot_plot_request_free(req);
    CHECK_OK(hydroplot_gpkg_unindex(ctx, input));
    CHECK_OK(hydroplot_gpkg_unindex(ctx, input));
    unchanged(input, bytes, len);
    CHECK(rmdir(indexes) == 0); /* the index file deleted */

    hydroplot_context_free(ctx);
    free(bytes);
    CHECK(unlink(link) == 0 && unlink(notes) == 0 && unlink(input) == 0 && rmdir(dir) == 0);
    puts("test_files: ok");
    return 0;
}
