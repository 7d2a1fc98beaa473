//! Comparisons of two runs (`passk compare`, `passk regrade`): the settings that differ, paired
//! differences of each metric, and the verdicts that moved.

pub mod compare;
pub mod paired_metrics;
pub mod regrade;
pub mod settings_diff;
