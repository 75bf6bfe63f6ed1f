//! Which stream order filter and flowline-only switch a request gets.

use super::request::PlotRequest;
use super::subset;
use crate::table::Table;

/// The stream order filter and flowline-only switch in force for a request.
pub(super) struct Thinning {
    pub streamorder: Option<i32>,
    pub flowline_only: bool,
}

impl Thinning {
    /// The decision when it does not depend on the basins (every stream
    /// order but -1), else `None`.
    pub fn before_basins(req: &PlotRequest) -> Option<Thinning> {
        (req.streamorder != Some(-1)).then(|| Thinning::decide(req, &Table::default()))
    }

    /// Unset means no filter and not flowline-only (the spec); stream order
    /// -1 applies the reference's rule to the largest basin's area.
    pub fn decide(req: &PlotRequest, basins: &Table) -> Thinning {
        match req.streamorder {
            Some(-1) => {
                let largest = subset::largest_area_km2(basins);
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
