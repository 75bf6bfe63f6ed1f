//! Point files for batches: many points, each with columns of its own (a
//! site id, a name) that the results carry, read from a CSV with `lon,lat`
//! columns (RFC 4180) or a GeoJSON FeatureCollection of Points; and the CSV
//! text the batch results are written as.
//!
//! The coordinates stay in the file's CRS: the batch that uses them
//! transforms them. Everything here is read whole into memory (a file of a
//! hundred thousand points is a few megabytes).

use crate::error::io_error;
use crate::{Error, Result};
use serde_json::{Map, Value};
use std::path::Path;

/// The names a CSV's x column may have (case-insensitive); `lon` first.
const X_NAMES: [&str; 3] = ["lon", "longitude", "x"];
/// The names a CSV's y column may have (case-insensitive); `lat` first.
const Y_NAMES: [&str; 3] = ["lat", "latitude", "y"];

/// Column names the batch outputs add; a carried column may not use them.
pub const RESERVED: [&str; 3] = ["point_index", "comid", "error"];

/// The points of a file and the columns they carry. Owned; immutable once read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PointFile {
    /// The carried columns, in file order (a GeoJSON's property names in
    /// first-seen order): every CSV column but the coordinates.
    pub columns: Vec<String>,
    /// Each point's `(x, y)` in the file's CRS, in file order.
    pub points: Vec<(f64, f64)>,
    /// Each point's values, one per column: CSV fields as JSON strings (their
    /// text kept), GeoJSON properties as they are, null where absent.
    pub values: Vec<Vec<Value>>,
}

impl PointFile {
    /// Reads `path`: GeoJSON when its name ends in `.geojson` or `.json` or
    /// its first non-blank byte is `{`, else CSV. Errors name the file and
    /// the line or feature.
    pub fn read(path: &Path) -> Result<PointFile> {
        let bytes = std::fs::read(path).map_err(|e| io_error(path, e))?;
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let geojson = ["geojson", "json"]
            .iter()
            .any(|g| ext.eq_ignore_ascii_case(g))
            || bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        let parsed = if geojson {
            PointFile::from_geojson(&bytes)
        } else {
            std::str::from_utf8(&bytes)
                .map_err(|e| Error::InvalidArgument(format!("it is not UTF-8 text ({e})")))
                .and_then(PointFile::from_csv)
        };
        parsed.map_err(|e| e.context(&format!("The point file {}", path.display())))
    }

    /// Parses CSV text: a header naming a `lon` (or `longitude`, `x`) and a
    /// `lat` (or `latitude`, `y`) column, the first name of each list that
    /// the header has winning (`x,y,lon,lat`: lon and lat, x and y carried;
    /// a winning name twice is an error), then one point per record. Blank
    /// lines are skipped; a record with another number of fields, or a
    /// coordinate that is not a finite number, is an error naming its line.
    pub fn from_csv(text: &str) -> Result<PointFile> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut records = csv_records(text);
        let (_, header) = records
            .next()
            .transpose()?
            .ok_or_else(|| bad("it is empty: a CSV needs a header with lon and lat"))?;
        let (Some(xi), Some(yi)) = (column_of(&header, &X_NAMES)?, column_of(&header, &Y_NAMES)?)
        else {
            return Err(bad(&format!(
                "its header {header:?} has no lon and lat (or x and y) columns"
            )));
        };
        let carried: Vec<usize> = (0..header.len()).filter(|&i| i != xi && i != yi).collect();
        let mut out = PointFile {
            columns: carried.iter().map(|&i| header[i].clone()).collect(),
            ..PointFile::default()
        };
        check_names(&out.columns)?;
        for record in records {
            let (line, fields) = record?;
            if fields.len() != header.len() {
                return Err(bad(&format!(
                    "line {line} has {} fields, the header {}",
                    fields.len(),
                    header.len()
                )));
            }
            let number = |i: usize| {
                let v = fields[i].trim();
                v.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| {
                        bad(&format!(
                            "line {line}: {} {v:?} is not a finite number",
                            header[i]
                        ))
                    })
            };
            out.points.push((number(xi)?, number(yi)?));
            out.values.push(
                carried
                    .iter()
                    .map(|&i| Value::String(fields[i].clone()))
                    .collect(),
            );
        }
        Ok(out)
    }

    /// Parses a GeoJSON FeatureCollection whose features are Points; their
    /// properties are the carried columns.
    pub fn from_geojson(bytes: &[u8]) -> Result<PointFile> {
        let doc: Value =
            serde_json::from_slice(bytes).map_err(|e| bad(&format!("it is not JSON ({e})")))?;
        let features = (doc.get("type").and_then(Value::as_str) == Some("FeatureCollection"))
            .then(|| doc.get("features").and_then(Value::as_array))
            .flatten()
            .ok_or_else(|| bad("it is not a GeoJSON FeatureCollection"))?;
        let mut out = PointFile::default();
        let mut properties: Vec<&Map<String, Value>> = Vec::new();
        for (i, f) in features.iter().enumerate() {
            let g = f.get("geometry").unwrap_or(&Value::Null);
            let xy = (g.get("type").and_then(Value::as_str) == Some("Point"))
                .then(|| g.get("coordinates").and_then(Value::as_array))
                .flatten()
                .and_then(|c| Some((c.first()?.as_f64()?, c.get(1)?.as_f64()?)))
                .ok_or_else(|| bad(&format!("feature {i} is not a Point with coordinates")))?;
            out.points.push(xy);
            let props = f.get("properties").and_then(Value::as_object);
            for k in props.into_iter().flat_map(Map::keys) {
                if !out.columns.contains(k) {
                    out.columns.push(k.clone());
                }
            }
            static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
            properties.push(props.unwrap_or_else(|| EMPTY.get_or_init(Map::new)));
        }
        check_names(&out.columns)?;
        out.values = properties
            .iter()
            .map(|p| {
                (out.columns.iter())
                    .map(|c| p.get(c).cloned().unwrap_or(Value::Null))
                    .collect()
            })
            .collect();
        Ok(out)
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// True when the file has no point.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Adds point `i`'s `point_index` (0-based) and carried columns to `properties`.
    pub fn annotate(&self, i: usize, properties: &mut Map<String, Value>) {
        properties.insert("point_index".into(), Value::from(i));
        for (c, v) in self.columns.iter().zip(&self.values[i]) {
            properties.insert(c.clone(), v.clone());
        }
    }

    /// The CSV header `point_index,<carried columns>,<extra>`.
    pub fn csv_header(&self, extra: &[&str]) -> String {
        let names = ["point_index"]
            .into_iter()
            .chain(self.columns.iter().map(String::as_str))
            .chain(extra.iter().copied());
        csv_record(names)
    }

    /// The CSV record of point `i`: its index, its carried values as text,
    /// then `extra`.
    pub fn csv_row(&self, i: usize, extra: &[&str]) -> String {
        let carried: Vec<String> = self.values[i].iter().map(csv_text).collect();
        let index = i.to_string();
        let fields = [index.as_str()]
            .into_iter()
            .chain(carried.iter().map(String::as_str))
            .chain(extra.iter().copied());
        csv_record(fields)
    }
}

/// The column of `header` named by the first of `names` (in any case,
/// spaces around ignored) that it has; a header with that name twice is
/// an error, since either column could be meant.
fn column_of(header: &[String], names: &[&str]) -> Result<Option<usize>> {
    for name in names {
        let mut named = (header.iter().enumerate())
            .filter(|(_, h)| h.trim().eq_ignore_ascii_case(name))
            .map(|(i, _)| i);
        if let Some(first) = named.next() {
            if named.next().is_some() {
                return Err(bad(&format!(
                    "its header {header:?} has two {name} columns"
                )));
            }
            return Ok(Some(first));
        }
    }
    Ok(None)
}

fn bad(why: &str) -> Error {
    Error::InvalidArgument(format!("{why}."))
}

fn check_names(columns: &[String]) -> Result<()> {
    match columns
        .iter()
        .find(|c| RESERVED.iter().any(|r| c.trim().eq_ignore_ascii_case(r)))
    {
        Some(c) => Err(bad(&format!(
            "its column {c:?} has a name the results use ({}); rename it",
            RESERVED.join(", ")
        ))),
        None => Ok(()),
    }
}

/// A value as CSV text: strings as they are, null as nothing, other JSON as JSON.
fn csv_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One CSV record (RFC 4180) ending in `\n`: a field with a comma, a quote
/// or a line break is quoted, its quotes doubled.
pub fn csv_record<'a>(fields: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for (i, f) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if f.contains([',', '"', '\n', '\r']) {
            out.push('"');
            out.push_str(&f.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(f);
        }
    }
    out.push('\n');
    out
}

/// The records of CSV text (RFC 4180: quoted fields may hold commas, line
/// breaks and doubled quotes; `\r\n` or `\n` ends a record), each with the
/// line it starts on; blank lines are skipped. An unclosed quote is an error.
fn csv_records(text: &str) -> impl Iterator<Item = Result<(usize, Vec<String>)>> + '_ {
    let mut chars = text.chars().peekable();
    let mut line = 1;
    std::iter::from_fn(move || loop {
        chars.peek()?;
        let start = line;
        let mut fields = vec![String::new()];
        let mut quoted = false;
        while let Some(c) = chars.next() {
            let field = fields.last_mut().expect("a record has a field");
            match c {
                '"' if quoted && chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' if quoted => quoted = false,
                '"' if field.is_empty() => quoted = true,
                ',' if !quoted => fields.push(String::new()),
                '\r' if !quoted && chars.peek() == Some(&'\n') => {}
                '\n' if !quoted => {
                    line += 1;
                    break;
                }
                c => {
                    if c == '\n' {
                        line += 1;
                    }
                    field.push(c);
                }
            }
        }
        if quoted {
            return Some(Err(bad(&format!(
                "the quoted field that starts on line {start} is never closed"
            ))));
        }
        if fields.len() == 1 && fields[0].trim().is_empty() {
            continue;
        }
        return Some(Ok((start, fields)));
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_quotes_line_breaks_and_carried_text() {
        let text = "id,name,lat,lon\r\n007,\"Smith, \"\"Jr\"\" well\",42.9,-89.2\r\n\n\
                    8,\"two\nlines\",43.0,-89.3\n";
        let f = PointFile::from_csv(text).unwrap();
        assert_eq!(f.columns, ["id", "name"]);
        assert_eq!(f.points, [(-89.2, 42.9), (-89.3, 43.0)]);
        assert_eq!(
            f.values[0],
            [Value::from("007"), Value::from("Smith, \"Jr\" well")]
        );
        assert_eq!(f.values[1][1], Value::from("two\nlines"));
        assert_eq!(f.csv_header(&["comid"]), "point_index,id,name,comid\n");
        assert_eq!(
            f.csv_row(0, &["13293970"]),
            "0,007,\"Smith, \"\"Jr\"\" well\",13293970\n"
        );
        assert_eq!(f.csv_row(1, &[""]), "1,8,\"two\nlines\",\n");
    }

    #[test]
    fn csv_errors_name_the_line() {
        let e = |t: &str| PointFile::from_csv(t).unwrap_err().to_string();
        assert!(e("lon,lat\n1,2\n3\n").contains("line 3 has 1 fields"));
        assert!(e("lon,lat\n1,north\n").contains("line 2: lat \"north\""));
        assert!(e("lon,lat\n1,NaN\n").contains("not a finite number"));
        assert!(e("a,b\n1,2\n").contains("no lon and lat"));
        assert!(e("lon,lat,comid\n1,2,3\n").contains("\"comid\""));
        assert!(e("lon,lat,name\n1,2,\"open\n").contains("line 2 is never closed"));
        assert!(e("").contains("empty"));
    }

    #[test]
    fn lon_and_lat_win_over_x_and_y_and_a_name_twice_is_refused() {
        let f = PointFile::from_csv("x,y,LON,Lat\n1,2,-89.4,43.1\n").unwrap();
        assert_eq!(f.points, [(-89.4, 43.1)]);
        assert_eq!(f.columns, ["x", "y"]);
        let f = PointFile::from_csv("y,longitude,x,latitude\n1,-89.4,3,43.1\n").unwrap();
        assert_eq!(f.points, [(-89.4, 43.1)]);
        let e = PointFile::from_csv("lon,lon,lat\n1,2,3\n").unwrap_err();
        assert!(e.to_string().contains("two lon columns"), "{e}");
    }

    #[test]
    fn a_file_that_is_not_utf8_is_named() {
        let path =
            std::env::temp_dir().join(format!("hydroplot-latin1-{}.csv", std::process::id()));
        std::fs::write(&path, b"lon,lat,name\n1,2,Jos\xe9\n").unwrap();
        let e = PointFile::read(&path).unwrap_err().to_string();
        std::fs::remove_file(&path).unwrap();
        assert!(
            e.contains(&*path.to_string_lossy()) && e.contains("UTF-8"),
            "{e}"
        );
    }

    #[test]
    fn geojson_points_carry_their_properties() {
        let doc = br#"{"type":"FeatureCollection","features":[
            {"type":"Feature","geometry":{"type":"Point","coordinates":[-89.2,42.9]},"properties":{"id":7}},
            {"type":"Feature","geometry":{"type":"Point","coordinates":[-89.3,43.0]},"properties":{"site":"a","id":8}}]}"#;
        let f = PointFile::from_geojson(doc).unwrap();
        assert_eq!(f.columns, ["id", "site"]);
        assert_eq!(f.values[0], [Value::from(7), Value::Null]);
        let mut props = Map::new();
        f.annotate(1, &mut props);
        assert_eq!(
            Value::Object(props),
            serde_json::json!({"point_index": 1, "id": 8, "site": "a"})
        );
        let line = br#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]},"properties":{}}]}"#;
        assert!(PointFile::from_geojson(line)
            .unwrap_err()
            .to_string()
            .contains("feature 0 is not a Point"));
    }
}
