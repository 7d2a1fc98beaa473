//! Report generation at scale: the records of a calibration-sized oracle run (two models, store +
//! router + triage, k = 5), replicated 1x, 10x and 100x under new task ids (and 100x again with
//! a GPU reading on every call, as a machine with NVML records them), are read, summarized
//! (10,000 bootstrap resamples) and rendered (report.md, summary.json, conversations.csv, charts,
//! report.html and its transcript files) in a fresh process each, as `passk report` does, which
//! prints its wall and CPU time, peak resident memory and the page's size. Memory should grow with
//! the calls the statistics need, not with conversation text, and for a large run with the
//! largest task, not with the run: the records are read once, each trial's page line made as it
//! is read and set aside on disk, its transcript, end state and replies then dropped; a run over
//! 8 MiB of records sets the rest aside too and is summarized a task at a time, as running
//! totals (`report::summarized`); and the page is written as it is made. Where Chromium is on `PATH`, each
//! report.html is then opened in headless Chromium, which reports the time until the page is
//! drawn and the time to open a failing cell (its transcript file loaded, for a large run).
//!
//! Run with `cargo bench --bench report_scale` (`-- --keep` keeps the runs and prints where; then
//! `target/release/deps/report_scale-* measure DIR` measures one again and says the peak memory
//! after each step on standard error).

use passk::analysis::{AnalysisOptions, HOLD_UP_TO};
use passk::domain::Domain;
use passk::report::Exporter;
use passk::report::charts::charts;
use passk::report::csv::ConversationsCsv;
use passk::report::document;
use passk::report::html::REPORT_HTML;
use passk::report::html::report::write_report_page;
use passk::report::html::selftest::{find_chromium, run_selftest};
use passk::report::html::transcripts::{INLINE_MAX_BYTES, TRANSCRIPTS_DIR};
use passk::report::html::trials::TrialSet;
use passk::report::summarized::SummarizedRun;
use passk::runner::event::Collect;
use passk::runner::experiment::{self, Experiment};
use passk::runner::record::{CallRecord, GpuWindow, Record};
use passk::runner::settings::{RunSettings, SuiteChoice};
use passk::spill::LineSpill;
use passk_stub::{Behaviour, ScriptBook, StubConfig, StubServer};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "measure") {
        return measure(Path::new(&args[i + 1]));
    }
    let tmp = std::env::temp_dir().join(format!("passk-report-scale-{}", std::process::id()));
    let base = tmp.join("x1");
    generate(&base)?;
    let browser = find_chromium();
    println!(
        "    scale  conversations  model calls  seconds  CPU seconds  peak RSS (MiB)  report.html (MB)  transcripts (MB)  page drawn (ms)  cell opened (ms)"
    );
    // The last run is the 100x one with a GPU reading on every call, as a run on a machine with
    // NVML records them.
    for (scale, gpu) in [(1u32, false), (10, false), (100, false), (100, true)] {
        let name = format!("x{scale}{}", if gpu { "-gpu" } else { "" });
        let dir = tmp.join(&name);
        if scale > 1 || gpu {
            replicate(&base, &dir, scale, gpu)?;
        }
        let out = std::process::Command::new(std::env::current_exe()?)
            .args(["measure", &dir.display().to_string()])
            .output()?;
        print!(
            "{:>9}  {}",
            format!("{scale}x{}", if gpu { " gpu" } else { "" }),
            String::from_utf8_lossy(&out.stdout).trim_end()
        );
        println!("  {}", in_browser(browser.as_deref(), &dir));
        if !out.status.success() {
            eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        }
    }
    if args.iter().any(|a| a == "--keep") {
        println!("runs kept in {}", tmp.display());
    } else {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    Ok(())
}

/// The oracle pass of `passk calibrate`, against the in-process stub.
fn generate(dir: &Path) -> Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let store = passk::suites::store::load_store(&root)?;
    let triage = passk::suites::triage::load_triage(&root)?;
    let router = passk::suites::router::load_router(&root)?;
    let mut tasks = store.tasks().to_vec();
    tasks.extend(triage.tasks().iter().cloned());
    let mut book = ScriptBook::from_suites(&tasks, Some(&router));
    book.set_example_values(&store.example_values());
    let rt = tokio::runtime::Runtime::new()?;
    let config = StubConfig::with_script(book)
        .model("oracle-small", Behaviour::Oracle)
        .model("oracle-large", Behaviour::Oracle);
    let stub = rt.block_on(StubServer::start(config))?;
    let exp = Experiment {
        settings: RunSettings {
            models: vec!["oracle-small".into(), "oracle-large".into()],
            suites: vec![SuiteChoice::Store, SuiteChoice::Router, SuiteChoice::Triage],
            ..RunSettings::default()
        },
        root,
        hosts: vec![stub.base_url()],
        run_dir: dir.to_path_buf(),
        backend: passk::runner::experiment::Backend::Stub,
        experiment_file: None,
        telemetry: false,
        resume: Default::default(),
    };
    rt.block_on(experiment::run(
        &exp,
        &Collect::default(),
        &passk::analysis::planning::stopping::SequenceJudge,
        &AtomicBool::new(false),
    ))?;
    rt.block_on(stub.shutdown());
    Ok(())
}

/// Copies `base` `times` times over, each copy under new task ids (router: new message indexes),
/// which the manifest's task lists name, as the record reader checks; with `gpu`, every call
/// gets a GPU window with every reading.
fn replicate(base: &Path, dir: &Path, times: u32, gpu: bool) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(base.join("manifest.json"))?)?;
    if let Some(suites) = manifest["suite_tasks"].as_object_mut() {
        for (suite, tasks) in suites.iter_mut() {
            let ids: Vec<String> = tasks
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect();
            let copies = (0..times).flat_map(|copy| {
                ids.iter().map(move |t| match t.parse::<u32>() {
                    Ok(i) if suite == "router" => (i + 1000 * copy).to_string(),
                    _ => format!("{t}~{copy:03}"),
                })
            });
            *tasks = copies.collect::<Vec<_>>().into();
        }
    }
    std::fs::write(dir.join("manifest.json"), serde_json::to_vec(&manifest)?)?;
    for name in ["conversations.jsonl", "router.jsonl"] {
        let lines: Vec<String> = BufReader::new(std::fs::File::open(base.join(name))?)
            .lines()
            .collect::<std::io::Result<_>>()?;
        let mut out = BufWriter::new(std::fs::File::create(dir.join(name))?);
        for copy in 0..times {
            for line in &lines {
                let mut record: Record = serde_json::from_str(line)?;
                match &mut record {
                    Record::Conversation(c) => c.task = format!("{}~{copy:03}", c.task),
                    Record::Router(r) => r.index += 1000 * copy,
                }
                if gpu {
                    let calls: Vec<&mut CallRecord> = match &mut record {
                        Record::Conversation(c) => c.calls.iter_mut().collect(),
                        Record::Router(r) => vec![&mut r.call],
                    };
                    for (i, x) in calls.into_iter().enumerate() {
                        x.gpu = Some(Box::new(gpu_window(copy as usize * 7 + i)));
                    }
                }
                serde_json::to_writer(&mut out, &record)?;
                out.write_all(b"\n")?;
            }
        }
    }
    Ok(())
}

/// Reads, summarizes and renders one run as `passk report` does (one pass over the records, the
/// page streamed to disk); prints its size, wall time and peak RSS.
fn measure(dir: &Path) -> Result<()> {
    let started = Instant::now();
    let out_dir = dir.join("report");
    std::fs::create_dir_all(&out_dir)?;
    let mut trials = TrialSet::new(LineSpill::create(&out_dir.join(".trial-lines.tmp"))?);
    let (mut records, mut calls) = (0, 0);
    let read = SummarizedRun::read(
        dir,
        &out_dir,
        HOLD_UP_TO,
        AnalysisOptions::for_manifest,
        &mut |r| {
            records += 1;
            calls += match r {
                Record::Conversation(c) => c.calls.len(),
                Record::Router(_) => 1,
            };
            trials.add_record(r)
        },
    )?;
    phase("records read and summarized");
    let summary = &read.summary;
    let report = read.report();
    let charts = charts(&report);
    let markdown = document::markdown(&report);
    phase("charts and markdown");
    let trials = trials.finish(summary)?;
    phase("trials placed");
    let page = write_report_page(
        &out_dir,
        &report,
        (&markdown, &charts),
        trials,
        INLINE_MAX_BYTES,
    )?;
    phase("page written");
    // The CSV is streamed, as `passk report` copies it to its file, not rendered in memory.
    let mut csv = ByteCount(0);
    ConversationsCsv.write_to(&report, &mut csv)?;
    let bytes = markdown.len()
        + serde_json::to_vec(summary)?.len()
        + csv.0
        + charts.iter().map(|c| c.svg.len()).sum::<usize>();
    phase("other files rendered");
    page.commit()?;
    let elapsed = started.elapsed().as_secs_f64();
    assert!(bytes > 0);
    println!(
        "{records:>13}  {calls:>11}  {elapsed:>7.2}  {:>11.2}  {}  {:>16.1}  {:>16.1}",
        cpu_seconds(),
        peak_rss_mib().map_or("n/a".into(), |m| format!("{m:>14.1}")),
        file_mb(&out_dir.join(REPORT_HTML)),
        dir_mb(&out_dir.join(TRANSCRIPTS_DIR)),
    );
    Ok(())
}

/// A GPU window with every reading, its values varying with `i`.
fn gpu_window(i: usize) -> GpuWindow {
    let f = (i % 97) as f64;
    GpuWindow {
        samples: 3,
        util_mean: Some(40.0 + f / 2.0),
        util_max: Some(60.0 + f / 3.0),
        mem_used_mib: Some(5_000.0 + f),
        power_w: Some(120.0 + f),
        energy_j: Some(2.0 + f / 50.0),
        server_cpu_pct: Some(90.0 + f / 10.0),
        server_rss_mib: Some(700.0 + f),
        ..GpuWindow::default()
    }
}

/// A writer that only counts the bytes written to it.
struct ByteCount(usize);

impl Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A file's size, MB (0 when absent).
fn file_mb(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1e6)
}

/// The total size of a folder's files, MB (0 when absent).
fn dir_mb(path: &Path) -> f64 {
    std::fs::read_dir(path).map_or(0.0, |entries| {
        entries.flatten().map(|e| file_mb(&e.path())).sum()
    })
}

/// The page's own load and click times in headless Chromium, or why there are none.
fn in_browser(browser: Option<&Path>, dir: &Path) -> String {
    let Some(browser) = browser else {
        return "(no chromium on PATH)".into();
    };
    let profile = dir.join("chromium-profile");
    let page = dir.join("report").join(REPORT_HTML);
    match run_selftest(
        browser,
        &page,
        &profile,
        std::time::Duration::from_secs(300),
    ) {
        Ok(r) if r["errors"] == 0 && r["last_trial_matches"] == true => format!(
            "{:>15}  {:>15}",
            r["load_ms"].to_string(),
            r["click_ms"].to_string()
        ),
        Ok(r) => format!("page errors: {r}"),
        Err(e) => e,
    }
}

/// User and system CPU time of this process so far, seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct it is given and reads nothing else.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// Says on standard error the peak and current resident memory after a step, and the heap in use
/// (`mallinfo2`: the bytes malloc has handed out and not had back, so the rest of the resident
/// memory is freed space malloc keeps), `measure` alone shows them; the table leaves them out.
fn phase(step: &str) {
    let now = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?.to_string();
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        });
    // SAFETY: mallinfo2 only reads malloc's own counters.
    let heap = unsafe { libc::mallinfo2() };
    eprintln!(
        "{step}: peak {:.1} MiB, now {:.1} MiB, heap in use {:.1} MiB",
        peak_rss_mib().unwrap_or(f64::NAN),
        now.map_or(f64::NAN, |k| k / 1024.0),
        (heap.uordblks + heap.hblkhd) as f64 / f64::from(1 << 20)
    );
}

/// Peak resident memory of this process (Linux), MiB.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}
