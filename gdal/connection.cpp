// Connection strings and open options: see connection.h.
#include "connection.h"

#include "cpl_string.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace hydroplot_gdal
{
namespace
{

struct KeyDoc
{
    const char *name;
    const char *type;  // as GDAL's open option lists spell them
    const char *description;
};

/// The request and trace keys, handled here.
const KeyDoc kRequestKeys[] = {
    {"comid", "string", "Outlet comid(s), a comma list; repeatable"},
    {"comid_set", "string", "Exactly these comids, a comma list, no upstream expansion"},
    {"site", "string", "Outlet gauge site(s), 05428500 or USGS-05428500; repeatable"},
    {"feature", "string", "Outlet linked-data feature SOURCE:ID; repeatable"},
    {"point", "string", "Outlet point X,Y[,CRS] (default EPSG:4326); repeatable"},
    {"bbox", "string", "Everything in XMIN,YMIN,XMAX,YMAX[,CRS]"},
    {"streamorder", "int", "Only streams of order >= N (1..12, -1 automatic)"},
    {"flowline_only", "boolean", "Only flowlines"},
    {"hydro_data", "string", "A local NHDPlus GeoPackage to read instead of downloading"},
    {"cache_data", "string", "A plot-data cache file, or FALSE for no cache"},
    {"properties", "string", "The fabric properties to download: all (default), plot (what the plot reads), or a comma list added to them"},
    {"trace", "string", "A raindrop trace from X,Y[,CRS] instead of a plot"},
    {"direction", "string-select", "The trace's direction: down (default), up or none"},
};

/// The context options (hydroplot_context_set_option checks their values).
const KeyDoc kContextKeys[] = {
    {"index_url", "string", "The linked-data index service"},
    {"process_url", "string", "The processing (flowtrace) service"},
    {"fabric_url", "string", "The OGC API Features fabric service"},
    {"names", "string", "The naming profile of the services"},
    {"tile_url", "string", "Basemap tile URL template"},
    {"tile_cache_dir", "string", "Tile cache folder"},
    {"tile_cache", "string", "on or off"},
    {"index_dir", "string", "Folder of the index files of local GeoPackages (never written themselves)"},
    {"index", "string", "on (default) or off: the first read of a hydro_data file stores its network, and of a large basin its basin parts, in index_dir"},
    {"timeout_s", "float", "Request timeout, seconds"},
    {"connect_timeout_s", "float", "Connect timeout, seconds"},
    {"retries", "int", "Retries of a failed request"},
    {"concurrency", "int", "Requests at once"},
    {"user_agent", "string", "The User-Agent"},
    {"page_size", "int", "Features per page"},
    {"rate_limit_per_s", "float", "Requests per second at most"},
    {"max_features", "int", "Refuse requests of more features than this"},
    {"ca_bundle", "string", "A PEM file of root certificates trusted besides the system's"},
    {"proxy", "string", "http(s)://[user:password@]host:port, or none to ignore the environment"},
    {"offline", "string", "on: no request is sent; caches and local files serve"},
    {"lock_timeout_s", "float", "How long to wait for a GeoPackage another program holds locked, seconds"},
    {"threads", "int", "Threads a call's CPU work may use (1..256; the output is the same on any number)"},
};

bool IsRequestKey(const std::string &key)
{
    for (const auto &k : kRequestKeys)
        if (key == k.name)
            return true;
    return false;
}

/// Whether `key` (lower case) is one of the driver's: a request, trace or
/// context key.
bool IsDriverKey(const std::string &key)
{
    if (IsRequestKey(key))
        return true;
    for (const auto &k : kContextKeys)
        if (key == k.name)
            return true;
    return false;
}

std::string Trim(const std::string &s)
{
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos)
        return {};
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

std::string Lower(std::string s)
{
    for (auto &ch : s)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
}

std::vector<std::string> SplitCommas(const std::string &s)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (true)
    {
        const auto comma = s.find(',', start);
        out.push_back(Trim(s.substr(start, comma - start)));
        if (comma == std::string::npos)
            return out;
        start = comma + 1;
    }
}

/// A failure of one key: the message names it.
struct KeyError
{
    std::string message;
    hydroplot_status status = HYDROPLOT_ERR_INVALID_ARGUMENT;
};

[[noreturn]] void Fail(const std::string &key, const std::string &problem)
{
    throw KeyError{key + ": " + problem};
}

/// Turns a failed hydroplot call into a KeyError naming `key`.
void Check(hydroplot_status st, const std::string &key)
{
    if (st != HYDROPLOT_OK)
        throw KeyError{key + ": " + hydroplot_last_error(), st};
}

/// Reads `text` whole as a decimal number the way the CLI and the core
/// read one: spaces around ignored, an optional sign, no hexadecimal, and
/// the same whatever the host's locale (std::from_chars, where strtod would
/// take "0x1p6" and, under a comma-decimal locale, stop at the point).
template <typename T> bool ParseDecimal(const std::string &text, T &v)
{
    const char *first = text.data();
    const char *last = first + text.size();
    while (first != last && std::isspace(static_cast<unsigned char>(*first)))
        ++first;
    while (last != first && std::isspace(static_cast<unsigned char>(last[-1])))
        --last;
    if (last - first > 1 && *first == '+' && first[1] != '-')
        ++first;
    const auto [end, ec] = std::from_chars(first, last, v);
    return first != last && ec == std::errc() && end == last;
}

int64_t ParseInt(const std::string &key, const std::string &text)
{
    long long v = 0;
    if (!ParseDecimal(text, v))
        Fail(key, "'" + text + "' is not an integer");
    return v;
}

double ParseReal(const std::string &key, const std::string &text)
{
    double v = 0;
    if (!ParseDecimal(text, v) || !std::isfinite(v))
        Fail(key, "'" + text + "' is not a finite number");
    return v;
}

bool ParseBool(const std::string &key, const std::string &text)
{
    const std::string t = Lower(text);
    if (t == "true" || t == "yes" || t == "on" || t == "1")
        return true;
    if (t == "false" || t == "no" || t == "off" || t == "0")
        return false;
    Fail(key, "'" + text + "' is not a boolean (true/false)");
}

/// `n` numbers then an optional CRS: "x,y[,crs]", "xmin,ymin,xmax,ymax[,crs]".
std::vector<double> ParseCoords(const std::string &key, const std::string &text,
                                size_t n, std::string &crs, const char *shape)
{
    const auto parts = SplitCommas(text);
    if (parts.size() != n && parts.size() != n + 1)
        Fail(key, "'" + text + "' is not " + shape);
    std::vector<double> v;
    for (size_t i = 0; i < n; i++)
        v.push_back(ParseReal(key, parts[i]));
    crs = parts.size() > n ? parts[n] : std::string();
    if (parts.size() > n && crs.empty())
        Fail(key, "the CRS after the numbers is empty");
    return v;
}

void ApplyRequestKey(hydroplot_plot_request *req, const std::string &key,
                     const std::string &value)
{
    if (key == "comid")
    {
        for (const auto &c : SplitCommas(value))
            Check(hydroplot_plot_request_add_comid(req, ParseInt(key, c)), key);
    }
    else if (key == "comid_set")
    {
        std::vector<int64_t> ids;
        for (const auto &c : SplitCommas(value))
            ids.push_back(ParseInt(key, c));
        Check(hydroplot_plot_request_set_comid_set(req, ids.data(), ids.size()),
              key);
    }
    else if (key == "site")
    {
        for (const auto &s : SplitCommas(value))
            Check(hydroplot_plot_request_add_site(req, s.c_str()), key);
    }
    else if (key == "feature")
    {
        const auto colon = value.find(':');
        if (colon == std::string::npos)
            Fail(key, "'" + value + "' is not SOURCE:ID");
        Check(hydroplot_plot_request_add_feature(
                  req, Trim(value.substr(0, colon)).c_str(),
                  Trim(value.substr(colon + 1)).c_str()),
              key);
    }
    else if (key == "point")
    {
        std::string crs;
        const auto v = ParseCoords(key, value, 2, crs, "X,Y[,CRS]");
        Check(hydroplot_plot_request_add_point(req, v[0], v[1],
                                               crs.empty() ? nullptr : crs.c_str()),
              key);
    }
    else if (key == "bbox")
    {
        std::string crs;
        const auto v =
            ParseCoords(key, value, 4, crs, "XMIN,YMIN,XMAX,YMAX[,CRS]");
        Check(hydroplot_plot_request_set_bbox(req, v[0], v[1], v[2], v[3],
                                              crs.empty() ? nullptr : crs.c_str()),
              key);
    }
    else if (key == "streamorder")
    {
        const int64_t order = ParseInt(key, value);
        if (order < INT32_MIN || order > INT32_MAX)
            Fail(key, "'" + value + "' is out of range");
        Check(hydroplot_plot_request_set_streamorder(req,
                                                     static_cast<int32_t>(order)),
              key);
    }
    else if (key == "flowline_only")
    {
        Check(hydroplot_plot_request_set_flowline_only(req, ParseBool(key, value)),
              key);
    }
    else if (key == "hydro_data")
    {
        Check(hydroplot_plot_request_set_hydro_data(req, value.c_str()), key);
    }
    else if (key == "cache_data")
    {
        const std::string t = Lower(value);
        if (t == "false" || t == "no" || t == "off")
            Check(hydroplot_plot_request_disable_cache(req), key);
        else if (!(t == "true" || t == "yes" || t == "on"))
            Check(hydroplot_plot_request_set_cache_file(req, value.c_str()), key);
    }
    else if (key == "properties")
    {
        Check(hydroplot_plot_request_set_properties(req, value.c_str()), key);
    }
}

/// Every `key=value` of the string after the prefix, then the open options.
std::vector<std::pair<std::string, std::string>>
Settings(const char *filename, const char *const *open_options)
{
    std::vector<std::pair<std::string, std::string>> out;
    auto add = [&](const std::string &item, const char *where)
    {
        if (Trim(item).empty())
            return;
        const auto eq = item.find('=');
        if (eq == std::string::npos)
            throw KeyError{"'" + item + "' in the " + where +
                           " is not key=value"};
        const std::string key = Lower(Trim(item.substr(0, eq)));
        const std::string value = Trim(item.substr(eq + 1));
        if (key.empty())
            throw KeyError{"'" + item + "' in the " + where + " has no key"};
        if (value.empty())
            Fail(key, "the value is empty");
        out.emplace_back(key, value);
    };
    const std::string rest = filename + std::strlen(kPrefix);
    size_t start = 0;
    while (start <= rest.size())
    {
        const auto amp = rest.find('&', start);
        add(rest.substr(start, amp - start), "connection string");
        if (amp == std::string::npos)
            break;
        start = amp + 1;
    }
    for (auto p = open_options; p && *p; ++p)
    {
        // GDAL's own options, passed to every driver (ogr2ogr's
        // NATIVE_DATA=YES, internal @KEY=...): not ours to refuse.
        if (STARTS_WITH_CI(*p, "NATIVE_DATA=") || (*p)[0] == '@')
            continue;
        // Options the host passes to every source (QGIS's NOLOCK=ON,
        // LIST_ALL_TABLES=...) are not ours either: GDAL's convention is a
        // warning and an open that goes on. GDALOpenEx has already warned
        // (CPLE_NotSupported, "driver HYDROPLOT does not support open option
        // NOLOCK", checked against our DMD_OPENOPTIONLIST), so the option is
        // only left out here. Only the string's keys are strict.
        const std::string name = Trim(std::string(*p).substr(0, std::strcspn(*p, "=")));
        if (!IsDriverKey(Lower(name)))
        {
            CPLDebug("HYDROPLOT", "open option %s ignored: not a driver key",
                     name.c_str());
            continue;
        }
        add(*p, "open options");
    }
    return out;
}

void Parse(const char *filename, const char *const *open_options,
           Connection &out)
{
    const auto settings = Settings(filename, open_options);
    hydroplot_context *ctx = nullptr;
    Check(hydroplot_context_new(&ctx), "context");
    out.context.reset(ctx);
    out.request.reset(hydroplot_plot_request_new());
    if (!out.request)
        throw KeyError{std::string("request: ") + hydroplot_last_error(),
                       HYDROPLOT_ERR_INTERNAL};
    std::string plot_key, trace_text;
    for (const auto &[key, value] : settings)
    {
        if (key == "trace")
            trace_text = value;
        else if (key == "direction")
            out.trace_direction = value;  // checked by the library's trace
        else if (IsRequestKey(key))
        {
            ApplyRequestKey(out.request.get(), key, value);
            plot_key = key;
        }
        else
            Check(hydroplot_context_set_option(ctx, key.c_str(), value.c_str()),
                  key);
    }
    if (!trace_text.empty())
    {
        if (!plot_key.empty())
            Fail("trace", "cannot be combined with the plot key " + plot_key);
        const auto v =
            ParseCoords("trace", trace_text, 2, out.trace_crs, "X,Y[,CRS]");
        out.is_trace = true;
        out.trace_x = v[0];
        out.trace_y = v[1];
        out.request.reset();
        return;
    }
    if (!out.trace_direction.empty())
        Fail("direction", "only a trace has a direction");

    bool has_outlet = false;
    for (const auto &[key, value] : settings)
        has_outlet = has_outlet || key == "comid" || key == "comid_set" ||
                     key == "site" || key == "feature" || key == "point" ||
                     key == "bbox";
    if (!has_outlet)
        throw KeyError{"no outlet: give comid, comid_set, site, feature, "
                       "point, bbox or trace"};
    Check(hydroplot_plot_request_set_actually_plot(out.request.get(), false),
          "request");
}

}  // namespace

bool HasPrefix(const char *filename)
{
    return filename != nullptr && STARTS_WITH_CI(filename, kPrefix);
}

bool ParseConnection(const char *filename, const char *const *open_options,
                     Connection &out, std::string &err,
                     hydroplot_status &status)
{
    try
    {
        Parse(filename, open_options, out);
        return true;
    }
    catch (const KeyError &e)
    {
        err = e.message;
        status = e.status;
        out = Connection();
        return false;
    }
}

std::string OpenOptionListXml()
{
    std::string xml = "<OpenOptionList>";
    auto add = [&](const KeyDoc &k)
    {
        std::string name = k.name;
        for (auto &ch : name)
            ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        char *description = CPLEscapeString(k.description, -1, CPLES_XML);
        xml += std::string("<Option name=\"") + name + "\" type=\"" + k.type +
               "\" description=\"" + description + "\"";
        CPLFree(description);
        if (std::string(k.type) == "string-select")
            xml += "><Value>down</Value><Value>up</Value><Value>none</Value>"
                   "</Option>";
        else
            xml += "/>";
    };
    for (const auto &k : kRequestKeys)
        add(k);
    for (const auto &k : kContextKeys)
        add(k);
    return xml + "</OpenOptionList>";
}

}  // namespace hydroplot_gdal
