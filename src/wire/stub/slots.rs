//! Concurrency as Ollama schedules it (v0.33): each loaded model serves `num_parallel` requests at
//! once (`OLLAMA_NUM_PARALLEL`, default 1) and further requests wait for a slot without limit (the
//! runner's semaphore, `llm/llama_server.go`, `sem.Acquire` in `Chat`/`Completion`); requests that
//! arrive while the model is still loading wait in the scheduler's pending queue, which holds
//! `max_queue` of them (`OLLAMA_MAX_QUEUE`, default 512); one more is refused with 503 and
//! `ErrMaxQueue` (`server/sched.go` `getRunner`, `server/routes.go` `handleScheduleError`).
//!
//! Time in the pending queue counts in `load_duration` (it ends at `checkpointLoaded`); time
//! waiting for a slot counts only in `total_duration`.

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

/// The slots and the pending queue of every model.
pub(crate) struct Slots {
    num_parallel: usize,
    max_queue: usize,
    models: Mutex<HashMap<String, ModelSlots>>,
}

/// One model's runner: its slots, the load in progress and who waits for it.
struct ModelSlots {
    slots: Arc<Semaphore>,
    loading_until: Option<Instant>,
    pending: Arc<Mutex<usize>>,
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
    pub fn new(num_parallel: usize, max_queue: usize) -> Slots {
        Slots {
            num_parallel: num_parallel.max(1),
            max_queue,
            models: Mutex::new(HashMap::new()),
        }
    }

    /// Schedules a request for model `key` arriving at `now`: a cold model starts loading for
    /// `cold_load`; while a load is in progress the request joins the pending queue (refused when
    /// it is full) until the load ends. Returns how long the request waits before its model is
    /// ready (the load, or the rest of the load in progress, plus `warm_load`).
    pub fn schedule(
        &self,
        key: &str,
        now: Instant,
        cold: bool,
        cold_load: Duration,
        warm_load: Duration,
    ) -> Result<(Duration, Pending), QueueFull> {
        let mut models = self.models.lock().unwrap_or_else(PoisonError::into_inner);
        let m = self.model(&mut models, key);
        let loading = m.loading_until.filter(|&u| u > now);
        if let Some(until) = loading {
            let mut n = m.pending.lock().unwrap_or_else(PoisonError::into_inner);
            if *n >= self.max_queue {
                return Err(QueueFull);
            }
            *n += 1;
            let place = Pending {
                count: Some(Arc::clone(&m.pending)),
            };
            return Ok((until - now + warm_load, place));
        }
        let none = Pending { count: None };
        if cold {
            m.loading_until = now.checked_add(cold_load);
            return Ok((cold_load, none));
        }
        Ok((warm_load, none))
    }

    /// The runner of model `key`, created on first use.
    fn model<'a>(
        &self,
        models: &'a mut HashMap<String, ModelSlots>,
        key: &str,
    ) -> &'a mut ModelSlots {
        models.entry(key.to_string()).or_insert_with(|| ModelSlots {
            slots: Arc::new(Semaphore::new(self.num_parallel)),
            loading_until: None,
            pending: Arc::new(Mutex::new(0)),
            use_: Arc::default(),
        })
    }

    /// Waits for one of the model's slots (scheduled first); the slot is held until it drops.
    pub async fn acquire(&self, key: &str) -> Slot {
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
        }
    }

    /// The most slots of model `key` busy at once so far.
    pub fn peak(&self, key: &str) -> usize {
        let models = self.models.lock().unwrap_or_else(PoisonError::into_inner);
        models
            .get(key)
            .map_or(0, |m| m.use_.peak.load(Ordering::SeqCst))
    }

    /// Requests of model `key` now waiting in the pending queue for its load to end.
    pub fn pending(&self, key: &str) -> usize {
        let models = self.models.lock().unwrap_or_else(PoisonError::into_inner);
        models.get(key).map_or(0, |m| {
            *m.pending.lock().unwrap_or_else(PoisonError::into_inner)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLD: Duration = Duration::from_millis(100);
    const WARM: Duration = Duration::from_millis(1);

    #[test]
    fn requests_during_a_load_queue_up_to_max_queue_then_are_refused() {
        let s = Slots::new(1, 2);
        let t0 = Instant::now();
        let (first, _p0) = s.schedule("m", t0, true, COLD, WARM).unwrap();
        assert_eq!(first, COLD);
        let later = t0 + Duration::from_millis(40);
        let (second, p1) = s.schedule("m", later, false, COLD, WARM).unwrap();
        assert_eq!(
            second,
            Duration::from_millis(61),
            "rest of the load + warm load"
        );
        let (_, _p2) = s.schedule("m", later, false, COLD, WARM).unwrap();
        assert!(s.schedule("m", later, false, COLD, WARM).is_err());
        drop(p1);
        assert!(
            s.schedule("m", later, false, COLD, WARM).is_ok(),
            "a place freed"
        );
        // Another model has its own queue; once loaded, nobody queues.
        assert!(s.schedule("other", later, false, COLD, WARM).is_ok());
        let after = t0 + COLD;
        for _ in 0..5 {
            assert_eq!(s.schedule("m", after, false, COLD, WARM).unwrap().0, WARM);
        }
    }

    #[test]
    fn max_queue_zero_refuses_anyone_arriving_during_a_load() {
        let s = Slots::new(1, 0);
        let t0 = Instant::now();
        assert!(s.schedule("m", t0, true, COLD, WARM).is_ok());
        assert_eq!(
            s.schedule("m", t0, false, COLD, WARM).unwrap_err(),
            QueueFull
        );
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
