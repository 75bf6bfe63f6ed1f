// The batches of one Arrow C stream, kept whole and read cell by cell: the
// store behind a HYDROPLOT layer. The driver reads hydroplot's own export
// (include/hydroplot.h: GeoArrow WKB geometry, typed property columns), so it
// knows the few layouts it meets: int32, int64, float32, float64, bool,
// utf8, large_utf8, binary, large_binary, list<float64> and null.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

// GDAL's headers (ogr_recordbatch.h) declare the Arrow C structs without the
// specification's guards; hydroplot.h declares them inside the guards. When
// GDAL's are already in, mark them declared so hydroplot.h skips its copy.
#include "ogr_recordbatch.h"
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#endif
#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE
#endif

namespace hydroplot_gdal
{

/// The layouts the reader understands; anything else is Unsupported.
enum class ColumnKind
{
    Null,
    Bool,
    Int32,
    Int64,
    Float32,
    Float64,
    Utf8,
    LargeUtf8,
    Binary,
    LargeBinary,
    ListFloat64,
    Unsupported,
};

/// One top-level column of the stream's schema.
struct ColumnInfo
{
    std::string name;
    std::string format;
    ColumnKind kind = ColumnKind::Unsupported;
    /// `ARROW:extension:name` and `ARROW:extension:metadata`, empty when absent.
    std::string extension_name;
    std::string extension_metadata;
    /// `hydroplot:geometry_type` (the declared type of a geometry column,
    /// `MULTILINESTRING`), empty when absent.
    std::string geometry_type;
};

/// One cell: the column's array in one batch and the absolute index of the
/// row in its buffers (the batch's and the child's offsets included).
struct Cell
{
    const ArrowArray *array = nullptr;
    int64_t index = 0;
};

/// Every batch of a stream, owned until destruction, which releases them.
/// Not copyable; read from one thread at a time (OGR layers are).
class ArrowTable
{
  public:
    ArrowTable() = default;
    ArrowTable(const ArrowTable &) = delete;
    ArrowTable &operator=(const ArrowTable &) = delete;
    ~ArrowTable();

    /// Reads the schema and every batch of `stream`, then releases the stream
    /// (also on failure). Returns false with `err` set when the stream fails
    /// or a batch does not match its schema.
    bool Read(ArrowArrayStream *stream, std::string &err);

    int64_t RowCount() const
    {
        return row_count_;
    }

    const std::vector<ColumnInfo> &Columns() const
    {
        return columns_;
    }

    /// The cell of `row` (0-based over all batches) in column `col`; both
    /// must be in range.
    Cell At(int64_t row, size_t col) const;

  private:
    bool ReadBatches(ArrowArrayStream *stream, std::string &err);

    ArrowSchema schema_{};
    std::vector<ArrowArray> batches_;
    std::vector<int64_t> batch_starts_;  // the first row of each batch
    std::vector<ColumnInfo> columns_;
    int64_t row_count_ = 0;
};

/// Whether the cell is null (validity bitmap, or a null-typed column).
bool IsNull(const Cell &c, ColumnKind kind);
int64_t Int64Value(const Cell &c, ColumnKind kind);
double RealValue(const Cell &c, ColumnKind kind);
bool BoolValue(const Cell &c);
/// The bytes of a utf8/binary cell (large or not); `len` receives their number.
const uint8_t *BytesValue(const Cell &c, ColumnKind kind, size_t &len);
/// The doubles of a list<float64> cell (nulls inside the list read as NaN).
std::vector<double> ListValue(const Cell &c);

}  // namespace hydroplot_gdal
