// The HYDROPLOT vector driver: hydroplot's plot data and raindrop traces as
// OGR layers. The driver registers once (GDALRegister_HYDROPLOT); a dataset
// is one hydroplot_plot (or hydroplot_raindrop_trace) call; a layer keeps the
// Arrow batches of its hydroplot_*_arrow stream and serves features from them
// (FID = row index), through GetNextRawFeature so GDAL's generic spatial and
// attribute filters apply.
#pragma once

#include "ogrsf_frmts.h"

#include "arrow_table.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

// GDAL 3.12 made the layer and dataset getters const; one source for both.
#if GDAL_VERSION_NUM >= GDAL_COMPUTE_VERSION(3, 12, 0)
#define HYDROPLOT_GDAL_CONST const
#else
#define HYDROPLOT_GDAL_CONST
#endif

namespace hydroplot_gdal
{

/// A field the layer always has, whatever its stream holds (the trace's 7).
struct FixedField
{
    const char *name;
    OGRFieldType type;
};

/// One layer. Reads its whole stream when constructed; owns its batches,
/// feature definition and SRS; owned by its dataset.
class OGRHydroplotLayer final
    : public OGRLayer,
      public OGRGetNextFeatureThroughRaw<OGRHydroplotLayer>
{
    DEFINE_GET_NEXT_FEATURE_THROUGH_RAW(OGRHydroplotLayer)

  public:
    /// Fills `out` with a new stream of the layer's data (its own copy, so
    /// it may be handed to a caller); false after a CPLError.
    using StreamSource = std::function<bool(ArrowArrayStream *out)>;

    /// `default_crs`: the CRS when the stream's GeoArrow metadata names none
    /// GDAL understands. A stream that fails leaves the layer empty, after a
    /// CPLError; Loaded() tells.
    OGRHydroplotLayer(const std::string &name, const char *default_crs,
                      StreamSource source,
                      std::vector<FixedField> fixed_fields = {});
    ~OGRHydroplotLayer() override;

    bool Loaded() const
    {
        return loaded_;
    }
    void ResetReading() override;
    OGRFeature *GetNextRawFeature();
    OGRFeature *GetFeature(GIntBig fid) override;
    GIntBig GetFeatureCount(int force) override;
    HYDROPLOT_GDAL_CONST OGRFeatureDefn *GetLayerDefn() HYDROPLOT_GDAL_CONST override
    {
        return defn_;
    }
    int TestCapability(const char *cap) HYDROPLOT_GDAL_CONST override;
    bool GetArrowStream(ArrowArrayStream *out,
                        CSLConstList options = nullptr) override;

  private:
    /// Reads the stream and builds the definition; false (after a CPLError)
    /// when the stream failed: the layer is then empty.
    bool Load();
    void BuildDefinition();
    OGRFeature *BuildFeature(int64_t row);
    void SetFieldFromCell(OGRFeature *f, int field, size_t col, int64_t row);
    /// Whether hydroplot's own stream is exactly what the generic
    /// implementation would produce for these options.
    bool OwnStreamFits(CSLConstList options) const;

    std::string name_;
    std::string default_crs_;
    StreamSource source_;
    std::vector<FixedField> fixed_fields_;
    OGRFeatureDefn *defn_;
    /// The geometry field's SRS, owned by `defn_`; every geometry refers to
    /// it. Typed as GetSpatialRef() returns it (const from later GDALs on).
    decltype(std::declval<const OGRGeomFieldDefn &>().GetSpatialRef()) srs_ =
        nullptr;
    ArrowTable table_;
    bool loaded_ = false;
    int geometry_column_ = -1;
    std::vector<int> field_of_column_;  // -1: the geometry, or skipped
    std::vector<int> fields_without_column_;  // fixed fields the stream lacks: null
    bool promote_to_multi_ = false;
    bool stream_is_definition_ = false;
    int64_t next_row_ = 0;
};

/// One connection: the plot data (or trace) and its layers.
class OGRHydroplotDataset final : public GDALDataset
{
  public:
    /// GDAL's pfnOpen: parses the connection, runs the request, builds the
    /// layers. NULL after a CPLError naming the cause.
    static GDALDataset *Open(GDALOpenInfo *info);

    int GetLayerCount() HYDROPLOT_GDAL_CONST override
    {
        return static_cast<int>(layers_.size());
    }
    HYDROPLOT_GDAL_CONST OGRLayer *GetLayer(int i) HYDROPLOT_GDAL_CONST override;
    int TestCapability(const char *) HYDROPLOT_GDAL_CONST override
    {
        return FALSE;
    }

  private:
    static GDALDataset *OpenConnection(GDALOpenInfo *info);

    std::vector<std::unique_ptr<OGRHydroplotLayer>> layers_;
};

}  // namespace hydroplot_gdal

extern "C" void CPL_DLL GDALRegister_HYDROPLOT();
