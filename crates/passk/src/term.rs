//! Lines for the terminal that never stop the program: a closed stdout or stderr (`| head`,
//! `2>&-`) makes a write fail with a broken pipe, and `println!` would panic on it. Output is
//! best-effort; the work and its exit code do not depend on anyone reading.

use std::io::Write;

/// Writes `text` and a newline to stdout, ignoring a closed or failing stdout.
pub fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "{text}").and_then(|()| o.flush());
}

/// Writes `text` and a newline to stderr, ignoring a closed or failing stderr.
pub fn err(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// `println!` that ignores a closed stdout.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::term::out(&format!($($arg)*))
    };
}

/// `eprintln!` that ignores a closed stderr.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::term::err(&format!($($arg)*))
    };
}
