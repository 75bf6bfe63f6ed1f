//! Reading the NHDPlus layers of a GeoPackage: whole layers for small files,
//! and for national files the topology columns alone, then features by key or
//! by bounding box, so memory follows the subset rather than the file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use geo::{Geometry, Intersects, Rect};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, Row};
use serde_json::Value;

use super::blob;
use super::layer::{quote, Layer};
use crate::collection::Collection;
use crate::feature::{Feature, Properties};
use crate::network::Reach;
use crate::{Error, Result};

/// Every layer role, for discovery at open.
const ALL: [Collection; 6] = [
    Collection::FlowlineNetwork,
    Collection::Catchment,
    Collection::Waterbody,
    Collection::Area,
    Collection::FlowlineNonNetwork,
    Collection::Gage,
];

/// Ids per `IN (...)` query of [`GeoPackage::read_by_ids`]. Ids are inlined as
/// integer literals (no bound-parameter limit), so a table without an index on
/// the key is scanned once per chunk, not once per few hundred ids.
const IDS_PER_QUERY: usize = 20_000;

/// A GeoPackage opened read-only. Layers are found once, at open, by their
/// names in [`Collection::gpkg_names`] (case-insensitive); columns are matched
/// case-insensitively and properties come out with lower-case keys.
///
/// Not `Sync` (one SQLite connection): use from one thread at a time.
pub struct GeoPackage {
    conn: Connection,
    path: PathBuf,
    /// Each layer found in the file; `Err` when its description failed (for
    /// example an unknown CRS), reported when the layer is used.
    layers: HashMap<Collection, Result<Layer>>,
}

impl std::fmt::Debug for GeoPackage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GeoPackage({})", self.path.display())
    }
}

impl GeoPackage {
    /// Opens `path` read-only. `Error::Io` when the file cannot be read,
    /// `Error::Gpkg` when it is not an SQLite database or has no `gpkg_contents`.
    pub fn open(path: &Path) -> Result<GeoPackage> {
        std::fs::File::open(path).map_err(|e| crate::error::io_error(path, e))?;
        let not_gpkg =
            |why: String| Error::Gpkg(format!("{} is not a GeoPackage: {why}.", path.display()));
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| not_gpkg(e.to_string()))?;
        let tables = feature_tables(&conn).map_err(|e| match e {
            rusqlite::Error::SqliteFailure(_, Some(m)) if m.contains("no such table") => {
                not_gpkg("it has no gpkg_contents table".to_string())
            }
            e => not_gpkg(e.to_string()),
        })?;
        let mut layers = HashMap::new();
        for c in ALL {
            let found = c
                .gpkg_names()
                .iter()
                .find_map(|name| tables.iter().find(|t| t.eq_ignore_ascii_case(name)));
            if let Some(table) = found {
                let layer = Layer::describe(&conn, table)
                    .map_err(|e| e.context(&path.display().to_string()));
                layers.insert(c, layer);
            }
        }
        Ok(GeoPackage {
            conn,
            path: path.to_path_buf(),
            layers,
        })
    }

    /// True when the file has a feature table for `c`.
    pub fn has_layer(&self, c: Collection) -> bool {
        self.layers.contains_key(&c)
    }

    /// Every feature of the layer, in primary-key order. Meant for small files.
    pub fn read_all(&self, c: Collection) -> Result<Vec<Feature>> {
        let layer = self.layer(c)?;
        let sql = format!("{} ORDER BY {}", layer.select(), quote(&layer.pk));
        self.query(layer, &sql, &[], None)
    }

    /// The topology of the flowline layer, reading only the comid, hydroseq,
    /// dnhydroseq and stream order columns, in row order. Rows without a
    /// comid are skipped; a NULL hydroseq, dnhydroseq or stream order reads
    /// as 0. With the topology index ([`super::create_topology_index`])
    /// SQLite reads the index alone; the rows are sorted here, so the order
    /// is the same with or without it.
    pub fn read_topology(&self) -> Result<Vec<Reach>> {
        let (table, cols) = self.topology_columns()?;
        let sql = format!(
            "SELECT rowid, {} FROM {}",
            cols.iter().map(|c| quote(c)).collect::<Vec<_>>().join(", "),
            quote(table)
        );
        let run = || -> rusqlite::Result<Vec<(i64, Reach)>> {
            let mut stmt = self.conn.prepare(&sql)?;
            let mut rows = stmt.query([])?;
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                let int = |i: usize| r.get_ref(i).map(|v| integer(v).unwrap_or(0));
                let comid = int(1)?;
                if comid != 0 {
                    let reach = Reach {
                        comid,
                        hydroseq: int(2)?,
                        dnhydroseq: int(3)?,
                        streamorder: i32::try_from(int(4)?).unwrap_or(0),
                    };
                    out.push((int(0)?, reach));
                }
            }
            Ok(out)
        };
        let mut rows = run().map_err(|e| self.context(e.into()))?;
        rows.sort_unstable_by_key(|(rowid, _)| *rowid);
        Ok(rows.into_iter().map(|(_, reach)| reach).collect())
    }

    /// The flowline table and its topology columns (comid, hydroseq,
    /// dnhydroseq, stream order) as the file spells them: what
    /// [`GeoPackage::read_topology`] reads and the topology index covers.
    pub fn topology_columns(&self) -> Result<(&str, [&str; 4])> {
        let layer = self.layer(Collection::FlowlineNetwork)?;
        let col = |names: &[&str]| layer.require(names).map_err(|e| self.context(e));
        Ok((
            &layer.table,
            [
                col(&["comid", "nhdplusid"])?,
                col(&["hydroseq"])?,
                col(&["dnhydroseq"])?,
                col(&["streamorde", "streamorder"])?,
            ],
        ))
    }

    /// The features whose key (`featureid` for catchments, `flcomid` for gages,
    /// else `comid`) is in `ids`, in the order of `ids` (duplicates once; ids
    /// without a feature are skipped).
    pub fn read_by_ids(&self, c: Collection, ids: &[i64]) -> Result<Vec<Feature>> {
        let layer = self.layer(c)?;
        let key = layer.require(key_columns(c)).map_err(|e| self.context(e))?;
        let key_property = key.to_ascii_lowercase();
        let mut seen = std::collections::HashSet::with_capacity(ids.len());
        let unique: Vec<i64> = ids.iter().copied().filter(|id| seen.insert(*id)).collect();
        let mut by_id: HashMap<i64, Vec<Feature>> = HashMap::with_capacity(unique.len());
        for chunk in unique.chunks(IDS_PER_QUERY) {
            let list = chunk
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(",");
            let sql = format!(
                "{} WHERE {} IN ({list}) ORDER BY {}",
                layer.select(),
                quote(key),
                quote(&layer.pk)
            );
            for f in self.query(layer, &sql, &[], None)? {
                if let Some(id) = f.get_i64(&key_property) {
                    by_id.entry(id).or_default().push(f);
                }
            }
        }
        Ok(unique
            .iter()
            .filter_map(|id| by_id.remove(id))
            .flatten()
            .collect())
    }

    /// The features whose geometry intersects `bbox` (`[xmin, ymin, xmax, ymax]`,
    /// NAD83 lon/lat): an R-tree prefilter when the file has the index, then an
    /// exact intersection test. Features without a geometry never match.
    pub fn read_bbox(&self, c: Collection, bbox: [f64; 4]) -> Result<Vec<Feature>> {
        let [x0, y0, x1, y1] = bbox;
        if bbox.iter().any(|v| !v.is_finite()) || x0 > x1 || y0 > y1 {
            return Err(Error::InvalidArgument(format!(
                "The bounding box {bbox:?} is not [xmin, ymin, xmax, ymax] with finite values."
            )));
        }
        let layer = self.layer(c)?;
        let file_bbox = match &layer.from_lonlat {
            Some(t) => t.bbox(bbox)?,
            None => bbox,
        };
        let filter = Filter {
            rect: Rect::new((x0, y0), (x1, y1)),
            file_bbox,
        };
        match &layer.rtree {
            Some(rtree) => {
                let [fx0, fy0, fx1, fy1] = file_bbox;
                let sql = format!(
                    "{} WHERE {} IN (SELECT id FROM {} WHERE minx <= ?3 AND maxx >= ?1 AND miny <= ?4 AND maxy >= ?2) ORDER BY {}",
                    layer.select(),
                    quote(&layer.pk),
                    quote(rtree),
                    quote(&layer.pk)
                );
                self.query(layer, &sql, &[fx0, fy0, fx1, fy1], Some(&filter))
            }
            None => {
                let sql = format!("{} ORDER BY {}", layer.select(), quote(&layer.pk));
                self.query(layer, &sql, &[], Some(&filter))
            }
        }
    }

    /// The gage whose `SOURCE_FEA` (site number, e.g. `05429500`) is `site_no`,
    /// `None` when the layer has no such row.
    pub fn gage(&self, site_no: &str) -> Result<Option<Feature>> {
        let layer = self.layer(Collection::Gage)?;
        let col = layer
            .require(&["source_fea", "site_no"])
            .map_err(|e| self.context(e))?;
        let sql = format!(
            "{} WHERE {} = ?1 ORDER BY {} LIMIT 1",
            layer.select(),
            quote(col),
            quote(&layer.pk)
        );
        let mut stmt = self
            .conn
            .prepare(&sql)
            .map_err(|e| self.context(e.into()))?;
        let mut rows = stmt
            .query([site_no.trim()])
            .map_err(|e| self.context(e.into()))?;
        match rows.next().map_err(|e| self.context(e.into()))? {
            Some(row) => self.feature(layer, row, None),
            None => Ok(None),
        }
    }

    /// The NAD83 lon/lat extent of the layer: from `gpkg_contents`, else the
    /// R-tree, else the geometries. `None` when the layer has no geometry.
    pub fn bounds(&self, c: Collection) -> Result<Option<[f64; 4]>> {
        let layer = self.layer(c)?;
        let extent = |sql: &str, params: &[&str]| -> Result<Option<[f64; 4]>> {
            let row: [Option<f64>; 4] = self
                .conn
                .query_row(sql, rusqlite::params_from_iter(params), |r| {
                    Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?])
                })
                .map_err(|e| self.context(e.into()))?;
            Ok(match row {
                [Some(a), Some(b), Some(c), Some(d)]
                    if [a, b, c, d].iter().all(|v| v.is_finite()) =>
                {
                    Some([a, b, c, d])
                }
                _ => None,
            })
        };
        let mut found = extent(
            "SELECT min_x, min_y, max_x, max_y FROM gpkg_contents WHERE table_name = ?1 COLLATE NOCASE",
            &[&layer.table],
        )?;
        if let (None, Some(rtree)) = (found, &layer.rtree) {
            let sql = format!(
                "SELECT min(minx), min(miny), max(maxx), max(maxy) FROM {}",
                quote(rtree)
            );
            found = extent(&sql, &[])?;
        }
        if found.is_none() && layer.rtree.is_none() {
            let features = self.read_all(c)?;
            return Ok(crate::feature::bbox_of(&features));
        }
        match (found, &layer.to_lonlat) {
            (Some(b), Some(t)) => Ok(Some(t.bbox(b)?)),
            (b, _) => Ok(b),
        }
    }

    fn layer(&self, c: Collection) -> Result<&Layer> {
        match self.layers.get(&c) {
            Some(Ok(layer)) => Ok(layer),
            Some(Err(e)) => Err(e.clone()),
            None => Err(Error::Gpkg(format!(
                "{} has no {} layer (looked for {}).",
                self.path.display(),
                c.gpkg_names()[0],
                c.gpkg_names().join(", ")
            ))),
        }
    }

    fn context(&self, e: Error) -> Error {
        e.context(&self.path.display().to_string())
    }

    /// Runs a `layer.select()` query; with `filter`, only the rows whose
    /// geometry exists and passes it become features.
    fn query(
        &self,
        layer: &Layer,
        sql: &str,
        params: &[f64],
        filter: Option<&Filter>,
    ) -> Result<Vec<Feature>> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.context(e.into()))?;
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params.iter()))
            .map_err(|e| self.context(e.into()))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.context(e.into()))? {
            out.extend(self.feature(layer, row, filter)?);
        }
        Ok(out)
    }

    /// One row as a feature; with `filter`, `None` unless the geometry exists
    /// and passes it (attributes are only read for kept rows).
    fn feature(
        &self,
        layer: &Layer,
        row: &Row,
        filter: Option<&Filter>,
    ) -> Result<Option<Feature>> {
        let fid = row.get_ref(0).ok().and_then(integer);
        let geometry = self.geometry(layer, row, fid, filter)?;
        if let Some(filter) = filter {
            if !geometry
                .as_ref()
                .is_some_and(|g| g.intersects(&filter.rect))
            {
                return Ok(None);
            }
        }
        let mut properties = Properties::with_capacity(layer.attributes.len());
        for (i, name) in layer.attributes.iter().enumerate() {
            let v = row.get_ref(i + 2).map_err(|e| self.context(e.into()))?;
            properties
                .entry(name.to_ascii_lowercase())
                .or_insert_with(|| json(v));
        }
        Ok(Some(Feature {
            id: fid.map(Value::from),
            geometry,
            properties,
        }))
    }

    /// The row's geometry in NAD83 lon/lat (`None` for NULL or empty, and
    /// with `filter` when the blob's envelope is outside the box: the WKB of
    /// far-away features is never decoded).
    fn geometry(
        &self,
        layer: &Layer,
        row: &Row,
        fid: Option<i64>,
        filter: Option<&Filter>,
    ) -> Result<Option<Geometry<f64>>> {
        let where_ = || {
            format!(
                "{}: layer {}, feature {}",
                self.path.display(),
                layer.table,
                fid.unwrap_or(-1)
            )
        };
        let bytes = match row.get_ref(1).map_err(|e| self.context(e.into()))? {
            ValueRef::Null => return Ok(None),
            ValueRef::Blob(b) => b,
            _ => {
                return Err(Error::Gpkg(format!(
                    "{}: the geometry is not a blob.",
                    where_()
                )))
            }
        };
        if let Some(filter) = filter {
            let envelope = blob::header(bytes)
                .map_err(|e| e.context(&where_()))?
                .envelope;
            if !envelope.is_none_or(|e| filter.envelope_may_intersect(e)) {
                return Ok(None);
            }
        }
        let mut g = match blob::parse(bytes).map_err(|e| e.context(&where_()))? {
            Some(g) => g,
            None => return Ok(None),
        };
        if let Some(t) = &layer.to_lonlat {
            t.geometry(&mut g).map_err(|e| e.context(&where_()))?;
        }
        Ok(Some(g))
    }
}

/// The test of [`GeoPackage::read_bbox`]: the box in NAD83 lon/lat for the
/// exact intersection, and in the file's CRS for blob envelopes.
struct Filter {
    rect: Rect<f64>,
    file_bbox: [f64; 4],
}

impl Filter {
    /// False when the envelope `[minx, miny, maxx, maxy]` (file CRS) is
    /// disjoint from the box.
    fn envelope_may_intersect(&self, e: [f64; 4]) -> bool {
        let b = self.file_bbox;
        e[0] <= b[2] && e[2] >= b[0] && e[1] <= b[3] && e[3] >= b[1]
    }
}

/// Names of the feature tables listed in `gpkg_contents`.
fn feature_tables(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT table_name FROM gpkg_contents WHERE data_type = 'features' COLLATE NOCASE ORDER BY table_name",
    )?;
    let names = stmt.query_map([], |r| r.get(0))?.collect();
    names
}

/// The key column of a layer for [`GeoPackage::read_by_ids`], by preference.
fn key_columns(c: Collection) -> &'static [&'static str] {
    match c {
        Collection::Catchment => &["featureid", "nhdplusid", "comid"],
        Collection::Gage => &["flcomid", "comid"],
        _ => &["comid", "nhdplusid"],
    }
}

/// An SQLite value as an integer: integers, integral reals (R writes
/// `Hydroseq` as REAL) and numeric text.
fn integer(v: ValueRef) -> Option<i64> {
    match v {
        ValueRef::Integer(i) => Some(i),
        ValueRef::Real(f) => crate::feature::value_as_i64(&serde_json::Number::from_f64(f)?.into()),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// An SQLite value as JSON. Non-finite reals and blobs become null.
fn json(v: ValueRef) -> Value {
    match v {
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Null | ValueRef::Blob(_) => Value::Null,
    }
}
