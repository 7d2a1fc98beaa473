//! A loopback stand-in for NVIDIA's dcgm-exporter: it serves a recorded scrape, with each
//! scrape's answer chosen by a script (counters that advance, a scrape that fails, a reset).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;

/// A recorded scrape of dcgm-exporter 3.3 (default counters) on a two-GPU machine.
pub(crate) const RECORDED: &str = include_str!("../data/dcgm-exporter-2gpu.prom");

/// The energy counters of [`RECORDED`], millijoules, GPU 0 then GPU 1.
pub(crate) const RECORDED_ENERGY_MJ: [u64; 2] = [12_345_678_901, 98_765_432_101];

/// What one scrape answers.
pub(crate) enum Answer {
    /// 200 with this body.
    Body(String),
    /// This HTTP status with an empty body.
    Status(u16),
}

/// [`RECORDED`] with GPU `gpu`'s energy counter set to `mj`.
pub(crate) fn with_energy(gpu: usize, mj: u64) -> String {
    RECORDED.replace(&RECORDED_ENERGY_MJ[gpu].to_string(), &mj.to_string())
}

/// The exporter: answers scrape number n (from 0) with `script(n)` until dropped.
pub(crate) struct Exporter {
    port: u16,
    stop: Arc<AtomicBool>,
    scrapes: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Exporter {
    /// Starts it on a free loopback port.
    pub(crate) fn start(script: impl Fn(u64) -> Answer + Send + 'static) -> Exporter {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let stop = Arc::new(AtomicBool::new(false));
        let scrapes = Arc::new(AtomicU64::new(0));
        let thread = {
            let (stop, scrapes) = (Arc::clone(&stop), Arc::clone(&scrapes));
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    if let Ok(s) = stream {
                        answer(s, &script(scrapes.fetch_add(1, Ordering::SeqCst)));
                    }
                }
            })
        };
        Exporter {
            port,
            stop,
            scrapes,
            thread: Some(thread),
        }
    }

    /// Its metrics URL.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/metrics", self.port)
    }

    /// Scrapes answered so far.
    pub(crate) fn scrapes(&self) -> u64 {
        self.scrapes.load(Ordering::SeqCst)
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads one request's head and writes the answer, closing the connection.
fn answer(mut s: TcpStream, answer: &Answer) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
        match s.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let (status, body) = match answer {
        Answer::Body(b) => (200, b.as_str()),
        Answer::Status(code) => (*code, ""),
    };
    let _ = write!(
        s,
        "HTTP/1.1 {status} X\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}
