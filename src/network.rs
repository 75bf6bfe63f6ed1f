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

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Hashes one integer id (comid, hydroseq) with the splitmix64 finalizer:
/// a few multiplies instead of SipHash, which made a map of 10^6 flowline
/// ids 4x slower to fill. Ids come from the hydrography data, and a
/// file crafted to collide only slows navigation down; it cannot break it.
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_i64(&mut self, id: i64) {
        let mut z = (id as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        self.0 = z ^ (z >> 31);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map keyed by ids (comids, hydroseqs), hashed by [`IdHasher`].
pub type IdMap<V> = HashMap<i64, V, BuildHasherDefault<IdHasher>>;

/// A set of ids (comids, hydroseqs), hashed by [`IdHasher`].
pub type IdSet = std::collections::HashSet<i64, BuildHasherDefault<IdHasher>>;

/// The flowline network as an upstream adjacency (compressed rows), built
/// once (two sorted lists joined, then a counting pass) and navigated
/// without recursion.
pub struct Network {
    /// The comid of each reach.
    comids: Vec<i64>,
    /// `upstream[first[i]..first[i + 1]]` are the reaches draining directly into reach `i`.
    first: Vec<usize>,
    upstream: Vec<usize>,
}

impl Network {
    /// Builds the network of `reaches` (indexes refer to this slice).
    pub fn new(reaches: &[Reach]) -> Network {
        Network::build(reaches, &downstream_of_each(reaches))
    }

    /// The network of `reaches` from the reach each drains into, as
    /// [`Network::downstream`] gave it for the same reaches (stored with a
    /// file): the same network as [`Network::new`]'s, without its sorts.
    /// `None` when `downstream` cannot be theirs (another length, a reach
    /// out of range or draining into itself).
    pub fn with_downstream(reaches: &[Reach], downstream: &[Option<usize>]) -> Option<Network> {
        let fits = downstream.len() == reaches.len()
            && (downstream.iter().enumerate())
                .all(|(i, d)| d.is_none_or(|d| d < reaches.len() && d != i));
        fits.then(|| Network::build(reaches, downstream))
    }

    /// The reaches draining directly into reach `i`, in index order.
    pub fn upstream_of(&self, i: usize) -> &[usize] {
        &self.upstream[self.first[i]..self.first[i + 1]]
    }

    /// The reach each reach drains into (`None` at a terminal).
    pub fn downstream(&self) -> Vec<Option<usize>> {
        let mut downstream = vec![None; self.comids.len()];
        for d in 0..self.comids.len() {
            for &u in &self.upstream[self.first[d]..self.first[d + 1]] {
                downstream[u] = Some(d);
            }
        }
        downstream
    }

    /// The network of `reaches`, each draining into its `downstream` (all
    /// in range).
    fn build(reaches: &[Reach], downstream: &[Option<usize>]) -> Network {
        let n = reaches.len();
        let mut first = vec![0usize; n + 1];
        for d in downstream.iter().flatten() {
            first[d + 1] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut fill = first.clone();
        let mut upstream = vec![0usize; first[n]];
        for (i, d) in downstream.iter().enumerate() {
            if let Some(d) = *d {
                upstream[fill[d]] = i;
                fill[d] += 1;
            }
        }
        Network {
            comids: reaches.iter().map(|r| r.comid).collect(),
            first,
            upstream,
        }
    }

    /// The index of the reach of each of `comids` (the first reach with
    /// that comid; `None` for a comid without one), found in one pass over
    /// the reaches: for a few outlets, much less work than indexing them all.
    pub fn index_of_each(&self, comids: &[i64]) -> Vec<Option<usize>> {
        let mut found: IdMap<Option<usize>> = comids.iter().map(|&c| (c, None)).collect();
        for (i, c) in self.comids.iter().enumerate() {
            if let Some(slot @ None) = found.get_mut(c) {
                *slot = Some(i);
            }
        }
        comids
            .iter()
            .map(|c| found.get(c).copied().flatten())
            .collect()
    }

    /// The indexes of the reaches of `comids` that have one.
    fn indexes_of(&self, comids: &[i64]) -> Vec<usize> {
        self.index_of_each(comids).into_iter().flatten().collect()
    }

    /// Marks every reach upstream of (and including) the `outlets` (reach
    /// indexes). Linear in the size of the result; cycles in bad data end
    /// the walk instead of looping.
    pub fn upstream_mask(&self, outlets: &[usize]) -> Vec<bool> {
        let mut seen = vec![false; self.first.len() - 1];
        let mut stack: Vec<usize> = Vec::new();
        for &o in outlets {
            if !std::mem::replace(&mut seen[o], true) {
                stack.push(o);
            }
            while let Some(i) = stack.pop() {
                for &u in &self.upstream[self.first[i]..self.first[i + 1]] {
                    if !std::mem::replace(&mut seen[u], true) {
                        stack.push(u);
                    }
                }
            }
        }
        seen
    }
}

/// The reaches of one outlet's upstream, told apart by the parts of
/// [`Network::parts`] ([`Network::split_upstream`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SplitUpstream {
    /// Every reach of the upstream marked, as [`Network::upstream_mask`]
    /// marks them.
    pub mask: Vec<bool>,
    /// The part-closing reaches in the upstream: each one's part lies whole
    /// inside it.
    pub parts: Vec<usize>,
    /// The reaches of the upstream no such part holds: those with no
    /// part-closing reach between them and the outlet (both included).
    pub rest: Vec<usize>,
}

impl Network {
    /// Cuts the network into parts of at least `size` reaches where it can:
    /// returns the reaches that close a part. A part is a closing reach and
    /// everything upstream of it down to (not including) the next closing
    /// reaches; every part lies whole inside the upstream of any reach
    /// downstream of its closing reach. Built from the headwaters down, a
    /// reach closing a part once the open reaches above it (itself
    /// included) reach `size`. Reaches on a cycle (bad data) or draining
    /// into one belong to no part.
    pub fn parts(&self, size: usize) -> Vec<usize> {
        let n = self.first.len() - 1;
        let mut is_upstream = vec![false; n];
        for &u in &self.upstream {
            is_upstream[u] = true;
        }
        let mut open = vec![0usize; n];
        let mut closing = Vec::new();
        // Post-order without recursion: a reach is pushed, then its
        // upstream; once those are done (the second visit), it is counted.
        let mut stack: Vec<(usize, bool)> = Vec::new();
        for root in (0..n).filter(|&i| !is_upstream[i]) {
            stack.push((root, false));
            while let Some((i, counted_above)) = stack.pop() {
                let above = &self.upstream[self.first[i]..self.first[i + 1]];
                if !counted_above {
                    stack.push((i, true));
                    stack.extend(above.iter().map(|&u| (u, false)));
                    continue;
                }
                open[i] = 1 + above.iter().map(|&u| open[u]).sum::<usize>();
                if open[i] >= size.max(1) {
                    closing.push(i);
                    open[i] = 0;
                }
            }
        }
        closing
    }

    /// The reaches of each part closed by `make`, some of the reaches
    /// `closing` that close parts ([`Network::parts`]): the closing reach
    /// first, then those above it up to the next closing reaches. `closing`
    /// must come from [`Network::parts`]: a reach on a cycle would be
    /// walked without end.
    pub fn reaches_of_parts(&self, closing: &[usize], make: &[usize]) -> Vec<Vec<usize>> {
        let mut closes = vec![false; self.first.len() - 1];
        for &c in closing {
            closes[c] = true;
        }
        // Parts lie off any cycle (see `parts`): each walk is a tree's.
        let walk = |c: usize| {
            let (mut reaches, mut stack) = (vec![c], vec![c]);
            while let Some(i) = stack.pop() {
                for &u in &self.upstream[self.first[i]..self.first[i + 1]] {
                    if !closes[u] {
                        reaches.push(u);
                        stack.push(u);
                    }
                }
            }
            reaches
        };
        make.iter().map(|&c| walk(c)).collect()
    }

    /// The upstream of `outlet` (as [`Network::upstream_mask`] walks it),
    /// split by the closing reaches of parts marked in `closes`
    /// ([`Network::parts`]), with its mask: one walk for both.
    pub fn split_upstream(&self, outlet: usize, closes: &[bool]) -> SplitUpstream {
        let mut split = SplitUpstream {
            mask: vec![false; self.first.len() - 1],
            ..SplitUpstream::default()
        };
        let seen = &mut split.mask;
        seen[outlet] = true;
        // Each reach with whether a closing reach lies between it and the
        // outlet (both included).
        let mut stack = vec![(outlet, closes[outlet])];
        while let Some((i, in_part)) = stack.pop() {
            if closes[i] {
                split.parts.push(i);
            }
            if !in_part {
                split.rest.push(i);
            }
            for &u in &self.upstream[self.first[i]..self.first[i + 1]] {
                if !std::mem::replace(&mut seen[u], true) {
                    stack.push((u, in_part || closes[u]));
                }
            }
        }
        split
    }
}

/// Reaches at or above which the two sorts of [`downstream_of_each`] run
/// on two threads.
const SORT_ON_TWO_THREADS: usize = 1 << 16;

/// The reach each reach drains into: the first reach (by index) whose
/// `hydroseq` is its `dnhydroseq`; `None` at a terminal (`dnhydroseq` 0),
/// when no reach has that `hydroseq`, or when it would be the reach itself.
///
/// A join of two sorted lists, not a hash map: the lookups walk memory in
/// order, about twice as fast at a million reaches.
fn downstream_of_each(reaches: &[Reach]) -> Vec<Option<usize>> {
    // Sorted by (hydroseq, index): the first of equal hydroseqs leads.
    let mut by_hydroseq: Vec<(i64, usize)> = (reaches.iter().enumerate())
        .map(|(i, r)| (r.hydroseq, i))
        .collect();
    let mut drains_into: Vec<(i64, usize)> = (reaches.iter().enumerate())
        .filter(|(_, r)| r.dnhydroseq != 0)
        .map(|(i, r)| (r.dnhydroseq, i))
        .collect();
    if reaches.len() >= SORT_ON_TWO_THREADS {
        std::thread::scope(|s| {
            s.spawn(|| by_hydroseq.sort_unstable());
            drains_into.sort_unstable();
        });
    } else {
        by_hydroseq.sort_unstable();
        drains_into.sort_unstable();
    }
    let mut downstream = vec![None; reaches.len()];
    let mut at = 0;
    for (dnhydroseq, i) in drains_into {
        while by_hydroseq.get(at).is_some_and(|&(h, _)| h < dnhydroseq) {
            at += 1;
        }
        if let Some(&(h, d)) = by_hydroseq.get(at) {
            if h == dnhydroseq && d != i {
                downstream[i] = Some(d);
            }
        }
    }
    downstream
}

/// The comids upstream of (and including) `outlet_comids`, in the order of
/// `reaches`. Outlets missing from `reaches` contribute nothing.
pub fn upstream_comids(reaches: &[Reach], outlet_comids: &[i64]) -> Vec<i64> {
    let network = Network::new(reaches);
    let outlets = network.indexes_of(outlet_comids);
    let mask = network.upstream_mask(&outlets);
    reaches
        .iter()
        .zip(mask)
        .filter_map(|(r, keep)| keep.then_some(r.comid))
        .collect()
}

/// The reference's automatic thinning (NOTES step 3): for the largest basin
/// area in km², the minimum stream order to draw, or `None` when the basin
/// is small enough (<= 1 km²) to draw everything.
pub fn auto_streamorder(largest_basin_km2: f64) -> Option<i32> {
    match largest_basin_km2 {
        a if a <= 1.0 => None,
        a if a <= 100.0 => Some(1),
        a if a <= 324.0 => Some(2),
        a if a <= 784.0 => Some(3),
        _ => Some(4),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A reach of stream order 1 (other modules' tests use it too).
    pub(crate) fn reach(comid: i64, hydroseq: i64, dnhydroseq: i64) -> Reach {
        Reach {
            comid,
            hydroseq,
            dnhydroseq,
            streamorder: 1,
        }
    }

    #[test]
    fn upstream_of_a_confluence() {
        // 1 and 2 join into 3, which flows into 4; 5 is elsewhere.
        let r = [
            reach(1, 10, 30),
            reach(2, 20, 30),
            reach(3, 30, 40),
            reach(4, 40, 0),
            reach(5, 50, 0),
        ];
        assert_eq!(upstream_comids(&r, &[3]), vec![1, 2, 3]);
        assert_eq!(upstream_comids(&r, &[4]), vec![1, 2, 3, 4]);
        assert_eq!(upstream_comids(&r, &[1, 5]), vec![1, 5]);
        assert!(upstream_comids(&r, &[99]).is_empty());
    }

    #[test]
    fn a_repeated_comid_is_found_at_its_first_reach() {
        let r = [
            reach(7, 10, 0),
            reach(8, 20, 10),
            reach(7, 30, 20),
            reach(9, 40, 30),
        ];
        let network = Network::new(&r);
        assert_eq!(network.index_of_each(&[7, 5]), vec![Some(0), None]);
        assert_eq!(network.indexes_of(&[9, 7, 5]), vec![3, 0]);
        assert_eq!(upstream_comids(&r, &[8]), vec![8, 7, 9]);
    }

    /// A tree of 13 reaches: 0 the outlet; 1 and 2 drain into 0; 3, 4, 5
    /// into 1; 6 into 2; 7, 8 into 6; 9 into 3; 10, 11 into 9; 12 into 11.
    fn tree() -> Vec<Reach> {
        let down = [0, 0, 0, 1, 1, 1, 2, 6, 6, 3, 9, 9, 11];
        (0..13)
            .map(|i| {
                reach(
                    100 + i,
                    1000 + i,
                    if i == 0 { 0 } else { 1000 + down[i as usize] },
                )
            })
            .collect()
    }

    #[test]
    fn parts_close_from_the_headwaters_down_once_big_enough() {
        let network = Network::new(&tree());
        // Open counts from the headwaters: 12 -> 1, 11 -> 2, 10 -> 1,
        // 9 -> 4 (closes at 4), 3 -> 1, 4, 5 -> 1, 1 -> 4 (closes); 7, 8
        // -> 1, 6 -> 3, 2 -> 4 (closes); 0 -> 1.
        let mut closing = network.parts(4);
        closing.sort_unstable();
        assert_eq!(closing, vec![1, 2, 9]);
        assert_eq!(network.parts(1).len(), 13, "every reach its own part");
        assert!(
            network.parts(14).is_empty(),
            "the whole network is too small"
        );
    }

    #[test]
    fn a_network_from_its_downstream_is_the_network() {
        let reaches = tree();
        let network = Network::new(&reaches);
        let downstream = network.downstream();
        assert_eq!(downstream, downstream_of_each(&reaches));
        let again = Network::with_downstream(&reaches, &downstream).unwrap();
        assert_eq!(again.first, network.first);
        assert_eq!(again.upstream, network.upstream);
        assert_eq!(again.comids, network.comids);
        // A downstream that cannot be these reaches' is refused.
        assert!(Network::with_downstream(&reaches, &downstream[1..]).is_none());
        let mut out_of_range = downstream.clone();
        out_of_range[0] = Some(reaches.len());
        assert!(Network::with_downstream(&reaches, &out_of_range).is_none());
        let mut into_itself = downstream;
        into_itself[3] = Some(3);
        assert!(Network::with_downstream(&reaches, &into_itself).is_none());
    }

    #[test]
    fn an_upstream_splits_into_whole_parts_and_the_rest() {
        let network = Network::new(&tree());
        let closes: Vec<bool> = (0..13).map(|i| [1, 2, 9].contains(&i)).collect();
        let sorted = |mut v: Vec<usize>| {
            v.sort_unstable();
            v
        };
        // From the outlet: parts 1 (with 9 inside it) and 2; the rest is 0.
        let split = network.split_upstream(0, &closes);
        assert_eq!(sorted(split.parts), vec![1, 2, 9]);
        assert_eq!(split.rest, vec![0]);
        // Above a closing reach: its own part's reaches are the rest.
        let split = network.split_upstream(3, &closes);
        assert_eq!(split.parts, vec![9]);
        assert_eq!(split.rest, vec![3]);
        let split = network.split_upstream(6, &closes);
        assert!(split.parts.is_empty());
        assert_eq!(sorted(split.rest), vec![6, 7, 8]);
        // Parts and rest make up the upstream, each reach once.
        for outlet in 0..13 {
            let split = network.split_upstream(outlet, &closes);
            let mut covered = split.rest.clone();
            for &p in &split.parts {
                // A part: its closing reach and the reaches above it up to
                // the next closing ones.
                let upstream = network.upstream_mask(&[p]);
                let inner: Vec<usize> = (0..13)
                    .filter(|&i| i != p && closes[i] && upstream[i])
                    .collect();
                let inner_upstream = network.upstream_mask(&inner);
                covered.extend((0..13).filter(|&i| upstream[i] && !inner_upstream[i]));
            }
            let mask = network.upstream_mask(&[outlet]);
            let expected: Vec<usize> = (0..13).filter(|&i| mask[i]).collect();
            assert_eq!(sorted(covered), expected, "outlet {outlet}");
            assert_eq!(split.mask, mask, "outlet {outlet}");
        }
    }

    #[test]
    fn each_part_holds_its_closing_reach_and_those_above_up_to_the_next() {
        let network = Network::new(&tree());
        let sorted = |mut v: Vec<usize>| {
            v.sort_unstable();
            v
        };
        let parts: Vec<Vec<usize>> = network
            .reaches_of_parts(&[1, 2, 9], &[1, 2, 9])
            .into_iter()
            .map(sorted)
            .collect();
        assert_eq!(
            parts,
            vec![vec![1, 3, 4, 5], vec![2, 6, 7, 8], vec![9, 10, 11, 12]]
        );
        // Some of them: each still ends at the other closing reaches.
        let some = network.reaches_of_parts(&[1, 2, 9], &[1]);
        assert_eq!(
            some.into_iter().map(sorted).collect::<Vec<_>>(),
            vec![vec![1, 3, 4, 5]]
        );
    }

    #[test]
    fn an_upstream_splits_alike_with_the_parts_of_some_basins_alone() {
        // The parts inside the basins of 3 and 2 (9; 2), not 1: every part
        // above a marked one is marked, so each marked part is whole.
        let network = Network::new(&tree());
        let closes: Vec<bool> = (0..13).map(|i| [2, 9].contains(&i)).collect();
        let mut split = network.split_upstream(0, &closes);
        split.parts.sort_unstable();
        split.rest.sort_unstable();
        assert_eq!(split.parts, vec![2, 9]);
        assert_eq!(split.rest, vec![0, 1, 3, 4, 5]);
        let parts = network.reaches_of_parts(&[1, 2, 9], &split.parts);
        let mut covered: Vec<usize> = parts.into_iter().flatten().chain(split.rest).collect();
        covered.sort_unstable();
        assert_eq!(covered, (0..13).collect::<Vec<_>>(), "each reach once");
    }

    #[test]
    fn reaches_on_a_cycle_are_in_no_part() {
        let r = [reach(1, 10, 20), reach(2, 20, 10), reach(3, 30, 0)];
        assert_eq!(Network::new(&r).parts(1), vec![2]);
    }

    #[test]
    fn cycles_end_the_walk() {
        let r = [reach(1, 10, 20), reach(2, 20, 10)];
        assert_eq!(upstream_comids(&r, &[1]), vec![1, 2]);
    }

    #[test]
    fn a_long_chain_needs_no_recursion() {
        let n = 1_000_000;
        let r: Vec<Reach> = (0..n).map(|i| reach(i, i + 1, i)).collect();
        assert_eq!(upstream_comids(&r, &[0]).len(), n as usize);
    }

    #[test]
    fn a_reach_drains_into_the_first_reach_holding_its_dnhydroseq() {
        let r = [
            reach(1, 10, 30), // into the first of the two reaches of hydroseq 30
            reach(2, 30, 0),  // a terminal
            reach(3, 30, 30), // into the reach before it, not into itself
            reach(4, 40, 40), // only itself holds 40: drains nowhere
            reach(5, 50, 99), // no reach holds 99
        ];
        assert_eq!(
            downstream_of_each(&r),
            vec![Some(1), None, Some(1), None, None]
        );
    }

    #[test]
    fn a_large_network_drains_as_a_map_of_hydroseqs_says() {
        // Above the two-thread size, with repeated hydroseqs and dangling
        // dnhydroseqs, against a plain map of each hydroseq's first reach.
        let n = 3 * SORT_ON_TWO_THREADS as i64;
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: i64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % m as u64) as i64
        };
        let r: Vec<Reach> = (0..n).map(|i| reach(i, next(n), next(n + n / 4))).collect();
        let mut first = HashMap::new();
        for (i, reach) in r.iter().enumerate() {
            first.entry(reach.hydroseq).or_insert(i);
        }
        let expected: Vec<Option<usize>> = (r.iter().enumerate())
            .map(|(i, reach)| match first.get(&reach.dnhydroseq) {
                Some(&d) if reach.dnhydroseq != 0 && d != i => Some(d),
                _ => None,
            })
            .collect();
        assert!(expected.iter().flatten().count() > r.len() / 2);
        assert_eq!(downstream_of_each(&r), expected);
    }

    #[test]
    fn auto_streamorder_follows_the_reference() {
        assert_eq!(auto_streamorder(0.5), None);
        assert_eq!(auto_streamorder(50.0), Some(1));
        assert_eq!(auto_streamorder(300.0), Some(2));
        assert_eq!(auto_streamorder(700.0), Some(3));
        assert_eq!(auto_streamorder(5000.0), Some(4));
    }
}
