//! Upstream navigation over the flowline network's topology, computed
//! locally (the services offer no navigation in this flow).
//!
//! A flowline X drains directly into Y when `X.dnhydroseq == Y.hydroseq`;
//! the upstream set of an outlet is everything that reaches it that way.

/// The topology of one flowline: all navigation needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reach {
    pub comid: i64,
    pub hydroseq: i64,
    /// `hydroseq` of the flowline this one drains into; 0 at a terminal.
    pub dnhydroseq: i64,
    /// Strahler stream order; 0 when unknown.
    pub streamorder: i32,
}
