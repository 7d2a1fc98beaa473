//! Golden reports: report.md and summary.json of calibrate's flawed pass (its records are kept
//! under `tests/golden/flawed/run/`) and of the reference's run 2 (imported from
//! `../shared/reference`), byte for byte. A change to a report's wording or numbers shows here as
//! a diff to review like code. After a deliberate change, `PASSK_BLESS=1 cargo test --release
//! --test tests golden::` rewrites the golden files; commit them with the change.

use crate::util::{self, output, passk};
use std::path::Path;

/// The report files compared, under a run's `report/`.
const FILES: [&str; 2] = ["report.md", "summary.json"];

/// Compares each report file of `run` with its golden copy in `golden`, or rewrites the golden
/// copy under `PASSK_BLESS=1`. Each `(path, name)` in `places` is written as `name` first, so a
/// path that differs from machine to machine (where the reference lies) compares equal.
fn check_against(run: &Path, golden: &Path, places: &[(&Path, &str)]) {
    let bless = std::env::var_os("PASSK_BLESS").is_some_and(|v| v == "1");
    let mut differ = Vec::new();
    for file in FILES {
        let mut got = std::fs::read_to_string(run.join("report").join(file)).expect("report file");
        for (place, name) in places {
            got = got.replace(&*place.to_string_lossy(), name);
        }
        let path = golden.join(file);
        if bless {
            std::fs::write(&path, &got).expect("write golden");
            continue;
        }
        let want = std::fs::read_to_string(&path).expect("golden file");
        if let Some(d) = first_difference(&want, &got) {
            differ.push(format!("{}: {d}", path.display()));
        }
    }
    assert!(
        differ.is_empty(),
        "the report differs from its golden copy (PASSK_BLESS=1 rewrites it after a deliberate \
         change):\n{}",
        differ.join("\n")
    );
}

/// The first line where `got` leaves `want`, both shown; `None` when they are equal.
fn first_difference(want: &str, got: &str) -> Option<String> {
    if want == got {
        return None;
    }
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    let line = (0..w.len().max(g.len()))
        .find(|&i| w.get(i) != g.get(i))
        .unwrap_or(w.len());
    Some(format!(
        "line {}: golden {:?}, now {:?} ({} lines golden, {} now)",
        line + 1,
        w.get(line).unwrap_or(&"<end>"),
        g.get(line).unwrap_or(&"<end>"),
        w.len(),
        g.len()
    ))
}

#[test]
fn a_difference_is_found_and_located() {
    assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
    let d = first_difference("a\nb\nc\n", "a\nB\nc\n").expect("differs");
    assert!(d.starts_with("line 2: golden \"b\", now \"B\""), "{d}");
    let d = first_difference("a\n", "a\nmore\n").expect("differs");
    assert!(d.starts_with("line 2: golden \"<end>\""), "{d}");
    assert!(
        first_difference("a\n", "a").is_some(),
        "a lost final newline counts"
    );
}

#[test]
fn calibrate_flawed_pass_reports_as_its_golden_copy() {
    let golden = util::root().join("tests/golden/flawed");
    let tmp = util::tempdir();
    let run = tmp.path().join("flawed");
    std::fs::create_dir_all(&run).expect("mkdir");
    for f in ["manifest.json", "conversations.jsonl", "router.jsonl"] {
        std::fs::copy(golden.join("run").join(f), run.join(f)).expect("copy record");
    }
    let (code, _, err) = output(passk().arg("report").arg(&run));
    assert_eq!(code, 0, "{err}");
    check_against(&run, &golden, &[]);
}

#[test]
fn reference_run_2_reports_as_its_golden_copy() {
    let Some(reference) = util::shared_reference() else {
        util::skip(util::NO_REFERENCE);
        return;
    };
    let tmp = util::tempdir();
    let run = tmp.path().join("run2");
    let records = reference.join("results-run2");
    let (code, _, err) = output(
        passk()
            .args(["import", "--reference"])
            .arg(&records)
            .arg("--out")
            .arg(&run),
    );
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = output(passk().arg("report").arg(&run));
    assert_eq!(code, 0, "{err}");
    let places = [(records.as_path(), "<reference>/results-run2")];
    check_against(&run, &util::root().join("tests/golden/run2"), &places);
}
