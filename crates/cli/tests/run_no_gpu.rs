//! Without a usable GPU (no GPU, driver or NVRTC): `--target auto` says so and runs on the
//! CPU; a pinned GPU engine is an error that says why. The probe of the driver and NVRTC
//! themselves is the CUDA engine's (`cuda::probe`, tested there). `rime` runs here with
//! `CUDA_VISIBLE_DEVICES` empty, which hides every GPU from the driver, so these paths are
//! checked on GPU machines too (the driver then reports no device).

use std::path::PathBuf;
use std::process::Command;

fn rime(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rime"))
        .args(args)
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .expect("rime runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn example() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/backward_gqa_causal.json")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn auto_falls_back_to_the_cpu_and_says_why() {
    let (code, stdout, stderr) = rime(&["run", &example(), "--target", "auto"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("CUDA unavailable") && stderr.contains("only the CPU engine can run here"),
        "{stderr}"
    );
    assert!(stdout.contains("engine cpu_reference"), "{stdout}");
}

#[test]
fn a_gpu_target_falls_back_per_node_with_a_note() {
    let (code, stdout, stderr) = rime(&["run", &example(), "--target", "rtx-5090"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("needs a GPU this machine cannot drive; running cpu_reference instead"),
        "{stderr}"
    );
}

#[test]
fn a_pinned_gpu_engine_is_an_error_that_says_why() {
    for target in ["rtx-5090", "auto"] {
        let (code, stdout, stderr) =
            rime(&["run", &example(), "--target", target, "--engine", "sm120"]);
        assert_eq!(code, 1, "{target}: {stdout}\n{stderr}");
        assert!(
            stdout.contains("no engine of this build can run node 'bwd'"),
            "{stdout}"
        );
        if target == "rtx-5090" {
            assert!(
                stderr.contains("sm120/relay support it, but need a GPU this machine cannot drive"),
                "{stderr}"
            );
        } else {
            // On the CPU target the analyzer itself says the SM120 engine needs a GPU.
            assert!(stdout.contains("TGT001"), "{stdout}");
        }
    }
}
