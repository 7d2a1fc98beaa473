//! The contributor docs name real files: every path in backticks in docs/contributing.md and
//! docs/architecture.md exists, so a recipe never sends a reader to a file that moved. README
//! stays a page a newcomer reads in minutes.

use crate::util;

/// The paths in backticks that start at a top-level folder of the repository.
fn named_paths(doc: &str) -> Vec<String> {
    doc.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| {
            ["crates/", "src/", "tests/", "benches/", "scripts/", "docs/"]
                .iter()
                .any(|top| s.starts_with(top))
        })
        .filter(|s| !s.contains(['<', '*', ' ']))
        .map(|s| s.trim_end_matches('/').to_string())
        .collect()
}

#[test]
fn paths_are_read_from_backticks_only() {
    let doc = "see `src/cli.rs` and `crates/passk/src/<stage>/`, not src/x.rs; `cargo test`";
    assert_eq!(named_paths(doc), ["src/cli.rs"]);
}

#[test]
fn every_path_the_contributor_docs_name_exists() {
    for page in ["docs/contributing.md", "docs/architecture.md"] {
        let doc = std::fs::read_to_string(util::root().join(page)).expect(page);
        let paths = named_paths(&doc);
        assert!(paths.len() >= 20, "{page}: read only {} paths", paths.len());
        let missing: Vec<&String> = paths
            .iter()
            .filter(|p| !util::root().join(p).exists())
            .collect();
        assert!(
            missing.is_empty(),
            "{page} names files that do not exist: {missing:?}"
        );
    }
}

#[test]
fn readme_stays_under_fifteen_kilobytes() {
    let bytes = std::fs::metadata(util::root().join("README.md"))
        .expect("README.md")
        .len();
    assert!(bytes < 15 * 1024, "README.md is {bytes} bytes");
}
