//! The NHDPlusV2 layers hydroplot reads, by their role, with their names in
//! the remote services (both naming schemes) and in local GeoPackages, and
//! their declared schemas ([`fields`]): one schema per layer, whatever the
//! source.

pub mod fields;

use crate::config::Names;
use crate::table::geometry::kind;
use crate::table::schema::LayerSchema;

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

/// The names a user may add to the `plot` selection of `properties`,
/// checked before any request: the properties of a network flowline in the
/// fabric service ([`fields::FLOWLINE_NETWORK`], as its recorded answer
/// `tests/data/responses/flowline_items_comid_13293454.json` names them).
pub fn is_flowline_network_property(name: &str) -> bool {
    fields::FLOWLINE_NETWORK.iter().any(|(n, _)| *n == name)
}

impl Collection {
    /// Every layer, in the order above.
    pub const ALL: [Collection; 6] = [
        Collection::FlowlineNetwork,
        Collection::Catchment,
        Collection::Waterbody,
        Collection::Area,
        Collection::FlowlineNonNetwork,
        Collection::Gage,
    ];

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

    /// The declared schema of this layer: its NHDPlusV2 fields
    /// ([`fields`]), its geometry type (flowlines MultiLineString, polygons
    /// MultiPolygon, gages Point) and the key naming a feature in errors
    /// ([`Collection::id_property`], the gages' `flcomid`).
    pub fn schema(self) -> LayerSchema {
        let (fields, geometry) = match self {
            Collection::FlowlineNetwork => (fields::FLOWLINE_NETWORK, kind::MULTILINESTRING),
            Collection::Catchment => (fields::CATCHMENT, kind::MULTIPOLYGON),
            Collection::Waterbody => (fields::WATERBODY, kind::MULTIPOLYGON),
            Collection::Area => (fields::AREA, kind::MULTIPOLYGON),
            Collection::FlowlineNonNetwork => (fields::FLOWLINE_NONNETWORK, kind::MULTILINESTRING),
            Collection::Gage => (fields::GAGE, kind::POINT),
        };
        let key = match self {
            Collection::Gage => "flcomid",
            c => c.id_property(),
        };
        LayerSchema {
            fields,
            geometry,
            key: Some(key),
        }
    }

    /// The properties plot_hydro reads from this layer (`properties = plot`):
    /// the ids and navigation (comid, featureid, hydroseq, dnhydroseq), the
    /// waterbody split (wbareacomi), styling by stream order, the main stem
    /// a dense map always draws (levelpathi, `plot::lod`), and the
    /// popups' and outputs' key columns (gnis_name, reachcode, ftype,
    /// areasqkm). Each is a property of that layer in the fabric service,
    /// which refuses an unknown one (400). Empty for layers it does not serve.
    pub fn plot_properties(self) -> &'static [&'static str] {
        match self {
            Collection::FlowlineNetwork => &[
                "comid",
                "hydroseq",
                "dnhydroseq",
                "streamorde",
                "levelpathi",
                "wbareacomi",
                "gnis_name",
                "reachcode",
                "ftype",
            ],
            Collection::Catchment => &["featureid", "areasqkm"],
            Collection::Waterbody => &["comid", "gnis_name", "reachcode", "ftype", "areasqkm"],
            Collection::Area => &["comid", "gnis_name", "ftype", "areasqkm"],
            Collection::FlowlineNonNetwork => &["comid", "gnis_name", "reachcode", "ftype"],
            Collection::Gage => &[],
        }
    }

    /// The properties the map itself draws with, of those plot_hydro reads
    /// ([`Collection::plot_properties`]): a map-only read of a local file
    /// ([`crate::plot::Layers::Drawn`]) needs no more. The flowlines' ids,
    /// stream order and main stem (comid, hydroseq, levelpathi:
    /// `plot::lod`) and the waterbody split on both sides of it (the
    /// flowlines' wbareacomi, the waterbodies' comid); the catchments'
    /// as [`Collection::plot_properties`].
    pub fn drawn_properties(self) -> &'static [&'static str] {
        match self {
            Collection::FlowlineNetwork => &[
                "comid",
                "hydroseq",
                "streamorde",
                "levelpathi",
                "wbareacomi",
            ],
            Collection::Waterbody | Collection::Area | Collection::FlowlineNonNetwork => &["comid"],
            Collection::Catchment | Collection::Gage => self.plot_properties(),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The property names of a recorded answer, in the order it sends them.
    fn recorded(file: &str) -> Vec<String> {
        let path = format!("{}/tests/data/responses/{file}", env!("CARGO_MANIFEST_DIR"));
        let page = crate::table::decode::decode_page(&std::fs::read(path).unwrap()).unwrap();
        let fields = page.table.schema().fields().iter();
        fields.map(|f| f.name().clone()).collect()
    }

    #[test]
    fn the_flowline_properties_and_plot_columns_are_those_of_the_recorded_answers() {
        let flowline = recorded("flowline_items_comid_13293454.json");
        let known: Vec<String> = (fields::FLOWLINE_NETWORK.iter())
            .map(|(n, _)| n.to_string())
            .collect();
        assert_eq!(known, flowline, "the service's fields, in its order");
        let waterbody = recorded("waterbody_items_comid.json");
        let declared: Vec<String> = (fields::WATERBODY.iter())
            .map(|(n, _)| n.to_string())
            .collect();
        assert_eq!(declared, waterbody);
        for (collection, names) in [
            (Collection::FlowlineNetwork, &flowline),
            (Collection::Waterbody, &waterbody),
        ] {
            for name in collection.plot_properties() {
                assert!(names.contains(&name.to_string()), "{collection:?}: {name}");
            }
        }
        for c in Collection::ALL {
            for name in c.drawn_properties() {
                assert!(c.plot_properties().contains(name), "{c:?}: {name}");
            }
        }
    }
}
