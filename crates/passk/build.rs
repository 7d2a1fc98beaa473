//! Embeds the SHA-256 of each suite's grading source (the files whose behaviour decides its
//! verdicts) as `PASSK_GRADING_SOURCES` (`store=<sha>;…;mcp=<sha>`), so `graders/graders.lock`
//! can pin each suite's code as well as its data; and, when built from a git checkout, the commit
//! as `PASSK_GIT_COMMIT` for run manifests.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The grading source every suite shares, relative to the crate root: the grading machinery and
/// the value types the graders compare.
const CORE_GRADING_SOURCE: [&str; 3] = ["src/grade", "src/domain/date.rs", "src/domain/money.rs"];

/// What grades every suite whose tools are an MCP server, beside the core.
const MCP_GRADING_SOURCE: [&str; 2] = ["src/mcp/expect.rs", "src/mcp/grade.rs"];

/// The name the MCP suites' grading source goes by in `PASSK_GRADING_SOURCES`.
const MCP: &str = "mcp";

/// The folder holding one folder per compiled-in suite.
const SUITES: &str = "src/suites";

/// The files of a suite's folder that make up its grading source, where present: its grader and
/// the typed data, expectations and policy rules the grader reads. A new suite's folder is found
/// and hashed by these names, with no list to edit.
const SUITE_GRADING_FILES: [&str; 4] = ["grade.rs", "data.rs", "expect.rs", "policy.rs"];

/// Each suite's grading source, relative to the crate root: the core, then the suite's own files
/// (its folder's grading files; the MCP grader for `mcp`), suites in name order, `mcp` last.
fn grading_sources(root: &Path) -> Vec<(String, Vec<String>)> {
    let mut suites: Vec<PathBuf> = std::fs::read_dir(root.join(SUITES))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    suites.retain(|p| p.is_dir());
    suites.sort();
    let with_core = |own: Vec<String>| {
        let mut all: Vec<String> = CORE_GRADING_SOURCE.iter().map(|p| p.to_string()).collect();
        all.extend(own);
        all
    };
    let mut out = Vec::new();
    for dir in suites {
        let name = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let own = SUITE_GRADING_FILES
            .iter()
            .filter(|f| dir.join(f).is_file())
            .map(|f| format!("{SUITES}/{name}/{f}"))
            .collect();
        out.push((name, with_core(own)));
    }
    let own = MCP_GRADING_SOURCE.iter().map(|p| p.to_string()).collect();
    out.push((MCP.to_string(), with_core(own)));
    out
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        entries.sort();
        for e in entries {
            collect(&e, out);
        }
    } else if path.extension().is_some_and(|x| x == "rs") {
        out.push(path.to_path_buf());
    }
}

/// SHA-256 of the Rust files under `paths`, each with its path, in path order.
fn digest_of(root: &Path, paths: &[String]) -> String {
    let mut files = Vec::new();
    for p in paths {
        collect(&root.join(p), &mut files);
    }
    files.sort();
    let mut hasher = Sha256::new();
    for f in &files {
        let rel = f
            .strip_prefix(root)
            .unwrap_or(f)
            .to_string_lossy()
            .replace('\\', "/");
        // Line endings are normalized so a checkout with CRLF gives the same digest.
        let text = std::fs::read(f).unwrap_or_default();
        let text: Vec<u8> = text.into_iter().filter(|b| *b != b'\r').collect();
        hasher.update(rel.as_bytes());
        hasher.update([0u8]);
        hasher.update(&text);
        hasher.update([0u8]);
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    // The suites folder itself: a suite added or removed changes the list.
    println!("cargo:rerun-if-changed={SUITES}");
    let sources = grading_sources(&root);
    let mut digests = Vec::new();
    let mut listed: Vec<String> = Vec::new();
    for (name, paths) in &sources {
        for p in paths {
            println!("cargo:rerun-if-changed={p}");
            if !listed.contains(p) {
                listed.push(p.clone());
            }
        }
        digests.push(format!("{name}={}", digest_of(&root, paths)));
    }
    println!(
        "cargo:rustc-env=PASSK_GRADING_SOURCES={}",
        digests.join(";")
    );
    println!(
        "cargo:rustc-env=PASSK_GRADING_SOURCE_FILES={}",
        listed.join(", ")
    );
    println!("cargo:rerun-if-changed=build.rs");
    git_commit(&root);
}

/// Sets `PASSK_GIT_COMMIT` to `HEAD`'s commit (with `-dirty` when the tree has changes); nothing
/// outside a git checkout.
fn git_commit(root: &Path) {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(commit) = git(&["rev-parse", "HEAD"]) else {
        return;
    };
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    // Any edit to what the binary is built from must refresh the `-dirty` mark, not only a commit
    // or a `git add`: cargo re-runs this script when anything under these paths changes.
    for p in [
        ".git/HEAD",
        ".git/index",
        "src",
        "benches",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        if root.join(p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    let suffix = if dirty { "-dirty" } else { "" };
    println!("cargo:rustc-env=PASSK_GIT_COMMIT={commit}{suffix}");
}
