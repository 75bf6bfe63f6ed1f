//! The subset both sources (services, local GeoPackage) produce, and its
//! assembly into plot data: the waterbody split and the plot bbox.

use super::data::{Layer, PlotData};
use super::outlets::{self, Resolved};
use super::request::PlotRequest;
use crate::cancel::{Cancelled, Stop};
use crate::feature::{union_bbox, Feature};
use crate::table::column::from_value;
use crate::table::{Table, TableBuilder};
use crate::{Error, Result};
use geo::{ChamberlainDuquetteArea, Geometry};
use std::collections::HashSet;

/// Everything selected for a plot, before assembly. The layers read from a
/// source are tables; the outlets become the `outlets` table at assembly.
#[derive(Default)]
pub struct Subset {
    pub outlets: Vec<Resolved>,
    /// One row per basin ([`Basins`]).
    pub basins: Table,
    pub flowlines: Table,
    pub catchments: Table,
    /// The box around the catchments read, kept or not (a local read sets
    /// it; with [`super::Layers::Drawn`] it is all that is kept of them).
    pub catchment_bbox: Option<[f64; 4]>,
    /// The waterbodies; only the off-network ones when
    /// `network_waterbodies` is set.
    pub waterbodies: Table,
    /// The network waterbodies when split off while reading.
    pub network_waterbodies: Option<Table>,
    pub areas: Table,
    pub nonnetwork: Table,
    pub gages: Table,
    /// `wbareacomi` values marking network waterbodies; `None` = those of
    /// `flowlines`. A local box sets it to every flowline's in the box,
    /// whatever the stream order (nhdplusTools' published split).
    pub network_wbareacomi: Option<HashSet<i64>>,
    /// The area asked for (bbox requests), NAD83 lon/lat.
    pub requested_bbox: Option<[f64; 4]>,
    pub warnings: Vec<String>,
}

impl Subset {
    /// Splits the waterbodies and computes the plot bbox: the requested box,
    /// else the union of basins, catchments (held or not), flowlines and
    /// outlets. Each layer becomes a table here, conformed to its declared
    /// schema ([`Layer::schema`], [`Table::conform`]) with the fields `req`
    /// asks for, so that every source gives a layer the same fields and
    /// types; a value its field's type cannot hold is an error of the
    /// source (`Error::Gpkg` for `hydro_data`, else `Error::Service`).
    pub fn into_plot_data(self, req: &PlotRequest) -> Result<PlotData> {
        let outlets = outlets::table(&self.outlets).map_err(internal("outlets"))?;
        let (network, off_network) = match self.network_waterbodies {
            Some(network) => (network, self.waterbodies),
            // Without waterbodies (flowline-only) nothing is split.
            None if self.waterbodies.is_empty() => (self.waterbodies.take(&[]), self.waterbodies),
            None => {
                let wbareacomi =
                    (self.network_wbareacomi).unwrap_or_else(|| wbareacomi_of(&self.flowlines));
                split_waterbodies(&self.waterbodies, &wbareacomi)
            }
        };
        let bbox = self.requested_bbox.unwrap_or_else(|| {
            [
                self.basins.bbox(),
                self.catchments.bbox(),
                self.catchment_bbox,
                self.flowlines.bbox(),
                outlets.bbox(),
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
        for (layer, table) in [
            (Layer::Outlets, outlets),
            (Layer::Basin, self.basins),
            (Layer::Flowline, self.flowlines),
            (Layer::Catchment, self.catchments),
            (Layer::NetworkWtbd, network),
            (Layer::OffNetworkWtbd, off_network),
            (Layer::Area, self.areas),
            (Layer::FlowlineNonNetwork, self.nonnetwork),
            (Layer::Gage, self.gages),
        ] {
            let wanted = wanted_fields(req, layer);
            let table =
                (table.conform(&layer.schema(), layer.name(), wanted.as_deref())).map_err(|e| {
                    match req.hydro_data {
                        Some(_) => Error::Gpkg(e),
                        None => Error::Service(e),
                    }
                })?;
            data.set_layer(layer, table);
        }
        Ok(data)
    }
}

/// The declared fields of `layer` that its table holds even when its source
/// has none of them (`None`: every one): those `req.properties` asks for;
/// none added when `req.layers` narrows the columns (the map or the counts
/// alone use them); every one on the outlets and basins.
fn wanted_fields(req: &PlotRequest, layer: Layer) -> Option<Vec<&str>> {
    let collection = layer.collection()?;
    if req.layers.narrows_columns() {
        return Some(Vec::new());
    }
    req.properties.names(collection)
}

/// The network waterbodies of `waterbodies` (whose `comid` is among the
/// flowlines' `wbareacomi`), and the others.
pub fn split_waterbodies(waterbodies: &Table, wbareacomi: &HashSet<i64>) -> (Table, Table) {
    let (network, others) = network_rows(waterbodies, wbareacomi);
    (waterbodies.take(&network), waterbodies.take(&others))
}

/// The rows of the network waterbodies of `waterbodies` (as
/// [`split_waterbodies`]), and the rows of the others, each in table order.
pub fn network_rows(waterbodies: &Table, wbareacomi: &HashSet<i64>) -> (Vec<usize>, Vec<usize>) {
    let mask = key_mask(waterbodies, "comid", wbareacomi);
    (0..mask.len()).partition(|&row| mask[row])
}

/// The box around the catchments (their box) and the geometries of
/// `flowlines`, by which the other layers are read; `None` when no row of
/// either has a geometry.
pub fn extent(catchments: Option<[f64; 4]>, flowlines: &Table) -> Option<[f64; 4]> {
    [catchments, flowlines.bbox()]
        .into_iter()
        .flatten()
        .reduce(union_bbox)
}

/// The non-zero `wbareacomi` values of flowlines (read from that column).
pub fn wbareacomi_of(flowlines: &Table) -> HashSet<i64> {
    let mut wbareacomi = ids_of(flowlines, "wbareacomi");
    wbareacomi.remove(&0);
    wbareacomi
}

/// The flowlines of stream order `n` or more (read from their `streamorde`
/// column; a row without one is left out), as the services' filter
/// `streamorde > n-1` (R4) returns them.
pub fn flowlines_of_order(flowlines: &Table, n: i32) -> Table {
    let order = flowlines.column("streamorde");
    let mask: Vec<bool> = (0..flowlines.len())
        .map(|r| {
            order
                .and_then(|c| c.i64(r))
                .is_some_and(|s| s >= i64::from(n))
        })
        .collect();
    flowlines.filter(&mask)
}

/// The values of the integer `key` column of `table` (none without it).
pub fn ids_of(table: &Table, key: &str) -> HashSet<i64> {
    let Some(column) = table.column(key) else {
        return HashSet::new();
    };
    column.present_i64_values().into_iter().collect()
}

/// The warnings for what the stream order filter left out of the flowlines
/// `drawn` (their comids), `got` as they were got ("fetched", "read"): each
/// outlet whose own flowline is not among them, since nothing upstream of
/// it is drawn then, or, without outlets (a comid set), the whole set when
/// none of it is left.
pub fn left_out(outlets: &[Resolved], drawn: &HashSet<i64>, got: &str) -> Vec<String> {
    if outlets.is_empty() && drawn.is_empty() {
        return vec![format!(
            "none of the flowlines {got} for the comid set is of the stream order asked or more; no flowline is drawn"
        )];
    }
    (outlets.iter())
        .filter(|o| !drawn.contains(&o.comid))
        .map(|o| {
            format!(
                "outlet {}/{} (comid {}) is not among the flowlines {got} (stream order filter?); nothing is drawn upstream of it",
                o.source, o.id, o.comid
            )
        })
        .collect()
}

/// One entry per row: whether its integer `key` column is in `keep` (false
/// where the value or the column is missing).
fn key_mask(table: &Table, key: &str, keep: &HashSet<i64>) -> Vec<bool> {
    match table.column(key) {
        Some(c) => (c.i64_values().into_iter())
            .map(|v| v.is_some_and(|v| keep.contains(&v)))
            .collect(),
        None => vec![false; table.len()],
    }
}

/// The rows of `table` whose `key` column is in `keep` (a new table).
pub fn retain_keys(table: &Table, key: &str, keep: &HashSet<i64>) -> Table {
    table.filter(&key_mask(table, key, keep))
}

/// The `basin` layer under construction, one row per basin, written
/// straight into a table. Owns its growing buffers.
#[derive(Debug, Default)]
pub struct Basins {
    rows: TableBuilder,
}

impl Basins {
    /// Appends the basin of `outlet` as the index service sent it: its
    /// geometry, id and properties, with the outlet's columns
    /// ([`Resolved::set_columns`]) over properties of the same names.
    pub fn push_sent(&mut self, basin: &Feature, outlet: &Resolved) -> Result<()> {
        let mut buf = String::new();
        for (k, v) in &basin.properties {
            let key = self.rows.key(k);
            self.rows
                .set(key, from_value(v, &mut buf))
                .map_err(internal("basin"))?;
        }
        if let Some(id) = &basin.id {
            self.rows
                .set_id(from_value(id, &mut buf))
                .map_err(internal("basin"))?;
        }
        self.push(basin.geometry.as_ref(), Some(outlet))
    }

    /// Appends a basin built here (a union of catchments) with the columns
    /// of its outlet, if it has one.
    pub fn push(
        &mut self,
        geometry: Option<&Geometry<f64>>,
        outlet: Option<&Resolved>,
    ) -> Result<()> {
        let b = &mut self.rows;
        if let Some(o) = outlet {
            o.set_columns(b).map_err(internal("basin"))?;
        }
        match geometry {
            Some(g) => b.geometry.push(g),
            None => b.geometry.push_none(),
        }
        .map_err(internal("basin"))?;
        b.end_row();
        Ok(())
    }

    /// The layer.
    pub fn finish(self) -> Result<Table> {
        self.rows.finish().map_err(internal("basin"))
    }
}

/// A table error in the layer `layer`, which this crate built itself.
fn internal(layer: &'static str) -> impl Fn(String) -> Error {
    move |e| Error::Internal(format!("layer {layer}: {e}"))
}

/// The union of the polygonal geometries of `parts`: a basin, dissolved on
/// up to `threads` threads; `Cancelled` soon after `stop` is.
pub fn union_basin(
    parts: &Table,
    threads: usize,
    stop: &Stop,
) -> Result<Option<Geometry<f64>>, Cancelled> {
    let rows: Vec<usize> = (0..parts.len()).collect();
    crate::table::dissolve::dissolve(parts.geometries(), &rows, threads, stop)
}

/// The area of the largest basin of `basins` (lon/lat) in km² (0 when none).
pub fn largest_area_km2(basins: &Table) -> f64 {
    (0..basins.len())
        .filter_map(|r| basins.geometry(r))
        .map(|g| g.chamberlain_duquette_unsigned_area() / 1e6)
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let basin = union_basin(&parts, 2, &Stop::never()).unwrap();
        let Some(Geometry::MultiPolygon(parts)) = basin else {
            panic!("two separate parts expected, got {basin:?}");
        };
        assert_eq!(parts.0.len(), 2);
        let area: f64 = geo::Area::unsigned_area(&parts);
        assert!((area - 2.5).abs() < 1e-9, "{area}");
    }
}
