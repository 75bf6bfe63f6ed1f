// Tests of the layer over hand-made Arrow streams: the layouts hydroplot's
// sample data never shows (int32, bool, large_utf8, null columns,
// list<float64>, validity bitmaps, batch and child offsets, several
// batches, mixed single/multi geometries, a failing stream). Every expected
// value is written here by hand. Built and run by gdal/ci.sh:
//
//   g++ -std=c++17 gdal/layer_test.cpp gdal/arrow_table.cpp gdal/ogrhydroplotlayer.cpp -lgdal
#include "ogr_hydroplot.h"

#include <cmath>
#include <cstdio>
#include <cstring>

using hydroplot_gdal::FixedField;
using hydroplot_gdal::OGRHydroplotLayer;

namespace
{

int g_passed = 0, g_failed = 0;

void Expect(bool ok, const char *what)
{
    std::printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    (ok ? g_passed : g_failed)++;
}

// --- A static two-batch stream --------------------------------------------

std::vector<uint8_t> LineWkb(std::initializer_list<double> xy)
{
    std::vector<uint8_t> w = {1, 2, 0, 0, 0};
    const uint32_t n = static_cast<uint32_t>(xy.size() / 2);
    w.insert(w.end(), reinterpret_cast<const uint8_t *>(&n),
             reinterpret_cast<const uint8_t *>(&n) + 4);
    for (double v : xy)
        w.insert(w.end(), reinterpret_cast<const uint8_t *>(&v),
                 reinterpret_cast<const uint8_t *>(&v) + 8);
    return w;
}

std::vector<uint8_t> MultiWkb(const std::vector<uint8_t> &line)
{
    std::vector<uint8_t> w = {1, 5, 0, 0, 0, 1, 0, 0, 0};
    w.insert(w.end(), line.begin(), line.end());
    return w;
}

std::string Metadata(const std::vector<std::pair<std::string, std::string>> &kv)
{
    std::string m;
    auto put = [&](int32_t v) { m.append(reinterpret_cast<const char *>(&v), 4); };
    put(static_cast<int32_t>(kv.size()));
    for (const auto &[k, v] : kv)
    {
        put(static_cast<int32_t>(k.size()));
        m += k;
        put(static_cast<int32_t>(v.size()));
        m += v;
    }
    return m;
}

void NoRelease(ArrowSchema *s)
{
    s->release = nullptr;
}
void NoReleaseArray(ArrowArray *a)
{
    a->release = nullptr;
}

struct Column
{
    ArrowSchema schema{};
    ArrowArray array[2]{};
    const void *buffers[2][3]{};
};

// The data: batch 0 has rows 0-1, batch 1 has row 2 (stored at index 1 of
// its buffers: the batch's offset is 1).
struct Data
{
    std::vector<uint8_t> wkb;
    int32_t wkb_offsets[4];
    std::string geometry_metadata =
        Metadata({{"ARROW:extension:name", "geoarrow.wkb"},
                  {"ARROW:extension:metadata", "{\"crs\":\"EPSG:4326\"}"}});
    int32_t n32[3] = {7, 0, 9};
    uint8_t n32_valid = 0b101;  // row 1 null
    uint8_t flags = 0b001;      // true, false, false
    int64_t name_offsets[4] = {0, 1, 3, 6};
    const char *names = "abbccc";
    int32_t list_offsets[4] = {0, 2, 2, 3};
    double list_values[3] = {1.5, 2.5, -3.0};
    int32_t text_offsets[4] = {0, 5, 5, 10};
    const char *texts = "[3,4][5,6]";
    uint8_t text_valid = 0b101;
    ArrowSchema list_child{};
    ArrowSchema *list_children[1] = {&list_child};
    ArrowArray list_child_array{};
    ArrowArray *list_child_arrays[1] = {&list_child_array};
    const void *list_child_buffers[2] = {nullptr, list_values};
    Column cols[7];
    ArrowSchema *schema_children[7];
    ArrowArray *batch_children[2][7];
};

Data *g = nullptr;

void SetUp()
{
    static Data d;
    g = &d;
    const auto line = LineWkb({0, 0, 1, 1});
    const auto multi = MultiWkb(LineWkb({2, 2, 3, 3}));
    d.wkb = line;
    d.wkb.insert(d.wkb.end(), multi.begin(), multi.end());
    d.wkb.insert(d.wkb.end(), line.begin(), line.end());
    d.wkb_offsets[0] = 0;
    d.wkb_offsets[1] = static_cast<int32_t>(line.size());
    d.wkb_offsets[2] = d.wkb_offsets[1] + static_cast<int32_t>(multi.size());
    d.wkb_offsets[3] = d.wkb_offsets[2] + static_cast<int32_t>(line.size());
    const char *names[7] = {"geometry", "n32", "flag", "name", "pt", "empty", "pt_text"};
    const char *formats[7] = {"z", "i", "b", "U", "+l", "n", "u"};
    d.list_child = ArrowSchema{"g", "item", nullptr, 2, 0, nullptr, nullptr, NoRelease, nullptr};
    d.list_child_array =
        ArrowArray{3, 0, 0, 2, 0, d.list_child_buffers, nullptr, nullptr, NoReleaseArray, nullptr};
    const void *data[7][3] = {
        {nullptr, d.wkb_offsets, d.wkb.data()},
        {&d.n32_valid, d.n32, nullptr},
        {nullptr, &d.flags, nullptr},
        {nullptr, d.name_offsets, d.names},
        {nullptr, d.list_offsets, nullptr},
        {nullptr, nullptr, nullptr},
        {&d.text_valid, d.text_offsets, d.texts},
    };
    for (int c = 0; c < 7; c++)
    {
        Column &col = d.cols[c];
        const bool list = c == 4;
        col.schema = ArrowSchema{formats[c],
                                 names[c],
                                 c == 0 ? d.geometry_metadata.c_str() : nullptr,
                                 2,
                                 list ? 1 : 0,
                                 list ? d.list_children : nullptr,
                                 nullptr,
                                 NoRelease,
                                 nullptr};
        d.schema_children[c] = &col.schema;
        const int64_t n_buffers = c == 5 ? 0 : (c == 0 || c == 3 || c == 6) ? 3 : 2;
        for (int b = 0; b < 2; b++)
        {
            for (int i = 0; i < 3; i++)
                col.buffers[b][i] = data[c][i];
            // Batch 0: the 3 stored rows from 0; batch 1: the same buffers,
            // the batch's offset (1) picking stored row 2 as its row 0... via
            // a child offset of 1 on top of the batch offset of 1.
            col.array[b] = ArrowArray{3,
                                      c == 1 || c == 6 ? 1 : (c == 5 ? 3 : 0),
                                      b == 1 ? 1 : 0,
                                      n_buffers,
                                      list ? 1 : 0,
                                      col.buffers[b],
                                      list ? d.list_child_arrays : nullptr,
                                      nullptr,
                                      NoReleaseArray,
                                      nullptr};
            d.batch_children[b][c] = &col.array[b];
        }
    }
}

struct StreamState
{
    int next = 0;
    bool fail = false;
};

int GetSchema(ArrowArrayStream *s, ArrowSchema *out)
{
    if (static_cast<StreamState *>(s->private_data)->fail)
        return 5;
    *out = ArrowSchema{"+s", "", nullptr, 0, 7, g->schema_children, nullptr, NoRelease, nullptr};
    return 0;
}

int GetNext(ArrowArrayStream *s, ArrowArray *out)
{
    auto *st = static_cast<StreamState *>(s->private_data);
    *out = ArrowArray{};
    if (st->next == 0)
        *out = ArrowArray{2, 0, 0, 1, 7, nullptr, g->batch_children[0], nullptr, NoReleaseArray, nullptr};
    else if (st->next == 1)
        *out = ArrowArray{1, 0, 1, 1, 7, nullptr, g->batch_children[1], nullptr, NoReleaseArray, nullptr};
    st->next++;
    return 0;
}

const char *LastError(ArrowArrayStream *)
{
    return "the test stream fails on purpose";
}

void ReleaseStream(ArrowArrayStream *s)
{
    delete static_cast<StreamState *>(s->private_data);
    s->release = nullptr;
}

OGRHydroplotLayer::StreamSource Source(bool fail)
{
    return [fail](ArrowArrayStream *out)
    {
        *out = ArrowArrayStream{GetSchema, GetNext, LastError, ReleaseStream,
                                new StreamState{0, fail}};
        return true;
    };
}

std::vector<double> List(OGRFeature *f, const char *field)
{
    int n = 0;
    const double *v = f->GetFieldAsDoubleList(field, &n);
    return std::vector<double>(v, v + n);
}

}  // namespace

int main()
{
    GDALAllRegister();
    SetUp();
    const std::vector<FixedField> fixed = {{"pt_text", OFTRealList}, {"missing", OFTString}};
    OGRHydroplotLayer layer("t", "EPSG:4269", Source(false), fixed);
    OGRFeatureDefn *defn = layer.GetLayerDefn();
    Expect(layer.GetFeatureCount(TRUE) == 3, "3 rows over 2 batches, counted without iterating");
    auto type = [&](const char *name) {
        const int i = defn->GetFieldIndex(name);
        return i < 0 ? OFTMaxType : defn->GetFieldDefn(i)->GetType();
    };
    Expect(defn->GetFieldCount() == 7 && type("n32") == OFTInteger && type("flag") == OFTInteger &&
               defn->GetFieldDefn(defn->GetFieldIndex("flag"))->GetSubType() == OFSTBoolean &&
               type("name") == OFTString && type("pt") == OFTRealList &&
               type("empty") == OFTString && type("pt_text") == OFTRealList &&
               type("missing") == OFTString,
           "field types: int32, bool, large_utf8, list<float64>, null, utf8 -> fixed RealList, a missing fixed field");
    Expect(defn->GetGeomType() == wkbMultiLineString, "LineString + MultiLineString: declared multi");
    const OGRSpatialReference *srs = defn->GetGeomFieldDefn(0)->GetSpatialRef();
    Expect(srs && srs->GetAuthorityCode(nullptr) && std::strcmp(srs->GetAuthorityCode(nullptr), "4326") == 0,
           "SRS from the GeoArrow metadata, not the default");

    std::unique_ptr<OGRFeature> f0(layer.GetFeature(0));
    Expect(f0 && f0->GetFieldAsInteger("n32") == 7 && f0->GetFieldAsInteger("flag") == 1 &&
               std::strcmp(f0->GetFieldAsString("name"), "a") == 0 &&
               List(f0.get(), "pt") == std::vector<double>{1.5, 2.5} &&
               f0->IsFieldNull(defn->GetFieldIndex("empty")) &&
               List(f0.get(), "pt_text") == std::vector<double>{3, 4} &&
               f0->IsFieldNull(defn->GetFieldIndex("missing")) &&
               f0->GetGeometryRef() &&
               wkbFlatten(f0->GetGeometryRef()->getGeometryType()) == wkbMultiLineString,
           "row 0: values, a JSON list as RealList, a single line promoted to multi");
    std::unique_ptr<OGRFeature> f1(layer.GetFeature(1));
    Expect(f1 && f1->IsFieldNull(defn->GetFieldIndex("n32")) && f1->GetFieldAsInteger("flag") == 0 &&
               std::strcmp(f1->GetFieldAsString("name"), "bb") == 0 &&
               f1->IsFieldSetAndNotNull(defn->GetFieldIndex("pt")) && List(f1.get(), "pt").empty() &&
               f1->IsFieldNull(defn->GetFieldIndex("pt_text")),
           "row 1: validity bitmaps give nulls; an empty list stays an empty list");
    std::unique_ptr<OGRFeature> f2(layer.GetFeature(2));
    Expect(f2 && f2->GetFID() == 2 && f2->GetFieldAsInteger("n32") == 9 &&
               std::strcmp(f2->GetFieldAsString("name"), "ccc") == 0 &&
               List(f2.get(), "pt") == std::vector<double>{-3.0} &&
               List(f2.get(), "pt_text") == std::vector<double>{5, 6},
           "row 2: the second batch read through its offset");
    std::unique_ptr<OGRFeature> none(layer.GetFeature(3)), negative(layer.GetFeature(-1));
    Expect(!none && !negative, "FIDs outside 0..count-1 give no feature");

    layer.SetAttributeFilter("n32 = 7");
    Expect(layer.GetFeatureCount(TRUE) == 1 && !layer.TestCapability(OLCFastFeatureCount),
           "an attribute filter applies through GetNextRawFeature");
    layer.SetAttributeFilter(nullptr);
    layer.SetSpatialFilterRect(1.5, 1.5, 4, 4);
    layer.ResetReading();
    std::unique_ptr<OGRFeature> hit(layer.GetNextFeature()), after(layer.GetNextFeature());
    Expect(hit && hit->GetFID() == 1 && !after, "a spatial filter applies through GetNextRawFeature");
    layer.SetSpatialFilter(nullptr);

    // Arrow: the fixed layer's definition differs from its stream (a
    // converted and a missing field): GDAL builds the stream.
    const char *no_fid[] = {"INCLUDE_FID=NO", nullptr};
    ArrowArrayStream s{};
    Expect(!layer.TestCapability(OLCFastGetArrowStream) && layer.GetArrowStream(&s, no_fid) &&
               s.get_schema != GetSchema,
           "a definition that differs from the stream: GDAL's generic Arrow stream");
    if (s.release)
        s.release(&s);
    OGRHydroplotLayer plain("plain", "EPSG:4269", Source(false));
    ArrowArrayStream own{};
    Expect(plain.TestCapability(OLCFastGetArrowStream) && plain.GetArrowStream(&own, no_fid) &&
               own.get_schema == GetSchema,
           "no filter, INCLUDE_FID=NO: hydroplot's own stream handed out");
    if (own.release)
        own.release(&own);
    const char *with_fid[] = {"INCLUDE_FID=YES", nullptr};
    Expect(plain.GetArrowStream(&own, with_fid) && own.get_schema != GetSchema,
           "INCLUDE_FID=YES: GDAL's stream, which adds the FID column");
    if (own.release)
        own.release(&own);
    const char *ogc[] = {"INCLUDE_FID=NO", "GEOMETRY_METADATA_ENCODING=OGC", nullptr};
    const char *geoarrow[] = {"INCLUDE_FID=NO", "GEOMETRY_METADATA_ENCODING=GEOARROW", nullptr};
    Expect(plain.GetArrowStream(&own, ogc) && own.get_schema != GetSchema,
           "GEOMETRY_METADATA_ENCODING=OGC: GDAL's stream (ogc.wkb)");
    if (own.release)
        own.release(&own);
    Expect(plain.GetArrowStream(&own, geoarrow) && own.get_schema == GetSchema,
           "GEOMETRY_METADATA_ENCODING=GEOARROW: hydroplot's own stream");
    if (own.release)
        own.release(&own);

    CPLPushErrorHandler(CPLQuietErrorHandler);
    CPLErrorReset();
    OGRHydroplotLayer failing("failing", "EPSG:4269", Source(true));
    const GIntBig n = failing.GetFeatureCount(TRUE);
    std::unique_ptr<OGRFeature> nothing(failing.GetNextFeature());
    const std::string err = CPLGetLastErrorMsg();
    CPLPopErrorHandler();
    Expect(!failing.Loaded() && n == 0 && !nothing && err.find("the test stream fails on purpose") != std::string::npos,
           "a failing stream: an empty layer and a CPLError with the stream's message");

    std::printf("%d passed; %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
