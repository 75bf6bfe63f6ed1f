//! A sorted array searched from a hint: where the last search ended. The
//! vertices of a ring follow one another in space, so the next one's place
//! in an array sorted by position is usually near the last one's, and a
//! search that gallops outward from there touches a few cache lines
//! instead of a binary search's descent through the whole array.

/// The index of the first item of `items` for which `before` is false
/// (`before` being true for a prefix of them, as for
/// [`slice::partition_point`], whose answer this is), found by galloping
/// outward from index `near` (any index; past the end is the end).
pub(super) fn partition_point_near<T>(
    items: &[T],
    near: usize,
    before: impl Fn(&T) -> bool,
) -> usize {
    let near = near.min(items.len());
    // `lo..hi` brackets the answer: every item before `lo` is before, and
    // `hi` is the length or an item that is not.
    let (mut lo, mut hi) = (near, near);
    let mut step = 1;
    if near < items.len() && before(&items[near]) {
        lo = near + 1;
        loop {
            hi = near.saturating_add(step).min(items.len());
            if hi == items.len() || !before(&items[hi]) {
                break;
            }
            lo = hi + 1;
            step *= 2;
        }
    } else {
        while lo > 0 {
            let probe = lo.saturating_sub(step);
            if before(&items[probe]) {
                lo = probe + 1;
                break;
            }
            (hi, lo) = (probe, probe);
            step *= 2;
        }
    }
    lo + items[lo..hi].partition_point(before)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn galloping_from_any_index_finds_what_a_binary_search_finds() {
        // Runs of equal items, gaps, and the ends of the array.
        let items = [1u64, 1, 1, 3, 4, 4, 8, 9, 9, 9, 9, 15, 20];
        for at in 0..22 {
            let expected = items.partition_point(|&x| x < at);
            for near in 0..=items.len() + 2 {
                let found = partition_point_near(&items, near, |&x| x < at);
                assert_eq!(found, expected, "at {at} near {near}");
            }
        }
        assert_eq!(partition_point_near(&[] as &[u64], 0, |&x| x < 3), 0);
    }
}
