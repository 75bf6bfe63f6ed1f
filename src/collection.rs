//! The NHDPlusV2 layers hydroplot reads, by their role, with their names in
//! the remote services (both naming schemes) and in local GeoPackages.

use crate::config::Names;

/// An NHDPlus layer, named by its role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Collection {
    /// Network flowlines (`NHDFlowline_Network`).
    FlowlineNetwork,
    /// Catchment polygons (`CatchmentSP`), keyed by `featureid` = comid.
    Catchment,
    /// Waterbody polygons (`NHDWaterbody`).
    Waterbody,
    /// Area polygons (`NHDArea`).
    Area,
    /// Flowlines off the network (`NHDFlowline_NonNetwork`).
    FlowlineNonNetwork,
    /// Stream gages (`Gage`); local GeoPackages only.
    Gage,
}

impl Collection {
    /// The OGC API Features collection id in the given naming scheme, or
    /// `None` for layers the fabric service does not serve.
    pub fn service_name(self, names: Names) -> Option<&'static str> {
        Some(match (self, names) {
            (Collection::FlowlineNetwork, Names::Usgs) => "nhdflowline_network",
            (Collection::FlowlineNetwork, Names::Neutral) => "flowline_network",
            (Collection::Catchment, _) => "catchmentsp",
            (Collection::Waterbody, _) => "nhdwaterbody",
            (Collection::Area, _) => "nhdarea",
            (Collection::FlowlineNonNetwork, _) => "nhdflowline_nonnetwork",
            (Collection::Gage, _) => return None,
        })
    }

    /// The property that identifies a feature of this layer in the fabric
    /// service: every paged query sorts on it (`sortby`), because the
    /// service promises no order otherwise and offsets would skip or repeat
    /// rows between pages.
    pub fn id_property(self) -> &'static str {
        match self {
            Collection::Catchment => "featureid",
            _ => "comid",
        }
    }

    /// Table names this layer goes by in GeoPackages (NHDPlusV2 as written by
    /// R, lower-case, and NHDPlus HR), matched case-insensitively, first wins.
    pub fn gpkg_names(self) -> &'static [&'static str] {
        match self {
            Collection::FlowlineNetwork => {
                &["NHDFlowline_Network", "NHDFlowline", "flowline_network"]
            }
            Collection::Catchment => &["CatchmentSP", "NHDPlusCatchment", "catchment"],
            Collection::Waterbody => &["NHDWaterbody", "waterbody"],
            Collection::Area => &["NHDArea", "area"],
            Collection::FlowlineNonNetwork => &["NHDFlowline_NonNetwork", "flowline_nonnetwork"],
            Collection::Gage => &["Gage", "gages", "gage"],
        }
    }
}
