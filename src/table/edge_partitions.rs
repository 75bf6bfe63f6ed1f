//! What the dissolve's units leave: millions of edges, most of which cancel
//! against an edge another unit leaves, perhaps much later.
//!
//! One hash table of them all would be far larger than the cache, and each
//! edge moved into it would wait for memory twice (its slot, its entry).
//! Instead each edge is appended to a list, which is a write in order. A
//! list whose new edges reach the number it held after its last cancelling
//! (at least [`MIN_PENDING`]) has its edges counted in a table small enough
//! for the cache, and keeps only those whose count is not zero: so a list's
//! cancelling costs at most twice its new edges. A small basin's edges stay
//! in one list; once that list keeps more than [`SPREAD_AT`] edges, they are
//! spread over [`PARTITIONS`] lists chosen by hash. Equal edges have equal
//! hashes, so they always meet in the same list.

use super::edge_counts::{hash, Edge, EdgeCounts};

/// Lists the edges are spread over: enough that a list of the edges a
/// basin never cancels (a few million, in a basin whose catchments overlap)
/// is counted in cache.
const PARTITIONS: usize = 512;

/// New edges a list takes before it is cancelled, at the least: small
/// enough that all lists at once hold tens of megabytes.
const MIN_PENDING: usize = 1024;

/// Edges the one list of a small basin keeps, at most, before they are
/// spread over [`PARTITIONS`] lists.
const SPREAD_AT: usize = 4 * MIN_PENDING;

/// Edge counts in lists, one or [`PARTITIONS`] of them by hash, cancelled a
/// list at a time. Owns its lists and the table that counts them.
pub(super) struct EdgePartitions {
    parts: Vec<Partition>,
    /// Counts one list at a time; cleared between, its memory kept.
    table: EdgeCounts,
}

#[derive(Default)]
struct Partition {
    /// Edges `[a, b]` (`a < b`) with their counts; one edge may appear more
    /// than once until the list is cancelled.
    edges: Vec<(Edge, i32)>,
    /// The length at which the list is cancelled next.
    cancel_at: usize,
}

impl Default for EdgePartitions {
    fn default() -> Self {
        EdgePartitions {
            parts: vec![Partition::default()],
            table: EdgeCounts::default(),
        }
    }
}

impl EdgePartitions {
    /// Adds `count` to the count of `edge` (`[a, b]` with `a < b`).
    pub fn add(&mut self, edge: Edge, count: i32) {
        let at = self.partition_of(&edge);
        let part = &mut self.parts[at];
        part.edges.push((edge, count));
        if part.edges.len() >= part.cancel_at.max(MIN_PENDING) {
            cancel(part, &mut self.table);
            if self.parts.len() == 1 && self.parts[0].edges.len() > SPREAD_AT {
                self.spread();
            }
        }
    }

    /// The list of `edge`: the top bits of its hash (the table that counts
    /// a list places edges by the low bits), or the only list.
    fn partition_of(&self, edge: &Edge) -> usize {
        let bits = self.parts.len().trailing_zeros();
        hash(edge).checked_shr(64 - bits).unwrap_or(0) as usize
    }

    /// Spreads the edges of the one list, just cancelled, over
    /// [`PARTITIONS`] lists.
    fn spread(&mut self) {
        let edges = std::mem::take(&mut self.parts[0].edges);
        self.parts = (0..PARTITIONS).map(|_| Partition::default()).collect();
        for (edge, count) in edges {
            let at = self.partition_of(&edge);
            self.parts[at].edges.push((edge, count));
        }
        for part in &mut self.parts {
            part.cancel_at = 2 * part.edges.len();
        }
    }

    /// Moves every count of `counts` into these, leaving `counts` empty
    /// with its memory kept.
    pub fn take_from(&mut self, counts: &mut EdgeCounts) {
        for (edge, count) in counts.iter() {
            self.add(edge, count);
        }
        counts.clear();
    }

    /// Exchanges the table the lists are cancelled in, empty between
    /// cancellings, with `table` ([`super::dissolve::Dissolver::swap_scratch`]).
    pub fn swap_table(&mut self, table: &mut EdgeCounts) {
        std::mem::swap(&mut self.table, table);
    }

    /// Moves every count of `other` into these.
    pub fn append(&mut self, other: EdgePartitions) {
        for part in other.parts {
            for (edge, count) in part.edges {
                self.add(edge, count);
            }
        }
    }

    /// The edges whose count is not zero, directed by its sign (`[a, b]`
    /// when positive, `[b, a]` when negative), each as many times as its
    /// count says. Each list is freed once it is read.
    pub fn into_directed(mut self) -> Vec<Edge> {
        let mut directed = Vec::new();
        for part in &mut self.parts {
            cancel(part, &mut self.table);
            for ([a, b], count) in std::mem::take(&mut part.edges) {
                let edge = if count > 0 { [a, b] } else { [b, a] };
                directed.extend(std::iter::repeat_n(edge, count.unsigned_abs() as usize));
            }
        }
        directed
    }
}

/// Sums the counts of each edge of `part` and keeps those not zero, each
/// once; the list is cancelled again when it has taken as many new edges.
fn cancel(part: &mut Partition, table: &mut EdgeCounts) {
    if part.edges.len() > 1 {
        table.reserve(part.edges.len());
        for &(edge, count) in &part.edges {
            table.add_edge(edge, count);
        }
        part.edges.clear();
        part.edges.extend(table.iter());
        table.clear();
    }
    part.cancel_at = 2 * part.edges.len();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The counts `directed` edges add up to, as a map.
    fn counted(directed: Vec<Edge>) -> HashMap<Edge, i32> {
        let mut counts = HashMap::new();
        for [p, q] in directed {
            let (key, delta) = if p < q { ([p, q], 1) } else { ([q, p], -1) };
            *counts.entry(key).or_default() += delta;
        }
        counts
    }

    fn edge(i: u64) -> Edge {
        [[i, i.wrapping_mul(7)], [i + 1, i.wrapping_mul(7) + 3]]
    }

    #[test]
    fn counts_cancel_across_partitions_appends_and_late_arrivals_as_a_map_sums_them() {
        // Many more edges than one list takes before cancelling, each
        // counted +1 early and -1 much later, and a few that never cancel;
        // half of them arrive through a second set appended.
        let (mut parts, mut other) = (EdgePartitions::default(), EdgePartitions::default());
        let mut truth: HashMap<Edge, i32> = HashMap::new();
        let n = 3 * PARTITIONS as u64 * MIN_PENDING as u64 / 2;
        for i in 0..n {
            parts.add(edge(i), 1);
            *truth.entry(edge(i)).or_default() += 1;
        }
        assert_eq!(parts.parts.len(), PARTITIONS, "spread once many are kept");
        for i in (0..n).rev().filter(|i| i % 1000 != 0) {
            let into = if i % 2 == 0 { &mut parts } else { &mut other };
            into.add(edge(i), -1);
            *truth.entry(edge(i)).or_default() -= 1;
        }
        other.add(edge(7), 2);
        *truth.entry(edge(7)).or_default() += 2;
        parts.append(other);
        truth.retain(|_, c| *c != 0);

        let directed = parts.into_directed();
        let copies: i32 = truth.values().map(|c| c.abs()).sum();
        assert_eq!(
            directed.len(),
            copies as usize,
            "each edge as often as counted"
        );
        assert_eq!(counted(directed), truth);
    }

    #[test]
    fn a_table_moved_in_is_left_empty_and_its_counts_kept() {
        let mut counts = EdgeCounts::default();
        counts.add_edge(edge(1), 1);
        counts.add_edge(edge(2), -3);
        let mut parts = EdgePartitions::default();
        parts.take_from(&mut counts);
        assert_eq!(counts.iter().count(), 0);
        assert_eq!(parts.parts.len(), 1, "a few edges stay in one list");
        let directed = parts.into_directed();
        let [a, b] = edge(2);
        assert_eq!(
            directed.iter().filter(|&&e| e == [b, a]).count(),
            3,
            "reversed"
        );
        assert_eq!(
            counted(directed),
            HashMap::from([(edge(1), 1), (edge(2), -3)])
        );
    }
}
