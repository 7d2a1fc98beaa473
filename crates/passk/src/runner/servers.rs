//! The servers of a run: a client for each, preflight (version, the stub's suites, each model,
//! held to the first server), what each lacks in telemetry, and each model's warm-up on every
//! server in the pool before its first trial.

use crate::runner::event::{EventSink, RunEvent};
use crate::runner::hosts::{self, Host, Preflighted};
use crate::runner::manifest::record_warm_up;
use crate::runner::preflight;
use crate::runner::record::ServerInfo;
use crate::runner::run_error::RunError;
use crate::runner::session::Session;
use crate::runner::settings::SettingsError;
use crate::runner::spec::Experiment;
use crate::runner::suite_set::Suites;
use crate::runner::telemetry;
use crate::wire::ChatApi;
use crate::wire::apis::connect;
use crate::wire::config::ClientConfig;
use std::time::Duration;

pub(crate) fn client_for(exp: &Experiment, url: &str) -> Result<Box<dyn ChatApi>, RunError> {
    let (connect_timeout, request_timeout, backoff) = exp.settings.wire_durations()?;
    connect(
        exp.settings.api,
        ClientConfig {
            base_url: url.to_string(),
            connect_timeout,
            request_timeout,
            retries: exp.settings.retries,
            backoff,
        },
    )
    .map_err(RunError::Client)
}

/// Preflights each server (version, stub suites, each model), holds every server to the first
/// (same Ollama version, same model digests), and gives each its telemetry.
pub(crate) async fn preflight_servers(
    exp: &Experiment,
    suites: &Suites,
) -> Result<Preflighted, RunError> {
    let s = &exp.settings;
    if exp.hosts.is_empty() {
        return Err(RunError::Settings(SettingsError::Invalid(
            "--host: no server to play on".into(),
        )));
    }
    let need_tools = !suites.domains.is_empty();
    let digests = suites.task_digests();
    let exporters = hosts::pair_gpu_metrics(&s.gpu_metrics, &exp.hosts)
        .map_err(|m| RunError::Settings(SettingsError::Invalid(m)))?;
    let probed = hosts::probe_exporters(&exporters).await?;
    let scrape_interval = s
        .scrape_interval_s
        .map_or(telemetry::DEFAULT_SCRAPE_INTERVAL, Duration::from_secs_f64);
    let telemetries = hosts::telemetries(
        &exp.hosts,
        exp.telemetry,
        &exporters,
        &probed,
        scrape_interval,
    );
    let mut checks: Vec<(String, hosts::ServerCheck, Box<dyn ChatApi>)> = Vec::new();
    for url in &exp.hosts {
        let client = client_for(exp, url)?;
        let check = hosts::check_server(
            client.as_ref(),
            url,
            &s.models,
            need_tools,
            s.think,
            &digests,
        )
        .await?;
        if let Some((first, first_check, _)) = checks.first() {
            hosts::check_same_as_first((first.as_str(), first_check), (url.as_str(), &check))?;
        }
        checks.push((url.clone(), check, client));
    }
    // A stub forwarding every model of the run to a real engine (`serve-stub --upstream`) plays
    // real models: only a scripted model makes a stub run.
    let stub = checks.iter().any(|(_, c, _)| {
        c.stub
            .as_ref()
            .is_some_and(|cat| cat.scripts_any(&s.models))
    });
    let models = checks
        .first()
        .map(|(_, c, _)| c.models.clone())
        .unwrap_or_default();
    let hosts = checks
        .into_iter()
        .zip(telemetries)
        .map(|((url, check, client), telemetry)| Host {
            info: ServerInfo {
                url: url.clone(),
                version: check.version,
                kind: check.kind,
                gpu: telemetry.gpu_info().clone(),
                models: Vec::new(),
                checked: crate::timefmt::now_rfc3339(),
            },
            url,
            client,
            telemetry,
        })
        .collect();
    Ok(Preflighted {
        hosts,
        models,
        stub,
        notes: probed.notes,
    })
}

/// Says why a server has no GPU telemetry: a remote one by its URL, one on this machine as
/// [`RunEvent::NoGpuTelemetry`], which a terminal sink says once however many runs report it.
pub(crate) fn say_missing_telemetry(hosts: &[Host], sink: &dyn EventSink) {
    for h in hosts {
        let Some(why) = &h.info.gpu.unavailable else {
            continue;
        };
        if why == hosts::REMOTE_NO_TELEMETRY {
            sink.emit(RunEvent::Info(format!(
                "no GPU telemetry: remote host {}",
                h.url
            )));
        } else {
            sink.emit(RunEvent::NoGpuTelemetry(why.clone()));
        }
    }
}

/// Warms up a model on every server in the pool before its first trial (all at once) and records
/// what each warm-up found: per server in the manifest's `servers`, and the first server's in its
/// `models`.
pub(crate) async fn start_model(
    session: &mut Session<'_>,
    model: &str,
    sink: &dyn EventSink,
) -> Result<(), RunError> {
    let stage = &session.stage;
    let live = session.pool.live();
    if let Some(base) = session.manifest.models.iter().find(|m| m.name == model) {
        let warm = live.iter().map(|&h| {
            let mut info = base.clone();
            async move {
                let found = preflight::warm_up(
                    stage.hosts[h].client.as_ref(),
                    &stage.exp.settings,
                    &mut info,
                )
                .await;
                (h, info, found)
            }
        });
        let warmed = futures_util::future::join_all(warm).await;
        let several = stage.hosts.len() > 1;
        for (i, (h, info, found)) in warmed.into_iter().enumerate() {
            let url = &stage.hosts[h].url;
            for w in found? {
                let w = if several { format!("{url}: {w}") } else { w };
                // A resumed run warms the model up again: its warning is kept once.
                if !session.manifest.warnings.contains(&w) {
                    session.manifest.warnings.push(w.clone());
                }
                sink.emit(RunEvent::Warning(w));
            }
            if i == 0 {
                let listed = info.partly_on_cpu.is_some();
                let client = stage.hosts[h].client.as_ref();
                let warmed = &session.warmed;
                if let Some(w) =
                    preflight::evicted(client, model, warmed, &stage.exp.settings).await
                    && !session.manifest.warnings.contains(&w)
                {
                    session.manifest.warnings.push(w.clone());
                    sink.emit(RunEvent::Warning(w));
                }
                session.warmed.push((model.to_string(), listed));
            }
            record_warm_up(&mut session.manifest, url, &info, i == 0);
        }
    }
    session.journal.update_manifest(&session.manifest)?;
    sink.emit(RunEvent::ModelStarted {
        model: model.to_string(),
    });
    Ok(())
}
