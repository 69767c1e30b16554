//! Files rime writes for the user. An output path is checked before any work starts: it must
//! not be (through a symlink or a hard link) one of the files the command reads, and its
//! directory must take a new file, which is reserved right away. The content then goes to
//! that temporary file next to the target, is synced and renamed over the target: a full
//! disk, an error or a killed process never leaves a truncated output or touches an existing
//! file (a killed process may leave the hidden temporary file behind).
//!
//! A path that exists and is not a regular file (`/dev/null`, a pipe) is a stream: it is
//! written in place, as there is nothing to replace atomically. A path that is this process's
//! own standard input, output or error (`/dev/stdout`, `/proc/self/fd/2`, a file or pipe they
//! are redirected to) is refused: rime prints there, so the two would interleave, and
//! replacing the redirected file would lose what the stream had appended to it. A character
//! device (`/dev/null`, a terminal) is exempt: nothing there can be lost.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use rime_graph::shown_text;

/// An output reserved by [`OutputFile::prepare`], written by [`OutputFile::write`].
#[derive(Debug)]
pub struct OutputFile {
    /// The path as the user gave it (for messages).
    shown: String,
    /// Where the content ends up (symlinks resolved).
    target: PathBuf,
    /// Where the content goes first; `None` once written.
    sink: Option<Sink>,
    /// Permissions of the file being replaced, kept on the new one.
    keep: Option<std::fs::Permissions>,
}

#[derive(Debug)]
enum Sink {
    /// A temporary file next to the target, renamed over it when complete.
    Temp(PathBuf, File),
    /// A device or pipe, written in place.
    Stream(File),
}

/// True when `a` and `b` name the same existing file (same device and inode on Unix, the same
/// canonical path elsewhere).
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Refuses `path` when it is one of `reads`, the files the command reads.
fn refuse_reads(shown: &str, path: &Path, reads: &[(&str, &Path)]) -> anyhow::Result<()> {
    for (what, read) in reads {
        if same_file(path, read) {
            bail!(
                "refusing to write outputs to {shown}: it is {what} ({}), which this command reads",
                shown_text(&read.display().to_string())
            );
        }
    }
    Ok(())
}

/// Which of this process's standard streams `path` is (the same file, pipe or socket); a
/// character device is never reported, as nothing written there can be lost.
fn standard_stream(path: &Path) -> Option<&'static str> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let given = std::fs::metadata(path).ok()?;
        if given.file_type().is_char_device() {
            return None;
        }
        let stat = |fd: std::os::fd::BorrowedFd<'_>| {
            let m = File::from(fd.try_clone_to_owned().ok()?).metadata().ok()?;
            Some((m.dev(), m.ino()))
        };
        let (stdin, stdout, stderr) = (std::io::stdin(), std::io::stdout(), std::io::stderr());
        let same = |fd| stat(fd) == Some((given.dev(), given.ino()));
        if same(stdin.as_fd()) {
            return Some("standard input");
        }
        if same(stdout.as_fd()) {
            return Some("standard output");
        }
        if same(stderr.as_fd()) {
            return Some("standard error");
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    None
}

/// Where writing to `path` lands: the file a symlink chain points to, or `path` in its
/// (canonical) directory when nothing is there yet.
fn resolve(path: &Path) -> anyhow::Result<PathBuf> {
    if let Ok(target) = std::fs::canonicalize(path) {
        return Ok(target);
    }
    // A dangling symlink: write where it points.
    let path = match std::fs::read_link(path) {
        Ok(to) if to.is_absolute() => to,
        Ok(to) => path.parent().unwrap_or(Path::new("")).join(to),
        Err(_) => path.to_owned(),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", shown_text(&path.display().to_string())))?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = std::fs::canonicalize(parent).with_context(|| {
        format!(
            "cannot write {}: directory {} does not exist",
            shown_text(&path.display().to_string()),
            shown_text(&parent.display().to_string())
        )
    })?;
    Ok(dir.join(name))
}

impl OutputFile {
    /// Reserves `path` for output. `reads` are the files the command reads, each with what
    /// it is ("the graph", "--inputs"), none of which the output may be.
    ///
    /// # Errors
    /// The path is a directory or one of `reads`, or its directory does not exist or does not
    /// take a new file.
    pub fn prepare(path: &Path, reads: &[(&str, &Path)]) -> anyhow::Result<OutputFile> {
        let shown = shown_text(&path.display().to_string()).to_string();
        // Before anything is opened for writing: opening a FIFO the command reads would block,
        // and holding a write end of its own input pipe would keep that input from ending.
        refuse_reads(&shown, path, reads)?;
        if let Some(stream) = standard_stream(path) {
            bail!(
                "refusing to write outputs to {shown}: it is this command's {stream} (rime reads \
                 or prints there); name a file instead"
            );
        }
        // A device or pipe is opened as the path names it (`/dev/fd/N` of a pipe has no
        // canonical path), now, so that a refusal comes before any work.
        if let Ok(m) = std::fs::metadata(path) {
            if !m.is_file() && !m.is_dir() {
                let file = OpenOptions::new()
                    .write(true)
                    .open(path)
                    .with_context(|| format!("cannot write outputs to {shown}"))?;
                return Ok(OutputFile {
                    shown,
                    target: path.to_owned(),
                    sink: Some(Sink::Stream(file)),
                    keep: None,
                });
            }
        }
        // (`path` was compared with `reads` above: `same_file` follows links, so the resolved
        // target is the same file, or, for a new file, none that is read.)
        let target = resolve(path)?;
        let existing = std::fs::metadata(&target).ok();
        if existing.as_ref().is_some_and(|m| m.is_dir()) {
            bail!("cannot write outputs to {shown}: it is a directory");
        }
        let dir = target.parent().unwrap_or(Path::new("."));
        let name = target.file_name().unwrap_or_default().to_string_lossy();
        // The temporary name adds up to 21 bytes to its copy of the target's name: cut to 200
        // bytes, it fits where names of 255 bytes (the usual limit) do.
        let mut cut = name.len().min(200);
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        let stem = &name[..cut];
        for n in 0..100u32 {
            let temp = dir.join(format!(".{stem}.rime-{}-{n}.tmp", std::process::id()));
            match OpenOptions::new().write(true).create_new(true).open(&temp) {
                Ok(file) => {
                    return Ok(OutputFile {
                        shown,
                        target,
                        sink: Some(Sink::Temp(temp, file)),
                        keep: existing.map(|m| m.permissions()),
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => bail!(
                    "cannot write outputs to {shown}: cannot create a file in {}: {e}",
                    shown_text(&dir.display().to_string())
                ),
            }
        }
        bail!("cannot write outputs to {shown}: no free temporary name in its directory")
    }

    /// The path as given, for messages.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Writes the content through `fill`, then puts it in place: synced and renamed over the
    /// target for a file, flushed for a stream. On any error the target is untouched.
    ///
    /// # Errors
    /// What `fill` returns, or the write, sync or rename failing (e.g. a full disk).
    pub fn write(
        mut self,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        let shown = self.shown.clone();
        let failed = |e: std::io::Error| anyhow::anyhow!("writing {shown}: {e}");
        match self.sink.take().context("output written twice")? {
            Sink::Stream(file) => {
                let mut out = BufWriter::with_capacity(1 << 20, file);
                fill(&mut out).and_then(|()| out.flush()).map_err(failed)
            }
            Sink::Temp(temp, file) => {
                let mut out = BufWriter::with_capacity(1 << 20, file);
                let placed = fill(&mut out)
                    .and_then(|()| out.flush())
                    .and_then(|()| out.get_ref().sync_all())
                    .and_then(|()| match &self.keep {
                        Some(p) => std::fs::set_permissions(&temp, p.clone()),
                        None => Ok(()),
                    })
                    .and_then(|()| std::fs::rename(&temp, &self.target));
                if let Err(e) = placed {
                    let _ = std::fs::remove_file(&temp);
                    return Err(failed(e));
                }
                // Make the rename durable; a directory that cannot be synced is no error.
                if let Some(d) = self.target.parent().and_then(|d| File::open(d).ok()) {
                    let _ = d.sync_all();
                }
                Ok(())
            }
        }
    }
}

impl Drop for OutputFile {
    /// An output never written (an error came first) leaves nothing behind.
    fn drop(&mut self) {
        if let Some(Sink::Temp(temp, _)) = self.sink.take() {
            let _ = std::fs::remove_file(temp);
        }
    }
}
