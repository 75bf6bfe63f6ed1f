//! Local OGC GeoPackage (1.2+) files: reading the NHDPlus layers by key,
//! by bounding box or as topology only, and writing the plotted layers.

pub mod blob;

use std::path::Path;

use crate::collection::Collection;
use crate::feature::Feature;
use crate::Result;

/// A GeoPackage opened read-only.
pub struct GeoPackage {
    _conn: rusqlite::Connection,
}

impl GeoPackage {
    pub fn open(_path: &Path) -> Result<GeoPackage> {
        todo!()
    }
    pub fn has_layer(&self, _c: Collection) -> bool {
        todo!()
    }
    pub fn read_all(&self, _c: Collection) -> Result<Vec<Feature>> {
        todo!()
    }
    pub fn read_topology(&self) -> Result<Vec<crate::network::Reach>> {
        todo!()
    }
    pub fn read_by_ids(&self, _c: Collection, _ids: &[i64]) -> Result<Vec<Feature>> {
        todo!()
    }
    pub fn read_bbox(&self, _c: Collection, _bbox: [f64; 4]) -> Result<Vec<Feature>> {
        todo!()
    }
    pub fn gage(&self, _site_no: &str) -> Result<Option<Feature>> {
        todo!()
    }
    pub fn bounds(&self, _c: Collection) -> Result<Option<[f64; 4]>> {
        todo!()
    }
}

pub fn write(_path: &Path, _layers: &[(&str, &[Feature])], _overwrite: bool) -> Result<()> {
    todo!()
}
