//! Workspace layouts: named, 256-byte-aligned regions with exact sizes.
//!
//! The layout is a contract: engines place their scratch at these offsets and never write past
//! [`WorkspaceLayout::total_bytes`].

use std::fmt;

/// Alignment of every region's offset (and of the total), bytes.
pub const REGION_ALIGN: u64 = 256;

/// What a workspace region holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RegionKind {
    /// f32 D_i = rowsum(dO * O), B * Hq * Sq.
    Delta,
    /// f32 dQ accumulator, B * Hq * Sq * Dqk (atomic and relay routes).
    DqAccum,
    /// u32 relay turn counters, one per (b, hq, Q tile), then block tickets, one per (b, KV
    /// head) (relay route).
    RelayCounters,
    /// dS in the io type, B * Hq * Sq * round_up(Skv, 128) (two_kernel route).
    DScores,
    /// f32 dBias accumulator for a broadcast bias (the dBias tensor's element count).
    DbiasAccum,
    /// f32 dBias partials of a broadcast bias, one dBias-sized slice per (batch, head) the bias
    /// broadcasts over: B * Hq * Sq * Skv in all (ordered_dbias route).
    DbiasPartials,
    /// f32 dSink terms, one per query row: -exp(Sink_h - Stats) * delta, B * Hq * Sq (every
    /// element written by the preprocess kernel, summed per head in a fixed order).
    DsinkRows,
    /// i64 element offsets of the ragged (THD) tensors, B + 1 per ragged Q, K, V, O, dO,
    /// Stats, dQ, dK or dV: the engine copies the user's offsets to the host, checks them and
    /// writes them here, before the kernels that read them (forward and backward).
    RaggedOffsets,
}

impl RegionKind {
    /// Stable name used in reports.
    pub const fn name(self) -> &'static str {
        match self {
            RegionKind::Delta => "delta",
            RegionKind::DqAccum => "dq_accum",
            RegionKind::RelayCounters => "relay_counters",
            RegionKind::DScores => "ds",
            RegionKind::DbiasAccum => "dbias_accum",
            RegionKind::DbiasPartials => "dbias_partials",
            RegionKind::DsinkRows => "dsink_rows",
            RegionKind::RaggedOffsets => "ragged_offsets",
        }
    }

    /// True when the region must be zero before the main kernel runs (the engine's preprocess
    /// kernel clears it).
    pub const fn needs_zero(self) -> bool {
        !matches!(
            self,
            RegionKind::Delta
                | RegionKind::DScores
                | RegionKind::DbiasPartials
                | RegionKind::DsinkRows
                | RegionKind::RaggedOffsets
        )
    }
}

impl fmt::Display for RegionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One region of a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// What it holds.
    pub kind: RegionKind,
    /// Byte offset from the workspace base, a multiple of [`REGION_ALIGN`].
    pub offset: u64,
    /// Exact size, bytes.
    pub bytes: u64,
    /// Element size, bytes.
    pub element_bytes: u64,
    /// Element count.
    pub elements: u64,
}

/// The exact workspace of one engine configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WorkspaceLayout {
    regions: Vec<Region>,
    total_bytes: u64,
}

/// The workspace size does not fit in 64 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("workspace region {kind} overflows 64 bits")]
pub struct WorkspaceOverflow {
    /// The region whose size or offset overflowed.
    pub kind: RegionKind,
}

impl WorkspaceLayout {
    /// An empty layout (0 bytes).
    pub fn empty() -> Self {
        Self::default()
    }

    /// Appends a region of `elements` elements of `element_bytes` bytes at the next aligned
    /// offset.
    ///
    /// # Errors
    /// [`WorkspaceOverflow`] when a size or offset does not fit in 64 bits.
    pub fn push(
        &mut self,
        kind: RegionKind,
        element_bytes: u64,
        elements: u64,
    ) -> Result<(), WorkspaceOverflow> {
        let overflow = WorkspaceOverflow { kind };
        let bytes = elements.checked_mul(element_bytes).ok_or(overflow)?;
        let offset = self.total_bytes;
        let end = offset.checked_add(bytes).ok_or(overflow)?;
        self.total_bytes = round_up(end, REGION_ALIGN).ok_or(overflow)?;
        self.regions.push(Region {
            kind,
            offset,
            bytes,
            element_bytes,
            elements,
        });
        Ok(())
    }

    /// The regions, in offset order.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// The region of this kind, if present.
    pub fn region(&self, kind: RegionKind) -> Option<&Region> {
        self.regions.iter().find(|r| r.kind == kind)
    }

    /// Total bytes the engine needs (and may use): the end of the last region, aligned.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }
}

/// `value` rounded up to a multiple of `to` (`to` > 0), `None` on overflow.
pub const fn round_up(value: u64, to: u64) -> Option<u64> {
    if to == 0 {
        return None;
    }
    match value.checked_add(to - 1) {
        Some(v) => Some(v / to * to),
        None => None,
    }
}

/// Bytes in a human unit (B, KiB, MiB, GiB), for reports.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_aligned_and_exact() {
        let mut w = WorkspaceLayout::empty();
        w.push(RegionKind::Delta, 4, 10).unwrap();
        w.push(RegionKind::DqAccum, 4, 1000).unwrap();
        let r = w.regions();
        assert_eq!((r[0].offset, r[0].bytes), (0, 40));
        assert_eq!((r[1].offset, r[1].bytes), (256, 4000));
        assert_eq!(w.total_bytes(), 4352);
        assert!(w.push(RegionKind::DScores, 2, u64::MAX).is_err());
        assert_eq!(round_up(u64::MAX, 256), None);
        assert_eq!(human_bytes(3 << 20), "3.0 MiB");
    }
}
