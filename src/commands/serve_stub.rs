//! `passk serve-stub`: runs the Ollama-compatible stub on a fixed port until Ctrl-C, so any Ollama
//! client (curl, ollama-python, passk itself) can be pointed at it. See docs/stub.md.

use crate::cli::ServeStubArgs;
use crate::exit_code;
use anyhow::Context;
use passk::suite::{Domain, RouterSuite, Task};
use passk::wire::stub::{ScriptBook, StubConfig, StubFile, StubServer};
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
    let store = passk::suite::load_store(root)?;
    let triage = passk::suite::load_triage(root)?;
    let router = passk::suite::load_router(root)?;
    // The store's examples win a shared parameter name.
    let mut examples = triage.example_values();
    examples.extend(store.example_values());
    let digests = passk::runner::experiment::task_digests(&[&store, &triage], Some(&router));
    Ok(Suites {
        digests,
        tasks: store
            .tasks()
            .iter()
            .chain(triage.tasks())
            .cloned()
            .collect(),
        router: Some(router),
        examples,
    })
}

/// Runs the command; returns the exit code.
pub fn run(args: &ServeStubArgs) -> anyhow::Result<u8> {
    let suites = load_suites(&args.data.root)?;
    let mut book = ScriptBook::from_suites(&suites.tasks, suites.router.as_ref());
    book.set_example_values(&suites.examples);
    if book.is_empty() {
        eprintln!(
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
    anyhow::ensure!(
        args.speed > 0.0 && args.speed.is_finite(),
        "--speed must be a positive number"
    );
    let ip: IpAddr = args
        .bind
        .parse()
        .with_context(|| format!("--bind {:?} is not an IP address", args.bind))?;
    config.addr = SocketAddr::new(ip, args.port);
    config.suites = suites.digests;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting tokio")?;
    runtime.block_on(async move {
        let handle = StubServer::start(config).await?;
        eprintln!(
            "passk stub listening on {} (Ctrl-C stops it)",
            handle.base_url()
        );
        println!("{}", handle.base_url());
        tokio::signal::ctrl_c()
            .await
            .context("waiting for Ctrl-C")?;
        let injected = handle.injected();
        handle.shutdown().await;
        for (kind, n) in injected {
            eprintln!("injected {kind:?}: {n}");
        }
        anyhow::Ok(())
    })?;
    Ok(exit_code::SUCCESS)
}
