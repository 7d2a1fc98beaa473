//! Helpers shared by the integration tests: paths, a `passk` command builder, temp run dirs.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The project root (holds tasks/ and graders/).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/reference/...` when present (it is absent on a user's clone).
pub fn shared_reference() -> Option<PathBuf> {
    let p = root().join("../shared/reference/cheaper-per-token/experiment");
    p.is_dir().then_some(p)
}

/// The built `passk` binary, run from the project root.
pub fn passk() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_passk"));
    c.current_dir(root());
    c.env_remove("OLLAMA_HOST");
    c
}

/// Runs a command and returns (exit code, stdout, stderr).
pub fn output(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("spawn passk");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh temporary directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// Copies `tasks/` and `graders/` into `dir`, so a test may edit them.
pub fn copy_data(dir: &Path) {
    for sub in ["tasks", "graders"] {
        copy_tree(&root().join(sub), &dir.join(sub));
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}
