//! The upstream of a few outlets read in place from the stored network of
//! an index file (`stored_network.rs`'s layout): the pages of the blob the
//! walk touches, never the whole network. A national file's network is
//! tens of megabytes; a basin of 10,000 reaches touches a few hundred
//! kilobytes of it.

use super::index_file::{FlowlineRowids, IndexFile};
use super::layer::quote;
use super::stored_network::{reach_record, Layout, BASIN_NETWORK, FLOWLINE_ROWIDS, REACH_BYTES};
use crate::network::{Network, Reach};
use rusqlite::blob::Blob;
use rusqlite::Connection;

/// Bytes read from a blob at once, and kept.
const CHUNK: usize = 16 * 1024;

/// A blob of an index file read in chunks as they are needed, each read
/// once and kept while this lives.
struct Chunks<'a> {
    blob: Blob<'a>,
    len: usize,
    /// Chunk `k` is the blob's bytes from `k * CHUNK`, once read.
    chunks: Vec<Option<Box<[u8]>>>,
}

impl<'a> Chunks<'a> {
    /// The blob in `column` of the one row of `table`; `None` when there
    /// is none.
    fn open(conn: &'a Connection, table: &str, column: &str) -> Option<Chunks<'a>> {
        let select = format!("SELECT rowid FROM {} LIMIT 1", quote(table));
        let rowid: i64 = conn.query_row(&select, [], |r| r.get(0)).ok()?;
        let blob = conn
            .blob_open(rusqlite::MAIN_DB, table, column, rowid, true)
            .ok()?;
        let len = blob.len();
        Some(Chunks {
            blob,
            len,
            chunks: vec![None; len.div_ceil(CHUNK)],
        })
    }

    /// Fills `out` with the bytes at `offset`; `None` past the end or when
    /// a read fails.
    fn copy(&mut self, offset: usize, out: &mut [u8]) -> Option<()> {
        if offset.checked_add(out.len())? > self.len {
            return None;
        }
        let mut done = 0;
        while done < out.len() {
            let at = offset + done;
            let (chunk, within) = (at / CHUNK, at % CHUNK);
            let bytes = match &mut self.chunks[chunk] {
                Some(bytes) => bytes,
                slot @ None => {
                    let start = chunk * CHUNK;
                    let mut bytes = vec![0u8; CHUNK.min(self.len - start)].into_boxed_slice();
                    self.blob.read_at_exact(&mut bytes, start).ok()?;
                    slot.insert(bytes)
                }
            };
            let take = (out.len() - done).min(bytes.len() - within);
            out[done..done + take].copy_from_slice(&bytes[within..within + take]);
            done += take;
        }
        Some(())
    }

    /// The `N` bytes at `offset` ([`Chunks::copy`]), taken straight from
    /// their chunk when it is read and holds them all: a walk reads
    /// millions of words, each a call to `memcpy` through `copy`.
    fn array<const N: usize>(&mut self, offset: usize) -> Option<[u8; N]> {
        let (chunk, within) = (offset / CHUNK, offset % CHUNK);
        if let Some(Some(bytes)) = self.chunks.get(chunk) {
            if let Some(b) = bytes.get(within..within + N) {
                return b.try_into().ok();
            }
        }
        let mut b = [0u8; N];
        self.copy(offset, &mut b)?;
        Some(b)
    }

    fn u32_at(&mut self, offset: usize) -> Option<usize> {
        usize::try_from(u32::from_le_bytes(self.array(offset)?)).ok()
    }

    fn i64_at(&mut self, offset: usize) -> Option<i64> {
        Some(i64::from_le_bytes(self.array(offset)?))
    }
}

/// The upstream of some outlets, read from an index file's stored network.
pub(super) struct StoredUpstream {
    /// The reaches upstream of (and including) the outlets, in the stored
    /// network's order (the file's row order).
    pub(super) reaches: Vec<Reach>,
    /// Their network: the stored one's links among them.
    pub(super) network: Network,
    /// The comid and rowid of each of their flowlines.
    pub(super) rowids: FlowlineRowids,
    /// The reaches of the whole stored network.
    pub(super) total: usize,
}

/// The stored network of `index` as read in place.
struct InPlace<'a> {
    network: Chunks<'a>,
    layout: Layout,
}

impl InPlace<'_> {
    /// Reach `i` and the index of the reach it drains into (`None` at a
    /// terminal).
    fn reach(&mut self, i: usize) -> Option<(Reach, Option<usize>)> {
        let b: [u8; REACH_BYTES] = self.network.array(self.layout.reach(i))?;
        let (reach, d) = reach_record(&b)?;
        match d {
            Some(d) if d >= self.layout.n => None,
            d => Some((reach, d)),
        }
    }

    /// The reaches draining directly into reach `i`, in `out` (emptied
    /// first: one buffer serves a whole walk).
    fn upstream(&mut self, i: usize, out: &mut Vec<usize>) -> Option<()> {
        out.clear();
        let (from, to) = (
            self.network.u32_at(self.layout.first(i))?,
            self.network.u32_at(self.layout.first(i + 1))?,
        );
        for k in from..to.max(from) {
            let u = self.network.u32_at(self.layout.upstream(k))?;
            out.push((u < self.layout.n).then_some(u)?);
        }
        Some(())
    }

    /// The first reach with `comid`: a binary search of the comid order.
    fn index_of(&mut self, comid: i64) -> Option<usize> {
        let (mut low, mut high) = (0, self.layout.n);
        while low < high {
            let mid = low + (high - low) / 2;
            let i = self.network.u32_at(self.layout.by_comid(mid))?;
            let at = self.network.i64_at(self.layout.reach(i))?;
            if at < comid {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        let i = self
            .network
            .u32_at(self.layout.by_comid(low))
            .filter(|_| low < self.layout.n)?;
        (self.network.i64_at(self.layout.reach(i))? == comid).then_some(i)
    }

    /// Whether the walk down from reach `i` ends at a terminal (not on a
    /// cycle), within the network's size.
    fn drains_to_a_terminal(&mut self, mut i: usize) -> Option<bool> {
        for _ in 0..=self.layout.n {
            match self.reach(i)?.1 {
                Some(d) => i = d,
                None => return Some(true),
            }
        }
        Some(false)
    }
}

/// The upstream of the reaches of `comids` (each comid's first reach) in
/// the stored network of `index`, read in place. `None` when it cannot be
/// read so: no stored network of this layout, a comid that repeats in it
/// or is not in it, an outlet on a cycle or draining into one (bad data:
/// its parts, [`Network::parts`], are then the whole network's concern), or
/// a blob that does not hold together. The caller then reads the whole
/// network, which gives the same basins.
pub(super) fn read_upstream(index: &IndexFile, comids: &[i64]) -> Option<StoredUpstream> {
    let conn = index.connection();
    let mut network = Chunks::open(conn, BASIN_NETWORK, "reaches")?;
    let mut head = [0u8; Layout::HEAD];
    network.copy(0, &mut head)?;
    let layout = Layout::read(&head, network.len)?;
    if !layout.unique_comids {
        return None;
    }
    let mut stored = InPlace { network, layout };
    let mut stack = Vec::with_capacity(comids.len());
    for &comid in comids {
        let i = stored.index_of(comid)?;
        if !stored.drains_to_a_terminal(i)? {
            return None;
        }
        stack.push(i);
    }
    // A word per reach of the network, zero until the walk reaches it: a
    // national file's two million are eight megabytes, allocated zeroed
    // (so a small basin touches a few of their pages), less than a set of
    // a large basin's reaches. Once the walk is done, a reach's word is
    // its position among those found, plus one.
    let mut seen = vec![0u32; layout.n];
    let mut found = Vec::new();
    for &i in &stack {
        if std::mem::replace(&mut seen[i], 1) == 0 {
            found.push(i);
        }
    }
    let mut upstream = Vec::new();
    while let Some(i) = stack.pop() {
        stored.upstream(i, &mut upstream)?;
        for &u in &upstream {
            if std::mem::replace(&mut seen[u], 1) == 0 {
                stack.push(u);
                found.push(u);
            }
        }
    }
    // In the network's order: for a basin of a large share of the
    // network, a pass over the marks (a million reaches: 40 ms less than
    // sorting them).
    if found.len() * 8 > layout.n {
        found.clear();
        found.extend((0..layout.n).filter(|&i| seen[i] != 0));
    } else {
        found.sort_unstable();
    }
    for (k, &i) in found.iter().enumerate() {
        seen[i] = u32::try_from(k + 1).ok()?;
    }
    let (mut reaches, mut downstream) = (Vec::with_capacity(found.len()), Vec::new());
    for &i in &found {
        let (reach, d) = stored.reach(i)?;
        reaches.push(reach);
        downstream.push(d.and_then(|d| seen[d].checked_sub(1)).map(|k| k as usize));
    }
    let network = Network::with_downstream(&reaches, &downstream)?;
    let mut rowids_blob = Chunks::open(conn, FLOWLINE_ROWIDS, "rowids")?;
    if rowids_blob.len != layout.n * 8 {
        return None;
    }
    let rowids = (found.iter())
        .map(|&i| rowids_blob.i64_at(i * 8))
        .collect::<Option<Vec<i64>>>()?;
    let comids = reaches.iter().map(|r| r.comid).collect();
    let rowids = FlowlineRowids::of_some(comids, rowids);
    Some(StoredUpstream {
        reaches,
        network,
        rowids,
        total: layout.n,
    })
}
