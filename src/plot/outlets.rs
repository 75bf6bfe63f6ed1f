//! Outlets: their linked-data identity, and the outlets layer of the result.

use super::request::Outlet;
use super::site::site_id;
use crate::config::Names;
use crate::table::column::Scalar;
use crate::table::{Table, TableBuilder};
use geo::{Geometry, Point};

/// An outlet resolved to the comid to navigate from.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Linked-data feature source (`comid`, `nwissite`, `huc12pp`, ...).
    pub source: String,
    /// Linked-data feature id.
    pub id: String,
    /// The comid to navigate upstream from.
    pub comid: i64,
    /// Where to draw the outlet, NAD83 lon/lat.
    pub point: Option<Point<f64>>,
}

impl Resolved {
    /// Sets the outlet's columns in the current row of `b`, as its outlet
    /// and its basin carry them: `comid`, `id` and `type` (the feature
    /// source), in that (sorted) order.
    pub fn set_columns(&self, b: &mut TableBuilder) -> Result<(), String> {
        let key = b.key("comid");
        b.set(key, Scalar::Int(self.comid))?;
        let key = b.key("id");
        b.set(key, Scalar::Str(&self.id))?;
        let key = b.key("type");
        b.set(key, Scalar::Str(&self.source))
    }
}

/// The `outlets` layer: one row per outlet, its point (none when it has
/// no point), its columns ([`Resolved::set_columns`]) and its linked-data
/// id as the row id.
pub fn table(outlets: &[Resolved]) -> Result<Table, String> {
    let mut b = TableBuilder::default();
    for o in outlets {
        o.set_columns(&mut b)?;
        b.set_id(Scalar::Str(&o.id))?;
        match o.point {
            Some(p) => b.geometry.push(&Geometry::Point(p))?,
            None => b.geometry.push_none()?,
        }
        b.end_row();
    }
    b.finish()
}

/// The linked-data (source, id) of an outlet that has one (not points).
/// Bare gauge site ids get the `USGS-` prefix; the gauge source follows `names`.
pub fn linked_data_id(outlet: &Outlet, names: Names) -> Option<(String, String)> {
    match outlet {
        Outlet::Comid(c) => Some(("comid".into(), c.to_string())),
        Outlet::Site(s) => Some((names.gauge_source().into(), site_id(s))),
        Outlet::Feature { source, id } => Some(match source.to_ascii_lowercase().as_str() {
            "nwissite" | "gaugesite" => (names.gauge_source().into(), site_id(id)),
            other => (other.to_string(), id.clone()),
        }),
        Outlet::Point { .. } => None,
    }
}

/// The point to draw for a linked-data feature: the point itself, or the
/// downstream (last) vertex of a flowline.
pub fn outlet_point(g: &Geometry<f64>) -> Option<Point<f64>> {
    match g {
        Geometry::Point(p) => Some(*p),
        Geometry::MultiPoint(mp) => mp.0.first().copied(),
        Geometry::LineString(l) => l.0.last().map(|c| Point::from(*c)),
        Geometry::MultiLineString(m) => {
            m.0.last().and_then(|l| l.0.last()).map(|c| Point::from(*c))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauge_outlets_are_linked_data_features_with_the_agency_prefix() {
        let o = Outlet::Site("05428500".into());
        assert_eq!(
            linked_data_id(&o, Names::Neutral),
            Some(("gaugesite".into(), "USGS-05428500".into()))
        );
        let f = Outlet::Feature {
            source: "nwissite".into(),
            id: "05428500".into(),
        };
        assert_eq!(
            linked_data_id(&f, Names::Usgs),
            Some(("nwissite".into(), "USGS-05428500".into()))
        );
    }
}
