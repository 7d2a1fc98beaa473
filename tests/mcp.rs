//! The library suite, whose tools are an MCP server in Python (`tasks/library/server.py`), end to
//! end through the binary: `suite check` replays gold and near-misses through the real server, a
//! run against the stub's oracle records and reports it like the store, freezing covers the
//! server's files, and a server that crashes or hangs lands in its own bucket, never the model's.
//! Every test skips, saying so, where `python3` is not on `PATH`.

use crate::util::{copy_data, output, passk, root, tempdir};
use passk::analysis::{Keep, load_run_keeping};
use passk::domain::Domain;
use passk::runner::record::Outcome;
use passk_stub::{ScriptBook, StubConfig, StubHandle, StubServer};
use std::path::Path;

/// Whether `python3` runs; says why the test is skipped when it does not.
fn python3() -> bool {
    crate::util::python3("the library suite's server is a Python script")
}

fn library(root: &Path) -> passk::mcp::McpSuite {
    passk::mcp::load_suite(root, "library").expect("the library suite loads")
}

/// Ids of the library conversations whose gold calls `tool`.
fn calling(root: &Path, tool: &str) -> Vec<String> {
    library(root)
        .tasks()
        .iter()
        .filter(|t| {
            t.gold
                .turns
                .iter()
                .flat_map(|t| &t.calls)
                .any(|c| c.tool == tool)
        })
        .map(|t| t.id.clone())
        .collect()
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).expect("read");
    assert!(text.contains(from), "{} lacks {from:?}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).expect("write");
}

/// A stub whose oracle replays the library suite's gold trajectories.
async fn stub(root: &Path) -> StubHandle {
    let suite = library(root);
    StubServer::start(StubConfig::with_script(ScriptBook::from_suites(
        suite.tasks(),
        None,
    )))
    .await
    .expect("stub starts")
}

/// `passk <args> --root <root>`, off the async runtime.
async fn passk_in(root: &Path, args: Vec<String>) -> (i32, String, String) {
    let root = root.to_path_buf();
    tokio::task::spawn_blocking(move || output(passk().args(&args).arg("--root").arg(&root)))
        .await
        .expect("join")
}

/// `passk report <out>`, off the async runtime.
async fn report(out: &Path) -> (i32, String, String) {
    let out = out.to_path_buf();
    tokio::task::spawn_blocking(move || output(passk().arg("report").arg(&out)))
        .await
        .expect("join")
}

fn run_args(url: &str, out: &Path, trials: u32) -> Vec<String> {
    let args = format!(
        "run --suite library --models oracle --no-progress --trials {trials} --host {url} --out"
    );
    let mut v: Vec<String> = args.split_whitespace().map(String::from).collect();
    v.push(out.display().to_string());
    v
}

#[test]
fn suite_check_replays_gold_and_near_misses_through_the_real_server() {
    if !python3() {
        return;
    }
    let (code, stdout, stderr) = output(passk().args(["suite", "check"]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let s = library(&root());
    let near: usize = s.tasks().iter().map(|t| t.near_misses.len()).sum();
    assert!(
        stdout.contains(&format!(
            "library gold: {n}/{n} passing",
            n = s.tasks().len()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "library near-misses: {near}/{near} failing as expected"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("library: 5 tools, 7 parameters"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_library_suite_runs_and_reports_like_the_store() {
    if !python3() {
        return;
    }
    let handle = stub(&root()).await;
    let dir = tempdir();
    let out = dir.path().join("run");
    let (code, stdout, stderr) = passk_in(&root(), run_args(&handle.base_url(), &out, 2)).await;
    handle.shutdown().await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let run = crate::util::load(&out);
    let tasks = library(&root()).tasks().len();
    assert_eq!(run.conversations.len(), 2 * tasks);
    for c in &run.conversations {
        assert_eq!(c.suite, "library");
        assert!(c.verdict.passed, "{}: {:?}", c.task, c.verdict.reasons);
        let end = c.end_state.to_value();
        assert!(end.get("loans").is_some(), "{end}");
    }
    let w1 = run
        .conversations
        .iter()
        .find(|c| c.task == "DW1")
        .expect("DW1");
    assert_eq!(
        w1.end_state.to_value()["loans"]["B108"]["member"],
        "M2",
        "the checkout reached the server"
    );
    assert!(run.manifest.suite_digests.contains_key("library"));
    let (code, stdout, stderr) = report(&out).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let report = std::fs::read_to_string(out.join("report/report.md")).expect("report.md");
    assert!(report.contains("library"), "the report names the suite");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_server_is_refused_and_a_failing_one_is_its_own_bucket() {
    if !python3() {
        return;
    }
    let dir = tempdir();
    let data = dir.path();
    copy_data(data);
    let server = data.join("tasks/library/server.py");
    // checkout_book crashes the server; return_book hangs it past a five-second timeout, which
    // leaves a loaded machine's ordinary tool calls (milliseconds) far inside it.
    edit(
        &server,
        "    m, b = member(member_id), book(book_id)\n    if b[\"book_id\"] in DB[\"loans\"]:",
        "    os._exit(3)\n    m, b = member(member_id), book(book_id)\n    if b[\"book_id\"] in DB[\"loans\"]:",
    );
    edit(
        &server,
        "    b = book(book_id)\n    if b[\"book_id\"] not in DB[\"loans\"]:",
        "    import time\n    time.sleep(30)\n    b = book(book_id)\n    if b[\"book_id\"] not in DB[\"loans\"]:",
    );
    // place_hold answers with a JSON-RPC error object (-32601, method not found), as a
    // half-started server does: the server's failure, never a tool result shown to the model.
    edit(
        &server,
        "def place_hold(member_id, book_id):\n",
        "def place_hold(member_id, book_id):\n    raise LookupError(\"tools/call\")\n",
    );
    edit(
        &data.join("tasks/library/mcp.json"),
        "\"timeout_s\": 10",
        "\"timeout_s\": 5",
    );

    let (code, _, stderr) = passk_in(data, vec!["verify".into()]).await;
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("tasks/library/server.py changed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("tasks/library/mcp.json changed"),
        "{stderr}"
    );
    let handle = stub(&root()).await;
    let out = data.join("refused");
    let (code, _, stderr) = passk_in(data, run_args(&handle.base_url(), &out, 1)).await;
    assert_ne!(code, 0, "a run refuses a changed server file");
    assert!(
        stderr.contains("tasks/library/server.py changed"),
        "{stderr}"
    );

    let (code, _, stderr) = passk_in(data, vec!["suite".into(), "check".into()]).await;
    assert_ne!(code, 0, "the broken server fails the gold replay");
    let (_, stdout, _) = passk_in(
        data,
        vec!["suite".into(), "check".into(), "--verbose".into()],
    )
    .await;
    assert!(
        format!("{stdout}{stderr}").contains("tool server failed"),
        "{stdout}{stderr}"
    );

    let (code, stdout, stderr) = passk_in(data, vec!["freeze".into()]).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let out = data.join("run");
    let (code, stdout, stderr) = passk_in(data, run_args(&handle.base_url(), &out, 1)).await;
    handle.shutdown().await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    // The reasons and error texts too, which the statistics do not keep.
    let run = load_run_keeping(&out, Keep::Everything).expect("records");
    let mut failing = calling(data, "checkout_book");
    failing.extend(calling(data, "return_book"));
    let errors = calling(data, "place_hold");
    assert!(!errors.is_empty(), "some conversation places a hold");
    failing.extend(errors.iter().cloned());
    let mut error_replies = 0;
    for c in &run.conversations {
        let want = if failing.contains(&c.task) {
            Outcome::ToolServerFail
        } else {
            Outcome::Pass
        };
        assert_eq!(c.outcome, want, "{}: {:?}", c.task, c.verdict.reasons);
        if want == Outcome::ToolServerFail {
            assert!(
                c.verdict.failure_mode.is_none(),
                "never a model failure mode"
            );
            let why = c.verdict.reasons.join("; ");
            assert!(
                why.contains("tool server failure") && why.contains("the server"),
                "{why}"
            );
            let error = c
                .tool_events
                .iter()
                .rev()
                .find_map(|e| e.error.clone())
                .unwrap_or_default();
            assert!(
                ["exited", "no answer", "JSON-RPC error"]
                    .iter()
                    .any(|w| error.contains(w)),
                "{}: {error}",
                c.task
            );
            error_replies += usize::from(error.contains("JSON-RPC error"));
        }
    }
    assert!(error_replies > 0, "an error reply ended a conversation");
    let (code, stdout, stderr) = report(&out).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("report/summary.json")).expect("summary.json"),
    )
    .expect("summary json");
    assert!(
        counts_of(&summary).contains(&(failing.len() as u64)),
        "summary.json counts {} tool server failures somewhere",
        failing.len()
    );
    assert!(
        std::fs::read_to_string(out.join("report/report.md"))
            .expect("report.md")
            .contains("tool server")
    );
}

/// Every `tool_server_fail` count in a summary.
fn counts_of(v: &serde_json::Value) -> Vec<u64> {
    match v {
        serde_json::Value::Object(m) => m
            .iter()
            .flat_map(|(k, x)| match (k.as_str(), x.as_u64()) {
                ("tool_server_fail", Some(n)) => vec![n],
                _ => counts_of(x),
            })
            .collect(),
        serde_json::Value::Array(a) => a.iter().flat_map(counts_of).collect(),
        _ => Vec::new(),
    }
}

#[test]
fn a_docs_variant_keeps_the_servers_schemas_and_a_renamed_parameter_is_refused() {
    if !python3() {
        return;
    }
    let dir = tempdir();
    let data = dir.path();
    copy_data(data);
    let tools = data.join("tasks/library/tools");
    std::fs::create_dir_all(&tools).expect("mkdir");
    let docs = passk::domain::tool_docs::ToolDocs {
        tools: library(&root())
            .presentation()
            .docs(passk::domain::ToolVariant::DOCUMENTED)
            .expect("documented")
            .tools
            .iter()
            .rev()
            .cloned()
            .map(|mut t| {
                t.description = format!("{} (terse)", t.description);
                t
            })
            .collect(),
    };
    std::fs::write(
        tools.join("terse.json"),
        serde_json::to_string_pretty(&docs).unwrap(),
    )
    .expect("write");
    let s = library(data);
    let terse = passk::domain::ToolVariant::named("terse").unwrap();
    let shown = s.tools(terse);
    assert_eq!(shown.len(), 5);
    assert!(
        shown[0]["function"]["description"]
            .as_str()
            .unwrap()
            .ends_with("(terse)")
    );
    assert_eq!(
        shown[0]["function"]["parameters"]["type"], "object",
        "the server's schema"
    );

    let text = std::fs::read_to_string(tools.join("terse.json")).unwrap();
    std::fs::write(
        tools.join("terse.json"),
        text.replacen("\"book_id\"", "\"isbn\"", 1),
    )
    .unwrap();
    let err = passk::mcp::load_suite(data, "library")
        .err()
        .expect("refused")
        .to_string();
    assert!(
        err.contains("terse.json: tools[") && err.contains("the file documents"),
        "{err}"
    );
}

/// On a machine without the server's program, commands that load every suite leave the MCP suite
/// out with one loud line and go on with the others; asking for it by name is refused.
#[test]
fn a_missing_server_command_skips_the_suite_loudly_and_refuses_it_by_name() {
    let empty = tempdir();
    let (code, out, err) = output(passk().args(["suite", "check"]).env("PATH", empty.path()));
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("SKIPPED: ") && err.contains("`python3` is not on this machine"),
        "{err}"
    );
    assert!(out.contains("store"), "{out}");
    assert!(!out.contains("library"), "{out}");
    let (code, _, err) = output(
        passk()
            .args(["run", "--suite", "library", "--host", "http://127.0.0.1:9"])
            .env("PATH", empty.path()),
    );
    assert_ne!(code, 0);
    assert!(err.contains("`python3` is not on this machine"), "{err}");
}

/// A copy of the project's data with one edit of the library's server, frozen.
async fn frozen_with_edit(from: &str, to: &str) -> tempfile::TempDir {
    let dir = tempdir();
    copy_data(dir.path());
    edit(&dir.path().join("tasks/library/server.py"), from, to);
    let (code, stdout, stderr) = passk_in(dir.path(), vec!["freeze".into()]).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trials_given_up_on_a_broken_tool_server_are_played_again_with_retry_failed() {
    if !python3() {
        return;
    }
    // place_hold fails (a JSON-RPC error) while a file named BROKEN lies beside the server: a
    // fault of the deployment, fixed without changing a frozen file.
    let dir = frozen_with_edit(
        "def place_hold(member_id, book_id):\n",
        "def place_hold(member_id, book_id):\n    if os.path.exists(os.path.join(os.path.dirname(__file__), \"BROKEN\")):\n        raise LookupError(\"tools/call\")\n",
    )
    .await;
    let data = dir.path();
    let broken = data.join("tasks/library/BROKEN");
    std::fs::write(&broken, "").expect("BROKEN");
    let handle = stub(&root()).await;
    let out = data.join("run");
    let holds = calling(data, "place_hold");
    let outcomes = |out: &Path| -> Vec<Outcome> {
        let run = crate::util::load(out);
        holds
            .iter()
            .map(|t| {
                let latest = run.conversations.iter().rev().find(|c| &c.task == t);
                latest.expect("a record").outcome
            })
            .collect()
    };
    for _ in 0..passk::runner::journal::MAX_WIRE_TRIES {
        let (code, stdout, stderr) = passk_in(data, run_args(&handle.base_url(), &out, 1)).await;
        assert_eq!(code, 0, "{stdout}{stderr}");
    }
    assert!(outcomes(&out).iter().all(|o| *o == Outcome::ToolServerFail));
    let (code, stdout, stderr) = report(&out).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let md = std::fs::read_to_string(out.join("report/report.md")).expect("report.md");
    let left = match holds.len() {
        1 => "1 conversation ended on a failure outside the model".to_string(),
        n => format!("{n} conversations ended on a failure outside the model"),
    };
    assert!(md.contains(&left) && md.contains("--retry-failed"), "{md}");

    std::fs::remove_file(&broken).expect("fixed");
    let (code, stdout, stderr) = passk_in(data, run_args(&handle.base_url(), &out, 1)).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        outcomes(&out).iter().all(|o| *o == Outcome::ToolServerFail),
        "out of tries: a plain resume leaves them"
    );
    let mut retry = run_args(&handle.base_url(), &out, 1);
    retry.push("--retry-failed".into());
    let (code, stdout, stderr) = passk_in(data, retry).await;
    handle.shutdown().await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        outcomes(&out).iter().all(|o| *o == Outcome::Pass),
        "played again once the server works: {:?}",
        outcomes(&out)
    );
}

/// Whether process `pid` runs; a zombie (killed, not yet reaped by its new parent) does not.
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

/// The process ids the hanging server wrote, waiting for the first for up to a minute.
fn hung_servers(pids: &Path) -> Vec<i32> {
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(60) {
        let text = std::fs::read_to_string(pids).unwrap_or_default();
        let found: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
        if !found.is_empty() {
            return found;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the server never started");
}

fn assert_gone_within_5_s(pids: &[i32], after: &str) {
    let start = std::time::Instant::now();
    while pids.iter().any(|&p| running(p)) {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "a tool server outlived passk after {after}: {pids:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_tool_server_that_ignores_sigterm_dies_with_passk() {
    if !python3() {
        return;
    }
    // While a file named HANG lies beside it, the server writes its pid, ignores SIGTERM and
    // never reads its input.
    let dir = frozen_with_edit(
        "def main():\n",
        "def main():\n    here = os.path.dirname(os.path.abspath(__file__))\n    if os.path.exists(os.path.join(here, \"HANG\")):\n        import signal, time\n        signal.signal(signal.SIGTERM, signal.SIG_IGN)\n        with open(os.path.join(here, \"pids\"), \"a\") as f:\n            f.write(f\"{os.getpid()}\\n\")\n        time.sleep(600)\n",
    )
    .await;
    let data = dir.path();
    std::fs::write(data.join("tasks/library/HANG"), "").expect("HANG");
    let pids = data.join("tasks/library/pids");
    let quiet = || std::process::Stdio::null();

    // SIGKILL of passk: nothing of passk runs to stop the server; the kernel must.
    let args = ["suite", "check", "--root"].map(String::from).to_vec();
    let mut args = args;
    args.push(data.display().to_string());
    let mut passk = crate::util::spawn(&args, quiet(), quiet());
    let servers = hung_servers(&pids);
    passk.kill().expect("SIGKILL");
    passk.wait().expect("reaped");
    assert_gone_within_5_s(&servers, "SIGKILL");

    // Ctrl-C twice during a run: the second exits at once.
    std::fs::remove_file(&pids).expect("pids");
    let handle = stub(&root()).await;
    let mut args = run_args(&handle.base_url(), &data.join("run"), 1);
    args.extend(["--root".to_string(), data.display().to_string()]);
    let mut passk = crate::util::spawn(&args, quiet(), quiet());
    let servers = hung_servers(&pids);
    for _ in 0..2 {
        // SAFETY: signalling a child process this test started and has not reaped.
        unsafe { libc::kill(passk.id() as i32, libc::SIGINT) };
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    let status = passk.wait().expect("exits");
    handle.shutdown().await;
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert_gone_within_5_s(&servers, "a double Ctrl-C");
}
