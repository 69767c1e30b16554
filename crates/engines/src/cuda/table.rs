//! The sm120 kernel table is the analyzer's ([`rime_analyzer::sm120::KERNELS`]): the analyzer
//! selects from it, and this engine implements every entry with the kernel file of its role.
//! The tests here fail when an entry has no kernel or a kernel file has no entry.

use rime_analyzer::{KernelConfig, KernelRole};

pub use rime_analyzer::sm120::{KERNELS, SM120_SMEM_PER_BLOCK};

/// The entry of `role` compiled for exactly (dqk, dv).
pub fn exact(role: KernelRole, dqk: usize, dv: usize) -> Option<&'static KernelConfig> {
    KERNELS
        .iter()
        .find(|k| k.role == role && k.head_dim_qk as usize == dqk && k.head_dim_v as usize == dv)
}

/// The smallest entry of `role` whose envelope holds (dqk, dv) (the analyzer's selection; the
/// kernels zero-fill the padded head-dim columns and never store them).
pub fn envelope(role: KernelRole, dqk: usize, dv: usize) -> Option<&'static KernelConfig> {
    rime_analyzer::sm120::kernels::select(role, dqk as i64, dv as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::compile::{KernelBuild, KernelFile};

    #[test]
    fn every_entry_has_a_kernel_and_every_kernel_an_entry() {
        let mut used = std::collections::BTreeSet::new();
        for k in KERNELS {
            let builds = KernelBuild::all_for(k);
            assert!(!builds.is_empty(), "{} has no kernel", k.name);
            assert_eq!(builds[0].file, KernelBuild::file_of(k.role), "{}", k.name);
            for b in builds {
                // Every tiled kernel static_asserts SMEM_BYTES against its own formula, so an
                // entry whose numbers the kernel cannot honour fails to compile (fitness test).
                assert!(b.threads > 0, "{}", k.name);
                used.insert(b.file.file_name());
            }
        }
        for f in KernelFile::ALL {
            assert!(
                used.contains(f.file_name()),
                "kernel {} has no table entry",
                f.file_name()
            );
        }
    }

    #[test]
    fn every_entry_fits_sm120() {
        for k in KERNELS {
            assert!(
                u64::from(k.smem_bytes) <= SM120_SMEM_PER_BLOCK,
                "{}",
                k.name
            );
            // Only the backward main kernel double-buffers its streamed tiles (STAGES 2).
            let max_stages = if k.role == KernelRole::BackwardMain {
                2
            } else {
                1
            };
            assert!(
                (1..=max_stages).contains(&k.stages),
                "{}: {} stages",
                k.name,
                k.stages
            );
            let rows_per_warp = match k.role {
                KernelRole::BackwardMain => k.block_kv,
                KernelRole::Forward | KernelRole::DqGemm => k.block_q,
            };
            assert_eq!(
                rows_per_warp,
                16 * k.warps,
                "{}: one warp per 16 rows",
                k.name
            );
        }
    }

    #[test]
    fn every_backward_envelope_has_its_companions() {
        for main in KERNELS
            .iter()
            .filter(|k| k.role == KernelRole::BackwardMain)
        {
            let (dqk, dv) = (main.head_dim_qk as usize, main.head_dim_v as usize);
            assert!(
                exact(KernelRole::Forward, dqk, dv).is_some(),
                "{}",
                main.name
            );
            assert!(
                exact(KernelRole::DqGemm, dqk, dv).is_some(),
                "{}",
                main.name
            );
        }
    }
}
