//! The subset both sources (services, local GeoPackage) produce, and its
//! assembly into plot data: the waterbody split and the plot bbox.

use super::data::{Layer, PlotData};
use crate::feature::{bbox_of, union_bbox, Feature};
use crate::table::Table;
use geo::ChamberlainDuquetteArea;
use std::collections::HashSet;

/// Everything selected for a plot, before assembly. The layers read from a
/// source are tables; outlets and basins, built here one per outlet, are
/// features until assembly.
#[derive(Default)]
pub struct Subset {
    pub outlets: Vec<Feature>,
    pub basins: Vec<Feature>,
    pub flowlines: Table,
    pub catchments: Table,
    pub waterbodies: Table,
    pub areas: Table,
    pub nonnetwork: Table,
    pub gages: Table,
    /// `wbareacomi` values marking network waterbodies; `None` = those of `flowlines`.
    pub network_wbareacomi: Option<HashSet<i64>>,
    /// The area asked for (bbox requests), NAD83 lon/lat.
    pub requested_bbox: Option<[f64; 4]>,
    pub warnings: Vec<String>,
}

impl Subset {
    /// Splits the waterbodies and computes the plot bbox: the requested box,
    /// else the union of basins, catchments, flowlines and outlets. Each
    /// layer becomes a table here.
    pub fn into_plot_data(self) -> crate::Result<PlotData> {
        let wbareacomi = self
            .network_wbareacomi
            .unwrap_or_else(|| wbareacomi_of(&self.flowlines));
        let mask = key_mask(&self.waterbodies, "comid", &wbareacomi);
        let network = self.waterbodies.filter(&mask);
        let off_network = self
            .waterbodies
            .filter(&mask.iter().map(|m| !m).collect::<Vec<_>>());
        let bbox = self.requested_bbox.unwrap_or_else(|| {
            [
                bbox_of(&self.basins),
                self.catchments.bbox(),
                self.flowlines.bbox(),
                bbox_of(&self.outlets),
            ]
            .into_iter()
            .flatten()
            .reduce(union_bbox)
            .unwrap_or([0.0; 4])
        });
        let mut data = PlotData {
            bbox,
            warnings: self.warnings,
            ..Default::default()
        };
        data.set_features(Layer::Outlets, &self.outlets)?;
        data.set_features(Layer::Basin, &self.basins)?;
        for (layer, table) in [
            (Layer::Flowline, self.flowlines),
            (Layer::Catchment, self.catchments),
            (Layer::NetworkWtbd, network),
            (Layer::OffNetworkWtbd, off_network),
            (Layer::Area, self.areas),
            (Layer::FlowlineNonNetwork, self.nonnetwork),
            (Layer::Gage, self.gages),
        ] {
            data.set_layer(layer, table);
        }
        Ok(data)
    }
}

/// The non-zero `wbareacomi` values of flowlines (read from that column).
pub fn wbareacomi_of(flowlines: &Table) -> HashSet<i64> {
    let Some(column) = flowlines.column("wbareacomi") else {
        return HashSet::new();
    };
    (0..flowlines.len())
        .filter_map(|r| column.i64(r))
        .filter(|&c| c != 0)
        .collect()
}

/// One entry per row: whether its integer `key` column is in `keep` (false
/// where the value or the column is missing).
fn key_mask(table: &Table, key: &str, keep: &HashSet<i64>) -> Vec<bool> {
    let column = table.column(key);
    (0..table.len())
        .map(|r| {
            column
                .and_then(|c| c.i64(r))
                .is_some_and(|v| keep.contains(&v))
        })
        .collect()
}

/// The rows of `table` whose `key` column is in `keep` (a new table).
pub fn retain_keys(table: &Table, key: &str, keep: &HashSet<i64>) -> Table {
    table.filter(&key_mask(table, key, keep))
}

/// The union of the polygonal geometries of `parts` as one basin feature
/// with `properties`.
pub fn union_basin(parts: &Table, properties: crate::feature::Properties) -> Feature {
    let geometries: Vec<_> = (0..parts.len()).filter_map(|r| parts.geometry(r)).collect();
    Feature {
        id: None,
        geometry: crate::feature::union_polygons(geometries.iter()),
        properties,
    }
}

/// The area of a (lon/lat) feature's geometry in km².
pub fn area_km2(f: &Feature) -> f64 {
    f.geometry
        .as_ref()
        .map_or(0.0, |g| g.chamberlain_duquette_unsigned_area() / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::Geometry;

    fn square(x: f64, clockwise: bool) -> Feature {
        let mut ring = vec![(x, 0.0), (x + 1.0, 0.0), (x + 1.0, 1.0), (x, 1.0), (x, 0.0)];
        if clockwise {
            ring.reverse();
        }
        Feature {
            geometry: Some(Geometry::Polygon(geo::Polygon::new(
                ring.into(),
                Vec::new(),
            ))),
            ..Default::default()
        }
    }

    #[test]
    fn basins_keep_parts_of_either_winding() {
        let parts =
            Table::from_features(&[square(0.0, true), square(5.0, false), square(0.5, false)])
                .unwrap();
        let basin = union_basin(&parts, Default::default());
        let Some(Geometry::MultiPolygon(parts)) = basin.geometry else {
            panic!("two separate parts expected, got {:?}", basin.geometry);
        };
        assert_eq!(parts.0.len(), 2);
        let area: f64 = geo::Area::unsigned_area(&parts);
        assert!((area - 2.5).abs() < 1e-9, "{area}");
    }
}
