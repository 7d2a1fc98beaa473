//! A test server behind [`ChatApi`]: each call gets the next scripted reply, every request is
//! kept. The runner's unit tests play against it rather than a mocked client.

use crate::wire::chat::{ApiKind, CallRequest, CallResult, Message, Reply};
use crate::wire::chat_api::{LoadedModel, ModelEntry, ServedModel, ServerIdentity};
use crate::wire::outcome::{Attempt, CallOutcome};
use crate::wire::retry::AttemptWatch;
use crate::wire::{ChatApi, WireError};
use futures_util::future::BoxFuture;
use std::collections::VecDeque;
use std::sync::Mutex;

/// A server that answers each call with the next scripted reply (a failed call for a
/// bucket), and "Done." once the script is spent; it keeps every request it was sent.
#[derive(Default)]
pub(crate) struct Scripted {
    replies: Mutex<VecDeque<Result<Message, CallOutcome>>>,
    sent: Mutex<Vec<CallRequest>>,
    done_reason: Option<String>,
    loaded: Option<Vec<LoadedModel>>,
}

impl Scripted {
    pub(crate) fn new(replies: Vec<Result<Message, CallOutcome>>) -> Scripted {
        Scripted {
            replies: Mutex::new(replies.into()),
            ..Scripted::default()
        }
    }

    /// The server lists these models as loaded (`/api/ps`); without, it lists none at all.
    pub(crate) fn loaded(mut self, models: Vec<LoadedModel>) -> Scripted {
        self.loaded = Some(models);
        self
    }

    /// Every reply ends with this `done_reason` (`length`: cut at the output limit).
    pub(crate) fn done(mut self, reason: &str) -> Scripted {
        self.done_reason = Some(reason.into());
        self
    }

    pub(crate) fn sent(&self) -> Vec<CallRequest> {
        self.sent.lock().expect("sent").clone()
    }
}

impl ChatApi for Scripted {
    fn kind(&self) -> ApiKind {
        ApiKind::Ollama
    }

    fn chat_watched<'a>(
        &'a self,
        req: &'a CallRequest,
        _watch: Option<AttemptWatch<'a>>,
    ) -> BoxFuture<'a, CallResult> {
        self.sent.lock().expect("sent").push(req.clone());
        let next = self.replies.lock().expect("script").pop_front();
        let next = next.unwrap_or_else(|| Ok(Message::assistant("Done.")));
        let outcome = next.as_ref().err().copied().unwrap_or(CallOutcome::Ok);
        let reply = next.ok().map(|message| Reply {
            model: req.model.clone(),
            message,
            done_reason: self.done_reason.clone(),
            ..Reply::default()
        });
        let attempt = Attempt {
            outcome,
            status: Some(200),
            error: (outcome != CallOutcome::Ok).then(|| "scripted failure".into()),
            elapsed_ms: 1.0,
        };
        Box::pin(async move {
            CallResult {
                api: ApiKind::Ollama,
                reply,
                outcome,
                attempts: vec![attempt],
                wall_s: 0.001,
                ttfb_s: None,
                first_token_s: None,
                started_unix_ms: 0,
            }
        })
    }

    fn server_info(&self) -> BoxFuture<'_, Result<ServerIdentity, WireError>> {
        Box::pin(async { Ok(ServerIdentity::default()) })
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<ModelEntry>, WireError>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    fn model_info<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<ServedModel, WireError>> {
        Box::pin(async { Ok(ServedModel::default()) })
    }

    fn loaded_models(&self) -> BoxFuture<'_, Result<Option<Vec<LoadedModel>>, WireError>> {
        let loaded = self.loaded.clone();
        Box::pin(async move { Ok(loaded) })
    }
}
