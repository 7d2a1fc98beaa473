//! Where and how a run's trials were played (metrics.md, "Servers and concurrency"): one row per
//! server and model (conversations, success, calls, time per call) and the timing of calls split
//! by the concurrency in force (`--parallel`). The agent's calls and router calls (in front of the
//! agent, or standalone) are counted and timed apart, as everywhere else. Tokens, success and pass^k do not depend on where or
//! how many at once a trial ran; latency does, so it is never pooled across concurrency levels here.

use crate::analysis::figures::latency::{SplitSums, mean, percentile};
use crate::runner::record::CallRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One trial as this analysis reads it: where it ran, with how many at once, and its calls.
#[derive(Debug, Clone)]
pub struct PlayedTrial<'a> {
    /// The server's base URL.
    pub host: &'a str,
    /// Conversations that server was asked to play at once.
    pub parallel: u32,
    /// Model tag.
    pub model: &'a str,
    /// A conversation (`true`) or a standalone router call.
    pub conversation: bool,
    /// Graded, and whether it passed (`None`: ended on the wire, never graded).
    pub passed: Option<bool>,
    /// The agent's model calls of the trial (none for a standalone router call).
    pub calls: Vec<&'a CallRecord>,
    /// Its router calls: in front of the agent, or the standalone router call.
    pub router_calls: Vec<&'a CallRecord>,
}

/// One server and model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerRow {
    /// The server's base URL.
    pub host: String,
    /// Model tag.
    pub model: String,
    /// Conversations played there (graded or not).
    pub conversations: usize,
    /// Conversations graded there.
    pub graded: usize,
    /// Graded conversations that passed.
    pub passes: usize,
    /// `passes / graded`; `None` when nothing was graded.
    pub success_rate: Option<f64>,
    /// The agent's model calls made there (router calls apart).
    pub calls: usize,
    /// Mean latency of those calls, seconds.
    pub time_per_call_s: Option<f64>,
    /// Mean model time of those calls (Ollama's prompt_eval + eval durations), seconds.
    pub model_s_per_call: Option<f64>,
    /// Router calls made there (in front of the agent and standalone).
    #[serde(default)]
    pub router_calls: usize,
    /// Mean latency of the router calls, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router_time_per_call_s: Option<f64>,
}

/// The calls of one model at one concurrency level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConcurrencyRow {
    /// Conversations played at once on their server.
    pub parallel: u32,
    /// Model tag.
    pub model: String,
    /// Router calls (`true`) or the agent's calls: never pooled.
    #[serde(default)]
    pub router: bool,
    /// Calls with a latency.
    pub calls: usize,
    /// Latency per call: mean, median and 95th percentile, seconds.
    pub latency_mean_s: Option<f64>,
    /// Median latency, seconds.
    pub latency_p50_s: Option<f64>,
    /// 95th percentile latency, seconds.
    pub latency_p95_s: Option<f64>,
    /// Mean model time per call (Ollama's durations), seconds.
    pub model_s_per_call: Option<f64>,
    /// Mean latency minus model time: the wire, loading and, under concurrency, waiting for a slot.
    pub overhead_s_per_call: Option<f64>,
    /// Output tokens per second of decoding, from Ollama's eval counts and durations.
    pub decode_tokens_per_s: Option<f64>,
}

/// Servers and concurrency of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// One row per server and model, servers in the order first seen, models in report order.
    pub servers: Vec<ServerRow>,
    /// One row per concurrency level, model and kind of call (agent, then router), levels
    /// ascending.
    pub by_concurrency: Vec<ConcurrencyRow>,
    /// The highest concurrency any trial ran at.
    pub max_parallel: u32,
}

impl Placement {
    /// Whether the run is worth the section: more than one server, or any trial played beside
    /// others.
    pub fn is_notable(&self) -> bool {
        is_notable_play(
            self.servers
                .iter()
                .map(|r| (r.host.as_str(), self.max_parallel)),
        )
    }
}

/// Whether trials played on these servers, each at this concurrency, are worth the section (see
/// [`Placement::is_notable`]): read before the placement is made, which costs a pass over every
/// call.
pub fn is_notable_play<'a>(played: impl IntoIterator<Item = (&'a str, u32)>) -> bool {
    let mut first = None;
    for (host, parallel) in played {
        if parallel > 1 || first.is_some_and(|h| h != host) {
            return true;
        }
        first = Some(host);
    }
    false
}

/// The placement of `trials`, models in the order of `models` (others after, by name).
pub fn placement(trials: &[PlayedTrial<'_>], models: &[String]) -> Placement {
    let mut fold = PlacementSums::default();
    for t in trials {
        fold.add(t);
    }
    fold.placement(models)
}

/// [`placement`] fed one trial at a time, in the order the trials are read: what each row keeps
/// (counts, and each call's latency and server durations for the means and percentiles).
#[derive(Debug, Clone, Default)]
pub struct PlacementSums {
    /// Servers in the order first seen.
    hosts: Vec<String>,
    /// By (server's place in `hosts`, model).
    by_server: BTreeMap<(usize, String), ServerSums>,
    /// By (concurrency, model, router calls).
    by_level: BTreeMap<(u32, String, bool), LevelSums>,
    max_parallel: Option<u32>,
}

#[derive(Debug, Clone, Default)]
struct ServerSums {
    conversations: usize,
    graded: usize,
    passes: usize,
    calls: usize,
    latencies: Vec<f64>,
    split: SplitSums,
    router_calls: usize,
    router_latencies: Vec<f64>,
}

#[derive(Debug, Clone, Default)]
struct LevelSums {
    latencies: Vec<f64>,
    split: SplitSums,
}

impl PlacementSums {
    /// Adds one trial.
    pub fn add(&mut self, t: &PlayedTrial<'_>) {
        let h = match self.hosts.iter().position(|h| h == t.host) {
            Some(h) => h,
            None => {
                self.hosts.push(t.host.to_string());
                self.hosts.len() - 1
            }
        };
        self.max_parallel = self.max_parallel.max(Some(t.parallel));
        let row = self.by_server.entry((h, t.model.to_string())).or_default();
        if t.conversation {
            row.conversations += 1;
            row.graded += usize::from(t.passed.is_some());
            row.passes += usize::from(t.passed == Some(true));
        }
        row.calls += t.calls.len();
        for c in &t.calls {
            row.latencies.extend(c.latency_s());
            row.split.add(c);
        }
        row.router_calls += t.router_calls.len();
        let router_latencies = t.router_calls.iter().filter_map(|c| c.latency_s());
        row.router_latencies.extend(router_latencies);
        for (router, calls) in [(false, &t.calls), (true, &t.router_calls)] {
            if calls.is_empty() {
                continue;
            }
            let level = (t.parallel, t.model.to_string(), router);
            let level = self.by_level.entry(level).or_default();
            for c in calls {
                level.latencies.extend(c.latency_s());
                level.split.add(c);
            }
        }
    }

    /// The placement of the trials added, models in the order of `models` (others after, by
    /// name).
    pub fn placement(&self, models: &[String]) -> Placement {
        let rank = |m: &str| models.iter().position(|x| x == m).unwrap_or(usize::MAX);
        let mut servers: Vec<(&(usize, String), &ServerSums)> = self.by_server.iter().collect();
        servers.sort_by_key(|((h, m), _)| (*h, rank(m), m.as_str()));
        let mut levels: Vec<(&(u32, String, bool), &LevelSums)> = self.by_level.iter().collect();
        levels.sort_by_key(|((p, m, router), _)| (*p, rank(m), m.as_str(), *router));
        Placement {
            servers: servers
                .into_iter()
                .map(|((h, model), row)| server_row(&self.hosts[*h], model, row))
                .collect(),
            by_concurrency: levels
                .into_iter()
                .map(|((parallel, model, router), level)| ConcurrencyRow {
                    router: *router,
                    ..concurrency_row(*parallel, model, level)
                })
                .collect(),
            max_parallel: self.max_parallel.unwrap_or(1),
        }
    }
}

fn server_row(host: &str, model: &str, row: &ServerSums) -> ServerRow {
    ServerRow {
        host: host.to_string(),
        model: model.to_string(),
        conversations: row.conversations,
        graded: row.graded,
        passes: row.passes,
        success_rate: (row.graded > 0).then(|| row.passes as f64 / row.graded as f64),
        calls: row.calls,
        time_per_call_s: mean(&row.latencies),
        model_s_per_call: row.split.split().map(|s| s.model_s_per_call),
        router_calls: row.router_calls,
        router_time_per_call_s: mean(&row.router_latencies),
    }
}

fn concurrency_row(parallel: u32, model: &str, level: &LevelSums) -> ConcurrencyRow {
    let latencies = &level.latencies;
    let split = level.split.split();
    ConcurrencyRow {
        parallel,
        model: model.to_string(),
        router: false,
        calls: latencies.len(),
        latency_mean_s: mean(latencies),
        latency_p50_s: percentile(latencies, 50.0),
        latency_p95_s: percentile(latencies, 95.0),
        model_s_per_call: split.as_ref().map(|s| s.model_s_per_call),
        overhead_s_per_call: split.as_ref().map(|s| s.overhead_s_per_call),
        decode_tokens_per_s: split.and_then(|s| s.decode_tokens_per_s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::timed_call;

    fn trial<'a>(
        host: &'a str,
        parallel: u32,
        model: &'a str,
        passed: Option<bool>,
        calls: &'a [CallRecord],
    ) -> PlayedTrial<'a> {
        PlayedTrial {
            host,
            parallel,
            model,
            conversation: true,
            passed,
            calls: calls.iter().collect(),
            router_calls: vec![],
        }
    }

    #[test]
    fn rows_per_server_and_per_concurrency_level() {
        let fast = [timed_call(10, 1, 1.0)];
        let slow = [timed_call(10, 1, 3.0), timed_call(10, 1, 5.0)];
        let models = vec!["s".to_string(), "l".to_string()];
        let trials = [
            trial("http://b", 1, "l", Some(true), &fast),
            trial("http://a", 4, "s", Some(false), &slow),
            trial("http://a", 4, "s", None, &fast),
            trial("http://b", 1, "s", Some(true), &fast),
        ];
        let p = placement(&trials, &models);
        let servers: Vec<(&str, &str, usize, usize, usize)> = p
            .servers
            .iter()
            .map(|r| {
                (
                    r.host.as_str(),
                    r.model.as_str(),
                    r.graded,
                    r.passes,
                    r.calls,
                )
            })
            .collect();
        // Servers in the order first seen, models in report order within each.
        assert_eq!(
            servers,
            [
                ("http://b", "s", 1, 1, 1),
                ("http://b", "l", 1, 1, 1),
                ("http://a", "s", 1, 0, 3),
            ]
        );
        assert_eq!(p.servers[2].success_rate, Some(0.0));
        assert_eq!(p.servers[2].time_per_call_s, Some(3.0));
        let levels: Vec<(u32, &str, usize)> = p
            .by_concurrency
            .iter()
            .map(|r| (r.parallel, r.model.as_str(), r.calls))
            .collect();
        assert_eq!(levels, [(1, "s", 1), (1, "l", 1), (4, "s", 3)]);
        assert_eq!(p.by_concurrency[2].latency_p50_s, Some(3.0));
        assert_eq!(p.max_parallel, 4);
        assert!(p.is_notable());
    }

    #[test]
    fn one_server_one_at_a_time_is_not_notable() {
        let calls = [timed_call(10, 1, 1.0)];
        let trials = [trial("http://a", 1, "m", Some(true), &calls)];
        assert!(!placement(&trials, &["m".into()]).is_notable());
    }

    #[test]
    fn router_calls_are_never_pooled_with_the_agents() {
        let agent = [timed_call(10, 1, 2.0), timed_call(10, 1, 4.0)];
        let front = [timed_call(5, 1, 0.5)];
        let standalone = timed_call(5, 1, 1.5);
        let trials = [
            PlayedTrial {
                router_calls: front.iter().collect(),
                ..trial("http://a", 2, "m", Some(true), &agent)
            },
            PlayedTrial {
                host: "http://a",
                parallel: 2,
                model: "m",
                conversation: false,
                passed: Some(true),
                calls: vec![],
                router_calls: vec![&standalone],
            },
        ];
        let p = placement(&trials, &["m".into()]);
        let s = &p.servers[0];
        assert_eq!(
            (s.calls, s.time_per_call_s),
            (2, Some(3.0)),
            "agent calls only"
        );
        assert_eq!((s.router_calls, s.router_time_per_call_s), (2, Some(1.0)));
        let rows: Vec<(bool, usize, Option<f64>)> = p
            .by_concurrency
            .iter()
            .map(|r| (r.router, r.calls, r.latency_mean_s))
            .collect();
        assert_eq!(rows, [(false, 2, Some(3.0)), (true, 2, Some(1.0))]);
    }
}
