//! Writing layers to a new GeoPackage.

use std::path::Path;

use crate::feature::Feature;
use crate::Result;

/// Writes `layers` (table name, features in NAD83 lon/lat) to a new GeoPackage.
pub fn write(_path: &Path, _layers: &[(&str, &[Feature])], _overwrite: bool) -> Result<()> {
    todo!()
}
