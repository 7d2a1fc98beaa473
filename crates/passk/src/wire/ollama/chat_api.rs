//! Ollama's client behind the neutral [`ChatApi`] seam.

use super::client::Client;
use super::convert;
use super::name::same_model;
use crate::wire::chat::{ApiKind, CallRequest, CallResult};
use crate::wire::chat_api::{ChatApi, LoadedModel, ModelEntry, ServedModel, ServerIdentity};
use crate::wire::error::WireError;
use crate::wire::retry::AttemptWatch;
use futures_util::future::BoxFuture;

impl ChatApi for Client {
    fn kind(&self) -> ApiKind {
        ApiKind::Ollama
    }

    fn chat_watched<'a>(
        &'a self,
        req: &'a CallRequest,
        watch: Option<AttemptWatch<'a>>,
    ) -> BoxFuture<'a, CallResult> {
        Box::pin(async move {
            let streamed = Client::chat_watched(self, &convert::request(req), watch).await;
            let r = streamed.result;
            CallResult {
                api: ApiKind::Ollama,
                reply: r.response.as_ref().and_then(convert::reply),
                outcome: r.outcome,
                attempts: r.attempts,
                wall_s: r.wall_s,
                ttfb_s: r.ttfb_s,
                first_token_s: streamed.first_token_s,
                started_unix_ms: r.started_unix_ms,
            }
        })
    }

    fn server_info(&self) -> BoxFuture<'_, Result<ServerIdentity, WireError>> {
        Box::pin(async move {
            let version = self.version().await?;
            let stub = self.stub_suites().await;
            Ok(ServerIdentity {
                version: version.version,
                kind: Some(
                    if stub.is_some() {
                        "passk-stub"
                    } else {
                        "ollama"
                    }
                    .into(),
                ),
                stub,
            })
        })
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<ModelEntry>, WireError>> {
        Box::pin(async move {
            let tags = self.tags().await?;
            Ok(tags.models.into_iter().map(convert::model_entry).collect())
        })
    }

    fn model_info<'a>(&'a self, model: &'a str) -> BoxFuture<'a, Result<ServedModel, WireError>> {
        Box::pin(async move {
            let show = self.show(model).await?;
            let digest = self.tags().await.ok().and_then(|t| {
                t.models
                    .into_iter()
                    .map(convert::model_entry)
                    .find(|m| m.is(self, model))
                    .and_then(|m| m.digest)
            });
            Ok(ServedModel {
                digest,
                ..convert::model_info(&show)
            })
        })
    }

    fn loaded_models(&self) -> BoxFuture<'_, Result<Option<Vec<LoadedModel>>, WireError>> {
        Box::pin(async move {
            let ps = self.ps().await?;
            Ok(Some(ps.models.into_iter().map(convert::loaded).collect()))
        })
    }

    fn same_model(&self, a: &str, b: &str) -> bool {
        same_model(a, b)
    }
}
