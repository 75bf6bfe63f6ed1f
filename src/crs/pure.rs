//! Default backend: pure-Rust `proj4rs` with the proj strings of
//! `crs-definitions`. Parsed definitions are cached for the process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use once_cell::sync::Lazy;
use proj4rs::proj::Proj;

use crate::error::{Error, Result};

/// Parsed definitions by EPSG code, shared by every transformer.
static DEFINITIONS: Lazy<Mutex<HashMap<u32, Arc<Proj>>>> = Lazy::new(Default::default);

/// Fails with `Error::Crs` unless `crs-definitions` knows `code`.
pub(super) fn check_known(code: u32) -> Result<()> {
    definition(code).map(drop)
}

fn definition(code: u32) -> Result<Arc<Proj>> {
    let mut table = DEFINITIONS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = table.get(&code) {
        return Ok(p.clone());
    }
    let def = u16::try_from(code)
        .ok()
        .and_then(crs_definitions::from_code)
        .ok_or_else(|| {
            Error::Crs(format!(
                "The CRS \"EPSG:{code}\" is not known to the built-in definitions."
            ))
        })?;
    let proj = Proj::from_proj_string(def.proj4).map_err(|e| {
        Error::Crs(format!(
            "The definition of EPSG:{code} cannot be used: {e}."
        ))
    })?;
    let proj = Arc::new(proj);
    table.insert(code, proj.clone());
    Ok(proj)
}

/// A source/target pair of parsed definitions.
pub(super) struct Backend {
    from: Arc<Proj>,
    to: Arc<Proj>,
}

impl Backend {
    pub(super) fn new(from: u32, to: u32) -> Result<Backend> {
        Ok(Backend {
            from: definition(from)?,
            to: definition(to)?,
        })
    }

    /// proj4rs works in radians for geographic CRSs; this converts at both ends.
    pub(super) fn point(&self, x: f64, y: f64) -> Result<(f64, f64), String> {
        let mut p = if self.from.is_latlong() {
            (x.to_radians(), y.to_radians(), 0.0)
        } else {
            (x, y, 0.0)
        };
        proj4rs::transform::transform(&self.from, &self.to, &mut p).map_err(|e| e.to_string())?;
        Ok(if self.to.is_latlong() {
            (p.0.to_degrees(), p.1.to_degrees())
        } else {
            (p.0, p.1)
        })
    }
}
