//! SM120 fitness: every kernel specialization of every entry of the analyzer's sm120 table is
//! compiled by NVRTC for compute_120 and assembled by `ptxas -arch=sm_120 -v`; the tests assert
//! static + dynamic shared memory <= 101,376 bytes, zero spill bytes, no stack frame, registers
//! within the entry's `registers` budget (which the cost model counts blocks per SM from), and
//! registers x threads within what one block may use under its launch bounds. The H200-tuned
//! entries (benchmarks only) are compiled for sm_90 against its 232,448 B, spills reported.
//! Compiling also checks the generated kernel ABI: every field offset is a `static_assert`.
//!
//! Needs NVRTC (libnvrtc.so.13 on the loader path) and ptxas (`RIME_PTXAS`, else `ptxas` on
//! PATH). Without them build.rs marks the tests ignored, with the reason, unless
//! `RIME_REQUIRE_NVRTC=1` (CI sets it after `pip install nvidia-cuda-nvrtc==13.0.88
//! nvidia-cuda-nvcc==13.0.88`, pointing LD_LIBRARY_PATH at `nvidia/cu13/lib` and RIME_PTXAS at
//! `nvidia/cu13/bin/ptxas` of that venv).
//!
//! `RIME_FITNESS_ONLY=<text>` checks only the entries whose name contains the text (for trying a
//! tile change in seconds instead of minutes; CI never sets it), and `RIME_FITNESS_BUILDS=<words>`
//! only the specializations whose description has every word (`HAS_BIAS=0 DQ_ROUTE=0`, say).
//! `RIME_FITNESS_KEEP=1` keeps the PTX and cubins (`k<n>`, in the order first assembled) for
//! `cuobjdump -sass`;
//! `RIME_FITNESS_ARCH=90` builds the sm120 table for sm_90 instead, the code an H200 run executes
//! (its spills then fail the test: it is for looking, CI never sets it).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use rime_analyzer::sm120::kernels::{H200_SMEM_PER_BLOCK, H200_TUNED, KERNELS};
use rime_analyzer::sm120::SM120_SMEM_PER_BLOCK;
use rime_analyzer::{KernelConfig, KernelRole};

use super::compile::{abi_check_source, compile_ptx, compile_source, KernelBuild, KernelFile};

fn ptxas() -> PathBuf {
    std::env::var_os("RIME_PTXAS").map_or_else(|| PathBuf::from("ptxas"), PathBuf::from)
}

/// Registers per SM on sm_120 and sm_90 (64K 32-bit registers).
const REGISTERS_PER_SM: u32 = 65_536;

#[derive(Debug, Default, Clone)]
struct PtxasReport {
    registers: u32,
    static_smem: u32,
    spill_stores: u32,
    spill_loads: u32,
    stack: u32,
}

fn number_before(line: &str, marker: &str) -> Option<u32> {
    let head = &line[..line.find(marker)?];
    head.split_whitespace().last()?.parse().ok()
}

fn parse(log: &str) -> PtxasReport {
    let mut r = PtxasReport::default();
    for line in log.lines() {
        if let Some(v) = number_before(line, "bytes stack frame") {
            r.stack = v;
        }
        if let Some(v) = number_before(line, "bytes spill stores") {
            r.spill_stores = v;
        }
        if let Some(v) = number_before(line, "bytes spill loads") {
            r.spill_loads = v;
        }
        if let Some(v) = number_before(line, "registers") {
            r.registers = v;
        }
        if let Some(v) = number_before(line, "bytes smem") {
            r.static_smem = v;
        }
    }
    r
}

/// What a target allows one block.
struct Limits {
    /// `compute_NN` / `sm_NN`.
    arch: u32,
    /// Shared memory per block, bytes.
    smem: u64,
    /// Spill bytes and a stack frame fail the check.
    no_spills: bool,
}

/// Compiles `build` for `arch` into `dir` as `k<n>` and returns what ptxas reports.
fn assemble(build: &KernelBuild, arch: u32, dir: &Path, n: usize) -> Result<PtxasReport, String> {
    let ptx = compile_ptx(build, arch).map_err(|e| e.to_string())?;
    let ptx_path = dir.join(format!("k{n}.ptx"));
    std::fs::write(&ptx_path, ptx).expect("write ptx");
    let out = Command::new(ptxas())
        .args([format!("-arch=sm_{arch}").as_str(), "-v", "-o"])
        .arg(dir.join(format!("k{n}.cubin")))
        .arg(&ptx_path)
        .output()
        .expect("run ptxas");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        Ok(parse(&log))
    } else {
        Err(format!("ptxas failed:\n{log}"))
    }
}

/// What makes two builds the same code: the file, its defines and its launch shape (the table
/// entry's name is not compiled in). The auxiliary kernels (convert, the dSink reduction) are
/// the same build under every backward entry, and so are a preprocess kernel and a dBias
/// reduction under entries with the same tiles: each is assembled once and checked against
/// every entry it serves.
type BuildKey = (KernelFile, Vec<(&'static str, i64)>, u32, u32);

/// Compiles every specialization of `configs` for `limits.arch` and returns (specializations
/// checked, failures).
fn check(configs: &'static [KernelConfig], limits: &Limits) -> (usize, Vec<String>) {
    let arch = limits.arch;
    let dir = std::env::temp_dir().join(format!("rime-fitness-{}-{arch}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut assembled: HashMap<BuildKey, Result<PtxasReport, String>> = HashMap::new();
    let only = std::env::var("RIME_FITNESS_ONLY").unwrap_or_default();
    let builds = std::env::var("RIME_FITNESS_BUILDS").unwrap_or_default();
    for cfg in configs.iter().filter(|k| k.name.contains(only.as_str())) {
        for build in KernelBuild::all_for(cfg) {
            let what = format!("sm_{arch} {}", build.describe());
            let words: Vec<&str> = what.split_whitespace().collect();
            if !builds.split_whitespace().all(|w| words.contains(&w)) {
                continue;
            }
            let key = (
                build.file,
                build.defines.clone(),
                build.threads,
                build.smem_bytes,
            );
            let n = assembled.len();
            let reused = assembled.contains_key(&key);
            let r = match assembled
                .entry(key)
                .or_insert_with(|| assemble(&build, arch, &dir, n))
            {
                Ok(r) => r.clone(),
                Err(e) => {
                    failures.push(format!("{what}: {e}"));
                    continue;
                }
            };
            checked += 1;
            let smem = r.static_smem + build.smem_bytes;
            println!(
                "{what}: {} regs x {} threads, smem {} B (static {} + dynamic {}), spills {}/{}, stack {}{}",
                r.registers, build.threads, smem, r.static_smem, build.smem_bytes, r.spill_stores, r.spill_loads, r.stack,
                if reused { " (assembled above)" } else { "" }
            );
            if u64::from(smem) > limits.smem {
                failures.push(format!(
                    "{what}: shared memory {smem} B > {} B",
                    limits.smem
                ));
            }
            if limits.no_spills && (r.spill_stores != 0 || r.spill_loads != 0 || r.stack != 0) {
                failures.push(format!(
                    "{what}: spills {}/{} B, stack {} B",
                    r.spill_stores, r.spill_loads, r.stack
                ));
            }
            if r.registers > cfg.registers {
                failures.push(format!(
                    "{what}: {} registers > the table's {} for {} (update kernels.rs)",
                    r.registers, cfg.registers, cfg.name
                ));
            }
            if r.registers == 0
                || r.registers > 255
                || r.registers * build.threads > REGISTERS_PER_SM
            {
                failures.push(format!(
                    "{what}: {} registers x {} threads exceed one block's budget",
                    r.registers, build.threads
                ));
            }
        }
    }
    if std::env::var_os("RIME_FITNESS_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        println!("kept {}", dir.display());
    }
    (checked, failures)
}

/// Fails on any finding of [`check`], headed by `label`.
fn require_fit(configs: &'static [KernelConfig], limits: &Limits, label: &str) {
    let (checked, failures) = check(configs, limits);
    assert!(
        failures.is_empty(),
        "{label} failures:\n{}",
        failures.join("\n")
    );
    assert!(checked > 0, "no kernel was checked");
}

#[test]
#[cfg_attr(
    rime_no_nvrtc,
    ignore = "needs the CUDA 13 NVRTC (libnvrtc.so.13 on LD_LIBRARY_PATH) and ptxas (RIME_PTXAS or PATH) when the tests are built; .ci/run installs both from PyPI"
)]
fn every_sm120_configuration_fits() {
    let limits = Limits {
        arch: std::env::var("RIME_FITNESS_ARCH")
            .ok()
            .and_then(|a| a.parse().ok())
            .unwrap_or(120),
        smem: SM120_SMEM_PER_BLOCK,
        no_spills: true,
    };
    require_fit(KERNELS, &limits, "SM120 fitness");
}

/// The H200-tuned entries (benchmarks only) compile for sm_90 and fit its 232,448 B per block.
/// Spills are reported, not failed: these are measuring configurations, never selected.
#[test]
#[cfg_attr(
    rime_no_nvrtc,
    ignore = "needs the CUDA 13 NVRTC (libnvrtc.so.13 on LD_LIBRARY_PATH) and ptxas (RIME_PTXAS or PATH) when the tests are built; .ci/run installs both from PyPI"
)]
fn h200_tuned_configurations_compile_for_sm_90() {
    let limits = Limits {
        arch: 90,
        smem: H200_SMEM_PER_BLOCK,
        no_spills: false,
    };
    require_fit(H200_TUNED, &limits, "H200-tuned");
}

/// The kernel ABI's CUDA field offsets are Rust's: the generated check kernel leaves no `trap`
/// in its PTX, and the same check with every expected offset off by one leaves some (so the
/// check can fail).
#[test]
#[cfg_attr(
    rime_no_nvrtc,
    ignore = "needs the CUDA 13 NVRTC (libnvrtc.so.13 on LD_LIBRARY_PATH) and ptxas (RIME_PTXAS or PATH) when the tests are built; .ci/run installs both from PyPI"
)]
fn kernel_abi_offsets_match_on_both_sides() {
    let options = || {
        [
            "--gpu-architecture=compute_120",
            "--std=c++17",
            "-DIS_BF16=1",
        ]
        .map(str::to_owned)
        .to_vec()
    };
    let ptx = compile_source("abi_check.cu", abi_check_source(0), options()).expect("compiles");
    assert!(ptx.contains("rime_abi_offsets"), "{ptx}");
    assert!(
        !ptx.contains("trap"),
        "a field's CUDA offset differs from Rust's:\n{ptx}"
    );
    let skewed = compile_source("abi_check.cu", abi_check_source(1), options()).expect("compiles");
    assert!(skewed.contains("trap"), "the offset check cannot fail");
}

#[test]
fn every_entry_has_a_kernel_and_every_kernel_an_entry() {
    let mut used = std::collections::BTreeSet::new();
    for k in KERNELS {
        let builds = KernelBuild::all_for(k);
        assert_eq!(builds[0].file, KernelBuild::file_of(k.role), "{}", k.name);
        for b in builds {
            assert!(b.threads > 0, "{}", k.name);
            used.insert(b.file.file_name());
        }
    }
    for f in KernelFile::ALL {
        assert!(
            used.contains(f.file_name()),
            "{} has no table entry",
            f.file_name()
        );
    }
}

#[test]
fn every_entry_tiles_its_warps_and_has_its_stages() {
    for k in KERNELS {
        // The backward main kernel double-buffers its streamed Q tile (STAGES 1 or 2), the dQ
        // GEMM streams dS and K through a ring of at least two chunks, the forward does not.
        let stages = match k.role {
            KernelRole::BackwardMain => 1..=2,
            KernelRole::DqGemm => 2..=4,
            KernelRole::Forward => 1..=1,
        };
        assert!(
            stages.contains(&k.stages),
            "{}: {} stages",
            k.name,
            k.stages
        );
        match (k.role, k.layout) {
            // The backward main kernel splits each product by its own warp grid.
            (KernelRole::BackwardMain, Some(l)) => {
                assert!(l.tiles_evenly(k), "{}: warp grids {l:?}", k.name)
            }
            (KernelRole::Forward, None) => {
                assert_eq!(k.block_q, 16 * k.warps, "{}: one warp per 16 rows", k.name)
            }
            // dq_gemm.cu: 32 rows per warp, the head dim split over the other warps in
            // 16-column blocks.
            (KernelRole::DqGemm, None) => {
                let along_rows = k.block_q / 32;
                assert!(
                    k.block_q % 32 == 0
                        && k.warps % along_rows == 0
                        && (k.head_dim_qk / (k.warps / along_rows)) % 16 == 0,
                    "{}: 32 rows per warp",
                    k.name
                )
            }
            (role, layout) => panic!("{}: {role:?} with layout {layout:?}", k.name),
        }
    }
}
