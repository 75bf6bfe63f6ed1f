//! Feature `proj` backend: the `proj` crate (bundled PROJ). Transformations
//! are normalized for visualization (x = longitude) by `new_known_crs`.
//!
//! Every PROJ object built is kept for the life of the process in one table:
//! the `proj` crate calls `proj_cleanup()` (which resets PROJ's global state)
//! whenever one is dropped, which is unsafe while other threads use theirs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use once_cell::sync::Lazy;

use crate::error::{Error, Result};

/// One PROJ transformation with its own PROJ context.
struct Owned(proj::Proj);

// SAFETY: a `proj::Proj` owns its PJ and its private PJ_CONTEXT; PROJ allows
// using them from any thread as long as one thread at a time does, which the
// mutex around every `Owned` guarantees.
unsafe impl Send for Owned {}

type Shared = Arc<Mutex<Owned>>;

/// Transformations by (source, target) EPSG code; never emptied (see above).
static TRANSFORMATIONS: Lazy<Mutex<HashMap<(u32, u32), Shared>>> = Lazy::new(Default::default);

fn transformation(from: u32, to: u32) -> Result<Shared> {
    let mut table = TRANSFORMATIONS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(t) = table.get(&(from, to)) {
        return Ok(t.clone());
    }
    let (a, b) = (format!("EPSG:{from}"), format!("EPSG:{to}"));
    let proj = proj::Proj::new_known_crs(&a, &b, None).map_err(|e| {
        if from == to {
            Error::Crs(format!("The CRS \"{a}\" is not known to PROJ: {e}."))
        } else {
            Error::Crs(format!(
                "Cannot build a transformation from {a} to {b}: {e}."
            ))
        }
    })?;
    let shared = Arc::new(Mutex::new(Owned(proj)));
    table.insert((from, to), shared.clone());
    Ok(shared)
}

/// Fails with `Error::Crs` unless PROJ knows `EPSG:<code>`.
pub(super) fn check_known(code: u32) -> Result<()> {
    transformation(code, code).map(drop)
}

/// A shared PROJ transformation.
pub(super) struct Backend {
    proj: Shared,
}

impl Backend {
    pub(super) fn new(from: u32, to: u32) -> Result<Backend> {
        Ok(Backend {
            proj: transformation(from, to)?,
        })
    }

    pub(super) fn point(&self, x: f64, y: f64) -> Result<(f64, f64), String> {
        let proj = self.proj.lock().unwrap_or_else(|e| e.into_inner());
        proj.0.convert((x, y)).map_err(|e| e.to_string())
    }
}
