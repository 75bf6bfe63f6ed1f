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

/// The properties of a network flowline in the fabric service (NHDPlusV2,
/// as its recorded answer `tests/data/responses/flowline_items_comid_13293454.json`
/// names them): the names a user may add to the `plot` selection of
/// `properties`, checked before any request.
pub const FLOWLINE_NETWORK_PROPERTIES: [&str; 138] = [
    "objectid",
    "comid",
    "fdate",
    "resolution",
    "gnis_id",
    "gnis_name",
    "lengthkm",
    "reachcode",
    "flowdir",
    "wbareacomi",
    "ftype",
    "fcode",
    "shape_length",
    "streamleve",
    "streamorde",
    "streamcalc",
    "fromnode",
    "tonode",
    "hydroseq",
    "levelpathi",
    "pathlength",
    "terminalpa",
    "arbolatesu",
    "divergence",
    "startflag",
    "terminalfl",
    "dnlevel",
    "uplevelpat",
    "uphydroseq",
    "dnlevelpat",
    "dnminorhyd",
    "dndraincou",
    "dnhydroseq",
    "frommeas",
    "tomeas",
    "rtndiv",
    "vpuin",
    "vpuout",
    "areasqkm",
    "totdasqkm",
    "divdasqkm",
    "tidal",
    "totma",
    "wbareatype",
    "pathtimema",
    "hwnodesqkm",
    "maxelevraw",
    "minelevraw",
    "maxelevsmo",
    "minelevsmo",
    "slope",
    "elevfixed",
    "hwtype",
    "slopelenkm",
    "qa_ma",
    "va_ma",
    "qc_ma",
    "vc_ma",
    "qe_ma",
    "ve_ma",
    "qa_01",
    "va_01",
    "qc_01",
    "vc_01",
    "qe_01",
    "ve_01",
    "qa_02",
    "va_02",
    "qc_02",
    "vc_02",
    "qe_02",
    "ve_02",
    "qa_03",
    "va_03",
    "qc_03",
    "vc_03",
    "qe_03",
    "ve_03",
    "qa_04",
    "va_04",
    "qc_04",
    "vc_04",
    "qe_04",
    "ve_04",
    "qa_05",
    "va_05",
    "qc_05",
    "vc_05",
    "qe_05",
    "ve_05",
    "qa_06",
    "va_06",
    "qc_06",
    "vc_06",
    "qe_06",
    "ve_06",
    "qa_07",
    "va_07",
    "qc_07",
    "vc_07",
    "qe_07",
    "ve_07",
    "qa_08",
    "va_08",
    "qc_08",
    "vc_08",
    "qe_08",
    "ve_08",
    "qa_09",
    "va_09",
    "qc_09",
    "vc_09",
    "qe_09",
    "ve_09",
    "qa_10",
    "va_10",
    "qc_10",
    "vc_10",
    "qe_10",
    "ve_10",
    "qa_11",
    "va_11",
    "qc_11",
    "vc_11",
    "qe_11",
    "ve_11",
    "qa_12",
    "va_12",
    "qc_12",
    "vc_12",
    "qe_12",
    "ve_12",
    "lakefract",
    "surfarea",
    "rareahload",
    "rpuid",
    "vpuid",
    "enabled",
];

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

    /// The property names of the first feature of a recorded answer.
    fn recorded(file: &str) -> Vec<String> {
        let path = format!("{}/tests/data/responses/{file}", env!("CARGO_MANIFEST_DIR"));
        let page: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let props = page["features"][0]["properties"].as_object().unwrap();
        props.keys().cloned().collect()
    }

    #[test]
    fn the_flowline_properties_and_plot_columns_are_those_of_the_recorded_answers() {
        let mut flowline = recorded("flowline_items_comid_13293454.json");
        let mut known = FLOWLINE_NETWORK_PROPERTIES.map(String::from).to_vec();
        flowline.sort();
        known.sort();
        assert_eq!(known, flowline);
        let waterbody = recorded("waterbody_items_comid.json");
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
