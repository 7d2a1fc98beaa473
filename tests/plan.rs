//! `passk plan` through the binary: stated rates, a pilot run (the reference's run 2, imported),
//! and the inputs it refuses.

use crate::util::{self, output, passk};

const QUICK: [&str; 6] = ["--simulations", "200", "--resamples", "200", "--k", "1,5"];

#[test]
fn stated_rates_give_a_table_of_designs_and_a_recommendation() {
    let (code, out, err) = output(
        passk()
            .args(["plan", "--rates", "0.2,0.8", "--task-count", "24"])
            .args(QUICK),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Pilot: stated rates (24 tasks"), "{out}");
    assert!(out.contains("| 24    |   1 |"), "{out}");
    assert!(out.contains("| 24    |   5 |"), "{out}");
    assert!(
        out.contains("Fewest conversations with power >= 80.0%"),
        "{out}"
    );
    // A gap of 60 pp over 24 tasks alike is settled with one trial each.
    assert!(out.contains("24 tasks x k = 1"), "{out}");
    // Stated rates carry no pilot uncertainty: point power decides, and says so.
    assert!(out.contains("Assurance: n/a"), "{out}");
}

#[test]
fn the_plan_is_reproducible_and_machine_readable() {
    let run = || {
        output(
            passk()
                .args(["plan", "--rates", "0.5,0.6", "--json", "--tasks", "12,48"])
                .args(QUICK),
        )
    };
    let (code, first, err) = run();
    assert_eq!(code, 0, "{err}");
    assert_eq!(first, run().1, "same seed, same plan");
    let plan: serde_json::Value = serde_json::from_str(&first).expect("json");
    let rows = plan["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 4);
    let power = |tasks: u64, k: u64| {
        rows.iter()
            .find(|r| r["tasks"] == tasks && r["k"] == k)
            .and_then(|r| r["power"].as_f64())
            .expect("row")
    };
    assert!(power(48, 5) > power(12, 1), "more data, more power");
}

#[test]
fn inputs_it_cannot_use_exit_2_and_say_why() {
    for (args, says) in [
        (vec!["--rates", "1.5,0.2"], "must lie in 0..=1"),
        (
            vec!["--rates", "0.2,0.5", "--difference", "250"],
            "percentage points",
        ),
        (vec!["--rates", "0.2,0.5", "--power", "1"], "--power"),
        (vec!["--rates", "0.2,0.5", "--k", "0"], "--k"),
        (
            vec!["--rates", "0.2,0.5", "--break-even-below", "2"],
            "needs a pilot run",
        ),
        (
            vec!["--rates", "1.0,1.0", "--difference", "10"],
            "cannot be reached",
        ),
    ] {
        let (code, _, err) = output(passk().arg("plan").args(&args).args(QUICK));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn a_pilot_run_is_read_from_its_records() {
    let Some(reference) = util::shared_reference() else {
        util::skip(util::NO_REFERENCE);
        return;
    };
    let tmp = util::tempdir();
    let run = tmp.path().join("run2");
    let (code, _, err) = output(
        passk()
            .args(["import", "--reference"])
            .arg(reference.join("results-run2"))
            .arg("--out")
            .arg(&run),
    );
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = output(passk().arg("plan").arg(&run).args(QUICK));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("`qwen2.5-coder:3b` 40.8%, `qwen2.5-coder:7b` 68.3%")
            && out.contains("+27.5 pp"),
        "{out}"
    );
    // A pilot run's plan carries each design's assurance over resampled pilots, corrected for
    // its bias, and picks by it.
    assert!(
        out.contains("assurance, corrected (interval)")
            && out.contains("corrected for its bias")
            && out.contains("Fewest conversations with assurance >= 80.0%"),
        "{out}"
    );
    let (code, out, err) = output(
        passk()
            .arg("plan")
            .arg(&run)
            .args(["--break-even-below", "3"])
            .args(QUICK),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("break-even price ratio lies wholly below 3x"),
        "{out}"
    );
    let (code, _, err) = output(
        passk()
            .arg("plan")
            .arg(&run)
            .args(["--models", "qwen2.5-coder:3b,nope"])
            .args(QUICK),
    );
    assert_eq!(code, 2);
    assert!(err.contains("no agent conversations of 'nope'"), "{err}");
}
