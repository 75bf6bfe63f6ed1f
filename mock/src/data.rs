//! The mock's data: the layers of `tests/data/yahara_sample.gpkg` and
//! `tests/data/new_hope.gpkg` (in that order), with properties as the real
//! fabric service sends them, loaded once per process by the mock's own
//! reader (`gpkg`).

use super::feature::{integer, Feature};
use super::gpkg::GeoPackage;
use hydroplot::collection::Collection;
use once_cell::sync::OnceCell;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The GeoPackages served, relative to the crate root.
pub const GEOPACKAGES: &[&str] = &["tests/data/yahara_sample.gpkg", "tests/data/new_hope.gpkg"];

/// The collections the mock fabric service serves.
pub const SERVED: &[Collection] = &[
    Collection::FlowlineNetwork,
    Collection::Catchment,
    Collection::Waterbody,
    Collection::Area,
    Collection::FlowlineNonNetwork,
];

/// Catchment feature ids are server row ids, as in the real service (whose
/// `catchment_point_lookup.json` has id 2310647 for featureid 22879275):
/// this base plus the row's position.
pub const CATCHMENT_ROW_ID_BASE: i64 = 2_300_000;

/// Synthetic linked-data features of the sources the GeoPackages do not hold
/// (`huc12pp`, `wqp`): (source, id, comid). Each answers a point at the
/// downstream end of that comid's flowline.
pub const SYNTHETIC_FEATURES: &[(&str, &str, i64)] = &[
    // Yahara River at East Main Street, Madison: 168 flowlines upstream.
    ("huc12pp", "070900020602", 13293750),
    // Yahara River at McFarland (below Lake Waubesa): 251 flowlines upstream.
    ("huc12pp", "070900020603", 13293970),
    // Spring (Dorn) Creek near Waunakee: 9 flowlines upstream.
    ("wqp", "WIDNR_WQX-10031166", 13294176),
    // The Windsor gage's reach, a headwater in this sample: 1 flowline.
    ("wqp", "USGS-05427718", 13293456),
];

/// One served feature with its precomputed bounding box and wire form.
#[derive(Debug, Clone)]
pub struct Item {
    /// The feature as the service sends it (id, wire-typed properties, geometry).
    pub feature: Feature,
    /// `[xmin, ymin, xmax, ymax]` of the geometry.
    pub bbox: Option<[f64; 4]>,
    /// The whole feature serialized once at load (`wire_json(feature, None,
    /// false)`), so that pages are assembled from bytes instead of building
    /// and serializing a JSON tree per feature and request.
    pub json: Box<str>,
}

/// The GeoJSON feature the fabric service sends for `feature`: only the
/// properties in `keep` when given, and a null geometry when `skip_geometry`.
pub fn wire_json(feature: &Feature, keep: Option<&[String]>, skip_geometry: bool) -> Value {
    let props: Map<String, Value> = match keep {
        Some(keep) => feature
            .properties
            .iter()
            .filter(|(k, _)| keep.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        None => feature.properties.clone(),
    };
    let geometry = match (&feature.geometry, skip_geometry) {
        (Some(g), false) => super::geojson::geometry(g),
        _ => Value::Null,
    };
    json!({"type": "Feature", "properties": props, "id": feature.id, "geometry": geometry})
}

/// All layers of both GeoPackages, with lookups by comid.
#[derive(Debug)]
pub struct Data {
    layers: HashMap<Collection, Vec<Item>>,
    gages: Vec<Feature>,
    flowline_by_comid: HashMap<i64, usize>,
    catchment_by_comid: HashMap<i64, usize>,
    /// hydroseq -> indexes of the flowlines draining into it (their dnhydroseq).
    tributaries: HashMap<i64, Vec<usize>>,
}

/// Why the data could not be loaded: the file and what is wrong with it.
pub type LoadError = String;

static SHARED: OnceCell<Result<Arc<Data>, LoadError>> = OnceCell::new();

impl Data {
    /// The data, loaded on first use and shared by every mock server of the process.
    pub fn shared() -> Result<Arc<Data>, LoadError> {
        SHARED.get_or_init(|| Data::load().map(Arc::new)).clone()
    }

    /// Reads both GeoPackages.
    pub fn load() -> Result<Data, LoadError> {
        let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
        let files: Vec<_> = GEOPACKAGES.iter().map(|f| root.join(f)).collect();
        Data::load_from(&files)
    }

    /// Reads these GeoPackages (in order) instead of the fixtures, e.g. the
    /// generated benchmark network.
    pub fn load_from(files: &[std::path::PathBuf]) -> Result<Data, LoadError> {
        let mut layers: HashMap<Collection, Vec<Item>> = HashMap::new();
        let mut gages = Vec::new();
        for path in files {
            let in_file = |e: String| format!("mock data: {}: {e}", path.display());
            let gpkg = GeoPackage::open(path).map_err(in_file)?;
            for &collection in SERVED {
                let Some(features) = gpkg.read(collection) else {
                    continue;
                };
                let items = layers.entry(collection).or_default();
                for feature in features.map_err(in_file)? {
                    let row = items.len() as i64;
                    items.push(to_wire(collection, feature, row));
                }
            }
            if let Some(features) = gpkg.read(Collection::Gage) {
                gages.extend(features.map_err(in_file)?);
            }
        }
        let index_by = |c: Collection, key: &str| -> HashMap<i64, usize> {
            let items = layers.get(&c).map(Vec::as_slice).unwrap_or_default();
            items
                .iter()
                .enumerate()
                .filter_map(|(i, it)| Some((it.feature.get_i64(key)?, i)))
                .collect()
        };
        let flowline_by_comid = index_by(Collection::FlowlineNetwork, "comid");
        let catchment_by_comid = index_by(Collection::Catchment, "featureid");
        let mut tributaries: HashMap<i64, Vec<usize>> = HashMap::new();
        for (i, it) in layers
            .get(&Collection::FlowlineNetwork)
            .into_iter()
            .flatten()
            .enumerate()
        {
            if let Some(dn) = it.feature.get_i64("dnhydroseq").filter(|&d| d != 0) {
                tributaries.entry(dn).or_default().push(i);
            }
        }
        Ok(Data {
            layers,
            gages,
            flowline_by_comid,
            catchment_by_comid,
            tributaries,
        })
    }

    /// The features of a served collection, in data order.
    pub fn layer(&self, collection: Collection) -> &[Item] {
        self.layers
            .get(&collection)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The network flowline `comid`.
    pub fn flowline(&self, comid: i64) -> Option<&Feature> {
        let i = *self.flowline_by_comid.get(&comid)?;
        Some(&self.layer(Collection::FlowlineNetwork)[i].feature)
    }

    /// The catchment of `comid`.
    pub fn catchment(&self, comid: i64) -> Option<&Feature> {
        let i = *self.catchment_by_comid.get(&comid)?;
        Some(&self.layer(Collection::Catchment)[i].feature)
    }

    /// `comid` and every flowline upstream of it (X drains to Y when
    /// `X.dnhydroseq == Y.hydroseq`), breadth first; empty for an unknown comid.
    pub fn upstream(&self, comid: i64) -> Vec<i64> {
        let flowlines = self.layer(Collection::FlowlineNetwork);
        let Some(&start) = self.flowline_by_comid.get(&comid) else {
            return Vec::new();
        };
        let mut seen = vec![false; flowlines.len()];
        let mut queue = std::collections::VecDeque::from([start]);
        seen[start] = true;
        let mut out = Vec::new();
        while let Some(i) = queue.pop_front() {
            let f = &flowlines[i].feature;
            out.extend(f.get_i64("comid"));
            let Some(hydroseq) = f.get_i64("hydroseq") else {
                continue;
            };
            for &t in self.tributaries.get(&hydroseq).into_iter().flatten() {
                if !std::mem::replace(&mut seen[t], true) {
                    queue.push_back(t);
                }
            }
        }
        out
    }

    /// The gage whose `source_fea` is `site_no` (e.g. `05427718`).
    pub fn gage(&self, site_no: &str) -> Option<&Feature> {
        self.gages
            .iter()
            .find(|g| g.get_str("source_fea") == Some(site_no))
    }
}

/// Properties the real service sends as JSON integers, per collection; every
/// other number is sent as a float (`streamorde` 3.0, `hydroseq` 510042379.0),
/// as in `flowline_items_comid_13293454.json` and `waterbody_items_comid.json`.
fn integer_properties(collection: Collection) -> &'static [&'static str] {
    match collection {
        Collection::FlowlineNetwork | Collection::FlowlineNonNetwork => {
            &["objectid", "comid", "fcode", "wbareacomi"]
        }
        Collection::Waterbody | Collection::Area => &["objectid", "comid", "fcode", "onoffnet"],
        Collection::Catchment => &["featureid", "gridcode"],
        Collection::Gage => &[],
    }
}

/// The feature as the service sends it: wire number types, no GeoPackage
/// bookkeeping columns, `id` = comid (catchments: a row id).
fn to_wire(collection: Collection, mut feature: Feature, row: i64) -> Item {
    let ints = integer_properties(collection);
    feature.properties.retain(|k, _| k != "fid" && k != "geom");
    for (key, value) in feature.properties.iter_mut() {
        let Value::Number(n) = value else { continue };
        let wire = if ints.contains(&key.as_str()) {
            integer(value).map(Value::from)
        } else {
            n.as_f64()
                .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number))
        };
        if let Some(wire) = wire {
            *value = wire;
        }
    }
    feature.id = match collection {
        Collection::Catchment => Some(Value::from(CATCHMENT_ROW_ID_BASE + row)),
        _ => feature.get_i64("comid").map(Value::from),
    };
    let bbox = feature.bbox();
    let json = wire_json(&feature, None, false)
        .to_string()
        .into_boxed_str();
    Item {
        feature,
        bbox,
        json,
    }
}
