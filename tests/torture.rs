//! What a hostile user tries on `passk run` and `passk report`: two writers on one directory,
//! closed pipes, numbers that overflow, mixed records, loose names and early signals. Each is
//! refused with a named problem and a documented exit code, or survived, and nothing is lost.

use crate::util::{self, Stub, output, passk, run_args};
use passk::runner::record::Record;
use passk_stub::Behaviour;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Lines of a record file.
fn lines(dir: &Path, name: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(name))
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

/// Waits until `dir` has at least one whole record line (the run is under way).
fn wait_for_records(dir: &Path) {
    let started = Instant::now();
    while lines(dir, "router.jsonl").is_empty() && lines(dir, "conversations.jsonl").is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no record written"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A stub slow enough (20 ms a call) that a run is still under way when the test acts on it.
fn slow_stub() -> Stub {
    Stub::start(vec![("oracle-a", Behaviour::Oracle.into())], |c| {
        c.load = Duration::from_millis(20)
    })
}

fn signal(child: &Child, name: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

#[test]
fn a_second_run_on_the_same_directory_is_refused_and_names_the_holder() {
    let stub = slow_stub();
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = run_args(&stub, &out, "oracle-a", "--trials 2 --suite router");
    let first = util::spawn(&args, Stdio::null(), Stdio::piped());
    wait_for_records(&out);
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 10, "{stderr}");
    assert!(
        stderr.contains(&format!("process {}", first.id())) && stderr.contains("in use"),
        "names the holder: {stderr}"
    );
    let done = first.wait_with_output().expect("wait");
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let written = lines(&out, "router.jsonl");
    let unique: BTreeSet<&String> = written.iter().collect();
    assert_eq!(
        (written.len(), unique.len()),
        (2 * util::router_messages(), 2 * util::router_messages()),
        "each trial once"
    );
    // Released: the same command now resumes (nothing left to do).
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_directory_whose_run_lock_was_deleted_still_has_one_writer() {
    let stub = Stub::oracles(&["oracle-a"]);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    std::fs::create_dir_all(&out).expect("mkdir");
    let args = run_args(&stub, &out, "oracle-a", "--trials 1 --suite router");
    let held = passk::runner::lock::RunLock::acquire(&out).expect("lock");
    // A cleanup script removes the lock file of a run under way.
    std::fs::remove_file(out.join("run.lock")).expect("rm run.lock");
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 10, "the directory itself is still locked: {stderr}");
    assert!(stderr.contains("in use"), "{stderr}");
    assert!(lines(&out, "router.jsonl").is_empty(), "nothing written");
    drop(held);
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_run_whose_run_lock_is_deleted_stops_before_its_next_record() {
    let stub = slow_stub();
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = run_args(&stub, &out, "oracle-a", "--trials 3 --suite router");
    let first = util::spawn(&args, Stdio::null(), Stdio::piped());
    wait_for_records(&out);
    std::fs::remove_file(out.join("run.lock")).expect("rm run.lock");
    let done = first.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(10), "{stderr}");
    assert!(
        stderr.contains("run.lock was deleted or replaced"),
        "{stderr}"
    );
    let written = lines(&out, "router.jsonl");
    assert!(written.len() < 3 * util::router_messages(), "stopped early");
    // The same command resumes and finishes, each trial once.
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 0, "{stderr}");
    let written = lines(&out, "router.jsonl");
    let unique: BTreeSet<&String> = written.iter().collect();
    assert_eq!(
        (written.len(), unique.len()),
        (3 * util::router_messages(), 3 * util::router_messages()),
        "each trial once"
    );
}

#[test]
fn passk_repair_mends_the_duplicates_two_writers_left() {
    let stub = Stub::oracles(&["oracle-a"]);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = run_args(&stub, &out, "oracle-a", "--trials 1 --suite router");
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 0, "{stderr}");
    // What an earlier version's second writer left: the same trials appended again.
    let path = out.join("router.jsonl");
    let text = std::fs::read_to_string(&path).expect("read");
    let first_two: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, format!("{text}{first_two}")).expect("write");
    let report =
        || output(passk().args(["report", &out.display().to_string(), "--resamples", "50"]));
    let (code, _, stderr) = report();
    assert_ne!(code, 0, "duplicates are refused: {stderr}");
    let (code, stdout, stderr) = output(passk().arg("repair").arg(&out));
    assert_eq!(code, 0, "{stderr}");
    let n = util::router_messages();
    assert!(
        stdout.contains(&format!("router.jsonl:{}: dropped", n + 1))
            && stdout.contains("a duplicate of line 1")
            && stdout.contains("dropped 2 duplicate(s)"),
        "{stdout}"
    );
    assert_eq!(lines(&out, "router.jsonl").len(), n);
    assert_eq!(lines(&out, "router.jsonl.dropped").len(), 2, "nothing lost");
    let (code, _, stderr) = report();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn an_import_into_a_directory_in_use_is_refused() {
    let tmp = util::tempdir();
    let reference = tmp.path().join("reference");
    std::fs::create_dir_all(&reference).expect("mkdir");
    std::fs::write(
        reference.join("orchestrator.jsonl"),
        "{\"task\": \"L1\", \"model\": \"m\", \"passed\": true}\n",
    )
    .expect("write");
    let out = tmp.path().join("imported");
    std::fs::create_dir_all(&out).expect("mkdir");
    let held = passk::runner::lock::RunLock::acquire(&out).expect("lock");
    let import = || {
        output(
            passk()
                .args(["import", "--reference"])
                .arg(&reference)
                .arg("--out")
                .arg(&out),
        )
    };
    let (code, _, stderr) = import();
    assert_eq!(code, 10, "{stderr}");
    assert!(stderr.contains("in use"), "{stderr}");
    assert!(!out.join("manifest.json").exists(), "nothing written");
    drop(held);
    let (code, _, stderr) = import();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_lock_left_by_a_killed_run_is_taken_over() {
    let stub = slow_stub();
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = run_args(&stub, &out, "oracle-a", "--trials 1 --suite router");
    let mut child = util::spawn(&args, Stdio::null(), Stdio::null());
    wait_for_records(&out);
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    let lock = std::fs::read_to_string(out.join("run.lock")).expect("lock file left behind");
    assert!(lock.contains(&child.id().to_string()), "{lock}");
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("took over the run directory's lock")
            && stderr.contains("which no longer holds it")
            && !stderr.contains("no longer running"),
        "{stderr}"
    );
    assert_eq!(lines(&out, "router.jsonl").len(), util::router_messages());
}

#[test]
fn closed_pipes_neither_panic_nor_stop_a_run() {
    let stub = Stub::oracles(&["oracle-a"]);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = run_args(&stub, &out, "oracle-a", "--trials 1 --suite router");
    // `passk run ... 2>&1 | head -0`: both ends closed before the first line.
    let mut child = util::spawn(&args, Stdio::piped(), Stdio::piped());
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0), "a closed stdout exits 0");
    assert_eq!(
        lines(&out, "router.jsonl").len(),
        util::router_messages(),
        "the whole run was played"
    );
    // `passk report ... 2>&1 >/dev/null | head -0`
    let mut child = passk()
        .args(["report", &out.display().to_string(), "--resamples", "50"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stderr.take());
    assert_eq!(child.wait().expect("wait").code(), Some(0));
    // Every command's error path writes to stderr the same way: `passk plan` with a bad rate and
    // stderr closed exits with its usage code, never a panic.
    let mut child = passk()
        .args(["plan", "--rates", "0.5,nan"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stderr.take());
    assert_eq!(
        child.wait().expect("wait").code(),
        Some(2),
        "usage error, no panic"
    );
}

#[test]
fn numbers_and_names_that_cannot_be_used_exit_2_naming_them() {
    let stub = Stub::start(vec![], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let file = tmp.path().join("exp.toml");
    for (extra, named) in [
        ("--timeout inf", "--timeout"),
        ("--timeout 1e300", "--timeout"),
        ("--connect-timeout=-1", "--connect-timeout"),
        ("--connect-timeout nan", "--connect-timeout"),
        ("--temperature=-1", "--temperature"),
        ("--num-ctx 0", "--num-ctx"),
        ("--run-id ../../x", "--run-id"),
    ] {
        let (code, _, stderr) = output(passk().args(run_args(&stub, &out, "oracle", extra)));
        assert_eq!(code, 2, "{extra}: {stderr}");
        assert!(
            stderr.contains(named) && !stderr.contains("panicked"),
            "{extra}: {stderr}"
        );
    }
    for models in ["", ",", "oracle,oracle"] {
        let (code, _, stderr) = output(passk().args(run_args(&stub, &out, models, "")));
        assert_eq!(code, 2, "{models:?}: {stderr}");
        assert!(
            stderr.contains("--models") && !stderr.contains("reachable"),
            "{stderr}"
        );
    }
    for (text, key) in [
        ("timeout = inf\n", "timeout"),
        ("connect-timeout = -1.0\n", "connect-timeout"),
        ("retry-backoff = nan\n", "retry-backoff"),
        ("trails = 3\n", "trails"),
    ] {
        std::fs::write(&file, text).expect("write");
        let flags = format!("--config {}", file.display());
        let (code, _, stderr) = output(passk().args(run_args(&stub, &out, "oracle", &flags)));
        assert_eq!(code, 2, "{text}: {stderr}");
        assert!(
            stderr.contains(&file.display().to_string()) && stderr.contains(key),
            "{text}: {stderr}"
        );
    }
    assert!(!out.exists(), "nothing written");
    for args in [
        vec!["doctor", "--timeout", "inf"],
        vec!["pull", "--connect-timeout=-1", "m"],
        vec!["cost", "--capable-success", "nan"],
        vec!["cost", "--cheaper-price", "inf"],
        vec!["serve-stub", "--speed", "0"],
        vec!["calibrate", "-k", "0"],
    ] {
        let (code, _, stderr) = output(passk().args(&args));
        assert_eq!(code, 2, "{args:?}: {stderr}");
    }
}

#[test]
fn the_last_rounds_notes_exit_2_naming_the_flag_or_the_file_and_key() {
    let stub = Stub::start(vec![], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let file = tmp.path().join("exp.toml");
    let mut spaced = run_args(&stub, &out, "oracle", "");
    spaced.extend(["--host".to_string(), "127.0.0 .1".to_string()]);
    let (code, _, stderr) = output(passk().args(&spaced));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--host: ") && stderr.contains("127.0.0 .1"),
        "{stderr}"
    );
    let (code, _, stderr) = output(passk().args(run_args(&stub, &out, "oracle", "--margin 3")));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--margin: needs --stop-when-decided"),
        "{stderr}"
    );
    for (text, says) in [
        ("hosts = []\n", "key `hosts`: at least one server"),
        (
            "gpu-metrics = [\"garbage\"]\n",
            "key `gpu-metrics`: 'garbage'",
        ),
        // The stopping rule's keys are read and checked like their flags.
        (
            "stop-when-decided = true\nmargin = 0.0\n",
            "key `margin`: must be above 0",
        ),
        (
            "stop-when-decided = true\nalpha = 0.9\n",
            "key `alpha`: must be above 0",
        ),
        (
            "alpha = 0.1\n",
            "key `alpha`: needs `stop-when-decided = true`",
        ),
        (
            "out = \"elsewhere\"\n",
            "key `out`: --out says how this invocation runs",
        ),
    ] {
        std::fs::write(&file, text).expect("write");
        let flags = format!("--config {}", file.display());
        let (code, _, stderr) = output(passk().args(run_args(&stub, &out, "oracle", &flags)));
        assert_eq!(code, 2, "{text}: {stderr}");
        let named = format!("{}: {says}", file.display());
        assert!(stderr.contains(&named), "{text}: {stderr}");
    }
    assert!(!out.exists(), "nothing written");
    let missing = tmp.path().join("no-such-pilot").display().to_string();
    for args in [
        vec!["plan", &missing],
        vec!["plan", "--rates", "0.5,0.7", "--models", "m,m:latest"],
        vec!["plan", "--rates", "0.5,0.7", "--difference", "0"],
        vec!["report", &missing, "--resamples", "0"],
        vec!["compare", &missing, &missing, "--resamples", "0"],
    ] {
        let (code, _, stderr) = output(passk().args(&args));
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn records_that_would_mix_are_refused_by_run_and_report_alike() {
    let stub = Stub::start(vec![], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = run_args(&stub, &out, "oracle", "--trials 1 --suite router");
    assert_eq!(output(passk().args(&args)).0, 0);
    let path = out.join("router.jsonl");
    let text = std::fs::read_to_string(&path).expect("records");
    let first = text.lines().next().expect("a line").to_string();
    let report =
        || output(passk().args(["report", &out.display().to_string(), "--resamples", "50"]));

    // A repeated line: counted twice before, refused now by both, naming the line.
    std::fs::write(&path, format!("{text}{first}\n")).expect("write");
    for (code, _, stderr) in [output(passk().args(&args)), report()] {
        assert_ne!(code, 0, "{stderr}");
        assert!(
            stderr.contains("router.jsonl:49:") && stderr.contains("line 1"),
            "{stderr}"
        );
    }
    // A blank line: refused by both.
    std::fs::write(&path, format!("{first}\n\n")).expect("write");
    for (code, _, stderr) in [output(passk().args(&args)), report()] {
        assert_ne!(code, 0, "{stderr}");
        assert!(stderr.contains("router.jsonl:2: blank line"), "{stderr}");
    }
    // A model the manifest does not name: not reported as one of the run's models.
    std::fs::write(
        &path,
        format!("{}\n", first.replace("\"oracle\"", "\"intruder\"")),
    )
    .expect("write");
    let (code, _, stderr) = report();
    assert_ne!(code, 0);
    assert!(
        stderr.contains("model intruder is not in this run's manifest"),
        "{stderr}"
    );
    // Records without their manifest: a run with other settings does not adopt them.
    std::fs::write(&path, format!("{first}\n")).expect("write");
    std::fs::remove_file(out.join("manifest.json")).expect("rm");
    let other = run_args(&stub, &out, "oracle", "--trials 2 --suite router");
    let (code, _, stderr) = output(passk().args(&other));
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("no manifest.json"), "{stderr}");
    assert!(!out.join("manifest.json").exists());
    assert_eq!(lines(&out, "router.jsonl"), vec![first]);
}

#[test]
fn records_of_other_graders_versions_tasks_or_trials_are_refused_by_run_and_report_alike() {
    let stub = Stub::start(vec![], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = run_args(&stub, &out, "oracle", "--trials 2 --suite router");
    assert_eq!(output(passk().args(&args)).0, 0);
    let path = out.join("router.jsonl");
    let text = std::fs::read_to_string(&path).expect("records");
    let first: serde_json::Value =
        serde_json::from_str(text.lines().next().expect("a line")).expect("json");
    let report =
        || output(passk().args(["report", &out.display().to_string(), "--resamples", "50"]));
    let n = text.lines().count();
    for (field, value, says) in [
        (
            "grader_digest",
            serde_json::json!("f00d"),
            "grader digest f00d is not the manifest's",
        ),
        ("schema_version", serde_json::json!(2), "schema_version 2:"),
        (
            "index",
            serde_json::json!(999),
            "router task 999 is not in this run's manifest",
        ),
        (
            "trial",
            serde_json::json!(2),
            "trial 2 is past this run's k = 2",
        ),
    ] {
        let mut edited = first.clone();
        edited[field] = value;
        std::fs::write(&path, format!("{text}{edited}\n")).expect("write");
        for (code, _, stderr) in [output(passk().args(&args)), report()] {
            assert_ne!(code, 0, "{field}: {stderr}");
            assert!(
                stderr.contains(&format!("router.jsonl:{}: {says}", n + 1)),
                "{field}: {stderr}"
            );
        }
    }
    // A manifest of a format version this passk does not know: refused by both.
    std::fs::write(&path, &text).expect("restore");
    let manifest_path = out.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).expect("manifest"))
            .expect("json");
    manifest["schema_version"] = serde_json::json!(2);
    std::fs::write(&manifest_path, manifest.to_string()).expect("write");
    let (code, _, stderr) = report();
    assert_ne!(code, 0, "{stderr}");
    assert!(
        stderr.contains("manifest.json:1: schema_version 2:"),
        "{stderr}"
    );
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("record schema version"), "{stderr}");
}

#[test]
fn signals_ignored_at_start_stay_ignored_as_under_nohup_or_a_background_job() {
    let stub = slow_stub();
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = run_args(&stub, &out, "oracle-a", "--trials 1 --suite router");
    // What `nohup passk run ... &` does: SIGHUP and SIGINT ignored before passk starts.
    let child = std::process::Command::new("sh")
        .arg("-c")
        .arg("trap '' HUP INT; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_passk"))
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    wait_for_records(&out);
    signal(&child, "HUP");
    signal(&child, "INT");
    let done = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(0), "ran to the end: {stderr}");
    assert!(!stderr.contains("interrupted"), "{stderr}");
    assert_eq!(lines(&out, "router.jsonl").len(), util::router_messages());
}

#[test]
fn sigterm_and_sighup_stop_like_ctrl_c_and_the_same_command_resumes() {
    let stub = slow_stub();
    let tmp = util::tempdir();
    for (name, code) in [("TERM", 143), ("HUP", 129)] {
        let out = tmp.path().join(name);
        let args = run_args(&stub, &out, "oracle-a", "--trials 1 --suite router");
        let child = util::spawn(&args, Stdio::null(), Stdio::piped());
        wait_for_records(&out);
        signal(&child, name);
        let done = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(code), "SIG{name}: {stderr}");
        assert!(stderr.contains("interrupted"), "{stderr}");
        let partial = lines(&out, "router.jsonl");
        assert!(
            !partial.is_empty() && partial.len() < util::router_messages(),
            "{}",
            partial.len()
        );
        assert!(
            partial
                .iter()
                .all(|l| serde_json::from_str::<Record>(l).is_ok())
        );
        let (code, _, stderr) = output(passk().args(&args));
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(lines(&out, "router.jsonl").len(), util::router_messages());
    }
}

/// Whether process `pid` has a handler for each of `signals` (Linux `/proc/<pid>/status`, SigCgt).
fn catches(pid: u32, signals: &[u32]) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let mask = status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .unwrap_or(0);
    signals.iter().all(|s| mask & (1 << (s - 1)) != 0)
}

#[test]
fn a_signal_in_the_first_milliseconds_is_handled() {
    // Replies take 60 ms or more, so that a run descheduled between its handlers and the signal
    // cannot finish its trials first and exit 0.
    let stub = Stub::start(vec![], |c| c.decode_tok_per_s = 50.0);
    let tmp = util::tempdir();
    for (name, number, code) in [("INT", 2, 130), ("TERM", 15, 143), ("HUP", 1, 129)] {
        let out = tmp.path().join(name);
        let child = util::spawn(
            &run_args(&stub, &out, "oracle", "--trials 1 --suite router"),
            Stdio::null(),
            Stdio::null(),
        );
        // Signal as soon as the process catches the three signals: with the handlers installed
        // first thing, that is before flags are parsed or any thread or file exists.
        let started = Instant::now();
        while !catches(child.id(), &[1, 2, 15]) {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "SIG{name} ({number}) never caught"
            );
            std::thread::sleep(Duration::from_micros(200));
        }
        signal(&child, name);
        let done = child.wait_with_output().expect("wait");
        assert_eq!(
            done.status.code(),
            Some(code),
            "SIG{name}: {:?}",
            done.status
        );
    }
}

#[test]
fn freeze_refuses_graders_that_do_not_load() {
    let tmp = util::tempdir();
    util::copy_data(tmp.path());
    let root = tmp.path().display().to_string();
    let lock = tmp.path().join("graders/graders.lock");
    let locked = std::fs::read_to_string(&lock).expect("lock");
    let labels = tmp.path().join("graders/router/labels.json");
    let good = std::fs::read_to_string(&labels).expect("labels");
    for (what, text) in [
        ("a syntax error", "{".to_string()),
        ("an empty file", String::new()),
        (
            "an unknown label",
            good.replace("\"other\"", "\"no_such_label\""),
        ),
    ] {
        std::fs::write(&labels, &text).expect("write");
        let (code, _, stderr) = output(passk().args(["freeze", "--root", &root]));
        assert_eq!(code, 3, "{what}: {stderr}");
        assert!(
            stderr.contains("labels.json") && stderr.contains("nothing locked"),
            "{what}: {stderr}"
        );
        assert_eq!(
            std::fs::read_to_string(&lock).expect("lock"),
            locked,
            "{what}: lock untouched"
        );
    }
    std::fs::write(&labels, &good).expect("restore");
    let (code, _, stderr) = output(passk().args(["freeze", "--root", &root]));
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn lock_and_file_errors_say_each_thing_once_with_real_lines() {
    let stub = Stub::start(vec![], |_| {});
    let tmp = util::tempdir();
    util::copy_data(tmp.path());
    let root = tmp.path().display().to_string();
    let lock = tmp.path().join("graders/graders.lock");
    let out = tmp.path().join("run");
    let run = run_args(
        &stub,
        &out,
        "oracle",
        &format!("--root {root} --suite router"),
    );
    // A lock that is not UTF-8 is a mismatch like any other (exit 3), for verify and for run.
    std::fs::write(&lock, b"digest \xff\xfe\n").expect("write");
    let (code, _, stderr) = output(passk().args(["verify", "--root", &root]));
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("graders.lock:1:"), "{stderr}");
    let (code, _, stderr) = output(passk().args(&run));
    assert_eq!(code, 3, "{stderr}");
    // A missing lock: "passk freeze" is said once.
    std::fs::remove_file(&lock).expect("rm");
    let (code, _, stderr) = output(passk().args(&run));
    assert_eq!(code, 3, "{stderr}");
    assert_eq!(stderr.matches("passk freeze").count(), 1, "{stderr}");
    // An I/O error is said once.
    let missing = tmp.path().join("nothing-here");
    let (code, _, stderr) = output(passk().args(["report", &missing.display().to_string()]));
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stderr.matches("os error 2").count(), 1, "{stderr}");
}

#[test]
fn a_crash_looping_server_uses_no_tries_and_retry_failed_replays_what_it_lost() {
    use passk::runner::record::Outcome;
    use passk_stub::{FaultRates, ModelSpec};
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let flags = "--trials 1 --suite store --tasks L1,L2 --retries 0";
    // A server that answers /api/version but resets every chat: its failures count as tries, and
    // after three the trials are given up.
    let resets = ModelSpec::new(Behaviour::Oracle).with_faults(FaultRates {
        reset: 1.0,
        ..FaultRates::default()
    });
    let failing = Stub::start(vec![("m", resets)], |_| {});
    for _ in 0..3 {
        let (code, _, stderr) = output(passk().args(run_args(&failing, &out, "m", flags)));
        assert_eq!(code, 0, "{stderr}");
    }
    drop(failing);
    let healthy = Stub::start(vec![("m", Behaviour::Oracle.into())], |_| {});
    let (code, _, stderr) = output(passk().args(run_args(&healthy, &out, "m", flags)));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("0 new records"),
        "given up without the flag: {stderr}"
    );
    let with_flag = format!("{flags} --retry-failed");
    let (code, _, stderr) = output(passk().args(run_args(&healthy, &out, "m", &with_flag)));
    assert_eq!(code, 0, "{stderr}");
    let run = util::load(&out);
    assert_eq!(run.conversations.len(), 2);
    assert!(
        run.conversations.iter().all(|c| c.outcome == Outcome::Pass),
        "replayed and passed"
    );
}

#[test]
fn failures_while_the_server_is_down_are_marked_and_do_not_count() {
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let stub = slow_stub();
    let args = run_args(
        &stub,
        &out,
        "oracle-a",
        "--trials 2 --suite store --retries 0",
    );
    let child = util::spawn(&args, Stdio::null(), Stdio::piped());
    wait_for_records(&out);
    drop(stub);
    let done = child.wait_with_output().expect("wait");
    assert_eq!(
        done.status.code(),
        Some(9),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let records: Vec<Record> = lines(&out, "conversations.jsonl")
        .iter()
        .map(|l| serde_json::from_str(l).expect("record"))
        .collect();
    let down: Vec<&Record> = records.iter().filter(|r| r.server_unreachable()).collect();
    assert!(
        !down.is_empty(),
        "the failures after the server died are marked"
    );
    assert!(
        down.iter()
            .all(|r| passk::runner::record_file::key_and_outcome(r).1
                == passk::runner::record::Outcome::TransportFail)
    );
}

#[test]
fn a_context_below_the_suite_prompt_is_warned_about() {
    let stub = Stub::start(vec![], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let flags = "--trials 1 --suite store --tasks L1 --num-ctx 64";
    let (code, _, stderr) = output(passk().args(run_args(&stub, &out, "oracle", flags)));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("--num-ctx 64 is below the store suite's prompt"),
        "{stderr}"
    );
    let out = tmp.path().join("roomy");
    let (_, _, stderr) = output(passk().args(run_args(
        &stub,
        &out,
        "oracle",
        "--trials 1 --suite store --tasks L1",
    )));
    assert!(!stderr.contains("is below the"), "{stderr}");
}
