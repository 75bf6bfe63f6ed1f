//! The one error type of the core. The ffi layer maps each variant to a
//! `hydroplot_status` in one place (`ffi::status`).

use crate::cancel::Cancelled;

/// Everything that can go wrong in hydroplot. Messages are complete sentences
/// that name the input, service or file involved; they never contain credentials.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A bad value: unknown option or layer, bad direction, both or neither of
    /// outlets/bbox, a gpkg path without `.gpkg`, invalid UTF-8, ...
    #[error("{0}")]
    InvalidArgument(String),
    /// Unknown CRS or a coordinate that cannot be transformed.
    #[error("{0}")]
    Crs(String),
    /// Connect, DNS, TLS, timeout or a dropped connection, after retries.
    #[error("{0}")]
    Network(String),
    /// The service answered a non-success status, after retries.
    #[error("{message}")]
    Http { status: u16, message: String },
    /// The service or the local data has no such feature. `http_status` is 404
    /// when a service said so, 0 for local data or an empty result.
    #[error("{message}")]
    NotFound { http_status: u16, message: String },
    /// The service answered something that is not the expected document.
    #[error("{0}")]
    Service(String),
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(String),
    /// A GeoPackage is missing a required layer or column, or is malformed.
    #[error("{0}")]
    Gpkg(String),
    /// The output exists and overwrite is off.
    #[error("{0}")]
    Exists(String),
    /// The request would exceed `max_features` or another documented limit.
    #[error("{0}")]
    Limit(String),
    /// Drawing or PNG encoding failed, or a PNG of data that was not plotted.
    #[error("{0}")]
    Render(String),
    /// A bug, including a caught panic.
    #[error("{0}")]
    Internal(String),
    /// The call was cancelled (`Context::cancel`, `hydroplot_context_cancel`,
    /// an interrupt of the CLI or a binding) before it finished.
    #[error("{0}")]
    Cancelled(String),
}

impl Error {
    /// The HTTP status behind this error, 0 when none.
    pub fn http_status(&self) -> u16 {
        match self {
            Error::Http { status, .. } => *status,
            Error::NotFound { http_status, .. } => *http_status,
            _ => 0,
        }
    }

    /// A local "no such feature" error (no HTTP status).
    pub fn not_found(message: impl Into<String>) -> Error {
        Error::NotFound {
            http_status: 0,
            message: message.into(),
        }
    }

    /// The cancel when `stop` was cancelled, else this error: the failure of
    /// a call a cancel cut short (a wait for a file's lock, which SQLite
    /// ends as "locked") is that cancel.
    pub fn unless_cancelled(self, stop: &crate::cancel::Stop) -> Error {
        match stop.check() {
            Err(cancelled) => cancelled.into(),
            Ok(()) => self,
        }
    }

    /// Prefixes the message with `context: `, keeping the variant and status
    /// (a cancel's message stays as it is).
    pub fn context(self, context: &str) -> Error {
        let wrap = |m: String| format!("{context}: {m}");
        match self {
            Error::InvalidArgument(m) => Error::InvalidArgument(wrap(m)),
            Error::Crs(m) => Error::Crs(wrap(m)),
            Error::Network(m) => Error::Network(wrap(m)),
            Error::Http { status, message } => Error::Http {
                status,
                message: wrap(message),
            },
            Error::NotFound {
                http_status,
                message,
            } => Error::NotFound {
                http_status,
                message: wrap(message),
            },
            Error::Service(m) => Error::Service(wrap(m)),
            Error::Io(m) => Error::Io(wrap(m)),
            Error::Gpkg(m) => Error::Gpkg(wrap(m)),
            Error::Exists(m) => Error::Exists(wrap(m)),
            Error::Limit(m) => Error::Limit(wrap(m)),
            Error::Render(m) => Error::Render(wrap(m)),
            Error::Internal(m) => Error::Internal(wrap(m)),
            // A cancel is the caller's, not the input's: said as it is.
            Error::Cancelled(m) => Error::Cancelled(m),
        }
    }
}

impl From<Cancelled> for Error {
    fn from(_: Cancelled) -> Self {
        Error::Cancelled(Cancelled::MESSAGE.to_string())
    }
}

impl From<rusqlite::Error> for Error {
    /// SQLite's "interrupted" comes only from a connection's progress
    /// handler, which the library sets to watch a call's [`crate::cancel::Stop`];
    /// "database is locked" from its busy handler, once the call's lock
    /// timeout passed (or a cancel ended the wait: the callers that watch
    /// a stop report that as the cancel, [`Error::unless_cancelled`]).
    fn from(e: rusqlite::Error) -> Self {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::OperationInterrupted) => Cancelled.into(),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                Error::Gpkg(format!(
                    "the file is locked: another program holds SQLite's lock on it (a writer, \
                     such as QGIS saving edits or hydroplot index) and still held it when the \
                     wait allowed by the option lock_timeout_s (HYDROPLOT_LOCK_TIMEOUT_S) ended; \
                     try again once that program is done, or allow a longer wait ({e})"
                ))
            }
            _ => Error::Gpkg(format!("SQLite: {e}")),
        }
    }
}

/// The result type of the core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Builds an `Error::Io` naming the path.
pub fn io_error(path: &std::path::Path, e: std::io::Error) -> Error {
    Error::Io(format!("{}: {e}", path.display()))
}
