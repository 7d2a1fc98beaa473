//! Values read straight off the records, one per conversation or call, for the charts and checks
//! that a summary does not hold: latency per conversation, the GPU timeline, the grader digests.

use crate::analysis::figures::latency::RunningMean;
use crate::analysis::{CallTimes, Shape, Summary};
use crate::runner::record::{CallRecord, ConversationRecord, Manifest, RouterRecord};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A run with more timed calls than this draws its GPU timeline as this many stretches of
/// equal time rather than a point per call: a chart some hundreds of pixels wide shows far fewer, and
/// the timeline's memory no longer grows with the run.
pub const TIMELINE_POINTS: usize = 10_000;

/// One point of the GPU timeline: a call's mean utilization at its midpoint, or, for a run of
/// more than [`TIMELINE_POINTS`] timed calls, one model's calls whose midpoints fall in one
/// stretch of the run: their mean utilization at their mean midpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuPoint {
    /// Seconds since the run's first recorded call start.
    pub t_s: f64,
    /// Mean GPU utilization, percent (`None`: no sample in the calls' windows).
    pub util_pct: Option<f64>,
    /// Model that made the calls (one shared text per model).
    pub model: Arc<str>,
    /// Earliest start and latest end of the calls, seconds since the run's first call (for the
    /// loaded-model bands).
    pub span: (f64, f64),
    /// Calls with a utilization sample.
    pub calls_with_sample: usize,
}

/// Values read straight off the records, one per conversation or call, for the charts and checks
/// that a summary does not hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observations {
    /// By group key, then model: latency of each graded conversation (sum of its orchestrator
    /// calls' latency, seconds), sorted ascending; conversations without any latency are left out.
    pub conversation_latency: BTreeMap<String, BTreeMap<String, Vec<f64>>>,
    /// Every call with a start time, in time order (then by model), or each model's calls by
    /// stretch of the run ([`TIMELINE_POINTS`]); empty when no call has a GPU utilization reading
    /// (a run without GPU telemetry), as there is then nothing to draw.
    pub gpu_timeline: Vec<GpuPoint>,
    /// How long each stretch of the GPU timeline is, seconds, when it has stretches rather than
    /// a point per call.
    pub gpu_stretch_s: Option<f64>,
    /// Grader digests stamped on the records.
    pub record_grader_digests: BTreeSet<String>,
}

impl Observations {
    /// Reads the observations of these records, whose grader digests are `record_grader_digests`
    /// (the statistics drop each record's copy: see `analysis::Run::grader_digests`); groups are
    /// the configurations of [`Summary::groups`], keyed as the run's [`Shape`] keys them.
    pub fn of(
        manifest: &Manifest,
        summary: &Summary,
        conversations: &[ConversationRecord],
        router: &[RouterRecord],
        record_grader_digests: BTreeSet<String>,
    ) -> Observations {
        let shape = Shape::of(manifest, conversations, router);
        let calls = || {
            let calls = conversations.iter().flat_map(|c| c.calls.iter());
            calls.chain(router.iter().map(|r| &r.call))
        };
        let gpu = calls().any(CallRecord::has_gpu_utilization);
        let mut times = CallTimes::default();
        calls().for_each(|c| times.add(c));
        let mut sums = ObservationSums::new(gpu, times);
        sums.add_conversations(&shape, &conversations.iter().collect::<Vec<_>>());
        sums.add_router(&router.iter().collect::<Vec<_>>());
        sums.observations(summary, record_grader_digests)
    }
}

/// [`Observations`] fed records a cell, or a task of one, at a time, in any order: each graded
/// conversation's latency by configuration and model, and, when the run has GPU utilization
/// readings, its GPU timeline.
#[derive(Debug, Clone)]
pub struct ObservationSums {
    gpu: bool,
    latency: BTreeMap<String, BTreeMap<String, Vec<f64>>>,
    timeline: Timeline,
    models: BTreeMap<String, Arc<str>>,
}

/// The GPU timeline as it is fed.
#[derive(Debug, Clone)]
enum Timeline {
    /// (start, wall, utilization, model) of every call with a start time.
    Calls(Vec<(u64, f64, Option<f64>, Arc<str>)>),
    /// Each model's calls by the stretch of the run their midpoint falls in: `width_ms` wide
    /// from `first_ms`.
    Stretches {
        first_ms: u64,
        width_ms: f64,
        stretches: BTreeMap<(usize, Arc<str>), Stretch>,
    },
}

/// One model's calls in one stretch of the run.
#[derive(Debug, Clone)]
struct Stretch {
    midpoint_ms: RunningMean,
    util: RunningMean,
    span_ms: (f64, f64),
}

impl ObservationSums {
    /// Sums for a run with (`gpu`) or without GPU utilization readings, whose calls ran at
    /// `times`: without readings no call is kept, as there is then no timeline to draw; with
    /// more than [`TIMELINE_POINTS`] timed calls, the timeline keeps that many stretches.
    pub fn new(gpu: bool, times: CallTimes) -> ObservationSums {
        let timeline = match times.first_ms {
            Some(first_ms) if gpu && times.calls > TIMELINE_POINTS => Timeline::Stretches {
                first_ms,
                width_ms: (times.last_end_ms - first_ms as f64).max(1.0) / TIMELINE_POINTS as f64,
                stretches: BTreeMap::new(),
            },
            _ => Timeline::Calls(Vec::new()),
        };
        ObservationSums {
            gpu,
            latency: BTreeMap::new(),
            timeline,
            models: BTreeMap::new(),
        }
    }

    /// Adds conversation records of the run of this shape.
    pub fn add_conversations(&mut self, shape: &Shape, conversations: &[&ConversationRecord]) {
        for c in conversations {
            self.add_calls(&c.model, c.calls.iter());
            if !c.outcome.is_graded() {
                continue;
            }
            let lats: Vec<f64> = c
                .orchestrator_calls()
                .filter_map(|x| x.latency_s())
                .collect();
            if lats.is_empty() {
                continue;
            }
            let total: f64 = lats.iter().sum();
            let by_model = self.latency.entry(shape.key(c)).or_default();
            by_model.entry(c.model.clone()).or_default().push(total);
        }
    }

    /// Adds standalone router records.
    pub fn add_router(&mut self, router: &[&RouterRecord]) {
        for r in router {
            self.add_calls(&r.model, std::iter::once(&r.call));
        }
    }

    fn add_calls<'c>(&mut self, model: &str, calls: impl Iterator<Item = &'c CallRecord>) {
        if !self.gpu {
            return;
        }
        let shared = self
            .models
            .entry(model.to_string())
            .or_insert_with(|| model.into());
        for x in calls {
            if let Some(start) = x.started_unix_ms.get() {
                let util = x.gpu.as_ref().and_then(|g| g.util_mean);
                let wall = x.wall_s.get().unwrap_or(0.0).max(0.0);
                self.timeline.add((start, wall, util, shared.clone()));
            }
        }
    }

    /// The observations of the records added, for this summary of them.
    pub fn observations(
        self,
        summary: &Summary,
        record_grader_digests: BTreeSet<String>,
    ) -> Observations {
        let mut latency = self.latency;
        let conversation_latency = summary
            .groups
            .keys()
            .map(|key| {
                let mut by_model = latency.remove(key).unwrap_or_default();
                for v in by_model.values_mut() {
                    v.sort_by(f64::total_cmp);
                }
                (key.clone(), by_model)
            })
            .collect();
        let gpu_stretch_s = match &self.timeline {
            Timeline::Stretches { width_ms, .. } => Some(width_ms / 1000.0),
            Timeline::Calls(_) => None,
        };
        Observations {
            conversation_latency,
            gpu_timeline: self.timeline.points(),
            gpu_stretch_s,
            record_grader_digests,
        }
    }
}

impl Timeline {
    /// Adds a call: (start, wall, utilization, model).
    fn add(&mut self, call: (u64, f64, Option<f64>, Arc<str>)) {
        match self {
            Timeline::Calls(calls) => calls.push(call),
            Timeline::Stretches {
                first_ms,
                width_ms,
                stretches,
            } => {
                let (start, wall, util, model) = call;
                // A call that started before the first noted one (none can) counts from it.
                let from = start.saturating_sub(*first_ms) as f64;
                let to = from + 1000.0 * wall;
                let mid = (from + to) / 2.0;
                let at = ((mid / *width_ms) as usize).min(TIMELINE_POINTS - 1);
                let s = stretches.entry((at, model)).or_insert(Stretch {
                    midpoint_ms: RunningMean::default(),
                    util: RunningMean::default(),
                    span_ms: (from, to),
                });
                s.midpoint_ms.add(mid);
                util.inspect(|&u| s.util.add(u));
                s.span_ms = (s.span_ms.0.min(from), s.span_ms.1.max(to));
            }
        }
    }

    /// The timeline's points in time order (then by model), in seconds since the first call.
    fn points(self) -> Vec<GpuPoint> {
        match self {
            Timeline::Calls(calls) => every_call(calls),
            Timeline::Stretches { stretches, .. } => {
                let mut points: Vec<GpuPoint> = stretches
                    .into_iter()
                    .map(|((_, model), s)| GpuPoint {
                        t_s: s.midpoint_ms.mean().unwrap_or(0.0) / 1000.0,
                        util_pct: s.util.mean(),
                        model,
                        span: (s.span_ms.0 / 1000.0, s.span_ms.1 / 1000.0),
                        calls_with_sample: s.util.count(),
                    })
                    .collect();
                points.sort_by(|a, b| a.t_s.total_cmp(&b.t_s).then(a.model.cmp(&b.model)));
                points
            }
        }
    }
}

/// The calls with a start time, in time order (then by model), placed in seconds since the first.
fn every_call(mut raw: Vec<(u64, f64, Option<f64>, Arc<str>)>) -> Vec<GpuPoint> {
    raw.sort_by(|a, b| {
        (a.0, &a.3)
            .cmp(&(b.0, &b.3))
            .then(a.1.total_cmp(&b.1))
            .then(a.2.unwrap_or(-1.0).total_cmp(&b.2.unwrap_or(-1.0)))
    });
    let Some(first) = raw.first().map(|r| r.0) else {
        return Vec::new();
    };
    raw.into_iter()
        .map(|(start, wall, util, model)| {
            let from = (start - first) as f64 / 1000.0;
            GpuPoint {
                t_s: from + wall / 2.0,
                util_pct: util,
                model,
                span: (from, from + wall),
                calls_with_sample: usize::from(util.is_some()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{conversation, timed_call};
    use crate::runner::record::GpuWindow;

    #[test]
    fn the_gpu_timeline_holds_every_timed_call_once_any_has_a_reading() {
        let mut recs: Vec<ConversationRecord> = (0..3)
            .map(|t| conversation("m", "T1", t, true, vec![timed_call(10, 5, 1.0)]))
            .collect();
        for (i, c) in recs.iter_mut().enumerate() {
            c.calls[0].started_unix_ms = Some(1_000 * i as u64).into();
        }
        let timeline = |recs: &[ConversationRecord]| {
            let s = crate::analysis::summarize(
                &Manifest::default(),
                recs,
                &[],
                &crate::analysis::AnalysisOptions::default(),
            );
            Observations::of(&Manifest::default(), &s, recs, &[], BTreeSet::new()).gpu_timeline
        };
        assert!(timeline(&recs).is_empty(), "no reading: no timeline");
        recs[2].calls[0].gpu = Some(Box::new(GpuWindow {
            samples: 1,
            util_mean: Some(40.0),
            ..GpuWindow::default()
        }));
        let timeline = timeline(&recs);
        let utils: Vec<Option<f64>> = timeline.iter().map(|p| p.util_pct).collect();
        assert_eq!(utils, [None, None, Some(40.0)]);
        assert_eq!(timeline[2].span, (2.0, 3.0));
    }

    #[test]
    fn a_long_run_draws_its_gpu_timeline_in_stretches_that_keep_every_call() {
        // Two models one after the other, each call 1 s, starting every 0.5 s.
        let calls = TIMELINE_POINTS + 1;
        let recs: Vec<ConversationRecord> = (0..calls)
            .map(|i| {
                let model = if i < calls / 2 { "a" } else { "b" };
                let task = format!("T{}", i % 50);
                let mut c = conversation(
                    model,
                    &task,
                    (i / 50) as u32,
                    true,
                    vec![timed_call(1, 1, 1.0)],
                );
                c.calls[0].started_unix_ms = Some(5_000 + 500 * i as u64).into();
                c.calls[0].gpu = (i % 3 != 0).then(|| {
                    Box::new(GpuWindow {
                        samples: 1,
                        util_mean: Some((i % 100) as f64),
                        ..GpuWindow::default()
                    })
                });
                c
            })
            .collect();
        let s = crate::analysis::summarize(
            &Manifest::default(),
            &recs,
            &[],
            &crate::analysis::AnalysisOptions {
                resamples: 10,
                ..crate::analysis::AnalysisOptions::default()
            },
        );
        let o = Observations::of(&Manifest::default(), &s, &recs, &[], BTreeSet::new());
        let points = &o.gpu_timeline;
        assert!(
            points.len() <= TIMELINE_POINTS + 1,
            "{} points",
            points.len()
        );
        assert!(
            points.len() > TIMELINE_POINTS / 2,
            "{} points",
            points.len()
        );
        let width = o.gpu_stretch_s.expect("stretches");
        assert!((width - (0.5 * (calls - 1) as f64 + 1.0) / TIMELINE_POINTS as f64).abs() < 1e-9);
        let sampled: usize = points.iter().map(|p| p.calls_with_sample).sum();
        assert_eq!(sampled, (0..calls).filter(|i| i % 3 != 0).count());
        assert!(
            points.windows(2).all(|w| w[0].t_s <= w[1].t_s),
            "in time order"
        );
        let span = |m: &str| {
            let mine = points.iter().filter(|p| &*p.model == m);
            mine.fold((f64::MAX, f64::MIN), |(a, b), p| {
                (a.min(p.span.0), b.max(p.span.1))
            })
        };
        let half = (calls / 2) as f64;
        assert_eq!(span("a"), (0.0, 0.5 * (half - 1.0) + 1.0));
        assert_eq!(span("b"), (0.5 * half, 0.5 * (calls - 1) as f64 + 1.0));
        let weighted: f64 = points
            .iter()
            .filter_map(|p| Some(p.util_pct? * p.calls_with_sample as f64))
            .sum();
        let expected: f64 = (0..calls)
            .filter(|i| i % 3 != 0)
            .map(|i| (i % 100) as f64)
            .sum();
        assert!((weighted - expected).abs() < 1e-6 * expected);
    }
}
