//! The data of `report.html`: the run's caption, the summary it opens on, `report.md` (its tables,
//! rendered by the page), the charts' SVG, the failure modes the filter offers, and the grid's
//! trials.

use super::trials::TrialData;
use super::{REPORT_HTML, page};
use crate::report::CHARTS_DIR;
use crate::report::charts::Chart;
use crate::report::document::Report;
use crate::trace::FailureMode;
use serde_json::{Map, Value, json};

/// `report.html` of a report: `markdown` is `report.md`, `charts` the charts it links,
/// `trials` every trial of the run.
pub fn report_page(r: &Report, markdown: &str, charts: &[Chart], trials: TrialData) -> String {
    let title = format!("passk report: {}", r.manifest.run_id);
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
    if let Value::Object(index) = trials.index {
        data.extend(index);
    }
    debug_assert_eq!(REPORT_HTML, "report.html");
    page(&title, &Value::Object(data), &trials.lines)
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
    match crate::runner::levels::declared::<crate::suite::ToolVariant>(s, "tool_docs") {
        Some(docs) => {
            let names: Vec<&str> = docs.0.iter().map(|v| v.as_str()).collect();
            parts.push(format!("tool docs {}", names.join(" × ")));
        }
        None => parts.push("tool docs not recorded".into()),
    }
    parts.push(format!("{} conversations", r.conversations.len()));
    parts.join(" · ")
}
