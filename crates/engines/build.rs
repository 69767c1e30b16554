//! Tells the tests whether the sm_120 fitness check can run here: it needs the CUDA 13 NVRTC
//! (`libnvrtc.so.13` on the loader path) and ptxas (`RIME_PTXAS`, else on PATH). When either is
//! missing the fitness tests are built `#[ignore]`d with that reason, so `cargo test` reports
//! them as ignored instead of passing having checked nothing; `RIME_REQUIRE_NVRTC=1` (what
//! .ci/run sets, after installing both from PyPI) never ignores them, so a missing install
//! fails the run.

use std::path::Path;
use std::process::Command;

fn nvrtc_found() -> bool {
    // SAFETY: opening a shared library runs its initialisers; libnvrtc's only set up NVRTC.
    unsafe { libloading::Library::new("libnvrtc.so.13") }.is_ok()
}

fn ptxas_found() -> bool {
    let ptxas = std::env::var_os("RIME_PTXAS").unwrap_or_else(|| "ptxas".into());
    if std::env::var_os("RIME_PTXAS").is_some() && !Path::new(&ptxas).exists() {
        return false;
    }
    Command::new(ptxas)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(rime_no_nvrtc)");
    for var in [
        "LD_LIBRARY_PATH",
        "RIME_PTXAS",
        "PATH",
        "RIME_REQUIRE_NVRTC",
    ] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    println!("cargo::rerun-if-changed=build.rs");
    let required = std::env::var("RIME_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
    if !(required || nvrtc_found() && ptxas_found()) {
        println!("cargo::rustc-cfg=rime_no_nvrtc");
    }
}
