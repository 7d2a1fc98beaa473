//! The model server's own process on this machine: the one listening on the port passk talks
//! to, found through `/proc/net/tcp{,6}` and the socket's owner in `/proc/<pid>/fd`, with its
//! child processes (Ollama runs each loaded model in a child runner). Never every process that
//! happens to share the server's name: other users' servers are not this run's.
//!
//! A server that runs as another user (Ollama's systemd service runs as `ollama`) hides its file
//! descriptors from passk; it is then not found, and its CPU and memory are recorded as absent.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// How often the listening process is looked up again (the server may restart).
const RESOLVE_EVERY: Duration = Duration::from_secs(2);

/// The processes listening on these TCP ports of this machine, with their descendants, sampled
/// with sysinfo.
pub struct ServerProcesses {
    ports: Vec<u16>,
    listeners: Vec<u32>,
    resolved_at: Option<Instant>,
    sys: sysinfo::System,
}

impl ServerProcesses {
    /// Samples the servers listening on `ports`; `None` when there is none to watch or sysinfo
    /// does not work here.
    pub fn new(ports: &[u16]) -> Option<ServerProcesses> {
        if ports.is_empty() {
            return None;
        }
        Some(ServerProcesses {
            ports: ports.to_vec(),
            listeners: Vec::new(),
            resolved_at: None,
            sys: sysinfo::System::new().ok()?,
        })
    }

    /// CPU (percent of one core) and resident memory (MiB) of the listening processes and their
    /// descendants, now; `(None, None)` when no listener was found.
    pub fn read(&mut self) -> (Option<f64>, Option<f64>) {
        if self
            .resolved_at
            .is_none_or(|at| at.elapsed() >= RESOLVE_EVERY)
        {
            self.listeners = self
                .ports
                .iter()
                .filter_map(|&p| listening_pid(p))
                .collect();
            self.resolved_at = Some(Instant::now());
        }
        if self.listeners.is_empty() {
            return (None, None);
        }
        // Processes, not their threads: sysinfo lists each thread of a process as a task with
        // the process as its parent and the process's whole memory, so counting them would
        // multiply the server's RSS by its thread count.
        self.sys.refresh_processes_specifics(
            sysinfo::ProcessesToUpdate::All,
            true,
            sysinfo::ProcessRefreshKind::nothing()
                .with_cpu()
                .with_memory()
                .without_tasks(),
        );
        let pids = with_descendants(&self.sys, &self.listeners);
        let procs: Vec<_> = pids
            .iter()
            .filter_map(|&p| self.sys.process(sysinfo::Pid::from_u32(p)))
            .collect();
        if procs.is_empty() {
            self.resolved_at = None;
            return (None, None);
        }
        let cpu = procs.iter().map(|p| f64::from(p.cpu_usage())).sum();
        let rss = procs.iter().map(|p| p.memory() as f64).sum::<f64>() / (1024.0 * 1024.0);
        (Some(cpu), Some(rss))
    }

    /// The processes the last reading covered (listeners and their descendants).
    pub fn pids(&self) -> BTreeSet<u32> {
        with_descendants(&self.sys, &self.listeners)
    }
}

/// `roots` and every process whose parent chain leads to one of them; threads are not processes.
fn with_descendants(sys: &sysinfo::System, roots: &[u32]) -> BTreeSet<u32> {
    let mut found: BTreeSet<u32> = roots.iter().copied().collect();
    loop {
        let before = found.len();
        for (pid, p) in sys.processes() {
            if p.thread_kind().is_none()
                && p.parent()
                    .is_some_and(|parent| found.contains(&parent.as_u32()))
            {
                found.insert(pid.as_u32());
            }
        }
        if found.len() == before {
            return found;
        }
    }
}

/// The process that owns the socket listening on TCP `port` of this machine (IPv4 or IPv6);
/// `None` when there is none, or its owner's file descriptors cannot be read.
pub fn listening_pid(port: u16) -> Option<u32> {
    let inodes: BTreeSet<u64> = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|table| listening_inodes(&table, port))
        .collect();
    if inodes.is_empty() {
        return None;
    }
    socket_owner(&inodes)
}

/// The inodes of the sockets listening on `port` in one `/proc/net/tcp` table.
fn listening_inodes(table: &str, port: u16) -> Vec<u64> {
    const LISTEN: &str = "0A";
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local_port = f.get(1)?.rsplit_once(':')?.1;
            let listening = *f.get(3)? == LISTEN;
            let matches = u16::from_str_radix(local_port, 16).ok()? == port;
            let inode = f.get(9)?.parse::<u64>().ok()?;
            (listening && matches && inode != 0).then_some(inode)
        })
        .collect()
}

/// The first process (lowest pid) holding one of these socket inodes open.
fn socket_owner(inodes: &BTreeSet<u64>) -> Option<u32> {
    let mut pids: Vec<u32> = std::fs::read_dir("/proc")
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort_unstable();
    pids.into_iter().find(|pid| {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            return false;
        };
        fds.filter_map(Result::ok).any(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|target| {
                target
                    .to_str()
                    .and_then(|t| t.strip_prefix("socket:[")?.strip_suffix(']'))
                    .and_then(|n| n.parse::<u64>().ok())
                    .is_some_and(|n| inodes.contains(&n))
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_listening_rows_of_a_proc_net_table() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:2CA2 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0 100 0 0 10 0\n\
   1: 0100007F:2CA2 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1 0 20 4 30 10 -1\n\
   2: 0100007F:2CA3 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4444 1 0 100 0 0 10 0\n";
        assert_eq!(listening_inodes(table, 11426), vec![4242]);
        assert_eq!(listening_inodes(table, 11427), vec![4444]);
        assert!(listening_inodes(table, 80).is_empty());
    }

    /// A server of 8 threads holding about 64 MiB, as `ollama serve` and its runners are
    /// multi-threaded: its memory is read once, not once a thread (the count `/proc`'s `VmRSS`
    /// gives). Skipped where `python3` is absent.
    #[test]
    fn a_multi_threaded_server_is_counted_once_not_once_a_thread() {
        const SERVER: &str = "import socket, sys, threading, time\n\
            s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n\
            block = bytearray(64 << 20)\n\
            for i in range(0, len(block), 4096): block[i] = 1\n\
            for _ in range(8): threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n\
            print(s.getsockname()[1], flush=True)\n\
            sys.stdin.read()\n";
        use std::io::{BufRead, BufReader};
        let Ok(mut child) = std::process::Command::new("python3")
            .args(["-c", SERVER])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
        else {
            use std::io::Write;
            let _ = std::io::stderr()
                .lock()
                .write_all(b"SKIPPED: a_multi_threaded_server_is_counted_once: no python3\n");
            return;
        };
        let mut line = String::new();
        let out = child.stdout.take().expect("stdout");
        BufReader::new(out).read_line(&mut line).expect("port");
        let port: u16 = line.trim().parse().expect("a port");
        let threads = std::fs::read_dir(format!("/proc/{}/task", child.id()))
            .expect("tasks")
            .count();
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", child.id())).expect("status");
        let vm_rss_kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .expect("VmRSS");
        let mut watch = ServerProcesses::new(&[port]).expect("sysinfo");
        let (_, rss) = watch.read();
        let _ = child.kill();
        let _ = child.wait();
        let rss = rss.expect("the server is found");
        let proc_mib = vm_rss_kib / 1024.0;
        assert!(threads >= 9, "{threads} threads");
        assert!(proc_mib > 60.0, "VmRSS {proc_mib} MiB");
        assert!(
            (rss - proc_mib).abs() <= 0.1 * proc_mib,
            "read {rss:.1} MiB, /proc says {proc_mib:.1} MiB over {threads} threads"
        );
        assert_eq!(
            watch.pids().len(),
            1,
            "one process, no thread: {:?}",
            watch.pids()
        );
    }

    #[test]
    fn finds_this_process_listening_on_its_port() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        assert_eq!(listening_pid(port), Some(std::process::id()));
        drop(listener);
        assert_eq!(
            listening_pid(port),
            None,
            "nobody listens once it is closed"
        );
    }
}
