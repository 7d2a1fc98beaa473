//! Helpers shared by the integration tests: paths, a `passk` command builder, temp run dirs.

#![allow(dead_code)]

pub(crate) mod exporter;
pub(crate) mod layout;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The project root (holds tasks/ and graders/).
pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Says that the calling test checks nothing here, and why: one `SKIPPED: <test>: <why>` line on
/// the process's standard error, written to the handle itself rather than through `eprintln!`,
/// so the test harness's capture does not swallow it and CI's log shows it.
pub(crate) fn skip(why: &str) {
    use std::io::Write;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let line = format!("SKIPPED: {test}: {why}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// The reason every test that needs the reference's records gives where they are absent.
pub(crate) const NO_REFERENCE: &str = "../shared/reference is absent (a user's clone)";

/// `../shared/reference/...` when present (it is absent on a user's clone).
pub(crate) fn shared_reference() -> Option<PathBuf> {
    let p = root().join("../shared/reference/cheaper-per-token/experiment");
    p.is_dir().then_some(p)
}

/// The built `passk` binary, run from the project root, with SIGINT, SIGTERM and SIGHUP at their
/// default action as a shell's foreground job has them: passk keeps a signal ignored at start
/// ignored (as under `nohup`), so a test runner started in the background, which inherits SIGINT
/// ignored, would otherwise turn every signal test into a test of that rule.
pub(crate) fn passk() -> Command {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new(env!("CARGO_BIN_EXE_passk"));
    c.current_dir(root());
    c.env_remove("OLLAMA_HOST");
    // SAFETY: between fork and exec only `signal`, which is async-signal-safe, is called.
    unsafe {
        c.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    c
}

/// `passk run` against `stub` into `out`, plus `extra` flags (space-separated), plain log lines.
pub(crate) fn run_args(stub: &Stub, out: &Path, models: &str, extra: &str) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "--no-progress",
        "--host",
        &stub.host(),
        "--models",
        models,
    ]
    .map(String::from)
    .to_vec();
    args.extend(["--out".to_string(), out.display().to_string()]);
    args.extend(extra.split_whitespace().map(String::from));
    args
}

/// Starts `passk` with `args` in the background, stdout and stderr as given.
pub(crate) fn spawn(args: &[String], stdout: Stdio, stderr: Stdio) -> Child {
    passk()
        .args(args)
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .expect("spawn passk")
}

/// Runs a command and returns (exit code, stdout, stderr).
pub(crate) fn output(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("spawn passk");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// How many conversations the store suite has: tests derive counts from the data, so adding a
/// conversation as docs/reference/suites.md says never breaks them.
pub(crate) fn store_conversations() -> usize {
    use passk::domain::Domain as _;
    passk::suites::store::load_store(&root())
        .expect("store suite")
        .tasks()
        .len()
}

/// How many tickets the triage suite has.
pub(crate) fn triage_tickets() -> usize {
    use passk::domain::Domain as _;
    passk::suites::triage::load_triage(&root())
        .expect("triage suite")
        .tasks()
        .len()
}

/// How many messages the router suite has.
pub(crate) fn router_messages() -> usize {
    passk::suites::router::load_router(&root())
        .expect("router suite")
        .messages
        .len()
}

/// Whether `python3` runs; prints why the test is skipped when it does not (`why`: what needs it).
pub(crate) fn python3(why: &str) -> bool {
    let ok = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip(&format!("python3 is not on PATH, and {why}"));
    }
    ok
}

/// A fresh temporary directory.
pub(crate) fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// Copies `tasks/` and `graders/` into `dir`, so a test may edit them.
pub(crate) fn copy_data(dir: &Path) {
    for sub in ["tasks", "graders"] {
        copy_tree(&root().join(sub), &dir.join(sub));
    }
}

/// Copies the folder `from` into `to`, whole.
pub(crate) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// A stub server running on its own runtime for the length of a test, serving the project's suites.
pub(crate) struct Stub {
    rt: tokio::runtime::Runtime,
    handle: Option<passk_stub::StubHandle>,
}

impl Stub {
    /// Starts the stub serving oracle models (which replay the gold trajectories) under `names`.
    pub(crate) fn oracles(names: &[&str]) -> Stub {
        let models = names
            .iter()
            .map(|n| (*n, passk_stub::Behaviour::Oracle.into()))
            .collect();
        Stub::start(models, |_| {})
    }

    /// Starts the stub with the project's store, router and triage suites in its script book; model
    /// names follow the stub's conventions (`oracle`, `text-calls`, `never-answer`, ...) unless
    /// `models` overrides them.
    pub(crate) fn start(
        models: Vec<(&str, passk_stub::ModelSpec)>,
        tweak: impl FnOnce(&mut passk_stub::StubConfig),
    ) -> Stub {
        use passk::domain::Domain;
        let store = passk::suites::store::load_store(&root()).expect("store suite");
        let router = passk::suites::router::load_router(&root()).expect("router suite");
        let mut book = passk_stub::ScriptBook::from_suites(store.tasks(), Some(&router));
        book.set_example_values(&store.example_values());
        let mut config = passk_stub::StubConfig::with_script(book);
        config.default = None;
        for (name, spec) in models {
            config = config.model(name, spec);
        }
        tweak(&mut config);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let handle = rt
            .block_on(passk_stub::StubServer::start(config))
            .expect("stub");
        Stub {
            rt,
            handle: Some(handle),
        }
    }

    /// `host:port` to pass as `--host`.
    pub(crate) fn host(&self) -> String {
        self.handle.as_ref().expect("running").base_url()
    }

    /// Faults injected so far.
    pub(crate) fn injected(&self) -> std::collections::BTreeMap<passk_stub::FaultKind, u64> {
        self.handle.as_ref().expect("running").injected()
    }

    /// Chat requests received so far for `model`.
    pub(crate) fn requests(&self, model: &str) -> u64 {
        self.handle.as_ref().expect("running").requests(model)
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            self.rt.block_on(h.shutdown());
        }
    }
}

/// Reads a run directory back whole (transcripts, end states and replies kept).
pub(crate) fn load(dir: &Path) -> passk::analysis::Run {
    passk::analysis::load_run_keeping(dir, passk::analysis::Keep::Everything).expect("load run")
}
