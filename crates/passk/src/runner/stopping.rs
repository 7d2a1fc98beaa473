//! A run that stops when decided (`--stop-when-decided`): the schedule played round by round, the
//! confidence sequence asked of the round judge after each, a round's wire failures played again
//! before the sequence takes it, and `rounds.jsonl` kept in step.

use crate::runner::event::{EventSink, RunEvent};
use crate::runner::journal::MAX_WIRE_TRIES;
use crate::runner::judge::{Judgement, RoundJudge};
use crate::runner::play::play_trials;
use crate::runner::run_error::{RunError, SequenceError};
use crate::runner::schedule::TrialSpec;
use crate::runner::session::Session;
use crate::runner::spec::RunSummary;
use std::sync::atomic::AtomicBool;

/// Plays the schedule round by round (every task once per model); after each complete round the
/// confidence sequence is recomputed from the records, and the run stops once it decides. A
/// round's trials that end on a wire failure are played again before the sequence takes it, and
/// the run stops when they stay ungraded. A resumed run first replays the rounds on disk, so it
/// continues the same sequence.
pub(crate) async fn play_rounds(
    session: &mut Session<'_>,
    todo: &[TrialSpec],
    summary: &mut RunSummary,
    sink: &dyn EventSink,
    judge: &dyn RoundJudge,
    cancel: &AtomicBool,
) -> Result<(), RunError> {
    let mut state = update_sequence(session, sink, judge)?;
    let mut rest = todo;
    while !summary.interrupted && !rest.is_empty() {
        let round = rest[0].key().trial;
        let held = |st: &Judgement| {
            st.decided().is_some() || st.waiting.as_ref().is_some_and(|w| w.round < round)
        };
        if state.as_ref().is_some_and(held) {
            break;
        }
        let end = rest
            .iter()
            .position(|t| t.key().trial != round)
            .unwrap_or(rest.len());
        play_trials(session, &rest[..end], summary, sink, cancel).await?;
        state = update_sequence(session, sink, judge)?;
        let round_trials = &rest[..end];
        state = complete_round(session, round_trials, state, summary, sink, judge, cancel).await?;
        rest = &rest[end..];
    }
    summary.decided = state
        .as_ref()
        .and_then(|st| Some((*st.decided()?, st.says.clone())));
    summary.waiting = state.and_then(|st| {
        let w = st.waiting?;
        Some(format!(
            "round {} waits on {} trial(s) that ended on a wire failure; the confidence sequence \
             needs every pair of a round graded (resume the run, with --retry-failed once they are \
             out of wire tries)",
            w.round + 1,
            w.ungraded.len()
        ))
    });
    Ok(())
}

/// Plays again, up to [`MAX_WIRE_TRIES`] times in all, the trials of a just-played round that
/// ended ungraded, so that the sequence can take the round; returns the sequence's state after.
pub(crate) async fn complete_round(
    session: &mut Session<'_>,
    round: &[TrialSpec],
    mut state: Option<Judgement>,
    summary: &mut RunSummary,
    sink: &dyn EventSink,
    judge: &dyn RoundJudge,
    cancel: &AtomicBool,
) -> Result<Option<Judgement>, RunError> {
    for _ in 1..MAX_WIRE_TRIES {
        let Some(w) = state.as_ref().and_then(|st| st.waiting.as_ref()) else {
            break;
        };
        let again: Vec<TrialSpec> = round
            .iter()
            .filter(|t| w.ungraded.contains(&t.key()))
            .cloned()
            .collect();
        if again.is_empty() || summary.interrupted {
            break;
        }
        for t in &again {
            session.journal.play_again(&t.key());
        }
        sink.emit(RunEvent::Info(format!(
            "round {}: {} trial(s) ended on a wire failure; playing them again, since the \
             confidence sequence needs every pair of the round graded",
            w.round + 1,
            again.len()
        )));
        play_trials(session, &again, summary, sink, cancel).await?;
        state = update_sequence(session, sink, judge)?;
    }
    Ok(state)
}

/// Recomputes the sequence from the run's records, appends the rounds `rounds.jsonl` lacks, and
/// says the last round's state; returns the rule's state (`None` for a run without it).
pub(crate) fn update_sequence(
    session: &Session<'_>,
    sink: &dyn EventSink,
    judge: &dyn RoundJudge,
) -> Result<Option<Judgement>, RunError> {
    let dir = session.journal.dir();
    let state = judge
        .judge(dir, &session.stage.exp.settings, &session.manifest)
        .map_err(SequenceError::Judge)?;
    let states = state.as_ref().map_or(&[][..], |st| &st.rounds);
    crate::runner::rounds::record(dir, states).map_err(|source| SequenceError::Write {
        path: dir.join(crate::runner::rounds::ROUNDS_FILE),
        source,
    })?;
    if let Some((st, last)) = state.as_ref().and_then(|st| Some((st, st.last()?))) {
        sink.emit(RunEvent::Info(format!(
            "round {}: difference {:+.1} pp, confidence sequence [{:+.1}, {:+.1}] pp over {} tasks: {}",
            last.round + 1,
            100.0 * last.mean,
            100.0 * last.low,
            100.0 * last.high,
            last.tasks,
            st.says
        )));
    }
    Ok(state)
}
