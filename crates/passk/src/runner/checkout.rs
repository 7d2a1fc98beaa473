//! The git checkout a run reads its suites from: its commit, and the suite files (under `tasks/`
//! and `graders/`) that differ from it, untracked ones included, so that a run made with an
//! uncommitted task is never stamped with a clean commit.

use crate::runner::record::Checkout;
use std::path::Path;
use std::process::Command;

/// The folders of the data root whose uncommitted changes a run records.
pub const DATA_FOLDERS: [&str; 2] = ["tasks", "graders"];

/// The checkout holding `root`, or `None` when it is not in a git work tree (or git is absent).
pub fn checkout(root: &Path) -> Option<Checkout> {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let commit = git(&["rev-parse", "HEAD"])?.trim().to_string();
    let mut args = vec!["status", "--porcelain", "--untracked-files=all", "--"];
    args.extend(DATA_FOLDERS);
    let status = git(&args)?;
    let uncommitted = status
        .lines()
        .filter_map(|l| l.get(3..))
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    Some(Checkout {
        commit,
        uncommitted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn an_uncommitted_task_file_is_named_and_a_clean_tree_has_none() {
        if Command::new("git").arg("--version").output().is_err() {
            use std::io::Write;
            let _ = std::io::stderr().lock().write_all(
                b"SKIPPED: an_uncommitted_task_file_is_named_and_a_clean_tree_has_none: no git\n",
            );
            return;
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        assert!(checkout(dir).is_none(), "not a checkout");
        std::fs::create_dir_all(dir.join("tasks/store")).expect("mkdir");
        std::fs::write(dir.join("tasks/store/a.toml"), "x = 1\n").expect("write");
        std::fs::write(dir.join("notes.txt"), "not suite data\n").expect("write");
        git(dir, &["init", "-q"]);
        git(dir, &["add", "tasks"]);
        git(dir, &["commit", "-q", "-m", "a task"]);
        let clean = checkout(dir).expect("a checkout");
        assert_eq!(clean.commit.len(), 40, "{clean:?}");
        assert!(
            clean.uncommitted.is_empty(),
            "only tasks/ and graders/ count: {clean:?}"
        );
        std::fs::write(dir.join("tasks/store/new.toml"), "y = 2\n").expect("write");
        let dirty = checkout(dir).expect("a checkout");
        assert_eq!(dirty.commit, clean.commit);
        assert_eq!(dirty.uncommitted, ["tasks/store/new.toml"]);
    }
}
