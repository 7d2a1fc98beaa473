//! The one reader of a run's record files (`conversations.jsonl`, `router.jsonl`): `passk run`
//! (through the journal) and `passk report` (through the analysis loader) read them by the same
//! rules.
//!
//! - Every line is one whole record; a blank line is not a record and is refused.
//! - Only the last line may be torn (cut short by a kill: no newline, or JSON that ends early); it
//!   is reported, and the caller cuts it off (run) or skips it (report).
//! - A trial may have several records only while the earlier ones ended on the wire (transport or
//!   protocol failure, played again on resume); a record of a trial that already has a graded one
//!   is a duplicate and is refused, naming both lines.
//! - A record's model, suite, task, call cap, mode, tool docs variant and router flag must be
//!   among those the manifest declares, and its trial index below the manifest's `trials` (k). A
//!   record written before factorial runs carries no tool docs variant: it is read as the run's
//!   single variant.
//! - A record's `schema_version` must be the one this passk writes, and its grader digest the
//!   manifest's: a verdict of other graders would be counted as this run's.

use crate::domain::{PromptVariant, ToolVariant};
use crate::runner::levels::{Levels, declared};
use crate::runner::record::{
    ConversationRecord, Manifest, Mode, Outcome, Record, RouterRecord, SCHEMA_VERSION, TrialKey,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// A record file that breaks one of the rules, or could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordFileError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// A line breaks a rule.
    #[error("{path}:{line}: {message}")]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// What reading a file found besides its records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileRead {
    /// The last line was torn.
    pub torn: bool,
    /// Bytes of whole records before the torn line (the file's length when nothing is torn).
    pub good_len: u64,
}

/// One record as read, with its line.
#[derive(Debug, Clone)]
pub struct Line {
    /// 1-based line number.
    pub number: usize,
    /// The record.
    pub record: Record,
}

/// Reads `path` (absent: no records) record by record, checking each against `manifest`, and hands
/// each to `visit`.
pub fn read_records(
    path: &Path,
    manifest: &Manifest,
    visit: impl FnMut(Line),
) -> Result<FileRead, RecordFileError> {
    match File::open(path) {
        Ok(f) => read_from(path, f, manifest, visit),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FileRead::default()),
        Err(source) => Err(RecordFileError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// [`read_records`] over any reader; `path` only names the source in errors.
pub fn read_from(
    path: &Path,
    source: impl Read,
    manifest: &Manifest,
    mut visit: impl FnMut(Line),
) -> Result<FileRead, RecordFileError> {
    let io = |source| RecordFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let bad = |line: usize, message: String| RecordFileError::Line {
        path: path.to_path_buf(),
        line,
        message,
    };
    let allowed = Allowed::of(manifest);
    let mut graded_on = GradedOn::default();
    // Records run to tens of KiB a line: a larger buffer than the default 8 KiB reads each in
    // one or two calls rather than several.
    let mut reader = BufReader::with_capacity(READ_BUFFER, source);
    let mut buf = Vec::new();
    let mut read = FileRead::default();
    let mut number = 0;
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(io)?;
        if n == 0 {
            return Ok(read);
        }
        number += 1;
        let complete = buf.last() == Some(&b'\n');
        let parsed = parse_record(&buf);
        let mut record = match parsed {
            Ok(record) if complete => record,
            Ok(_) => {
                read.torn = true;
                return Ok(read);
            }
            Err(_) if complete && buf.iter().all(u8::is_ascii_whitespace) => {
                return Err(bad(
                    number,
                    "blank line: passk writes none; remove it".into(),
                ));
            }
            Err(e) => {
                let mut rest = Vec::new();
                let is_last = reader.read_until(b'\n', &mut rest).map_err(io)? == 0;
                if is_last && (!complete || e.is_eof()) {
                    read.torn = true;
                    return Ok(read);
                }
                return Err(bad(number, format!("not a passk record: {e}")));
            }
        };
        allowed.fill_in(&mut record);
        let (key, outcome) = key_and_outcome(&record);
        allowed.check_stamp(&record).map_err(|m| bad(number, m))?;
        allowed.check(&key).map_err(|m| bad(number, m))?;
        if let Some(first) = graded_on.line_of(&key) {
            return Err(bad(
                number,
                format!(
                    "trial {} already has a graded record on line {first}; the same trial twice \
                     would be counted twice",
                    show_key(&key)
                ),
            ));
        }
        if outcome.is_graded() {
            graded_on.insert(&key, number);
        }
        read.good_len += n as u64;
        visit(Line { number, record });
    }
}

/// A trial key with its names (suite, model, task) as small numbers.
type Compact = (
    [u32; 3],
    u32,
    u32,
    Mode,
    Option<ToolVariant>,
    bool,
    Option<PromptVariant>,
);

/// The line of each trial's graded record, its key held with each name once for the file rather
/// than once per record: a run of 100,000 records would otherwise hold every key's three names
/// again while it is read.
#[derive(Default)]
struct GradedOn {
    names: HashMap<String, u32>,
    lines: HashMap<Compact, usize>,
}

impl GradedOn {
    fn compact(key: &TrialKey, mut id: impl FnMut(&str) -> Option<u32>) -> Option<Compact> {
        Some((
            [id(&key.suite)?, id(&key.model)?, id(&key.task)?],
            key.trial,
            key.call_cap,
            key.mode,
            key.tool_docs,
            key.router_in_front,
            key.prompt,
        ))
    }

    /// The line of the trial's graded record, if one was read.
    fn line_of(&self, key: &TrialKey) -> Option<usize> {
        let compact = Self::compact(key, |name| self.names.get(name).copied())?;
        self.lines.get(&compact).copied()
    }

    fn insert(&mut self, key: &TrialKey, line: usize) {
        let names = &mut self.names;
        let compact = Self::compact(key, |name| {
            let next = names.len() as u32;
            Some(match names.get(name) {
                Some(&id) => id,
                None => *names.entry(name.to_string()).or_insert(next),
            })
        })
        .expect("every name gets an id");
        self.lines.insert(compact, line);
    }
}

/// Bytes read from a record file at a time.
const READ_BUFFER: usize = 256 << 10;

/// Parses one line as a record. A line passk wrote starts with its tag
/// (`{"type":"conversation",`) and is read straight into its record type: serde's tagged form
/// first buffers the whole line as generic content and then reads that again, which was a third
/// of reading a record. Any other line, or one the direct read refuses, is read in the tagged
/// form, so what is accepted and every error message are as they were.
fn parse_record(line: &[u8]) -> serde_json::Result<Record> {
    const CONVERSATION: &[u8] = br#"{"type":"conversation","#;
    const ROUTER: &[u8] = br#"{"type":"router","#;
    // Checked as UTF-8 once, the text's strings are not checked again one by one.
    if let Ok(text) = std::str::from_utf8(line) {
        if line.starts_with(CONVERSATION) {
            if let Ok(c) = serde_json::from_str::<ConversationRecord>(text) {
                return Ok(Record::Conversation(Box::new(c)));
            }
        } else if line.starts_with(ROUTER)
            && let Ok(r) = serde_json::from_str::<RouterRecord>(text)
        {
            return Ok(Record::Router(Box::new(r)));
        }
    }
    serde_json::from_slice::<Record>(line)
}

/// A record's trial key and outcome.
pub fn key_and_outcome(record: &Record) -> (TrialKey, Outcome) {
    match record {
        Record::Conversation(c) => (c.key(), c.outcome),
        Record::Router(r) => (r.key(), r.outcome),
    }
}

/// A record's schema version, grader digest and suite.
fn stamp(record: &Record) -> (u32, &str, &str) {
    match record {
        Record::Conversation(c) => (c.schema_version, &c.grader_digest, &c.suite),
        Record::Router(r) => (r.schema_version, &r.grader_digest, "router"),
    }
}

/// A trial key as people read it.
pub fn show_key(k: &TrialKey) -> String {
    let mode = match k.mode {
        Mode::Agent => "",
        Mode::Toolless => " (toolless)",
    };
    let docs = k
        .tool_docs
        .map(|v| format!(" docs {}", v.as_str()))
        .unwrap_or_default();
    let router = if k.router_in_front { " router" } else { "" };
    let prompt = k
        .prompt
        .map(|v| format!(" prompt {}", v.as_str()))
        .unwrap_or_default();
    format!(
        "{} {} {} trial {} cap {}{mode}{docs}{router}{prompt}",
        k.model, k.suite, k.task, k.trial, k.call_cap
    )
}

/// What the manifest declares; a part it does not declare (an imported run's settings, say) is not
/// checked.
struct Allowed {
    /// Each suite's grader digest; in runs written before per-suite graders, one for every suite
    /// (under the empty name).
    grader_digests: Option<BTreeMap<String, String>>,
    trials: Option<u64>,
    tasks: Option<BTreeMap<String, BTreeSet<String>>>,
    models: Option<Vec<String>>,
    suites: Option<Vec<String>>,
    call_caps: Option<Vec<u64>>,
    toolless: Option<bool>,
    tool_docs: Option<Levels<ToolVariant>>,
    router_in_front: Option<Levels<bool>>,
    /// Prompt variants (absent from the settings: the suite's own policy alone).
    prompt: Levels<PromptVariant>,
}

impl Allowed {
    fn of(m: &Manifest) -> Allowed {
        let settings = &m.settings;
        Allowed {
            grader_digests: if m.graders.is_empty() {
                (!m.grader_digest.is_empty())
                    .then(|| BTreeMap::from([(String::new(), m.grader_digest.clone())]))
            } else {
                Some(
                    m.graders
                        .iter()
                        .map(|(s, p)| (s.clone(), p.digest.clone()))
                        .collect(),
                )
            },
            trials: settings["trials"].as_u64(),
            tasks: (!m.suite_tasks.is_empty()).then(|| {
                m.suite_tasks
                    .iter()
                    .map(|(suite, tasks)| (suite.clone(), tasks.iter().cloned().collect()))
                    .collect()
            }),
            models: (!m.models.is_empty())
                .then(|| m.models.iter().map(|i| i.name.clone()).collect()),
            suites: (!m.suite_digests.is_empty())
                .then(|| m.suite_digests.keys().cloned().collect()),
            call_caps: settings["call_caps"]
                .as_array()
                .map(|a| a.iter().filter_map(serde_json::Value::as_u64).collect()),
            toolless: settings["toolless"].as_bool(),
            tool_docs: declared(settings, "tool_docs"),
            router_in_front: declared(settings, "router_in_front"),
            prompt: declared(settings, "prompt").unwrap_or(Levels::one(PromptVariant::POLICY)),
        }
    }

    /// A conversation record without a tool docs variant (written before factorial runs) gets the
    /// run's single variant.
    fn fill_in(&self, record: &mut Record) {
        if let Record::Conversation(c) = record
            && c.tool_docs.is_none()
        {
            c.tool_docs = self.tool_docs.as_ref().and_then(Levels::single);
        }
    }

    /// The record's format version and graders against the manifest's.
    fn check_stamp(&self, record: &Record) -> Result<(), String> {
        let (version, digest, suite) = stamp(record);
        if version != SCHEMA_VERSION {
            return Err(format!(
                "schema_version {version}: this passk reads record format version \
                 {SCHEMA_VERSION} only (written by another passk version?)"
            ));
        }
        if let Some(digests) = &self.grader_digests
            && let Some(ours) = digests.get(suite).or_else(|| digests.get(""))
            && digest != ours
        {
            return Err(format!(
                "grader digest {digest} is not the manifest's {ours} for suite {suite}: this \
                 verdict was produced by other graders than the run's"
            ));
        }
        Ok(())
    }

    fn check(&self, key: &TrialKey) -> Result<(), String> {
        let missing = |what: &str, value: &str| {
            Err(format!(
                "{what} {value} is not in this run's manifest: the record belongs to another run"
            ))
        };
        if let Some(models) = &self.models
            && !models.contains(&key.model)
        {
            return missing("model", &key.model);
        }
        if let Some(suites) = &self.suites
            && !suites.contains(&key.suite)
        {
            return missing("suite", &key.suite);
        }
        if let Some(tasks) = &self.tasks
            && !tasks.get(&key.suite).is_some_and(|t| t.contains(&key.task))
        {
            return missing(&format!("{} task", key.suite), &key.task);
        }
        if let Some(k) = self.trials
            && u64::from(key.trial) >= k
        {
            return Err(format!(
                "trial {} is past this run's k = {k} (trials 0 to {}): the record belongs to \
                 another run",
                key.trial,
                k.saturating_sub(1)
            ));
        }
        if key.suite != "router"
            && let Some(caps) = &self.call_caps
            && !caps.contains(&u64::from(key.call_cap))
        {
            return missing("call cap", &key.call_cap.to_string());
        }
        if key.mode == Mode::Toolless && self.toolless == Some(false) {
            return missing("mode", "toolless");
        }
        if let (Some(v), Some(levels)) = (key.tool_docs, &self.tool_docs)
            && !levels.0.contains(&v)
        {
            return missing("tool docs variant", v.as_str());
        }
        if key.suite != "router"
            && let Some(levels) = &self.router_in_front
            && !levels.0.contains(&key.router_in_front)
        {
            let v = if key.router_in_front { "on" } else { "off" };
            return missing("router in front", v);
        }
        let prompt = key.prompt.unwrap_or(PromptVariant::POLICY);
        if key.suite != "router" && !self.prompt.0.contains(&prompt) {
            return missing("prompt variant", prompt.as_str());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{call, conversation};
    use crate::runner::record::ModelInfo;

    fn line(model: &str, trial: u32, outcome: Outcome) -> String {
        let mut c = conversation(model, "L1", trial, true, vec![call(10, 1)]);
        c.outcome = outcome;
        serde_json::to_string(&Record::Conversation(Box::new(c))).expect("json") + "\n"
    }

    fn read(text: &str, manifest: &Manifest) -> Result<(Vec<usize>, FileRead), RecordFileError> {
        let mut lines = Vec::new();
        let read = read_from(Path::new("c.jsonl"), text.as_bytes(), manifest, |l| {
            lines.push(l.number)
        })?;
        Ok((lines, read))
    }

    #[test]
    fn a_record_reads_the_same_whether_its_tag_comes_first_or_not() {
        let written = line("m", 0, Outcome::Pass);
        let tagged: Record = serde_json::from_str(&written).expect("tagged");
        assert!(
            written.starts_with(r#"{"type":"conversation","#),
            "{written}"
        );
        assert_eq!(parse_record(written.as_bytes()).expect("direct"), tagged);
        // The tag elsewhere in the object: read in the tagged form, to the same record.
        let mut fields: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&written).expect("object");
        let tag = fields.shift_remove("type").expect("tag");
        fields.insert("type".into(), tag);
        let moved = serde_json::to_string(&fields).expect("json");
        assert!(!moved.starts_with(r#"{"type""#));
        assert_eq!(parse_record(moved.as_bytes()).expect("tagged form"), tagged);
        // A line the direct read refuses is refused with the tagged form's error.
        let bad = written.replace(r#""trial":0"#, r#""trial":"zero""#);
        assert_eq!(
            parse_record(bad.as_bytes()).expect_err("bad").to_string(),
            serde_json::from_str::<Record>(&bad)
                .expect_err("bad")
                .to_string()
        );
    }

    #[test]
    fn a_blank_line_is_refused() {
        let text = format!(
            "{}\n{}",
            line("m", 0, Outcome::Pass),
            line("m", 1, Outcome::Pass)
        );
        let err = read(&text, &Manifest::default()).expect_err("blank");
        assert!(
            err.to_string().starts_with("c.jsonl:2: blank line"),
            "{err}"
        );
    }

    #[test]
    fn a_trial_graded_twice_is_refused_naming_both_lines() {
        let l = line("m", 0, Outcome::Pass);
        let err = read(&format!("{l}{l}"), &Manifest::default()).expect_err("duplicate");
        assert!(
            err.to_string().starts_with("c.jsonl:2: ") && err.to_string().contains("line 1"),
            "{err}"
        );
        let failed_then_graded = format!(
            "{}{}{}",
            line("m", 0, Outcome::TransportFail),
            line("m", 0, Outcome::ProtocolFail),
            line("m", 0, Outcome::Pass)
        );
        let (lines, _) = read(&failed_then_graded, &Manifest::default()).expect("superseded");
        assert_eq!(lines, vec![1, 2, 3]);
    }

    #[test]
    fn a_trial_is_found_again_only_under_every_part_of_its_key() {
        let key = |model: &str, task: &str, trial| TrialKey {
            suite: "store".into(),
            model: model.into(),
            task: task.into(),
            trial,
            call_cap: 8,
            mode: Mode::Agent,
            tool_docs: None,
            router_in_front: false,
            prompt: None,
        };
        let mut seen = GradedOn::default();
        seen.insert(&key("m", "L1", 0), 3);
        seen.insert(&key("n", "L2", 1), 7);
        assert_eq!(seen.line_of(&key("m", "L1", 0)), Some(3));
        assert_eq!(seen.line_of(&key("n", "L2", 1)), Some(7));
        // Names seen, in another trial's places: a different trial.
        assert_eq!(seen.line_of(&key("m", "L2", 0)), None);
        assert_eq!(seen.line_of(&key("n", "L1", 1)), None);
        assert_eq!(seen.line_of(&key("m", "L1", 1)), None);
        assert_eq!(seen.line_of(&key("m", "L9", 0)), None, "a name never seen");
        let mut baseline = key("m", "L1", 0);
        baseline.mode = Mode::Toolless;
        assert_eq!(seen.line_of(&baseline), None);
    }

    #[test]
    fn a_record_of_a_model_the_manifest_lacks_is_refused() {
        let manifest = Manifest {
            models: vec![ModelInfo {
                name: "small".into(),
                ..ModelInfo::default()
            }],
            settings: serde_json::json!({"call_caps": [8], "toolless": false}),
            ..Manifest::default()
        };
        read(&line("small", 0, Outcome::Pass), &manifest).expect("declared");
        let err = read(&line("other", 0, Outcome::Pass), &manifest).expect_err("not declared");
        assert!(err.to_string().contains("model other is not in"), "{err}");
        let mut capped = conversation("small", "L1", 0, true, vec![]);
        capped.call_cap = 3;
        let text = serde_json::to_string(&Record::Conversation(Box::new(capped))).expect("json");
        let err = read(&(text + "\n"), &manifest).expect_err("cap not declared");
        assert!(err.to_string().contains("call cap 3"), "{err}");
    }

    #[test]
    fn an_old_record_reads_as_the_runs_variant_and_cells_must_be_declared() {
        let single = Manifest {
            settings: serde_json::json!({"tool_docs": "documented", "router_in_front": false}),
            ..Manifest::default()
        };
        let old = line("m", 0, Outcome::Pass);
        assert!(!old.contains("tool_docs"), "{old}");
        let mut got = Vec::new();
        read_from(Path::new("c.jsonl"), old.as_bytes(), &single, |l| {
            got.push(key_and_outcome(&l.record).0)
        })
        .expect("old record");
        assert_eq!(got[0].tool_docs, Some(ToolVariant::DOCUMENTED));
        let mut routed = conversation("m", "L1", 0, true, vec![]);
        routed.router_in_front = true;
        routed.tool_docs = Some(ToolVariant::BARE);
        let text = serde_json::to_string(&Record::Conversation(Box::new(routed))).expect("json");
        let text = text + "\n";
        let err = read(&text, &single).expect_err("bare not declared");
        assert!(err.to_string().contains("tool docs variant bare"), "{err}");
        let factorial = Manifest {
            settings: serde_json::json!({
                "tool_docs": ["bare", "documented"], "router_in_front": false
            }),
            ..Manifest::default()
        };
        let err = read(&text, &factorial).expect_err("router on not declared");
        assert!(err.to_string().contains("router in front on"), "{err}");
        let both = Manifest {
            settings: serde_json::json!({
                "tool_docs": ["bare", "documented"], "router_in_front": [false, true]
            }),
            ..Manifest::default()
        };
        read(&text, &both).expect("declared cell");
    }

    /// One conversation record, edited by `edit`, as a line.
    fn edited(edit: impl FnOnce(&mut crate::runner::record::ConversationRecord)) -> String {
        let mut c = conversation("m", "L1", 0, true, vec![call(10, 1)]);
        edit(&mut c);
        serde_json::to_string(&Record::Conversation(Box::new(c))).expect("json") + "\n"
    }

    #[test]
    fn another_grader_digest_or_schema_version_is_refused_naming_the_line() {
        let manifest = Manifest {
            grader_digest: "g".into(),
            ..Manifest::default()
        };
        let ok = line("m", 1, Outcome::Pass);
        let digest = edited(|c| c.grader_digest = "other".into());
        let err = read(&format!("{ok}{digest}"), &manifest).expect_err("digest");
        assert!(
            err.to_string()
                .starts_with("c.jsonl:2: grader digest other is not the manifest's g"),
            "{err}"
        );
        let version = edited(|c| c.schema_version = 2);
        let err = read(&format!("{ok}{version}"), &manifest).expect_err("version");
        assert!(
            err.to_string().starts_with("c.jsonl:2: schema_version 2:"),
            "{err}"
        );
    }

    #[test]
    fn a_task_the_suite_lacks_or_a_trial_past_k_is_refused() {
        let manifest = Manifest {
            suite_tasks: [("store".to_string(), vec!["L1".to_string()])].into(),
            settings: serde_json::json!({"trials": 2}),
            ..Manifest::default()
        };
        read(&line("m", 1, Outcome::Pass), &manifest).expect("declared");
        let task = edited(|c| c.task = "L99".into());
        let err = read(&task, &manifest).expect_err("task");
        assert!(
            err.to_string()
                .contains("c.jsonl:1: store task L99 is not in"),
            "{err}"
        );
        let err = read(&line("m", 2, Outcome::Pass), &manifest).expect_err("trial");
        assert!(
            err.to_string()
                .contains("c.jsonl:1: trial 2 is past this run's k = 2"),
            "{err}"
        );
    }

    #[test]
    fn only_the_last_line_may_be_torn() {
        let whole = line("m", 1, Outcome::Pass);
        let torn = format!(
            "{}{}",
            line("m", 0, Outcome::Pass),
            &whole[..whole.len() / 2]
        );
        let (lines, read_) = read(&torn, &Manifest::default()).expect("torn");
        assert_eq!((lines, read_.torn), (vec![1], true));
        assert_eq!(read_.good_len as usize, line("m", 0, Outcome::Pass).len());
        let middle = format!(
            "{}\n{}",
            &whole[..whole.len() / 2],
            line("m", 0, Outcome::Pass)
        );
        assert!(read(&middle, &Manifest::default()).is_err());
    }
}
