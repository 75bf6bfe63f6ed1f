// A HYDROPLOT layer: features served from the kept Arrow batches.
#include "ogr_hydroplot.h"

#include "cpl_json.h"

#include <cstring>
#include <set>

namespace hydroplot_gdal
{
namespace
{

/// The geometry type a WKB value starts with (ISO codes, and the EWKB
/// flags of older writers); wkbUnknown when unreadable.
OGRwkbGeometryType WkbType(const uint8_t *wkb, size_t len)
{
    if (len < 5 || wkb[0] > 1)
        return wkbUnknown;
    uint32_t code;
    std::memcpy(&code, wkb + 1, 4);
    const bool little = wkb[0] == 1;
    const uint16_t probe = 1;
    const bool host_little = *reinterpret_cast<const uint8_t *>(&probe) == 1;
    if (little != host_little)
        code = CPL_SWAP32(code);
    const bool z = (code & 0x80000000u) || (code % 10000) / 1000 == 1 ||
                   (code % 10000) / 1000 == 3;
    const bool m = (code & 0x40000000u) || (code % 10000) / 1000 == 2 ||
                   (code % 10000) / 1000 == 3;
    const auto flat =
        static_cast<OGRwkbGeometryType>((code & 0x0fffffffu) % 1000);
    if (flat < wkbPoint || flat > wkbGeometryCollection)
        return wkbUnknown;
    return OGR_GT_SetModifier(flat, z, m);
}

OGRFieldType NaturalType(ColumnKind kind)
{
    switch (kind)
    {
        case ColumnKind::Bool:
        case ColumnKind::Int32:
            return OFTInteger;
        case ColumnKind::Int64:
            return OFTInteger64;
        case ColumnKind::Float32:
        case ColumnKind::Float64:
            return OFTReal;
        case ColumnKind::Binary:
        case ColumnKind::LargeBinary:
            return OFTBinary;
        case ColumnKind::ListFloat64:
            return OFTRealList;
        default:
            return OFTString;
    }
}

bool IsGeometryColumn(const ColumnInfo &c)
{
    const bool binary =
        c.kind == ColumnKind::Binary || c.kind == ColumnKind::LargeBinary;
    return binary && (c.extension_name == "geoarrow.wkb" ||
                      c.extension_name == "ogc.wkb" ||
                      (c.extension_name.empty() && c.name == "geometry"));
}

/// The CRS of GeoArrow extension metadata: `crs` as a string (an authority
/// code) or an object (PROJJSON). Empty when there is none.
std::string GeoArrowCrs(const std::string &metadata)
{
    CPLJSONDocument doc;
    if (metadata.empty() ||
        !doc.LoadMemory(reinterpret_cast<const GByte *>(metadata.data()),
                        static_cast<int>(metadata.size())))
        return {};
    const CPLJSONObject crs = doc.GetRoot().GetObj("crs");
    switch (crs.GetType())
    {
        case CPLJSONObject::Type::String:
            return crs.ToString();
        case CPLJSONObject::Type::Object:
            return crs.Format(CPLJSONObject::PrettyFormat::Plain);
        default:
            return {};
    }
}

/// `[lon,lat]`-style JSON text as doubles (the trace's intersection point
/// before it became a list column).
std::vector<double> JsonNumbers(const std::string &text)
{
    std::vector<double> out;
    CPLJSONDocument doc;
    if (!doc.LoadMemory(text))
        return out;
    const CPLJSONArray a = doc.GetRoot().ToArray();
    for (int i = 0; i < a.Size(); i++)
        out.push_back(a[i].ToDouble());
    return out;
}

}  // namespace

OGRHydroplotLayer::OGRHydroplotLayer(const std::string &name,
                                     const char *default_crs,
                                     StreamSource source,
                                     std::vector<FixedField> fixed_fields)
    : name_(name), default_crs_(default_crs), source_(std::move(source)),
      fixed_fields_(std::move(fixed_fields)),
      defn_(new OGRFeatureDefn(name.c_str()))
{
    defn_->Reference();
    defn_->SetGeomType(wkbNone);
    SetDescription(name.c_str());
    loaded_ = Load();
}

OGRHydroplotLayer::~OGRHydroplotLayer()
{
    defn_->Release();
}

bool OGRHydroplotLayer::Load()
{
    ArrowArrayStream stream{};
    std::string err;
    const bool ok = source_(&stream) && table_.Read(&stream, err);
    if (!ok && !err.empty())
        CPLError(CE_Failure, CPLE_AppDefined, "HYDROPLOT: layer %s: %s",
                 name_.c_str(), err.c_str());
    BuildDefinition();
    return ok;
}

void OGRHydroplotLayer::BuildDefinition()
{
    const auto &columns = table_.Columns();
    field_of_column_.assign(columns.size(), -1);
    stream_is_definition_ = true;
    for (size_t c = 0; c < columns.size(); c++)
    {
        const ColumnInfo &col = columns[c];
        if (geometry_column_ < 0 && IsGeometryColumn(col))
        {
            geometry_column_ = static_cast<int>(c);
            continue;
        }
        if (col.kind == ColumnKind::Unsupported)
        {
            CPLDebug("HYDROPLOT", "layer %s: column %s of Arrow type %s left out",
                     name_.c_str(), col.name.c_str(), col.format.c_str());
            stream_is_definition_ = false;
            continue;
        }
        OGRFieldType type = NaturalType(col.kind);
        for (const auto &f : fixed_fields_)
            if (col.name == f.name && f.type != type)
            {
                type = f.type;
                stream_is_definition_ = false;
            }
        OGRFieldDefn field(col.name.c_str(), type);
        if (col.kind == ColumnKind::Bool)
            field.SetSubType(OFSTBoolean);
        if (col.extension_name == "arrow.json")
            field.SetSubType(OFSTJSON);
        field_of_column_[c] = defn_->GetFieldCount();
        defn_->AddFieldDefn(&field);
    }
    for (const auto &f : fixed_fields_)
        if (defn_->GetFieldIndex(f.name) < 0)
        {
            OGRFieldDefn field(f.name, f.type);
            fields_without_column_.push_back(defn_->GetFieldCount());
            defn_->AddFieldDefn(&field);
            stream_is_definition_ = false;
        }

    // The geometry field: its type as the stream declares it (so an empty
    // layer has one too, and a layer has the same whatever its source),
    // else from the WKB of every row; its SRS from the GeoArrow metadata.
    std::set<OGRwkbGeometryType> types;
    if (geometry_column_ >= 0)
        for (int64_t r = 0; r < table_.RowCount(); r++)
        {
            const Cell cell = table_.At(r, geometry_column_);
            const ColumnKind kind = columns[geometry_column_].kind;
            if (IsNull(cell, kind))
                continue;
            size_t len = 0;
            const uint8_t *wkb = BytesValue(cell, kind, len);
            types.insert(WkbType(wkb, len));
        }
    OGRwkbGeometryType type = wkbUnknown;
    if (types.size() == 1)
        type = *types.begin();
    else if (types.size() == 2)
    {
        // Single and multi of one family (LineString, MultiLineString):
        // declared multi, the singles promoted on read.
        const OGRwkbGeometryType a = *types.begin(), b = *types.rbegin();
        const OGRwkbGeometryType multi = OGR_GT_GetCollection(a);
        if (multi == b)
        {
            type = b;
            promote_to_multi_ = true;
        }
    }
    const OGRwkbGeometryType declared =
        geometry_column_ >= 0 && !columns[geometry_column_].geometry_type.empty()
            ? OGRFromOGCGeomType(columns[geometry_column_].geometry_type.c_str())
            : wkbUnknown;
    if (declared != wkbUnknown)
    {
        // Every row is of the declared type (the library declares no
        // other): nothing to promote.
        type = declared;
        promote_to_multi_ = false;
    }
    const std::string crs = geometry_column_ >= 0
                                ? GeoArrowCrs(columns[geometry_column_].extension_metadata)
                                : std::string();
    auto *srs = new OGRSpatialReference();
    srs->SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
    if (crs.empty() || srs->SetFromUserInput(crs.c_str()) != OGRERR_NONE)
        srs->SetFromUserInput(default_crs_.c_str());
    const std::string geometry_name =
        geometry_column_ >= 0 ? columns[geometry_column_].name : "geometry";
    OGRGeomFieldDefn geometry(geometry_name.c_str(), type);
    geometry.SetSpatialRef(srs);
    srs->Release();  // the field holds its own reference
    // AddGeomFieldDefn stores a clone: the geometries get the definition's
    // own object, the one GetSpatialRef() returns (test_ogrsf compares the
    // pointers).
    defn_->AddGeomFieldDefn(&geometry);
    srs_ = defn_->GetGeomFieldDefn(0)->GetSpatialRef();
    if (geometry_column_ < 0)
        stream_is_definition_ = false;
}

void OGRHydroplotLayer::ResetReading()
{
    next_row_ = 0;
}

OGRFeature *OGRHydroplotLayer::GetNextRawFeature()
{
    if (next_row_ >= table_.RowCount())
        return nullptr;
    return BuildFeature(next_row_++);
}

OGRFeature *OGRHydroplotLayer::GetFeature(GIntBig fid)
{
    if (fid < 0 || fid >= table_.RowCount())
        return nullptr;
    return BuildFeature(fid);
}

GIntBig OGRHydroplotLayer::GetFeatureCount(int force)
{
    if (m_poFilterGeom == nullptr && m_poAttrQuery == nullptr)
        return table_.RowCount();
    return OGRLayer::GetFeatureCount(force);
}

OGRFeature *OGRHydroplotLayer::BuildFeature(int64_t row)
{
    auto *f = new OGRFeature(defn_);
    f->SetFID(row);
    const auto &columns = table_.Columns();
    for (size_t c = 0; c < columns.size(); c++)
        if (field_of_column_[c] >= 0)
            SetFieldFromCell(f, field_of_column_[c], c, row);
    for (int field : fields_without_column_)
        f->SetFieldNull(field);
    if (geometry_column_ >= 0)
    {
        const ColumnKind kind = columns[geometry_column_].kind;
        const Cell cell = table_.At(row, geometry_column_);
        if (!IsNull(cell, kind))
        {
            size_t len = 0;
            const uint8_t *wkb = BytesValue(cell, kind, len);
            OGRGeometry *g = nullptr;
            if (OGRGeometryFactory::createFromWkb(wkb, srs_, &g, len,
                                                  wkbVariantIso) == OGRERR_NONE &&
                g != nullptr)
            {
                if (promote_to_multi_)
                    g = OGRGeometryFactory::forceTo(g, defn_->GetGeomType());
                f->SetGeometryDirectly(g);
            }
            else
                CPLError(CE_Warning, CPLE_AppDefined,
                         "HYDROPLOT: layer %s: feature " CPL_FRMT_GIB
                         " has an unreadable WKB geometry",
                         name_.c_str(), static_cast<GIntBig>(row));
        }
    }
    return f;
}

void OGRHydroplotLayer::SetFieldFromCell(OGRFeature *f, int field, size_t col,
                                         int64_t row)
{
    const ColumnKind kind = table_.Columns()[col].kind;
    const Cell cell = table_.At(row, col);
    if (IsNull(cell, kind))
    {
        f->SetFieldNull(field);
        return;
    }
    const OGRFieldType type = defn_->GetFieldDefn(field)->GetType();
    switch (kind)
    {
        case ColumnKind::Bool:
            f->SetField(field, BoolValue(cell) ? 1 : 0);
            break;
        case ColumnKind::Int32:
        case ColumnKind::Int64:
            f->SetField(field, static_cast<GIntBig>(Int64Value(cell, kind)));
            break;
        case ColumnKind::Float32:
        case ColumnKind::Float64:
            f->SetField(field, RealValue(cell, kind));
            break;
        case ColumnKind::Binary:
        case ColumnKind::LargeBinary:
        {
            size_t len = 0;
            const uint8_t *b = BytesValue(cell, kind, len);
            f->SetField(field, static_cast<int>(len), b);
            break;
        }
        case ColumnKind::ListFloat64:
        {
            const std::vector<double> v = ListValue(cell);
            f->SetField(field, static_cast<int>(v.size()), v.data());
            break;
        }
        default:
        {
            size_t len = 0;
            const uint8_t *b = BytesValue(cell, kind, len);
            const std::string text(reinterpret_cast<const char *>(b), len);
            if (type == OFTRealList)
            {
                const std::vector<double> v = JsonNumbers(text);
                f->SetField(field, static_cast<int>(v.size()), v.data());
            }
            else
                f->SetField(field, text.c_str());
        }
    }
}

bool OGRHydroplotLayer::OwnStreamFits(CSLConstList options) const
{
    if (!stream_is_definition_ || m_poFilterGeom != nullptr ||
        m_poAttrQuery != nullptr)
        return false;
    if (CPLFetchBool(options, "INCLUDE_FID", true))
        return false;
    const char *encoding = CSLFetchNameValue(options, "GEOMETRY_ENCODING");
    if (encoding != nullptr && !EQUAL(encoding, "WKB"))
        return false;
    // Ours is GeoArrow's extension name; GDAL's generic stream says ogc.wkb
    // unless asked for GEOARROW (GDAL >= 3.8).
    const char *metadata =
        CSLFetchNameValue(options, "GEOMETRY_METADATA_ENCODING");
    if (metadata != nullptr && !EQUAL(metadata, "GEOARROW"))
        return false;
    const char *max = CSLFetchNameValue(options, "MAX_FEATURES_IN_BATCH");
    if (max != nullptr && CPLAtoGIntBig(max) < table_.RowCount())
        return false;
    if (defn_->IsGeometryIgnored())
        return false;
    for (int i = 0; i < defn_->GetFieldCount(); i++)
        if (defn_->GetFieldDefn(i)->IsIgnored())
            return false;
    return true;
}

bool OGRHydroplotLayer::GetArrowStream(ArrowArrayStream *out,
                                       CSLConstList options)
{
    if (OwnStreamFits(options))
        return source_(out);
    return OGRLayer::GetArrowStream(out, options);
}

int OGRHydroplotLayer::TestCapability(const char *cap) HYDROPLOT_GDAL_CONST
{
    if (EQUAL(cap, OLCFastFeatureCount))
        return m_poFilterGeom == nullptr && m_poAttrQuery == nullptr;
    if (EQUAL(cap, OLCRandomRead) || EQUAL(cap, OLCStringsAsUTF8))
        return TRUE;
    if (EQUAL(cap, OLCFastGetArrowStream))
        return stream_is_definition_ && m_poFilterGeom == nullptr &&
               m_poAttrQuery == nullptr;
    return FALSE;
}

}  // namespace hydroplot_gdal
