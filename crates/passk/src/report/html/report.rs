//! `report.html`: the run's caption, the summary it opens on, `report.md` (its tables, rendered by
//! the page), the charts' SVG, the failure modes the filter offers, and the grid's trials, written
//! to disk as it is made.

use super::transcripts::{self, Sidecar, TRANSCRIPTS_DIR};
use super::trials::{TrialData, TrialIndex};
use super::{REPORT_HTML, write_page};
use crate::report::charts::Chart;
use crate::report::document::Report;
use crate::report::{CHARTS_DIR, ReportError};
use crate::trace::FailureMode;
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The JSON the page reads: the report's parts, the grid's index and, when the lines are in
/// transcript files, where.
#[derive(Serialize)]
struct PageData<'a> {
    #[serde(flatten)]
    head: Map<String, Value>,
    #[serde(flatten)]
    index: &'a TrialIndex,
    #[serde(skip_serializing_if = "Option::is_none")]
    sidecar: Option<&'a Sidecar>,
}

/// `report.html` of a report, written into `out_dir` under temporary names (`markdown` is
/// `report.md`, `charts` the charts it links, `trials` every trial of the run): the page, streamed
/// to disk as it is made, and its transcript files when its lines take more than `inline_max`
/// bytes ([`transcripts`]). [`PreparedPage::commit`] puts them in place.
pub fn write_report_page(
    out_dir: &Path,
    r: &Report,
    (markdown, charts): (&str, &[Chart]),
    mut trials: TrialData,
    inline_max: u64,
) -> Result<PreparedPage, ReportError> {
    let title = format!("passk report: {}", r.manifest.run_id);
    let sidecar = transcripts::sidecar(&trials, inline_max);
    let prepared = PreparedPage::new(out_dir);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ReportError::Io { path, source }
    };
    if let Some(sidecar) = &sidecar {
        std::fs::create_dir_all(&prepared.tmp_dir).map_err(io(&prepared.tmp_dir))?;
        transcripts::write_chunks(&prepared.tmp_dir, sidecar, &mut trials)?;
    }
    let data = PageData {
        head: head(r, &title, markdown, charts),
        index: &trials.index,
        sidecar: sidecar.as_ref(),
    };
    let file = std::fs::File::create(&prepared.tmp_html).map_err(io(&prepared.tmp_html))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
    let inline = sidecar.is_none();
    let (lines, spilled) = (&trials.lines, &mut trials.spilled);
    let details = &mut |w: &mut dyn Write| {
        if !inline {
            return Ok(());
        }
        let mut buf = Vec::new();
        for at in lines {
            spilled.read(*at, &mut buf)?;
            w.write_all(&buf)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    };
    write_page(&mut out, &title, &data, details)
        .and_then(|()| out.flush())
        .map_err(io(&prepared.tmp_html))?;
    Ok(prepared)
}

/// The page's own parts: caption, summary, markdown, charts and the failure modes.
fn head(r: &Report, title: &str, markdown: &str, charts: &[Chart]) -> Map<String, Value> {
    let mut data = Map::new();
    data.insert("kind".into(), json!("report"));
    data.insert("title".into(), json!(title));
    data.insert("caption".into(), json!(caption(r)));
    data.insert("markdown".into(), json!(markdown));
    data.insert(
        "overview".into(),
        json!(crate::report::overview::overview(r)),
    );
    let charts: Vec<Value> = charts
        .iter()
        .map(|c| json!([format!("{CHARTS_DIR}/{}", c.file), c.svg]))
        .collect();
    data.insert("charts".into(), json!(charts));
    data.insert("failure_modes".into(), failure_modes());
    data
}

/// `report.html` and its transcript folder written under temporary names beside their places;
/// removed unless committed.
#[derive(Debug)]
pub struct PreparedPage {
    tmp_html: PathBuf,
    tmp_dir: PathBuf,
    html: PathBuf,
    dir: PathBuf,
    committed: bool,
}

impl PreparedPage {
    fn new(out_dir: &Path) -> PreparedPage {
        PreparedPage {
            tmp_html: out_dir.join(crate::report::temp_name(REPORT_HTML)),
            tmp_dir: out_dir.join(crate::report::temp_name(TRANSCRIPTS_DIR)),
            html: out_dir.join(REPORT_HTML),
            dir: out_dir.join(TRANSCRIPTS_DIR),
            committed: false,
        }
    }

    /// Moves the page and its transcript folder into place, replacing (or removing) those an
    /// earlier report wrote.
    pub fn commit(mut self) -> Result<(), ReportError> {
        let io = |path: &Path, source| ReportError::Io {
            path: path.to_path_buf(),
            source,
        };
        if self.dir.exists() {
            std::fs::remove_dir_all(&self.dir).map_err(|e| io(&self.dir, e))?;
        }
        if self.tmp_dir.exists() {
            std::fs::rename(&self.tmp_dir, &self.dir).map_err(|e| io(&self.dir, e))?;
        }
        std::fs::rename(&self.tmp_html, &self.html).map_err(|e| io(&self.html, e))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for PreparedPage {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp_html);
            let _ = std::fs::remove_dir_all(&self.tmp_dir);
        }
    }
}

/// Every failure mode as `[key, description]`, in report order.
pub fn failure_modes() -> Value {
    FailureMode::ALL
        .iter()
        .map(|m| json!([m, m.describe()]))
        .collect()
}

/// One line under the title: run id, backend, suites, k and tool docs, as the manifest records them.
fn caption(r: &Report) -> String {
    let s = &r.manifest.settings;
    let mut parts = vec![
        format!("run {}", r.manifest.run_id),
        format!("backend {}", r.manifest.backend),
    ];
    if let Some(suites) = s.get("suites").and_then(Value::as_array) {
        let names: Vec<&str> = suites.iter().filter_map(Value::as_str).collect();
        parts.push(format!("suites {}", names.join(", ")));
    }
    if let Some(k) = s.get("trials").and_then(Value::as_u64) {
        parts.push(format!("k = {k}"));
    }
    match crate::runner::levels::declared::<crate::domain::ToolVariant>(s, "tool_docs") {
        Some(docs) => {
            let names: Vec<&str> = docs.0.iter().map(|v| v.as_str()).collect();
            parts.push(format!("tool docs {}", names.join(" × ")));
        }
        None => parts.push("tool docs not recorded".into()),
    }
    if crate::report::document::first_tool_call_forced(r) {
        parts.push("first tool call forced".into());
    }
    parts.push(crate::report::number::counted(
        r.conversations,
        "conversation",
    ));
    parts.join(" · ")
}
