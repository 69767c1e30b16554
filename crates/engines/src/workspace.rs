//! Workspace memory handed to `execute`: at least the plan's exact workspace size.

use crate::buffer::MemoryLocation;

/// Scratch memory for one execution.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Workspace {
    /// Host bytes.
    Host(Vec<u8>),
    /// Device bytes (the CUDA engine's; see [`crate::cuda::DeviceWorkspace`]).
    Device(crate::cuda::DeviceWorkspace),
}

impl Workspace {
    /// Zeroed host workspace of `bytes` bytes.
    pub fn host(bytes: usize) -> Workspace {
        Workspace::Host(vec![0; bytes])
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        match self {
            Workspace::Host(b) => b.len(),
            Workspace::Device(d) => d.len(),
        }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where the memory lives.
    pub fn location(&self) -> MemoryLocation {
        match self {
            Workspace::Host(_) => MemoryLocation::Host,
            Workspace::Device(d) => MemoryLocation::Device(d.ordinal()),
        }
    }
}
