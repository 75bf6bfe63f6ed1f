//! GeoPackage geometry blobs and the WKB inside them.

use geo::Geometry;

use crate::Result;

pub fn parse(_bytes: &[u8]) -> Result<Option<Geometry<f64>>> {
    todo!()
}
