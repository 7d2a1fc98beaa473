//! Markdown tables for `report.md` and `compare.md`: a GitHub-flavoured table builder whose
//! source is padded so that it reads as a table too, with cells made safe for a table.

/// Horizontal alignment of a table column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Align {
    /// Left-aligned (text).
    #[default]
    Left,
    /// Right-aligned (numbers).
    Right,
}

/// A GitHub-flavoured Markdown table, padded so that the source reads as a table too.
///
/// ```
/// use passk::report::table::{Align, MarkdownTable};
/// let mut t = MarkdownTable::new(["model", "success"]);
/// t.align(1, Align::Right);
/// t.row(["qwen2.5-coder:3b", "40.8% (49/120)"]);
/// assert!(t.render().contains("| ---------------- | -------------: |"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct MarkdownTable {
    header: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl MarkdownTable {
    /// A table with these column headers, every column left-aligned.
    pub fn new<I, S>(header: I) -> MarkdownTable
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let header: Vec<String> = header.into_iter().map(Into::into).collect();
        let align = vec![Align::Left; header.len()];
        MarkdownTable {
            header,
            align,
            rows: Vec::new(),
        }
    }

    /// Sets the alignment of column `column` (0-based); out-of-range columns are ignored.
    pub fn align(&mut self, column: usize, align: Align) -> &mut MarkdownTable {
        if let Some(a) = self.align.get_mut(column) {
            *a = align;
        }
        self
    }

    /// Right-aligns every column but the first (the usual shape: a label, then numbers).
    pub fn numeric_after_first(&mut self) -> &mut MarkdownTable {
        for a in self.align.iter_mut().skip(1) {
            *a = Align::Right;
        }
        self
    }

    /// Appends a row; missing cells are left empty and extra cells are dropped.
    pub fn row<I, S>(&mut self, cells: I) -> &mut MarkdownTable
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut row: Vec<String> = cells.into_iter().map(Into::into).collect();
        row.resize(self.header.len(), String::new());
        self.rows.push(row);
        self
    }

    /// Number of body rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the table has no body rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as Markdown, one line per row, ending in a newline.
    pub fn render(&self) -> String {
        if self.header.is_empty() {
            return String::new();
        }
        let header: Vec<String> = self.header.iter().map(|c| escape_cell(c)).collect();
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|c| escape_cell(c)).collect())
            .collect();
        let mut widths: Vec<usize> = header.iter().map(|c| width(c).max(3)).collect();
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(width(cell));
            }
        }
        let mut out = String::new();
        push_line(&mut out, &header, &widths, &self.align);
        let rule: Vec<String> = widths
            .iter()
            .zip(&self.align)
            .map(|(w, a)| match a {
                Align::Left => "-".repeat(*w),
                Align::Right => format!("{}:", "-".repeat(w - 1)),
            })
            .collect();
        out.push_str("| ");
        out.push_str(&rule.join(" | "));
        out.push_str(" |\n");
        for row in &rows {
            push_line(&mut out, row, &widths, &self.align);
        }
        out
    }
}

fn push_line(out: &mut String, cells: &[String], widths: &[usize], align: &[Align]) {
    let padded: Vec<String> = cells
        .iter()
        .zip(widths.iter().zip(align))
        .map(|(c, (w, a))| {
            let pad = " ".repeat(w.saturating_sub(width(c)));
            match a {
                Align::Left => format!("{c}{pad}"),
                Align::Right => format!("{pad}{c}"),
            }
        })
        .collect();
    out.push_str("| ");
    out.push_str(&padded.join(" | "));
    out.push_str(" |\n");
}

/// Display width used for padding (characters, not bytes).
fn width(s: &str) -> usize {
    s.chars().count()
}

/// Makes text safe inside a table cell: `|` is escaped and line breaks become spaces.
pub fn escape_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '|' => out.push_str("\\|"),
            '\r' => {}
            '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_pads_and_escapes() {
        let mut t = MarkdownTable::new(["model", "n"]);
        t.numeric_after_first();
        t.row(["a|b", "7"]);
        t.row(["long model name", "1,234"]);
        let expected = "\
| model           |     n |
| --------------- | ----: |
| a\\|b            |     7 |
| long model name | 1,234 |
";
        assert_eq!(t.render(), expected);
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn table_rows_are_resized_to_the_header() {
        let mut t = MarkdownTable::new(["a", "b"]);
        t.row(["1"]).row(["1", "2", "3"]);
        let text = t.render();
        assert!(text.contains("| 1   |     |\n"), "{text}");
        assert!(!text.contains('3'), "{text}");
        assert_eq!(MarkdownTable::new(Vec::<String>::new()).render(), "");
    }

    #[test]
    fn cell_escaping_removes_line_breaks() {
        assert_eq!(escape_cell("x|y\r\nz"), "x\\|y z");
    }
}
