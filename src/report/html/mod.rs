//! `report.html` and `compare.html`: one self-contained page each (inline CSS, JS and SVG; no
//! network, no server) that opens from disk. The page's layout and behaviour live beside this file
//! in `page.html`, `page.css` and `page.js`, included at build time; Rust only fills in the data.
//!
//! The data travels in two inline script elements the browser does not execute: `data` (JSON: the
//! run, the report's markdown and charts, the grid's index) and `details` (one JSON line per
//! trial: transcript, calls, tool events, verdict). The script parses the index at load and a
//! trial's line only when the trial is opened, so a large run's page opens as fast as its index
//! parses; the grid is drawn a page of tasks at a time. See `docs/report.md`.

pub mod compare;
pub mod detail;
pub mod report;
pub mod selftest;
pub mod source;
pub mod trials;

use detail::script_safe;
use serde_json::Value;

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
    let data = script_safe(&data.to_string());
    let title = escape_html(title);
    let size = TEMPLATE.len() + STYLE.len() + SCRIPT.len() + data.len() + title.len();
    let mut out = String::with_capacity(size + lines.iter().map(|l| l.len() + 1).sum::<usize>());
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
        out.push_str(before);
        match marker {
            "{{TITLE}}" => out.push_str(&title),
            "{{STYLE}}" => out.push_str(STYLE),
            "{{DATA}}" => out.push_str(&data),
            "{{DETAILS}}" => {
                for line in lines {
                    out.push_str(line);
                    out.push('\n');
                }
            }
            _ => out.push_str(SCRIPT),
        }
        rest = after;
    }
    out.push_str(rest);
    out
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
