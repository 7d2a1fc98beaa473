//! Tool-server processes that die with passk, however passk ends.
//!
//! Each server starts as the leader of a process group of its own, so that stopping it stops what
//! it started too, and with a parent-death signal (SIGKILL), so that the kernel kills it when passk
//! dies, SIGKILL included. Linux sends that signal when the *thread* that started the child ends,
//! so every server is started from one thread that lives as long as passk. A server is stopped by
//! killing its group ([`OwnedChild`]'s `Drop`); [`kill_all`] kills every group still running, from
//! a signal handler that exits at once.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Mutex, OnceLock};

/// Groups [`kill_all`] can reach; a server started while all are taken still dies with passk
/// (the parent-death signal) but is not killed by [`kill_all`].
const SLOTS: usize = 256;

/// The process groups running, 0 where free. Atomics, so that a signal handler may read them.
static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

/// A request to the starting thread: what to start, and where its answer goes.
type Start = (Command, Sender<io::Result<Child>>);

/// A child process in a group of its own; dropping it kills the group and reaps the child.
pub struct OwnedChild {
    child: Child,
    slot: Option<usize>,
}

impl OwnedChild {
    /// Starts `command` in a process group of its own, with SIGKILL as its parent-death signal.
    pub fn spawn(mut command: Command) -> io::Result<OwnedChild> {
        // SAFETY: the hook runs between fork and exec and calls only async-signal-safe functions.
        let parent = unsafe { libc::getpid() };
        unsafe {
            command.pre_exec(move || {
                if libc::setpgid(0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                die_with(parent)
            });
        }
        let child = start_on_lasting_thread(command)?;
        let slot = register(child.id() as i32);
        Ok(OwnedChild { child, slot })
    }

    /// The child, for its pipes and status.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Its process id, which is also its group's id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for OwnedChild {
    /// Kills the whole group, then reaps the child.
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            GROUPS[slot].store(0, Ordering::SeqCst);
        }
        kill_group(self.child.id() as i32);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Kills every group a live [`OwnedChild`] leads. Async-signal-safe (atomics and `kill(2)`), for a
/// signal handler that is about to `_exit`.
pub fn kill_all() {
    for slot in &GROUPS {
        let pgid = slot.swap(0, Ordering::SeqCst);
        if pgid > 0 {
            kill_group(pgid);
        }
    }
}

fn kill_group(pgid: i32) {
    // SAFETY: kill(2) with a negative pid signals that process group; a group already gone
    // makes it fail with ESRCH, which is what we want.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
}

/// In the child: asks for SIGKILL when the starting thread ends, unless passk is already gone.
#[cfg(target_os = "linux")]
fn die_with(parent: libc::pid_t) -> io::Result<()> {
    // SAFETY: prctl and getppid are async-signal-safe.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::getppid() != parent {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
    }
    Ok(())
}

/// Elsewhere there is no parent-death signal: the group is still killed on every exit passk sees.
#[cfg(not(target_os = "linux"))]
fn die_with(_parent: libc::pid_t) -> io::Result<()> {
    Ok(())
}

/// Starts `command` on the one thread kept for that, which lives as long as the process.
fn start_on_lasting_thread(command: Command) -> io::Result<Child> {
    static STARTER: OnceLock<Option<Mutex<Sender<Start>>>> = OnceLock::new();
    let starter = STARTER.get_or_init(|| {
        let (tx, rx) = channel::<Start>();
        std::thread::Builder::new()
            .name("passk-tool-servers".into())
            .spawn(move || {
                for (mut command, answer) in rx {
                    let _ = answer.send(command.spawn());
                }
            })
            .ok()
            .map(|_| Mutex::new(tx))
    });
    let Some(starter) = starter else {
        return Err(io::Error::other(
            "the thread that starts tool servers could not be started",
        ));
    };
    let (tx, rx) = channel();
    starter
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((command, tx))
        .map_err(|_| io::Error::other("the thread that starts tool servers is gone"))?;
    rx.recv()
        .map_err(|_| io::Error::other("the thread that starts tool servers is gone"))?
}

/// Takes a free slot for `pgid`.
fn register(pgid: i32) -> Option<usize> {
    GROUPS.iter().position(|slot| {
        slot.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn alive(pid: i32) -> bool {
        // A zombie (dead, not yet reaped) counts as gone.
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                !s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(false)
    }

    fn gone_within(pid: i32, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if !alive(pid) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// A shell that ignores SIGTERM and starts a grandchild that sleeps; prints the grandchild.
    fn stubborn() -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", "trap '' TERM; sleep 600 & echo $!; wait"])
            .stdout(std::process::Stdio::piped());
        c
    }

    // `kill_all` is tested through the binary (tests/mcp.rs): here it would kill the servers of
    // tests running beside this one.
    #[test]
    fn dropping_kills_the_whole_group() {
        use std::io::BufRead;
        let mut owned = OwnedChild::spawn(stubborn()).expect("spawn");
        let out = owned.child().stdout.take().expect("stdout");
        let mut line = String::new();
        std::io::BufReader::new(out)
            .read_line(&mut line)
            .expect("grandchild");
        let grandchild: i32 = line.trim().parse().expect("pid");
        let leader = owned.id() as i32;
        assert!(alive(grandchild) && alive(leader));
        drop(owned);
        assert!(!alive(leader), "the leader is reaped");
        assert!(
            gone_within(grandchild, Duration::from_secs(5)),
            "what the server started dies with it"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_started_from_a_short_lived_thread_outlives_that_thread() {
        let owned = std::thread::spawn(|| OwnedChild::spawn(stubborn()).expect("spawn"))
            .join()
            .expect("thread");
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            alive(owned.id() as i32),
            "the parent-death signal follows the starting thread, which must outlive the thread \
             that asked"
        );
    }
}
