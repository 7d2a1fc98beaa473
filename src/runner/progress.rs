//! Turns run events into indicatif bars on stderr (one per model plus an overall bar with ETA, live
//! pass count and calls per second), or into plain log lines when stderr is not a terminal, when
//! `NO_COLOR`/`TERM=dumb` is set, or with `--no-progress`.

use crate::runner::event::{EventSink, RunEvent};
use crate::runner::record::Outcome;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Instant;

/// Whether bars should be drawn.
pub fn bars_wanted(no_progress: bool) -> bool {
    let dumb =
        std::env::var_os("NO_COLOR").is_some() || std::env::var("TERM").is_ok_and(|t| t == "dumb");
    !no_progress && !dumb && std::io::stderr().is_terminal()
}

#[derive(Default)]
struct Tally {
    passes: u64,
    finished: u64,
    calls: u64,
    by_model: BTreeMap<String, (u64, u64)>,
}

/// The stderr sink of `passk run` and `passk calibrate`.
pub struct Progress {
    bars: Option<MultiProgress>,
    overall: ProgressBar,
    models: Mutex<BTreeMap<String, ProgressBar>>,
    tally: Mutex<Tally>,
    started: Instant,
    label: String,
    trial_lines: bool,
}

impl Progress {
    /// A sink drawing bars when `bars` is true, else printing plain lines (one per finished trial
    /// when `trial_lines`); `label` prefixes lines.
    pub fn new(bars: bool, label: &str, trial_lines: bool) -> Progress {
        let mp = bars.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        let overall = match &mp {
            Some(mp) => mp.add(ProgressBar::new(0).with_style(style("overall"))),
            None => ProgressBar::hidden(),
        };
        Progress {
            bars: mp,
            overall,
            models: Mutex::new(BTreeMap::new()),
            tally: Mutex::new(Tally::default()),
            started: Instant::now(),
            label: label.to_string(),
            trial_lines,
        }
    }

    fn line(&self, text: &str) {
        match &self.bars {
            Some(mp) => {
                let _ = mp.println(text);
            }
            None => crate::errln!("{text}"),
        }
    }

    /// Clears the bars.
    pub fn finish(&self) {
        self.overall.finish_and_clear();
        if let Ok(models) = self.models.lock() {
            for bar in models.values() {
                bar.finish_and_clear();
            }
        }
    }
}

fn style(kind: &str) -> ProgressStyle {
    let template = if kind == "overall" {
        "{prefix:>18} [{elapsed_precise}] {bar:30.cyan/blue} {pos}/{len} ETA {eta} {msg}"
    } else {
        "{prefix:>18} {bar:30.green/white} {pos}/{len} {msg}"
    };
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

impl EventSink for Progress {
    fn emit(&self, event: RunEvent) {
        match event {
            RunEvent::Planned {
                per_model,
                already_done,
            } => {
                let total: u64 = per_model.iter().map(|(_, n)| n).sum();
                self.overall.set_length(total);
                self.overall.set_prefix("all models");
                if let (Some(mp), Ok(mut models)) = (&self.bars, self.models.lock()) {
                    for (model, n) in &per_model {
                        let bar = mp.add(ProgressBar::new(*n).with_style(style("model")));
                        bar.set_prefix(model.clone());
                        models.insert(model.clone(), bar);
                    }
                }
                let resumed = if already_done > 0 {
                    format!(" ({already_done} already on disk, resuming)")
                } else {
                    String::new()
                };
                self.line(&format!("{}: {total} trials to run{resumed}", self.label));
            }
            RunEvent::ModelStarted { model } => {
                self.line(&format!("{}: model {model}", self.label))
            }
            RunEvent::TrialFinished {
                key,
                outcome,
                calls,
            } => {
                let Ok(mut t) = self.tally.lock() else { return };
                t.finished += 1;
                t.calls += u64::from(calls);
                let pass = u64::from(outcome == Outcome::Pass);
                t.passes += pass;
                let m = t.by_model.entry(key.model.clone()).or_default();
                m.0 += pass;
                m.1 += 1;
                let (mp, mn) = *m;
                let rate = t.calls as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
                let msg = format!("pass {}/{} · {rate:.1} calls/s", t.passes, t.finished);
                self.overall.set_message(msg);
                self.overall.inc(1);
                if let Ok(models) = self.models.lock()
                    && let Some(bar) = models.get(&key.model)
                {
                    bar.set_message(format!("pass {mp}/{mn}"));
                    bar.inc(1);
                }
                if self.bars.is_none() && self.trial_lines {
                    let word = match outcome {
                        Outcome::Pass => "pass",
                        Outcome::ModelFail => "fail",
                        Outcome::TransportFail => "transport failure",
                        Outcome::ProtocolFail => "protocol failure",
                    };
                    crate::errln!(
                        "{}: {} {} {} trial {}: {word} ({calls} calls)",
                        self.label,
                        key.model,
                        key.suite,
                        key.task,
                        key.trial
                    );
                }
            }
            RunEvent::Warning(w) => self.line(&format!("warning: {w}")),
            RunEvent::Info(i) => self.line(&format!("{}: {i}", self.label)),
        }
    }
}
