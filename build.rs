//! Embeds the built-in experiment (every file under `tasks/` and `graders/` but the lock) so that
//! `passk init` and `passk calibrate` work from an installed binary, with no clone.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The folders of the experiment directory that are embedded.
const FOLDERS: [&str; 2] = ["tasks", "graders"];

/// Files never embedded: the lock (`passk init` freezes afresh) and what tools leave behind.
fn skipped(name: &str) -> bool {
    name == "graders.lock" || name.starts_with('.') || name == "__pycache__"
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if skipped(&name) {
            continue;
        }
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    let mut files = Vec::new();
    for folder in FOLDERS {
        println!("cargo:rerun-if-changed={folder}");
        collect(&root.join(folder), &mut files);
    }
    let mut code = String::from(
        "/// Every file of the built-in experiment: its path in the experiment directory, its bytes.\n\
         pub(crate) const FILES: &[(&str, &[u8])] = &[\n",
    );
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap_or(f)
            .to_string_lossy()
            .replace('\\', "/");
        let _ = writeln!(
            code,
            "    ({rel:?}, include_bytes!({:?})),",
            f.display().to_string()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into()));
    std::fs::write(out.join("experiment_files.rs"), code).unwrap_or_else(|e| {
        panic!("writing the embedded experiment's list: {e}");
    });
    println!("cargo:rerun-if-changed=build.rs");
}
