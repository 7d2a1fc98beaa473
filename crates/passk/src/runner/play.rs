//! Playing a list of trials: model by model, each warmed up on every server first, over the pool.

use crate::runner::event::EventSink;
use crate::runner::pool::{self, Writer};
use crate::runner::run_error::RunError;
use crate::runner::schedule::TrialSpec;
use crate::runner::servers;
use crate::runner::session::Session;
use crate::runner::spec::RunSummary;
use std::sync::atomic::{AtomicBool, Ordering};

/// Plays `todo` model by model over the pool of servers, one record per trial, until it is done
/// or `cancel` is set. Each model's trials begin once it is warmed up on every server, and end
/// before the next model's begin.
pub(crate) async fn play_trials(
    session: &mut Session<'_>,
    todo: &[TrialSpec],
    summary: &mut RunSummary,
    sink: &dyn EventSink,
    cancel: &AtomicBool,
) -> Result<(), RunError> {
    let mut rest = todo;
    while !rest.is_empty() {
        if cancel.load(Ordering::SeqCst) {
            summary.interrupted = true;
            break;
        }
        let model = rest[0].model().to_string();
        let end = rest
            .iter()
            .position(|t| t.model() != model)
            .unwrap_or(rest.len());
        servers::start_model(session, &model, sink).await?;
        let mut writer = Writer {
            journal: &mut session.journal,
            manifest: &session.manifest,
            summary,
            pool: &mut session.pool,
        };
        pool::play(&session.stage, &mut writer, &rest[..end], sink, cancel).await?;
        if summary.interrupted {
            break;
        }
        rest = &rest[end..];
    }
    Ok(())
}
