//! One writer per run directory. The writer holds an OS advisory lock (`flock` on Unix, through
//! `std::fs::File::try_lock`) on the run directory itself for as long as the run lasts, so the
//! exclusion holds even when `run.lock` is deleted under it; it also locks `run.lock` (which names
//! it, by PID, host and start time, in messages), as writers before the directory lock did. The
//! OS drops both locks when their process dies, however it dies, so a lock file whose lock nobody
//! holds was left by a process that no longer holds it and is taken over. Before each record the
//! writer checks ([`RunLock::check`]) that the directory and `run.lock` are still the ones it
//! locked: a deleted or replaced lock file (a cleanup script, a half-copied directory, an older
//! passk that locked a new file) stops it before it writes again. The file is never deleted by
//! passk; a clean release empties it.

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
    /// The directory or its lock file is no longer the one this writer locked.
    #[error(
        "{path} {what} while this run held it; stopped before writing another record so that no \
         second writer can duplicate trials: check that no other passk writes {dir}, then run the \
         same command again to resume"
    )]
    Lost {
        /// Run directory.
        dir: PathBuf,
        /// The path that changed.
        path: PathBuf,
        /// What happened to it.
        what: &'static str,
    },
}

/// A held run-directory lock; dropping it empties the lock file and releases the OS lock.
#[derive(Debug)]
pub struct RunLock {
    dir: PathBuf,
    dir_handle: File,
    file: File,
    path: PathBuf,
    stale: Option<String>,
}

impl RunLock {
    /// Locks `dir` (which must exist) for this process, or says who holds it.
    pub fn acquire(dir: &Path) -> Result<RunLock, LockError> {
        let path = dir.join(LOCK_FILE);
        let dir_handle = File::open(dir).map_err(|source| LockError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        take(&dir_handle, dir, &path)?;
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
        // An older passk locks only the file.
        take(&file, dir, &path)?;
        let mut previous = String::new();
        file.read_to_string(&mut previous).map_err(io)?;
        let stale = (!previous.trim().is_empty()).then(|| describe(&previous));
        let mut text = serde_json::to_string(&Holder::this_process()).map_err(|e| io(e.into()))?;
        text.push('\n');
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        file.write_all(text.as_bytes()).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(RunLock {
            dir: dir.to_path_buf(),
            dir_handle,
            file,
            path,
            stale,
        })
    }

    /// Whether this lock still guards its directory: the directory's path and `run.lock` still
    /// name the directory and file it locked. A writer calls it before each record.
    pub fn check(&self) -> Result<(), LockError> {
        let lost = |path: &Path, what| LockError::Lost {
            dir: self.dir.clone(),
            path: path.to_path_buf(),
            what,
        };
        if !same_file(&self.dir_handle, &self.dir) {
            return Err(lost(&self.dir, "was moved or replaced"));
        }
        if !same_file(&self.file, &self.path) {
            return Err(lost(&self.path, "was deleted or replaced"));
        }
        Ok(())
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
        let _ = self.dir_handle.unlock();
    }
}

/// Takes the advisory lock on `handle` (the directory or its lock file), or says who holds it.
fn take(handle: &File, dir: &Path, lock_file: &Path) -> Result<(), LockError> {
    match handle.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => {
            let holder = match std::fs::read_to_string(lock_file) {
                Ok(text) => describe(&text),
                Err(_) => "another process (its run.lock was deleted)".into(),
            };
            Err(LockError::Held {
                dir: dir.to_path_buf(),
                holder,
            })
        }
        Err(std::fs::TryLockError::Error(source)) => Err(LockError::Io {
            path: lock_file.to_path_buf(),
            source,
        }),
    }
}

/// Whether `path` still names the file or directory `handle` has open.
fn same_file(handle: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (handle.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = handle;
        path.exists()
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
    fn the_directory_stays_locked_when_its_lock_file_is_deleted() {
        let dir = tempfile::tempdir().expect("tmp");
        let first = RunLock::acquire(dir.path()).expect("first");
        first.check().expect("intact");
        std::fs::remove_file(dir.path().join(LOCK_FILE)).expect("rm");
        let err = RunLock::acquire(dir.path()).expect_err("still held");
        assert!(matches!(err, LockError::Held { .. }), "{err}");
        let lost = first.check().expect_err("its file is gone");
        assert!(
            matches!(lost, LockError::Lost { .. }) && lost.to_string().contains("run.lock"),
            "{lost}"
        );
    }

    #[test]
    fn a_replaced_lock_file_is_noticed() {
        let dir = tempfile::tempdir().expect("tmp");
        let first = RunLock::acquire(dir.path()).expect("first");
        std::fs::remove_file(dir.path().join(LOCK_FILE)).expect("rm");
        std::fs::write(dir.path().join(LOCK_FILE), "{}").expect("recreate");
        assert!(matches!(first.check(), Err(LockError::Lost { .. })));
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
