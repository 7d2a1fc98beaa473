//! What the model is shown of a server's tools: `documented` is the server's own `tools/list`
//! (names, descriptions, input schemas), `bare` the same with every parameter description
//! removed, and each `tasks/<suite>/tools/<name>.json` (the shared [`ToolDocs`] format) another
//! variant's descriptions over the same schemas. A variant file must document exactly the
//! server's tools and, per tool, exactly its parameters in the schema's order; it may change
//! descriptions and examples and the order of the tools, never a name or a type.

use crate::domain::load::{invalid, read_json, sha256_hex};
use crate::domain::presentation::docs_files;
use crate::domain::tool_docs::{ParamDoc, ToolDoc, ToolDocs};
use crate::domain::{SuiteError, ToolVariant};
use serde_json::{Map, Value, json};
use std::path::Path;

/// One tool as the server lists it.
#[derive(Debug, Clone)]
pub struct ServerTool {
    /// Name.
    pub name: String,
    /// The server's description.
    pub description: String,
    /// Its `inputSchema`.
    pub schema: Value,
}

impl ServerTool {
    /// The parameter names, in the schema's order.
    fn params(&self) -> Vec<&str> {
        self.properties()
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    fn properties(&self) -> Option<&Map<String, Value>> {
        self.schema.get("properties").and_then(Value::as_object)
    }
}

/// The tools of a `tools/list` answer; `Err` says what is wrong with one.
pub fn server_tools(listed: &[Value]) -> Result<Vec<ServerTool>, String> {
    listed
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let name = t.get("name").and_then(Value::as_str);
            let schema = t.get("inputSchema").filter(|s| s.is_object());
            match (name, schema) {
                (Some(name), Some(schema)) => Ok(ServerTool {
                    name: name.to_string(),
                    description: t
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    schema: schema.clone(),
                }),
                _ => Err(format!(
                    "tools/list item {i} lacks a name or an inputSchema"
                )),
            }
        })
        .collect()
}

/// One variant: its name, documentation, tools in Ollama's shape and SHA-256.
pub type Variant = (ToolVariant, ToolDocs, Vec<Value>, String);

/// Every variant: `bare`, `documented` (both from the server unless a file of that name
/// replaces them), then each file's, as (variant, documentation, Ollama tools, SHA-256).
pub fn variants(dir: &Path, tools: &[ServerTool]) -> Result<Vec<Variant>, SuiteError> {
    let served = ToolDocs {
        tools: tools.iter().map(server_doc).collect(),
    };
    let mut bare = served.clone();
    for p in bare.tools.iter_mut().flat_map(|t| &mut t.parameters) {
        p.description = None;
    }
    let mut out = Vec::new();
    for (variant, docs) in [(ToolVariant::BARE, bare), (ToolVariant::DOCUMENTED, served)] {
        let shown = shown(&docs, tools);
        let digest = sha256_hex(Value::Array(shown.clone()).to_string().as_bytes());
        out.push((variant, docs, shown, digest));
    }
    for (variant, path) in docs_files(dir)? {
        let (docs, file): (ToolDocs, _) = read_json(&path)?;
        check(&path, &docs, tools)?;
        let shown = shown(&docs, tools);
        out.retain(|(v, ..)| *v != variant);
        out.push((variant, docs, shown, file.digest));
    }
    Ok(out)
}

/// The server's own documentation of a tool.
fn server_doc(t: &ServerTool) -> ToolDoc {
    let parameters = t
        .properties()
        .map(|props| {
            props
                .iter()
                .map(|(name, p)| ParamDoc {
                    name: name.clone(),
                    description: p
                        .get("description")
                        .and_then(Value::as_str)
                        .map(String::from),
                    example: None,
                })
                .collect()
        })
        .unwrap_or_default();
    ToolDoc {
        name: t.name.clone(),
        description: t.description.clone(),
        parameters,
    }
}

/// `docs` over the server's schemas, in Ollama's `tools` shape: each parameter's description
/// replaced (or removed), everything else in the schema kept.
fn shown(docs: &ToolDocs, tools: &[ServerTool]) -> Vec<Value> {
    docs.tools
        .iter()
        .filter_map(|d| {
            let tool = tools.iter().find(|t| t.name == d.name)?;
            let mut schema = tool.schema.clone();
            if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
                for p in &d.parameters {
                    if let Some(Value::Object(prop)) = props.get_mut(&p.name) {
                        match &p.description {
                            Some(text) => prop.insert("description".into(), text.clone().into()),
                            None => prop.remove("description"),
                        };
                    }
                }
            }
            Some(json!({"type": "function", "function": {
                "name": d.name, "description": d.description, "parameters": schema}}))
        })
        .collect()
}

/// Checks a variant file against the server's tools, naming the file and field at fault.
fn check(path: &Path, docs: &ToolDocs, tools: &[ServerTool]) -> Result<(), SuiteError> {
    for (i, d) in docs.tools.iter().enumerate() {
        let Some(tool) = tools.iter().find(|t| t.name == d.name) else {
            return Err(invalid(
                path,
                format!("tools[{i}].name"),
                format!("unknown tool '{}'", d.name),
            ));
        };
        let got: Vec<&str> = d.parameters.iter().map(|p| p.name.as_str()).collect();
        if got != tool.params() {
            return Err(invalid(
                path,
                format!("tools[{i}].parameters"),
                format!(
                    "{} takes ({}), the file documents ({})",
                    d.name,
                    tool.params().join(", "),
                    got.join(", ")
                ),
            ));
        }
    }
    let mut listed: Vec<&str> = docs.tools.iter().map(|t| t.name.as_str()).collect();
    let mut served: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    listed.sort_unstable();
    served.sort_unstable();
    if listed != served {
        return Err(invalid(
            path,
            "tools",
            format!("must document exactly: {}", served.join(", ")),
        ));
    }
    Ok(())
}
