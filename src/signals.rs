//! SIGINT, SIGTERM and SIGHUP, handled from the first instant of the process.
//!
//! [`install`] runs first thing in `main`. Until a command asks for a graceful stop
//! ([`graceful`]), a signal exits at once with 128 + its number, having written nothing. Once
//! asked, the first signal sets the stop flag (the run finishes the conversation in flight, keeps
//! every finished one and exits with 128 + the signal's number), and a second one exits at once.
//! Exiting at once kills the tool servers' process groups first. The handler does only what a
//! signal handler may: atomics, `kill(2)`, `write(2)` and `_exit(2)`.
//!
//! A signal already ignored when passk starts keeps being ignored: `nohup` ignores SIGHUP, and a
//! shell starts a background job (`passk run ... &`) with SIGINT ignored, and the user asked for
//! exactly that.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static RECEIVED: AtomicI32 = AtomicI32::new(0);
static GRACEFUL: AtomicBool = AtomicBool::new(false);
static STOP: AtomicBool = AtomicBool::new(false);

const SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Installs the handlers; a signal that cannot be hooked keeps its default action, and one ignored
/// from the start stays ignored.
pub(crate) fn install() {
    for sig in SIGNALS.into_iter().filter(|&s| !ignored_at_start(s)) {
        // SAFETY: the action only touches atomics and calls write(2) and _exit(2), all
        // async-signal-safe.
        let _ = unsafe { signal_hook_registry::register(sig, move || on_signal(sig)) };
    }
}

/// Whether `sig` is ignored (inherited `SIG_IGN`, as under `nohup`).
fn ignored_at_start(sig: i32) -> bool {
    // SAFETY: sigaction with a null new action only reads the current one into `old`.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

fn on_signal(sig: i32) {
    let first = RECEIVED
        .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok();
    if !first || !GRACEFUL.load(Ordering::SeqCst) {
        // Tool servers go first: a hung one would outlive passk (it never reads the EOF).
        passk::mcp::process::kill_all();
        // SAFETY: _exit is async-signal-safe and ends the process without running anything else.
        unsafe { libc::_exit(128 + sig) };
    }
    STOP.store(true, Ordering::SeqCst);
    let msg: &[u8] =
        b"interrupted: finishing the conversation in flight (signal again to quit now); the same \
          command resumes\n";
    // SAFETY: write(2) on stderr with a static buffer; a closed stderr only makes it fail.
    let _ = unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
}

/// From now on the first signal asks for a graceful stop instead of exiting; returns the flag it
/// sets.
pub(crate) fn graceful() -> &'static AtomicBool {
    GRACEFUL.store(true, Ordering::SeqCst);
    if RECEIVED.load(Ordering::SeqCst) != 0 {
        STOP.store(true, Ordering::SeqCst);
    }
    &STOP
}

/// The first signal received, if any.
pub(crate) fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}
