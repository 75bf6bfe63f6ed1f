//! What the page decoder (`decode`) keeps in a [`TableBuilder`] between
//! rows and pages: its own types, below both, so the builder holds them
//! without importing the decoder that fills it.
//!
//! [`TableBuilder`]: super::TableBuilder

/// How the decoder reads property keys.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum KeyMode {
    /// As checked strings, from any deserializer.
    #[default]
    Text,
    /// As serde_json's unchecked string bytes, which saves checking UTF-8
    /// of the predicted key ([`TableBuilder::key_bytes`](super::TableBuilder::key_bytes)).
    Bytes,
    /// Bytes met a key whose escapes decode to a control character. The
    /// bytes parse lets a raw control character through too, so only a
    /// text parse tells the two apart: the page is read again as text.
    Ambiguous,
}

/// One step of a coordinates array, recorded before the geometry's type is
/// known (members come in any order: serializers of sorted maps send
/// `coordinates` first).
#[derive(Debug, Clone, Copy)]
pub enum Step {
    Open,
    Close,
    Position(f64, f64),
}
