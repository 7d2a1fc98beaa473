//! A GPU on another machine, read from the NVIDIA dcgm-exporter its owner already runs there
//! (Prometheus text format): utilization, memory in use, power and the energy counter.
//!
//! The exporter's URL is given per Ollama server (`--gpu-metrics HOST=URL`); a fragment
//! `#gpu=N` (or `#gpu=N,M`, or a `GPU-…` UUID) picks the GPUs that server uses when the exporter
//! lists several. Fragments are never sent to the exporter. Several selected GPUs add up (memory,
//! power, energy) and average (utilization).

use super::{GpuReading, GpuSource};
use crate::runner::record::GpuInfo;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// GPU utilization, percent (gauge).
pub const UTIL: &str = "DCGM_FI_DEV_GPU_UTIL";
/// Framebuffer memory in use, MiB (gauge).
pub const FB_USED: &str = "DCGM_FI_DEV_FB_USED";
/// Framebuffer memory free, MiB (gauge); with [`FB_USED`] it gives the card's memory.
pub const FB_FREE: &str = "DCGM_FI_DEV_FB_FREE";
/// Power draw, watts (gauge).
pub const POWER: &str = "DCGM_FI_DEV_POWER_USAGE";
/// Energy since the driver was loaded, millijoules (counter).
pub const ENERGY: &str = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION";

/// The metrics passk reads, in the order it names them.
pub const READ: [&str; 4] = [UTIL, FB_USED, POWER, ENERGY];

/// Where one server's GPU readings come from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DcgmExporter {
    /// What is fetched: the URL without its fragment.
    pub url: String,
    /// The GPUs picked (`gpu` index or UUID labels); empty: the only one listed.
    pub gpus: Vec<String>,
}

impl DcgmExporter {
    /// Parses `http://host:9400/metrics[#gpu=0[,1]]`.
    pub fn parse(text: &str) -> Result<DcgmExporter, String> {
        let (url, fragment) = match text.split_once('#') {
            Some((u, f)) => (u, Some(f)),
            None => (text, None),
        };
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("'{text}' is not a URL: {e}"))?;
        if parsed.scheme() != "http" {
            return Err(format!(
                "'{text}': only http:// exporters are read (passk is built without TLS)"
            ));
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(format!("'{text}' names no host"));
        }
        let gpus = match fragment {
            None => Vec::new(),
            Some(f) => {
                let list = f.strip_prefix("gpu=").ok_or_else(|| {
                    format!("'{text}': the fragment picks GPUs as #gpu=N or #gpu=N,M, got #{f}")
                })?;
                let gpus: Vec<String> = list.split(',').map(|g| g.trim().to_string()).collect();
                if gpus.iter().any(String::is_empty) {
                    return Err(format!("'{text}': an empty GPU in #gpu={list}"));
                }
                gpus
            }
        };
        Ok(DcgmExporter {
            url: url.to_string(),
            gpus,
        })
    }

    /// As given: the URL with its `#gpu=` fragment.
    pub fn text(&self) -> String {
        if self.gpus.is_empty() {
            self.url.clone()
        } else {
            format!("{}#gpu={}", self.url, self.gpus.join(","))
        }
    }

    /// How records name it.
    pub fn describe(&self) -> String {
        if self.gpus.is_empty() {
            format!("dcgm-exporter at {}", self.url)
        } else {
            format!(
                "dcgm-exporter at {} (gpu {})",
                self.url,
                self.gpus.join(", ")
            )
        }
    }
}

/// One GPU's lines of a scrape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuLines {
    /// The `gpu` label (an index).
    pub index: String,
    /// The `UUID` label.
    pub uuid: Option<String>,
    /// The `modelName` label.
    pub model: Option<String>,
    /// The `DCGM_FI_DRIVER_VERSION` label.
    pub driver: Option<String>,
    /// Metric name to value.
    pub values: BTreeMap<String, f64>,
}

/// A scrape, per GPU, in the exporter's order.
pub fn parse_scrape(text: &str) -> Vec<GpuLines> {
    let lines = text.lines().map(|l| Ok(l.to_string()));
    let Ok(scrape) = prometheus_parse::Scrape::parse(lines) else {
        return Vec::new();
    };
    let mut gpus: Vec<GpuLines> = Vec::new();
    for sample in scrape.samples {
        let value = match sample.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => v,
            _ => continue,
        };
        let Some(index) = sample.labels.get("gpu") else {
            continue;
        };
        // A MIG instance's line stands beside its GPU's; passk reads the whole GPU.
        if sample.labels.get("GPU_I_ID").is_some_and(|i| !i.is_empty()) || !value.is_finite() {
            continue;
        }
        let at = match gpus.iter().position(|g| g.index == index) {
            Some(i) => i,
            None => {
                gpus.push(GpuLines {
                    index: index.to_string(),
                    uuid: sample.labels.get("UUID").map(String::from),
                    model: sample.labels.get("modelName").map(String::from),
                    driver: sample
                        .labels
                        .get("DCGM_FI_DRIVER_VERSION")
                        .map(String::from),
                    values: BTreeMap::new(),
                });
                gpus.len() - 1
            }
        };
        gpus[at].values.entry(sample.metric).or_insert(value);
    }
    gpus
}

/// The GPUs of `scrape` that `exporter` picks, or why none can be read.
pub fn pick<'a>(
    exporter: &DcgmExporter,
    scrape: &'a [GpuLines],
) -> Result<Vec<&'a GpuLines>, String> {
    let listed = || {
        scrape
            .iter()
            .map(|g| match &g.model {
                Some(m) => format!("gpu {} ({m})", g.index),
                None => format!("gpu {}", g.index),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if scrape.is_empty() {
        return Err(format!(
            "{} lists no GPU metric with a gpu label (is it dcgm-exporter?)",
            exporter.url
        ));
    }
    if exporter.gpus.is_empty() {
        return match scrape {
            [one] => Ok(vec![one]),
            _ => Err(format!(
                "{} lists {} GPUs ({}): pick the one this server uses, as {}#gpu=N",
                exporter.url,
                scrape.len(),
                listed(),
                exporter.url
            )),
        };
    }
    exporter
        .gpus
        .iter()
        .map(|want| {
            scrape
                .iter()
                .find(|g| &g.index == want || g.uuid.as_deref() == Some(want.as_str()))
                .ok_or_else(|| {
                    format!(
                        "{} lists no gpu {want}; it lists {}",
                        exporter.url,
                        listed()
                    )
                })
        })
        .collect()
}

/// The sum of `metric` over `gpus`, when every one of them has it.
fn total(gpus: &[&GpuLines], metric: &str) -> Option<f64> {
    gpus.iter()
        .map(|g| g.values.get(metric).copied())
        .sum::<Option<f64>>()
}

/// Utilization, memory and power of the picked GPUs.
pub fn reading(gpus: &[&GpuLines]) -> GpuReading {
    GpuReading {
        util: total(gpus, UTIL).map(|u| u / gpus.len().max(1) as f64),
        mem_mib: total(gpus, FB_USED),
        power_w: total(gpus, POWER),
    }
}

/// The energy counter of the picked GPUs, millijoules.
pub fn energy_mj(gpus: &[&GpuLines]) -> Option<u64> {
    total(gpus, ENERGY)
        .filter(|e| *e >= 0.0 && *e < u64::MAX as f64)
        .map(|e| e as u64)
}

/// What the records say of the picked GPUs.
pub fn info(exporter: &DcgmExporter, gpus: &[&GpuLines]) -> GpuInfo {
    let joined = |f: fn(&GpuLines) -> Option<&str>| {
        let parts: Vec<&str> = gpus.iter().filter_map(|g| f(g)).collect();
        (!parts.is_empty()).then(|| parts.join(" + "))
    };
    let memory = total(gpus, FB_USED)
        .zip(total(gpus, FB_FREE))
        .map(|(u, f)| (u + f).round() as u64);
    GpuInfo {
        unavailable: None,
        name: joined(|g| g.model.as_deref()),
        driver: gpus.first().and_then(|g| g.driver.clone()),
        memory_mib: memory,
        source: Some(exporter.describe()),
    }
}

/// The metrics passk reads that the picked GPUs lack (the exporter's counters file leaves them
/// out): they are recorded as absent.
pub fn missing(gpus: &[&GpuLines]) -> Vec<&'static str> {
    READ.into_iter()
        .filter(|m| gpus.iter().any(|g| !g.values.contains_key(*m)))
        .collect()
}

/// Fetches one scrape.
pub async fn fetch(client: &reqwest::Client, url: &str) -> Result<String, String> {
    let resp = client
        .get(url)
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let status = resp.status();
    if !status.is_success() {
        return Err(format!("{url} answered HTTP {status}"));
    }
    resp.text().await.map_err(|e| format!("{url}: {e}"))
}

/// Checks, before any trace, that `exporter` answers and lists the GPUs it picks: their identity
/// and the metrics they lack.
pub async fn probe(exporter: &DcgmExporter) -> Result<(GpuInfo, Vec<&'static str>), String> {
    let client = client(Duration::from_secs(5))?;
    let text = fetch(&client, &exporter.url).await?;
    let scrape = parse_scrape(&text);
    let gpus = pick(exporter, &scrape)?;
    Ok((info(exporter, &gpus), missing(&gpus)))
}

fn client(timeout: Duration) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .timeout(timeout)
        .no_proxy()
        .build()
        .map_err(|e| format!("HTTP client: {e}"))
}

/// Scrapes an exporter from the sampler thread, and keeps the latest energy counter so that a call
/// starting or ending reads it without waiting on the network.
pub struct DcgmSource {
    exporter: DcgmExporter,
    client: reqwest::Client,
    /// The last scrape that read the energy counter: when, and its value.
    latest_energy: Mutex<Option<(Instant, u64)>>,
    /// How old that reading may be and still be used.
    fresh_for: Duration,
}

impl DcgmSource {
    /// A source scraped about every `interval`.
    pub fn new(exporter: DcgmExporter, interval: Duration) -> Result<DcgmSource, String> {
        Ok(DcgmSource {
            client: client(interval.max(Duration::from_secs(2)))?,
            exporter,
            latest_energy: Mutex::new(None),
            fresh_for: (interval * 3).max(Duration::from_secs(2)),
        })
    }

    fn scrape(&self) -> Option<Vec<GpuLines>> {
        thread_local! {
            // The sampler thread's own runtime, dropped with that plain thread (never inside the
            // run's runtime).
            static RUNTIME: Option<tokio::runtime::Runtime> =
                tokio::runtime::Builder::new_current_thread().enable_all().build().ok();
        }
        let text = RUNTIME.with(|rt| {
            rt.as_ref()
                .and_then(|rt| rt.block_on(fetch(&self.client, &self.exporter.url)).ok())
        })?;
        Some(parse_scrape(&text))
    }
}

impl GpuSource for DcgmSource {
    fn read(&self) -> GpuReading {
        let Some(scrape) = self.scrape() else {
            return GpuReading::default();
        };
        let Ok(gpus) = pick(&self.exporter, &scrape) else {
            return GpuReading::default();
        };
        if let Some(e) = energy_mj(&gpus) {
            *self.latest_energy.lock().unwrap_or_else(|p| p.into_inner()) =
                Some((Instant::now(), e));
        }
        reading(&gpus)
    }

    fn energy_mj(&self) -> Option<u64> {
        let latest = *self.latest_energy.lock().unwrap_or_else(|p| p.into_inner());
        latest
            .filter(|(at, _)| at.elapsed() <= self.fresh_for)
            .map(|(_, e)| e)
    }

    fn on_this_machine(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorded scrape of dcgm-exporter 3.3 (default counters) on a two-GPU machine.
    const RECORDED: &str = include_str!("../../../../../tests/data/dcgm-exporter-2gpu.prom");

    #[test]
    fn a_recorded_scrape_is_read_per_gpu() {
        let gpus = parse_scrape(RECORDED);
        assert_eq!(gpus.len(), 2);
        let one = &gpus[1];
        assert_eq!(one.index, "1");
        assert_eq!(one.model.as_deref(), Some("NVIDIA GeForce RTX 4090"));
        assert_eq!(one.driver.as_deref(), Some("550.54.14"));
        assert_eq!(one.values.get(UTIL), Some(&87.0));
        assert_eq!(one.values.get(ENERGY), Some(&98_765_432_101.0));
        let picked = pick(
            &DcgmExporter::parse("http://h:9400/metrics#gpu=1").expect("url"),
            &gpus,
        )
        .expect("gpu 1");
        let r = reading(&picked);
        assert_eq!(
            (r.util, r.mem_mib, r.power_w),
            (Some(87.0), Some(6_311.0), Some(301.25))
        );
        assert_eq!(energy_mj(&picked), Some(98_765_432_101));
        let i = info(
            &DcgmExporter::parse("http://h:9400/metrics#gpu=1").expect("url"),
            &picked,
        );
        assert_eq!(i.memory_mib, Some(24_564));
        assert!(missing(&picked).is_empty());
    }

    #[test]
    fn gpus_are_picked_by_index_or_uuid_and_several_add_up() {
        let gpus = parse_scrape(RECORDED);
        let by_uuid = DcgmExporter::parse(
            "http://h:9400/metrics#gpu=GPU-0d4c1b2a-5f6e-7a8b-9c0d-1e2f3a4b5c6d",
        )
        .expect("url");
        assert_eq!(pick(&by_uuid, &gpus).expect("uuid")[0].index, "0");
        let both = DcgmExporter::parse("http://h:9400/metrics#gpu=0,1").expect("url");
        let picked = pick(&both, &gpus).expect("both");
        let r = reading(&picked);
        assert_eq!(r.util, Some((12.0 + 87.0) / 2.0));
        assert_eq!(r.power_w, Some(61.5 + 301.25));
        assert_eq!(
            energy_mj(&picked),
            Some(12_345_678_901 + 98_765_432_101),
            "energy adds up"
        );
        assert_eq!(
            info(&both, &picked).name.as_deref(),
            Some("NVIDIA GeForce RTX 4090 + NVIDIA GeForce RTX 4090")
        );
    }

    #[test]
    fn an_ambiguous_or_wrong_pick_says_what_is_listed() {
        let gpus = parse_scrape(RECORDED);
        let plain = DcgmExporter::parse("http://h:9400/metrics").expect("url");
        let err = pick(&plain, &gpus).expect_err("two GPUs");
        assert!(err.contains("lists 2 GPUs"), "{err}");
        assert!(err.contains("#gpu=N"), "{err}");
        let wrong = DcgmExporter::parse("http://h:9400/metrics#gpu=7").expect("url");
        let err = pick(&wrong, &gpus).expect_err("no gpu 7");
        assert!(
            err.contains("no gpu 7") && err.contains("gpu 0 (NVIDIA"),
            "{err}"
        );
        let err = pick(&plain, &parse_scrape("# HELP x y\nup 1\n")).expect_err("not dcgm");
        assert!(err.contains("no GPU metric"), "{err}");
    }

    #[test]
    fn a_metric_the_exporter_leaves_out_is_absent_not_zero() {
        let without_energy: String = RECORDED
            .lines()
            .filter(|l| !l.contains(ENERGY))
            .map(|l| format!("{l}\n"))
            .collect();
        let gpus = parse_scrape(&without_energy);
        let exporter = DcgmExporter::parse("http://h:9400/metrics#gpu=0").expect("url");
        let picked = pick(&exporter, &gpus).expect("gpu 0");
        assert_eq!(energy_mj(&picked), None);
        assert_eq!(missing(&picked), vec![ENERGY]);
        assert_eq!(reading(&picked).util, Some(12.0));
    }

    #[test]
    fn exporter_urls_are_checked() {
        let e = DcgmExporter::parse("http://gpu1:9400/metrics#gpu=0,1").expect("url");
        assert_eq!(e.url, "http://gpu1:9400/metrics");
        assert_eq!(e.gpus, ["0", "1"]);
        assert_eq!(
            e.describe(),
            "dcgm-exporter at http://gpu1:9400/metrics (gpu 0, 1)"
        );
        for bad in [
            "gpu1:9400",
            "https://gpu1:9400/metrics",
            "http://gpu1:9400/metrics#card=0",
            "http://gpu1:9400/metrics#gpu=0,",
            "not a url",
        ] {
            assert!(DcgmExporter::parse(bad).is_err(), "{bad}");
        }
    }
}
