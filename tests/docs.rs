//! The contributor docs name real files: every path in backticks in docs/contributing.md and
//! docs/architecture.md exists, so a recipe never sends a reader to a file that moved. README
//! stays a page a newcomer reads in minutes, and every link to a heading finds it.

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

/// The anchor a heading gets on GitHub: lower case, spaces as `-`, every other mark but `-` and
/// `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings, outside code fences.
fn anchors(page: &str) -> Vec<String> {
    let mut fenced = false;
    page.lines()
        .filter(|l| {
            if l.starts_with("```") {
                fenced = !fenced;
            }
            !fenced && l.starts_with('#')
        })
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

/// Each link of a page to a Markdown page with an anchor: (the target, relative to the page's
/// folder, or empty for the page itself; the anchor).
fn anchored_links(page: &str) -> Vec<(String, String)> {
    page.split("](")
        .skip(1)
        .filter_map(|rest| {
            let link = &rest[..rest.find(')')?];
            let (target, anchor) = link.split_once('#')?;
            (target.is_empty() || target.ends_with(".md"))
                .then(|| (target.to_string(), anchor.to_string()))
        })
        .collect()
}

#[test]
fn anchors_are_read_as_github_makes_them() {
    assert_eq!(
        slug("Adding a suite of your own (data + grader + gold policy)"),
        "adding-a-suite-of-your-own-data--grader--gold-policy"
    );
    assert_eq!(
        slug("`memchr` for the text-call scan"),
        "memchr-for-the-text-call-scan"
    );
    let page = "# Top\n```\n# not a heading\n```\nSee [a](b.md#top), [c](#x) and [d](e.md).";
    assert_eq!(anchors(page), ["top"]);
    assert_eq!(
        anchored_links(page),
        [
            ("b.md".to_string(), "top".to_string()),
            (String::new(), "x".to_string())
        ]
    );
}

#[test]
fn every_link_to_a_heading_finds_it() {
    let root = util::root();
    let mut pages = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    for dir in ["docs", "docs/guide", "docs/reference"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("docs") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    let mut checked = 0;
    let mut dead = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("page");
        for (target, anchor) in anchored_links(&text) {
            let file = if target.is_empty() {
                page.clone()
            } else {
                page.parent().expect("folder").join(&target)
            };
            let Ok(target_text) = std::fs::read_to_string(&file) else {
                dead.push(format!("{}: {target} does not exist", page.display()));
                continue;
            };
            checked += 1;
            if !anchors(&target_text).contains(&anchor) {
                dead.push(format!("{}: {target}#{anchor}", page.display()));
            }
        }
    }
    assert!(checked > 30, "checked only {checked} links");
    assert!(
        dead.is_empty(),
        "links to headings that are not there:\n{}",
        dead.join("\n")
    );
}
