//! Helpers shared by integration tests (`mod support;`), read with plain
//! SQL so they check the library from outside.

use std::path::Path;

/// The names of the indexes on the flowline table of the GeoPackage at `path`.
pub fn index_names(path: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'NHDFlowline_Network' ORDER BY name")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}
