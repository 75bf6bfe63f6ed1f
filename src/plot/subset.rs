//! The subset both sources (services, local GeoPackage) produce, and its
//! assembly into plot data: the waterbody split and the plot bbox.

use super::data::{Layer, PlotData};
use crate::feature::{bbox_of, union_bbox, Feature};
use geo::ChamberlainDuquetteArea;
use std::collections::HashSet;

/// Everything selected for a plot, before assembly.
#[derive(Default)]
pub struct Subset {
    pub outlets: Vec<Feature>,
    pub basins: Vec<Feature>,
    pub flowlines: Vec<Feature>,
    pub catchments: Vec<Feature>,
    pub waterbodies: Vec<Feature>,
    pub areas: Vec<Feature>,
    pub nonnetwork: Vec<Feature>,
    pub gages: Vec<Feature>,
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
        let (network, off_network): (Vec<Feature>, Vec<Feature>) = self
            .waterbodies
            .into_iter()
            .partition(|w| w.get_i64("comid").is_some_and(|c| wbareacomi.contains(&c)));
        let bbox = self.requested_bbox.unwrap_or_else(|| {
            [
                &self.basins,
                &self.catchments,
                &self.flowlines,
                &self.outlets,
            ]
            .into_iter()
            .filter_map(|l| bbox_of(l.iter()))
            .reduce(union_bbox)
            .unwrap_or([0.0; 4])
        });
        let mut data = PlotData {
            bbox,
            warnings: self.warnings,
            ..Default::default()
        };
        for (layer, features) in [
            (Layer::Outlets, self.outlets),
            (Layer::Basin, self.basins),
            (Layer::Flowline, self.flowlines),
            (Layer::Catchment, self.catchments),
            (Layer::NetworkWtbd, network),
            (Layer::OffNetworkWtbd, off_network),
            (Layer::Area, self.areas),
            (Layer::FlowlineNonNetwork, self.nonnetwork),
            (Layer::Gage, self.gages),
        ] {
            data.set_features(layer, &features)?;
        }
        Ok(data)
    }
}

/// The non-zero `wbareacomi` values of flowlines.
pub fn wbareacomi_of(flowlines: &[Feature]) -> HashSet<i64> {
    flowlines
        .iter()
        .filter_map(|f| f.get_i64("wbareacomi"))
        .filter(|&c| c != 0)
        .collect()
}

/// Keeps the features whose `key` property is in `keep`.
pub fn retain_keys(features: &mut Vec<Feature>, key: &str, keep: &HashSet<i64>) {
    features.retain(|f| f.get_i64(key).is_some_and(|c| keep.contains(&c)));
}

/// The union of polygonal geometries as one basin feature with `properties`.
pub fn union_basin(parts: &[Feature], properties: crate::feature::Properties) -> Feature {
    Feature {
        id: None,
        geometry: crate::feature::union_polygons(parts.iter().filter_map(|f| f.geometry.as_ref())),
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
        let basin = union_basin(
            &[square(0.0, true), square(5.0, false), square(0.5, false)],
            Default::default(),
        );
        let Some(Geometry::MultiPolygon(parts)) = basin.geometry else {
            panic!("two separate parts expected, got {:?}", basin.geometry);
        };
        assert_eq!(parts.0.len(), 2);
        let area: f64 = geo::Area::unsigned_area(&parts);
        assert!((area - 2.5).abs() < 1e-9, "{area}");
    }
}
