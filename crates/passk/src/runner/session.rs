//! What one session of a run works with once the checks have passed: the stage the trials play
//! on, the run directory's journal, the manifest and the pool of servers.

use crate::runner::journal::Journal;
use crate::runner::pool::{Pool, Stage};
use crate::runner::record::Manifest;

/// What one session of a run works with, once the checks have passed.
pub(crate) struct Session<'a> {
    pub(crate) stage: Stage<'a>,
    pub(crate) journal: Journal,
    pub(crate) manifest: Manifest,
    pub(crate) pool: Pool,
    /// Models warmed up in this session, in order, each with whether `/api/ps` listed it then.
    pub(crate) warmed: Vec<(String, bool)>,
}
