//! The Ollama servers of a run. Each is preflighted on its own (version, each model with its tools
//! capability and digest), then held to the first: every server must run the same Ollama version
//! and serve the same digest of each model, so that a record means the same wherever it was
//! played. A server with a GPU exporter (`--gpu-metrics`) is read from it; another server on
//! this machine gets the local GPU telemetry; one elsewhere gets none (recorded as such).

use crate::runner::preflight::{self, PreflightError};
use crate::runner::record::{GpuInfo, ModelInfo, ServerInfo};
use crate::runner::telemetry::dcgm::{self, DcgmExporter, DcgmSource};
use crate::runner::telemetry::{self, Telemetry};
use crate::wire::ChatApi;
use crate::wire::chat_api::StubCatalog;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// Why a server on another machine has no GPU readings.
pub const REMOTE_NO_TELEMETRY: &str =
    "remote host without --gpu-metrics (NVML reads this machine's GPU only)";

/// One server of the run, ready to play trials.
pub struct Host {
    /// Base URL.
    pub url: String,
    /// Its client.
    pub client: Box<dyn ChatApi>,
    /// Its GPU readings (shared by every server on this machine).
    pub telemetry: Arc<Telemetry>,
    /// What the preflight found.
    pub info: ServerInfo,
}

/// What the preflight of every server found.
pub struct Preflighted {
    /// The servers, in the order given.
    pub hosts: Vec<Host>,
    /// Each model as the first server reports it.
    pub models: Vec<ModelInfo>,
    /// A server published the suites it loaded: passk's own stub.
    pub stub: bool,
    /// What the preflight has to say before any trace (an exporter that lacks a metric).
    pub notes: Vec<String>,
}

/// What one server says before any trace.
pub struct ServerCheck {
    /// `/api/version`.
    pub version: String,
    /// The server software, as detected.
    pub kind: Option<String>,
    /// Each model, in run order.
    pub models: Vec<ModelInfo>,
    /// What it scripts and forwards (passk's stub only).
    pub stub: Option<StubCatalog>,
}

/// Version, stub suites, and each model (present, with tools when `need_tools`, thinking when
/// asked) on one server.
pub async fn check_server(
    client: &dyn ChatApi,
    url: &str,
    models: &[String],
    need_tools: bool,
    think: Option<bool>,
    task_digests: &BTreeMap<String, String>,
) -> Result<ServerCheck, PreflightError> {
    let server = preflight::server(client, url).await?;
    preflight::check_stub_suites(server.stub.as_ref().map(|s| &s.passk_suites), task_digests)?;
    let mut infos = Vec::new();
    for model in models {
        let info = preflight::check_model(client, url, model, need_tools).await?;
        preflight::check_think(&info, think)?;
        infos.push(info);
    }
    Ok(ServerCheck {
        version: server.version,
        kind: server.kind,
        models: infos,
        stub: server.stub,
    })
}

/// Refuses a server whose Ollama version or model digests differ from the first server's, naming
/// it. (A digest one server cannot tell counts as different: nothing proves it the same model.)
pub fn check_same_as_first(
    first: (&str, &ServerCheck),
    other: (&str, &ServerCheck),
) -> Result<(), PreflightError> {
    let differs = |what: String, value: &str, first_value: &str| PreflightError::HostDiffers {
        host: other.0.to_string(),
        what,
        value: value.to_string(),
        first: first.0.to_string(),
        first_value: first_value.to_string(),
    };
    if first.1.version != other.1.version {
        return Err(differs(
            "Ollama version".into(),
            &other.1.version,
            &first.1.version,
        ));
    }
    let show = |d: &Option<String>| d.clone().unwrap_or_else(|| "unknown".into());
    for (a, b) in first.1.models.iter().zip(&other.1.models) {
        if a.digest != b.digest {
            return Err(differs(
                format!("digest of model {}", a.name),
                &show(&b.digest),
                &show(&a.digest),
            ));
        }
    }
    Ok(())
}

/// Whether a base URL names this machine (a loopback address or `localhost`).
pub fn is_local(url: &str) -> bool {
    let Some(host) = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(|h| h.trim_matches(['[', ']']).to_string()))
    else {
        return false;
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Pairs each `HOST=URL` of `--gpu-metrics` with its server: HOST is parsed as `--host` is and
/// must be one of `hosts`; each server at most once.
pub fn pair_gpu_metrics(
    entries: &[String],
    hosts: &[String],
) -> Result<BTreeMap<String, DcgmExporter>, String> {
    let mut pairs = BTreeMap::new();
    for entry in entries {
        let (host, url) = entry
            .split_once('=')
            .ok_or_else(|| format!("'{entry}' is not HOST=URL"))?;
        let host = crate::wire::host::parse_host(host).map_err(|e| format!("'{entry}': {e}"))?;
        if !hosts.contains(&host) {
            return Err(format!(
                "'{entry}': {host} is not one of the run's servers ({})",
                hosts.join(", ")
            ));
        }
        let exporter = DcgmExporter::parse(url)?;
        if pairs.insert(host.clone(), exporter).is_some() {
            return Err(format!("{host} is given twice"));
        }
    }
    Ok(pairs)
}

/// What the preflight found of each exporter: its GPU, and the notes to print (metrics it lacks).
pub struct Probed {
    /// DcgmExporter to its GPU.
    pub gpus: BTreeMap<DcgmExporter, GpuInfo>,
    /// One line per metric an exporter lacks.
    pub notes: Vec<String>,
}

/// Scrapes each server's exporter once before any trace; one that does not answer, or lists no
/// GPU it can pick, refuses the run by the server's name.
pub async fn probe_exporters(
    exporters: &BTreeMap<String, DcgmExporter>,
) -> Result<Probed, PreflightError> {
    let mut probed = Probed {
        gpus: BTreeMap::new(),
        notes: Vec::new(),
    };
    for (host, exporter) in exporters {
        if probed.gpus.contains_key(exporter) {
            continue;
        }
        let (gpu, missing) =
            dcgm::probe(exporter)
                .await
                .map_err(|why| PreflightError::GpuMetrics {
                    host: host.clone(),
                    why,
                })?;
        for metric in missing {
            probed.notes.push(format!(
                "GPU telemetry of {host}: {} lists no {metric}; it is recorded as absent",
                exporter.url
            ));
        }
        probed.gpus.insert(exporter.clone(), gpu);
    }
    Ok(probed)
}

/// The telemetry of each server: a server with an exporter is read from it (servers on one
/// exporter's GPU share one sampler, so their calls share its energy); the other servers on this
/// machine share one local sampler (started only when there is one), which also reads the
/// processes listening on their ports; the rest get none.
pub fn telemetries(
    urls: &[String],
    enabled: bool,
    exporters: &BTreeMap<String, DcgmExporter>,
    probed: &Probed,
    scrape_interval: Duration,
) -> Vec<Arc<Telemetry>> {
    let off = |why: &str| Arc::new(Telemetry::disabled(why));
    if !enabled {
        let t = off("telemetry off for this backend");
        return urls.iter().map(|_| Arc::clone(&t)).collect();
    }
    let local_ports: Vec<u16> = urls
        .iter()
        .filter(|u| is_local(u) && !exporters.contains_key(*u))
        .filter_map(|u| reqwest::Url::parse(u).ok()?.port_or_known_default())
        .collect();
    let local = urls
        .iter()
        .any(|u| is_local(u) && !exporters.contains_key(u))
        .then(|| Arc::new(Telemetry::start(telemetry::DEFAULT_INTERVAL, &local_ports)));
    let mut remote: BTreeMap<&DcgmExporter, Arc<Telemetry>> = BTreeMap::new();
    for exporter in exporters.values() {
        if remote.contains_key(exporter) {
            continue;
        }
        let gpu = probed.gpus.get(exporter).cloned().unwrap_or_default();
        let t = match DcgmSource::new(exporter.clone(), scrape_interval) {
            Ok(source) => Telemetry::start_remote(source, gpu, scrape_interval),
            Err(why) => Telemetry::disabled(&why),
        };
        remote.insert(exporter, Arc::new(t));
    }
    let none = off(REMOTE_NO_TELEMETRY);
    urls.iter()
        .map(|u| match (exporters.get(u), &local) {
            (Some(e), _) => Arc::clone(&remote[e]),
            (None, Some(t)) if is_local(u) => Arc::clone(t),
            _ => Arc::clone(&none),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_are_this_machine() {
        for url in [
            "http://127.0.0.1:11434",
            "http://localhost:80",
            "http://[::1]:11434",
            "http://127.0.0.2:1",
        ] {
            assert!(is_local(url), "{url}");
        }
        for url in ["http://10.0.0.5:11434", "http://gpu-box:11434", "not a url"] {
            assert!(!is_local(url), "{url}");
        }
    }

    fn check(version: &str, digest: Option<&str>) -> ServerCheck {
        ServerCheck {
            version: version.into(),
            kind: None,
            models: vec![ModelInfo {
                name: "m".into(),
                digest: digest.map(String::from),
                ..ModelInfo::default()
            }],
            stub: None,
        }
    }

    #[test]
    fn gpu_exporters_pair_with_the_run_servers_as_host_parses_them() {
        let hosts = vec![
            "http://127.0.0.1:11434".to_string(),
            "http://gpu-box:11434".to_string(),
        ];
        let pairs = pair_gpu_metrics(
            &["gpu-box=http://gpu-box:9400/metrics#gpu=1".to_string()],
            &hosts,
        )
        .expect("gpu-box is http://gpu-box:11434");
        assert_eq!(pairs["http://gpu-box:11434"].gpus, ["1"]);
        for (entries, says) in [
            (vec!["gpu-box"], "is not HOST=URL"),
            (
                vec!["other:1=http://x:9400/metrics"],
                "not one of the run's servers",
            ),
            (
                vec!["gpu-box=http://x/m", "gpu-box:11434=http://y/m"],
                "given twice",
            ),
            (vec!["gpu-box=ftp://x/m"], "only http://"),
        ] {
            let entries: Vec<String> = entries.into_iter().map(String::from).collect();
            let err = pair_gpu_metrics(&entries, &hosts).expect_err(says);
            assert!(err.contains(says), "{err}");
        }
    }

    #[test]
    fn a_server_unlike_the_first_is_named() {
        let first = check("0.30.1", Some("aa"));
        check_same_as_first(("a", &first), ("b", &check("0.30.1", Some("aa")))).expect("same");
        let err = check_same_as_first(("a", &first), ("b", &check("0.30.1", Some("bb"))))
            .expect_err("digest");
        let text = err.to_string();
        assert!(
            text.starts_with("b differs from a: digest of model m is bb there but aa on a"),
            "{text}"
        );
        let err = check_same_as_first(("a", &first), ("b", &check("0.30.0", Some("aa"))))
            .expect_err("version");
        assert!(
            err.to_string().contains("Ollama version is 0.30.0"),
            "{err}"
        );
        let err =
            check_same_as_first(("a", &first), ("b", &check("0.30.1", None))).expect_err("unknown");
        assert!(err.to_string().contains("is unknown there"), "{err}");
    }
}
