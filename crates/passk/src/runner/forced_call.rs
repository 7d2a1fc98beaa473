//! `--force-first-tool-call`: the first model call of each customer turn is constrained to one
//! call of a shown tool, by a JSON schema the server's structured output enforces (Ollama's
//! `format`, an OpenAI-compatible `response_format`). Tool choice "required" would say the same,
//! but llama.cpp's grammar for it still lets a model write prose first and stop at its output
//! cap, and Ollama has no tool choice at all; a schema leaves the model only the call's shape.
//!
//! The reply is JSON text, `{"name": ..., "arguments": {...}}`, read as any text call is; later
//! calls of the turn are free. Meant for models too small to call tools unasked, so that their
//! arguments, however wild, reach the tools.

use serde_json::{Map, Value, json};

/// The schema of one call of any of `tools` (`{"type": "function", "function": {..}}`): the tool's
/// name as a constant and its own parameters schema as the arguments, no other key; `None` when no
/// tool has a name.
pub fn one_tool_call(tools: &[Value]) -> Option<Value> {
    let calls: Vec<Value> = tools
        .iter()
        .filter_map(|t| {
            let f = t.get("function")?;
            let name = f.get("name")?.as_str()?;
            let mut arguments = f
                .get("parameters")
                .cloned()
                .unwrap_or_else(|| json!({"type": "object"}));
            if let Value::Object(a) = &mut arguments {
                a.entry("additionalProperties").or_insert(json!(false));
            }
            let mut properties = Map::new();
            properties.insert("name".into(), json!({ "const": name }));
            properties.insert("arguments".into(), arguments);
            Some(json!({
                "type": "object",
                "properties": properties,
                "required": ["name", "arguments"],
                "additionalProperties": false,
            }))
        })
        .collect();
    (!calls.is_empty()).then(|| json!({ "type": "object", "anyOf": calls }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::chat::Message;
    use crate::wire::tool_call::extract_all;

    fn tool(name: &str, parameters: Value) -> Value {
        json!({"type": "function", "function": {"name": name, "parameters": parameters}})
    }

    #[test]
    fn the_schema_offers_each_tool_with_its_own_parameters() {
        let order = json!({"type": "object", "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"]});
        let tools = [
            tool("get_order", order.clone()),
            json!({"type": "function", "function": {"name": "list_orders"}}),
            json!({"type": "function"}),
        ];
        let schema = one_tool_call(&tools).expect("schema");
        let calls = schema["anyOf"].as_array().expect("anyOf");
        assert_eq!(calls.len(), 2, "a tool without a name is left out");
        assert_eq!(calls[0]["properties"]["name"]["const"], "get_order");
        let args = &calls[0]["properties"]["arguments"];
        assert_eq!(args["properties"], order["properties"]);
        assert_eq!(args["additionalProperties"], false);
        assert_eq!(calls[1]["properties"]["arguments"]["type"], "object");
        let keys: Vec<&String> = calls[0]["properties"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["name", "arguments"], "the name is written first");
        assert_eq!(one_tool_call(&[]), None);
    }

    #[test]
    fn a_reply_in_the_schema_is_read_as_a_call() {
        let reply =
            Message::assistant(r#"{"name": "get_order", "arguments": {"order_id": "5105"}}"#);
        let names = ["get_order".to_string()];
        let got = extract_all(&reply, &names);
        assert_eq!(got.calls.len(), 1);
        assert_eq!(got.calls[0].name, "get_order");
        assert_eq!(got.calls[0].arguments, json!({"order_id": "5105"}));
    }
}
