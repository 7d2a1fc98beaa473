//! `passk serve-stub`: runs the Ollama-compatible stub on a fixed port until Ctrl-C, so any Ollama
//! client (curl, ollama-python, passk itself) can be pointed at it. See docs/stub.md.

use crate::cli::ServeStubArgs;
use crate::exit_code;
use anyhow::Context;
use passk::domain::Task;
use passk::suites::router::RouterSuite;
use passk_stub::{ModelSpec, ScriptBook, StubConfig, StubFile, StubServer, limits};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

/// What the oracle replays: the store's and the triage suite's tasks, the router suite, documented
/// example values, and the digests of what was loaded (published on `/api/version`).
struct Suites {
    tasks: Vec<Task>,
    router: Option<RouterSuite>,
    examples: Vec<(String, String)>,
    digests: BTreeMap<String, String>,
}

/// Loads the store, triage and router suites under `root` for the oracle and the flawed plans.
fn load_suites(root: &Path) -> anyhow::Result<Suites> {
    let all = super::load_all_suites(root)?;
    let digests = passk::runner::experiment::task_digests(&all.domain_refs(), Some(&all.router));
    Ok(Suites {
        digests,
        tasks: all.tasks(),
        examples: all.example_values(),
        router: Some(all.router),
    })
}

/// Runs the command; returns the exit code.
pub(super) fn run(args: &ServeStubArgs) -> anyhow::Result<u8> {
    let suites = load_suites(&args.data.root)?;
    let mut book = ScriptBook::from_suites(&suites.tasks, suites.router.as_ref());
    book.set_example_values(&suites.examples);
    if book.is_empty() {
        passk::errln!(
            "warning: no conversations loaded; every chat call will be refused as an unknown conversation"
        );
    }
    let mut config = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let file = StubFile::parse(&text).with_context(|| format!("in {}", path.display()))?;
            let sets_decode = file.decode_tok_per_s.is_some();
            let mut c = file
                .into_config(&suites.tasks, book)
                .with_context(|| format!("in {}", path.display()))?;
            if !sets_decode {
                c.decode_tok_per_s = args.speed;
            }
            c
        }
        None => StubConfig {
            decode_tok_per_s: args.speed,
            ..StubConfig::with_script(book)
        },
    };
    limits::speed("--speed", args.speed).map_err(|e| super::usage_error(&e))?;
    for entry in &args.upstream {
        match upstream(entry) {
            Ok((name, url)) => {
                config
                    .models
                    .insert(name.to_string(), ModelSpec::upstream(url));
            }
            Err(why) => return Err(super::usage_error(&why)),
        }
    }
    let ip: IpAddr = args
        .bind
        .parse()
        .with_context(|| format!("--bind {:?} is not an IP address", args.bind))?;
    config.addr = SocketAddr::new(ip, args.port);
    config.suites = suites.digests;
    // Flag, else Ollama's environment variable, else the file, else Ollama's default.
    if let Some(n) = args.num_parallel {
        config.num_parallel =
            limits::slots("--num-parallel", n).map_err(|e| super::usage_error(&e))?;
    } else if let Some(n) = ollama_uint("OLLAMA_NUM_PARALLEL") {
        config.num_parallel =
            limits::slots("OLLAMA_NUM_PARALLEL", n).map_err(|e| super::usage_error(&e))?;
    }
    config.max_queue = args
        .max_queue
        .or_else(|| ollama_uint("OLLAMA_MAX_QUEUE"))
        .unwrap_or(config.max_queue);
    config.max_loaded_models = args
        .max_loaded_models
        .or_else(|| ollama_uint("OLLAMA_MAX_LOADED_MODELS"))
        .unwrap_or(config.max_loaded_models);

    let (num_parallel, max_queue) = (config.num_parallel, config.max_queue);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting tokio")?;
    runtime.block_on(async move {
        let handle = StubServer::start(config).await?;
        passk::errln!(
            "passk stub listening on {} (num_parallel {}, max_queue {}; Ctrl-C stops it)",
            handle.base_url(),
            num_parallel.max(1),
            max_queue
        );
        passk::outln!("{}", handle.base_url());
        let stop = crate::signals::graceful();
        while !stop.load(std::sync::atomic::Ordering::SeqCst) {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let injected = handle.injected();
        handle.shutdown().await;
        for (kind, n) in injected {
            passk::errln!("injected {kind:?}: {n}");
        }
        anyhow::Ok(())
    })?;
    Ok(exit_code::SUCCESS)
}

/// `NAME=URL` of `--upstream`: a model name and an `http(s)://` base URL.
fn upstream(entry: &str) -> Result<(&str, &str), String> {
    match entry.split_once('=') {
        Some((name, url))
            if !name.trim().is_empty()
                && (url.starts_with("http://") || url.starts_with("https://")) =>
        {
            Ok((name.trim(), url))
        }
        _ => Err(format!(
            "--upstream {entry:?}: expected NAME=URL, e.g. smollm2-135m=http://127.0.0.1:8080"
        )),
    }
}

/// An unsigned setting from the environment read as Ollama's `envconfig.Uint` reads it (spaces and
/// quotes trimmed): unset or empty gives nothing, a value that does not parse gives nothing and a
/// warning (Ollama then uses its default).
fn ollama_uint(key: &str) -> Option<usize> {
    let value = std::env::var(key).unwrap_or_default();
    let value = value.trim().trim_matches(['"', '\'']);
    if value.is_empty() {
        return None;
    }
    let parsed = value.parse().ok();
    if parsed.is_none() {
        passk::errln!("warning: {key}={value:?} is not a number; ignored");
    }
    parsed
}
