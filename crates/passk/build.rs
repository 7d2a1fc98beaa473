//! Embeds the SHA-256 of the grading source (the files whose behaviour decides a verdict) as
//! `PASSK_GRADING_SOURCE_DIGEST`, so `graders/graders.lock` can pin the code as well as the data;
//! and, when built from a git checkout, the commit as `PASSK_GIT_COMMIT` for run manifests.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The shared grading source, relative to the crate root: the grading machinery and the value types
/// the graders compare.
/// `src/mcp/grade.rs` and `expect.rs` grade every suite whose tools are an MCP server.
const SHARED_GRADING_SOURCE: [&str; 5] = [
    "src/grade",
    "src/suite/date.rs",
    "src/suite/money.rs",
    "src/mcp/expect.rs",
    "src/mcp/grade.rs",
];

/// The folder holding one folder per suite.
const SUITES: &str = "src/suites";

/// The files of a suite's folder that make up its grading source, where present: its grader and
/// the typed data, expectations and policy rules the grader reads. A new suite's folder is found
/// and hashed by these names, with no list to edit.
const SUITE_GRADING_FILES: [&str; 4] = ["grade.rs", "data.rs", "expect.rs", "policy.rs"];

/// Every path of the grading source, relative to the crate root: the shared part, then each suite
/// folder's grading files, folders in name order.
fn grading_source(root: &Path) -> Vec<String> {
    let mut suites: Vec<PathBuf> = std::fs::read_dir(root.join(SUITES))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    suites.retain(|p| p.is_dir());
    suites.sort();
    let mut out: Vec<String> = SHARED_GRADING_SOURCE
        .iter()
        .map(|p| p.to_string())
        .collect();
    for dir in suites {
        let name = dir.file_name().unwrap_or_default().to_string_lossy();
        for file in SUITE_GRADING_FILES {
            if dir.join(file).is_file() {
                out.push(format!("{SUITES}/{name}/{file}"));
            }
        }
    }
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

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    let source = grading_source(&root);
    // The suites folder itself: a suite added or removed changes the list.
    println!("cargo:rerun-if-changed={SUITES}");
    let mut files = Vec::new();
    for p in &source {
        println!("cargo:rerun-if-changed={p}");
        collect(&root.join(p), &mut files);
    }
    files.sort();
    let mut hasher = Sha256::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
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
    let digest: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env=PASSK_GRADING_SOURCE_DIGEST={digest}");
    println!(
        "cargo:rustc-env=PASSK_GRADING_SOURCE_FILES={}",
        source.join(", ")
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
