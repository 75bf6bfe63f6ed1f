//! Which stream order filter and flowline-only switch a request gets.

use super::request::PlotRequest;
use super::subset;
use crate::feature::Feature;

/// The stream order filter and flowline-only switch in force for a request.
pub(super) struct Thinning {
    pub streamorder: Option<i32>,
    pub flowline_only: bool,
}

impl Thinning {
    /// Unset means no filter and not flowline-only (the spec); stream order
    /// -1 applies the reference's rule to the largest basin's area.
    pub fn decide(req: &PlotRequest, basins: &[Feature]) -> Thinning {
        match req.streamorder {
            Some(-1) => {
                let largest = basins.iter().map(subset::area_km2).fold(0.0, f64::max);
                let streamorder = crate::network::auto_streamorder(largest);
                Thinning {
                    streamorder,
                    flowline_only: req.flowline_only.unwrap_or(streamorder.is_some()),
                }
            }
            n => Thinning {
                streamorder: n.filter(|&n| n > 0),
                flowline_only: req.flowline_only.unwrap_or(false),
            },
        }
    }
}
