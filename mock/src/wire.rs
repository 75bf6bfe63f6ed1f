//! What the mock's router and its endpoints exchange: a parsed request and
//! the answer to it. Both the router (`http`) and the endpoint modules use
//! these types, so none of them needs the other's file.

use serde_json::{json, Value};

/// A parsed request.
pub(crate) struct Request {
    pub method: String,
    /// Percent-decoded path.
    pub path: String,
    /// Raw query string.
    pub raw_query: String,
    /// Decoded query pairs in order.
    pub query: Vec<(String, String)>,
    /// Header names (lower-case) and values, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The first query parameter named `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The first header named `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The media type of the body, without parameters (`; charset=...`).
    pub fn media_type(&self) -> Option<&str> {
        self.header("content-type")
            .map(|v| v.split(';').next().unwrap_or("").trim())
    }

    /// `Err` with a 400 answer naming the first query parameter not in `allowed`.
    pub fn only_params(&self, allowed: &dyn Fn(&str) -> bool) -> Result<(), Reply> {
        match self.query.iter().find(|(k, _)| !allowed(k)) {
            Some((k, _)) => Err(Reply::ogc_error(
                400,
                "InvalidParameterValue",
                format!("unknown query parameter {k:?} on {}", self.path),
            )),
            None => Ok(()),
        }
    }

    /// `Err` with a 415 answer unless the body's media type is `wanted`.
    pub fn body_of_type(&self, wanted: &str) -> Result<(), Reply> {
        match self.media_type() {
            Some(t) if t.eq_ignore_ascii_case(wanted) => Ok(()),
            other => Err(Reply::ogc_error(
                415,
                "InvalidParameterValue",
                format!(
                    "{} takes a body of type {wanted}, not {}",
                    self.path,
                    other.unwrap_or("(no Content-Type)")
                ),
            )),
        }
    }
}

/// An answer.
pub(crate) struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    /// A JSON answer.
    pub fn json(status: u16, content_type: &'static str, value: &Value) -> Reply {
        Reply::json_bytes(status, content_type, value.to_string().into_bytes())
    }

    /// A JSON answer already serialized.
    pub fn json_bytes(status: u16, content_type: &'static str, body: Vec<u8>) -> Reply {
        Reply {
            status,
            content_type,
            headers: Vec::new(),
            body,
        }
    }

    /// An error in the index service's style: `{"type":"error","description":...}`.
    pub fn error(status: u16, description: impl Into<String>) -> Reply {
        Reply::json(
            status,
            "application/json",
            &json!({"type": "error", "description": description.into()}),
        )
    }

    /// An error in pygeoapi's style: `{"code":...,"description":...}`.
    pub fn ogc_error(status: u16, code: &str, description: impl Into<String>) -> Reply {
        Reply::json(
            status,
            "application/json",
            &json!({"code": code, "description": description.into()}),
        )
    }
}
