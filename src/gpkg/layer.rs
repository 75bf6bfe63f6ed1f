//! What a reader needs to know about one feature table of a GeoPackage: its
//! real (mixed-case) names, primary key, columns, spatial index and CRS.

use rusqlite::{Connection, OptionalExtension};

use crate::crs::Transformer;
use crate::{Error, Result};

/// The CRS every feature leaves the reader in.
const LONLAT: &str = "EPSG:4269";

/// One feature table, described once when the file is opened.
#[derive(Debug, Clone)]
pub(super) struct Layer {
    /// The table name as the file spells it.
    pub table: String,
    /// The geometry column as the file spells it.
    pub geom: String,
    /// The integer primary key (`fid`), or `rowid` when the table declares none.
    pub pk: String,
    /// Every column except the key and the geometry, as the file spells them.
    pub attributes: Vec<String>,
    /// The property columns a row becomes: (index in `attributes`, lower-case
    /// name), ordered by name; of names equal but for case, the first in the
    /// file. (The order of the sorted property maps this reader once built.)
    pub properties: Vec<(usize, String)>,
    /// The R-tree spatial index table, when the file has one.
    pub rtree: Option<String>,
    /// File CRS to NAD83 lon/lat; `None` when the file already is lon/lat.
    pub to_lonlat: Option<std::sync::Arc<Transformer>>,
    /// NAD83 lon/lat to the file CRS (for R-tree queries); `None` likewise.
    pub from_lonlat: Option<std::sync::Arc<Transformer>>,
}

impl Layer {
    /// Describes `table`, which `gpkg_contents` lists as a feature table.
    pub fn describe(conn: &Connection, table: &str) -> Result<Layer> {
        let (geom, srs_id): (String, i64) = conn
            .query_row(
                "SELECT column_name, srs_id FROM gpkg_geometry_columns WHERE table_name = ?1 COLLATE NOCASE",
                [table],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?
            .ok_or_else(|| {
                Error::Gpkg(format!("The layer {table} has no row in gpkg_geometry_columns."))
            })?;
        let mut pk = None;
        let mut attributes = Vec::new();
        let mut stmt = conn.prepare(&format!("PRAGMA table_info({})", quote(table)))?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let (name, kind, is_pk): (String, String, i64) =
                (row.get(1)?, row.get(2)?, row.get(5)?);
            if is_pk == 1 && kind.eq_ignore_ascii_case("INTEGER") {
                pk = Some(name);
            } else if !name.eq_ignore_ascii_case(&geom) {
                attributes.push(name);
            }
        }
        if attributes.is_empty() && pk.is_none() {
            return Err(Error::Gpkg(format!(
                "The layer {table} has no table of that name."
            )));
        }
        let rtree_name = format!("rtree_{table}_{geom}");
        let rtree = conn
            .query_row(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE",
                [&rtree_name],
                |r| r.get(0),
            )
            .optional()?;
        let source = source_crs(conn, srs_id)
            .map_err(|e| e.context(&format!("The layer {table} (srs_id {srs_id})")))?;
        let (to_lonlat, from_lonlat) = match source {
            None => (None, None),
            Some(crs) => {
                let to = Transformer::new(&crs, LONLAT)?;
                if to.is_noop() {
                    (None, None)
                } else {
                    (
                        Some(to.into()),
                        Some(Transformer::new(LONLAT, &crs)?.into()),
                    )
                }
            }
        };
        let properties = properties_of(&attributes);
        Ok(Layer {
            table: table.to_string(),
            geom,
            pk: pk.unwrap_or_else(|| "rowid".to_string()),
            attributes,
            properties,
            rtree,
            to_lonlat,
            from_lonlat,
        })
    }

    /// Keeps only the attributes named in `names` (case-insensitive): later
    /// selects read no other column.
    pub fn keep_attributes(&mut self, names: &[&str]) {
        self.attributes
            .retain(|a| names.iter().any(|n| a.eq_ignore_ascii_case(n)));
        self.properties = properties_of(&self.attributes);
    }

    /// The file's name of the first column matching one of `names`
    /// (case-insensitive), searching the attributes.
    pub fn column(&self, names: &[&str]) -> Option<&str> {
        names.iter().find_map(|n| {
            self.attributes
                .iter()
                .find(|a| a.eq_ignore_ascii_case(n))
                .map(String::as_str)
        })
    }

    /// Like [`Layer::column`], an `Error::Gpkg` naming the column when absent.
    pub fn require(&self, names: &[&str]) -> Result<&str> {
        self.column(names).ok_or_else(|| {
            Error::Gpkg(format!(
                "The layer {} has no column {}.",
                self.table,
                names.join(" or ")
            ))
        })
    }

    /// `SELECT pk, geom, attributes... FROM table` (no WHERE clause).
    pub fn select(&self) -> String {
        let mut cols = vec![quote(&self.pk), quote(&self.geom)];
        cols.extend(self.attributes.iter().map(|a| quote(a)));
        format!("SELECT {} FROM {}", cols.join(", "), quote(&self.table))
    }
}

/// The property columns of `attributes`: (index, lower-case name), ordered
/// by name; of names equal but for case, the first in the file.
fn properties_of(attributes: &[String]) -> Vec<(usize, String)> {
    let mut properties: Vec<(usize, String)> = attributes
        .iter()
        .map(|a| a.to_ascii_lowercase())
        .enumerate()
        .collect();
    properties.sort_by(|a, b| a.1.cmp(&b.1)); // stable: the first of equal names leads
    properties.dedup_by(|later, first| later.1 == first.1);
    properties
}

/// The name of an index on `table` whose leading columns are `columns`, in
/// order (names compared case-insensitively), if there is one.
pub(super) fn covering_index(
    conn: &Connection,
    table: &str,
    columns: &[impl AsRef<str>],
) -> rusqlite::Result<Option<String>> {
    let names: Vec<String> = conn
        .prepare(&format!("PRAGMA index_list({})", quote(table)))?
        .query_map([], |r| r.get(1))?
        .collect::<rusqlite::Result<_>>()?;
    for name in names {
        let indexed: Vec<Option<String>> = conn
            .prepare(&format!("PRAGMA index_info({})", quote(&name)))?
            .query_map([], |r| r.get(2))?
            .collect::<rusqlite::Result<_>>()?;
        let leads = indexed.len() >= columns.len()
            && columns.iter().zip(&indexed).all(|(want, have)| {
                have.as_deref()
                    .is_some_and(|h| h.eq_ignore_ascii_case(want.as_ref()))
            });
        if leads {
            return Ok(Some(name));
        }
    }
    Ok(None)
}

/// An SQL identifier in double quotes.
pub(super) fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The EPSG name of a layer's CRS from `gpkg_spatial_ref_sys`, or `None` when
/// it is longitude/latitude on a GRS 1980 / WGS 84 datum (what R writes as
/// custom ids such as 100000 "GRS 1980"), which we use as NAD83 unchanged.
fn source_crs(conn: &Connection, srs_id: i64) -> Result<Option<String>> {
    if srs_id == 0 {
        return Ok(None); // "Undefined geographic SRS": lon/lat by definition.
    }
    let (org, code, definition): (String, i64, String) = conn
        .query_row(
            "SELECT organization, organization_coordsys_id, definition FROM gpkg_spatial_ref_sys WHERE srs_id = ?1",
            [srs_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?
        .ok_or_else(|| Error::Crs("gpkg_spatial_ref_sys has no row for it.".to_string()))?;
    if org.eq_ignore_ascii_case("EPSG") {
        return Ok(Some(format!("EPSG:{code}")));
    }
    let wkt = definition.trim_start().to_ascii_uppercase();
    let geographic = ["GEOGCS[", "GEOGCRS[", "GEODCRS[", "GEOGRAPHICCRS["]
        .iter()
        .any(|p| wkt.starts_with(p));
    // EPSG, OGC and ESRI spellings (ESRI's WKT: `D_North_American_1983`
    // on `GRS_1980`, as ArcGIS writes NAD83).
    let lonlat_datum = [
        "GRS80",
        "GRS 1980",
        "GRS_1980",
        "NORTH_AMERICAN_1983",
        "WGS 84",
        "WGS_1984",
        "WGS84",
    ]
    .iter()
    .any(|d| wkt.contains(d));
    if geographic && lonlat_datum && wkt.contains("DEGREE") {
        return Ok(None);
    }
    match epsg_authority(&wkt) {
        Some(code) => Ok(Some(format!("EPSG:{code}"))),
        None => Err(Error::Crs(format!(
            "its CRS (organization {org}, id {code}) is neither longitude/latitude on NAD83/WGS 84 nor identified by an EPSG code"
        ))),
    }
}

/// The EPSG code of the outermost object of a WKT definition: the last
/// `AUTHORITY["EPSG","n"]` (WKT1) or `ID["EPSG",n]` (WKT2) in the text.
fn epsg_authority(wkt: &str) -> Option<u32> {
    let at = wkt
        .rfind("AUTHORITY[\"EPSG\"")
        .or_else(|| wkt.rfind("ID[\"EPSG\""))?;
    let rest = &wkt[at..];
    let rest = &rest[rest.find(',')? + 1..];
    let digits: String = rest
        .trim_start()
        .trim_start_matches('"')
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epsg_codes_come_from_the_outermost_authority() {
        let wkt = r#"PROJCS["NAD83 / Conus Albers",GEOGCS["NAD83",AUTHORITY["EPSG","4269"]],PROJECTION["Albers_Conic_Equal_Area"],AUTHORITY["EPSG","5070"]]"#;
        assert_eq!(epsg_authority(wkt), Some(5070));
        assert_eq!(
            epsg_authority(r#"PROJCRS["x",ID["EPSG",26916]]"#),
            Some(26916)
        );
        assert_eq!(epsg_authority("LOCAL_CS[\"x\"]"), None);
    }
}
