//! Imports point upstream only: every `crate::<stage>` path in the library (`crates/passk/src/`)
//! names its own stage or one before it in docs/architecture.md's table; the shared vocabulary
//! files at the top of the library (`trace.rs`, `seed.rs`, `sequence.rs`, ...) name no stage at
//! all. Test modules may use any stage's fixtures, and the binary (`src/`) is glue that calls every
//! stage, so neither is checked. The library cannot reach the stub crate (Cargo refuses the
//! cycle); within the binary only `serve-stub` and `calibrate` may. No two library files import
//! each other, directly or through others.

use std::path::{Path, PathBuf};

/// The stages in data-flow order, as the table of docs/architecture.md lists them (each row's
/// folder, `crates/passk/src/<stage>/` or `crates/passk/src/<stage>/<name>/`).
fn stage_order(architecture: &str) -> Vec<String> {
    architecture
        .lines()
        .filter_map(|l| {
            let folder = l.split('|').nth(2)?.trim();
            let path = folder
                .strip_prefix("`crates/passk/src/")?
                .strip_suffix('`')?;
            Some(path.split('/').next()?.to_string())
        })
        .collect()
}

/// The code of a file outside comments and its test module.
fn library_code(source: &str) -> String {
    let mut out = String::new();
    let mut lines = source.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|n| n.trim_start().starts_with("mod "))
        {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push_str(line.split(" //").next().unwrap_or_default());
        out.push('\n');
    }
    out
}

/// The first path segment after each `crate::` in `code`, the members of a `crate::{...}` group
/// each counted.
fn crate_modules(code: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && !c.is_whitespace() => {
                        out.push(ident(&group[j..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(ident(rest));
        }
    }
    out
}

/// Where a file sits: in a stage (its index in `order`), among the shared vocabulary files at the
/// top of `src/`, or in the binary's glue.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Place {
    Stage(usize),
    Vocabulary,
    Glue,
}

/// The library's root, which declares every stage.
const GLUE: &[&str] = &["lib"];

fn place(relative: &Path, order: &[String]) -> Place {
    let first = relative
        .components()
        .next()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .unwrap_or_default();
    if let Some(i) = order.iter().position(|s| *s == first) {
        Place::Stage(i)
    } else if GLUE.contains(&first.as_str()) {
        Place::Glue
    } else {
        Place::Vocabulary
    }
}

/// The downstream imports of one file (its path relative to the library's `src/`), as `stage`
/// names.
fn downstream(relative: &Path, source: &str, order: &[String]) -> Vec<String> {
    let here = place(relative, order);
    let mut out: Vec<String> = crate_modules(&library_code(source))
        .into_iter()
        .filter(|m| match (here, order.iter().position(|s| s == m)) {
            (Place::Stage(i), Some(j)) => j > i,
            (Place::Vocabulary, Some(_)) => true,
            _ => false,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn order_of_docs() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/architecture.md")).expect("architecture.md");
    stage_order(&text)
}

#[test]
fn the_stage_order_is_the_architecture_table() {
    assert_eq!(
        order_of_docs(),
        [
            "domain", "grade", "mcp", "suites", "wire", "runner", "analysis", "report", "import"
        ]
    );
}

#[test]
fn every_import_in_src_points_upstream() {
    let order = order_of_docs();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/passk/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 100, "read {} files", files.len());
    let wrong: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let relative = f.strip_prefix(&src).expect("under src");
            let source = std::fs::read_to_string(f).expect("read");
            let bad = downstream(relative, &source, &order);
            (!bad.is_empty()).then(|| format!("{} imports {}", relative.display(), bad.join(", ")))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "downstream imports:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn a_planted_downstream_import_is_caught() {
    let order = order_of_docs();
    let runner = Path::new("runner/experiment.rs");
    let planted = "use crate::wire::ChatApi;\nuse crate::analysis::planning::stopping::state;\n";
    assert_eq!(downstream(runner, planted, &order), ["analysis"]);
    let inline = "fn f() { crate::report::json::write(); }\n";
    assert_eq!(downstream(runner, inline, &order), ["report"]);
    let grouped = "use crate::{domain::Task, analysis::{load_run, Keep}};\n";
    assert_eq!(downstream(runner, grouped, &order), ["analysis"]);
    let vocabulary = "use crate::wire::chat::Message;\nuse crate::trace::Verdict;\n";
    assert_eq!(
        downstream(Path::new("trace.rs"), vocabulary, &order),
        ["wire"]
    );
}

#[test]
fn upstream_imports_tests_comments_and_glue_pass() {
    let order = order_of_docs();
    let report = Path::new("report/document/mod.rs");
    let upstream = "use crate::analysis::Summary;\nuse crate::runner::record::Manifest;\nuse crate::sequence::Rule;\n";
    assert!(downstream(report, upstream, &order).is_empty());
    let test_only =
        "use crate::wire::ChatApi;\n\n#[cfg(test)]\nmod tests {\n    use crate::report::json;\n}\n";
    let wire = Path::new("wire/retry.rs");
    assert!(downstream(wire, test_only, &order).is_empty());
    let comment =
        "//! Read by [`crate::analysis::load_run`].\n/// See `crate::report`.\nfn f() {}\n";
    assert!(downstream(wire, comment, &order).is_empty());
    let glue = "use passk::report::json;\nfn f() { crate::cli::Cli::parse(); }\n";
    assert!(downstream(Path::new("lib.rs"), glue, &order).is_empty());
}

/// The binary's files that may use the stub crate: the commands that serve it and calibrate on it.
const STUB_USERS: [&str; 2] = ["src/commands/serve_stub.rs", "src/commands/calibrate.rs"];

#[test]
fn only_serve_stub_and_calibrate_use_the_stub_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    assert!(files.len() > 10, "read {} files", files.len());
    let mut users: Vec<String> = files
        .iter()
        .filter(|f| {
            let code = library_code(&std::fs::read_to_string(f).expect("read"));
            code.contains("passk_stub")
        })
        .map(|f| {
            f.strip_prefix(root)
                .expect("under root")
                .display()
                .to_string()
        })
        .collect();
    users.sort();
    let mut want = STUB_USERS.map(String::from).to_vec();
    want.sort();
    assert_eq!(users, want, "the binary's files that use passk_stub");
}

/// A library file's module path: `analysis/planning/power.rs` is `analysis::planning::power`;
/// `mod.rs` and `lib.rs` name their folder.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if stem != "mod" && stem != "lib" {
            parts.push(stem.to_string());
        }
    }
    parts
}

/// The paths of `rest` (what follows `crate::` or `super::`), a `{...}` group expanded into one
/// path per member.
fn expand(rest: &str) -> Vec<Vec<String>> {
    let mut segments = Vec::new();
    let mut s = rest;
    loop {
        if let Some(group) = s.strip_prefix('{') {
            let mut out = Vec::new();
            let (mut depth, mut start) = (0, 0);
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth > 0 => depth -= 1,
                    ',' | '}' if depth == 0 => {
                        for tail in expand(group[start..j].trim_start()) {
                            out.push([segments.clone(), tail].concat());
                        }
                        if c == '}' {
                            break;
                        }
                        start = j + 1;
                    }
                    _ => {}
                }
            }
            return out;
        }
        let ident: String = s
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if ident.is_empty() {
            break;
        }
        s = &s[ident.len()..];
        segments.push(ident);
        match s.strip_prefix("::") {
            Some(next) => s = next,
            None => break,
        }
    }
    vec![segments]
}

/// The library modules one file's code names through `crate::` and `super::` paths, each path
/// taken to the longest prefix that is a file of the library.
fn file_imports(here: &[String], code: &str, files: &[Vec<String>]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (i, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        if code[..i].ends_with("::")
            || code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let (mut base, mut rest) = (Vec::new(), &code[i..]);
        if let Some(r) = rest.strip_prefix("crate::") {
            rest = r;
        } else {
            base = here.to_vec();
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
        }
        for path in expand(rest) {
            let full = [base.clone(), path].concat();
            let found = (1..=full.len())
                .rev()
                .map(|n| full[..n].to_vec())
                .find(|p| files.contains(p));
            if let Some(m) = found.filter(|m| m.as_slice() != here) {
                out.push(m);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// One import cycle among the files, as `a -> b -> a`, if there is one.
fn a_cycle(edges: &std::collections::BTreeMap<Vec<String>, Vec<Vec<String>>>) -> Option<String> {
    fn visit(
        at: &Vec<String>,
        edges: &std::collections::BTreeMap<Vec<String>, Vec<Vec<String>>>,
        path: &mut Vec<Vec<String>>,
        done: &mut std::collections::BTreeSet<Vec<String>>,
    ) -> Option<String> {
        if let Some(start) = path.iter().position(|p| p == at) {
            let names: Vec<String> = path[start..]
                .iter()
                .chain([at])
                .map(|p| p.join("::"))
                .collect();
            return Some(names.join(" -> "));
        }
        if done.contains(at) {
            return None;
        }
        path.push(at.clone());
        for next in edges.get(at).into_iter().flatten() {
            if let Some(c) = visit(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(at.clone());
        None
    }
    let mut done = std::collections::BTreeSet::new();
    edges
        .keys()
        .find_map(|start| visit(start, edges, &mut Vec::new(), &mut done))
}

/// The import graph of library files given as (path relative to `src/`, source).
fn file_graph(
    sources: &[(PathBuf, String)],
) -> std::collections::BTreeMap<Vec<String>, Vec<Vec<String>>> {
    let files: Vec<Vec<String>> = sources.iter().map(|(p, _)| module_of(p)).collect();
    sources
        .iter()
        .map(|(p, source)| {
            let here = module_of(p);
            let imports = file_imports(&here, &library_code(source), &files);
            (here, imports)
        })
        .collect()
}

#[test]
fn no_two_library_files_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/passk/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let sources: Vec<(PathBuf, String)> = files
        .iter()
        .map(|f| {
            let relative = f.strip_prefix(&src).expect("under src").to_path_buf();
            (relative, std::fs::read_to_string(f).expect("read"))
        })
        .collect();
    let graph = file_graph(&sources);
    let edges: usize = graph.values().map(Vec::len).sum();
    assert!(edges > 500, "found only {edges} imports between files");
    assert_eq!(a_cycle(&graph), None, "an import cycle between files");
}

#[test]
fn a_planted_file_cycle_is_caught() {
    let file = |p: &str, s: &str| (PathBuf::from(p), s.to_string());
    let acyclic = [
        file("analysis/mod.rs", "pub mod a;\npub mod b;\n"),
        file("analysis/a.rs", "use crate::analysis::b::{B, helper};\n"),
        file("analysis/b.rs", "use crate::trace::Verdict;\n"),
        file("trace.rs", "pub struct Verdict;\n"),
    ];
    let graph = file_graph(&acyclic);
    assert_eq!(
        graph[&vec!["analysis".to_string(), "a".to_string()]],
        [vec!["analysis".to_string(), "b".to_string()]]
    );
    assert_eq!(a_cycle(&graph), None);
    let mut cyclic = acyclic.to_vec();
    cyclic[2] = file("analysis/b.rs", "fn f() { super::a::A::new(); }\n");
    assert_eq!(
        a_cycle(&file_graph(&cyclic)).as_deref(),
        Some("analysis::a -> analysis::b -> analysis::a")
    );
    cyclic[2] = file(
        "analysis/b.rs",
        "use crate::{trace::Verdict, analysis::{a::A}};\n",
    );
    assert!(a_cycle(&file_graph(&cyclic)).is_some());
    cyclic[2] = file(
        "analysis/b.rs",
        "// crate::analysis::a::A\n#[cfg(test)]\nmod tests {\n    use super::super::a::A;\n}\n",
    );
    assert_eq!(
        a_cycle(&file_graph(&cyclic)),
        None,
        "comments and tests are not imports"
    );
}
