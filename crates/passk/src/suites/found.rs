//! The MCP suites found at run time: every folder `tasks/<name>/` of an experiment directory that
//! holds an `mcp.json` is a suite, with no Rust and no rebuild. [`discover`] also names every
//! other folder under `tasks/` that is not a suite, and why.

use crate::domain::mcp_config::FILE;
use crate::suites::{BUILT_IN, SuiteChoice};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What `tasks/` holds under one experiment directory.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// The MCP suites, by name.
    pub mcp: Vec<SuiteChoice>,
    /// Every other folder that is not a compiled-in suite's, with why it is no suite.
    pub not_suites: Vec<NotSuite>,
}

/// A folder under `tasks/` that is not a suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotSuite {
    /// The folder.
    pub folder: PathBuf,
    /// Why it is not a suite.
    pub why: String,
}

impl std::fmt::Display for NotSuite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/: {}", self.folder.display(), self.why)
    }
}

/// Names of every MCP suite found in this process, whatever the directory.
static FOUND: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

/// Every suite name seen in this process, kept for the life of the process.
static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

/// The one lasting copy of a suite name.
pub(crate) fn intern(name: &str) -> &'static str {
    if let Some(b) = BUILT_IN.iter().find(|b| b.name == name) {
        return b.name;
    }
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(n) = names.get(name) {
        return n;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// The MCP suites found so far in this process, in name order.
pub(crate) fn found_so_far() -> Vec<&'static str> {
    let found = FOUND.lock().unwrap_or_else(|p| p.into_inner());
    found.iter().copied().collect()
}

/// Why `name` cannot name a suite, if it cannot: it is given on the command line (comma-separated)
/// and becomes part of the run id and of file names.
pub(crate) fn bad_name(name: &str) -> Option<&'static str> {
    if name.is_empty() || name.starts_with('.') {
        Some("a suite's name may not be empty or start with '.'")
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        Some("a suite's name is letters, digits, '_' and '-' only")
    } else {
        None
    }
}

/// Looks through `root/tasks/`: each folder with an `mcp.json` is an MCP suite (and from now on
/// a `--suite` value in this process); each other folder that is not a compiled-in suite's is
/// named with why. A missing `tasks/` finds nothing.
pub fn discover(root: &Path) -> Found {
    let tasks = root.join("tasks");
    let Ok(entries) = std::fs::read_dir(&tasks) else {
        return Found::default();
    };
    let mut folders: Vec<(String, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    folders.sort();
    let mut found = Found::default();
    for (name, folder) in folders {
        let built_in = BUILT_IN.iter().any(|b| b.name == name);
        let declared = folder.join(FILE).is_file();
        let why = match (built_in, declared) {
            (true, false) => continue,
            (true, true) => Some(format!(
                "holds an {FILE}, but {name} is a compiled-in suite's name; an MCP suite takes \
                 another folder name"
            )),
            (false, false) if name.starts_with('.') => continue,
            (false, false) => Some(format!(
                "no {FILE}: a suite of your own is a folder holding {FILE} (docs/reference/suites.md)"
            )),
            (false, true) => {
                bad_name(&name).map(|m| format!("{m} (the folder's name is the suite's)"))
            }
        };
        match why {
            Some(why) => found.not_suites.push(NotSuite { folder, why }),
            None => {
                let name = intern(&name);
                FOUND.lock().unwrap_or_else(|p| p.into_inner()).insert(name);
                found.mcp.push(SuiteChoice::named(name));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_with_mcp_json_are_suites_and_the_others_are_named() {
        let dir = tempfile::tempdir().expect("tmp");
        let tasks = dir.path().join("tasks");
        for (folder, declared) in [
            ("garden", true),
            ("notes", false),
            ("store", false),
            ("triage", true),
            ("bad name", true),
        ] {
            std::fs::create_dir_all(tasks.join(folder)).expect("mkdir");
            if declared {
                std::fs::write(tasks.join(folder).join(FILE), "{}").expect("write");
            }
        }
        let found = discover(dir.path());
        let names: Vec<&str> = found.mcp.iter().map(|s| s.name()).collect();
        assert_eq!(names, ["garden"]);
        assert!("garden".parse::<SuiteChoice>().is_ok());
        let why: Vec<String> = found.not_suites.iter().map(|n| n.to_string()).collect();
        assert_eq!(why.len(), 3, "{why:?}");
        assert!(
            why[0].contains("bad name/: a suite's name is letters"),
            "{why:?}"
        );
        assert!(why[1].contains("notes/: no mcp.json"), "{why:?}");
        assert!(
            why[2].contains("triage/: holds an mcp.json, but triage is a compiled-in"),
            "{why:?}"
        );
    }
}
