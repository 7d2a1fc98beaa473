//! Where `report.html` keeps its trials' details lines. Up to [`INLINE_MAX_BYTES`] of lines (or
//! the size asked for) the
//! page carries them itself (one self-contained file). Above that, the page holds the grid, the
//! charts and the tables, and the lines go to script files beside it in [`TRANSCRIPTS_DIR`], about
//! [`CHUNK_BYTES`] each, in row order; the page loads the file of a trial when the trial is opened,
//! by adding a `<script src>` element, which a page opened from disk (`file://`) may do where it
//! may not fetch. Each file is one call: `passkTranscripts(N, [line, line, ...]);`.

use super::trials::TrialData;
use crate::report::ReportError;
use serde::Serialize;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// The folder beside `report.html` that holds its transcript files, when it has them.
pub const TRANSCRIPTS_DIR: &str = "report-transcripts";

/// The most bytes of details lines a page carries itself unless told otherwise (`passk report
/// --inline-transcripts-mib`, 16 MiB): a page up to about this size opens in a browser in well
/// under a second and can be mailed; above it the lines go to [`TRANSCRIPTS_DIR`].
pub const INLINE_MAX_BYTES: u64 = 16 << 20;

/// About how many bytes of lines each transcript file holds (a file is closed at the first line
/// that takes it past this): small enough to load and parse in a few milliseconds.
pub const CHUNK_BYTES: u64 = 1 << 20;

/// What the page needs to find a line in the transcript files (`D.sidecar`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sidecar {
    /// The folder, relative to the page.
    pub dir: &'static str,
    /// The first line of each file, in file order (file `N` is `NNNN.js`).
    pub starts: Vec<usize>,
}

/// The transcript files for `trials`, or `None` when the page carries its lines itself (they
/// take at most `inline_max` bytes).
pub fn sidecar(trials: &TrialData, inline_max: u64) -> Option<Sidecar> {
    (trials.line_bytes() > inline_max).then(|| chunks(trials.lines.iter().map(|l| l.len())))
}

/// Splits lines of the given lengths into files of about [`CHUNK_BYTES`].
fn chunks(lengths: impl Iterator<Item = u64>) -> Sidecar {
    let mut starts = Vec::new();
    let mut filled = CHUNK_BYTES;
    for (n, len) in lengths.enumerate() {
        if filled >= CHUNK_BYTES {
            starts.push(n);
            filled = 0;
        }
        filled += len;
    }
    Sidecar {
        dir: TRANSCRIPTS_DIR,
        starts,
    }
}

/// The file name of transcript file `n`.
pub fn chunk_file(n: usize) -> String {
    format!("{n:04}.js")
}

/// Writes the transcript files `sidecar` plans into `dir`, which must exist.
pub fn write_chunks(
    dir: &Path,
    sidecar: &Sidecar,
    trials: &mut TrialData,
) -> Result<(), ReportError> {
    let mut file: Option<BufWriter<File>> = None;
    let mut next = 0;
    let written = trials
        .each_line(|n, line| {
            if sidecar.starts.get(next) == Some(&n) {
                close(file.take())?;
                let mut out =
                    BufWriter::with_capacity(1 << 16, File::create(dir.join(chunk_file(next)))?);
                writeln!(out, "passkTranscripts({next}, [")?;
                file = Some(out);
                next += 1;
            } else if let Some(out) = file.as_mut() {
                out.write_all(b",\n")?;
            }
            file.as_mut().map_or(Ok(()), |out| out.write_all(line))
        })
        .and_then(|()| close(file));
    written.map_err(|source| ReportError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

/// Ends a transcript file.
fn close(file: Option<BufWriter<File>>) -> std::io::Result<()> {
    match file {
        Some(mut out) => {
            out.write_all(b"\n]);\n")?;
            out.flush()
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_start_where_the_last_one_filled_up() {
        let s = chunks([CHUNK_BYTES / 2, CHUNK_BYTES / 2, 10, CHUNK_BYTES * 3, 1].into_iter());
        assert_eq!(s.starts, [0, 2, 4]);
        assert_eq!(chunks(std::iter::empty()).starts, Vec::<usize>::new());
        assert_eq!(chunk_file(7), "0007.js");
    }
}
