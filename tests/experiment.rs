//! An experiment directory of one's own, as a researcher uses it with an installed passk: `passk
//! init` in a scratch directory outside the repository, a new MCP suite written there (a Python
//! server, standard library only) found, checked, frozen, played and reported with no rebuild,
//! and graders frozen per suite: adding the suite moves no other suite's digest, so runs of the
//! store made before and after compare, and a changed store grader is refused naming suite and
//! file.

use crate::util::{copy_tree, output, passk, root, tempdir};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

/// Whether `python3` runs; says why the test is skipped when it does not.
fn python3() -> bool {
    crate::util::python3("the garden suite's server is a Python script")
}

/// `passk serve-stub` on a free port in `exp`, as a user starts it; killed when dropped.
struct ServeStub {
    child: Child,
    url: String,
}

impl ServeStub {
    fn start(exp: &Path) -> ServeStub {
        let mut child = passk()
            .current_dir(exp)
            .args(["serve-stub", "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve-stub starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the stub prints its address");
        ServeStub {
            child,
            url: line.trim().to_string(),
        }
    }
}

impl Drop for ServeStub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `passk <args>` started in `exp`: (exit code, stdout, stderr).
fn passk_in(exp: &Path, args: &[&str]) -> (i32, String, String) {
    output(passk().current_dir(exp).args(args))
}

/// `passk run` of the store's first two conversations by the stub's oracle into results/`id`, one
/// trial each unless `extra` says `--trials`.
fn store_run(exp: &Path, stub: &ServeStub, id: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "run",
        "--suite",
        "store",
        "--models",
        "oracle",
        "--tasks",
        "L1,L2",
        "--no-progress",
        "--host",
        &stub.url,
        "--run-id",
        id,
    ];
    if !extra.contains(&"--trials") {
        args.extend(["--trials", "1"]);
    }
    args.extend(extra);
    passk_in(exp, &args)
}

/// The digest the lock gives `suite`.
fn locked_digest(exp: &Path, suite: &str) -> String {
    passk::grade::freeze::read_lock(exp).expect("lock").suites[suite]
        .digest
        .clone()
}

#[test]
fn an_experiment_folder_of_ones_own_plays_a_new_mcp_suite_without_a_rebuild() {
    if !python3() {
        return;
    }
    let scratch = tempdir();
    assert!(
        !scratch.path().starts_with(root()),
        "outside the repository"
    );
    let (code, out, err) = output(passk().current_dir(scratch.path()).args(["init", "exp"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("the suites store, router, triage, library\n"),
        "init names the suites it wrote: {out}"
    );
    let exp: PathBuf = scratch.path().join("exp");
    assert_eq!(
        passk_in(&exp, &["verify"]).0,
        0,
        "a fresh experiment verifies"
    );
    let (code, _, err) = output(passk().current_dir(scratch.path()).args(["init", "exp"]));
    assert_eq!(code, 2, "a second init writes over nothing: {err}");

    // A store run before the new suite exists.
    let stub = ServeStub::start(&exp);
    let (code, _, err) = store_run(&exp, &stub, "before", &[]);
    assert_eq!(code, 0, "{err}");
    drop(stub);
    let store_before = locked_digest(&exp, "store");

    // The researcher's suite: files only, found at run time.
    copy_tree(&root().join("tests/data/garden"), &exp);
    std::fs::create_dir_all(exp.join("tasks/notes")).expect("mkdir");
    let (code, out, err) = passk_in(&exp, &["suite", "check"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("garden: 2 tools, 2 parameters, 2 conversations"),
        "{out}"
    );
    assert!(out.contains("garden gold: 2/2 passing"), "{out}");
    assert!(
        out.contains("not a suite: ./tasks/notes/: no mcp.json"),
        "{out}"
    );
    let (_, help, _) = passk_in(&exp, &["run", "--help"]);
    assert!(
        help.contains("garden:"),
        "--help lists the suite found: {help}"
    );
    let (code, _, err) = passk_in(&exp, &["verify"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("suite garden is not frozen yet"), "{err}");
    let (code, out, err) = passk_in(&exp, &["freeze"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        locked_digest(&exp, "store"),
        store_before,
        "the store's digest did not move"
    );

    // The new suite is played and reported; its records carry its own digest.
    let stub = ServeStub::start(&exp);
    let garden_run = [
        "run",
        "--suite",
        "garden",
        "--models",
        "oracle",
        "--trials",
        "2",
        "--no-progress",
        "--host",
        &stub.url,
        "--run-id",
        "garden",
        "--report",
    ];
    let (code, _, err) = passk_in(&exp, &garden_run);
    assert_eq!(code, 0, "{err}");
    let run = passk::analysis::load_run(&exp.join("results/garden")).expect("the garden run");
    assert_eq!(run.conversations.len(), 4);
    assert!(
        run.conversations
            .iter()
            .all(|c| c.outcome == passk::runner::record::Outcome::Pass)
    );
    let garden = locked_digest(&exp, "garden");
    assert_eq!(run.grader_digests.into_iter().collect::<Vec<_>>(), [garden]);
    let md = std::fs::read_to_string(exp.join("results/garden/report/report.md")).expect("report");
    assert!(md.contains("garden"), "{md}");

    // Store runs before and after adding the suite compare: the store's graders did not move.
    let (code, _, err) = store_run(&exp, &stub, "after", &[]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = passk_in(&exp, &["compare", "results/before", "results/after"]);
    assert_eq!(code, 0, "{err}");

    // A run extended to a larger k plays only the trials it lacks.
    let (code, _, err) = store_run(&exp, &stub, "after", &["--trials", "2"]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("add --extend"), "{err}");
    let (code, _, err) = store_run(&exp, &stub, "after", &["--trials", "2", "--extend"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("run: 2 new records"), "{err}");
    assert!(err.contains("2 already on disk"), "{err}");

    // A changed store grader: refused by the run, then by a resume once frozen, then by compare,
    // each naming the suite and the file.
    let grader = exp.join("graders/store/expectations.json");
    let text = std::fs::read_to_string(&grader).expect("read");
    std::fs::write(&grader, format!("{text}\n")).expect("edit");
    let changed = "suite store: graders/store/expectations.json changed";
    let (code, _, err) = store_run(&exp, &stub, "before", &[]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains(changed), "{err}");
    assert_eq!(passk_in(&exp, &["freeze"]).0, 0);
    let (code, _, err) = store_run(&exp, &stub, "before", &[]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains(changed), "{err}");
    let (code, _, err) = store_run(&exp, &stub, "changed", &[]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = passk_in(&exp, &["compare", "results/before", "results/changed"]);
    assert_eq!(code, 8, "{err}");
    assert!(err.contains(changed), "{err}");
}

#[test]
fn advice_points_where_the_user_stands() {
    let empty = tempdir();
    for args in [
        vec!["run"],
        vec!["suite", "check"],
        vec!["freeze"],
        vec!["verify"],
    ] {
        let (code, _, err) = output(passk().current_dir(empty.path()).args(&args));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("no experiment in .")
                && err.contains("passk init")
                && err.contains("--root"),
            "{args:?}: {err}"
        );
    }
    let exp = root().display().to_string();
    let (code, out, _) = output(
        passk()
            .current_dir(empty.path())
            .env("PASSK_ROOT", &exp)
            .arg("verify"),
    );
    assert_eq!(code, 0, "PASSK_ROOT names the experiment: {out}");
}
