//! Feature `proj` backend: the `proj` crate (bundled PROJ). Each transformer
//! holds one PROJ object normalized for visualization (x = longitude).

use std::sync::Mutex;

use crate::error::{Error, Result};

/// Fails with `Error::Crs` unless PROJ knows `EPSG:<code>`.
pub(super) fn check_known(code: u32) -> Result<()> {
    let name = format!("EPSG:{code}");
    proj::Proj::new_known_crs(&name, &name, None)
        .map(drop)
        .map_err(|e| Error::Crs(format!("The CRS \"{name}\" is not known to PROJ: {e}.")))
}

/// A PROJ transformation. PROJ objects are not thread-safe, hence the mutex.
pub(super) struct Backend {
    proj: Mutex<proj::Proj>,
}

impl Backend {
    pub(super) fn new(from: u32, to: u32) -> Result<Backend> {
        let (a, b) = (format!("EPSG:{from}"), format!("EPSG:{to}"));
        // new_known_crs applies proj_normalize_for_visualization.
        let proj = proj::Proj::new_known_crs(&a, &b, None).map_err(|e| {
            Error::Crs(format!(
                "Cannot build a transformation from {a} to {b}: {e}."
            ))
        })?;
        Ok(Backend {
            proj: Mutex::new(proj),
        })
    }

    pub(super) fn point(&self, x: f64, y: f64) -> Result<(f64, f64), String> {
        let proj = self.proj.lock().unwrap_or_else(|e| e.into_inner());
        proj.convert((x, y)).map_err(|e| e.to_string())
    }
}
