//! The run directory on disk: `manifest.json` plus append-only JSONL records.
//!
//! Each finished conversation (or router call) is written as one whole line and fsynced before the
//! next trial starts, so a crash or a kill loses at most the trial in flight. Opening an existing
//! run scans its records: a torn last line (no newline, or not valid JSON) is cut off, and the keys
//! of the finished trials are returned so the schedule can skip them. A resume that would mix Ollama
//! versions, model digests or grader digests is refused, naming what differs.

use crate::runner::lock::{LockError, RunLock};
use crate::runner::record::{
    CONVERSATIONS_FILE, MANIFEST_FILE, Manifest, Outcome, ROUTER_FILE, Record, SCHEMA_VERSION,
    TrialKey,
};
use crate::runner::record_file::{self, RecordFileError};
use crate::runner::settings::trial_settings;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What can go wrong with a run directory.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// File concerned.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// A record file breaks the rules of [`record_file`].
    #[error(transparent)]
    Records(#[from] RecordFileError),
    /// Another process holds the run directory.
    #[error(transparent)]
    Locked(#[from] LockError),
    /// Records without their manifest.
    #[error(
        "{path} has records but the run directory has no manifest.json: they cannot be told apart from a new run's; move them away or restore the manifest"
    )]
    Orphans {
        /// The record file.
        path: PathBuf,
    },
    /// The manifest could not be parsed.
    #[error("{path}: {message}")]
    Manifest {
        /// File concerned.
        path: PathBuf,
        /// Parser message.
        message: String,
    },
    /// Appending would mix records of different setups.
    #[error(
        "refusing to append to {dir}: {what} differs (recorded {recorded}, now {now}); start a new run directory"
    )]
    Mixed {
        /// Run directory.
        dir: PathBuf,
        /// What differs.
        what: String,
        /// Value in the manifest.
        recorded: String,
        /// Value now.
        now: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> JournalError + '_ {
    move |source| JournalError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// An open run directory, ready to append.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    conversations: File,
    router: File,
    done: BTreeSet<TrialKey>,
    dropped_torn: usize,
    to_retry: usize,
    lock: RunLock,
}

/// How a resume treats what is on disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResumePolicy {
    /// Play again every trial whose latest record ended on a failure outside the model (transport,
    /// protocol, tool server), however often it was tried (`passk run --retry-failed`).
    pub retry_failed: bool,
    /// Append although a model digest the run recorded cannot be read now
    /// (`--allow-unknown-digest`).
    pub allow_unknown_digest: bool,
    /// Accept a larger number of trials per task than the run recorded, so that only the trials
    /// it lacks are played (`--extend`).
    pub extend_trials: bool,
}

impl ResumePolicy {
    /// Whether a trial with this history is finished: graded, or out of wire tries.
    fn is_done(&self, t: &Tally) -> bool {
        // A trial that ended on a wire failure is played again (the server was at fault, not the
        // model), up to MAX_WIRE_TRIES times in all; failures while the server could not be reached
        // do not count. Its records stay, and a newer graded one supersedes them.
        if t.latest.is_graded() {
            return true;
        }
        if self.retry_failed {
            return false;
        }
        t.wire_tries >= MAX_WIRE_TRIES
    }
}

impl Journal {
    /// Opens `dir`, creating it with `manifest` or resuming it. Resuming checks that the recorded
    /// manifest's grader digest, Ollama version and model digests equal `manifest`'s.
    pub fn open(dir: &Path, manifest: &Manifest) -> Result<Journal, JournalError> {
        Journal::open_with(dir, manifest, &ResumePolicy::default())
    }

    /// [`Journal::open`] with a resume policy. The directory is locked first ([`RunLock`]) and
    /// stays locked while the journal lives.
    pub fn open_with(
        dir: &Path,
        manifest: &Manifest,
        policy: &ResumePolicy,
    ) -> Result<Journal, JournalError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let lock = RunLock::acquire(dir)?;
        let manifest_path = dir.join(MANIFEST_FILE);
        let recorded = if manifest_path.exists() {
            let recorded = read_manifest(dir)?;
            check_same_setup(dir, &recorded, manifest, policy)?;
            recorded
        } else {
            refuse_orphan_records(dir)?;
            write_manifest(dir, manifest)?;
            manifest.clone()
        };
        let mut done = BTreeSet::new();
        let mut dropped_torn = 0;
        let mut to_retry = 0;
        for name in [CONVERSATIONS_FILE, ROUTER_FILE] {
            let scan = scan(&dir.join(name), &recorded)?;
            dropped_torn += usize::from(scan.torn);
            for (key, tally) in scan.latest {
                if policy.is_done(&tally) {
                    done.insert(key);
                } else {
                    to_retry += 1;
                }
            }
        }
        let open = |name: &str| {
            let path = dir.join(name);
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(io(&path))
        };
        Ok(Journal {
            dir: dir.to_path_buf(),
            conversations: open(CONVERSATIONS_FILE)?,
            router: open(ROUTER_FILE)?,
            done,
            dropped_torn,
            to_retry,
            lock,
        })
    }

    /// The holder named by a lock left behind by a process that died holding it, when opening took
    /// it over.
    pub fn lock_taken_over_from(&self) -> Option<&str> {
        self.lock.taken_over_from()
    }

    /// Trials on disk whose latest record is a transport or protocol failure, tried fewer than
    /// [`MAX_WIRE_TRIES`] times; the schedule plays them again.
    pub fn to_retry(&self) -> usize {
        self.to_retry
    }

    /// The run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Trials already on disk.
    pub fn done(&self) -> &BTreeSet<TrialKey> {
        &self.done
    }

    /// Torn last lines cut off while opening (0 or more, one per file at most).
    pub fn dropped_torn(&self) -> usize {
        self.dropped_torn
    }

    /// Appends one record as a whole line and fsyncs it. A key already on disk is not written twice.
    /// A lock that no longer guards the directory ([`RunLock::check`]) stops the write.
    pub fn append(&mut self, record: &Record) -> Result<bool, JournalError> {
        let key = match record {
            Record::Conversation(c) => c.key(),
            Record::Router(r) => r.key(),
        };
        if self.done.contains(&key) {
            return Ok(false);
        }
        self.lock.check()?;
        let (file, name) = match record {
            Record::Conversation(_) => (&mut self.conversations, CONVERSATIONS_FILE),
            Record::Router(_) => (&mut self.router, ROUTER_FILE),
        };
        let path = self.dir.join(name);
        let mut line = serde_json::to_vec(record).map_err(|e| JournalError::Io {
            path: path.clone(),
            source: std::io::Error::other(e),
        })?;
        line.push(b'\n');
        file.write_all(&line).map_err(io(&path))?;
        file.sync_data().map_err(io(&path))?;
        self.done.insert(key);
        Ok(true)
    }

    /// Lets a trial on disk be appended again, so that one whose record ended on a wire failure
    /// can be played again in this session (the later record supersedes it).
    pub fn play_again(&mut self, key: &TrialKey) {
        self.done.remove(key);
    }

    /// Rewrites the manifest (atomically), e.g. to add warnings raised during the run.
    pub fn update_manifest(&self, manifest: &Manifest) -> Result<(), JournalError> {
        self.lock.check()?;
        write_manifest(&self.dir, manifest)
    }
}

/// Reads `manifest.json` of a run directory.
pub fn read_manifest(dir: &Path) -> Result<Manifest, JournalError> {
    let path = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&path).map_err(io(&path))?;
    serde_json::from_str(&text).map_err(|e| JournalError::Manifest {
        path,
        message: e.to_string(),
    })
}

/// Writes `manifest.json` through a temporary file and a rename, so it is never half written.
pub fn write_manifest(dir: &Path, manifest: &Manifest) -> Result<(), JournalError> {
    let path = dir.join(MANIFEST_FILE);
    let tmp = dir.join(format!("{MANIFEST_FILE}.tmp"));
    let mut bytes = serde_json::to_vec_pretty(manifest).map_err(|e| JournalError::Manifest {
        path: path.clone(),
        message: e.to_string(),
    })?;
    bytes.push(b'\n');
    let mut f = File::create(&tmp).map_err(io(&tmp))?;
    f.write_all(&bytes).map_err(io(&tmp))?;
    f.sync_all().map_err(io(&tmp))?;
    std::fs::rename(&tmp, &path).map_err(io(&path))
}

fn check_same_setup(
    dir: &Path,
    recorded: &Manifest,
    now: &Manifest,
    policy: &ResumePolicy,
) -> Result<(), JournalError> {
    let mixed = |what: &str, a: &str, b: &str| JournalError::Mixed {
        dir: dir.to_path_buf(),
        what: what.to_string(),
        recorded: a.to_string(),
        now: b.to_string(),
    };
    if recorded.schema_version != SCHEMA_VERSION {
        return Err(mixed(
            "record schema version",
            &recorded.schema_version.to_string(),
            &SCHEMA_VERSION.to_string(),
        ));
    }
    for (suite, part) in &now.graders {
        let Some(was) = recorded.graders.get(suite) else {
            continue;
        };
        if was.digest != part.digest {
            let changes: Vec<String> = was
                .changes_to(suite, part)
                .iter()
                .map(ToString::to_string)
                .collect();
            return Err(mixed(
                &format!("the graders of suite {suite} ({})", changes.join("; ")),
                &was.digest,
                &part.digest,
            ));
        }
    }
    if recorded.grader_digest != now.grader_digest {
        return Err(mixed(
            "grader digest",
            &recorded.grader_digest,
            &now.grader_digest,
        ));
    }
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    if recorded.server_version != now.server_version {
        return Err(mixed(
            "Ollama version",
            &show(&recorded.server_version),
            &show(&now.server_version),
        ));
    }
    let (mut a, mut b) = (
        trial_settings(&recorded.settings),
        trial_settings(&now.settings),
    );
    let trials =
        |m: &serde_json::Map<String, serde_json::Value>| m.get("trials").and_then(|t| t.as_u64());
    if policy.extend_trials && trials(&b) >= trials(&a) {
        a.remove("trials");
        b.remove("trials");
    }
    if a != b {
        let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        let differ: Vec<&str> = keys
            .into_iter()
            .filter(|k| a.get(*k) != b.get(*k))
            .map(String::as_str)
            .collect();
        let show = |m: &serde_json::Map<String, serde_json::Value>| {
            differ
                .iter()
                .map(|k| format!("{k}={}", m.get(*k).unwrap_or(&serde_json::Value::Null)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(mixed("the run's settings", &show(&a), &show(&b)));
    }
    for (suite, digests) in &now.suite_digests {
        if let Some(old) = recorded.suite_digests.get(suite)
            && old != digests
        {
            let part = if old.tasks != digests.tasks {
                ("task files", &old.tasks, &digests.tasks)
            } else if old.tools != digests.tools {
                ("tool documentation", &old.tools, &digests.tools)
            } else {
                ("policy", &old.policy, &digests.policy)
            };
            return Err(mixed(
                &format!("the {suite} suite's {}", part.0),
                part.1,
                part.2,
            ));
        }
    }
    for (suite, prompts) in &now.prompt_digests {
        let old = recorded.prompt_digests.get(suite);
        for (name, digest) in prompts {
            if let Some(was) = old.and_then(|o| o.get(name))
                && was != digest
            {
                return Err(mixed(
                    &format!("the {suite} suite's prompt variant {name}"),
                    was,
                    digest,
                ));
            }
        }
    }
    for model in &now.models {
        if let Some(old) = recorded.models.iter().find(|m| m.name == model.name)
            && old.digest.is_some()
            && model.digest.is_some()
            && old.digest != model.digest
        {
            return Err(mixed(
                &format!("digest of model {}", model.name),
                &show(&old.digest),
                &show(&model.digest),
            ));
        }
        if let Some(old) = recorded.models.iter().find(|m| m.name == model.name)
            && old.digest.is_some()
            && model.digest.is_none()
            && !policy.allow_unknown_digest
        {
            return Err(mixed(
                &format!("digest of model {}", model.name),
                &show(&old.digest),
                "unknown (the server did not report it; pass --allow-unknown-digest to append anyway, and the manifest will say so)",
            ));
        }
    }
    Ok(())
}

/// Records of one trial ending on the wire after which a resume stops playing it again.
pub const MAX_WIRE_TRIES: usize = 3;

/// One trial's history on disk.
struct Tally {
    latest: Outcome,
    /// Records that ended on the wire while the server could still be reached.
    wire_tries: usize,
}

struct Scan {
    /// Every finished trial on disk with its history.
    latest: BTreeMap<TrialKey, Tally>,
    torn: bool,
}

/// Reads a record file by the shared rules ([`record_file`]), cutting off a torn last line.
fn scan(path: &Path, manifest: &Manifest) -> Result<Scan, JournalError> {
    let mut latest: BTreeMap<TrialKey, Tally> = BTreeMap::new();
    let read = record_file::read_records(path, manifest, |line| {
        let (key, outcome) = record_file::key_and_outcome(&line.record);
        let counts = !outcome.is_graded() && !line.record.server_unreachable();
        let t = latest.entry(key).or_insert(Tally {
            latest: outcome,
            wire_tries: 0,
        });
        t.latest = outcome;
        t.wire_tries += usize::from(counts);
    })?;
    if read.torn {
        let f = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(io(path))?;
        f.set_len(read.good_len).map_err(io(path))?;
        f.sync_all().map_err(io(path))?;
    }
    Ok(Scan {
        latest,
        torn: read.torn,
    })
}

/// Records with no manifest beside them belong to a run nobody can identify any more: appending a
/// new run to them would mix the two.
fn refuse_orphan_records(dir: &Path) -> Result<(), JournalError> {
    for name in [CONVERSATIONS_FILE, ROUTER_FILE] {
        let path = dir.join(name);
        if std::fs::metadata(&path).is_ok_and(|m| m.len() > 0) {
            return Err(JournalError::Orphans { path });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::record::{CallRecord, Node, Outcome, RouterRecord};

    fn manifest() -> Manifest {
        Manifest {
            schema_version: SCHEMA_VERSION,
            grader_digest: "g1".into(),
            ..Manifest::default()
        }
    }

    fn router(index: u32) -> Record {
        Record::Router(Box::new(RouterRecord {
            schema_version: SCHEMA_VERSION,
            grader_digest: "g1".into(),
            model: "m".into(),
            api: crate::wire::chat::ApiKind::Ollama,
            index,
            trial: 0,
            label: "other".into(),
            predicted: Some("other".into()),
            correct: true,
            raw: "other".into(),
            temperature: Some(0.0),
            outcome: Outcome::Pass,
            call: CallRecord::new(Node::Router, 0, 0),
            imported: false,
            server_unreachable: false,
            host: None,
            parallel: None,
        }))
    }

    #[test]
    fn resume_drops_torn_line_and_skips_done() {
        let dir = tempfile::tempdir().expect("tmp");
        {
            let mut j = Journal::open(dir.path(), &manifest()).expect("open");
            assert!(j.append(&router(0)).expect("append"));
            assert!(
                !j.append(&router(0)).expect("append twice"),
                "no duplicates"
            );
            assert!(j.append(&router(1)).expect("append"));
        }
        // Simulate a kill in the middle of a write.
        let path = dir.path().join(ROUTER_FILE);
        let mut f = OpenOptions::new().append(true).open(&path).expect("open");
        f.write_all(b"{\"type\":\"router\",\"schema_ver")
            .expect("write");
        drop(f);
        let j = Journal::open(dir.path(), &manifest()).expect("reopen");
        assert_eq!(j.done().len(), 2);
        assert_eq!(j.dropped_torn(), 1);
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text.lines().count(), 2);
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn refuses_mixed_grader_digest() {
        let dir = tempfile::tempdir().expect("tmp");
        Journal::open(dir.path(), &manifest()).expect("open");
        let other = Manifest {
            grader_digest: "g2".into(),
            ..manifest()
        };
        let err = Journal::open(dir.path(), &other).expect_err("must refuse");
        assert!(err.to_string().contains("grader digest"), "{err}");
    }

    #[test]
    fn a_trial_that_failed_on_the_wire_runs_again() {
        let dir = tempfile::tempdir().expect("tmp");
        let failed = |index| match router(index) {
            Record::Router(mut r) => {
                r.outcome = Outcome::TransportFail;
                r.correct = false;
                Record::Router(r)
            }
            other => other,
        };
        {
            let mut j = Journal::open(dir.path(), &manifest()).expect("open");
            j.append(&router(0)).expect("append");
            j.append(&failed(1)).expect("append");
        }
        let mut j = Journal::open(dir.path(), &manifest()).expect("reopen");
        assert_eq!((j.done().len(), j.to_retry()), (1, 1));
        assert!(
            j.append(&router(1)).expect("retry"),
            "the retried trial is written"
        );
        drop(j);
        let j = Journal::open(dir.path(), &manifest()).expect("reopen");
        assert_eq!(
            (j.done().len(), j.to_retry()),
            (2, 0),
            "the newer record supersedes"
        );
        drop(j);
        // A trial that keeps failing on the wire is given up after MAX_WIRE_TRIES records.
        for tries in 1..=MAX_WIRE_TRIES {
            let mut j = Journal::open(dir.path(), &manifest()).expect("reopen");
            assert_eq!(j.done().len(), 2, "try {tries}");
            assert!(j.append(&failed(2)).expect("append"));
        }
        let j = Journal::open(dir.path(), &manifest()).expect("reopen");
        assert_eq!((j.done().len(), j.to_retry()), (3, 0));
    }

    #[test]
    fn a_whole_last_line_that_is_not_a_record_is_never_cut() {
        let dir = tempfile::tempdir().expect("tmp");
        Journal::open(dir.path(), &manifest()).expect("open");
        std::fs::write(dir.path().join(ROUTER_FILE), b"{\"type\":\"nonsense\"}\n").expect("write");
        let err = Journal::open(dir.path(), &manifest()).expect_err("corrupt");
        assert!(err.to_string().contains(":1:"), "{err}");
        assert!(
            !std::fs::read(dir.path().join(ROUTER_FILE))
                .expect("read")
                .is_empty()
        );
    }

    #[test]
    fn refuses_a_changed_policy() {
        let dir = tempfile::tempdir().expect("tmp");
        let with = |policy: &str| {
            let mut m = manifest();
            m.suite_digests.insert(
                "store".into(),
                crate::domain::SuiteDigests {
                    tasks: "t".into(),
                    tools: "b".into(),
                    policy: policy.into(),
                },
            );
            m
        };
        Journal::open(dir.path(), &with("p1")).expect("open");
        Journal::open(dir.path(), &with("p1")).expect("same suite");
        let err = Journal::open(dir.path(), &with("p2")).expect_err("policy moved");
        assert!(err.to_string().contains("store suite's policy"), "{err}");
    }

    #[test]
    fn refuses_a_changed_prompt_variant() {
        let dir = tempfile::tempdir().expect("tmp");
        let with = |digest: &str| {
            let mut m = manifest();
            let played = [("strict".to_string(), digest.to_string())].into();
            m.prompt_digests.insert("store".into(), played);
            m
        };
        Journal::open(dir.path(), &with("s1")).expect("open");
        Journal::open(dir.path(), &with("s1")).expect("same prompt");
        let err = Journal::open(dir.path(), &with("s2")).expect_err("prompt moved");
        assert!(
            err.to_string()
                .contains("store suite's prompt variant strict"),
            "{err}"
        );
    }

    #[test]
    fn refuses_changed_settings_but_allows_a_new_task_filter() {
        let dir = tempfile::tempdir().expect("tmp");
        let with = |settings: serde_json::Value| Manifest {
            settings,
            ..manifest()
        };
        let first = serde_json::json!({"num_ctx": 4096, "tasks": [], "timeout_s": 300.0});
        Journal::open(dir.path(), &with(first)).expect("open");
        let filter = serde_json::json!({"num_ctx": 4096, "tasks": ["L1"], "timeout_s": 60.0});
        Journal::open(dir.path(), &with(filter)).expect("a task filter and timeout may change");
        let ctx = serde_json::json!({"num_ctx": 8192, "tasks": [], "timeout_s": 300.0});
        let err = Journal::open(dir.path(), &with(ctx)).expect_err("num_ctx may not");
        assert!(
            err.to_string().contains("num_ctx=4096") && err.to_string().contains("num_ctx=8192"),
            "{err}"
        );
    }

    #[test]
    fn corrupt_middle_line_is_an_error() {
        let dir = tempfile::tempdir().expect("tmp");
        Journal::open(dir.path(), &manifest()).expect("open");
        std::fs::write(dir.path().join(ROUTER_FILE), b"garbage\n{}\n").expect("write");
        let err = Journal::open(dir.path(), &manifest()).expect_err("corrupt");
        assert!(err.to_string().contains(":1:"), "{err}");
    }

    fn failed(index: u32) -> Record {
        match router(index) {
            Record::Router(mut r) => {
                r.outcome = Outcome::TransportFail;
                r.correct = false;
                Record::Router(r)
            }
            other => other,
        }
    }

    #[test]
    fn a_second_journal_on_the_same_directory_is_refused() {
        let dir = tempfile::tempdir().expect("tmp");
        let first = Journal::open(dir.path(), &manifest()).expect("open");
        let err = Journal::open(dir.path(), &manifest()).expect_err("locked");
        assert!(matches!(err, JournalError::Locked(_)), "{err}");
        drop(first);
        Journal::open(dir.path(), &manifest()).expect("free again");
    }

    #[test]
    fn a_writer_whose_lock_file_is_deleted_stops_and_no_second_writer_starts() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut first = Journal::open(dir.path(), &manifest()).expect("open");
        first.append(&router(0)).expect("append");
        std::fs::remove_file(dir.path().join(crate::runner::lock::LOCK_FILE)).expect("rm");
        let err = Journal::open(dir.path(), &manifest()).expect_err("the directory is held");
        assert!(
            matches!(err, JournalError::Locked(LockError::Held { .. })),
            "{err}"
        );
        let err = first.append(&router(1)).expect_err("lock gone");
        assert!(
            matches!(err, JournalError::Locked(LockError::Lost { .. })),
            "{err}"
        );
        let text = std::fs::read_to_string(dir.path().join(ROUTER_FILE)).expect("read");
        assert_eq!(text.lines().count(), 1, "nothing written after the loss");
    }

    #[test]
    fn records_without_their_manifest_are_refused() {
        let dir = tempfile::tempdir().expect("tmp");
        {
            let mut j = Journal::open(dir.path(), &manifest()).expect("open");
            j.append(&router(0)).expect("append");
        }
        std::fs::remove_file(dir.path().join(MANIFEST_FILE)).expect("rm manifest");
        let err = Journal::open(dir.path(), &manifest()).expect_err("orphans");
        assert!(matches!(err, JournalError::Orphans { .. }), "{err}");
        assert!(
            !dir.path().join(MANIFEST_FILE).exists(),
            "no new manifest claims them"
        );
    }

    #[test]
    fn a_duplicated_record_line_is_refused_with_its_line() {
        let dir = tempfile::tempdir().expect("tmp");
        {
            let mut j = Journal::open(dir.path(), &manifest()).expect("open");
            j.append(&router(0)).expect("append");
        }
        let path = dir.path().join(ROUTER_FILE);
        let line = std::fs::read_to_string(&path).expect("read");
        std::fs::write(&path, format!("{line}{line}")).expect("write");
        let err = Journal::open(dir.path(), &manifest()).expect_err("duplicate");
        let text = err.to_string();
        assert!(
            text.contains("router.jsonl:2:") && text.contains("line 1"),
            "{text}"
        );
    }

    #[test]
    fn failures_while_the_server_was_unreachable_use_no_tries() {
        let dir = tempfile::tempdir().expect("tmp");
        for _ in 0..2 * MAX_WIRE_TRIES {
            let mut j = Journal::open(dir.path(), &manifest()).expect("open");
            assert!(j.done().is_empty(), "never given up");
            let mut r = failed(0);
            r.mark_server_unreachable();
            assert!(j.append(&r).expect("append"));
        }
        let j = Journal::open(dir.path(), &manifest()).expect("reopen");
        assert_eq!((j.done().len(), j.to_retry()), (0, 1), "still to play");
    }

    #[test]
    fn retry_failed_replays_trials_out_of_wire_tries() {
        for outcome in [
            Outcome::TransportFail,
            Outcome::ProtocolFail,
            Outcome::ToolServerFail,
        ] {
            retry_failed_replays(outcome);
        }
    }

    fn retry_failed_replays(outcome: Outcome) {
        let dir = tempfile::tempdir().expect("tmp");
        for _ in 0..MAX_WIRE_TRIES {
            let mut j = Journal::open(dir.path(), &manifest()).expect("open");
            let mut r = failed(0);
            if let Record::Router(r) = &mut r {
                r.outcome = outcome;
            }
            j.append(&r).expect("append");
        }
        let j = Journal::open(dir.path(), &manifest()).expect("reopen");
        assert_eq!((j.done().len(), j.to_retry()), (1, 0), "given up");
        drop(j);
        let policy = ResumePolicy {
            retry_failed: true,
            ..ResumePolicy::default()
        };
        let j = Journal::open_with(dir.path(), &manifest(), &policy).expect("reopen");
        assert_eq!((j.done().len(), j.to_retry()), (0, 1), "played again");
    }

    #[test]
    fn an_unknown_digest_is_refused_unless_allowed() {
        let dir = tempfile::tempdir().expect("tmp");
        let with = |digest: Option<&str>| Manifest {
            models: vec![crate::runner::record::ModelInfo {
                name: "m".into(),
                digest: digest.map(String::from),
                ..Default::default()
            }],
            ..manifest()
        };
        Journal::open(dir.path(), &with(Some("sha256:aa"))).expect("open");
        let err = Journal::open(dir.path(), &with(None)).expect_err("unknown digest");
        assert!(
            err.to_string().contains("--allow-unknown-digest")
                && err.to_string().contains("sha256:aa"),
            "{err}"
        );
        let allow = ResumePolicy {
            allow_unknown_digest: true,
            ..ResumePolicy::default()
        };
        Journal::open_with(dir.path(), &with(None), &allow).expect("allowed");
    }
}
