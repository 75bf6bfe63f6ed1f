// The HYDROPLOT driver: registration, identification, and the dataset a
// connection string opens.
#include "ogr_hydroplot.h"

#include "connection.h"

namespace hydroplot_gdal
{
namespace
{

/// The 9 layers of plot data, in the order hydroplot documents them.
const char *const kPlotLayers[] = {
    "flowline", "basin",   "catchment",           "network_wtbd", "off_network_wtbd",
    "outlets",  "nhdarea", "flowline_nonnetwork", "gage",
};

/// The spec's 7 fields of a raindrop trace (docs: interface.md).
const std::vector<FixedField> kTraceFields = {
    {"id", OFTString},          {"gnis_name", OFTString},
    {"comid", OFTInteger64},    {"reachcode", OFTString},
    {"raindrop_pathDist", OFTReal}, {"measure", OFTReal},
    {"intersection_point", OFTRealList},
};

CPLErrorNum ErrorNumber(hydroplot_status st)
{
    switch (st)
    {
        case HYDROPLOT_ERR_NULL_ARGUMENT:
        case HYDROPLOT_ERR_INVALID_ARGUMENT:
        case HYDROPLOT_ERR_CRS:
            return CPLE_IllegalArg;
        case HYDROPLOT_ERR_IO:
        case HYDROPLOT_ERR_GPKG:
        case HYDROPLOT_ERR_NOT_FOUND:
            return CPLE_OpenFailed;
        case HYDROPLOT_ERR_HTTP:
            return CPLE_HttpResponse;
        default:
            return CPLE_AppDefined;
    }
}

/// Reports the failed hydroplot call `what` through CPLError.
void ReportFailure(hydroplot_status st, const char *what)
{
    CPLError(CE_Failure, ErrorNumber(st), "HYDROPLOT: %s failed (%s): %s", what,
             hydroplot_status_str(st), hydroplot_last_error());
}

/// Relays hydroplot's log lines to GDAL: its warnings (a layer a service
/// lacks, an outlet the stream order filter leaves out, tiles left blank) as
/// CE_Warning, which ogrinfo, ogr2ogr and QGIS show; the rest (retries,
/// stages) to the debug output. Levels: 1 error, 2 warning, 3 info, 4 debug.
void LogToCpl(void *, int32_t level, const char *message)
{
    if (level <= 2)
        CPLError(CE_Warning, CPLE_AppDefined, "HYDROPLOT: %s", message);
    else
        CPLDebug("HYDROPLOT", "[%d] %s", level, message);
}

int Identify(GDALOpenInfo *info)
{
    return HasPrefix(info->pszFilename);
}

}  // namespace

GDALDataset *OGRHydroplotDataset::Open(GDALOpenInfo *info)
{
    if (!Identify(info) || (info->nOpenFlags & GDAL_OF_VECTOR) == 0)
        return nullptr;
    // No C++ exception (an allocation failure) may unwind into GDAL's C code.
    try
    {
        return OpenConnection(info);
    }
    catch (const std::exception &e)
    {
        CPLError(CE_Failure, CPLE_AppDefined, "HYDROPLOT: %s", e.what());
        return nullptr;
    }
}

GDALDataset *OGRHydroplotDataset::OpenConnection(GDALOpenInfo *info)
{
    if (info->eAccess == GA_Update)
    {
        CPLError(CE_Failure, CPLE_NotSupported,
                 "HYDROPLOT: the driver is read-only");
        return nullptr;
    }
    Connection conn;
    std::string err;
    hydroplot_status st = HYDROPLOT_OK;
    if (!ParseConnection(info->pszFilename, info->papszOpenOptions, conn, err,
                         st))
    {
        CPLError(CE_Failure, ErrorNumber(st),
                 "HYDROPLOT: bad connection string: %s", err.c_str());
        return nullptr;
    }
    hydroplot_context_set_log_callback(conn.context.get(), LogToCpl, nullptr);
    auto ds = std::make_unique<OGRHydroplotDataset>();
    ds->SetDescription(info->pszFilename);
    if (conn.is_trace)
    {
        hydroplot_trace *raw = nullptr;
        st = hydroplot_raindrop_trace(
            conn.context.get(), conn.trace_x, conn.trace_y,
            conn.trace_crs.empty() ? nullptr : conn.trace_crs.c_str(),
            conn.trace_direction.empty() ? nullptr : conn.trace_direction.c_str(),
            &raw);
        if (st != HYDROPLOT_OK)
        {
            ReportFailure(st, "the raindrop trace");
            return nullptr;
        }
        std::shared_ptr<hydroplot_trace> trace(
            raw, HandleFree<hydroplot_trace, hydroplot_trace_free>());
        auto source = [trace](ArrowArrayStream *out)
        {
            const hydroplot_status s = hydroplot_trace_arrow(trace.get(), out);
            if (s != HYDROPLOT_OK)
                ReportFailure(s, "hydroplot_trace_arrow");
            return s == HYDROPLOT_OK;
        };
        ds->layers_.push_back(std::make_unique<OGRHydroplotLayer>(
            "trace", "EPSG:4326", source, kTraceFields));
        return ds->layers_.back()->Loaded() ? ds.release() : nullptr;
    }
    hydroplot_plot_data *raw = nullptr;
    st = hydroplot_plot(conn.context.get(), conn.request.get(), nullptr, &raw);
    if (st != HYDROPLOT_OK)
    {
        ReportFailure(st, "the plot request");
        return nullptr;
    }
    std::shared_ptr<hydroplot_plot_data> plot(
        raw, HandleFree<hydroplot_plot_data, hydroplot_plot_data_free>());
    for (const char *name : kPlotLayers)
    {
        auto source = [plot, name](ArrowArrayStream *out)
        {
            const hydroplot_status s =
                hydroplot_plot_data_layer_arrow(plot.get(), name, out);
            if (s != HYDROPLOT_OK)
                ReportFailure(s, "hydroplot_plot_data_layer_arrow");
            return s == HYDROPLOT_OK;
        };
        ds->layers_.push_back(
            std::make_unique<OGRHydroplotLayer>(name, "EPSG:4269", source));
        if (!ds->layers_.back()->Loaded())
            return nullptr;
    }
    return ds.release();
}

HYDROPLOT_GDAL_CONST OGRLayer *OGRHydroplotDataset::GetLayer(int i) HYDROPLOT_GDAL_CONST
{
    if (i < 0 || i >= GetLayerCount())
        return nullptr;
    return layers_[static_cast<size_t>(i)].get();
}

}  // namespace hydroplot_gdal

extern "C" void GDALRegister_HYDROPLOT()
{
    if (!GDAL_CHECK_VERSION("HYDROPLOT"))
        return;
    if (GDALGetDriverByName("HYDROPLOT") != nullptr)
        return;
    auto *driver = new GDALDriver();
    driver->SetDescription("HYDROPLOT");
    driver->SetMetadataItem(GDAL_DCAP_VECTOR, "YES");
    driver->SetMetadataItem(GDAL_DMD_LONGNAME,
                            "hydroplot: NHDPlus basins, upstream networks and "
                            "raindrop traces");
    driver->SetMetadataItem(GDAL_DMD_CONNECTION_PREFIX,
                            hydroplot_gdal::kPrefix);
    driver->SetMetadataItem(GDAL_DMD_OPENOPTIONLIST,
                            hydroplot_gdal::OpenOptionListXml().c_str());
    driver->SetMetadataItem(GDAL_DMD_SUPPORTED_SQL_DIALECTS, "OGRSQL SQLITE");
    driver->SetMetadataItem(GDAL_DMD_HELPTOPIC, "docs/gdal.md");
    driver->pfnIdentify = hydroplot_gdal::Identify;
    driver->pfnOpen = hydroplot_gdal::OGRHydroplotDataset::Open;
    GetGDALDriverManager()->RegisterDriver(driver);
}

/// The entry point GDAL's plugin loader looks up in ogr_HYDROPLOT.so.
extern "C" void CPL_DLL RegisterOGRHYDROPLOT()
{
    GDALRegister_HYDROPLOT();
}
