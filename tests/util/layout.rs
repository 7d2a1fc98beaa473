//! The data files rewritten with the same content in another layout, as a researcher's script
//! would write them, so tests can show that nothing depends on how a file is formatted.

use serde::Serialize;
use serde_json::Value;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use std::io::{self, Write};
use std::path::Path;

/// A way of writing JSON.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Layout {
    /// Python's `json.dump(obj, f)`: one line, `", "` and `": "` separators, non-ASCII escaped.
    PythonDefault,
    /// Python's `json.dump(obj, f, indent=4)`: four-space indent.
    Indent4,
}

/// Every layout [`redump_tree`] can write.
pub(crate) const LAYOUTS: [Layout; 2] = [Layout::PythonDefault, Layout::Indent4];

impl Layout {
    /// `value` written in this layout.
    pub(crate) fn dump(self, value: &Value) -> String {
        let mut out = Vec::new();
        match self {
            Layout::PythonDefault => {
                let mut ser = serde_json::Serializer::with_formatter(&mut out, PythonFormatter);
                value.serialize(&mut ser).expect("serialize");
            }
            Layout::Indent4 => {
                let mut ser = serde_json::Serializer::with_formatter(
                    &mut out,
                    PrettyFormatter::with_indent(b"    "),
                );
                value.serialize(&mut ser).expect("serialize");
            }
        }
        String::from_utf8(out).expect("utf-8")
    }
}

/// Rewrites every `.json` file under `dir` (recursively) in `layout`, content unchanged.
pub(crate) fn redump_tree(dir: &Path, layout: Layout) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            redump_tree(&path, layout);
        } else if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).expect("read");
            let value: Value = serde_json::from_str(&text).expect("json");
            std::fs::write(&path, layout.dump(&value)).expect("write");
        }
    }
}

/// The separators and escapes of Python's `json.dump` defaults.
struct PythonFormatter;

impl Formatter for PythonFormatter {
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, s: &str) -> io::Result<()> {
        for c in s.chars() {
            if c.is_ascii() {
                CompactFormatter.write_string_fragment(w, c.encode_utf8(&mut [0; 4]))?;
            } else {
                for unit in c.encode_utf16(&mut [0; 2]) {
                    write!(w, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }
}
