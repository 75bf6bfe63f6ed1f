//! The flowline network as one blob: every reach's comid, hydroseq,
//! dnhydroseq and stream order, in the order [`GeoPackage::read_topology`]
//! gives them, and the reach it drains into, stored beside the basin parts
//! by `hydroplot index` and kept current by the same triggers, so that a
//! plot of a national file reads a few megabytes in one step instead of
//! stepping through a million rows and joining them.
//!
//! Format ([`MAGIC`]): 8 bytes of magic, then the header (little-endian
//! u64s: the reaches `n`, the upstream links `m`, flags: bit 0 set when no
//! comid repeats), then four sections, little-endian:
//! - per reach the comid, hydroseq and dnhydroseq (i64), the stream order
//!   (i32) and the index of the reach it drains into (i64, -1 for none);
//! - the upstream adjacency as compressed rows: `n + 1` offsets (u32), then
//!   the `m` reaches draining into each reach (u32), in index order;
//! - the reach indexes (u32) sorted by comid, then index: a comid's first
//!   reach is found by a binary search.
//!
//! A plot navigates it in place (`stored_upstream.rs`), reading the pages
//! its basin touches; `hydroplot index` and a plot without a basin decode
//! it whole ([`decode`]). Release 0.2 stored the reach records alone after
//! the magic `hpreach1` in a user's file: [`decode`] still reads them.
//!
//! [`GeoPackage::read_topology`]: super::GeoPackage::read_topology

use crate::network::{Network, Reach};

/// The table of the basin parts this library stores (the index file's, and
/// release 0.2's inside a user's file).
pub const BASIN_PARTS: &str = "hydroplot_basin_parts";

/// The name of the topology index release 0.2 made in a user's file.
pub const TOPOLOGY_INDEX: &str = "hydroplot_topology";

/// The table of the blob, one row, one column `reaches`.
pub(super) const BASIN_NETWORK: &str = "hydroplot_basin_network";

/// The blob's first bytes: its format and version.
const MAGIC: &[u8; 8] = b"hpreach2";

/// The magic of release 0.2's blob: the reach records alone.
const MAGIC_0_2: &[u8; 8] = b"hpreach1";

/// Bytes per reach record.
pub(super) const REACH_BYTES: usize = 8 + 8 + 8 + 4 + 8;

/// Bytes of the header after the magic.
const HEADER_BYTES: usize = 3 * 8;

/// Bytes per reach of the blob at most: its record, its offset, its index
/// in the comid order and one upstream link.
const BYTES_PER_REACH: usize = REACH_BYTES + 3 * 4;

/// The longest blob SQLite stores (its default `SQLITE_MAX_LENGTH`).
const MAX_BYTES: usize = 1_000_000_000;

/// Whether the network of `reaches` reaches fits in one blob (up to about
/// 20 million).
pub(super) fn fits(reaches: usize) -> bool {
    reaches.saturating_mul(BYTES_PER_REACH) <= MAX_BYTES - MAGIC.len() - HEADER_BYTES - 4
}

/// Where each section of a blob of [`encode`] lies: byte offsets in the
/// blob, from its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Layout {
    /// The reaches.
    pub(super) n: usize,
    /// The upstream links.
    m: usize,
    /// Whether no comid repeats.
    pub(super) unique_comids: bool,
}

impl Layout {
    /// The layout of the blob that begins with `head` (at least
    /// [`Layout::HEAD`] bytes) and is `len` bytes long; `None` when it is
    /// not a blob of [`encode`].
    pub(super) fn read(head: &[u8], len: usize) -> Option<Layout> {
        let header = head.strip_prefix(MAGIC)?;
        let u64_at = |at: usize| -> Option<usize> {
            let bytes = header.get(at..at + 8)?.try_into().ok()?;
            usize::try_from(u64::from_le_bytes(bytes)).ok()
        };
        let (n, m, flags) = (u64_at(0)?, u64_at(8)?, u64_at(16)?);
        let layout = Layout {
            n,
            m,
            unique_comids: flags & 1 == 1,
        };
        (fits(n) && m <= n && layout.len() == len).then_some(layout)
    }

    /// The bytes [`Layout::read`] needs.
    pub(super) const HEAD: usize = 8 + HEADER_BYTES;

    /// The offset of reach `i`'s record.
    pub(super) fn reach(&self, i: usize) -> usize {
        Self::HEAD + i * REACH_BYTES
    }

    /// The offset of the `i`th upstream offset (u32).
    pub(super) fn first(&self, i: usize) -> usize {
        self.reach(self.n) + i * 4
    }

    /// The offset of the `k`th upstream link (u32).
    pub(super) fn upstream(&self, k: usize) -> usize {
        self.first(self.n + 1) + k * 4
    }

    /// The offset of the `k`th reach index in comid order (u32).
    pub(super) fn by_comid(&self, k: usize) -> usize {
        self.upstream(self.m) + k * 4
    }

    /// The blob's length.
    fn len(&self) -> usize {
        self.by_comid(self.n)
    }
}

/// The reach and the index of the reach it drains into (`None` at a
/// terminal, stored as -1) of the record `b` ([`REACH_BYTES`] bytes);
/// `None` when the index is another negative number.
pub(super) fn reach_record(b: &[u8]) -> Option<(Reach, Option<usize>)> {
    let i64_at = |at: usize| i64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    let reach = Reach {
        comid: i64_at(0),
        hydroseq: i64_at(8),
        dnhydroseq: i64_at(16),
        streamorder: i32::from_le_bytes(b[24..28].try_into().expect("4 bytes")),
    };
    let downstream = match i64_at(28) {
        -1 => None,
        d => Some(usize::try_from(d).ok()?),
    };
    Some((reach, downstream))
}

/// The reach records of a blob of [`encode`] or of release 0.2; `None`
/// when it is neither.
fn records(blob: &[u8]) -> Option<&[u8]> {
    let body = match blob.strip_prefix(MAGIC_0_2) {
        Some(body) => body,
        None => {
            let layout = Layout::read(blob, blob.len())?;
            &blob[layout.reach(0)..layout.reach(layout.n)]
        }
    };
    (body.len() % REACH_BYTES == 0).then_some(body)
}

/// `reaches` and their `network` as the blob.
pub(super) fn encode(reaches: &[Reach], network: &Network) -> Vec<u8> {
    let n = reaches.len();
    let index = |i: usize| u32::try_from(i).expect("a network that fits has u32 indexes");
    // Sorted by (comid, index): unique keys, so an unstable sort of the
    // pairs themselves, in memory order.
    let mut by_comid: Vec<(i64, u32)> = (reaches.iter().enumerate())
        .map(|(i, r)| (r.comid, index(i)))
        .collect();
    by_comid.sort_unstable();
    let unique = by_comid.windows(2).all(|w| w[0].0 != w[1].0);
    let m: usize = (0..n).map(|i| network.upstream_of(i).len()).sum();
    let layout = Layout {
        n,
        m,
        unique_comids: unique,
    };
    let mut blob = Vec::with_capacity(layout.len());
    blob.extend_from_slice(MAGIC);
    for v in [n, m, usize::from(unique)] {
        blob.extend_from_slice(&(v as u64).to_le_bytes());
    }
    for (r, d) in reaches.iter().zip(network.downstream()) {
        blob.extend_from_slice(&r.comid.to_le_bytes());
        blob.extend_from_slice(&r.hydroseq.to_le_bytes());
        blob.extend_from_slice(&r.dnhydroseq.to_le_bytes());
        blob.extend_from_slice(&r.streamorder.to_le_bytes());
        let d = d.map_or(-1, |d| i64::try_from(d).expect("an index fits i64"));
        blob.extend_from_slice(&d.to_le_bytes());
    }
    let mut first = 0;
    blob.extend_from_slice(&0u32.to_le_bytes());
    for i in 0..n {
        first += network.upstream_of(i).len();
        blob.extend_from_slice(&index(first).to_le_bytes());
    }
    for i in 0..n {
        for &u in network.upstream_of(i) {
            blob.extend_from_slice(&index(u).to_le_bytes());
        }
    }
    for (_, i) in by_comid {
        blob.extend_from_slice(&i.to_le_bytes());
    }
    debug_assert_eq!(blob.len(), layout.len());
    blob
}

/// The reaches and their network of a blob of [`encode`] (or of release
/// 0.2); `None` when it is not one.
pub(super) fn decode(blob: &[u8]) -> Option<(Vec<Reach>, Network)> {
    let body = records(blob)?;
    let n = body.len() / REACH_BYTES;
    let (mut reaches, mut downstream) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for b in body.chunks_exact(REACH_BYTES) {
        let (reach, d) = reach_record(b)?;
        reaches.push(reach);
        downstream.push(d);
    }
    let network = Network::with_downstream(&reaches, &downstream)?;
    Some((reaches, network))
}

/// The comids of a blob of [`encode`] (or of release 0.2), in order,
/// without decoding the rest; `None` when it is not one.
pub(super) fn comids(blob: &[u8]) -> Option<Vec<i64>> {
    let body = records(blob)?;
    let comid = |b: &[u8]| i64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
    Some(body.chunks_exact(REACH_BYTES).map(comid).collect())
}

/// The table of the flowlines' rowids, one row, one column `rowids`: each
/// reach's rowid in the flowline table, in the order of the network blob,
/// as little-endian i64.
pub(super) const FLOWLINE_ROWIDS: &str = "hydroplot_flowline_rowids";

/// `rowids` as the blob of [`FLOWLINE_ROWIDS`].
pub(super) fn encode_rowids(rowids: &[i64]) -> Vec<u8> {
    rowids.iter().flat_map(|r| r.to_le_bytes()).collect()
}

/// The rowids of a blob of [`encode_rowids`]; `None` when it is not one.
pub(super) fn decode_rowids(blob: &[u8]) -> Option<Vec<i64>> {
    if blob.len() % 8 != 0 {
        return None;
    }
    let rowid = |b: &[u8]| i64::from_le_bytes(b.try_into().expect("8 bytes"));
    Some(blob.chunks_exact(8).map(rowid).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reach 0 drains into nothing, 1 and 2 into 0.
    fn reaches() -> Vec<Reach> {
        let reach = |comid, hydroseq, dnhydroseq| Reach {
            comid,
            hydroseq,
            dnhydroseq,
            streamorder: 1,
        };
        vec![
            reach(8_897_784, 10, 0),
            reach(-1, i64::MAX, 10),
            reach(7, 11, 10),
        ]
    }

    #[test]
    fn reaches_and_network_come_back_as_stored() {
        let reaches = reaches();
        let blob = encode(&reaches, &Network::new(&reaches));
        // Magic and header, 3 records, 4 offsets, 2 links, 3 indexes.
        assert_eq!(blob.len(), 8 + 24 + 3 * 36 + 4 * 4 + 2 * 4 + 3 * 4);
        let (back, network) = decode(&blob).unwrap();
        assert_eq!(back, reaches);
        assert_eq!(network.downstream(), vec![None, Some(0), Some(0)]);
        let (none, _) = decode(&encode(&[], &Network::new(&[]))).unwrap();
        assert!(none.is_empty());
    }

    #[test]
    fn comids_and_rowids_come_back_as_stored() {
        let reaches = reaches();
        let blob = encode(&reaches, &Network::new(&reaches));
        assert_eq!(comids(&blob).unwrap(), [8_897_784, -1, 7]);
        assert!(comids(&blob[1..]).is_none());
        let rowids = [1, i64::MAX, -3];
        assert_eq!(decode_rowids(&encode_rowids(&rowids)).unwrap(), rowids);
        assert!(decode_rowids(&[0; 7]).is_none());
    }

    #[test]
    fn other_blobs_are_not_read() {
        let reaches = reaches();
        let blob = encode(&reaches, &Network::new(&reaches));
        assert!(decode(&blob[..blob.len() - 1]).is_none());
        assert!(decode(&blob[1..]).is_none());
        assert!(decode(b"").is_none());
        // The first reach draining past the end.
        let mut out_of_range = blob.clone();
        let at = Layout::HEAD + 28;
        out_of_range[at..at + 8].copy_from_slice(&3i64.to_le_bytes());
        assert!(decode(&out_of_range).is_none());
    }

    #[test]
    fn release_0_2_blobs_are_read() {
        let reaches = reaches();
        let blob = encode(&reaches, &Network::new(&reaches));
        let mut old = MAGIC_0_2.to_vec();
        old.extend_from_slice(&blob[Layout::HEAD..Layout::HEAD + 3 * REACH_BYTES]);
        let (back, network) = decode(&old).unwrap();
        assert_eq!(back, reaches);
        assert_eq!(network.downstream(), vec![None, Some(0), Some(0)]);
        assert_eq!(comids(&old).unwrap(), [8_897_784, -1, 7]);
    }

    #[test]
    fn the_layout_places_each_section() {
        let reaches = reaches();
        let blob = encode(&reaches, &Network::new(&reaches));
        let layout = Layout::read(&blob[..Layout::HEAD], blob.len()).unwrap();
        assert!(layout.unique_comids);
        let u32_at = |at: usize| u32::from_le_bytes(blob[at..at + 4].try_into().unwrap());
        // Reach 0 has reaches 1 and 2 upstream; 1 and 2 none.
        let first: Vec<u32> = (0..4).map(|i| u32_at(layout.first(i))).collect();
        assert_eq!(first, [0, 2, 2, 2]);
        assert_eq!(
            [u32_at(layout.upstream(0)), u32_at(layout.upstream(1))],
            [1, 2]
        );
        // By comid: -1 (reach 1), 7 (reach 2), 8897784 (reach 0).
        let by_comid: Vec<u32> = (0..3).map(|k| u32_at(layout.by_comid(k))).collect();
        assert_eq!(by_comid, [1, 2, 0]);
        assert_eq!(
            reach_record(&blob[layout.reach(2)..]).unwrap(),
            (reaches[2], Some(0))
        );
        assert!(Layout::read(&blob[..Layout::HEAD], blob.len() + 1).is_none());
        let mut repeated = reaches.clone();
        repeated[2].comid = -1;
        let blob = encode(&repeated, &Network::new(&repeated));
        assert!(
            !Layout::read(&blob[..Layout::HEAD], blob.len())
                .unwrap()
                .unique_comids
        );
    }

    #[test]
    fn a_network_fits_while_its_blob_is_one_sqlite_stores() {
        assert!(fits(2_700_000));
        let most = (MAX_BYTES - Layout::HEAD - 4) / BYTES_PER_REACH;
        assert!(fits(most));
        assert!(!fits(most + 1));
        assert!(!fits(usize::MAX));
    }
}
