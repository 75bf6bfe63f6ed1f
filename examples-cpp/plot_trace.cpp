// plot_trace: the C++ wrapper end to end. Plots the basin and upstream
// network of an outlet, traces a raindrop, draws the trace on a map and
// writes both PNGs.
//
//   plot_trace [COMID [OUT_DIR]]   (default 13293970, the Yahara at Madison, WI; .)
//
// Services are the public USGS ones unless HYDROPLOT_INDEX_URL,
// HYDROPLOT_FABRIC_URL and HYDROPLOT_TILE_URL point elsewhere (CI points
// them at the mock with tests/bindings/with-mock.sh).
#include "hydroplot.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char **argv) try {
    const long long comid = argc > 1 ? std::atoll(argv[1]) : 13293970LL;
    const std::string out_dir = argc > 2 ? argv[2] : ".";

    hydroplot::context ctx;
    hydroplot::plot_request req;
    req.add_comid(comid).set_style("flowline", "col", "#1f78b4");
    hydroplot::plot_data pd = hydroplot::plot(ctx, req);
    std::printf("upstream of comid %lld\n", comid);
    for (const char *layer : {"outlets", "basin", "flowline", "catchment", "network_wtbd", "off_network_wtbd"})
        std::printf("  %-18s %zu\n", layer, pd.layer_count(layer));
    hydroplot::map basin_map = pd.take_map();
    basin_map.write_png(out_dir + "/basin.png");

    const double lon = -89.2158, lat = 42.9561;
    hydroplot::trace t = hydroplot::raindrop_trace(ctx, lon, lat, std::nullopt, "up");
    std::printf("trace from %.4f %.4f: %zu features\n", lon, lat, t.size());
    std::printf("  %s comid %lld \"%s\" reachcode %s raindrop_pathDist %.2f measure %.2f\n", t.id(0).c_str(),
                static_cast<long long>(t.comid(0).value_or(0)), t.gnis_name(0).value_or("").c_str(),
                t.reachcode(0).value_or("").c_str(), t.raindrop_path_dist(0).value_or(0),
                t.measure(0).value_or(0));

    // As the spec's example: the trace's box enlarged by 0.005 degrees, no basemap cache.
    auto b = t.bbox();
    hydroplot::map trace_map =
        hydroplot::map::create(ctx, {b[0] - 0.005, b[1] - 0.005, b[2] + 0.005, b[3] + 0.005}, std::nullopt, 800, 600);
    trace_map.add_trace(t).add_point(lon, lat);
    trace_map.write_png(out_dir + "/trace.png");
    trace_map.write_world_file(out_dir + "/trace.png");  // trace.pgw + trace.png.aux.xml: GIS-ready
    auto m = trace_map.bounds();
    std::printf("trace map EPSG:3857 %.1f %.1f %.1f %.1f\n", m[0], m[1], m[2], m[3]);

    try {
        hydroplot::raindrop_trace(ctx, 0.0, 0.0);
    } catch (const hydroplot::error &e) {
        std::printf("a point at sea: %s (HTTP %d)\n", e.name(), e.http_status());
    }
    return 0;
} catch (const hydroplot::error &e) {
    std::fprintf(stderr, "plot_trace: %s\n", e.what());
    return 1;
}
