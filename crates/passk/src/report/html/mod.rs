//! `report.html` and `compare.html`: one self-contained page each (inline CSS, JS and SVG; no
//! network, no server) that opens from disk. The page's layout and behaviour live beside this file
//! in `page.html`, `page.css` and `page.js`, included at build time; Rust only fills in the data.
//!
//! The data travels in two inline script elements the browser does not execute: `data` (JSON: the
//! run, the report's markdown and charts, the grid's index) and `details` (one JSON line per
//! trial: transcript, calls, tool events, verdict). The script parses the index at load and a
//! trial's line only when the trial is opened, so a large run's page opens as fast as its index
//! parses; the grid is drawn a page of tasks at a time. Above a size, `report.html` leaves
//! `details` empty and its lines go to script files beside it ([`transcripts`]), loaded when a
//! trial is opened. See `docs/reference/report.md`.

pub mod compare;
pub mod detail;
pub mod report;
pub mod selftest;
pub mod source;
pub mod transcripts;
pub mod trials;

use serde_json::Value;
use std::io::Write;

/// The page `passk report` writes inside the report directory.
pub const REPORT_HTML: &str = "report.html";
/// The page `passk compare` writes beside `compare.md`.
pub const COMPARE_HTML: &str = "compare.html";

const TEMPLATE: &str = include_str!("page.html");
const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// The page: `title` (plain text), `data` (the JSON the script reads) and the trial lines (each
/// already safe inside a script element, see [`detail::script_safe`]).
pub fn page(title: &str, data: &Value, lines: &[String]) -> String {
    let mut out = Vec::new();
    let details = &mut |w: &mut dyn Write| {
        lines.iter().try_for_each(|line| {
            w.write_all(line.as_bytes())?;
            w.write_all(b"\n")
        })
    };
    // Writing into memory fails only if `data` cannot be serialized, which a `Value` always can.
    let written = write_page(&mut out, title, data, details);
    debug_assert!(written.is_ok(), "{written:?}");
    String::from_utf8(out).unwrap_or_default()
}

/// Writes the page to `out` as it is made: `title` (plain text), `data` (serialized as JSON, made
/// safe inside a script element as it goes), then whatever `details` writes (lines already safe).
/// Nothing of the page is held beyond the writer's buffer.
pub fn write_page(
    out: &mut dyn Write,
    title: &str,
    data: &impl serde::Serialize,
    details: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut rest = TEMPLATE;
    for marker in [
        "{{TITLE}}",
        "{{STYLE}}",
        "{{DATA}}",
        "{{DETAILS}}",
        "{{SCRIPT}}",
    ] {
        let Some((before, after)) = rest.split_once(marker) else {
            debug_assert!(false, "the template lacks {marker}");
            continue;
        };
        out.write_all(before.as_bytes())?;
        match marker {
            "{{TITLE}}" => out.write_all(escape_html(title).as_bytes())?,
            "{{STYLE}}" => out.write_all(STYLE.as_bytes())?,
            "{{DATA}}" => serde_json::to_writer(ScriptSafe(&mut *out), data)?,
            "{{DETAILS}}" => details(out)?,
            _ => out.write_all(SCRIPT.as_bytes())?,
        }
        rest = after;
    }
    out.write_all(rest.as_bytes())
}

/// A writer that writes JSON text with every `<` as `\u003c`, as [`detail::script_safe`] does.
struct ScriptSafe<W>(W);

impl<W: Write> Write for ScriptSafe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for part in buf.split_inclusive(|b| *b == b'<') {
            match part.split_last() {
                Some((b'<', head)) => {
                    self.0.write_all(head)?;
                    self.0.write_all(b"\\u003c")?;
                }
                _ => self.0.write_all(part)?,
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Text with `&`, `<`, `>` and `"` escaped for HTML.
pub fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use detail::script_safe;
    use serde_json::json;

    #[test]
    fn inserted_text_is_not_searched_for_markers() {
        let lines = [r#"{"content":"{{SCRIPT}} </script>"}"#.to_string()];
        let html = page(
            "a <b>",
            &json!({"x": "{{DETAILS}}"}),
            &[script_safe(&lines[0])],
        );
        assert_eq!(html.matches("<title>a &lt;b&gt;</title>").count(), 1);
        assert!(html.contains(r#"{"x":"{{DETAILS}}"}"#), "data kept as is");
        assert!(!html.contains("{{SCRIPT}} </script>"));
        assert_eq!(
            html.matches("</script>").count(),
            3,
            "data, details, script"
        );
    }
}
