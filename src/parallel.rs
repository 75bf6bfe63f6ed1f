//! Bounded parallel work whose observer calls stay on the calling thread.

use crate::observer::{deliver, relay_observer_calls, ObserverCall};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// Runs `work` over `items` on at most `concurrency` threads; results in input
/// order. `on_done(index, &result)` runs on the calling thread as each finishes.
pub fn parallel_map<T: Sync, R: Send>(
    concurrency: usize,
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
    mut on_done: impl FnMut(usize, &R),
) -> Vec<R> {
    let workers = concurrency.max(1).min(items.len());
    if workers <= 1 {
        return items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let r = work(item);
                on_done(i, &r);
                r
            })
            .collect();
    }
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<R>> = items.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let (done_tx, done_rx) = mpsc::channel::<(usize, R)>();
        let (call_tx, call_rx) = mpsc::channel::<ObserverCall>();
        for _ in 0..workers {
            let (done_tx, call_tx) = (done_tx.clone(), call_tx.clone());
            let (next, work) = (&next, &work);
            scope.spawn(move || {
                relay_observer_calls(call_tx, || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    if done_tx.send((i, work(item))).is_err() {
                        break;
                    }
                })
            });
        }
        drop((done_tx, call_tx));
        // Ends when every worker has finished (or one panicked; the scope
        // re-raises it). A worker relays its observer calls before sending
        // its result, so they run here, in order, before `on_done`.
        for (i, r) in done_rx {
            call_rx.try_iter().for_each(deliver);
            on_done(i, &r);
            results[i] = Some(r);
        }
        call_rx.try_iter().for_each(deliver);
    });
    results
        .into_iter()
        .map(|r| r.expect("every index is computed exactly once"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn parallel_map_keeps_input_order_and_reports_each_once() {
        let items: Vec<u64> = (0..50).collect();
        let mut seen = [0; 50];
        let out = parallel_map(
            4,
            &items,
            |&i| {
                std::thread::sleep(Duration::from_millis((50 - i) % 7));
                i * i
            },
            |i, r| {
                assert_eq!(*r, (i * i) as u64);
                seen[i] += 1;
            },
        );
        assert_eq!(out, items.iter().map(|i| i * i).collect::<Vec<_>>());
        assert!(seen.iter().all(|&n| n == 1));
        assert!(parallel_map(3, &[] as &[u8], |_| 0, |_, _| {}).is_empty());
    }
}
