//! One writer per run directory: `run.lock` holds the writer's PID, host and start time, and an
//! OS advisory lock (`flock` on Unix, through `std::fs::File::try_lock`) on that file is held for as
//! long as the run lasts. The OS drops the advisory lock when its process dies, however it dies, so
//! a lock file whose lock nobody holds was left by a dead process and is taken over; the text in
//! the file only names the holder in messages. The file is never deleted (deleting it would let two
//! writers lock two different files); a clean release empties it.

use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The lock file's name inside a run directory.
pub const LOCK_FILE: &str = "run.lock";

/// Who holds (or held) a run directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// Process id.
    pub pid: u32,
    /// Host name.
    pub host: String,
    /// When the holder started, RFC 3339.
    pub started: String,
}

impl Holder {
    /// This process.
    pub fn this_process() -> Holder {
        Holder {
            pid: std::process::id(),
            host: host_name(),
            started: crate::timefmt::now_rfc3339(),
        }
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "process {} on {}, started {}",
            self.pid, self.host, self.started
        )
    }
}

fn host_name() -> String {
    sysinfo::System::host_name().unwrap_or_else(|_| "unknown host".into())
}

/// Why a run directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds the lock.
    #[error(
        "{dir} is in use by {holder}; wait for it to finish (or stop it) before running or resuming this directory"
    )]
    Held {
        /// Run directory.
        dir: PathBuf,
        /// Who holds it, as its lock file says ("unknown" when the file could not be read).
        holder: String,
    },
    /// The lock file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
}

/// A held run-directory lock; dropping it empties the lock file and releases the OS lock.
#[derive(Debug)]
pub struct RunLock {
    file: File,
    path: PathBuf,
    stale: Option<String>,
}

impl RunLock {
    /// Locks `dir` (which must exist) for this process, or says who holds it.
    pub fn acquire(dir: &Path) -> Result<RunLock, LockError> {
        let path = dir.join(LOCK_FILE);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                return Err(LockError::Held {
                    dir: dir.to_path_buf(),
                    holder: describe(&text),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        let mut previous = String::new();
        file.read_to_string(&mut previous).map_err(io)?;
        let stale = (!previous.trim().is_empty()).then(|| describe(&previous));
        let mut text = serde_json::to_string(&Holder::this_process()).map_err(|e| io(e.into()))?;
        text.push('\n');
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        file.write_all(text.as_bytes()).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(RunLock { file, path, stale })
    }

    /// The holder named by a lock file left behind by a process that died holding it, when this
    /// lock took it over.
    pub fn taken_over_from(&self) -> Option<&str> {
        self.stale.as_deref()
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Emptied while still locked: an empty file means "released cleanly".
        let _ = self.file.set_len(0);
        let _ = self.file.sync_all();
        let _ = self.file.unlock();
    }
}

/// A lock file's text as a holder's description.
fn describe(text: &str) -> String {
    match serde_json::from_str::<Holder>(text.trim()) {
        Ok(h) => h.to_string(),
        Err(_) if text.trim().is_empty() => "another process (its lock file is empty)".into(),
        Err(_) => format!("another process (lock file: {:?})", text.trim()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_and_names_the_holder() {
        let dir = tempfile::tempdir().expect("tmp");
        let first = RunLock::acquire(dir.path()).expect("first");
        assert!(first.taken_over_from().is_none());
        // flock locks belong to an open file: a second open in this process conflicts too.
        let err = RunLock::acquire(dir.path()).expect_err("held");
        let text = err.to_string();
        assert!(
            text.contains(&format!("process {}", std::process::id())) && text.contains("in use"),
            "{text}"
        );
        drop(first);
        let again = RunLock::acquire(dir.path()).expect("released");
        assert!(
            again.taken_over_from().is_none(),
            "a clean release is not stale"
        );
    }

    #[test]
    fn a_lock_left_by_a_dead_process_is_taken_over() {
        let dir = tempfile::tempdir().expect("tmp");
        let dead = Holder {
            pid: 999_999,
            host: "elsewhere".into(),
            started: "2026-01-01T00:00:00Z".into(),
        };
        let text = serde_json::to_string(&dead).expect("json");
        std::fs::write(dir.path().join(LOCK_FILE), text).expect("write");
        let lock = RunLock::acquire(dir.path()).expect("take over");
        assert!(
            lock.taken_over_from()
                .is_some_and(|h| h.contains("999999") && h.contains("elsewhere")),
            "{:?}",
            lock.taken_over_from()
        );
        let now: Holder = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(LOCK_FILE)).expect("read"),
        )
        .expect("holder");
        assert_eq!(now.pid, std::process::id());
    }
}
