/* plot_map: draw the basin, upstream network and waterbodies of an outlet
 * on a basemap and write the map as a PNG, georeferenced: its world file
 * (OUT.pgw) and OUT.png.aux.xml (EPSG:3857) beside it, so GDAL and QGIS
 * open it in place.
 *
 *   plot_map OUT.png [COMID [HYDRO_DATA.gpkg]]
 *
 * COMID defaults to 13293970 (the Yahara at Madison, WI). With HYDRO_DATA
 * the data come from that local GeoPackage, else from the services. The
 * basemap is Esri.NatGeoWorldMap unless HYDROPLOT_TILE_URL names another
 * tile server (the tests point it, and the services, at the mock). */
#include "hydroplot.h"

#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, hydroplot_status s) {
    fprintf(stderr, "%s: %s: %s\n", what, hydroplot_status_str(s), hydroplot_last_error());
    return 1;
}

int main(int argc, char **argv) {
    hydroplot_context *ctx = NULL;
    hydroplot_plot_request *req = NULL;
    hydroplot_plot_data *pd = NULL;
    hydroplot_map *map = NULL;
    hydroplot_status s;
    double bounds[4];
    size_t i;
    int rc = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: %s OUT.png [COMID [HYDRO_DATA.gpkg]]\n", argv[0]);
        return 2;
    }
    if ((s = hydroplot_context_new(&ctx)) != HYDROPLOT_OK) return fail("context", s);
    req = hydroplot_plot_request_new();
    if ((s = hydroplot_plot_request_add_comid(req, argc > 2 ? atoll(argv[2]) : 13293970LL)) != HYDROPLOT_OK ||
        (argc > 3 && (s = hydroplot_plot_request_set_hydro_data(req, argv[3])) != HYDROPLOT_OK) ||
        (s = hydroplot_plot_request_set_style(req, "flowline", "lwd", "1.5")) != HYDROPLOT_OK ||
        (s = hydroplot_plot_request_set_style(req, "outlets.comid", "col", "red")) != HYDROPLOT_OK ||
        (s = hydroplot_plot(ctx, req, NULL, &pd)) != HYDROPLOT_OK) {
        rc = fail("plot", s);
        goto done;
    }
    for (i = 0; i < hydroplot_plot_data_warning_count(pd); i++)
        fprintf(stderr, "warning: %s\n", hydroplot_plot_data_warning(pd, i));
    /* Keep drawing on the map: mark the outlet's neighbourhood, then save. */
    if ((s = hydroplot_plot_data_take_map(pd, &map)) != HYDROPLOT_OK ||
        (s = hydroplot_map_add_point(map, -89.36, 43.09, "EPSG:4326", 4, "darkgreen", 1.5)) != HYDROPLOT_OK ||
        (s = hydroplot_map_write_png(map, argv[1])) != HYDROPLOT_OK ||
        (s = hydroplot_map_write_world_file(map, argv[1])) != HYDROPLOT_OK ||
        (s = hydroplot_map_bounds(map, bounds)) != HYDROPLOT_OK) {
        rc = fail("map", s);
        goto done;
    }
    printf("wrote %s\n", argv[1]);
    /* The PNG's extent in EPSG:3857 metres, edges of the corner pixels. */
    printf("bounds %.3f %.3f %.3f %.3f\n", bounds[0], bounds[1], bounds[2], bounds[3]);

done:
    hydroplot_map_free(map);
    hydroplot_plot_data_free(pd);
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
    return rc;
}
