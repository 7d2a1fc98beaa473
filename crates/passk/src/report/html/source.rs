//! Reads records whole, one line at a time, for `compare.html`: the statistics are computed from
//! records stripped of their text, while the page needs the shown trials' transcripts, so it turns
//! each wanted record into its line as it is read and keeps no record in memory. (`report.html`
//! makes its lines in the statistics' own pass over the records, see `trials`.)

use crate::report::ReportError;
use crate::runner::record::{ConversationRecord, Record};
use std::io::{BufRead, BufReader};
use std::path::Path;

/// Calls `f` with every conversation record of the JSONL file at `path`, in file order (see
/// [`each_record`]).
pub fn each_conversation(
    path: &Path,
    mut f: impl FnMut(ConversationRecord),
) -> Result<(), ReportError> {
    each_record(path, |r| {
        if let Record::Conversation(c) = r {
            f(*c);
        }
    })
}

/// Calls `f` with every record of the JSONL file at `path`, in file order. A torn last line (an
/// interrupted write, already reported by the analysis) is skipped; a missing file is no records.
pub fn each_record(path: &Path, mut f: impl FnMut(Record)) -> Result<(), ReportError> {
    let io = |source| ReportError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(e)),
    };
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    let mut line = 0;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(io)? == 0 {
            return Ok(());
        }
        line += 1;
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Record>(&buf) {
            Ok(record) => f(record),
            Err(_) if buf.last() != Some(&b'\n') => return Ok(()),
            Err(e) => {
                return Err(ReportError::Records {
                    path: path.to_path_buf(),
                    line,
                    message: e.to_string(),
                });
            }
        }
    }
}
