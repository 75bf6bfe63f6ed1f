//! Bounded parallel work whose observer calls stay on the calling thread.

use crate::observer::{deliver, relay_observer_calls, ObserverCall};
use std::collections::VecDeque;
use std::sync::{mpsc, Condvar, Mutex, MutexGuard};

/// Runs `work` over `items` on at most `concurrency` threads; results in input
/// order. `on_done(index, &result)` runs on the calling thread as each finishes.
pub fn parallel_map<T: Sync, R: Send>(
    concurrency: usize,
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
    on_done: impl FnMut(usize, &R),
) -> Vec<R> {
    let never = Throttle {
        is_throttled: Box::new(|_: &R| false),
        on_requeue: Box::new(|_, _| {}),
    };
    adaptive_map(concurrency, items, work, &never, on_done)
}

/// How many times [`adaptive_map`] re-queues one item whose result says
/// "throttled" before that result is kept as the item's answer; also how
/// many throttled results in a row, across the batch, it re-queues at most.
pub const MAX_REQUEUES: u32 = 12;

/// What makes [`adaptive_map`] slow down: a test of a result ("the service
/// said 429") and a note of each re-queue (item index, the new window),
/// called on the helper thread (observer calls made there are relayed).
pub struct Throttle<'a, R> {
    pub is_throttled: Box<dyn Fn(&R) -> bool + Sync + 'a>,
    pub on_requeue: Box<dyn Fn(usize, usize) + Sync + 'a>,
}

/// [`parallel_map`] that adapts to a rate-limited service (AIMD): an item
/// whose result is throttled is put back at the end of the queue (up to
/// [`MAX_REQUEUES`] times, then its last result is kept) and the number of
/// items in flight is halved (never below 1), once per burst: a throttled
/// result of an item started before the last halving (within one round
/// trip of it, the same burst of 429s) does not halve it again, so 8
/// simultaneous 429s leave a window of 4, not 1. After a window's worth of
/// successes it grows by one again, up to `concurrency`. Once
/// [`MAX_REQUEUES`] results in a row were throttled, with no success
/// between, the service's quota is spent: nothing more is re-queued until
/// a success, each item left keeps its first result (one try each, not
/// thirteen). Every item gets
/// exactly one result, in input order; `on_done` runs once per item, on the
/// calling thread. A throttled result that is re-queued is dropped: the
/// caller's `work` must leave nothing behind for it.
pub fn adaptive_map<T: Sync, R: Send>(
    concurrency: usize,
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
    throttle: &Throttle<R>,
    mut on_done: impl FnMut(usize, &R),
) -> Vec<R> {
    let workers = concurrency.max(1).min(items.len());
    let queue = Queue::new(items.len(), workers);
    let mut results: Vec<Option<R>> = items.iter().map(|_| None).collect();
    if workers <= 1 {
        queue.work(items, &work, throttle, |i, r| {
            on_done(i, &r);
            results[i] = Some(r);
        });
    } else {
        std::thread::scope(|scope| {
            let (done_tx, done_rx) = mpsc::channel::<(usize, R)>();
            let (call_tx, call_rx) = mpsc::channel::<ObserverCall>();
            for _ in 0..workers {
                let (done_tx, call_tx) = (done_tx.clone(), call_tx.clone());
                let (queue, work) = (&queue, &work);
                scope.spawn(move || {
                    relay_observer_calls(call_tx, || {
                        queue.work(items, work, throttle, |i, r| {
                            // The receiver lives until every worker is done.
                            let _ = done_tx.send((i, r));
                        })
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
    }
    results
        .into_iter()
        .map(|r| r.expect("every index gets exactly one kept result"))
        .collect()
}

/// The shared queue of [`adaptive_map`]: pending indices, what is in
/// flight, and the AIMD window. Each take is numbered (its start); a
/// halving remembers the next number, so the results of the items already
/// in flight then belong to the burst it answered.
struct Queue {
    state: Mutex<QueueState>,
    changed: Condvar,
    ceiling: usize,
}

struct QueueState {
    pending: VecDeque<usize>,
    in_flight: usize,
    window: usize,
    successes: usize,
    /// How many items were taken so far: the next take's start number.
    started: u64,
    /// `started` at the last halving: throttled results of items started
    /// before it are of that burst and halve nothing.
    halved_at: u64,
    requeues: Vec<u32>,
    /// Throttled results since the last success, across the batch.
    throttled_in_a_row: u32,
    /// A worker panicked: the others stop taking work (the scope re-raises it).
    abandoned: bool,
}

impl Queue {
    fn new(n: usize, ceiling: usize) -> Queue {
        Queue {
            state: Mutex::new(QueueState {
                pending: (0..n).collect(),
                in_flight: 0,
                window: ceiling.max(1),
                successes: 0,
                started: 0,
                halved_at: 0,
                requeues: vec![0; n],
                throttled_in_a_row: 0,
                abandoned: false,
            }),
            changed: Condvar::new(),
            ceiling: ceiling.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The next index to work on once the window allows, with its start
    /// number; `None` when the queue is empty and nothing in flight can come
    /// back to it.
    fn take(&self) -> Option<(usize, u64)> {
        let mut q = self.lock();
        loop {
            if q.abandoned {
                return None;
            }
            if q.in_flight < q.window {
                if let Some(i) = q.pending.pop_front() {
                    q.in_flight += 1;
                    q.started += 1;
                    return Some((i, q.started - 1));
                }
            }
            if q.pending.is_empty() && q.in_flight == 0 {
                return None;
            }
            q = self.changed.wait(q).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Records the end of item `i`, taken as start number `start`:
    /// `Some(window)` when it goes back in the queue (throttled, re-queues
    /// left), `None` when its result is final.
    fn finish(&self, i: usize, start: u64, throttled: bool) -> Option<usize> {
        let mut q = self.lock();
        q.in_flight -= 1;
        if throttled {
            if start >= q.halved_at {
                q.window = (q.window / 2).max(1);
                q.successes = 0;
                q.halved_at = q.started;
            }
            q.throttled_in_a_row += 1;
        } else {
            q.throttled_in_a_row = 0;
            q.successes += 1;
            if q.successes >= q.window {
                q.window = (q.window + 1).min(self.ceiling);
                q.successes = 0;
            }
        }
        let requeue =
            throttled && q.requeues[i] < MAX_REQUEUES && q.throttled_in_a_row <= MAX_REQUEUES;
        if requeue {
            q.requeues[i] += 1;
            q.pending.push_back(i);
        }
        let window = q.window;
        drop(q);
        self.changed.notify_all();
        requeue.then_some(window)
    }

    /// One worker's loop: take, work, keep or re-queue, until nothing is left.
    fn work<T, R>(
        &self,
        items: &[T],
        work: &impl Fn(&T) -> R,
        throttle: &Throttle<R>,
        mut keep: impl FnMut(usize, R),
    ) {
        while let Some((i, start)) = self.take() {
            let guard = Abandon(self);
            let r = work(&items[i]);
            std::mem::forget(guard);
            match self.finish(i, start, (throttle.is_throttled)(&r)) {
                Some(window) => (throttle.on_requeue)(i, window),
                None => keep(i, r),
            }
        }
    }
}

/// Dropped only while a worker unwinds from a panic in `work`: wakes the
/// other workers so they stop instead of waiting for its item forever.
struct Abandon<'a>(&'a Queue);

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        self.0.lock().abandoned = true;
        self.0.changed.notify_all();
    }
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

    #[test]
    fn adaptive_map_requeues_throttled_items_and_keeps_each_once() {
        use std::sync::atomic::{AtomicU32, Ordering};
        // Items 3 and 7 are throttled on their first two tries; 9 always is.
        let items: Vec<usize> = (0..10).collect();
        let tries: Vec<AtomicU32> = (0..10).map(|_| AtomicU32::new(0)).collect();
        let requeued = AtomicU32::new(0);
        let throttle = Throttle {
            is_throttled: Box::new(|r: &(usize, u32)| {
                (r.0 == 3 || r.0 == 7) && r.1 < 3 || r.0 == 9
            }),
            on_requeue: Box::new(|_, window| {
                assert!(window >= 1);
                requeued.fetch_add(1, Ordering::Relaxed);
            }),
        };
        for concurrency in [1, 4] {
            tries.iter().for_each(|t| t.store(0, Ordering::Relaxed));
            requeued.store(0, Ordering::Relaxed);
            let mut seen = [0; 10];
            let out = adaptive_map(
                concurrency,
                &items,
                |&i| (i, tries[i].fetch_add(1, Ordering::Relaxed) + 1),
                &throttle,
                |i, _| seen[i] += 1,
            );
            assert!(seen.iter().all(|&n| n == 1));
            assert_eq!(out.iter().map(|r| r.0).collect::<Vec<_>>(), items);
            assert_eq!((out[3].1, out[7].1, out[0].1), (3, 3, 1));
            assert_eq!(out[9].1, MAX_REQUEUES + 1, "kept after the last re-queue");
            assert_eq!(requeued.load(Ordering::Relaxed), 2 + 2 + MAX_REQUEUES);
        }
    }

    #[test]
    fn eight_simultaneous_429s_halve_the_window_once() {
        use std::sync::{Barrier, Mutex};
        // The first 8 tries are in flight together and all throttled (one
        // burst): the window goes from 8 to 4, not to 1 (8, 4, 2, 1, 1, ...).
        let items: Vec<usize> = (0..16).collect();
        let together = Barrier::new(8);
        let windows = Mutex::new(Vec::new());
        let throttle = Throttle {
            is_throttled: Box::new(|throttled: &bool| *throttled),
            on_requeue: Box::new(|_, window| windows.lock().unwrap().push(window)),
        };
        let tries = Mutex::new(0);
        adaptive_map(
            8,
            &items,
            |_| {
                let first = {
                    let mut n = tries.lock().unwrap();
                    *n += 1;
                    *n <= 8
                };
                if first {
                    together.wait();
                }
                first
            },
            &throttle,
            |_, _| {},
        );
        drop(throttle);
        // Later items may succeed while the burst's last answers come back,
        // growing the window again: never below 4, that is the point.
        let windows = windows.into_inner().unwrap();
        assert_eq!(
            (windows.len(), windows.iter().min()),
            (8, Some(&4)),
            "{windows:?}"
        );
    }

    #[test]
    fn a_spent_quota_stops_the_requeues_after_a_run_of_throttled_results() {
        use std::sync::atomic::{AtomicU32, Ordering};
        // Every try of every item is throttled: MAX_REQUEUES re-queues in
        // all, then each item keeps its result, at any concurrency.
        let items: Vec<usize> = (0..40).collect();
        let throttle = Throttle {
            is_throttled: Box::new(|_: &()| true),
            on_requeue: Box::new(|_, _| {}),
        };
        for concurrency in [1, 4] {
            let tries = AtomicU32::new(0);
            let out = adaptive_map(
                concurrency,
                &items,
                |_| {
                    tries.fetch_add(1, Ordering::Relaxed);
                },
                &throttle,
                |_, _| {},
            );
            assert_eq!(out.len(), items.len());
            assert_eq!(tries.into_inner(), items.len() as u32 + MAX_REQUEUES);
        }
    }
}
