//! The report's usual table: a label column, then one column per model, flagged when the model
//! ran on the CPU.

use crate::analysis::{ModelSummary, Summary};
use crate::report::table::MarkdownTable;

/// A column header for a model, flagged when it ran on the CPU, wholly or in part.
pub(super) fn model_header(summary: &Summary, model: &str) -> String {
    if summary.on_cpu.iter().any(|m| m == model) {
        format!("{model} (on CPU, no VRAM)")
    } else if summary.partly_on_cpu.iter().any(|m| m == model) {
        format!("{model} (partly on CPU)")
    } else {
        model.to_string()
    }
}

/// A table with a label column and one column per model; each row formats every model.
pub(super) struct ModelTable<'s> {
    pub(super) table: MarkdownTable,
    pub(super) models: Vec<(&'s str, &'s ModelSummary)>,
}

impl<'s> ModelTable<'s> {
    pub(super) fn new(
        summary: &Summary,
        label: &str,
        models: &[(&'s str, &'s ModelSummary)],
    ) -> Self {
        let mut header = vec![label.to_string()];
        header.extend(models.iter().map(|(m, _)| model_header(summary, m)));
        let mut table = MarkdownTable::new(header);
        table.numeric_after_first();
        ModelTable {
            table,
            models: models.to_vec(),
        }
    }

    pub(super) fn row(
        &mut self,
        label: impl Into<String>,
        f: impl Fn(&ModelSummary) -> String,
    ) -> &mut Self {
        let mut cells = vec![label.into()];
        cells.extend(self.models.iter().map(|(_, s)| f(s)));
        self.table.row(cells);
        self
    }

    pub(super) fn render(&self) -> String {
        self.table.render()
    }
}
