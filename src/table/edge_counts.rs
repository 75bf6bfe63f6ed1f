//! The dissolve's table of edge counts: each undirected edge between two
//! exact vertices with its count of directions, for tens of millions of
//! edges that mostly cancel soon after they are added.
//!
//! Open addressing with linear probing over a slot array of at most half
//! load. A slot holds the top half of its edge's hash beside the edge's
//! index in an entry array, so a probe compares the 32-byte edge only when
//! those hash bits agree. An entry whose count falls to zero stays, and is
//! skipped; the entries are compacted when the slots fill up, so nothing is
//! ever removed from the middle of a probe sequence (no tombstones). Runs
//! of edges two polygons share are matched without hashing: the second
//! polygon walks the run in the opposite order, so each edge is predicted
//! to be the entry before the last one matched.

/// A point by the bits of its coordinates (`-0.0` read as `0.0`), so that
/// equal coordinates are equal keys.
pub(super) type Vertex = [u64; 2];

/// The point `(x, y)` as a [`Vertex`].
pub(super) fn vertex(x: f64, y: f64) -> Vertex {
    [(x + 0.0).to_bits(), (y + 0.0).to_bits()]
}

/// An undirected edge `[a, b]` with `a < b`.
pub(super) type Edge = [Vertex; 2];

/// The fewest slots a table that holds anything has.
const MIN_SLOTS: usize = 1024;

/// The low half of a slot: its entry's index plus one (zero: empty slot).
/// A table holds fewer than 2^32 entries: that many would take 160 GiB.
const INDEX_BITS: u64 = 0xffff_ffff;

/// Counts of undirected edges: +1 per `a -> b`, -1 per `b -> a` of each
/// edge `[a, b]`. Owns its two arrays; `clear` keeps their memory.
#[derive(Default)]
pub(super) struct EdgeCounts {
    /// Empty (0), or the hash's top 32 bits over the entry's index + 1.
    slots: Vec<u64>,
    entries: Vec<(Edge, i32)>,
    /// The entry the next edge is likely to match, plus one (0: none).
    ///
    /// Two polygons share a run of edges, which the second walks in the
    /// opposite order: after an edge matches entry `k`, the next one is
    /// likely entry `k - 1`, checked before any hashing.
    predicted: usize,
}

impl EdgeCounts {
    /// Counts `times` edges `p -> q`.
    pub fn add(&mut self, p: Vertex, q: Vertex, times: i32) {
        if p < q {
            self.add_edge([p, q], times);
        } else {
            self.add_edge([q, p], -times);
        }
    }

    /// Adds `delta` to the count of `edge` (`[a, b]` with `a < b`).
    pub fn add_edge(&mut self, edge: Edge, delta: i32) {
        if let Some(entry) = self.predicted.checked_sub(1).map(|k| &mut self.entries[k]) {
            if entry.0 == edge {
                entry.1 += delta;
                self.predicted -= 1;
                return;
            }
        }
        if 2 * (self.entries.len() + 1) > self.slots.len() {
            self.make_room(1);
        }
        let hash = hash(&edge);
        let tag = hash & !INDEX_BITS;
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                self.slots[at] = tag | (self.entries.len() as u64 + 1);
                self.entries.push((edge, delta));
                self.predicted = 0;
                return;
            }
            if slot & !INDEX_BITS == tag {
                let k = (slot & INDEX_BITS) as usize - 1;
                let entry = &mut self.entries[k];
                if entry.0 == edge {
                    entry.1 += delta;
                    self.predicted = k;
                    return;
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// Makes room for `more` new edges without growing in between.
    pub fn reserve(&mut self, more: usize) {
        if 2 * (self.entries.len() + more) > self.slots.len() {
            self.make_room(more);
        }
    }

    /// Drops the cancelled entries, then sizes the slots for the rest and
    /// `more` at a load of 3/8 at most (never fewer slots than now, so at
    /// least an eighth of them fill before the next rebuild), and rebuilds
    /// them.
    fn make_room(&mut self, more: usize) {
        self.predicted = 0;
        self.entries.retain(|e| e.1 != 0);
        let mut slots = self.slots.len().max(MIN_SLOTS);
        while 8 * (self.entries.len() + more) > 3 * slots {
            slots *= 2;
        }
        self.slots.clear();
        self.slots.resize(slots, 0);
        self.entries
            .reserve_exact((slots / 2).saturating_sub(self.entries.len()));
        let mask = slots - 1;
        for (i, (edge, _)) in self.entries.iter().enumerate() {
            let hash = hash(edge);
            let mut at = hash as usize & mask;
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = (hash & !INDEX_BITS) | (i as u64 + 1);
        }
    }

    /// The edges whose count is not zero, with their counts.
    pub fn iter(&self) -> impl Iterator<Item = (Edge, i32)> + '_ {
        self.entries.iter().copied().filter(|e| e.1 != 0)
    }

    /// Empties the table, keeping its memory. A table that held few edges
    /// for its slots leaves them to be sized again by its next use
    /// ([`EdgeCounts::make_room`]): one grown once for many edges then
    /// clears and refills for a few at the cost of a few.
    pub fn clear(&mut self) {
        self.predicted = 0;
        if 8 * self.entries.len() < self.slots.len() {
            self.slots.clear();
        } else {
            self.slots.fill(0);
        }
        self.entries.clear();
    }
}

/// A hash of the edge's four coordinate words: FxHash's step per word, then
/// SplitMix64's finalizer, so that every bit of the key reaches both halves
/// of the hash (coordinates often differ only in a few mantissa bits).
pub(super) fn hash(edge: &Edge) -> u64 {
    let [[a, b], [c, d]] = *edge;
    let mut h = 0u64;
    for word in [a, b, c, d] {
        h = (h.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn v(x: u64) -> Vertex {
        [x, x.wrapping_mul(7)]
    }

    /// The live counts, as a map, for comparison with plain arithmetic.
    fn live(t: &EdgeCounts) -> HashMap<Edge, i32> {
        t.iter().collect()
    }

    #[test]
    fn opposite_directions_cancel_and_the_rest_keep_their_sign() {
        let mut t = EdgeCounts::default();
        t.add(v(1), v(2), 1);
        t.add(v(2), v(1), 1);
        t.add(v(3), v(2), 1);
        t.add(v(3), v(2), 1);
        assert_eq!(live(&t), HashMap::from([([v(2), v(3)], -2)]));
    }

    #[test]
    fn counts_survive_growth_and_compaction_as_a_map_counts_them() {
        // A pseudo-random walk over few vertices: many repeats, many
        // cancellations, several growths and compactions.
        let (mut t, mut truth) = (EdgeCounts::default(), HashMap::new());
        let mut x = 12345u64;
        for _ in 0..200_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let (p, q) = (v(x >> 60), v((x >> 40) % 300));
            if p == q {
                continue;
            }
            t.add(p, q, 1);
            let (key, delta) = if p < q { ([p, q], 1) } else { ([q, p], -1) };
            *truth.entry(key).or_insert(0) += delta;
        }
        truth.retain(|_, c| *c != 0);
        assert_eq!(live(&t), truth);
    }

    #[test]
    fn a_run_walked_back_cancels_entry_by_entry_by_prediction() {
        // One polygon's boundary 0 -> 1 -> ... -> 6, then its neighbour's
        // walk of it backwards: every edge after the first is the entry
        // before the one the previous edge matched.
        let mut t = EdgeCounts::default();
        for i in 0..6 {
            t.add(v(i), v(i + 1), 1);
        }
        t.add(v(6), v(5), 1);
        assert_eq!(t.predicted, 5, "the next match expected at entry 4");
        for i in (0..5).rev() {
            t.add(v(i + 1), v(i), 1);
            assert_eq!(t.predicted, i as usize, "after entry {i}");
        }
        assert_eq!(t.iter().count(), 0);
        // A wrong prediction costs nothing but the comparison.
        t.add(v(1), v(2), 1);
        t.add(v(9), v(8), 1);
        assert_eq!(
            live(&t),
            HashMap::from([([v(1), v(2)], 1), ([v(8), v(9)], -1)])
        );
    }

    #[test]
    fn a_cleared_table_is_empty_and_fills_again() {
        let mut t = EdgeCounts::default();
        for i in 0..5000 {
            t.add(v(i), v(i + 1), 1);
        }
        t.clear();
        assert_eq!(t.iter().count(), 0);
        t.add(v(1), v(2), 1);
        assert_eq!(live(&t), HashMap::from([([v(1), v(2)], 1)]));
        // Few edges for many slots: the slots are sized again, and the
        // table counts as many as before.
        t.reserve(100_000);
        t.clear();
        assert_eq!(t.iter().count(), 0);
        for i in 0..5000 {
            t.add(v(i + 1), v(i), 1);
        }
        assert_eq!(t.iter().count(), 5000);
        assert!(t
            .iter()
            .all(|(edge, count)| count == -1 && edge[0] < edge[1]));
    }
}
