//! How much rime reads from the user's files: a graph file and an input tensor file each have
//! a maximum size, set for the whole invocation by global options (`rime --max-graph-bytes 1G
//! validate ...`), so that no file — `/dev/zero`, a pipe that never ends, a file of the wrong
//! kind — makes a command read forever or run out of memory.

use std::sync::OnceLock;

/// Largest graph file read by default: the graph crate's default (256 MiB).
pub const DEFAULT_GRAPH_BYTES: u64 = rime_graph::json::DEFAULT_MAX_FILE_BYTES;

/// Largest `--inputs` file read by default: 64 GiB. Input files are read into memory, so
/// `rime run` also counts them against its memory budget (`--max-memory`).
pub const DEFAULT_INPUT_BYTES: u64 = 64 << 30;

/// The global options that set the limits.
#[derive(Debug, Clone, clap::Args)]
pub struct LimitArgs {
    /// Largest graph file to read (bytes; K, M, G, T suffixes are powers of 1024).
    #[arg(long, global = true, value_parser = parse_bytes, default_value = "256M")]
    pub max_graph_bytes: u64,
    /// Largest `--inputs` tensor file to read (bytes; K, M, G, T suffixes).
    #[arg(long, global = true, value_parser = parse_bytes, default_value = "64G")]
    pub max_input_bytes: u64,
}

/// The limits in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest graph file.
    pub graph_bytes: u64,
    /// Largest input tensor file.
    pub input_bytes: u64,
}

static LIMITS: OnceLock<Limits> = OnceLock::new();

impl Limits {
    /// Sets the limits of this invocation (once, from `main`).
    pub fn set(args: &LimitArgs) {
        let _ = LIMITS.set(Limits {
            graph_bytes: args.max_graph_bytes,
            input_bytes: args.max_input_bytes,
        });
    }

    /// The limits of this invocation (the defaults until `set`).
    pub fn get() -> Limits {
        LIMITS.get().copied().unwrap_or(Limits {
            graph_bytes: DEFAULT_GRAPH_BYTES,
            input_bytes: DEFAULT_INPUT_BYTES,
        })
    }
}

/// A byte count: digits with an optional K, M, G or T suffix (powers of 1024; `KiB`, `MB`
/// and friends are read the same way), e.g. `512M`, `2GiB`, `1048576`.
///
/// # Errors
/// Text that is not such a count, or one that overflows 64 bits.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => {
            return Err(format!(
                "`{text}`: expected bytes such as 1048576, 512M or 2G"
            ))
        }
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}`: expected bytes such as 1048576, 512M or 2G"))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("`{text}` does not fit in 64 bits"))
}

/// `n` bytes for messages: exact, with a binary-unit reading when large.
pub fn human(n: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    match UNITS.iter().find(|(size, _)| n >= *size) {
        // Shown with one decimal; the exact count comes first, so rounding loses nothing.
        Some((size, unit)) => format!("{n} B ({:.1} {unit})", n as f64 / *size as f64),
        None => format!("{n} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        for (text, want) in [
            ("0", 0),
            ("1048576", 1 << 20),
            ("256M", 256 << 20),
            ("2GiB", 2 << 30),
            ("3 kb", 3 << 10),
            ("1T", 1 << 40),
        ] {
            assert_eq!(parse_bytes(text), Ok(want), "{text}");
        }
        for bad in ["", "M", "1.5G", "-1", "12X", "99999999999T"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
        assert_eq!(human(512), "512 B");
        assert_eq!(human(3 << 29), "1610612736 B (1.5 GiB)");
    }
}
