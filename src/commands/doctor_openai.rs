//! `passk doctor --api openai`: the checks a run against an OpenAI-compatible server needs, each
//! with a fix: the server answers, each model is served, its chat template shows the tools, and
//! the context it was started with.

use super::doctor::Check;
use passk::wire::ChatApi;
use passk::wire::openai::server::provider;

/// The checks, in the order they are printed.
pub(super) async fn checks(client: &dyn ChatApi, host: &str, models: &[String]) -> Vec<Check> {
    let mut out = Vec::new();
    let kind = match client.server_info().await {
        Ok(s) => {
            out.push(Check::pass(format!(
                "OpenAI-compatible server reachable at {host}: {} {}",
                s.kind.as_deref().unwrap_or("unknown kind"),
                if s.version.is_empty() {
                    "(no version given)"
                } else {
                    &s.version
                }
            )));
            s.kind
        }
        Err(e) => {
            out.push(Check::fail(
                format!("no OpenAI-compatible server at {host}: {e}"),
                provider(None).start.into(),
            ));
            return out;
        }
    };
    for model in models {
        out.extend(model_checks(client, kind.as_deref(), model).await);
    }
    out
}

async fn model_checks(client: &dyn ChatApi, kind: Option<&str>, model: &str) -> Vec<Check> {
    let texts = provider(kind);
    let info = match client.model_info(model).await {
        Ok(info) => info,
        Err(e) => {
            let served = client.list_models().await.unwrap_or_default();
            let names: Vec<&str> = served.iter().map(|m| m.name.as_str()).collect();
            return vec![Check::fail(
                format!("{model} is not served: {e}"),
                format!("{} (served: {})", texts.fetch(model), names.join(", ")),
            )];
        }
    };
    let mut out = vec![Check::pass(format!(
        "{model} is served ({})",
        info.digest.as_deref().unwrap_or("no identity")
    ))];
    out.push(match info.tools {
        Some(true) => Check::pass(format!("{model}: the chat template shows the tools")),
        Some(false) => Check::fail(
            format!("{model}: the server's chat template drops the tools"),
            texts.tools.into(),
        ),
        None => Check::warn(
            format!("{model}: the server does not say whether its template takes tools"),
            "check by hand that a call with tools gets a prompt longer than one without".into(),
        ),
    });
    out.push(match info.context_length {
        Some(ctx) => Check::pass(format!(
            "{model} runs with a context of {ctx} tokens (fixed at the server's start; pass --num-ctx {ctx} or less)"
        )),
        None => Check::warn(
            format!("{model}: the server does not say its context length"),
            "check the server's start options; a prompt past it is the server's error".into(),
        ),
    });
    out
}
