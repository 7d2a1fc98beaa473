//! Freezing the graders, one digest per suite: `graders/graders.lock` lists, for each suite, the
//! SHA-256 of its files under `graders/<suite>/`, of every file its MCP server runs from
//! (`tasks/<suite>/mcp.json` and the files it declares) and of its grading source (embedded at
//! build time by `build.rs`). A suite's digest is the SHA-256 of its own lines, so adding,
//! changing or removing one suite never moves another's. `write_lock` writes the lock; `verify`
//! and `verify_suites` compare it with the disk and name every suite and file that moved.

use crate::domain::load::{hex, sha256_hex};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// Each suite's grading-source digest (`store=<sha>;…;mcp=<sha>`), computed by `build.rs`.
const GRADING_SOURCES: &str = env!("PASSK_GRADING_SOURCES");

/// The files and folders the grading-source digests cover.
pub const GRADING_SOURCE_FILES: &str = env!("PASSK_GRADING_SOURCE_FILES");

/// The graders' folder, relative to the experiment directory.
pub const GRADERS_DIR: &str = "graders";

/// The lock file's name inside `graders/`.
pub const LOCK_NAME: &str = "graders.lock";

/// Which passk writes a lock: `passk <version> <commit>`.
pub fn this_passk() -> String {
    format!(
        "passk {} {}",
        env!("CARGO_PKG_VERSION"),
        option_env!("PASSK_GIT_COMMIT").unwrap_or("unknown-commit")
    )
}

/// The grading-source digest of suite `name`: its own for a compiled-in suite, the MCP grader's
/// for any other.
pub fn source_digest(name: &str) -> &'static str {
    let of = |wanted: &str| {
        GRADING_SOURCES
            .split(';')
            .find_map(|kv| kv.strip_prefix(wanted)?.strip_prefix('='))
    };
    of(name).or_else(|| of("mcp")).unwrap_or_default()
}

/// What went wrong while freezing or verifying.
#[derive(Debug, thiserror::Error)]
pub enum FreezeError {
    /// A file or folder could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// File concerned.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// An MCP suite's declaration could not be read.
    #[error("{0}")]
    Declaration(String),
    /// There is no lock to verify against.
    #[error(
        "{path} is missing; run `passk freeze` in the experiment directory (or give --root DIR)"
    )]
    Missing {
        /// Where the lock was expected.
        path: PathBuf,
    },
    /// The lock file is not in the expected format.
    #[error("{path}:{line}: {message}")]
    Malformed {
        /// The lock file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The lock was written by a passk that kept one digest for every suite.
    #[error(
        "{path} was written by an older passk, with one digest for every suite; check the graders \
         are the ones you mean, then run `passk freeze` to lock each suite on its own"
    )]
    OldFormat {
        /// The lock file.
        path: PathBuf,
    },
    /// Suites changed since the lock was written.
    #[error("graders/graders.lock does not match: {}; run `passk freeze` if the change is intended", list(.changes))]
    Mismatch {
        /// Every difference, by suite, in suite and path order.
        changes: Vec<SuiteChange>,
    },
}

fn list(changes: &[SuiteChange]) -> String {
    changes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// One difference between the lock and the disk; each file by its path from the experiment
/// directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A frozen file's bytes changed.
    Modified(String),
    /// A file to freeze is not in the lock.
    Added(String),
    /// A file in the lock is gone.
    Removed(String),
    /// The grading source (code) changed.
    GradingSource,
    /// The suite is not in the lock at all.
    NotFrozen,
    /// The suite is in the lock but no longer on disk.
    Gone,
}

/// A [`Change`] of one suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteChange {
    /// The suite.
    pub suite: String,
    /// What changed.
    pub change: Change,
}

impl fmt::Display for SuiteChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.suite;
        match &self.change {
            Change::Modified(p) => write!(f, "suite {s}: {p} changed"),
            Change::Added(p) => write!(f, "suite {s}: {p} is new"),
            Change::Removed(p) => write!(f, "suite {s}: {p} was removed"),
            Change::GradingSource => {
                write!(f, "suite {s}: its grading source (passk's code) changed")
            }
            Change::NotFrozen => write!(f, "suite {s} is not frozen yet"),
            Change::Gone => write!(f, "suite {s} is locked but no longer here"),
        }
    }
}

/// One suite's part of the lock: its grading-source digest and each frozen file's digest, by path
/// from the experiment directory (with `/`). A run's manifest keeps the parts of the suites it
/// played, so `compare` can name the files that differ.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SuiteLock {
    /// SHA-256 of the lines below: the suite's grader digest, stamped on its records.
    pub digest: String,
    /// SHA-256 of the suite's grading source.
    pub source: String,
    /// SHA-256 of each frozen file.
    pub files: BTreeMap<String, String>,
}

impl SuiteLock {
    /// The part of a suite with this source and these files, its digest computed.
    pub fn new(source: String, files: BTreeMap<String, String>) -> SuiteLock {
        let mut lock = SuiteLock {
            digest: String::new(),
            source,
            files,
        };
        lock.digest = sha256_hex(lock.body().as_bytes());
        lock
    }

    fn body(&self) -> String {
        let mut s = format!("source {}\n", self.source);
        for (p, h) in &self.files {
            s.push_str(&format!("file {h} {p}\n"));
        }
        s
    }

    /// The differences from `self` (locked) to `now`, suite `name`'s.
    pub fn changes_to(&self, name: &str, now: &SuiteLock) -> Vec<SuiteChange> {
        let mut out = Vec::new();
        if self.source != now.source {
            out.push(Change::GradingSource);
        }
        for (p, h) in &now.files {
            match self.files.get(p) {
                None => out.push(Change::Added(p.clone())),
                Some(old) if old != h => out.push(Change::Modified(p.clone())),
                _ => {}
            }
        }
        for p in self.files.keys().filter(|p| !now.files.contains_key(*p)) {
            out.push(Change::Removed(p.clone()));
        }
        out.into_iter()
            .map(|change| SuiteChange {
                suite: name.to_string(),
                change,
            })
            .collect()
    }
}

/// A whole lock: which passk wrote it, and each suite's part.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lock {
    /// `passk <version> <commit>` of the passk that wrote it.
    pub frozen_by: String,
    /// Each suite's part, by name.
    pub suites: BTreeMap<String, SuiteLock>,
}

impl Lock {
    /// The lock file's text.
    pub fn render(&self) -> String {
        let mut s = String::from(
            "# One digest per suite: the SHA-256 of its lines below, which hash its files under\n\
             # graders/<suite>/, the files its MCP server runs from, and its grading source.\n\
             # Written by `passk freeze`; checked by `passk verify` and before every run.\n",
        );
        s.push_str(&format!("frozen-by {}\n", self.frozen_by));
        for (name, part) in &self.suites {
            s.push_str(&format!("\nsuite {name} {}\n", part.digest));
            s.push_str(&format!("source {name} {}\n", part.source));
            for (p, h) in &part.files {
                s.push_str(&format!("file {name} {h} {p}\n"));
            }
        }
        s
    }

    /// Parses a lock file's text (each `suite` line must agree with its suite's lines).
    pub fn parse(path: &Path, text: &str) -> Result<Lock, FreezeError> {
        let bad = |line: usize, message: &str| FreezeError::Malformed {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        };
        let mut lock = Lock::default();
        let mut stated: BTreeMap<String, (usize, String)> = BTreeMap::new();
        let mut sources: BTreeMap<String, String> = BTreeMap::new();
        let mut files: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words: Vec<&str> = line.splitn(4, ' ').collect();
            match words.as_slice() {
                ["digest", ..] => return Err(FreezeError::OldFormat { path: path.into() }),
                ["frozen-by", ..] => lock.frozen_by = line["frozen-by ".len()..].to_string(),
                ["suite", name, digest] => {
                    stated.insert(name.to_string(), (n, digest.to_string()));
                }
                ["source", name, sha] => {
                    sources.insert(name.to_string(), sha.to_string());
                }
                ["file", name, sha, p] => {
                    let part = files.entry(name.to_string()).or_default();
                    part.insert(p.to_string(), sha.to_string());
                }
                _ => {
                    return Err(bad(
                        n,
                        "expected `frozen-by …`, `suite <name> <sha256>`, `source <name> <sha256>` \
                         or `file <name> <sha256> <path>`",
                    ));
                }
            }
        }
        for (name, (n, digest)) in stated {
            let source = sources
                .remove(&name)
                .ok_or_else(|| bad(n, "this suite has no `source` line"))?;
            let part = SuiteLock::new(source, files.remove(&name).unwrap_or_default());
            if part.digest != digest {
                return Err(bad(
                    n,
                    "the suite's digest does not match its lines (edited by hand?)",
                ));
            }
            lock.suites.insert(name, part);
        }
        if let Some(name) = sources.keys().chain(files.keys()).next() {
            let n = 1 + text
                .lines()
                .position(|l| l.split(' ').nth(1) == Some(name.as_str()))
                .unwrap_or_default();
            return Err(bad(n, "a line of a suite that has no `suite` line"));
        }
        Ok(lock)
    }

    /// The differences from `self` (the lock) to `now` (the disk), suite by suite.
    pub fn changes_to(&self, now: &Lock) -> Vec<SuiteChange> {
        let names: BTreeSet<&String> = self.suites.keys().chain(now.suites.keys()).collect();
        let mut out = Vec::new();
        for name in names {
            let change = |change| SuiteChange {
                suite: name.clone(),
                change,
            };
            match (self.suites.get(name), now.suites.get(name)) {
                (Some(locked), Some(here)) => out.extend(locked.changes_to(name, here)),
                (None, Some(_)) => out.push(change(Change::NotFrozen)),
                (Some(_), None) => out.push(change(Change::Gone)),
                (None, None) => {}
            }
        }
        out
    }
}

/// Path of the lock file under `root`.
pub fn lock_path(root: &Path) -> PathBuf {
    root.join(GRADERS_DIR).join(LOCK_NAME)
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> FreezeError + '_ {
    move |source| FreezeError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Every file under `dir`, by its path from the experiment directory (`rel` is `dir`'s).
fn scan(dir: &Path, rel: &str, out: &mut BTreeMap<String, String>) -> Result<(), FreezeError> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .collect::<Result<_, _>>()
        .map_err(io(dir))?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        let child = format!("{rel}/{name}");
        if e.file_type().map_err(io(&path))?.is_dir() {
            scan(&path, &child, out)?;
        } else if child != format!("{GRADERS_DIR}/{LOCK_NAME}") {
            out.insert(child, file_digest(&path)?);
        }
    }
    Ok(())
}

fn file_digest(path: &Path) -> Result<String, FreezeError> {
    let bytes = std::fs::read(path).map_err(io(path))?;
    Ok(hex(&Sha256::digest(&bytes)))
}

/// Every suite the experiment directory holds graders or a server for: each folder under
/// `graders/`, and each folder under `tasks/` with an `mcp.json`.
fn suite_names(root: &Path) -> Result<BTreeSet<String>, FreezeError> {
    let mut names = BTreeSet::new();
    let graders = root.join(GRADERS_DIR);
    for e in std::fs::read_dir(&graders).map_err(io(&graders))? {
        let e = e.map_err(io(&graders))?;
        if e.file_type().map_err(io(&e.path()))?.is_dir() {
            names.insert(e.file_name().to_string_lossy().into_owned());
        }
    }
    let tasks = root.join("tasks");
    if let Ok(entries) = std::fs::read_dir(&tasks) {
        for e in entries.flatten() {
            if e.path().join(crate::domain::mcp_config::FILE).is_file() {
                names.insert(e.file_name().to_string_lossy().into_owned());
            }
        }
    }
    Ok(names)
}

/// Suite `name`'s part as it is on disk now.
fn current_suite(root: &Path, name: &str) -> Result<SuiteLock, FreezeError> {
    let mut files = BTreeMap::new();
    let graders = root.join(GRADERS_DIR);
    // A file directly under graders/ belongs to no one suite, so every suite hashes it.
    for e in std::fs::read_dir(&graders).map_err(io(&graders))? {
        let e = e.map_err(io(&graders))?;
        let rel = format!("{GRADERS_DIR}/{}", e.file_name().to_string_lossy());
        if e.file_type().map_err(io(&e.path()))?.is_file() && e.file_name() != LOCK_NAME {
            files.insert(rel, file_digest(&e.path())?);
        }
    }
    let own = graders.join(name);
    if own.is_dir() {
        scan(&own, &format!("{GRADERS_DIR}/{name}"), &mut files)?;
    }
    for rel in crate::domain::mcp_config::frozen_files_of(root, name)
        .map_err(|e| FreezeError::Declaration(e.to_string()))?
    {
        files.insert(rel.clone(), file_digest(&root.join(rel))?);
    }
    Ok(SuiteLock::new(source_digest(name).to_string(), files))
}

/// The lock the experiment directory would have now, every suite in it.
pub fn current(root: &Path) -> Result<Lock, FreezeError> {
    let mut suites = BTreeMap::new();
    for name in suite_names(root)? {
        suites.insert(name.clone(), current_suite(root, &name)?);
    }
    Ok(Lock {
        frozen_by: this_passk(),
        suites,
    })
}

/// Reads `graders/graders.lock`.
pub fn read_lock(root: &Path) -> Result<Lock, FreezeError> {
    let path = lock_path(root);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(FreezeError::Missing { path });
        }
        Err(source) => return Err(FreezeError::Io { path, source }),
    };
    match String::from_utf8(bytes) {
        Ok(text) => Lock::parse(&path, &text),
        Err(e) => {
            let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = 1 + good.iter().filter(|&&b| b == b'\n').count();
            Err(FreezeError::Malformed {
                path,
                line,
                message: "not UTF-8 text (a lock file is plain text written by `passk freeze`)"
                    .into(),
            })
        }
    }
}

/// Writes `graders/graders.lock` for every suite as it is now; returns what was written.
pub fn write_lock(root: &Path) -> Result<Lock, FreezeError> {
    let lock = current(root)?;
    let path = lock_path(root);
    std::fs::write(&path, lock.render()).map_err(io(&path))?;
    Ok(lock)
}

/// Checks the whole lock against the disk; returns the lock when every suite matches.
pub fn verify(root: &Path) -> Result<Lock, FreezeError> {
    let locked = read_lock(root)?;
    let now = current(root)?;
    let changes = locked.changes_to(&now);
    if changes.is_empty() {
        Ok(now)
    } else {
        Err(FreezeError::Mismatch { changes })
    }
}

/// Checks only the suites `names` against the lock (what a run plays: another suite's state does
/// not matter to it); returns their parts when they match.
pub fn verify_suites(
    root: &Path,
    names: &[&str],
) -> Result<BTreeMap<String, SuiteLock>, FreezeError> {
    let locked = read_lock(root)?;
    let mut out = BTreeMap::new();
    let mut changes = Vec::new();
    for &name in names {
        let here = current_suite(root, name)?;
        match locked.suites.get(name) {
            Some(part) => changes.extend(part.changes_to(name, &here)),
            None => changes.push(SuiteChange {
                suite: name.to_string(),
                change: Change::NotFrozen,
            }),
        }
        out.insert(name.to_string(), here);
    }
    if changes.is_empty() {
        Ok(out)
    } else {
        Err(FreezeError::Mismatch { changes })
    }
}

/// One digest for a set of suites' parts (a run's manifest's `grader_digest`): the SHA-256 of
/// `<suite> <digest>` lines.
pub fn combined_digest(parts: &BTreeMap<String, SuiteLock>) -> String {
    let lines: String = parts
        .iter()
        .map(|(name, p)| format!("{name} {}\n", p.digest))
        .collect();
    sha256_hex(lines.as_bytes())
}

#[cfg(test)]
mod tests;
