//! The sm120 kernel configurations (tile shapes per head-dim envelope) and their shared-memory
//! budgets. Every entry is implemented by the kernels in crates/engines/kernels/; the fitness test
//! (tests/sm120_fitness.rs) compiles each one for sm_120 and checks it with ptxas.
//!
//! Until the analyzer's table (crates/analyzer/src/sm120/kernels.rs) lands, this is the one table;
//! when it does, this file becomes a thin view of it.

/// Shared memory one block may use on sm_120 (opt-in maximum, bytes).
pub const SM120_SMEM_PER_BLOCK: u32 = 101_376;

/// One compiled tile configuration of the sm120 engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelConfig {
    /// Stable name (used in reports and cache keys).
    pub name: &'static str,
    /// Head dim of Q and K.
    pub head_dim_qk: u32,
    /// Head dim of V.
    pub head_dim_v: u32,
    /// Backward: query rows per tile walked by each block.
    pub bwd_block_q: u32,
    /// Backward: KV rows owned by each block (16 per warp).
    pub bwd_block_kv: u32,
    /// Backward: warps per block.
    pub bwd_warps: u32,
    /// Forward: query rows per block (16 per warp).
    pub fwd_block_q: u32,
    /// Forward: KV rows per tile.
    pub fwd_block_kv: u32,
    /// Forward: warps per block.
    pub fwd_warps: u32,
}

/// Every configuration the engine implements (FA2's sm86/89-class tiles, 4 warps, rows padded
/// by 8 elements in shared memory).
pub const SM120_KERNELS: &[KernelConfig] = &[
    KernelConfig {
        name: "d64_bq64_bkv64_w4",
        head_dim_qk: 64,
        head_dim_v: 64,
        bwd_block_q: 64,
        bwd_block_kv: 64,
        bwd_warps: 4,
        fwd_block_q: 64,
        fwd_block_kv: 64,
        fwd_warps: 4,
    },
    KernelConfig {
        name: "d128_bq64_bkv64_w4",
        head_dim_qk: 128,
        head_dim_v: 128,
        bwd_block_q: 64,
        bwd_block_kv: 64,
        bwd_warps: 4,
        fwd_block_q: 64,
        fwd_block_kv: 64,
        fwd_warps: 4,
    },
    KernelConfig {
        name: "d192v128_bq32_bkv64_w4",
        head_dim_qk: 192,
        head_dim_v: 128,
        bwd_block_q: 32,
        bwd_block_kv: 64,
        bwd_warps: 4,
        fwd_block_q: 64,
        fwd_block_kv: 64,
        fwd_warps: 4,
    },
];

impl KernelConfig {
    /// Dynamic shared memory of the backward main kernel (bytes); bwd_main.cu asserts the same
    /// formula at compile time.
    pub const fn bwd_smem_bytes(&self) -> u32 {
        let ld_qk = self.head_dim_qk + 8;
        let ld_v = self.head_dim_v + 8;
        let ld_s = self.bwd_block_q + 8;
        2 * (self.bwd_block_kv * ld_qk
            + self.bwd_block_kv * ld_v
            + self.bwd_block_q * ld_qk
            + self.bwd_block_q * ld_v
            + self.bwd_block_kv * ld_s)
            + 8 * self.bwd_block_q
    }

    /// Dynamic shared memory of the forward kernel (bytes); sdpa_fwd.cu asserts the same formula.
    pub const fn fwd_smem_bytes(&self) -> u32 {
        let ld_qk = self.head_dim_qk + 8;
        let ld_v = self.head_dim_v + 8;
        2 * (self.fwd_block_q * ld_qk + self.fwd_block_kv * ld_qk + self.fwd_block_kv * ld_v)
    }

    /// The configuration for these head dims, if one is compiled.
    pub fn for_head_dims(head_dim_qk: usize, head_dim_v: usize) -> Option<&'static KernelConfig> {
        SM120_KERNELS
            .iter()
            .find(|c| c.head_dim_qk as usize == head_dim_qk && c.head_dim_v as usize == head_dim_v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_config_fits_sm120_shared_memory() {
        for c in SM120_KERNELS {
            assert!(c.bwd_smem_bytes() <= SM120_SMEM_PER_BLOCK, "{}", c.name);
            assert!(c.fwd_smem_bytes() <= SM120_SMEM_PER_BLOCK, "{}", c.name);
            assert_eq!(c.bwd_block_kv, 16 * c.bwd_warps, "{}", c.name);
            assert_eq!(c.fwd_block_q, 16 * c.fwd_warps, "{}", c.name);
        }
    }

    #[test]
    fn lookup_by_head_dims() {
        assert_eq!(
            KernelConfig::for_head_dims(192, 128).map(|c| c.name),
            Some("d192v128_bq32_bkv64_w4")
        );
        assert!(KernelConfig::for_head_dims(96, 96).is_none());
    }
}
