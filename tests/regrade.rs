//! `passk regrade`: verdicts graded again with the current graders; moved ones are listed, the
//! records on disk are not touched.

use crate::util::{self, Stub, output, passk};

#[test]
fn regrade_lists_moved_verdicts_and_keeps_the_records() {
    let stub = Stub::oracles(&["oracle-a"]);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let host = stub.host();
    let args = [
        "run",
        "--no-progress",
        "--host",
        &host,
        "--models",
        "oracle-a",
        "--trials",
        "2",
        "--suite",
        "store",
        "--tasks",
        "L1,L2",
    ];
    let mut cmd = passk();
    cmd.args(args).args(["--out", &out.display().to_string()]);
    assert_eq!(output(&mut cmd).0, 0);
    let before = std::fs::read(out.join("conversations.jsonl")).expect("records");

    // Same graders: nothing moves.
    let (code, stdout, stderr) = output(passk().args(["regrade", &out.display().to_string()]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("4 re-graded, 0 moved"), "{stdout}");

    // A grader that now wants another date for L1: both L1 trials move pass -> fail.
    util::copy_data(tmp.path());
    let path = tmp.path().join("graders/store/expectations.json");
    let text = std::fs::read_to_string(&path).expect("graders");
    std::fs::write(
        &path,
        text.replacen("\"date\": \"2026-10-18\"", "\"date\": \"2026-10-19\"", 1),
    )
    .expect("write");
    let mut cmd = passk();
    cmd.args([
        "regrade",
        "--root",
        &tmp.path().display().to_string(),
        &out.display().to_string(),
    ]);
    let (code, stdout, stderr) = output(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("2 moved (2 pass -> fail, 0 fail -> pass)"),
        "{stdout}"
    );
    assert!(
        stderr.contains("not the locked ones"),
        "says the graders moved: {stderr}"
    );
    let md = std::fs::read_to_string(out.join("regrade.md")).expect("regrade.md");
    let moved: Vec<Vec<&str>> = md
        .lines()
        .filter(|l| l.starts_with("| oracle-a"))
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    assert_eq!(moved.len(), 2, "{md}");
    for row in &moved {
        assert_eq!((row[3], row[5], row[6]), ("L1", "pass", "fail"), "{md}");
        assert!(
            row[7].contains("2026-10-19"),
            "the current grader's reason: {md}"
        );
    }
    assert_eq!(
        std::fs::read(out.join("conversations.jsonl")).expect("records"),
        before,
        "records untouched"
    );
}
