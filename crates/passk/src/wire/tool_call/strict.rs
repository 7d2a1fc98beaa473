//! JSON read as a careful reader reads it: a key given twice with different values makes the object
//! ambiguous (serde_json keeps the last silently); the same key twice with the same value is
//! harmless.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Value};
use std::fmt;

/// Marker that starts the error text of an ambiguous object.
const AMBIGUOUS: &str = "ambiguous:";

/// How a balanced `{...}` reads.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Read {
    /// Valid JSON with no conflicting keys.
    Clear(Value),
    /// Valid JSON once conflicts are resolved the lax way (last wins), with why it is ambiguous.
    Ambiguous(Value, String),
}

/// The object in `text` (JSON), `None` when it is not valid JSON.
pub(super) fn read(text: &str) -> Option<Read> {
    match serde_json::from_str::<Strict>(text) {
        Ok(Strict(v)) => Some(Read::Clear(v)),
        Err(e) => {
            let message = e.to_string();
            let why = message.strip_prefix(AMBIGUOUS)?;
            let why = why.split(" at line ").next().unwrap_or(why).to_string();
            serde_json::from_str(text)
                .ok()
                .map(|v| Read::Ambiguous(v, why))
        }
    }
}

/// A JSON value whose objects refuse conflicting duplicate keys.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Strict, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some((key, Strict(value))) = map.next_entry::<String, Strict>()? {
            // One look-up per key: the entry either takes the value or holds the earlier one.
            match out.entry(key) {
                Entry::Occupied(earlier) if *earlier.get() != value => {
                    return Err(de::Error::custom(format!(
                        "{AMBIGUOUS}the key \"{}\" is given twice with different values",
                        earlier.key()
                    )));
                }
                Entry::Occupied(_) => {}
                Entry::Vacant(slot) => {
                    slot.insert(value);
                }
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn conflicting_duplicates_are_ambiguous_and_identical_ones_harmless() {
        assert_eq!(
            read(r#"{"a": 1, "b": [1.5, null, true], "c": {"d": "x"}}"#),
            Some(Read::Clear(
                json!({"a": 1, "b": [1.5, null, true], "c": {"d": "x"}})
            ))
        );
        assert_eq!(
            read(r#"{"order_id": "5111", "order_id": "5111"}"#),
            Some(Read::Clear(json!({"order_id": "5111"})))
        );
        let Some(Read::Ambiguous(v, why)) =
            read(r#"{"arguments": {"order_id": "5111", "x": 1, "order_id": "5114"}}"#)
        else {
            panic!("a conflict reads as ambiguous");
        };
        assert_eq!(v["arguments"]["order_id"], "5114");
        assert_eq!(
            why,
            "the key \"order_id\" is given twice with different values"
        );
        assert_eq!(read("{\"a\": }"), None);
        // Big integers keep their value as serde_json reads them.
        assert_eq!(
            read(r#"{"n": 18446744073709551615}"#),
            Some(Read::Clear(json!({"n": 18446744073709551615u64})))
        );
    }
}
