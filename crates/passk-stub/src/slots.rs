//! Concurrency as Ollama schedules it (v0.33): a request for a model that is loaded gets its
//! runner at once (`server/sched.go` `getRunner`: `s.loaded` holds it and `needsReload` says no);
//! every other request passes through the scheduler's one pending queue, shared by all models (a
//! single `pendingReqCh` buffered to `max_queue`, `OLLAMA_MAX_QUEUE`, default 512; one more is
//! refused with 503 and `ErrMaxQueue`, `server/routes.go` `handleScheduleError`).
//! `processPending` takes the queued requests one at a time, in order: one whose model has been
//! loaded meanwhile gets its runner at once, one for a cold model has it loaded first, and nothing
//! behind it is scheduled until that load ends, so models load one at a time and a second cold
//! model's wait includes the first one's load. A request for the model being loaded waits in the
//! queue too: Ollama's `load` puts the runner in `s.loaded` once `llama.Load` returns, and
//! `llamaServerRunner.Load` (`llm/llama_server.go`) waits for llama-server to answer first.
//! Each loaded model then serves `num_parallel` requests at once (default 1,
//! `OLLAMA_NUM_PARALLEL`) and further requests wait for a slot without limit (the runner's
//! semaphore, `llm/llama_server.go`, `sem.Acquire` in `Chat`/`Completion`).
//!
//! Time in the pending queue and the load count in `load_duration` (it ends at `checkpointLoaded`);
//! time waiting for a slot counts only in `total_duration`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Ollama's `OLLAMA_NUM_PARALLEL` default (`envconfig/config.go`, v0.33).
pub const DEFAULT_NUM_PARALLEL: usize = 1;

/// Ollama's `OLLAMA_MAX_QUEUE` default (`envconfig/config.go`).
pub const DEFAULT_MAX_QUEUE: usize = 512;

/// Ollama's `ErrMaxQueue` text, answered with HTTP 503 (two spaces after the period, as Ollama has it).
pub const MAX_QUEUE_ERROR: &str =
    "server busy, please try again.  maximum pending requests exceeded";

/// The scheduler (its one pending queue) and the slots of every model.
pub(crate) struct Slots {
    num_parallel: usize,
    max_queue: usize,
    /// Held by the request `processPending` is scheduling (through its model's load, if cold);
    /// tokio's mutex is fair, so the queue is served in arrival order.
    scheduler: tokio::sync::Mutex<()>,
    /// Requests waiting in the pending queue.
    pending: Arc<Mutex<usize>>,
    models: Mutex<HashMap<String, ModelSlots>>,
}

/// One model's runner: its slots and how busy they are.
struct ModelSlots {
    slots: Arc<Semaphore>,
    use_: Arc<Use>,
}

/// How many slots of a model are busy, and the most that ever were at once.
#[derive(Debug, Default)]
struct Use {
    busy: AtomicUsize,
    peak: AtomicUsize,
}

/// One of a model's slots, held while the request generates; dropping it frees the slot.
#[derive(Debug)]
pub(crate) struct Slot {
    _permit: OwnedSemaphorePermit,
    use_: Arc<Use>,
    /// The request's use of the model, which ends with its reply, as the slot does.
    in_use: Option<super::catalog::InUse>,
}

impl Slot {
    /// The slot, also holding the request's use of its model until it is released.
    pub(crate) fn holding(mut self, in_use: Option<super::catalog::InUse>) -> Slot {
        self.in_use = in_use;
        self
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.use_.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A request's place in the pending queue while its model loads; leaving frees the place.
#[derive(Debug)]
pub(crate) struct Pending {
    count: Option<Arc<Mutex<usize>>>,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(c) = &self.count {
            let mut n = c.lock().unwrap_or_else(PoisonError::into_inner);
            *n = n.saturating_sub(1);
        }
    }
}

/// The pending queue is full: Ollama's 503.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct QueueFull;

impl Slots {
    /// Slots for `num_parallel` requests per model (0 counts as 1, as `max(n, 1)` in Ollama's
    /// `load`) and a pending queue of `max_queue`.
    pub(super) fn new(num_parallel: usize, max_queue: usize) -> Slots {
        Slots {
            num_parallel: num_parallel.max(1),
            max_queue,
            scheduler: tokio::sync::Mutex::new(()),
            pending: Arc::new(Mutex::new(0)),
            models: Mutex::new(HashMap::new()),
        }
    }

    /// Schedules a request arriving at `entry`: it waits in the pending queue (refused when the
    /// queue is full) while the scheduler serves the requests before it; then `load` says whether
    /// its model is cold, and a cold model loads for `cold_load` while the scheduler waits. Returns
    /// the request's load time: the wait in the queue, plus `cold_load` when it loaded the model,
    /// else `warm_load` (slept here before returning).
    pub(super) async fn schedule(
        &self,
        entry: Instant,
        cold_load: Duration,
        warm_load: Duration,
        room: impl Future<Output = Duration>,
        load: impl FnOnce() -> bool,
    ) -> Result<Duration, QueueFull> {
        let (turn, mut waited) = match self.scheduler.try_lock() {
            Ok(turn) => (turn, Duration::ZERO),
            Err(_) => {
                let place = self.join_queue()?;
                let turn = self.scheduler.lock().await;
                drop(place);
                (turn, entry.elapsed())
            }
        };
        // Room for the model (an eviction under OLLAMA_MAX_LOADED_MODELS) is made while this
        // request holds the scheduler, as `processPending` waits for the unload.
        waited += room.await;
        let cold = load();
        let own = if cold { cold_load } else { warm_load };
        if cold {
            tokio::time::sleep(cold_load).await;
        }
        drop(turn);
        if !cold {
            tokio::time::sleep(warm_load).await;
        }
        Ok(waited + own)
    }

    /// A place in the pending queue, or the 503 when it is full.
    fn join_queue(&self) -> Result<Pending, QueueFull> {
        let mut n = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if *n >= self.max_queue {
            return Err(QueueFull);
        }
        *n += 1;
        Ok(Pending {
            count: Some(Arc::clone(&self.pending)),
        })
    }

    /// The runner of model `key`, created on first use.
    fn model<'a>(
        &self,
        models: &'a mut HashMap<String, ModelSlots>,
        key: &str,
    ) -> &'a mut ModelSlots {
        models.entry(key.to_string()).or_insert_with(|| ModelSlots {
            slots: Arc::new(Semaphore::new(self.num_parallel)),
            use_: Arc::default(),
        })
    }

    /// Waits for one of the model's slots (scheduled first); the slot is held until it drops.
    pub(super) async fn acquire(&self, key: &str) -> Slot {
        let (slots, use_) = {
            let mut models = self.models.lock().unwrap_or_else(PoisonError::into_inner);
            let m = self.model(&mut models, key);
            (Arc::clone(&m.slots), Arc::clone(&m.use_))
        };
        let permit = slots
            .acquire_owned()
            .await
            .expect("stub slots are never closed");
        let busy = use_.busy.fetch_add(1, Ordering::SeqCst) + 1;
        use_.peak.fetch_max(busy, Ordering::SeqCst);
        Slot {
            _permit: permit,
            use_,
            in_use: None,
        }
    }

    /// The most slots of model `key` busy at once so far.
    pub(super) fn peak(&self, key: &str) -> usize {
        let models = self.models.lock().unwrap_or_else(PoisonError::into_inner);
        models
            .get(key)
            .map_or(0, |m| m.use_.peak.load(Ordering::SeqCst))
    }

    /// Requests now waiting in the pending queue, whatever their model.
    pub(super) fn pending(&self) -> usize {
        *self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLD: Duration = Duration::from_millis(100);
    const WARM: Duration = Duration::from_millis(1);

    #[tokio::test]
    async fn one_queue_for_every_model_up_to_max_queue_then_refused() {
        let s = Arc::new(Slots::new(1, 1));
        let t0 = Instant::now();
        let first = tokio::spawn({
            let s = Arc::clone(&s);
            async move {
                s.schedule(t0, COLD, WARM, async { Duration::ZERO }, || true)
                    .await
            }
        });
        while s.scheduler.try_lock().is_ok() {
            tokio::task::yield_now().await;
        }
        let queued = tokio::spawn({
            let s = Arc::clone(&s);
            async move {
                s.schedule(Instant::now(), COLD, WARM, async { Duration::ZERO }, || {
                    false
                })
                .await
            }
        });
        while s.pending() == 0 {
            tokio::task::yield_now().await;
        }
        // Another model's request finds the one queue full (sched.go: one pendingReqCh).
        let other = s
            .schedule(Instant::now(), COLD, WARM, async { Duration::ZERO }, || {
                true
            })
            .await;
        assert_eq!(other, Err(QueueFull));
        assert_eq!(first.await.unwrap(), Ok(COLD));
        let waited = queued.await.unwrap().unwrap();
        assert!(waited > WARM, "the queue's wait is load time: {waited:?}");
        assert_eq!(s.pending(), 0);
    }

    #[tokio::test]
    async fn max_queue_zero_refuses_anyone_arriving_during_a_load() {
        let s = Arc::new(Slots::new(1, 0));
        let t0 = Instant::now();
        let first = tokio::spawn({
            let s = Arc::clone(&s);
            async move {
                s.schedule(t0, COLD, WARM, async { Duration::ZERO }, || true)
                    .await
            }
        });
        while s.scheduler.try_lock().is_ok() {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            s.schedule(Instant::now(), COLD, WARM, async { Duration::ZERO }, || {
                false
            })
            .await,
            Err(QueueFull)
        );
        assert!(first.await.unwrap().is_ok());
    }

    #[tokio::test]
    async fn num_parallel_slots_are_held_until_released() {
        let s = Slots::new(2, 512);
        let a = s.acquire("m").await;
        let _b = s.acquire("m").await;
        let third = tokio::time::timeout(Duration::from_millis(20), s.acquire("m")).await;
        assert!(third.is_err(), "a third request waits");
        drop(a);
        let third = tokio::time::timeout(Duration::from_secs(5), s.acquire("m")).await;
        assert!(third.is_ok(), "a freed slot is taken");
        assert_eq!(s.peak("m"), 2);
        let zero = Slots::new(0, 512);
        let _one = zero.acquire("m").await;
        let again = tokio::time::timeout(Duration::from_millis(20), zero.acquire("m")).await;
        assert!(again.is_err(), "0 slots means 1, as in Ollama");
    }
}
