//! Typed tables in, files out: the exporters behind `passk report` and `passk compare`.
//!
//! Each output format is an [`Exporter`]: it receives a finished report value and only formats it into
//! bytes; nothing is computed in an exporter. Where the bytes go is decided by an [`ExportManager`],
//! which maps each export to a [`Destination`] (a file, or standard output for `-`), streams each
//! file's into a temporary sibling, then puts them all in place. The formats live beside this file: [`document`] (`report.md` and the terminal
//! table), [`comparison`] (`compare.md` and its terminal table), [`charts`] (the report's charts,
//! drawn with [`svg`]), [`table`] (the Markdown table builder), [`number`] (the number formats), [`csv`]
//! (`conversations.csv`), [`json`] (`summary.json`) and [`html`] (`report.html` and
//! `compare.html`, which carry every transcript). Output is deterministic: the same input
//! gives byte-identical files.

pub mod charts;
pub mod comparison;
pub mod csv;
pub mod document;
pub mod error;
pub mod factorial;
pub mod folder;
pub mod html;
pub mod json;
pub mod number;
pub mod overview;
pub mod placement;
pub mod power;
pub mod provenance;
pub mod regrade;
pub mod stopping;
pub mod summarized;
pub mod svg;
pub mod table;
pub mod verdict;

pub use error::ReportError;

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Directory inside a run directory that `passk report` writes to.
pub const REPORT_DIR: &str = "report";
/// The human-readable report, inside [`REPORT_DIR`].
pub const REPORT_MD: &str = "report.md";
/// Every reported number as JSON, inside [`REPORT_DIR`].
pub const SUMMARY_JSON: &str = "summary.json";
/// One row per conversation, inside [`REPORT_DIR`].
pub const CONVERSATIONS_CSV: &str = "conversations.csv";
/// Directory of the SVG charts, inside [`REPORT_DIR`] (report.md links `charts/<name>.svg`).
pub const CHARTS_DIR: &str = "charts";
/// The comparison of two runs, written by `passk compare`.
pub const COMPARE_MD: &str = "compare.md";
/// The comparison as JSON (`analysis::RunComparison`), written by `passk compare`.
pub const COMPARE_JSON: &str = "compare.json";

/// File names of the charts inside [`CHARTS_DIR`], one constant per chart (`docs/reference/report.md`).
pub mod chart_files {
    /// pass^k for k = 1..n, one line per model.
    pub const PASS_K: &str = "pass_k.svg";
    /// Success rate by task category, one bar per model, with CIs.
    pub const SUCCESS_BY_CATEGORY: &str = "success_by_category.svg";
    /// Tokens per successful task per model; the break-even ratio and its CI in the subtitle.
    pub const TOKENS_PER_SUCCESS: &str = "tokens_per_success.svg";
    /// Latency per conversation, one box per model.
    pub const LATENCY: &str = "latency_per_conversation.svg";
    /// Mean input tokens of the j-th call, one line per model.
    pub const CONTEXT_GROWTH: &str = "context_growth.svg";
    /// The four-state table, one panel per model.
    pub const FOUR_STATE: &str = "four_state.svg";
    /// Failure modes of failed conversations, one stacked bar per model.
    pub const FAILURE_BUCKETS: &str = "failure_buckets.svg";
    /// GPU utilization over the run, with the model loaded shaded.
    pub const GPU_UTILIZATION: &str = "gpu_utilization.svg";
    /// Tokens per successful task against success rate, one point per model, the
    /// cheapest-per-success frontier drawn through the models on it.
    pub const FRONTIER_TOKENS: &str = "frontier_tokens.svg";
    /// The same with time per successful task.
    pub const FRONTIER_TIME: &str = "frontier_time.svg";
    /// Every chart file, in report order.
    pub const ALL: [&str; 10] = [
        PASS_K,
        SUCCESS_BY_CATEGORY,
        TOKENS_PER_SUCCESS,
        LATENCY,
        CONTEXT_GROWTH,
        FOUR_STATE,
        FAILURE_BUCKETS,
        GPU_UTILIZATION,
        FRONTIER_TOKENS,
        FRONTIER_TIME,
    ];
}

/// One output format: formats a finished report of type `R` into bytes.
///
/// `R` is the value the format reads (the analysis summary, or a slice of records for the CSV). Any
/// closure `Fn(&R) -> Result<Vec<u8>, ReportError>` is an exporter too, which is how a chart is added:
/// `manager.add(dest, |s: &Summary| Ok(svg::line_chart(&chart_of(s)).into_bytes()))`.
pub trait Exporter<R: ?Sized> {
    /// The bytes of the export.
    fn render(&self, report: &R) -> Result<Vec<u8>, ReportError>;

    /// Writes the export into `out` as it is made. By default the rendered bytes; a format whose
    /// output grows with the records (the CSV) writes row by row instead, so that its file is never
    /// held in memory whole.
    /// An I/O error comes back as [`ReportError::Io`] with an empty path, which the caller that
    /// knows the destination fills in.
    fn write_to(&self, report: &R, out: &mut dyn Write) -> Result<(), ReportError> {
        out.write_all(&self.render(report)?)
            .map_err(|source| ReportError::Io {
                path: PathBuf::new(),
                source,
            })
    }
}

impl<R: ?Sized, F> Exporter<R> for F
where
    F: Fn(&R) -> Result<Vec<u8>, ReportError>,
{
    fn render(&self, report: &R) -> Result<Vec<u8>, ReportError> {
        self(report)
    }
}

/// Where an export is written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Destination {
    /// Standard output (the path `-`).
    Stdout,
    /// A file, replaced if it exists.
    File(PathBuf),
}

impl Destination {
    /// `-` means standard output; anything else is a file path.
    pub fn from_path(path: &Path) -> Destination {
        if path.as_os_str() == "-" {
            Destination::Stdout
        } else {
            Destination::File(path.to_path_buf())
        }
    }
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Destination::Stdout => f.write_str("-"),
            Destination::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// A named export on its way to a destination.
struct Export<'a, R: ?Sized> {
    name: String,
    exporter: Box<dyn Exporter<R> + 'a>,
    destination: Destination,
}

/// Maps each export to its destination, in the order added; at most one may go to standard output.
///
/// [`ExportManager::write`] streams every file export into a temporary sibling and renames them into
/// place only when all were made, so that a failing format leaves no half-set of files; missing
/// parent directories are created.
pub struct ExportManager<'a, R: ?Sized> {
    exports: Vec<Export<'a, R>>,
}

impl<R: ?Sized> Default for ExportManager<'_, R> {
    fn default() -> Self {
        ExportManager {
            exports: Vec::new(),
        }
    }
}

impl<'a, R: ?Sized> ExportManager<'a, R> {
    /// An empty manager.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an export named `name` (used in errors, e.g. `--export-csv`) going to `destination`.
    /// Refuses a second export to standard output.
    pub fn add(
        &mut self,
        name: impl Into<String>,
        destination: Destination,
        exporter: impl Exporter<R> + 'a,
    ) -> Result<&mut Self, ReportError> {
        let name = name.into();
        if destination == Destination::Stdout
            && let Some(first) = self
                .exports
                .iter()
                .find(|e| e.destination == Destination::Stdout)
        {
            return Err(ReportError::StdoutTwice {
                first: first.name.clone(),
                second: name,
            });
        }
        self.exports.push(Export {
            name,
            exporter: Box::new(exporter),
            destination,
        });
        Ok(self)
    }

    /// Adds an export for an optional `--export-*` flag: nothing when `path` is `None`, standard
    /// output when it is `-`.
    pub fn add_optional(
        &mut self,
        name: impl Into<String>,
        path: Option<&Path>,
        exporter: impl Exporter<R> + 'a,
    ) -> Result<&mut Self, ReportError> {
        match path {
            Some(p) => self.add(name, Destination::from_path(p), exporter),
            None => Ok(self),
        }
    }

    /// Number of exports added.
    pub fn len(&self) -> usize {
        self.exports.len()
    }

    /// Whether no export was added.
    pub fn is_empty(&self) -> bool {
        self.exports.is_empty()
    }

    /// The destinations, in the order added.
    pub fn destinations(&self) -> impl Iterator<Item = &Destination> {
        self.exports.iter().map(|e| &e.destination)
    }

    /// Writes every export of `report`: each file's is streamed into a temporary sibling, and
    /// standard output's rendered in memory; only when every one succeeded are the files renamed
    /// into place and standard output written (`stdout` for `-`). A failure removes the temporary
    /// files and leaves the destinations as they were. Returns the destinations written, in the
    /// order added.
    pub fn write(
        &self,
        report: &R,
        stdout: &mut dyn Write,
    ) -> Result<Vec<Destination>, ReportError> {
        let mut staged = Staged::default();
        for export in &self.exports {
            match &export.destination {
                Destination::Stdout => staged.stdout = Some(export.exporter.render(report)?),
                Destination::File(path) => {
                    staged.stream(path, |out| export.exporter.write_to(report, out))?
                }
            }
        }
        if let Some(bytes) = staged.stdout.take() {
            stdout
                .write_all(&bytes)
                .and_then(|()| stdout.flush())
                .map_err(ReportError::Stdout)?;
        }
        staged.commit()?;
        Ok(self.exports.iter().map(|e| e.destination.clone()).collect())
    }
}

/// The exports of one [`ExportManager::write`] made but not yet in place: the temporary file of
/// each destination file, and standard output's bytes. Dropped uncommitted, it removes the files.
#[derive(Default)]
struct Staged {
    files: Vec<(PathBuf, PathBuf)>,
    stdout: Option<Vec<u8>>,
}

impl Staged {
    /// Streams one export into a temporary sibling of `path` (parents created).
    fn stream(
        &mut self,
        path: &Path,
        write: impl FnOnce(&mut dyn Write) -> Result<(), ReportError>,
    ) -> Result<(), ReportError> {
        let io = |source| ReportError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let tmp = path.with_file_name(temp_name(name.as_deref().unwrap_or("export")));
        let file = std::fs::File::create(&tmp).map_err(io)?;
        self.files.push((tmp, path.to_path_buf()));
        let mut out = std::io::BufWriter::new(file);
        let named = |e| match e {
            ReportError::Io { path: p, source } if p.as_os_str().is_empty() => io(source),
            e => e,
        };
        write(&mut out).map_err(named)?;
        out.flush().map_err(io)
    }

    /// Renames every temporary file into place, in the order made; on a failure the rest are
    /// removed when `self` drops.
    fn commit(mut self) -> Result<(), ReportError> {
        while !self.files.is_empty() {
            let (tmp, path) = self.files.remove(0);
            if let Err(source) = std::fs::rename(&tmp, &path) {
                let _ = std::fs::remove_file(&tmp);
                return Err(ReportError::Io { path, source });
            }
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        for (tmp, _) in &self.files {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// The name a report file has while it is written: hidden, and this process's own, so that two
/// reports made at once in one folder never write into each other's half-made files (the last
/// rename wins, whole).
pub fn temp_name(name: &str) -> String {
    format!(".{name}.{}.tmp", std::process::id())
}

/// Writes `bytes` to `path` through a temporary sibling renamed into place; creates missing parents.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let io = |source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let Some(file_name) = file_name else {
        return std::fs::write(path, bytes).map_err(io);
    };
    let tmp = path.with_file_name(temp_name(&file_name));
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Upper;

    impl Exporter<str> for Upper {
        fn render(&self, report: &str) -> Result<Vec<u8>, ReportError> {
            Ok(report.to_uppercase().into_bytes())
        }
    }

    #[test]
    fn dash_means_stdout() {
        assert_eq!(Destination::from_path(Path::new("-")), Destination::Stdout);
        assert_eq!(
            Destination::from_path(Path::new("a.md")),
            Destination::File("a.md".into())
        );
        assert_eq!(Destination::from_path(Path::new("-")).to_string(), "-");
    }

    #[test]
    fn writes_files_and_stdout_in_order() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("sub/dir/out.txt");
        let mut m: ExportManager<str> = ExportManager::new();
        m.add("upper", Destination::File(file.clone()), Upper)
            .expect("add");
        m.add_optional("echo", Some(Path::new("-")), |s: &str| {
            Ok(s.as_bytes().to_vec())
        })
        .expect("add");
        m.add_optional("none", None, Upper).expect("add");
        assert_eq!(m.len(), 2);
        let mut out = Vec::new();
        let written = m.write("abc", &mut out).expect("write");
        assert_eq!(
            written,
            vec![Destination::File(file.clone()), Destination::Stdout]
        );
        assert_eq!(out, b"abc");
        assert_eq!(std::fs::read(&file).expect("read"), b"ABC");
        // no temporary file left behind
        let names: Vec<_> = std::fs::read_dir(file.parent().expect("parent"))
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.txt")]);
    }

    #[test]
    fn refuses_two_stdout_exports() {
        let mut m: ExportManager<str> = ExportManager::new();
        m.add("--export-markdown", Destination::Stdout, Upper)
            .expect("first");
        let err = m
            .add("--export-json", Destination::Stdout, Upper)
            .err()
            .expect("second refused");
        assert!(err.to_string().contains("--export-markdown"), "{err}");
        assert!(err.to_string().contains("--export-json"), "{err}");
    }

    #[test]
    fn a_failing_export_writes_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("first.txt");
        let mut m: ExportManager<str> = ExportManager::new();
        m.add("ok", Destination::File(file.clone()), Upper)
            .expect("add");
        m.add("bad", Destination::Stdout, |_: &str| {
            Err(ReportError::Stdout(std::io::Error::other("boom")))
        })
        .expect("add");
        let mut out = Vec::new();
        assert!(m.write("x", &mut out).is_err());
        assert!(!file.exists());
        assert!(out.is_empty());
    }

    /// Writes two lines to its file as it goes, then fails when told to; `render` is never used
    /// for a file.
    struct Rows {
        fail: bool,
    }

    impl Exporter<str> for Rows {
        fn render(&self, _: &str) -> Result<Vec<u8>, ReportError> {
            Ok(b"rendered\n".to_vec())
        }

        fn write_to(&self, report: &str, out: &mut dyn Write) -> Result<(), ReportError> {
            let io = |source| ReportError::Io {
                path: PathBuf::new(),
                source,
            };
            writeln!(out, "{report} 1").map_err(io)?;
            writeln!(out, "{report} 2").map_err(io)?;
            if self.fail {
                return Err(io(std::io::Error::other("disk full")));
            }
            Ok(())
        }
    }

    /// The files in `dir`, by name.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn files_are_streamed_and_standard_output_rendered() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("rows.csv");
        let mut m: ExportManager<str> = ExportManager::new();
        m.add(
            "rows",
            Destination::File(file.clone()),
            Rows { fail: false },
        )
        .expect("add");
        m.add("--export-csv", Destination::Stdout, Rows { fail: false })
            .expect("add");
        let mut out = Vec::new();
        m.write("x", &mut out).expect("write");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "x 1\nx 2\n");
        assert_eq!(out, b"rendered\n");
        assert_eq!(names(dir.path()), ["rows.csv"], "no temporary file is left");
    }

    #[test]
    fn a_stream_failing_midway_leaves_the_old_files_and_no_temporary_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (first, second) = (dir.path().join("first.txt"), dir.path().join("rows.csv"));
        std::fs::write(&second, b"old\n").expect("write");
        let mut m: ExportManager<str> = ExportManager::new();
        m.add("first", Destination::File(first.clone()), Upper)
            .expect("add");
        m.add(
            "rows",
            Destination::File(second.clone()),
            Rows { fail: true },
        )
        .expect("add");
        let err = m.write("x", &mut Vec::new()).expect_err("must fail");
        assert!(
            err.to_string().contains("rows.csv"),
            "the error names its file: {err}"
        );
        assert!(!first.exists());
        assert_eq!(std::fs::read(&second).expect("read"), b"old\n");
        assert_eq!(names(dir.path()), ["rows.csv"]);
    }

    #[test]
    fn unwritable_path_names_the_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let blocker = dir.path().join("blocker");
        std::fs::write(&blocker, b"file, not a directory").expect("write");
        let target = blocker.join("out.txt");
        let err = write_file(&target, b"x").expect_err("must fail");
        assert!(err.to_string().contains("out.txt"), "{err}");
    }
}
