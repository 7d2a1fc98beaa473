//! A report folder that is whole or absent: every file of a report (transcripts included) is
//! written into a hidden staging folder beside `report/`, which one rename then puts in place.
//! With an earlier report there, the two folders are exchanged in one step (`renameat2` with
//! `RENAME_EXCHANGE`); where the file system cannot, the old folder is first renamed aside, so a
//! kill between the two renames leaves no `report/` at all, never a mix. Whatever a killed report
//! left (`.report.<pid>.tmp`, `.report.<pid>.old`, `.<file>.<pid>.tmp`) is removed by the next
//! report once that process is gone.

use crate::report::{REPORT_DIR, ReportError};
use std::path::{Path, PathBuf};

/// A report being written: its staging folder, and the place it goes.
#[derive(Debug)]
pub struct StagedFolder {
    staging: PathBuf,
    place: PathBuf,
    done: bool,
}

impl StagedFolder {
    /// Clears what dead reports left in `run_dir` and opens an empty staging folder for the
    /// report of `run_dir`.
    pub fn open(run_dir: &Path) -> Result<StagedFolder, ReportError> {
        remove_leftovers(run_dir);
        remove_leftovers(&run_dir.join(REPORT_DIR));
        let staging = run_dir.join(format!(".{REPORT_DIR}.{}.tmp", std::process::id()));
        if staging.exists() {
            std::fs::remove_dir_all(&staging).map_err(io(&staging))?;
        }
        std::fs::create_dir_all(&staging).map_err(io(&staging))?;
        Ok(StagedFolder {
            staging,
            place: run_dir.join(REPORT_DIR),
            done: false,
        })
    }

    /// Where the report's files are written until [`StagedFolder::commit`].
    pub fn path(&self) -> &Path {
        &self.staging
    }

    /// Where the report will be: `RUN_DIR/report`.
    pub fn place(&self) -> &Path {
        &self.place
    }

    /// Puts the staging folder in place of `report/`, then removes the earlier report.
    pub fn commit(mut self) -> Result<(), ReportError> {
        if self.place.exists() {
            if exchange(&self.staging, &self.place).is_ok() {
                // The staging path now holds the earlier report.
                self.done = true;
                let _ = std::fs::remove_dir_all(&self.staging);
                return Ok(());
            }
            let old = aside(&self.place);
            std::fs::rename(&self.place, &old).map_err(io(&self.place))?;
            let put = std::fs::rename(&self.staging, &self.place).map_err(io(&self.place));
            let _ = std::fs::remove_dir_all(&old);
            put?;
        } else {
            std::fs::rename(&self.staging, &self.place).map_err(io(&self.place))?;
        }
        self.done = true;
        Ok(())
    }
}

impl Drop for StagedFolder {
    /// An uncommitted report leaves nothing behind.
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

/// Where an earlier report waits to be removed while the new one is put in place.
fn aside(place: &Path) -> PathBuf {
    place.with_file_name(format!(".{REPORT_DIR}.{}.old", std::process::id()))
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Swaps two existing paths in one step.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
    let (a, b) = (c(a)?, c(b)?);
    // SAFETY: two valid NUL-terminated paths, relative to the working directory.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// Removes, in `dir`, the temporary files and folders of reports whose process is gone.
fn remove_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(leftover_pid) else {
            continue;
        };
        if pid == std::process::id() || alive(pid) {
            continue;
        }
        let path = entry.path();
        let _ = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
    }
}

/// The process id in a temporary name: `.<name>.<pid>.tmp`, or `.report.<pid>.old`.
fn leftover_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let (rest, pid) = match rest.strip_suffix(".tmp") {
        Some(r) => r.rsplit_once('.')?,
        None => (
            REPORT_DIR,
            rest.strip_suffix(".old")?
                .strip_prefix(REPORT_DIR)?
                .strip_prefix('.')?,
        ),
    };
    (!rest.is_empty() && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        .then(|| pid.parse().ok())
        .flatten()
}

/// Whether a process with this id runs (one we may not signal runs too).
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_are_told_from_the_rest() {
        assert_eq!(leftover_pid(".report.123.tmp"), Some(123));
        assert_eq!(leftover_pid(".report.md.45.tmp"), Some(45));
        assert_eq!(leftover_pid(".report.77.old"), Some(77));
        for other in [
            "report.md",
            ".report.tmp",
            ".x.12a.tmp",
            "..7.tmp",
            ".lock",
            ".other.5.old",
            "conversations.jsonl",
        ] {
            assert_eq!(leftover_pid(other), None, "{other}");
        }
    }

    #[test]
    fn a_commit_replaces_the_whole_folder_and_an_abandoned_one_leaves_nothing() {
        let run = tempfile::tempdir().expect("tmp");
        std::fs::create_dir_all(run.path().join("report/transcripts")).expect("mkdir");
        std::fs::write(run.path().join("report/old-only.txt"), "old").expect("write");
        let staged = StagedFolder::open(run.path()).expect("open");
        std::fs::write(staged.path().join("report.md"), "new").expect("write");
        staged.commit().expect("commit");
        let names: Vec<String> = std::fs::read_dir(run.path())
            .expect("ls")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["report"], "nothing else is left");
        let names: Vec<String> = std::fs::read_dir(run.path().join("report"))
            .expect("ls")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["report.md"],
            "no file of the earlier report remains"
        );

        let staged = StagedFolder::open(run.path()).expect("open");
        std::fs::write(staged.path().join("half.md"), "half").expect("write");
        drop(staged);
        assert_eq!(std::fs::read_dir(run.path()).expect("ls").count(), 1);
    }

    #[test]
    fn what_a_dead_report_left_is_removed_and_a_live_ones_kept() {
        let run = tempfile::tempdir().expect("tmp");
        // A process id that is not running: a child that has exited and been reaped.
        let mut child = std::process::Command::new("true").spawn().expect("true");
        let dead = child.id();
        child.wait().expect("wait");
        let mine = std::process::id();
        std::fs::create_dir_all(run.path().join(format!(".report.{dead}.tmp/t"))).expect("mkdir");
        std::fs::create_dir_all(run.path().join(format!(".report.{dead}.old"))).expect("mkdir");
        std::fs::create_dir_all(run.path().join("report")).expect("mkdir");
        std::fs::write(
            run.path().join(format!("report/.summary.json.{dead}.tmp")),
            "x",
        )
        .expect("write");
        let parent = std::os::unix::process::parent_id();
        std::fs::write(run.path().join(format!(".cell-records.{parent}.tmp")), "x").expect("write");
        let staged = StagedFolder::open(run.path()).expect("open");
        let mut names: Vec<String> = std::fs::read_dir(run.path())
            .expect("ls")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let mut want = vec![
            format!(".cell-records.{parent}.tmp"),
            format!(".report.{mine}.tmp"),
            "report".to_string(),
        ];
        want.sort();
        assert_eq!(names, want);
        assert_eq!(
            std::fs::read_dir(run.path().join("report"))
                .expect("ls")
                .count(),
            0
        );
        drop(staged);
    }
}
