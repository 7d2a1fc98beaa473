//! `passk calibrate`: passes on the project's suites, and fails (exit 5) when a grader is wrong
//! even though it is properly frozen.

use crate::util::{self, output, passk};

/// Run as from an installed binary in an empty directory: calibrate plays passk's built-in
/// experiment, written beside its results, and says where.
#[test]
fn calibrate_passes_and_writes_seven_reported_runs() {
    let tmp = util::tempdir();
    let (code, stdout, stderr) =
        output(
            passk()
                .current_dir(tmp.path())
                .args(["calibrate", "-k", "2", "--no-progress"]),
        );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "calibrate: no experiment in . (no tasks/): playing passk's built-in one, written to \
             ./results/calibrate/experiment/"
        ),
        "{stderr}"
    );
    let experiment = tmp.path().join("results/calibrate/experiment");
    assert!(experiment.join("graders/graders.lock").is_file());
    let dirs: Vec<std::path::PathBuf> = stdout.lines().map(|d| tmp.path().join(d)).collect();
    // Oracle, flawed, faulty and thinking models, the oracles' factorial pass, the model
    // ladder and the OpenAI-compatible wire; the model without tools is refused on both wires.
    assert_eq!(dirs.len(), 7, "{stdout}");
    // Why this machine has no GPU telemetry is said once for the whole process, not once a run.
    let manifests = dirs.iter().map(|d| util::load(d).manifest);
    let without_gpu = manifests.filter(|m| m.gpu.unavailable.is_some()).count();
    let said = stderr.matches("no GPU telemetry: ").count();
    assert_eq!(
        said,
        usize::from(without_gpu > 0),
        "{without_gpu} runs without: {stderr}"
    );
    for dir in dirs {
        assert!(
            dir.join("conversations.jsonl").is_file() && dir.join("report/report.md").is_file(),
            "{}",
            dir.display()
        );
    }
    assert!(stderr.contains("0 failed"), "{stderr}");
    assert_eq!(
        stderr
            .matches("[ ok ] no-tools: run refused before any trace")
            .count(),
        2,
        "refused over both wires: {stderr}"
    );
    for api in ["ollama", "openai"] {
        let line = format!("[ ok ] every record went through the {api} API");
        assert!(stderr.contains(&line), "{line}: {stderr}");
    }
    assert!(
        stderr.contains("oracle-small vs oracle-large model x router")
            && stderr.contains(passk::analysis::calibration::ZERO_EFFECT),
        "{stderr}"
    );
    for check in [
        "[ ok ] ladder: reference model (the largest)",
        "[ ok ] ladder: models against the reference",
        "[ ok ] ladder ladder-flawed:1b: success gap to the reference",
        "[ ok ] ladder ladder-oracle:3b: gap and break-even intervals (an oracle's)",
        "[ ok ] ladder: cheapest-per-success frontier",
    ] {
        assert!(stderr.contains(check), "{check}: {stderr}");
    }
    // Progress says which pass is running; failure modes read as records name them; the
    // toolless line says how it differs from the report's success figure.
    for (i, name) in [
        "oracle",
        "flawed",
        "faults",
        "thinking",
        "factorial",
        "ladder",
        "openai",
    ]
    .iter()
    .enumerate()
    {
        let line = format!("calibrate: pass {} of 7: {name}", i + 1);
        assert!(stderr.contains(&line), "{line}: {stderr}");
    }
    // The docs-reactive model's documentation effect is the one its rates imply, and not 0.
    let docs = stderr
        .lines()
        .find(|l| l.contains("factorial store: docs-reactive docs effect"))
        .expect("the docs-reactive model's docs effect");
    assert!(
        docs.starts_with("[ ok ]") && !docs.contains(passk::analysis::calibration::ZERO_EFFECT),
        "{docs}"
    );
    let modes = stderr
        .lines()
        .find(|l| l.contains("flawed store: failure modes"))
        .expect("the flawed model's failure modes");
    assert!(
        modes.contains("loop_cap=") || modes.contains("wrong_"),
        "{modes}"
    );
    assert!(
        !modes.contains("LoopCap") && !modes.contains("WrongAnswer"),
        "{modes}"
    );
    assert!(
        stderr.contains("(the report's success, ")
            && stderr.contains("also fails the tasks needing an action)"),
        "{stderr}"
    );
}

#[test]
fn calibrate_fails_on_a_wrong_grader_even_when_frozen() {
    let tmp = util::tempdir();
    util::copy_data(tmp.path());
    let path = tmp.path().join("graders/store/expectations.json");
    let text = std::fs::read_to_string(&path).expect("graders");
    std::fs::write(
        &path,
        text.replacen("\"date\": \"2026-10-18\"", "\"date\": \"2026-10-19\"", 1),
    )
    .expect("write");
    let root = tmp.path().display().to_string();
    assert_eq!(output(passk().args(["freeze", "--root", &root])).0, 0);
    let (code, _, stderr) = output(passk().args([
        "calibrate",
        "-k",
        "1",
        "--no-progress",
        "--root",
        &root,
        "--out",
        &root,
    ]));
    assert_eq!(code, 5, "{stderr}");
    assert!(
        stderr.contains("[FAIL] oracle-small store: conversations passing"),
        "{stderr}"
    );
}
