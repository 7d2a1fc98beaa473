//! The OpenAI-compatible client behind the neutral [`ChatApi`] seam.

use super::client::Client;
use super::convert;
use crate::wire::chat::{ApiKind, CallRequest, CallResult};
use crate::wire::chat_api::{ChatApi, LoadedModel, ModelEntry, ServedModel, ServerIdentity};
use crate::wire::error::WireError;
use crate::wire::retry::AttemptWatch;
use futures_util::future::BoxFuture;

impl ChatApi for Client {
    fn kind(&self) -> ApiKind {
        ApiKind::OpenAi
    }

    fn chat_watched<'a>(
        &'a self,
        req: &'a CallRequest,
        watch: Option<AttemptWatch<'a>>,
    ) -> BoxFuture<'a, CallResult> {
        Box::pin(async move {
            let r = Client::chat_watched(self, &convert::request(req), watch).await;
            CallResult {
                api: ApiKind::OpenAi,
                reply: r.body.as_ref().and_then(convert::reply),
                outcome: r.outcome,
                attempts: r.attempts,
                wall_s: r.wall_s,
                ttfb_s: r.ttfb_s,
                first_token_s: r.first_token_s,
                started_unix_ms: r.started_unix_ms,
            }
        })
    }

    fn server_info(&self) -> BoxFuture<'_, Result<ServerIdentity, WireError>> {
        Box::pin(self.identify())
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<ModelEntry>, WireError>> {
        Box::pin(self.model_entries())
    }

    fn model_info<'a>(&'a self, model: &'a str) -> BoxFuture<'a, Result<ServedModel, WireError>> {
        Box::pin(self.model_details(model))
    }

    /// Names as Ollama reads them (`m` is `m:latest`); other servers' ids rarely hold a tag.
    fn same_model(&self, a: &str, b: &str) -> bool {
        crate::wire::ollama::name::same_model(a, b)
    }

    /// Ollama (and passk's stub) behind `/v1` still list what they hold at `/api/ps`, with the
    /// context each model runs at, which `/v1` cannot set; other servers list no loaded models:
    /// they hold their model for as long as they run.
    fn loaded_models(&self) -> BoxFuture<'_, Result<Option<Vec<LoadedModel>>, WireError>> {
        Box::pin(async move {
            let server = self.identify().await?;
            if !matches!(
                server.kind.as_deref(),
                Some(super::server::kind::OLLAMA | super::server::kind::STUB)
            ) {
                return Ok(None);
            }
            let ps = self
                .probe::<crate::wire::ollama::api::PsResponse>("/api/ps")
                .await
                .ok_or_else(|| WireError::Protocol {
                    url: self.url("/api/ps"),
                    status: None,
                    message: "Ollama behind /v1 did not list its loaded models".into(),
                })?;
            Ok(Some(
                ps.models
                    .into_iter()
                    .map(crate::wire::ollama::convert::loaded)
                    .collect(),
            ))
        })
    }
}
