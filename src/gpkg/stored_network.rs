//! The flowline network as one blob: every reach's comid, hydroseq,
//! dnhydroseq and stream order, in the order [`GeoPackage::read_topology`]
//! gives them, and the reach it drains into, stored beside the basin parts
//! by `hydroplot index` and kept current by the same triggers, so that a
//! plot of a national file reads a few megabytes in one step instead of
//! stepping through a million rows and joining them.
//!
//! Format: the 8 bytes [`MAGIC`], then per reach the comid, hydroseq and
//! dnhydroseq (i64), the stream order (i32) and the index of the reach it
//! drains into (i64, -1 for none), little-endian.
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
const MAGIC: &[u8; 8] = b"hpreach1";

/// Bytes per reach.
const REACH_BYTES: usize = 8 + 8 + 8 + 4 + 8;

/// The longest blob SQLite stores (its default `SQLITE_MAX_LENGTH`).
const MAX_BYTES: usize = 1_000_000_000;

/// Whether the network of `reaches` reaches fits in one blob (up to about
/// 27 million).
pub(super) fn fits(reaches: usize) -> bool {
    reaches.saturating_mul(REACH_BYTES) <= MAX_BYTES - MAGIC.len()
}

/// `reaches` and the reach each drains into (`network`'s) as the blob.
pub(super) fn encode(reaches: &[Reach], network: &Network) -> Vec<u8> {
    let mut blob = Vec::with_capacity(MAGIC.len() + reaches.len() * REACH_BYTES);
    blob.extend_from_slice(MAGIC);
    for (r, d) in reaches.iter().zip(network.downstream()) {
        blob.extend_from_slice(&r.comid.to_le_bytes());
        blob.extend_from_slice(&r.hydroseq.to_le_bytes());
        blob.extend_from_slice(&r.dnhydroseq.to_le_bytes());
        blob.extend_from_slice(&r.streamorder.to_le_bytes());
        let d = d.map_or(-1, |d| i64::try_from(d).expect("an index fits i64"));
        blob.extend_from_slice(&d.to_le_bytes());
    }
    blob
}

/// The reaches and their network of a blob of [`encode`]; `None` when it
/// is not one.
pub(super) fn decode(blob: &[u8]) -> Option<(Vec<Reach>, Network)> {
    let body = blob.strip_prefix(MAGIC)?;
    if body.len() % REACH_BYTES != 0 {
        return None;
    }
    let i64_at =
        |b: &[u8], at: usize| i64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    let n = body.len() / REACH_BYTES;
    let (mut reaches, mut downstream) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for b in body.chunks_exact(REACH_BYTES) {
        reaches.push(Reach {
            comid: i64_at(b, 0),
            hydroseq: i64_at(b, 8),
            dnhydroseq: i64_at(b, 16),
            streamorder: i32::from_le_bytes(b[24..28].try_into().expect("4 bytes")),
        });
        downstream.push(match i64_at(b, 28) {
            -1 => None,
            d => Some(usize::try_from(d).ok()?),
        });
    }
    let network = Network::with_downstream(&reaches, &downstream)?;
    Some((reaches, network))
}

/// The comids of a blob of [`encode`], in order, without decoding the
/// rest; `None` when it is not one.
pub(super) fn comids(blob: &[u8]) -> Option<Vec<i64>> {
    let body = blob.strip_prefix(MAGIC)?;
    if body.len() % REACH_BYTES != 0 {
        return None;
    }
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
        assert_eq!(blob.len(), 8 + 3 * 36);
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
        out_of_range[8 + 28..8 + 36].copy_from_slice(&3i64.to_le_bytes());
        assert!(decode(&out_of_range).is_none());
    }

    #[test]
    fn a_network_fits_while_its_blob_is_one_sqlite_stores() {
        assert!(fits(2_700_000));
        assert!(fits((MAX_BYTES - 8) / 36));
        assert!(!fits((MAX_BYTES - 8) / 36 + 1));
        assert!(!fits(usize::MAX));
    }
}
