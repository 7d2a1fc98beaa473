//! `summary.json`: any serializable report value as pretty JSON with a final newline.
//!
//! Field order follows the struct declarations (and `BTreeMap` keys for maps), so the same value
//! gives the same bytes. Non-finite floats come out as `null`, as serde_json writes them.

use super::{Exporter, ReportError};
use serde::Serialize;

/// Pretty JSON exporter for any `Serialize` report.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonExporter;

impl<R: Serialize + ?Sized> Exporter<R> for JsonExporter {
    fn render(&self, report: &R) -> Result<Vec<u8>, ReportError> {
        let mut bytes = serde_json::to_vec_pretty(report)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    struct Small {
        name: &'static str,
        rate: f64,
        by_model: BTreeMap<&'static str, u32>,
    }

    #[test]
    fn pretty_json_is_deterministic_and_ends_in_newline() {
        let mut by_model = BTreeMap::new();
        by_model.insert("b", 2);
        by_model.insert("a", 1);
        let s = Small {
            name: "x",
            rate: f64::NAN,
            by_model,
        };
        let a = JsonExporter.render(&s).expect("render");
        let b = JsonExporter.render(&s).expect("render");
        assert_eq!(a, b);
        let text = String::from_utf8(a).expect("utf-8");
        assert!(text.ends_with("}\n"));
        assert!(text.contains("\"rate\": null"));
        assert!(text.find("\"a\"") < text.find("\"b\""));
        let back: serde_json::Value = serde_json::from_str(&text).expect("parses");
        assert_eq!(back["by_model"]["b"], 2);
    }
}
