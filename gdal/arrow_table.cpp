// Reading hydroplot's Arrow C stream: see arrow_table.h.
#include "arrow_table.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace hydroplot_gdal
{
namespace
{

ColumnKind KindOf(const ArrowSchema *s)
{
    const std::string f = s->format ? s->format : "";
    if (f == "n")
        return ColumnKind::Null;
    if (f == "b")
        return ColumnKind::Bool;
    if (f == "i")
        return ColumnKind::Int32;
    if (f == "l")
        return ColumnKind::Int64;
    if (f == "f")
        return ColumnKind::Float32;
    if (f == "g")
        return ColumnKind::Float64;
    if (f == "u")
        return ColumnKind::Utf8;
    if (f == "U")
        return ColumnKind::LargeUtf8;
    if (f == "z")
        return ColumnKind::Binary;
    if (f == "Z")
        return ColumnKind::LargeBinary;
    if (f == "+l" && s->n_children == 1 && s->children[0]->format &&
        std::strcmp(s->children[0]->format, "g") == 0)
        return ColumnKind::ListFloat64;
    return ColumnKind::Unsupported;
}

int32_t ReadInt32(const char *&p)
{
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    p += sizeof v;
    return v;
}

/// The value of `key` in Arrow's binary metadata (int32 count, then
/// length-prefixed keys and values), empty when absent.
std::string MetadataValue(const char *metadata, const char *key)
{
    if (metadata == nullptr)
        return {};
    const char *p = metadata;
    const int32_t n = ReadInt32(p);
    for (int32_t i = 0; i < n; i++)
    {
        const int32_t klen = ReadInt32(p);
        const std::string k(p, static_cast<size_t>(std::max(klen, 0)));
        p += std::max(klen, 0);
        const int32_t vlen = ReadInt32(p);
        const std::string v(p, static_cast<size_t>(std::max(vlen, 0)));
        p += std::max(vlen, 0);
        if (k == key)
            return v;
    }
    return {};
}

/// The number of buffers (validity first) each layout has.
int64_t BufferCount(ColumnKind kind)
{
    switch (kind)
    {
        case ColumnKind::Null:
            return 0;
        case ColumnKind::Utf8:
        case ColumnKind::LargeUtf8:
        case ColumnKind::Binary:
        case ColumnKind::LargeBinary:
            return 3;
        default:
            return 2;
    }
}

/// Whether `a` (a child of a batch of `rows` rows at `parent_offset`) has the
/// buffers its layout needs, so reading any of its cells stays in bounds.
bool ArrayFits(const ArrowArray *a, ColumnKind kind, int64_t parent_offset,
               int64_t rows)
{
    if (a == nullptr || a->length < parent_offset + rows)
        return false;
    if (kind == ColumnKind::Unsupported || kind == ColumnKind::Null)
        return true;
    const int64_t n = BufferCount(kind);
    if (a->n_buffers < n || a->buffers == nullptr)
        return false;
    if (a->null_count != 0 && a->buffers[0] == nullptr && a->length > 0)
        return false;
    for (int64_t i = 1; i < n; i++)
        if (a->buffers[i] == nullptr && a->length > 0 &&
            !(i == 2 && kind != ColumnKind::ListFloat64))
            return false;
    if (kind == ColumnKind::ListFloat64)
        return a->n_children == 1 &&
               ArrayFits(a->children[0], ColumnKind::Float64, 0, 0);
    return true;
}

bool BitSet(const void *bitmap, int64_t i)
{
    const auto *b = static_cast<const uint8_t *>(bitmap);
    return (b[i >> 3] >> (i & 7)) & 1;
}

}  // namespace

ArrowTable::~ArrowTable()
{
    for (auto &b : batches_)
        if (b.release)
            b.release(&b);
    if (schema_.release)
        schema_.release(&schema_);
}

bool ArrowTable::Read(ArrowArrayStream *stream, std::string &err)
{
    if (ReadBatches(stream, err))
        return true;
    // A failed stream serves no row.
    row_count_ = 0;
    batch_starts_.clear();
    return false;
}

bool ArrowTable::ReadBatches(ArrowArrayStream *stream, std::string &err)
{
    struct StreamGuard
    {
        ArrowArrayStream *s;
        ~StreamGuard()
        {
            if (s->release)
                s->release(s);
        }
    } guard{stream};
    auto stream_error = [&](const char *what, int rc)
    {
        const char *msg = stream->get_last_error ? stream->get_last_error(stream)
                                                 : nullptr;
        err = std::string(what) + " failed (" + std::to_string(rc) + ")" +
              (msg ? std::string(": ") + msg : std::string());
        return false;
    };
    if (int rc = stream->get_schema(stream, &schema_))
        return stream_error("reading the Arrow schema", rc);
    if (schema_.format == nullptr || std::strcmp(schema_.format, "+s") != 0)
    {
        err = "the Arrow stream is not a stream of record batches";
        return false;
    }
    for (int64_t i = 0; i < schema_.n_children; i++)
    {
        const ArrowSchema *c = schema_.children[i];
        ColumnInfo info;
        info.name = c->name ? c->name : "";
        info.format = c->format ? c->format : "";
        info.kind = KindOf(c);
        info.extension_name = MetadataValue(c->metadata, "ARROW:extension:name");
        info.extension_metadata =
            MetadataValue(c->metadata, "ARROW:extension:metadata");
        info.geometry_type = MetadataValue(c->metadata, "hydroplot:geometry_type");
        columns_.push_back(std::move(info));
    }
    while (true)
    {
        ArrowArray batch{};
        if (int rc = stream->get_next(stream, &batch))
            return stream_error("reading an Arrow batch", rc);
        if (batch.release == nullptr)
            break;
        batches_.push_back(batch);
        if (batch.n_children != static_cast<int64_t>(columns_.size()) ||
            batch.length < 0 || batch.offset < 0)
        {
            err = "an Arrow batch does not match its schema";
            return false;
        }
        for (size_t c = 0; c < columns_.size(); c++)
            if (!ArrayFits(batch.children[c], columns_[c].kind, batch.offset,
                           batch.length))
            {
                err = "Arrow column '" + columns_[c].name +
                      "' lacks the buffers of its type " + columns_[c].format;
                return false;
            }
        batch_starts_.push_back(row_count_);
        row_count_ += batch.length;
    }
    return true;
}

Cell ArrowTable::At(int64_t row, size_t col) const
{
    const auto it =
        std::upper_bound(batch_starts_.begin(), batch_starts_.end(), row);
    const size_t b = static_cast<size_t>(it - batch_starts_.begin()) - 1;
    const ArrowArray &batch = batches_[b];
    const ArrowArray *a = batch.children[col];
    return Cell{a, a->offset + batch.offset + (row - batch_starts_[b])};
}

bool IsNull(const Cell &c, ColumnKind kind)
{
    if (kind == ColumnKind::Null || kind == ColumnKind::Unsupported)
        return true;
    if (c.array->null_count == 0 || c.array->buffers[0] == nullptr)
        return false;
    return !BitSet(c.array->buffers[0], c.index);
}

int64_t Int64Value(const Cell &c, ColumnKind kind)
{
    if (kind == ColumnKind::Int32)
        return static_cast<const int32_t *>(c.array->buffers[1])[c.index];
    return static_cast<const int64_t *>(c.array->buffers[1])[c.index];
}

double RealValue(const Cell &c, ColumnKind kind)
{
    if (kind == ColumnKind::Float32)
        return static_cast<const float *>(c.array->buffers[1])[c.index];
    return static_cast<const double *>(c.array->buffers[1])[c.index];
}

bool BoolValue(const Cell &c)
{
    return BitSet(c.array->buffers[1], c.index);
}

const uint8_t *BytesValue(const Cell &c, ColumnKind kind, size_t &len)
{
    int64_t start, end;
    if (kind == ColumnKind::LargeUtf8 || kind == ColumnKind::LargeBinary)
    {
        const auto *o = static_cast<const int64_t *>(c.array->buffers[1]);
        start = o[c.index];
        end = o[c.index + 1];
    }
    else
    {
        const auto *o = static_cast<const int32_t *>(c.array->buffers[1]);
        start = o[c.index];
        end = o[c.index + 1];
    }
    len = end > start ? static_cast<size_t>(end - start) : 0;
    static const uint8_t empty = 0;
    if (len == 0 || c.array->buffers[2] == nullptr)
        return &empty;
    return static_cast<const uint8_t *>(c.array->buffers[2]) + start;
}

std::vector<double> ListValue(const Cell &c)
{
    const auto *o = static_cast<const int32_t *>(c.array->buffers[1]);
    const ArrowArray *child = c.array->children[0];
    std::vector<double> out;
    for (int32_t i = o[c.index]; i < o[c.index + 1]; i++)
    {
        const Cell v{child, child->offset + i};
        out.push_back(IsNull(v, ColumnKind::Float64)
                          ? std::nan("")
                          : RealValue(v, ColumnKind::Float64));
    }
    return out;
}

}  // namespace hydroplot_gdal
