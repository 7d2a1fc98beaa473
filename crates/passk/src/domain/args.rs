//! The argument rules every conversation suite's tool calls go through (docs/reference/suites.md, "The
//! argument rules"): arguments not an object, a required argument missing or empty, numbers turned
//! into strings, any other non-string rejected, extra keys ignored. A tool then receives only
//! checked string arguments.

use serde_json::Value;
use std::collections::BTreeMap;

/// Checked arguments of one call: every declared parameter, trimmed and non-empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args(BTreeMap<String, String>);

impl Args {
    /// The value of a parameter ("" when it was not declared).
    pub fn get(&self, name: &str) -> &str {
        self.0.get(name).map(String::as_str).unwrap_or("")
    }
}

/// Applies the argument rules for `params` to `args`.
pub fn check_args(params: &[&str], args: &Value) -> Result<Args, String> {
    let Value::Object(map) = args else {
        return Err("arguments must be a JSON object of named parameters".to_string());
    };
    let mut out = BTreeMap::new();
    for &name in params {
        let text = match map.get(name) {
            None | Some(Value::Null) => return Err(format!("missing required argument '{name}'")),
            Some(Value::String(s)) => s.trim().to_string(),
            Some(Value::Number(n)) => number_text(n),
            Some(_) => return Err(format!("argument '{name}' must be a string")),
        };
        if text.is_empty() {
            return Err(format!("argument '{name}' is empty"));
        }
        out.insert(name.to_string(), text);
    }
    // Extra keys are ignored by the tools, but kept as text so a table that forgets to require a
    // parameter (the defect tests) behaves like a tool that swallows a missing field.
    for (k, v) in map {
        if !out.contains_key(k) {
            let text = match v {
                Value::String(s) => s.trim().to_string(),
                Value::Number(n) => number_text(n),
                _ => continue,
            };
            out.insert(k.clone(), text);
        }
    }
    Ok(Args(out))
}

/// A number as the string a model meant: `5105` and `5105.0` both give "5105".
fn number_text(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        _ => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn required_strings_are_trimmed_and_numbers_read_as_text() {
        let a = check_args(&["id", "n"], &json!({"id": " 5105 ", "n": 7.0, "extra": 3})).unwrap();
        assert_eq!(
            (a.get("id"), a.get("n"), a.get("extra")),
            ("5105", "7", "3")
        );
        assert_eq!(a.get("undeclared"), "");
    }

    #[test]
    fn each_rule_names_the_argument_at_fault() {
        let err = |v: Value| check_args(&["id"], &v).unwrap_err();
        assert_eq!(
            err(json!([1])),
            "arguments must be a JSON object of named parameters"
        );
        assert_eq!(err(json!({})), "missing required argument 'id'");
        assert_eq!(err(json!({"id": null})), "missing required argument 'id'");
        assert_eq!(err(json!({"id": "  "})), "argument 'id' is empty");
        assert_eq!(err(json!({"id": true})), "argument 'id' must be a string");
    }
}
