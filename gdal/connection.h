// Connection strings and open options of the HYDROPLOT driver:
//
//   HYDROPLOT:comid=13293970&hydro_data=/data/yahara.gpkg
//   HYDROPLOT:trace=-89.2158,42.9561&direction=up
//
// Each `key=value` (and each open option KEY=VALUE) is a request key of the
// CLI (comid, comid_set, site, feature, point, bbox, streamorder,
// flowline_only, hydro_data, cache_data, properties), a trace key (trace,
// direction) or a context option (hydroplot_context_set_option). Every
// value is checked before any request; a bad one is an error naming its key.
// An unknown key in the string is an error too; an open option that is not
// one of these keys (QGIS's NOLOCK=ON) is ignored after GDALOpenEx's
// CPLE_NotSupported warning, as by GDAL's own drivers.
#pragma once

#include "arrow_table.h"  // the Arrow C structs, before hydroplot.h

#include "hydroplot.h"

#include <memory>
#include <string>
#include <vector>

namespace hydroplot_gdal
{

/// The connection prefix, matched case-insensitively.
constexpr const char *kPrefix = "HYDROPLOT:";

/// A smart pointer's deleter: hydroplot's one `_free` of a handle type.
template <typename T, void (*Free)(T *)> struct HandleFree
{
    void operator()(T *p) const
    {
        Free(p);
    }
};
using ContextPtr =
    std::unique_ptr<hydroplot_context,
                    HandleFree<hydroplot_context, hydroplot_context_free>>;
using RequestPtr = std::unique_ptr<
    hydroplot_plot_request,
    HandleFree<hydroplot_plot_request, hydroplot_plot_request_free>>;

/// What a connection asks for: a plot request, or a raindrop trace; both
/// with the context they run in. Built by ParseConnection; owns its handles.
struct Connection
{
    ContextPtr context;
    RequestPtr request;  // null for a trace
    bool is_trace = false;
    double trace_x = 0, trace_y = 0;
    std::string trace_crs;        // empty: EPSG:4326
    std::string trace_direction;  // empty: the library's default (down)
};

/// Whether `filename` starts with the connection prefix.
bool HasPrefix(const char *filename);

/// Parses `filename` (the prefix and `key=value&...`) and the open options
/// (`KEY=VALUE`, may be null) into `out`, setting every value on a new
/// context and request. On failure returns false with `err` naming the key
/// and the problem and `status` the hydroplot status (an invalid argument
/// unless the library said otherwise); nothing has been requested. An open
/// option that is not a driver key is left out (GDAL has warned).
bool ParseConnection(const char *filename, const char *const *open_options,
                     Connection &out, std::string &err,
                     hydroplot_status &status);

/// The driver's DMD_OPENOPTIONLIST: every key ParseConnection accepts.
std::string OpenOptionListXml();

}  // namespace hydroplot_gdal
