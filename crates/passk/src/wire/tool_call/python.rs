//! Calls written as Python: llama 3.2's `[get_order(order_id="5105")]` (alone or after prose) and a
//! call inside a ```python (or ```py, ```tool_code) fence. Keyword arguments with Python literals
//! become a JSON object; a call to a known tool that does not parse is malformed.

use super::finds::Finds;
use super::scan::Budget;
use super::search::{self, Needle};
use super::{Found, malformed_named, text_call};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;

/// Fence openings whose body is read as Python calls.
const FENCES: [&str; 3] = ["```python", "```py", "```tool_code"];

/// Deepest nesting of literals read.
const MAX_DEPTH: usize = 32;

/// Pythonic calls in `text`: bracketed lists and fenced calls.
pub(super) fn find(text: &str, known: &[String], budget: &mut Budget) -> Finds {
    let mut found = Finds::default();
    let mut next = 0;
    for at in search::byte_positions(text, b'[') {
        if at < next || budget.is_spent() {
            continue;
        }
        let Some(first) = ident_then_paren(&text[at + 1..]) else {
            continue;
        };
        let mut p = Parser::new(text, at + 1);
        let parsed = p.call_list();
        budget.spend(p.pos - at);
        let alone = text.trim() == text[at..p.pos].trim();
        match parsed {
            Ok(calls) if alone || calls.iter().any(|(n, _)| is_known(known, n)) => {
                found.extend(to_found(at, p.pos, calls));
                next = p.pos;
            }
            // One malformed pythonic call per reply is enough to tell the model.
            Err(why) if is_known(known, first) && !found.any_malformed() => {
                found.push(malformed_at(at, text, first, &why));
                next = p.pos.max(at + 1);
            }
            _ => {}
        }
    }
    // The bracketed lists, in order of position: a fence holding one is not read again.
    let listed = found.starts();
    for fence in FENCES {
        for at in search::positions(text, fence) {
            let body = at + fence.len();
            if !text[body..].starts_with(['\n', '\r', ' ']) || budget.is_spent() {
                continue;
            }
            static FENCE_CLOSE: Needle = Needle::new("```");
            let end = FENCE_CLOSE
                .find(&text[body..])
                .map_or(text.len(), |e| body + e);
            let Some(first) = ident_then_paren(text[body..end].trim_start()) else {
                continue;
            };
            let holds_list = listed
                .get(listed.partition_point(|&p| p < at))
                .is_some_and(|&p| p < end);
            if !is_known(known, first) || holds_list {
                continue;
            }
            let mut p = Parser::new(&text[..end], body);
            let parsed = p.statements();
            budget.spend(p.pos - body);
            match parsed {
                Ok(calls) => found.extend(to_found(at, end, calls)),
                Err(why) => found.push(malformed_at(at, text, first, &why)),
            }
        }
    }
    found
}

fn is_known(known: &[String], name: &str) -> bool {
    known.iter().any(|k| k == name)
}

fn to_found(start: usize, end: usize, calls: Vec<(String, Value)>) -> Vec<Found> {
    calls
        .into_iter()
        .map(|(name, arguments)| text_call(start, end, name, arguments))
        .collect()
}

fn malformed_at(at: usize, text: &str, name: &str, why: &str) -> Found {
    Found {
        start: at,
        end: at + 1,
        call: malformed_named(name, &text[at..], why),
    }
}

/// The identifier at the start of `s` when an opening parenthesis follows it.
fn ident_then_paren(s: &str) -> Option<&str> {
    let s = s.trim_start_matches([' ', '\t']);
    let len = s
        .bytes()
        .take(65)
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let name = &s[..len];
    let starts_well = name.bytes().next().is_some_and(|b| !b.is_ascii_digit());
    (starts_well && len <= 64 && s[len..].starts_with('(')).then_some(name)
}

/// Inserts `key`; the same key again with a different value makes the call ambiguous.
pub(super) fn insert_once(map: &mut Map<String, Value>, key: String, value: Value) -> Parsed<()> {
    if map.get(&key).is_some_and(|earlier| *earlier != value) {
        return Err(format!("the argument `{key}` is given twice with different values").into());
    }
    map.insert(key, value);
    Ok(())
}

/// The call at the start of `text` (`name(key=value, ..)`; with `colon_keys`, Gemma's
/// `name(key: value)` and `name{key: value}` too), and the byte where it ends.
pub(super) fn call_at(text: &str, colon_keys: bool) -> (Parsed<(String, Value)>, usize) {
    let mut p = Parser::new(text, 0);
    p.colon_keys = colon_keys;
    let call = p.call();
    (call, p.pos)
}

/// The calls one after the other in `text` (separated by newlines or `;`).
pub(super) fn statements_in(text: &str) -> Parsed<Vec<(String, Value)>> {
    Parser::new(text, 0).statements()
}

/// A small recursive-descent reader of Python calls and literals.
struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    /// Whether `key: value` (and a `{..}` argument list) is accepted as well as `key=value`.
    colon_keys: bool,
}

/// A parse, or why it failed: most reasons are fixed words, so a failed attempt (the scanner tries
/// many) allocates nothing for its reason.
pub(super) type Parsed<T> = Result<T, Cow<'static, str>>;

impl<'a> Parser<'a> {
    fn new(text: &'a str, pos: usize) -> Parser<'a> {
        Parser {
            s: text.as_bytes(),
            pos,
            colon_keys: false,
        }
    }

    fn ws(&mut self) {
        while self.s.get(self.pos).is_some_and(u8::is_ascii_whitespace) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        self.ws();
        let hit = self.s.get(self.pos) == Some(&b);
        self.pos += usize::from(hit);
        hit
    }

    fn expect(&mut self, b: u8) -> Parsed<()> {
        if self.eat(b) {
            Ok(())
        } else {
            Err(match b {
                b',' => "expected `,`".into(),
                b')' => "expected `)`".into(),
                b']' => "expected `]`".into(),
                b'}' => "expected `}`".into(),
                b':' => "expected `:`".into(),
                _ => format!("expected `{}`", b as char).into(),
            })
        }
    }

    /// `name(...), name(...)]` (the `[` already read).
    fn call_list(&mut self) -> Parsed<Vec<(String, Value)>> {
        let mut calls = vec![self.call()?];
        while self.eat(b',') {
            calls.push(self.call()?);
        }
        self.expect(b']')?;
        Ok(calls)
    }

    /// Calls one after the other (a fence's body), separated by newlines or `;`.
    fn statements(&mut self) -> Parsed<Vec<(String, Value)>> {
        let mut calls = Vec::new();
        loop {
            self.ws();
            if self.pos >= self.s.len() {
                return Ok(calls);
            }
            calls.push(self.call()?);
            self.eat(b';');
        }
    }

    /// The identifier here: ASCII letters, digits and `_`, borrowed from the text.
    fn ident(&mut self) -> Parsed<&'a str> {
        self.ws();
        let start = self.pos;
        while self
            .s
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            self.pos += 1;
        }
        if start == self.pos || self.s[start].is_ascii_digit() {
            return Err("expected a name".into());
        }
        // ASCII only, so always UTF-8.
        Ok(std::str::from_utf8(&self.s[start..self.pos]).unwrap_or_default())
    }

    /// `name(key=value, ...)` (or, with `colon_keys`, `name(key: value)` / `name{key: value}`).
    fn call(&mut self) -> Parsed<(String, Value)> {
        let name = self.ident()?;
        let close = if self.eat(b'(') {
            b')'
        } else if self.colon_keys && self.eat(b'{') {
            b'}'
        } else {
            return Err("expected `(`".into());
        };
        // The pairs are gathered first and the object built once the call closes, so an attempt
        // that fails on the way (most do, in a long reply) hashes nothing.
        let mut pairs = Vec::new();
        if !self.eat(close) {
            loop {
                self.ws();
                let key: Cow<'a, str> = match self.s.get(self.pos) {
                    Some(b'"' | b'\'') => self.string()?.into(),
                    _ => self.ident()?.into(),
                };
                if !(self.eat(b'=') || self.colon_keys && self.eat(b':')) {
                    return Err("positional arguments: write key=value".into());
                }
                pairs.push((key, self.literal(0)?));
                if self.eat(close) {
                    break;
                }
                self.expect(b',')?;
                if self.eat(close) {
                    break;
                }
            }
        }
        let mut args = Map::with_capacity(pairs.len());
        for (key, value) in pairs {
            insert_once(&mut args, key.into_owned(), value)?;
        }
        Ok((name.to_string(), Value::Object(args)))
    }

    fn literal(&mut self, depth: usize) -> Parsed<Value> {
        if depth > MAX_DEPTH {
            return Err("arguments nested too deeply".into());
        }
        self.ws();
        match self.s.get(self.pos) {
            Some(b'"' | b'\'') => self.string().map(Value::String),
            Some(b'[') => self.sequence(b']', depth),
            Some(b'(') => self.sequence(b')', depth),
            Some(b'{') => self.dict(depth),
            Some(b) if b.is_ascii_digit() || *b == b'-' || *b == b'+' || *b == b'.' => {
                self.number()
            }
            Some(_) => match self.ident()? {
                "True" | "true" => Ok(Value::Bool(true)),
                "False" | "false" => Ok(Value::Bool(false)),
                "None" | "null" => Ok(Value::Null),
                other => Err(format!("`{other}` is not a literal").into()),
            },
            None => Err("the call is cut short".into()),
        }
    }

    fn string(&mut self) -> Parsed<String> {
        let quote = self.s[self.pos];
        self.pos += 1;
        // Most strings hold no escape: taken whole, without a byte-by-byte copy.
        let rest = &self.s[self.pos..];
        if let Some(n) = memchr::memchr2(quote, b'\\', rest)
            && rest[n] == quote
        {
            self.pos += n + 1;
            // Cut at ASCII bytes of a `str`, so always UTF-8: the lossy reading only guards.
            return Ok(match std::str::from_utf8(&rest[..n]) {
                Ok(s) => s.to_string(),
                Err(_) => String::from_utf8_lossy(&rest[..n]).into_owned(),
            });
        }
        let mut out = Vec::new();
        while let Some(&b) = self.s.get(self.pos) {
            self.pos += 1;
            match b {
                b'\\' => {
                    let e = self.s.get(self.pos).copied().ok_or("unterminated string")?;
                    self.pos += 1;
                    out.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        other => other,
                    });
                }
                _ if b == quote => return Ok(String::from_utf8_lossy(&out).into_owned()),
                _ => out.push(b),
            }
        }
        Err("unterminated string".into())
    }

    fn number(&mut self) -> Parsed<Value> {
        let start = self.pos;
        while self
            .s
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_alphanumeric() || b"+-._".contains(b))
        {
            self.pos += 1;
        }
        let raw = String::from_utf8_lossy(&self.s[start..self.pos]).replace('_', "");
        if let Ok(i) = raw.parse::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        raw.parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("`{raw}` is not a number").into())
    }

    fn sequence(&mut self, close: u8, depth: usize) -> Parsed<Value> {
        self.pos += 1;
        let mut items = Vec::new();
        while !self.eat(close) {
            items.push(self.literal(depth + 1)?);
            if !self.eat(b',') {
                self.expect(close)?;
                break;
            }
        }
        Ok(Value::Array(items))
    }

    fn dict(&mut self, depth: usize) -> Parsed<Value> {
        self.pos += 1;
        let mut map = Map::new();
        while !self.eat(b'}') {
            self.ws();
            let key = match self.literal(depth + 1)? {
                Value::String(s) => s,
                other => other.to_string(),
            };
            self.expect(b':')?;
            let value = self.literal(depth + 1)?;
            insert_once(&mut map, key, value)?;
            if !self.eat(b',') {
                self.expect(b'}')?;
                break;
            }
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::CallFormat;
    use serde_json::json;

    fn known() -> Vec<String> {
        vec!["get_order".into(), "list_orders".into()]
    }

    fn calls(text: &str) -> Vec<(String, Value, CallFormat)> {
        find(text, &known(), &mut Budget::for_len(text.len()))
            .into_kept_calls()
            .into_iter()
            .map(|c| (c.name, c.arguments, c.format))
            .collect()
    }

    #[test]
    fn bracketed_lists_alone_or_after_prose() {
        let alone = calls(r#"[get_order(order_id="5105")]"#);
        assert_eq!(
            alone,
            vec![(
                "get_order".into(),
                json!({"order_id": "5105"}),
                CallFormat::Text
            )]
        );
        let two = calls(
            "Let me look. [get_order(order_id='5105'), list_orders(customer_id=\"C1\", limit=3, open=True)]",
        );
        assert_eq!(two.len(), 2);
        assert_eq!(
            two[1].1,
            json!({"customer_id": "C1", "limit": 3, "open": true})
        );
        // An unknown name counts only when the list is the whole reply.
        assert_eq!(calls("[lookup(q=1)]")[0].0, "lookup");
        assert!(calls("See [lookup(q=1)] in the manual.").is_empty());
        assert!(calls("Prices [1, 2] and [see note(3)]").is_empty());
    }

    #[test]
    fn fenced_calls_and_malformed_ones() {
        let fenced = calls("```python\nget_order(order_id=\"5105\")\n```");
        assert_eq!(fenced[0].1, json!({"order_id": "5105"}));
        let broken = calls("[get_order(\"5105\")]");
        assert_eq!(broken[0].2, CallFormat::Malformed);
        assert_eq!(broken[0].0, "__malformed__:get_order");
        let cut = calls("```py\nget_order(order_id=\"51\n```");
        assert_eq!(cut[0].2, CallFormat::Malformed);
        assert!(calls("```python\nprint(\"hi\")\n```").is_empty());
    }
}
