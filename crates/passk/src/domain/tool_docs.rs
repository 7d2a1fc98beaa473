//! The tool documentation file format every conversation suite uses
//! (`tasks/<suite>/tools/<variant>.json`): tools, their descriptions and their string parameters,
//! with the optional example a parameter's description quotes; and its conversion to Ollama's
//! `tools` JSON.

use serde::{Deserialize, Serialize};

/// Documentation of one tool parameter in a variant file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamDoc {
    /// Parameter name (must match the tool's code).
    pub name: String,
    /// What the model is told about it (absent: no description).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// An example value quoted in the description; never a value of the suite's data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
}

/// Documentation of one tool in a variant file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolDoc {
    /// Tool name (must be one of the suite's tools).
    pub name: String,
    /// What the model is told the tool does.
    pub description: String,
    /// Parameters in order; every one is a required string.
    pub parameters: Vec<ParamDoc>,
}

/// A tool documentation variant file (`tasks/<suite>/tools/<variant>.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolDocs {
    /// The tools, in the order they are offered.
    pub tools: Vec<ToolDoc>,
}

impl ToolDocs {
    /// The tools in Ollama's `tools` shape.
    pub fn to_ollama(&self) -> Vec<serde_json::Value> {
        self.tools
            .iter()
            .map(|t| {
                let mut props = serde_json::Map::new();
                for p in &t.parameters {
                    let mut prop = serde_json::Map::new();
                    prop.insert("type".into(), "string".into());
                    if let Some(d) = &p.description {
                        prop.insert("description".into(), d.clone().into());
                    }
                    props.insert(p.name.clone(), prop.into());
                }
                let required: Vec<serde_json::Value> =
                    t.parameters.iter().map(|p| p.name.clone().into()).collect();
                serde_json::json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": {"type": "object", "properties": props, "required": required},
                    }
                })
            })
            .collect()
    }
}
