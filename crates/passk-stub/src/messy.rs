//! Messy model output: once per conversation, on its first reply, the stub writes the gold call in
//! one of the shapes real models emit (or with one of their defects), then follows the gold
//! trajectory. docs/reference/metrics.md says how passk counts each shape.

use super::script::Reply;
use passk::domain::TrajectoryCall;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Nesting of the `deep_arguments` shape: past serde_json's recursion limit of 128.
pub const DEEP_LEVELS: usize = 130;
/// Copies of the gold call in the `repeated` shape.
pub const REPEATS: usize = 20;
/// Size of the `flood` reply, bytes (at least).
pub const FLOOD_BYTES: usize = 1 << 20;

/// One shape of messy output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessyShape {
    /// `<think>` with a `cancel_order` call mentioned in it (and in `thinking`), then the call.
    ThinkMention,
    /// The native call with its first argument nested [`DEEP_LEVELS`] arrays deep.
    DeepArguments,
    /// The native call, and the same call written into the text beside it.
    BesideNative,
    /// `{"name": .., "input": {..}}`.
    InputKey,
    /// `{"tool_calls": [{"name": .., "arguments": {..}}]}`.
    Wrapper,
    /// The `<tools>` list pasted back, then the call in `<tool_call>` tags.
    EchoedTools,
    /// Mistral's `[TOOL_CALLS]name[ARGS]{..}`.
    Mistral,
    /// Mistral's `[TOOL_CALLS][{"name": .., "arguments": {..}}]`.
    MistralList,
    /// llama 3.1's `<function=name>{..}</function>`.
    FunctionTag,
    /// llama 3.2's `[name(key="value")]`.
    Pythonic,
    /// The same after a sentence of prose.
    PythonicAfterProse,
    /// `{"function": "name", "params": {..}}`.
    FunctionParams,
    /// ReAct's `Action: name` / `Action Input: {..}`.
    React,
    /// `name(key="value")` in a ```python fence.
    FencedPython,
    /// The native call with its first argument wrapped in an array (`["5105"]`).
    ArrayArgument,
    /// The native call [`REPEATS`] times in one reply.
    Repeated,
    /// The call written into the text back to back, [`FLOOD_BYTES`] of it.
    Flood,
    /// gpt-oss Harmony: an analysis message mentioning a `cancel_order` call, then the call on the
    /// commentary channel (`to=functions.name <|constrain|>json<|message|>{..}<|call|>`).
    Harmony,
    /// Harmony with the recipient on the analysis channel.
    HarmonyAnalysisRecipient,
    /// Two Harmony commentary calls back to back (the call twice).
    HarmonyBackToBack,
    /// DeepSeek V3 / R1's tool-call tokens with a ```json body.
    DeepseekV3,
    /// DeepSeek V3.1's `<｜tool▁call▁begin｜>name<｜tool▁sep｜>{..}`.
    DeepseekV31,
    /// DeepSeek's tokens spelt in ASCII (`<|tool_call_begin|>`).
    DeepseekAscii,
    /// Kimi K2's `functions.name:0` between its section tokens.
    KimiK2,
    /// Command-R's `Action: ```json [{"tool_name": .., "parameters": {..}}]````.
    CommandR,
    /// functionary v2's `<|recipient|>name` / `<|content|>{..}`.
    FunctionaryV2,
    /// functionary v3's `>>>name` then `{..}`.
    FunctionaryV3,
    /// Gemma 4's `<|tool_call>call:name{key:<|"|>value<|"|>}<tool_call|>`.
    GemmaBraces,
    /// Gemma 4's `<|tool_call>call:name(key: "value")<tool_call|>`.
    GemmaParens,
    /// llama 3.1's `<|python_tag|>name(key="value")<|eom_id|>`.
    PythonTag,
    /// Qwen3-Coder's `<tool_call><function=name><parameter=key>value</parameter></function>`, one
    /// element per argument on lines of their own.
    Qwen3CoderXml,
    /// DeepSeek V3.2's DSML: `<｜DSML｜invoke name=..>` with `<｜DSML｜parameter name=..
    /// string="true">` elements (`string="false"`: JSON).
    Dsml,
    /// GLM-4.7's compact `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`
    /// after a template-opened `</think>`.
    Glm47,
    /// MiniMax-M2's `<minimax:tool_call><invoke name=..><parameter name=..>`.
    Minimax,
    /// Apertus' `<|tools_prefix|>[{"name": {..}}]<|tools_suffix|>`.
    Apertus,
    /// Olmo 3's `<function_calls>name(key="value")</function_calls>`.
    Olmo3,
    /// gpt-oss Harmony with its special tokens stripped: `analysis..` mentioning a `cancel_order`
    /// call, then `assistantcommentary to=functions.name json{..}`.
    HarmonyStripped,
    /// gpt-oss's flattened `{"name": .., "<key>": ..}`: the arguments beside the name.
    FlatArgs,
    /// A `<think>` never closed, then the call in `<tool_call>` tags.
    ThinkUnclosedCall,
    /// Two writes offered as options ending "Which would you prefer?", then the call made now.
    OptionsList,
    /// A `cancel_order` call said to have run already, then the call made now.
    PastMention,
}

impl MessyShape {
    /// Every shape, in declaration order.
    pub const ALL: [MessyShape; 41] = [
        MessyShape::ThinkMention,
        MessyShape::DeepArguments,
        MessyShape::BesideNative,
        MessyShape::InputKey,
        MessyShape::Wrapper,
        MessyShape::EchoedTools,
        MessyShape::Mistral,
        MessyShape::MistralList,
        MessyShape::FunctionTag,
        MessyShape::Pythonic,
        MessyShape::PythonicAfterProse,
        MessyShape::FunctionParams,
        MessyShape::React,
        MessyShape::FencedPython,
        MessyShape::ArrayArgument,
        MessyShape::Repeated,
        MessyShape::Flood,
        MessyShape::Harmony,
        MessyShape::HarmonyAnalysisRecipient,
        MessyShape::HarmonyBackToBack,
        MessyShape::DeepseekV3,
        MessyShape::DeepseekV31,
        MessyShape::DeepseekAscii,
        MessyShape::KimiK2,
        MessyShape::CommandR,
        MessyShape::FunctionaryV2,
        MessyShape::FunctionaryV3,
        MessyShape::GemmaBraces,
        MessyShape::GemmaParens,
        MessyShape::PythonTag,
        MessyShape::Qwen3CoderXml,
        MessyShape::Dsml,
        MessyShape::Glm47,
        MessyShape::Minimax,
        MessyShape::Apertus,
        MessyShape::Olmo3,
        MessyShape::HarmonyStripped,
        MessyShape::FlatArgs,
        MessyShape::ThinkUnclosedCall,
        MessyShape::OptionsList,
        MessyShape::PastMention,
    ];

    /// The shape's name in model names (`messy-<name>`): snake case with dashes.
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(|s| s.replace('_', "-")))
            .unwrap_or_default()
    }

    /// The shape named `name` (as [`MessyShape::name`] writes it).
    pub fn from_name(name: &str) -> Option<MessyShape> {
        MessyShape::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// The messy reply carrying `call`; `tools` are the request's tool schemas.
pub(crate) fn reply(shape: MessyShape, call: &TrajectoryCall, tools: &[Value]) -> Reply {
    let name = call.tool.as_str();
    let args = Value::Object(call.args.clone());
    let bare = json!({"name": name, "arguments": args}).to_string();
    let text = |content: String| Reply {
        content,
        ..Reply::default()
    };
    match shape {
        MessyShape::ThinkMention => {
            let mention = r#"I could call {"name": "cancel_order", "arguments": {"order_id": "5111"}} to cancel it ... but not yet."#;
            Reply {
                content: format!("<think>{mention}</think>\n{bare}"),
                thinking: Some(format!("I could call cancel_order 5111 {mention}")),
                ..Reply::default()
            }
        }
        MessyShape::DeepArguments => native(call, 1, |v| {
            (0..DEEP_LEVELS).fold(v, |inner, _| Value::Array(vec![inner]))
        }),
        MessyShape::BesideNative => Reply {
            content: bare,
            ..native(call, 1, |v| v)
        },
        MessyShape::InputKey => text(json!({"name": name, "input": args}).to_string()),
        MessyShape::Wrapper => {
            text(json!({"tool_calls": [{"name": name, "arguments": args}]}).to_string())
        }
        MessyShape::EchoedTools => {
            let listed: Vec<String> = tools.iter().map(Value::to_string).collect();
            text(format!(
                "<tools>\n{}\n</tools>\n<tool_call>\n{bare}\n</tool_call>",
                listed.join("\n")
            ))
        }
        MessyShape::Mistral => text(format!("[TOOL_CALLS]{name}[ARGS]{args}")),
        MessyShape::MistralList => text(format!("[TOOL_CALLS][{bare}]")),
        MessyShape::FunctionTag => text(format!("<function={name}>{args}</function>")),
        MessyShape::Pythonic => text(format!("[{}]", python_call(call))),
        MessyShape::PythonicAfterProse => text(format!(
            "Let me look that up for you. [{}]",
            python_call(call)
        )),
        MessyShape::FunctionParams => text(json!({"function": name, "params": args}).to_string()),
        MessyShape::React => text(format!(
            "Thought: I need to look this up first.\nAction: {name}\nAction Input: {args}"
        )),
        MessyShape::FencedPython => text(format!("```python\n{}\n```", python_call(call))),
        MessyShape::ArrayArgument => native(call, 1, |v| Value::Array(vec![v])),
        MessyShape::Repeated => Reply {
            calls: vec![(name.to_string(), args); REPEATS],
            ..Reply::default()
        },
        MessyShape::Flood => {
            let copies = FLOOD_BYTES.div_ceil(bare.len() + 1);
            text(vec![bare; copies].join("\n"))
        }
        _ => text(token_marked(shape, name, &args, call)),
    }
}

/// The call in one of the token-marked formats (the shapes after [`MessyShape::Flood`]).
fn token_marked(shape: MessyShape, name: &str, args: &Value, call: &TrajectoryCall) -> String {
    let commentary = format!(
        "<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{args}<|call|>"
    );
    match shape {
        MessyShape::Harmony => format!(
            "<|channel|>analysis<|message|>I could send {{\"name\": \"cancel_order\", \"arguments\": \
             {{\"order_id\": \"5111\"}}}}, but first I look it up.<|end|>{commentary}"
        ),
        MessyShape::HarmonyAnalysisRecipient => format!(
            "<|channel|>analysis to=functions.{name} <|constrain|>json<|message|>{args}<|call|>"
        ),
        MessyShape::HarmonyBackToBack => format!("{commentary}{commentary}"),
        MessyShape::DeepseekV3 => format!(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{args}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        ),
        MessyShape::DeepseekV31 => format!(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{args}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        ),
        MessyShape::DeepseekAscii => format!(
            "<|tool_calls_begin|><|tool_call_begin|>function<|tool_sep|>{name}\n{args}<|tool_call_end|><|tool_calls_end|>"
        ),
        MessyShape::KimiK2 => format!(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.{name}:0<|tool_call_argument_begin|>{args}<|tool_call_end|><|tool_calls_section_end|>"
        ),
        MessyShape::CommandR => format!(
            "Action: ```json\n{}\n```",
            json!([{"tool_name": name, "parameters": args}])
        ),
        MessyShape::FunctionaryV2 => {
            format!("<|from|>assistant\n<|recipient|>{name}\n<|content|>{args}")
        }
        MessyShape::FunctionaryV3 => {
            format!(">>>all\nLet me look that up.\n>>>{name}\n{args}")
        }
        MessyShape::GemmaBraces => {
            let fields: Vec<String> = call
                .args
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => format!("{k}:<|\"|>{s}<|\"|>"),
                    other => format!("{k}:{other}"),
                })
                .collect();
            format!(
                "<|tool_call>call:{name}{{{}}}<tool_call|>",
                fields.join(",")
            )
        }
        MessyShape::GemmaParens => {
            format!(
                "<|tool_call>call:{}<tool_call|>",
                python_call_with(call, ": ")
            )
        }
        MessyShape::Qwen3CoderXml => qwen3_coder_xml(call),
        MessyShape::PythonTag => format!("<|python_tag|>{}<|eom_id|>", python_call(call)),
        _ => later_format(shape, name, args, call),
    }
}

/// The call in one of the formats and prose shapes of passk issue 47 (the shapes after
/// [`MessyShape::Qwen3CoderXml`]).
fn later_format(shape: MessyShape, name: &str, args: &Value, call: &TrajectoryCall) -> String {
    let bare = json!({"name": name, "arguments": args}).to_string();
    let cancel = r#"{"name": "cancel_order", "arguments": {"order_id": "5111"}}"#;
    let text_of = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    match shape {
        MessyShape::Dsml => {
            let params: String = call
                .args
                .iter()
                .map(|(k, v)| {
                    format!(
                        "<｜DSML｜parameter name=\"{k}\" string=\"{}\">{}</｜DSML｜parameter>\n",
                        v.is_string(),
                        text_of(v)
                    )
                })
                .collect();
            format!(
                "Let me check.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"{name}\">\n{params}</｜DSML｜invoke>\n</｜DSML｜function_calls>"
            )
        }
        MessyShape::Glm47 => {
            let pairs: String = call
                .args
                .iter()
                .map(|(k, v)| {
                    format!(
                        "<arg_key>{k}</arg_key><arg_value>{}</arg_value>",
                        text_of(v)
                    )
                })
                .collect();
            format!("plan</think>Answer<tool_call>{name}{pairs}</tool_call>")
        }
        MessyShape::Minimax => {
            let params: String = call
                .args
                .iter()
                .map(|(k, v)| format!("<parameter name=\"{k}\">{}</parameter>\n", text_of(v)))
                .collect();
            format!(
                "<minimax:tool_call>\n<invoke name=\"{name}\">\n{params}</invoke>\n</minimax:tool_call>"
            )
        }
        MessyShape::Apertus => format!(
            "I will check.<|tools_prefix|>{}<|tools_suffix|>",
            json!([{ name: args }])
        ),
        MessyShape::Olmo3 => format!(
            "Let me check.<function_calls>{}</function_calls>",
            python_call(call)
        ),
        MessyShape::HarmonyStripped => format!(
            "analysisI could send {cancel} but she is not verified yet.assistantcommentary to=functions.{name} json{args}"
        ),
        MessyShape::FlatArgs => {
            let mut flat = call.args.clone();
            flat.insert("name".into(), json!(name));
            Value::Object(flat).to_string()
        }
        MessyShape::ThinkUnclosedCall => {
            format!("<think>Let me look this up first.<tool_call>{bare}</tool_call>")
        }
        MessyShape::OptionsList => format!(
            "I can help in one of two ways:\n1. Cancel the order: {cancel}\n2. Start a return: \
             {{\"name\": \"request_return\", \"arguments\": {{\"order_id\": \"5111\"}}}}\n\
             Which would you prefer? While you decide, let me look you up: {bare}"
        ),
        _ => format!(
            "I already ran {cancel} earlier and it went through. Now let me look you up: {bare}"
        ),
    }
}

/// The call in Qwen3-Coder's XML form: each argument a `<parameter=key>` element holding its value
/// as text (a string as written, anything else as JSON).
fn qwen3_coder_xml(call: &TrajectoryCall) -> String {
    let params: String = call
        .args
        .iter()
        .map(|(k, v)| {
            let value = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            format!("<parameter={k}>\n{value}\n</parameter>\n")
        })
        .collect();
    format!(
        "<tool_call>\n<function={}>\n{params}</function>\n</tool_call>",
        call.tool
    )
}

/// The native call with its first `n` arguments changed by `f`.
fn native(call: &TrajectoryCall, n: usize, f: impl Fn(Value) -> Value) -> Reply {
    let mut args = call.args.clone();
    for (_, v) in args.iter_mut().take(n) {
        *v = f(v.take());
    }
    Reply {
        calls: vec![(call.tool.clone(), Value::Object(args))],
        ..Reply::default()
    }
}

/// The call as Python: `name(key="value", ...)` (JSON literals are Python literals here, but for
/// `true`, `false` and `null`).
fn python_call(call: &TrajectoryCall) -> String {
    python_call_with(call, "=")
}

/// The call as Python with `sep` between each key and value (Gemma 4 writes `key: value`).
fn python_call_with(call: &TrajectoryCall, sep: &str) -> String {
    let args: Vec<String> = call
        .args
        .iter()
        .map(|(k, v)| {
            let literal = match v {
                Value::Bool(true) => "True".to_string(),
                Value::Bool(false) => "False".to_string(),
                Value::Null => "None".to_string(),
                other => other.to_string(),
            };
            format!("{k}{sep}{literal}")
        })
        .collect();
    format!("{}({})", call.tool, args.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use passk::wire::tool_call::extract_all;

    #[test]
    fn names_round_trip() {
        for s in MessyShape::ALL {
            assert_eq!(MessyShape::from_name(&s.name()), Some(s));
        }
        assert_eq!(
            MessyShape::PythonicAfterProse.name(),
            "pythonic-after-prose"
        );
    }

    #[test]
    fn text_shapes_read_back_as_the_call() {
        let mut args = serde_json::Map::new();
        args.insert("order_id".into(), json!("5105"));
        let call = TrajectoryCall {
            tool: "get_order".into(),
            args,
        };
        let known = vec!["get_order".to_string(), "cancel_order".to_string()];
        // Every shape written only into the text, once.
        let native_or_repeated = [
            MessyShape::DeepArguments,
            MessyShape::BesideNative,
            MessyShape::ArrayArgument,
            MessyShape::Repeated,
            MessyShape::Flood,
            MessyShape::HarmonyBackToBack,
        ];
        for shape in MessyShape::ALL
            .into_iter()
            .filter(|s| !native_or_repeated.contains(s))
        {
            let tools = vec![json!({"type": "function", "function": {"name": "get_order",
                "description": "An order", "parameters": {"type": "object",
                "properties": {"order_id": {"type": "string"}}}}})];
            let r = reply(shape, &call, &tools);
            let message = passk::wire::chat::Message::assistant(r.content);
            let got = extract_all(&message, &known).calls;
            let got: Vec<(&str, &Value)> = got
                .iter()
                .map(|c| (c.name.as_str(), &c.arguments))
                .collect();
            assert_eq!(
                got,
                vec![("get_order", &json!({"order_id": "5105"}))],
                "{shape:?}"
            );
        }
    }
}
