//! `passk pull`: pulls models through Ollama's `/api/pull` with a progress bar per model.

use crate::cli::PullArgs;
use crate::exit_code;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use passk::wire::client::{Client, ClientConfig};
use passk::wire::host::parse_host;
use passk::wire::name::same_model;
use std::time::Duration;

/// Models pulled when none are named.
const DEFAULT_MODELS: [&str; 2] = ["qwen2.5-coder:3b", "qwen2.5-coder:7b"];

/// Runs the command; returns the exit code.
pub(super) fn run(args: &PullArgs) -> anyhow::Result<u8> {
    let base_url = match args.host.single() {
        Ok(h) => parse_host(&h)?,
        Err(e) => return Err(super::usage_error(&e)),
    };
    let (connect_timeout, request_timeout) = match args.host.durations() {
        Ok(d) => d,
        Err(e) => return Err(super::usage_error(&e)),
    };
    let client = Client::new(ClientConfig {
        base_url,
        connect_timeout,
        request_timeout,
        retries: args.host.retries.unwrap_or(3),
        backoff: Duration::from_millis(500),
    })?;
    let models: Vec<String> = if args.models.is_empty() {
        DEFAULT_MODELS.iter().map(|m| m.to_string()).collect()
    } else {
        args.models.clone()
    };
    let style =
        ProgressStyle::with_template("{spinner} {prefix:<20} {bar:30} {bytes}/{total_bytes} {msg}")
            .context("progress template")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting tokio")?;
    for model in &models {
        let bar = ProgressBar::new(0)
            .with_style(style.clone())
            .with_prefix(model.clone());
        if std::env::var_os("NO_COLOR").is_some()
            || std::env::var("TERM").is_ok_and(|t| t == "dumb")
        {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        bar.enable_steady_tick(Duration::from_millis(100));
        let result = runtime.block_on(client.pull(model, |p| {
            if let Some(total) = p.total {
                bar.set_length(total);
            }
            if let Some(done) = p.completed {
                bar.set_position(done);
            }
            bar.set_message(p.status.clone());
        }));
        match result {
            Ok(()) => bar.finish_with_message("success"),
            Err(e) => {
                bar.abandon_with_message("failed");
                return Err(e).with_context(|| format!("pulling {model}"));
            }
        }
        // Ollama lists the model under its normalised name (`llama3.2` as `llama3.2:latest`).
        let listed = runtime.block_on(client.tags()).ok().and_then(|t| {
            t.models
                .into_iter()
                .find(|m| same_model(&m.name, model) || same_model(&m.model, model))
        });
        match listed {
            Some(m) => passk::outln!("{model}: pulled, listed as {} ({})", m.name, m.digest),
            None => passk::outln!("{model}: pulled, not yet listed by /api/tags"),
        }
    }
    Ok(exit_code::SUCCESS)
}
