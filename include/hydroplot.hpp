/*
 * hydroplot.hpp: a header-only C++17 wrapper of the hydroplot C API
 * (hydroplot.h). Handles are move-only objects that free themselves
 * (std::unique_ptr with the library's *_free as deleter); a failed status
 * throws hydroplot::error carrying the status, its name, the HTTP status and
 * hydroplot_last_error(). Byte and text results are copied into std::string
 * and std::vector, so nothing returned outlives its handle by accident.
 *
 *   hydroplot::context ctx;                       // defaults + HYDROPLOT_* env
 *   hydroplot::plot_request req;
 *   req.add_comid(13293970).set_actually_plot(false);
 *   hydroplot::plot_data pd = hydroplot::plot(ctx, req);
 *   std::size_t n = pd.layer_count("flowline");  // 251 on the Yahara sample
 *
 * Thread safety is the C API's: a configured context and result objects may
 * be shared by threads; a map and a request being set are used by one
 * thread at a time.
 */
#ifndef HYDROPLOT_HPP
#define HYDROPLOT_HPP

#include "hydroplot.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hydroplot {

/** A failed hydroplot call. */
class error : public std::runtime_error {
public:
    error(hydroplot_status status, std::string message, int http_status)
        : std::runtime_error(std::string(hydroplot_status_str(status)) + ": " + message),
          status_(status), http_status_(http_status), message_(std::move(message)) {}

    /** The C status, e.g. HYDROPLOT_ERR_HTTP. */
    hydroplot_status status() const noexcept { return status_; }
    /** Its name, e.g. "HYDROPLOT_ERR_HTTP" (static). */
    const char *name() const noexcept { return hydroplot_status_str(status_); }
    /** The HTTP status behind the failure, 0 when none. */
    int http_status() const noexcept { return http_status_; }
    /** The library's message (hydroplot_last_error() at the time of failure). */
    const std::string &message() const noexcept { return message_; }

private:
    hydroplot_status status_;
    int http_status_;
    std::string message_;
};

/** Throws hydroplot::error unless `s` is HYDROPLOT_OK; reads the calling thread's last error. */
inline void check(hydroplot_status s) {
    if (s != HYDROPLOT_OK) throw error(s, hydroplot_last_error(), hydroplot_last_http_status());
}

/** The library's version, "MAJOR.MINOR.PATCH" (HYDROPLOT_VERSION is the header's). */
inline std::string version() { return hydroplot_version(); }

namespace detail {
template <typename T, void (*Free)(T *)>
struct deleter {
    void operator()(T *p) const noexcept { Free(p); }
};
template <typename T, void (*Free)(T *)>
using handle = std::unique_ptr<T, deleter<T, Free>>;

using buffer_handle = handle<hydroplot_buffer, hydroplot_buffer_free>;

/** Copies a buffer filled by `fill(&out)` into a string, freeing the buffer. */
template <typename Fill>
std::string take_buffer(Fill fill) {
    hydroplot_buffer *raw = nullptr;
    check(fill(&raw));
    buffer_handle b(raw);
    return std::string(reinterpret_cast<const char *>(hydroplot_buffer_data(b.get())), hydroplot_buffer_len(b.get()));
}

inline std::optional<std::string> opt_str(const char *s) {
    return s ? std::optional<std::string>(s) : std::nullopt;
}

inline const char *c_str_or_null(const std::optional<std::string> &s) { return s ? s->c_str() : nullptr; }
}  // namespace detail

/** An optional CRS string ("EPSG:4326", ...); nullopt is the library's default, EPSG:4326. */
using crs_t = std::optional<std::string>;

/** Services, timeouts, retries, rate limit and caches: hydroplot_context. */
class context {
public:
    /** The defaults, then the HYDROPLOT_* environment overrides. */
    context() {
        hydroplot_context *raw = nullptr;
        check(hydroplot_context_new(&raw));
        h_.reset(raw);
    }
    /** Sets one option (index_url, fabric_url, tile_url, rate_limit_per_s, ...). Chainable. */
    context &set_option(const std::string &key, const std::string &value) {
        check(hydroplot_context_set_option(h_.get(), key.c_str(), value.c_str()));
        return *this;
    }
    /** Stops the calls running with this context (from any thread): each
     *  throws hydroplot::error with HYDROPLOT_ERR_CANCELLED; later calls run. */
    void cancel() const noexcept { hydroplot_context_cancel(h_.get()); }
    const hydroplot_context *get() const noexcept { return h_.get(); }
    hydroplot_context *get() noexcept { return h_.get(); }

private:
    detail::handle<hydroplot_context, hydroplot_context_free> h_;
};

/** Makes an NHDPlus GeoPackage fast as hydro_data (the topology index and the
 *  basin parts), in place; running it again changes nothing. */
inline void gpkg_index(const context &ctx, const std::string &path) {
    check(hydroplot_gpkg_index(ctx.get(), path.c_str()));
}

/** Takes away what gpkg_index() adds (an index made by hand stays). */
inline void gpkg_unindex(const context &ctx, const std::string &path) {
    check(hydroplot_gpkg_unindex(ctx.get(), path.c_str()));
}

/** Read access to a trace owned elsewhere (a trace, or a trace_batch entry). */
class trace_view {
public:
    explicit trace_view(const hydroplot_trace *t) noexcept : t_(t) {}

    /** The number of features (2). */
    std::size_t size() const noexcept { return hydroplot_trace_len(t_); }
    /** "upstreamFlowline", "downstreamFlowline", "nhdFlowline" or "raindropPath". */
    std::string id(std::size_t i) const { return detail::opt_str(hydroplot_trace_id(t_, i)).value_or(""); }
    std::optional<std::string> gnis_name(std::size_t i) const { return detail::opt_str(hydroplot_trace_gnis_name(t_, i)); }
    std::optional<std::string> reachcode(std::size_t i) const { return detail::opt_str(hydroplot_trace_reachcode(t_, i)); }
    std::optional<std::int64_t> comid(std::size_t i) const {
        std::int64_t v = 0;
        return hydroplot_trace_comid(t_, i, &v) ? std::optional<std::int64_t>(v) : std::nullopt;
    }
    /** The raindrop path length in metres. */
    std::optional<double> raindrop_path_dist(std::size_t i) const {
        double v = 0;
        return hydroplot_trace_raindrop_path_dist(t_, i, &v) ? std::optional<double>(v) : std::nullopt;
    }
    /** Percent along the flowline. */
    std::optional<double> measure(std::size_t i) const {
        double v = 0;
        return hydroplot_trace_measure(t_, i, &v) ? std::optional<double>(v) : std::nullopt;
    }
    /** Where the raindrop meets the flowline, {lon, lat}. */
    std::optional<std::array<double, 2>> intersection_point(std::size_t i) const {
        std::array<double, 2> p{};
        return hydroplot_trace_intersection_point(t_, i, p.data()) == 2 ? std::optional<std::array<double, 2>>(p)
                                                                        : std::nullopt;
    }
    /** The vertices of feature i, {lon, lat} each. */
    std::vector<std::array<double, 2>> coords(std::size_t i) const {
        std::size_t n = 0;
        const double *xy = hydroplot_trace_coords(t_, i, &n);
        std::vector<std::array<double, 2>> out(n);
        for (std::size_t k = 0; k < n; ++k) out[k] = {xy[2 * k], xy[2 * k + 1]};
        return out;
    }
    /** {xmin, ymin, xmax, ymax} of every vertex. */
    std::array<double, 4> bbox() const {
        std::array<double, 4> b{};
        check(hydroplot_trace_bbox(t_, b.data()));
        return b;
    }
    /** The trace as a GeoJSON FeatureCollection. */
    std::string geojson() const {
        return detail::take_buffer([this](hydroplot_buffer **out) { return hydroplot_trace_geojson(t_, out); });
    }
    const hydroplot_trace *get() const noexcept { return t_; }

protected:
    void view(const hydroplot_trace *t) noexcept { t_ = t; }

private:
    const hydroplot_trace *t_;
};

/** An owned raindrop trace. A moved-from trace views nothing (size 0, no
 *  features; bbox() and geojson() throw HYDROPLOT_ERR_NULL_ARGUMENT), where
 *  the implicit move would have left it viewing the freed trace. */
class trace : public trace_view {
public:
    explicit trace(hydroplot_trace *t) noexcept : trace_view(t), h_(t) {}
    trace(trace &&other) noexcept : trace_view(other.get()), h_(std::move(other.h_)) { other.view(nullptr); }
    trace &operator=(trace &&other) noexcept {
        if (this != &other) {
            h_ = std::move(other.h_);
            view(other.get());
            other.view(nullptr);
        }
        return *this;
    }

private:
    detail::handle<hydroplot_trace, hydroplot_trace_free> h_;
};

/** Traces a raindrop from (x, y) in `crs`; direction "down" (default), "up" or "none". */
inline trace raindrop_trace(const context &ctx, double x, double y, const crs_t &crs = std::nullopt,
                            const std::string &direction = "down") {
    hydroplot_trace *raw = nullptr;
    check(hydroplot_raindrop_trace(ctx.get(), x, y, detail::c_str_or_null(crs), direction.c_str(), &raw));
    return trace(raw);
}

/** The per-point results of raindrop_traces(). */
class trace_batch {
public:
    explicit trace_batch(hydroplot_trace_batch *b) noexcept : h_(b) {}
    std::size_t size() const noexcept { return hydroplot_trace_batch_len(h_.get()); }
    /** HYDROPLOT_OK when point i was traced. */
    hydroplot_status status(std::size_t i) const noexcept { return hydroplot_trace_batch_status(h_.get(), i); }
    /** The error of point i ("" when it was traced). */
    std::string error_message(std::size_t i) const {
        return detail::opt_str(hydroplot_trace_batch_error(h_.get(), i)).value_or("");
    }
    int http_status(std::size_t i) const noexcept { return hydroplot_trace_batch_http_status(h_.get(), i); }
    /** The trace of point i, valid while this batch lives; throws its error when the point failed. */
    trace_view at(std::size_t i) const {
        const hydroplot_trace *t = hydroplot_trace_batch_get(h_.get(), i);
        if (!t) throw error(status(i), error_message(i), http_status(i));
        return trace_view(t);
    }

private:
    detail::handle<hydroplot_trace_batch, hydroplot_trace_batch_free> h_;
};

/** Traces every {x, y} point; one failing point never fails the others. */
inline trace_batch raindrop_traces(const context &ctx, const std::vector<std::array<double, 2>> &points,
                                   const crs_t &crs = std::nullopt, const std::string &direction = "down") {
    hydroplot_trace_batch *raw = nullptr;
    check(hydroplot_raindrop_trace_batch(ctx.get(), points.empty() ? nullptr : points.front().data(), points.size(),
                                         detail::c_str_or_null(crs), direction.c_str(), &raw));
    return trace_batch(raw);
}

/** A map in Web Mercator to draw on: hydroplot_map. */
class map {
public:
    explicit map(hydroplot_map *m) noexcept : h_(m) {}

    /** A new map of {xmin, ymin, xmax, ymax} in `crs`; basemap a provider name or "none". */
    static map create(const context &ctx, const std::array<double, 4> &box, const crs_t &crs = std::nullopt,
                      std::uint32_t width_px = 1024, std::uint32_t height_px = 768,
                      const std::optional<std::string> &basemap = std::nullopt) {
        hydroplot_map *raw = nullptr;
        check(hydroplot_map_new(ctx.get(), box[0], box[1], box[2], box[3], detail::c_str_or_null(crs), width_px,
                                height_px, detail::c_str_or_null(basemap), &raw));
        return map(raw);
    }
    /** Draws GeoJSON given in `crs`; colours as R writes them; fill nullopt = not filled. */
    map &add_geojson(std::string_view geojson, const crs_t &crs = std::nullopt, const std::string &col = "black",
                     const std::optional<std::string> &fill = std::nullopt, double lwd = 1.0) {
        check(hydroplot_map_add_geojson(h_.get(), geojson.data(), geojson.size(), detail::c_str_or_null(crs),
                                        col.c_str(), detail::c_str_or_null(fill), lwd));
        return *this;
    }
    /** Draws R symbol `pch` at (x, y). */
    map &add_point(double x, double y, const crs_t &crs = std::nullopt, int pch = 19, const std::string &col = "black",
                   double cex = 1.0) {
        check(hydroplot_map_add_point(h_.get(), x, y, detail::c_str_or_null(crs), pch, col.c_str(), cex));
        return *this;
    }
    /** Draws a trace: its flowline portion in `flowline_col`, the raindrop path in `trace_col`. */
    map &add_trace(const trace_view &t, const std::string &flowline_col = "red", const std::string &trace_col = "black",
                   double lwd = 2.0) {
        check(hydroplot_map_add_trace(h_.get(), t.get(), flowline_col.c_str(), trace_col.c_str(), lwd));
        return *this;
    }
    /** The map as PNG bytes. */
    std::string png() const {
        return detail::take_buffer([this](hydroplot_buffer **out) { return hydroplot_map_png(h_.get(), out); });
    }
    /** Writes the PNG to `path`, atomically. */
    void write_png(const std::string &path) const { check(hydroplot_map_write_png(h_.get(), path.c_str())); }
    /** The extent {xmin, ymin, xmax, ymax} in EPSG:3857 metres: the outer edges of the corner pixels. */
    std::array<double, 4> bounds() const {
        std::array<double, 4> b{};
        check(hydroplot_map_bounds(h_.get(), b.data()));
        return b;
    }
    /** Writes the world file (`map.png` -> `map.pgw`) and `<png_path>.aux.xml` (EPSG:3857) beside the PNG. */
    void write_world_file(const std::string &png_path) const {
        check(hydroplot_map_write_world_file(h_.get(), png_path.c_str()));
    }
    hydroplot_map *get() noexcept { return h_.get(); }

private:
    detail::handle<hydroplot_map, hydroplot_map_free> h_;
};

/** The parameters of one plot: hydroplot_plot_request. Setters are chainable. */
class plot_request {
public:
    plot_request() : h_(hydroplot_plot_request_new()) {}
    /** Outlet form 2: a comid and its upstream tributaries. */
    plot_request &add_comid(std::int64_t comid) { return ok(hydroplot_plot_request_add_comid(h_.get(), comid)); }
    /** Outlet form 3: exactly these comids. */
    plot_request &set_comid_set(const std::vector<std::int64_t> &comids) {
        return ok(hydroplot_plot_request_set_comid_set(h_.get(), comids.data(), comids.size()));
    }
    /** Outlet form 4: a gauge site, "05428500" or "USGS-05428500". */
    plot_request &add_site(const std::string &site) { return ok(hydroplot_plot_request_add_site(h_.get(), site.c_str())); }
    /** Outlet form 5: a linked-data feature (source, id). */
    plot_request &add_feature(const std::string &source, const std::string &id) {
        return ok(hydroplot_plot_request_add_feature(h_.get(), source.c_str(), id.c_str()));
    }
    /** Outlet form 6: a point in `crs`. */
    plot_request &add_point(double x, double y, const crs_t &crs = std::nullopt) {
        return ok(hydroplot_plot_request_add_point(h_.get(), x, y, detail::c_str_or_null(crs)));
    }
    plot_request &set_bbox(const std::array<double, 4> &b, const crs_t &crs = std::nullopt) {
        return ok(hydroplot_plot_request_set_bbox(h_.get(), b[0], b[1], b[2], b[3], detail::c_str_or_null(crs)));
    }
    /** Minimum stream order (>= 1), or -1 for the automatic rule. */
    plot_request &set_streamorder(int min_order) { return ok(hydroplot_plot_request_set_streamorder(h_.get(), min_order)); }
    plot_request &set_hydro_data(const std::string &gpkg) {
        return ok(hydroplot_plot_request_set_hydro_data(h_.get(), gpkg.c_str()));
    }
    plot_request &set_gpkg(const std::string &out) { return ok(hydroplot_plot_request_set_gpkg(h_.get(), out.c_str())); }
    plot_request &set_overwrite(bool v) { return ok(hydroplot_plot_request_set_overwrite(h_.get(), v)); }
    plot_request &set_flowline_only(bool v) { return ok(hydroplot_plot_request_set_flowline_only(h_.get(), v)); }
    /** plot_config: element ("flowline", "outlets.comid", ...), property, value as in R. */
    plot_request &set_style(const std::string &element, const std::string &property, const std::string &value) {
        return ok(hydroplot_plot_request_set_style(h_.get(), element.c_str(), property.c_str(), value.c_str()));
    }
    plot_request &set_basemap(const std::string &provider) {
        return ok(hydroplot_plot_request_set_basemap(h_.get(), provider.c_str()));
    }
    plot_request &set_zoom(int zoom) { return ok(hydroplot_plot_request_set_zoom(h_.get(), zoom)); }
    plot_request &set_size(std::uint32_t w, std::uint32_t h) { return ok(hydroplot_plot_request_set_size(h_.get(), w, h)); }
    plot_request &set_actually_plot(bool v) { return ok(hydroplot_plot_request_set_actually_plot(h_.get(), v)); }
    /** The level of detail of dense maps (default true); \since 0.3. */
    plot_request &set_lod(bool v) { return ok(hydroplot_plot_request_set_lod(h_.get(), v)); }
    plot_request &set_cache_file(const std::string &path) {
        return ok(hydroplot_plot_request_set_cache_file(h_.get(), path.c_str()));
    }
    plot_request &disable_cache() { return ok(hydroplot_plot_request_disable_cache(h_.get())); }
    const hydroplot_plot_request *get() const noexcept { return h_.get(); }

private:
    plot_request &ok(hydroplot_status s) {
        check(s);
        return *this;
    }
    detail::handle<hydroplot_plot_request, hydroplot_plot_request_free> h_;
};

/** The result of plot(): hydroplot_plot_data. */
class plot_data {
public:
    explicit plot_data(hydroplot_plot_data *pd) noexcept : h_(pd) {}

    /** Features in a layer: outlets, flowline, basin, catchment, network_wtbd, off_network_wtbd, ... */
    std::size_t layer_count(const std::string &layer) const {
        std::size_t n = 0;
        check(hydroplot_plot_data_layer_count(h_.get(), layer.c_str(), &n));
        return n;
    }
    /** A layer as a GeoJSON FeatureCollection (NAD83 lon/lat). */
    std::string layer_geojson(const std::string &layer) const {
        return detail::take_buffer(
            [&](hydroplot_buffer **out) { return hydroplot_plot_data_layer_geojson(h_.get(), layer.c_str(), out); });
    }
    std::vector<std::int64_t> flowline_comids() const {
        const std::int64_t *c = nullptr;
        std::size_t n = 0;
        check(hydroplot_plot_data_flowline_comids(h_.get(), &c, &n));
        return std::vector<std::int64_t>(c, c + n);
    }
    std::array<double, 4> bbox() const {
        std::array<double, 4> b{};
        check(hydroplot_plot_data_bbox(h_.get(), b.data()));
        return b;
    }
    /** The drawn map as PNG bytes (throws HYDROPLOT_ERR_RENDER when nothing was drawn). */
    std::string png() const {
        return detail::take_buffer([this](hydroplot_buffer **out) { return hydroplot_plot_data_png(h_.get(), out); });
    }
    /** Moves the drawn map out, to keep drawing on it. */
    map take_map() {
        hydroplot_map *raw = nullptr;
        check(hydroplot_plot_data_take_map(h_.get(), &raw));
        return map(raw);
    }
    std::vector<std::string> warnings() const {
        std::vector<std::string> out;
        for (std::size_t i = 0, n = hydroplot_plot_data_warning_count(h_.get()); i < n; ++i)
            out.emplace_back(hydroplot_plot_data_warning(h_.get(), i));
        return out;
    }

private:
    detail::handle<hydroplot_plot_data, hydroplot_plot_data_free> h_;
};

/** plot_hydro: a new map (add = FALSE), or drawn onto `onto` (add = TRUE).
 *  A moved-from `onto` throws HYDROPLOT_ERR_NULL_ARGUMENT: passed on as NULL
 *  it would quietly draw a new map instead. */
inline plot_data plot(const context &ctx, const plot_request &req, map *onto = nullptr) {
    if (onto && !onto->get())
        throw error(HYDROPLOT_ERR_NULL_ARGUMENT, "plot: the map to draw onto was moved from", 0);
    hydroplot_plot_data *raw = nullptr;
    check(hydroplot_plot(ctx.get(), req.get(), onto ? onto->get() : nullptr, &raw));
    return plot_data(raw);
}

}  // namespace hydroplot

#endif /* HYDROPLOT_HPP */
