//! Reading suite files: JSON with errors that carry the file, line and column, and SHA-256
//! digests of the bytes that were read.

use crate::domain::SuiteError;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A file's text and its digest.
#[derive(Debug, Clone)]
pub struct FileText {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its contents.
    pub text: String,
    /// SHA-256 of its bytes.
    pub digest: String,
}

/// Reads a UTF-8 file.
pub fn read_text(path: &Path) -> Result<FileText, SuiteError> {
    let bytes = std::fs::read(path).map_err(|source| SuiteError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let digest = sha256_hex(&bytes);
    let text = String::from_utf8(bytes).map_err(|e| SuiteError::Invalid {
        path: path.to_path_buf(),
        key: "(file)".into(),
        message: format!("not UTF-8: {e}"),
    })?;
    Ok(FileText {
        path: path.to_path_buf(),
        text,
        digest,
    })
}

/// Reads and deserializes a JSON file; a syntax or type error names the line and column.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<(T, FileText), SuiteError> {
    let file = read_text(path)?;
    let value = serde_json::from_str(&file.text).map_err(|e| parse_error(path, &file.text, &e))?;
    Ok((value, file))
}

/// Turns a serde_json error in `text` into [`SuiteError::Parse`]. A value that parsed but was
/// refused (a bad date, a wrong type) is named where it ends: serde_json may report the error past
/// the whitespace that follows it, which would name another line in another layout.
pub fn parse_error(path: &Path, text: &str, e: &serde_json::Error) -> SuiteError {
    let full = e.to_string();
    let message = match full.rsplit_once(" at line ") {
        Some((m, _)) => m.to_string(),
        None => full,
    };
    let (mut line, mut column) = (e.line(), e.column());
    if e.classify() == serde_json::error::Category::Data {
        (line, column) = end_of_value(text, line, column);
    }
    SuiteError::Parse {
        path: path.to_path_buf(),
        line,
        column,
        message,
    }
}

/// The position (1-based line, column in characters) reached from `line`:`column` by stepping
/// back over whitespace.
fn end_of_value(text: &str, line: usize, column: usize) -> (usize, usize) {
    let Some(line_start) = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .reduce(|a, b| a + b)
        .or((line <= 1).then_some(0))
    else {
        return (line, column);
    };
    let at = text[line_start..]
        .char_indices()
        .nth(column)
        .map_or(text.len(), |(i, _)| line_start + i);
    let end = text[..at].trim_end().len();
    let before = &text[..end];
    let start = before.rfind('\n').map_or(0, |n| n + 1);
    (
        before.matches('\n').count() + 1,
        before[start..].chars().count(),
    )
}

/// Shorthand for an [`SuiteError::Invalid`].
pub fn invalid(path: &Path, key: impl Into<String>, message: impl Into<String>) -> SuiteError {
    SuiteError::Invalid {
        path: path.to_path_buf(),
        key: key.into(),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_name_line_and_column() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("x.json");
        std::fs::write(&p, "{\n  \"a\": 1,\n  \"b\": ]\n}").expect("write");
        let err = read_json::<serde_json::Value>(&p).expect_err("bad json");
        let text = err.to_string();
        assert!(text.contains("x.json:3:8"), "{text}");
    }

    #[test]
    fn a_refused_value_is_named_on_its_own_line_in_any_layout() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(rename_all = "snake_case")]
        #[allow(dead_code)]
        enum Fact {
            Date(crate::domain::date::Date),
        }
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("x.json");
        for (text, at) in [
            ("[{\"date\": \"2026-10-32\"}]", "1:22"),
            ("[\n  {\n    \"date\": \"2026-10-32\"\n  }\n]", "3:24"),
            ("[\n  {\"date\": \"2026-10-32\"  \n\n  }]", "2:23"),
        ] {
            std::fs::write(&p, text).expect("write");
            let err = read_json::<Vec<Fact>>(&p)
                .expect_err("bad date")
                .to_string();
            assert!(
                err.contains(&format!("x.json:{at}: invalid date")),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn digest_is_sha256() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
