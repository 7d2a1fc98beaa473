//! Lines set aside on disk as they are made and read back by where they lie, in any order: memory
//! holds where each line is, not the line. A report sets aside `report.html`'s trial lines (each
//! record's line written once, while the records are read for the statistics, and read back in
//! the grid's order) and a large run's stripped records (read back a task at a time).

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Where one line sits in the spill file; lines order as they were written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineRef {
    offset: u64,
    len: u32,
}

impl LineRef {
    /// The line's length in bytes.
    pub fn len(self) -> u64 {
        u64::from(self.len)
    }

    /// Whether the line is empty.
    pub fn is_empty(self) -> bool {
        self.len == 0
    }
}

/// The spill file being written; removed when dropped unfinished (or when finishing fails).
#[derive(Debug)]
pub struct LineSpill {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    written: u64,
}

impl LineSpill {
    /// Creates (or empties) the spill file at `path`.
    pub fn create(path: &Path) -> std::io::Result<LineSpill> {
        let file = File::create(path)?;
        Ok(LineSpill {
            path: path.to_path_buf(),
            out: Some(BufWriter::with_capacity(1 << 16, file)),
            written: 0,
        })
    }

    /// Appends `line`; returns where it is.
    pub fn push(&mut self, line: &str) -> std::io::Result<LineRef> {
        let len = u32::try_from(line.len()).map_err(std::io::Error::other)?;
        let out = self.out.as_mut().ok_or(std::io::ErrorKind::BrokenPipe)?;
        out.write_all(line.as_bytes())?;
        let at = LineRef {
            offset: self.written,
            len,
        };
        self.written += u64::from(len);
        Ok(at)
    }

    /// The spill file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Ends writing; the lines can then be read back.
    pub fn finish(mut self) -> std::io::Result<SpilledLines> {
        // Taken out, the writer is flushed and closed here; the file is then the reader's to remove.
        let out = self.out.take().ok_or(std::io::ErrorKind::BrokenPipe)?;
        out.into_inner()
            .map_err(|e| e.into_error())
            .and_then(|mut f| f.flush())?;
        let file = File::open(&self.path)?;
        // The file is now the reader's to remove.
        let path = std::mem::take(&mut self.path);
        Ok(SpilledLines { path, file })
    }
}

impl Drop for LineSpill {
    fn drop(&mut self) {
        // Unfinished, or finishing failed: the file goes with the writer.
        drop(self.out.take());
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The written spill file, read back a line at a time; removed when dropped.
#[derive(Debug)]
pub struct SpilledLines {
    path: PathBuf,
    file: File,
}

impl SpilledLines {
    /// The spill file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the line at `at` into `buf` (replacing what it held).
    pub fn read(&self, at: LineRef, buf: &mut Vec<u8>) -> std::io::Result<()> {
        buf.clear();
        buf.resize(at.len as usize, 0);
        let mut file = &self.file;
        file.seek(SeekFrom::Start(at.offset))?;
        file.read_exact(buf)
    }
}

impl Drop for SpilledLines {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_come_back_in_any_order_and_the_file_goes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lines.tmp");
        let mut spill = LineSpill::create(&path).unwrap();
        let a = spill.push(r#"{"a":1}"#).unwrap();
        let b = spill.push(r#"{"bb":22}"#).unwrap();
        let back = spill.finish().unwrap();
        let mut buf = Vec::new();
        back.read(b, &mut buf).unwrap();
        assert_eq!(buf, br#"{"bb":22}"#);
        back.read(a, &mut buf).unwrap();
        assert_eq!(buf, br#"{"a":1}"#);
        assert_eq!(a.len() + b.len(), 16);
        drop(back);
        assert!(!path.exists());
    }
}
