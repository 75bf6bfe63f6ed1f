//! The keys a read by id asks for, tested row by row as a table is scanned.

/// The ids a scan keeps, sorted, each tested by binary search. A hash set
/// of a million ids is probed at random, a cache (and page table) miss per
/// row; here the first steps of every search read the same few entries, and
/// rows that come in a region of the file (a basin's catchments) end their
/// searches in one region of the list, so the tests stay in cache.
pub(super) struct WantedIds {
    sorted: Vec<i64>,
}

impl WantedIds {
    /// The ids of `sorted` (sorted, repeats allowed); takes ownership.
    pub(super) fn new(sorted: Vec<i64>) -> Self {
        debug_assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
        WantedIds { sorted }
    }

    /// True when `key` is one of the ids.
    pub(super) fn contains(&self, key: i64) -> bool {
        self.sorted.binary_search(&key).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_and_nothing_else_is_wanted() {
        let ids: Vec<i64> = (0..1000).map(|i| i * 3 - 1500).collect();
        let wanted = WantedIds::new(ids.clone());
        let kept: Vec<i64> = (-2000..2000).filter(|&k| wanted.contains(k)).collect();
        assert_eq!(kept, ids);
        assert!(!WantedIds::new(Vec::new()).contains(0));
        assert!(WantedIds::new(vec![7, 7, 9]).contains(7));
    }
}
