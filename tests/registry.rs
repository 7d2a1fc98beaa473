//! The suites are the compiled-in ones (`passk::suites::BUILT_IN`) and the MCP suites found under
//! the experiment directory: `--suite`, the experiment file, the run id, `suite check`, the
//! loaders and the grading source all follow that list, and a name it does not hold is refused
//! everywhere.

use crate::util::{output, passk, root, tempdir};
use clap::ValueEnum;
use passk::grade::freeze::GRADING_SOURCE_FILES;
use passk::runner::settings::RunSettings;
use passk::suites::{AllSuites, BUILT_IN, SuiteChoice, discover};

/// The suites of the project's own experiment directory, in registration order.
fn names() -> Vec<&'static str> {
    let found = discover(&root());
    BUILT_IN
        .iter()
        .map(|b| b.name)
        .chain(found.mcp.iter().map(|s| s.name()))
        .collect()
}

#[test]
fn suite_values_are_exactly_the_registered_names_in_order() {
    let names = names();
    let values: Vec<String> = SuiteChoice::value_variants()
        .iter()
        .filter_map(|s| s.to_possible_value())
        .map(|v| v.get_name().to_string())
        .filter(|v| names.contains(&v.as_str()))
        .collect();
    assert_eq!(values, names);
    assert!(
        names.contains(&"library"),
        "the MCP suite is found: {names:?}"
    );
    for &name in &names {
        let choice: SuiteChoice = name.parse().expect("a registered name parses");
        assert_eq!(choice.name(), name);
        assert_eq!(serde_json::to_value(choice).unwrap(), name);
        let back: SuiteChoice = serde_json::from_value(name.into()).expect("round trip");
        assert_eq!(back, choice);
    }
    let err = "nope".parse::<SuiteChoice>().unwrap_err();
    for name in names {
        assert!(err.contains(name), "{err}");
    }
    // A manifest's suite reads wherever it is analysed; only a name no folder can have fails.
    let err = serde_json::from_value::<SuiteChoice>("no pe".into()).unwrap_err();
    assert!(err.to_string().contains("letters, digits"), "{err}");
}

#[test]
fn every_conversation_suite_loads_under_its_registered_name() {
    let all = AllSuites::load(&root()).expect("suites");
    let loaded: Vec<&str> = all.domains.iter().map(|d| d.name()).collect();
    let registered: Vec<&str> = names().into_iter().filter(|n| *n != "router").collect();
    assert_eq!(loaded, registered);
    assert!(SuiteChoice::Router.load(&root()).is_none());
    assert!(!SuiteChoice::Router.is_conversation());
}

#[test]
fn the_run_id_names_the_suites_from_the_registry() {
    let settings = RunSettings {
        suites: SuiteChoice::all().to_vec(),
        ..RunSettings::default()
    };
    let id = settings.default_run_id();
    assert!(id.starts_with(&format!("{}-", names().join("+"))), "{id}");
}

#[test]
fn an_unregistered_suite_is_refused_on_the_command_line_and_in_the_experiment_file() {
    let (code, _, err) = output(passk().args(["run", "--suite", "store,nope"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nope"), "{err}");
    for name in names() {
        assert!(err.contains(name), "the error lists {name}: {err}");
    }
    let dir = tempdir();
    let file = dir.path().join("experiment.toml");
    std::fs::write(&file, "suite = [\"store\", \"nope\"]\n").unwrap();
    let (code, _, err) = output(passk().arg("run").arg("--config").arg(&file));
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("key `suite`: unknown suite 'nope'; the suites are store, router"),
        "{err}"
    );
    let (code, _, err) = output(passk().args(["run", "--suite", "router", "--stop-when-decided"]));
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains(&SuiteChoice::conversation_names()),
        "the stop rule names the conversation suites: {err}"
    );
}

#[test]
fn suite_check_prints_one_counts_line_per_registered_suite_in_order() {
    let (code, out, err) = output(passk().args(["suite", "check"]));
    assert_eq!(code, 0, "{out}{err}");
    let heads: Vec<&str> = out
        .lines()
        .take(names().len())
        .filter_map(|l| l.split_once(": ").map(|(h, _)| h))
        .collect();
    assert_eq!(heads, names(), "{out}");
    for name in names().iter().filter(|n| **n != "router").skip(1) {
        assert!(out.contains(&format!("\n{name} gold: ")), "{out}");
    }
}

#[test]
fn every_registered_suite_has_its_grader_in_the_grading_source() {
    let files: Vec<&str> = GRADING_SOURCE_FILES.split(", ").collect();
    for name in names() {
        // A suite whose tools are an MCP server is graded by the shared MCP grader.
        let mcp = root().join("tasks").join(name).join("mcp.json").is_file();
        let grader = if mcp {
            "src/mcp/grade.rs".to_string()
        } else {
            format!("src/suites/{name}/grade.rs")
        };
        assert!(files.contains(&grader.as_str()), "{grader}: {files:?}");
    }
    // The paths are relative to the library's crate root, as build.rs hashes them.
    let library = root().join("crates/passk");
    for f in &files {
        assert!(library.join(f).exists(), "{f} is listed but absent");
    }
}
