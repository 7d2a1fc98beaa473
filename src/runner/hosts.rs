//! The Ollama servers of a run. Each is preflighted on its own (version, each model with its tools
//! capability and digest), then held to the first: every server must run the same Ollama version
//! and serve the same digest of each model, so that a record means the same wherever it was
//! played. A server on this machine gets the local GPU telemetry; one elsewhere gets none
//! (recorded as such).

use crate::runner::preflight::{self, PreflightError};
use crate::runner::record::{ModelInfo, ServerInfo};
use crate::runner::telemetry::{self, Telemetry};
use crate::wire::client::Client;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Why a server on another machine has no GPU readings.
pub const REMOTE_NO_TELEMETRY: &str = "remote host (GPU telemetry is read on this machine only)";

/// One server of the run, ready to play trials.
pub struct Host {
    /// Base URL.
    pub url: String,
    /// Its client.
    pub client: Client,
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
}

/// What one server says before any trace.
pub struct ServerCheck {
    /// `/api/version`.
    pub version: String,
    /// Each model, in run order.
    pub models: Vec<ModelInfo>,
    /// The suites it published (passk's stub only).
    pub passk_suites: Option<BTreeMap<String, String>>,
}

/// Version, stub suites, and each model (present, with tools when `need_tools`, thinking when
/// asked) on one server.
pub async fn check_server(
    client: &Client,
    url: &str,
    models: &[String],
    need_tools: bool,
    think: Option<bool>,
    task_digests: &BTreeMap<String, String>,
) -> Result<ServerCheck, PreflightError> {
    let server = preflight::server(client, url).await?;
    preflight::check_stub_suites(server.passk_suites.as_ref(), task_digests)?;
    let mut infos = Vec::new();
    for model in models {
        let info = preflight::check_model(client, url, model, need_tools).await?;
        preflight::check_think(&info, think)?;
        infos.push(info);
    }
    Ok(ServerCheck {
        version: server.version,
        models: infos,
        passk_suites: server.passk_suites,
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

/// The telemetry of each server: one local sampler shared by the servers on this machine (started
/// only when there is one), none for the others.
pub fn telemetries(urls: &[String], enabled: bool) -> Vec<Arc<Telemetry>> {
    let off = |why: &str| Arc::new(Telemetry::disabled(why));
    if !enabled {
        let t = off("telemetry off for this backend");
        return urls.iter().map(|_| Arc::clone(&t)).collect();
    }
    let local = urls
        .iter()
        .any(|u| is_local(u))
        .then(|| Arc::new(Telemetry::start(telemetry::DEFAULT_INTERVAL)));
    let remote = off(REMOTE_NO_TELEMETRY);
    urls.iter()
        .map(|u| match (&local, is_local(u)) {
            (Some(t), true) => Arc::clone(t),
            _ => Arc::clone(&remote),
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
            models: vec![ModelInfo {
                name: "m".into(),
                digest: digest.map(String::from),
                ..ModelInfo::default()
            }],
            passk_suites: None,
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
