//! A table as an Arrow `RecordBatch`, in two layouts that share the
//! table's buffers (see `docs/columnar.md`, "Convention with the Arrow
//! export"):
//!
//! - [`Table::to_record_batch`], the layout of the C stream export: a
//!   `geometry` column first, GeoArrow `geoarrow.wkb` with the CRS in its
//!   extension metadata, written from the flat buffers, then the property
//!   columns in schema order (their arrays shared, not copied);
//! - [`Table::to_store_batch`], the lossless layout the plot-data cache
//!   writes as Arrow IPC and [`Table::from_store_batch`] reads back: the
//!   property columns as they are, then the ids, the type code of each row
//!   and the geometry buffers themselves as nested lists (GeoArrow's
//!   multipolygon layout, zero-copy both ways).

use super::geometry::{kind, Geometries, GeometryBuilder};
use super::schema::GEOMETRY_TYPE;
use super::Table;
use arrow_array::{
    new_null_array, Array, ArrayRef, BinaryArray, FixedSizeListArray, Float64Array, ListArray,
    RecordBatch, StringArray, UInt8Array,
};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use geo::Geometry;
use std::sync::Arc;

/// The name of the geometry column of the export.
pub const GEOMETRY: &str = "geometry";
/// The Arrow field metadata holding an extension's parameters.
const EXTENSION_METADATA: &str = "ARROW:extension:metadata";
/// The field metadata key marking the non-property columns of a store batch.
pub(super) const ROLE: &str = "hydroplot:role";
/// The roles of a store batch's non-property columns.
pub(super) mod role {
    /// The GeoJSON `id` of each row.
    pub const ID: &str = "id";
    /// The geometry type code of each row (`table::geometry::kind`).
    pub const KIND: &str = "kind";
    /// Row -> parts -> rings -> interleaved x, y.
    pub const GEOMETRY: &str = "geometry";
    /// GeoJSON text of the GeometryCollection rows, null elsewhere.
    pub const COLLECTION: &str = "collection";
}

impl Table {
    /// The table as the C stream export gives it: `geometry` first (WKB, in
    /// `crs`, e.g. `"EPSG:4269"`; on a conformed table its field metadata
    /// `hydroplot:geometry_type` names the declared geometry type,
    /// [`Table::conform`]), then the property columns in schema
    /// order, sharing the table's arrays and so their types, which follow
    /// the kinds of the values sent (see [`super::column`]), never whether
    /// the values happen to be integral; a column with no value at all
    /// (Arrow `Null`) is utf8 nulls. A property named `geometry` is
    /// exported as `geometry_property`. The `id` is not exported (for the
    /// fabric's layers it equals the comid or featureid).
    pub fn to_record_batch(&self, crs: &str) -> Result<RecordBatch, String> {
        let mut geometry = wkb_field(crs);
        if let Some(declared) = self.declared_geometry() {
            let mut metadata = geometry.metadata().clone();
            metadata.insert(GEOMETRY_TYPE.to_string(), declared.to_string());
            geometry = geometry.with_metadata(metadata);
        }
        let mut fields = vec![geometry];
        let mut columns = vec![wkb_array(&self.geometry)?];
        for (field, column) in self.schema.fields().iter().zip(&self.columns) {
            let mut metadata = field.metadata().clone();
            metadata.remove(super::KEY_METADATA);
            let mut field = field.as_ref().clone().with_metadata(metadata);
            if field.name() == GEOMETRY {
                field = field.with_name(format!("{GEOMETRY}_property"));
            }
            let column = match column.data_type() {
                DataType::Null => new_null_array(&DataType::Utf8, self.len()),
                _ => column.clone(),
            };
            fields.push(field.with_data_type(column.data_type().clone()));
            columns.push(column);
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(|e| e.to_string())
    }

    /// The table in the cache's lossless layout (module doc). Only a
    /// GeometryCollection row is converted (to GeoJSON text); everything
    /// else shares the table's buffers.
    pub fn to_store_batch(&self) -> Result<RecordBatch, String> {
        let mut fields: Vec<Field> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        let mut columns = self.columns.clone();
        let mut push = |role: &str, column: ArrayRef| {
            let field = Field::new(format!("__{role}"), column.data_type().clone(), true)
                .with_metadata([(ROLE.to_string(), role.to_string())].into());
            fields.push(field);
            columns.push(column);
        };
        if let Some(ids) = &self.ids {
            push(role::ID, ids.clone());
        }
        let g = &self.geometry;
        push(role::KIND, Arc::new(UInt8Array::new(g.kinds.clone(), None)));
        let vertices = list("vertices", g.coords.clone(), xy(g.xy.clone(), None)?)?;
        let rings = list("rings", g.rings.clone(), vertices)?;
        push(role::GEOMETRY, list("polygons", g.parts.clone(), rings)?);
        if g.kinds.contains(&kind::COLLECTION) {
            let text: StringArray = (0..g.len())
                .map(|row| {
                    (g.kinds[row] == kind::COLLECTION)
                        .then(|| g.get(row))
                        .flatten()
                        .map(|c| geojson::Geometry::from(&c).to_string())
                })
                .collect();
            push(role::COLLECTION, Arc::new(text));
        }
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(self.len()));
        let schema = Schema::new(fields).with_metadata(self.schema.metadata().clone());
        RecordBatch::try_new_with_options(Arc::new(schema), columns, &options)
            .map_err(|e| e.to_string())
    }
}

/// Interleaved coordinates: a `FixedSizeList<f64, 2>` named `xy`.
pub(super) fn xy(values: ScalarBuffer<f64>, nulls: Option<NullBuffer>) -> Result<ArrayRef, String> {
    let field = Arc::new(Field::new("xy", DataType::Float64, false));
    let values = Arc::new(Float64Array::new(values, None));
    Ok(Arc::new(
        FixedSizeListArray::try_new(field, 2, values, nulls).map_err(|e| e.to_string())?,
    ))
}

/// A list level named `name` over `values`.
pub(super) fn list(
    name: &str,
    offsets: OffsetBuffer<i32>,
    values: ArrayRef,
) -> Result<ArrayRef, String> {
    let field = Arc::new(Field::new(name, values.data_type().clone(), false));
    Ok(Arc::new(
        ListArray::try_new(field, offsets, values, None).map_err(|e| e.to_string())?,
    ))
}

/// The GeoArrow WKB field, its CRS as PROJJSON (what the GeoArrow spec
/// recommends, read by geopandas, GDAL and DuckDB without guessing) for the
/// CRSs the library writes, else as an authority code (`crs_type`
/// `"authority_code"`, the spec's last resort).
pub fn wkb_field(crs: &str) -> Field {
    let metadata = match projjson(crs) {
        Some(definition) => serde_json::json!({"crs": definition, "crs_type": "projjson"}),
        None => serde_json::json!({"crs": crs, "crs_type": "authority_code"}),
    }
    .to_string();
    Field::new(GEOMETRY, DataType::Binary, true).with_metadata(
        [
            (
                super::EXTENSION_NAME.to_string(),
                "geoarrow.wkb".to_string(),
            ),
            (EXTENSION_METADATA.to_string(), metadata),
        ]
        .into(),
    )
}

/// The PROJJSON of the geographic CRSs the library's data are in: NAD83
/// (`EPSG:4269`, plot data) and WGS 84 (`EPSG:4326`, traces), as PROJ
/// writes them (EPSG's axis order; GeoArrow's coordinates are lon/lat
/// whatever the CRS says). `None` for any other CRS.
fn projjson(crs: &str) -> Option<serde_json::Value> {
    let (name, datum, ellipsoid, inverse_flattening, code) = match crs {
        "EPSG:4269" => (
            "NAD83",
            "North American Datum 1983",
            "GRS 1980",
            298.257222101,
            4269,
        ),
        "EPSG:4326" => (
            "WGS 84",
            "World Geodetic System 1984",
            "WGS 84",
            298.257223563,
            4326,
        ),
        _ => return None,
    };
    let axis = |name: &str, abbreviation: &str, direction: &str| {
        serde_json::json!({
            "name": name, "abbreviation": abbreviation, "direction": direction, "unit": "degree"
        })
    };
    Some(serde_json::json!({
        "$schema": "https://proj.org/schemas/v0.7/projjson.schema.json",
        "type": "GeographicCRS",
        "name": name,
        "datum": {
            "type": "GeodeticReferenceFrame",
            "name": datum,
            "ellipsoid": {
                "name": ellipsoid,
                "semi_major_axis": 6378137,
                "inverse_flattening": inverse_flattening
            }
        },
        "coordinate_system": {
            "subtype": "ellipsoidal",
            "axis": [
                axis("Geodetic latitude", "Lat", "north"),
                axis("Geodetic longitude", "Lon", "east")
            ]
        },
        "id": {"authority": "EPSG", "code": code}
    }))
}

/// The WKB (little-endian, 2-D) of every row, written from the flat
/// buffers; null for a row without geometry.
pub fn wkb_array(g: &Geometries) -> Result<ArrayRef, String> {
    let mut data = Vec::with_capacity(8 * g.xy.len() + 16 * g.len());
    let mut offsets = Vec::with_capacity(g.len() + 1);
    offsets.push(0i32);
    for row in 0..g.len() {
        write_row(g, row, &mut data);
        offsets.push(i32::try_from(data.len()).map_err(|_| "a layer's WKB exceeds 2 GiB")?);
    }
    let nulls = g
        .kinds
        .contains(&kind::NONE)
        .then(|| NullBuffer::from_iter(g.kinds.iter().map(|&k| k != kind::NONE)));
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    Ok(Arc::new(
        BinaryArray::try_new(offsets, data.into(), nulls).map_err(|e| e.to_string())?,
    ))
}

fn head(out: &mut Vec<u8>, wkb_type: u32) {
    out.push(1);
    out.extend_from_slice(&wkb_type.to_le_bytes());
}

fn count(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

/// Appends the WKB of `row` (nothing for a row without geometry).
fn write_row(g: &Geometries, row: usize, out: &mut Vec<u8>) {
    let coords = |out: &mut Vec<u8>, ring: usize, with_count: bool| {
        let (a, b) = (g.coords[ring] as usize, g.coords[ring + 1] as usize);
        if with_count {
            count(out, b - a);
        }
        for v in &g.xy[2 * a..2 * b] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    };
    let rings = |part: usize| g.rings[part] as usize..g.rings[part + 1] as usize;
    let polygon = |out: &mut Vec<u8>, part: usize| {
        head(out, 3);
        count(out, rings(part).len());
        for r in rings(part) {
            coords(out, r, true);
        }
    };
    let parts = g.parts[row] as usize..g.parts[row + 1] as usize;
    let first_ring = parts.clone().next().and_then(|p| rings(p).next());
    match g.kinds[row] {
        kind::POINT => {
            head(out, 1);
            match g.row_xy(row) {
                [x, y, ..] => [*x, *y],
                _ => [f64::NAN, f64::NAN],
            }
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        }
        kind::LINESTRING => {
            head(out, 2);
            match first_ring {
                Some(r) => coords(out, r, true),
                None => count(out, 0),
            }
        }
        kind::POLYGON => match parts.clone().next() {
            Some(p) => polygon(out, p),
            None => {
                head(out, 3);
                count(out, 0);
            }
        },
        kind::MULTIPOINT => {
            head(out, 4);
            let xy = g.row_xy(row);
            count(out, xy.len() / 2);
            for p in xy.chunks_exact(2) {
                head(out, 1);
                p.iter()
                    .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            }
        }
        kind::MULTILINESTRING => {
            head(out, 5);
            count(out, parts.clone().map(|p| rings(p).len()).sum());
            for r in parts.flat_map(rings) {
                head(out, 2);
                coords(out, r, true);
            }
        }
        kind::MULTIPOLYGON => {
            head(out, 6);
            count(out, parts.len());
            for p in parts {
                polygon(out, p);
            }
        }
        kind::COLLECTION => {
            if let Some(c) = g.get(row) {
                write_geometry(&c, out);
            }
        }
        _ => {}
    }
}

/// Appends the WKB of a `geo` geometry: a collection member by member, any
/// other type through a one-row buffer (so there is one WKB writer).
fn write_geometry(g: &Geometry<f64>, out: &mut Vec<u8>) {
    let one_row = |g: &Geometry<f64>, out: &mut Vec<u8>| {
        let mut b = GeometryBuilder::default();
        if b.push(g).is_ok() {
            write_row(&b.finish(), 0, out);
        }
    };
    match g {
        Geometry::GeometryCollection(c) => {
            head(out, 7);
            count(out, c.0.len());
            for m in &c.0 {
                write_geometry(m, out);
            }
        }
        Geometry::Line(l) => one_row(&Geometry::LineString((*l).into()), out),
        Geometry::Rect(r) => one_row(&Geometry::Polygon(r.to_polygon()), out),
        Geometry::Triangle(t) => one_row(&Geometry::Polygon(t.to_polygon()), out),
        other => one_row(other, out),
    }
}

#[cfg(test)]
mod tests {
    use crate::feature::Feature;
    use crate::table::Table;
    use arrow_array::cast::AsArray;
    use arrow_array::Array;
    use geo::{line_string, point, polygon, Geometry};

    fn table(geoms: Vec<Option<Geometry<f64>>>) -> Table {
        let features: Vec<Feature> = geoms
            .into_iter()
            .enumerate()
            .map(|(i, geometry)| Feature {
                geometry,
                properties: serde_json::json!({"comid": i, "geometry": "x", "none": null, "order": i as f64, "len": 0.5 + i as f64})
                    .as_object()
                    .unwrap()
                    .clone(),
                ..Default::default()
            })
            .collect();
        Table::from_features(&features).unwrap()
    }

    /// WKB by hand: byte order 1, the type, then the counts and coordinates.
    fn wkb(ty: u32, body: &[u32], xy: &[f64]) -> Vec<u8> {
        let mut v = vec![1];
        v.extend_from_slice(&ty.to_le_bytes());
        body.iter()
            .for_each(|n| v.extend_from_slice(&n.to_le_bytes()));
        xy.iter()
            .for_each(|c| v.extend_from_slice(&c.to_le_bytes()));
        v
    }

    #[test]
    fn geometry_first_as_wkb_then_the_properties() {
        let line = Geometry::LineString(vec![(1., 2.), (3., 4.)].into());
        let square = polygon![(x: 0., y: 0.), (x: 1., y: 0.), (x: 1., y: 1.), (x: 0., y: 0.)];
        let t = table(vec![
            Some(line),
            None,
            Some(Geometry::Point(point!(x: 5., y: 6.))),
            Some(Geometry::Polygon(square)),
        ]);
        let batch = t.to_record_batch("EPSG:4269").unwrap();
        let schema = batch.schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(
            names,
            [
                "geometry",
                "comid",
                "geometry_property",
                "len",
                "none",
                "order"
            ]
        );
        let types: Vec<String> = schema
            .fields()
            .iter()
            .map(|f| f.data_type().to_string())
            .collect();
        assert_eq!(
            types,
            ["Binary", "Int64", "Utf8", "Float64", "Utf8", "Float64"],
            "order is sent as floats: float64 though every value is integral"
        );
        let meta = schema.field(0).metadata();
        assert_eq!(meta["ARROW:extension:name"], "geoarrow.wkb");
        let crs: serde_json::Value =
            serde_json::from_str(&meta["ARROW:extension:metadata"]).unwrap();
        assert_eq!(crs["crs_type"], "projjson");
        assert_eq!(crs["crs"]["type"], "GeographicCRS");
        assert_eq!(
            crs["crs"]["id"],
            serde_json::json!({"authority": "EPSG", "code": 4269})
        );
        // NAD83's ellipsoid, GRS 1980 (EPSG:7019), by its published constants.
        let ellipsoid = &crs["crs"]["datum"]["ellipsoid"];
        assert_eq!(ellipsoid["semi_major_axis"], 6378137);
        assert_eq!(ellipsoid["inverse_flattening"], 298.257222101);
        assert_eq!(batch.column(4).null_count(), 4);
        let g = batch.column(0).as_binary::<i32>();
        assert_eq!(g.value(0), wkb(2, &[2], &[1., 2., 3., 4.]));
        assert!(g.is_null(1));
        assert_eq!(g.value(2), wkb(1, &[], &[5., 6.]));
        assert_eq!(
            g.value(3),
            wkb(3, &[1, 4], &[0., 0., 1., 0., 1., 1., 0., 0.])
        );
        // The property arrays are the table's own.
        let comid = t.column("comid").unwrap().array().to_data();
        assert!(batch.column(1).to_data().ptr_eq(&comid));
    }

    #[test]
    fn the_wkb_of_every_type_is_what_the_geopackage_writer_writes() {
        let line = line_string![(x: 5., y: 5.), (x: 6., y: 7.)];
        let poly = polygon![(x: 0., y: 0.), (x: 1., y: 0.), (x: 1., y: 1.), (x: 0., y: 0.)];
        let all = [
            Geometry::Point(point!(x: 1.5, y: -2.5)),
            Geometry::MultiPoint(vec![point!(x: 1., y: 2.), point!(x: 3., y: 4.)].into()),
            Geometry::LineString(line.clone()),
            Geometry::MultiLineString(geo::MultiLineString(vec![line.clone(), line])),
            Geometry::Polygon(poly.clone()),
            Geometry::MultiPolygon(geo::MultiPolygon(vec![poly.clone(), poly.clone()])),
            Geometry::GeometryCollection(geo::GeometryCollection(vec![
                Geometry::Polygon(poly),
                Geometry::Point(point!(x: 9., y: 9.)),
            ])),
        ];
        let t = table(all.iter().cloned().map(Some).collect());
        let batch = t.to_record_batch("EPSG:4326").unwrap();
        let g = batch.column(0).as_binary::<i32>();
        for (i, geometry) in all.iter().enumerate() {
            let mut want = Vec::new();
            crate::gpkg::blob::write_wkb(geometry, &mut want);
            assert_eq!(g.value(i), want, "row {i}");
        }
    }
}
