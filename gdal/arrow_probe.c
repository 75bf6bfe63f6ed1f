/*
 * Reads one layer through GDAL's C API OGR_L_GetArrowStream, as an Arrow
 * consumer (pyogrio, ogr2ogr >= 3.8) does, and prints what it got:
 *
 *   arrow_probe CONNECTION LAYER INCLUDE_FID(YES|NO) [WHERE]
 *   -> rows=251 columns=113 first=geometry geometry_extension=geoarrow.wkb
 *
 * gdal/ci.sh compares the numbers with the sample's; the extension name tells
 * hydroplot's own stream (geoarrow.wkb) from GDAL's generic one.
 */
#include <gdal.h>
#include <ogr_api.h>
#include <ogr_recordbatch.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The value of ARROW:extension:name in Arrow's binary metadata, into out. */
static void extension_name(const char *metadata, char *out, size_t size)
{
    snprintf(out, size, "none");
    if (metadata == NULL)
        return;
    const char *p = metadata;
    int32_t n, len;
    memcpy(&n, p, 4);
    p += 4;
    for (int32_t i = 0; i < n; i++) {
        memcpy(&len, p, 4);
        const char *key = p + 4;
        const int32_t key_len = len;
        p += 4 + len;
        memcpy(&len, p, 4);
        if (key_len == 20 && memcmp(key, "ARROW:extension:name", 20) == 0)
            snprintf(out, size, "%.*s", (int)len, p + 4);
        p += 4 + len;
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: arrow_probe CONNECTION LAYER INCLUDE_FID [WHERE]\n");
        return 2;
    }
    GDALAllRegister();
    GDALDatasetH ds = GDALOpenEx(argv[1], GDAL_OF_VECTOR, NULL, NULL, NULL);
    if (ds == NULL)
        return 1;
    OGRLayerH layer = GDALDatasetGetLayerByName(ds, argv[2]);
    if (layer == NULL || (argc > 4 && OGR_L_SetAttributeFilter(layer, argv[4]) != OGRERR_NONE)) {
        GDALClose(ds);
        return 1;
    }
    char include_fid[32];
    snprintf(include_fid, sizeof include_fid, "INCLUDE_FID=%s", argv[3]);
    char *options[] = {include_fid, NULL};
    struct ArrowArrayStream stream;
    if (!OGR_L_GetArrowStream(layer, &stream, options)) {
        GDALClose(ds);
        return 1;
    }
    struct ArrowSchema schema;
    int rc = 1;
    if (stream.get_schema(&stream, &schema) == 0) {
        int64_t rows = 0;
        struct ArrowArray batch;
        while (stream.get_next(&stream, &batch) == 0 && batch.release != NULL) {
            rows += batch.length;
            batch.release(&batch);
        }
        char geometry_extension[64] = "none";
        for (int64_t i = 0; i < schema.n_children; i++) {
            char ext[64];
            extension_name(schema.children[i]->metadata, ext, sizeof ext);
            if (strcmp(ext, "none") != 0)
                snprintf(geometry_extension, sizeof geometry_extension, "%s", ext);
        }
        printf("rows=%lld columns=%lld first=%s geometry_extension=%s\n", (long long)rows,
               (long long)schema.n_children,
               schema.n_children > 0 ? schema.children[0]->name : "none", geometry_extension);
        schema.release(&schema);
        rc = 0;
    }
    stream.release(&stream);
    GDALClose(ds);
    return rc;
}
