//! The result of plot_hydro: the plot data (layers as columnar tables in
//! NAD83 lon/lat, the plot bbox, warnings), and beside it the map when one was
//! drawn and what it was drawn with.

use crate::collection::Collection;
use crate::table::geometry::kind;
use crate::table::schema::{FieldType, LayerSchema};
use crate::table::Table;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// The CRS of plot data (NAD83 longitude/latitude).
pub const PLOT_DATA_CRS: &str = "EPSG:4269";

/// A layer of plot data. The first six are the API's; the others are kept
/// for the GeoPackage output (the reference writes them too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layer {
    /// Outlet points; properties `type` (feature source), `id`, `comid`.
    Outlets,
    /// Network flowlines.
    Flowline,
    /// Basin polygons, one per outlet (or one for a comid set or bbox).
    Basin,
    /// Catchment polygons.
    Catchment,
    /// Waterbodies whose comid is a flowline's `wbareacomi`.
    NetworkWtbd,
    /// The other waterbodies.
    OffNetworkWtbd,
    /// NHDArea polygons.
    Area,
    /// Non-network flowlines.
    FlowlineNonNetwork,
    /// Stream gages (local data only).
    Gage,
}

impl Layer {
    /// Every layer, in drawing and output order.
    pub const ALL: [Layer; 9] = [
        Layer::Basin,
        Layer::Catchment,
        Layer::Area,
        Layer::NetworkWtbd,
        Layer::OffNetworkWtbd,
        Layer::FlowlineNonNetwork,
        Layer::Flowline,
        Layer::Gage,
        Layer::Outlets,
    ];

    /// The layers the map draws, in output order: all a request for
    /// [`super::Layers::Drawn`] holds.
    pub const DRAWN: [Layer; 5] = [
        Layer::Basin,
        Layer::NetworkWtbd,
        Layer::OffNetworkWtbd,
        Layer::Flowline,
        Layer::Outlets,
    ];

    /// The layer's name in the API (`"network_wtbd"`).
    pub fn name(self) -> &'static str {
        match self {
            Layer::Outlets => "outlets",
            Layer::Flowline => "flowline",
            Layer::Basin => "basin",
            Layer::Catchment => "catchment",
            Layer::NetworkWtbd => "network_wtbd",
            Layer::OffNetworkWtbd => "off_network_wtbd",
            Layer::Area => "nhdarea",
            Layer::FlowlineNonNetwork => "flowline_nonnetwork",
            Layer::Gage => "gage",
        }
    }

    /// The layer of an API name.
    pub fn from_name(name: &str) -> Option<Layer> {
        Layer::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The NHDPlus layer whose features this layer holds; `None` for the
    /// outlets and basins, which plot_hydro makes.
    pub fn collection(self) -> Option<Collection> {
        Some(match self {
            Layer::Flowline => Collection::FlowlineNetwork,
            Layer::Catchment => Collection::Catchment,
            Layer::NetworkWtbd | Layer::OffNetworkWtbd => Collection::Waterbody,
            Layer::Area => Collection::Area,
            Layer::FlowlineNonNetwork => Collection::FlowlineNonNetwork,
            Layer::Gage => Collection::Gage,
            Layer::Outlets | Layer::Basin => return None,
        })
    }

    /// The declared schema of the layer, whatever its source: its
    /// collection's ([`Collection::schema`]), or for the outlets (points)
    /// and basins (multipolygons) the outlet's columns `comid` (integer),
    /// `id` and `type` (text; [`super::outlets::Resolved::set_columns`]).
    pub fn schema(self) -> LayerSchema {
        const OUTLET_FIELDS: &[(&str, FieldType)] = &[
            ("comid", FieldType::Integer),
            ("id", FieldType::Text),
            ("type", FieldType::Text),
        ];
        let geometry = match self {
            Layer::Outlets => kind::POINT,
            Layer::Basin => kind::MULTIPOLYGON,
            _ => return self.collection().expect("a layer of NHDPlus").schema(),
        };
        LayerSchema {
            fields: OUTLET_FIELDS,
            geometry,
            key: Some("comid"),
        }
    }
}

/// Plot data: what plot_hydro returns. Immutable once built.
#[derive(Default)]
pub struct PlotData {
    /// Each layer's features as a table, NAD83 lon/lat. A layer absent from
    /// the map is empty.
    pub layers: BTreeMap<Layer, Table>,
    /// The plot bbox `[xmin, ymin, xmax, ymax]`, NAD83 lon/lat.
    pub bbox: [f64; 4],
    /// Warnings met while building it (also sent to the log callback).
    pub warnings: Vec<String>,
    /// Comids of the flowline layer, in layer order.
    pub flowline_comids: Vec<i64>,
}

/// What plot_hydro returns: the plot data, the map when one was drawn (not
/// when `actually_plot` is off or the data was drawn onto the caller's
/// map), and what the data is drawn with, to draw it again (the HTML map).
pub struct Plot {
    pub data: PlotData,
    pub map: Option<crate::render::Map>,
    pub drawing: Drawing,
}

/// How plot data is drawn.
#[derive(Debug, Clone, Default)]
pub struct Drawing {
    /// The request's plot_config.
    pub styles: crate::render::style::PlotStyles,
    /// The request's basemap provider name (`"none"` or empty: no basemap).
    pub basemap: String,
    /// The context's `tile_url` override of the provider's tiles.
    pub tile_url: Option<String>,
    /// The request's level of detail (`PlotRequest::lod`).
    pub lod: bool,
}

impl PlotData {
    /// The table of a layer (empty when absent). Borrowed from the plot data.
    pub fn layer(&self, layer: Layer) -> &Table {
        static EMPTY: LazyLock<Table> = LazyLock::new(Table::default);
        self.layers.get(&layer).unwrap_or(&EMPTY)
    }

    /// Sets a layer's table (and, for the flowline layer, `flowline_comids`,
    /// read from its `comid` column).
    pub fn set_layer(&mut self, layer: Layer, table: Table) {
        if layer == Layer::Flowline {
            self.flowline_comids = match table.column("comid") {
                Some(c) => c.present_i64_values(),
                None => Vec::new(),
            };
        }
        self.layers.insert(layer, table);
    }
}
