//! Drives a page's self-test in headless Chromium: the page, opened from disk with the `#selftest`
//! hash, clicks its first failing cell and writes what it saw (console errors, cells, the opened
//! trial, load and click times) as JSON into `#selftest-result`; this reads it back from the
//! dumped DOM. Used by the browser test and the `report_scale` bench; needs no driver crate.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The Chromium binary on `PATH` (`chromium`, `chromium-browser` or `google-chrome`), if any.
pub fn find_chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find(|name| {
            Command::new(name)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .map(PathBuf::from)
}

/// Loads `page#selftest` in headless Chromium (no network, a fresh profile in `profile`) and
/// returns the page's self-test result; an error says why none came back.
pub fn run_selftest(
    browser: &Path,
    page: &Path,
    profile: &Path,
    timeout: Duration,
) -> Result<Value, String> {
    let url = format!("file://{}#selftest", page.display());
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", browser.display()))?;
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let reader = std::thread::spawn(move || {
        let mut dom = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut dom).map(|_| dom)
    });
    let started = Instant::now();
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("chromium took more than {timeout:?} on {url}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let dom = reader
        .join()
        .map_err(|_| "reader panicked".to_string())?
        .map_err(|e| e.to_string())?;
    result_of(&dom).ok_or_else(|| {
        let head: String = dom.chars().take(2000).collect();
        format!("no self-test result in the DOM of {url}:\n{head}")
    })
}

/// The JSON in the `data-result` attribute of `#selftest-result`, unescaped.
fn result_of(dom: &str) -> Option<Value> {
    let attr = dom
        .split("id=\"selftest-result\"")
        .nth(1)?
        .split("data-result=\"")
        .nth(1)?
        .split('"')
        .next()?;
    let json = attr
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_result_attribute_back() {
        let dom = r#"<div id="selftest-result" data-result="{&quot;cells&quot;:4,&quot;r&quot;:[&quot;a &amp; b&quot;]}">x</div>"#;
        let v = result_of(dom).expect("result");
        assert_eq!(v["cells"], 4);
        assert_eq!(v["r"][0], "a & b");
        assert!(result_of("<div id=\"selftest-result\">").is_none());
    }
}
