//! The single integration-test binary; each module tests one part through the real binary or the
//! library's public API, over loopback only.

mod browser;
mod calibrate;
mod reference;
mod regrade;
mod report;
mod run;
mod suite;
mod triage;
mod util;
mod wire;
