//! Host memory: what an execution needs (so that a caller can refuse before it starts), how
//! much the machine has, and allocation that reports failure instead of aborting.

use std::fmt;

use crate::EngineError;

/// One use of memory: what it is for (a tensor's name, an engine's scratch) and its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryItem {
    /// What the memory holds, for messages.
    pub what: String,
    /// Bytes.
    pub bytes: u64,
}

/// Memory needs, item by item.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryNeeds {
    /// The items, in the order they were added.
    pub items: Vec<MemoryItem>,
}

impl MemoryNeeds {
    /// No needs.
    pub fn new() -> MemoryNeeds {
        MemoryNeeds::default()
    }

    /// Adds `bytes` for `what` (nothing for zero bytes).
    pub fn add(&mut self, what: impl Into<String>, bytes: u64) -> &mut Self {
        if bytes > 0 {
            self.items.push(MemoryItem {
                what: what.into(),
                bytes,
            });
        }
        self
    }

    /// Adds every item of `other`.
    pub fn extend(&mut self, other: MemoryNeeds) -> &mut Self {
        self.items.extend(other.items);
        self
    }

    /// The sum (saturating: a need beyond 2^64 bytes is refused all the same).
    pub fn total(&self) -> u64 {
        self.items
            .iter()
            .fold(0u64, |sum, item| sum.saturating_add(item.bytes))
    }

    /// The `n` largest items, largest first.
    pub fn largest(&self, n: usize) -> Vec<&MemoryItem> {
        let mut items: Vec<&MemoryItem> = self.items.iter().collect();
        items.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.what.cmp(&b.what)));
        items.truncate(n);
        items
    }
}

impl fmt::Display for MemoryNeeds {
    /// `N bytes (largest: Q 123 B, ...)`, the five largest items.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes", self.total())?;
        let largest = self.largest(5);
        if !largest.is_empty() {
            let items: Vec<String> = largest
                .iter()
                .map(|i| format!("{} {} B", i.what, i.bytes))
                .collect();
            write!(f, " (largest: {}", items.join(", "))?;
            if self.items.len() > largest.len() {
                write!(f, ", and {} more", self.items.len() - largest.len())?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// `len` copies of `value`, or [`EngineError::OutOfHostMemory`] naming `what` when the
/// allocation fails (instead of the process aborting).
///
/// # Errors
/// The allocation failed or `len` elements do not fit in the address space.
pub fn try_filled<T: Clone>(len: usize, value: T, what: &str) -> Result<Vec<T>, EngineError> {
    let mut v = Vec::new();
    try_reserve(&mut v, len, what)?;
    v.resize(len, value);
    Ok(v)
}

/// Reserves room for `len` more elements of `v`, or [`EngineError::OutOfHostMemory`].
///
/// # Errors
/// The allocation failed or the size does not fit in the address space.
pub fn try_reserve<T>(v: &mut Vec<T>, len: usize, what: &str) -> Result<(), EngineError> {
    v.try_reserve_exact(len)
        .map_err(|_| EngineError::OutOfHostMemory {
            what: what.to_owned(),
            bytes: u64::try_from(len)
                .unwrap_or(u64::MAX)
                .saturating_mul(u64::try_from(std::mem::size_of::<T>()).unwrap_or(u64::MAX)),
        })
}

/// Bytes of host memory available to a new allocation now: Linux's `MemAvailable` (free plus
/// reclaimable page cache), read from `/proc/meminfo`; `None` where the OS does not say.
pub fn host_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem_available(&text)
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line
        .trim_start_matches("MemAvailable:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_add_up_and_name_the_largest() {
        let mut needs = MemoryNeeds::new();
        needs.add("Q", 10).add("K", 30).add("empty", 0).add("V", 20);
        needs.add("huge", u64::MAX);
        assert_eq!(needs.total(), u64::MAX);
        assert_eq!(needs.largest(2)[1].what, "K");
        assert_eq!(needs.items.len(), 4);
        let text = MemoryNeeds {
            items: vec![MemoryItem {
                what: "dQ".into(),
                bytes: 8,
            }],
        }
        .to_string();
        assert_eq!(text, "8 bytes (largest: dQ 8 B)");
    }

    #[test]
    fn failed_allocations_are_errors_not_aborts() {
        let err = try_filled(usize::MAX / 2, 0u64, "scores").unwrap_err();
        assert!(matches!(err, EngineError::OutOfHostMemory { ref what, .. } if what == "scores"));
        assert_eq!(try_filled(3, 1u8, "x").unwrap(), vec![1, 1, 1]);
    }

    #[test]
    fn meminfo_is_read_in_bytes() {
        let text = "MemTotal:       24000000 kB\nMemAvailable:    1000 kB\n";
        assert_eq!(mem_available(text), Some(1_024_000));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
    }
}
