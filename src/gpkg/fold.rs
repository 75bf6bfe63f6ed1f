//! Catchments folded into basins as they are read: the edge counts of their
//! union ([`Dissolver`]) and their box, never the layer itself.

use super::reader::GeoPackage;
use crate::collection::Collection;
use crate::feature::union_bbox;
use crate::table::dissolve::{Dissolver, Scratch};
use crate::table::{Column, Table};
use crate::{Error, Result};
use std::sync::Arc;

/// Catchments per batch when they are only folded.
const CATCHMENT_BATCH: usize = 16_384;

/// The union of some polygons being built, and their box. Owns its counts.
#[derive(Default)]
pub struct Fold {
    /// The edge counts of the polygons added.
    pub dissolver: Dissolver,
    /// The box around them; `None` while none has a geometry.
    pub bbox: Option<[f64; 4]>,
}

impl Fold {
    /// Adds the rows `rows` of `batch`.
    fn add(&mut self, batch: &Table, rows: &[usize]) {
        let g = batch.geometries();
        let boxes = rows.iter().filter_map(|&r| g.bbox(r));
        self.bbox = self.bbox.into_iter().chain(boxes).reduce(union_bbox);
        self.dissolver.add_rows(g, rows);
    }
}

/// The key column of a batch of catchments read by id: the first of
/// `featureid`, `nhdplusid` and `comid` it has (the reader's order).
pub fn catchment_key(batch: &Table) -> Option<Column<'_>> {
    ["featureid", "nhdplusid", "comid"]
        .into_iter()
        .find_map(|name| batch.column(name))
}

/// Up to this many folds (a plot's basins, one per outlet, usually one)
/// are counted on one thread beside the reader; more (a file's basin
/// parts, hundreds) on up to [`FOLDERS`].
const FOLDS_ON_ONE_THREAD: usize = 2;

/// For one batch of catchments, the rows each fold takes (a row may go to
/// several folds, or none).
pub type Route<'a> = dyn Fn(&Table) -> Vec<Vec<usize>> + 'a;

/// A batch of catchments and the rows each fold takes of it.
type Routed = (Table, Vec<Vec<usize>>);

/// Threads that count the batches when there are more folds than
/// [`FOLDS_ON_ONE_THREAD`] (a file's basin parts), at most: fold `i` is
/// counted by thread `i % folders`, each batch by all of them at once.
const FOLDERS: usize = 2;

impl GeoPackage {
    /// `folds` folds of the catchments whose `featureid` is in `ids`: read
    /// a batch at a time on this thread, each batch's rows given to the
    /// folds `route` names (routed once, on this thread) and counted on
    /// other threads (up to [`FOLDERS`] of `threads` for more folds than
    /// [`FOLDS_ON_ONE_THREAD`], each with its share of the folds) while
    /// the next batch is read. Each fold takes the same rows in the same
    /// order whatever the threads. The layer is never held, only a batch
    /// or two.
    pub fn fold_catchments(
        &self,
        ids: &[i64],
        folds: usize,
        route: &Route,
        threads: usize,
    ) -> Result<Vec<Fold>> {
        let folders = if folds > FOLDS_ON_ONE_THREAD {
            threads.clamp(1, FOLDERS)
        } else {
            1
        };
        // Each folded batch's buffers go back to be filled by a later one.
        let (give_back, spare) = std::sync::mpsc::channel();
        std::thread::scope(|s| -> Result<_> {
            let (mut sends, mut folders_done) = (Vec::new(), Vec::new());
            for k in 0..folders {
                let (send, receive) = std::sync::mpsc::sync_channel::<Arc<Routed>>(2);
                sends.push(send);
                let give_back = give_back.clone();
                folders_done.push(s.spawn(move || {
                    let mut done: Vec<Fold> = (k..folds)
                        .step_by(folders)
                        .map(|_| Fold::default())
                        .collect();
                    // This thread's counting tables, lent to each fold in
                    // turn: hundreds of folds would each hold their own.
                    let mut scratch = Scratch::default();
                    for routed in receive {
                        let (batch, rows) = &*routed;
                        let shared = rows.iter().skip(k).step_by(folders);
                        for (fold, rows) in done.iter_mut().zip(shared) {
                            if !rows.is_empty() {
                                fold.dissolver.swap_scratch(&mut scratch);
                                fold.add(batch, rows);
                                fold.dissolver.swap_scratch(&mut scratch);
                            }
                        }
                        // The last folder done with the batch gives it back.
                        if let Some((batch, _)) = Arc::into_inner(routed) {
                            let _ = give_back.send(batch.into_geometries().recycle());
                        }
                    }
                    done
                }));
            }
            drop(give_back);
            let read =
                self.for_each_by_ids(Collection::Catchment, ids, CATCHMENT_BATCH, &mut |t| {
                    let rows = route(&t);
                    let t = Arc::new((t, rows));
                    for send in &sends {
                        send.send(Arc::clone(&t))
                            .map_err(|_| Error::Internal("the basin folder stopped".into()))?;
                    }
                    Ok(spare.try_recv().ok())
                });
            drop(sends);
            let mut shares: Vec<_> = (folders_done.into_iter())
                .map(|f| {
                    f.join()
                        .expect("the basin folder does not panic")
                        .into_iter()
                })
                .collect();
            let folded = (0..folds)
                .map(|i| shares[i % folders].next().expect("each fold once"))
                .collect();
            read.map(|()| folded)
        })
    }
}
