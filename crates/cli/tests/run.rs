//! `rime run` end to end on the example graph (CPU engine, seeded inputs).

use std::path::PathBuf;
use std::process::Command;

mod common;

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/backward_gqa_causal.json")
}

fn rime(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rime"))
        .args(args)
        .output()
        .expect("rime runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn runs_the_example_backward_and_writes_its_gradients() {
    let dir = std::env::temp_dir().join(format!("rime-run-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let outputs = dir.join("grads.safetensors");
    let example = example();
    let args = [
        "run",
        example.to_str().unwrap(),
        "--target",
        "cpu",
        "--seed",
        "3",
        "--outputs",
        outputs.to_str().unwrap(),
    ];
    let (code, stdout, stderr) = rime(&args);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("making O and Stats with a forward run"),
        "{stdout}"
    );
    assert!(stdout.contains("engine cpu_reference"), "{stdout}");
    for name in ["dQ", "dK", "dV"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.trim_start().starts_with(name) && l.ends_with("non-finite 0")),
            "{stdout}"
        );
    }
    let first = std::fs::read(&outputs).unwrap();
    // Same seed, same bytes (deterministic); another seed, other bytes.
    assert_eq!(rime(&args).0, 0);
    assert_eq!(std::fs::read(&outputs).unwrap(), first);
    let mut other = args;
    other[5] = "4";
    assert_eq!(rime(&other).0, 0);
    assert_ne!(std::fs::read(&outputs).unwrap(), first);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn refuses_inputs_of_the_wrong_shape_and_unknown_targets() {
    let dir = std::env::temp_dir().join(format!("rime-run-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A safetensors file with a 1-element "Q" (header + 2 bytes of bf16).
    let header = br#"{"Q":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    bytes.extend_from_slice(&[0, 0]);
    let inputs = dir.join("bad.safetensors");
    std::fs::write(&inputs, bytes).unwrap();
    let example = example();
    let (code, _, stderr) = rime(&[
        "run",
        example.to_str().unwrap(),
        "--inputs",
        inputs.to_str().unwrap(),
    ]);
    assert_ne!(code, 0);
    assert!(stderr.contains("input 'Q' has shape [1]"), "{stderr}");
    let (code, _, stderr) = rime(&["run", example.to_str().unwrap(), "--target", "tpu-9"]);
    assert_eq!(code, 2, "a usage error");
    assert!(
        stderr.contains("invalid value 'tpu-9'") && stderr.contains("rtx-5090"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn runs_every_valid_fixture_the_cpu_engine_supports() {
    let files = common::fixtures("valid");
    let (mut ran, mut refused) = (0, 0);
    for file in &files {
        let (code, stdout, stderr) = rime(&["run", file.to_str().unwrap(), "--target", "cpu"]);
        let shown = file.display();
        if code == 0 {
            ran += 1;
            let outputs: Vec<&str> = stdout
                .lines()
                .filter(|l| l.contains("non-finite"))
                .collect();
            assert!(!outputs.is_empty(), "{shown}: no outputs\n{stdout}");
            assert!(
                outputs.iter().all(|l| l.ends_with("non-finite 0")),
                "{shown}:\n{stdout}"
            );
        } else {
            // Only the analyzer may refuse (dropout, ragged, incomplete contexts), never the engine.
            refused += 1;
            assert!(
                stdout.contains("no engine of this build can run"),
                "{shown}:\n{stdout}\n{stderr}"
            );
            assert!(
                stdout.contains("cpu_reference"),
                "{shown}: the report names the CPU verdict"
            );
        }
    }
    assert!(
        ran >= 30 && refused <= 6,
        "ran {ran}, refused {refused} of {}",
        files.len()
    );
}

#[test]
fn given_inputs_are_used_and_the_seed_only_fills_the_rest() {
    use safetensors::tensor::TensorView;
    use safetensors::Dtype;
    let dir = std::env::temp_dir().join(format!("rime-run-given-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Logical bf16 tensors of the example graph (B=2, Hq=8, Hk=2, S=256, D=64), by name.
    let bf16_bytes = |n: usize, k: u32| -> Vec<u8> {
        (0..n as u32)
            .flat_map(|i| {
                let x = ((i.wrapping_mul(2_654_435_761) ^ k) % 997) as f32 / 498.0 - 1.0;
                ((x.to_bits() >> 16) as u16).to_le_bytes()
            })
            .collect()
    };
    let q = [2, 8, 256, 64];
    let kv = [2, 2, 256, 64];
    let tensors = [("Q", q, 1), ("K", kv, 2), ("V", kv, 3), ("dO", q, 4)]
        .map(|(name, dims, k)| (name, dims.to_vec(), bf16_bytes(dims.iter().product(), k)));
    let views: Vec<(&str, TensorView<'_>)> = tensors
        .iter()
        .map(|(name, dims, bytes)| {
            (
                *name,
                TensorView::new(Dtype::BF16, dims.clone(), bytes).unwrap(),
            )
        })
        .collect();
    let inputs = dir.join("inputs.safetensors");
    std::fs::write(&inputs, safetensors::serialize(views, None).unwrap()).unwrap();
    let example = example();
    let run = |seed: &str, with_inputs: bool| {
        let out = dir.join(format!("out-{seed}-{with_inputs}.safetensors"));
        let mut args = vec![
            "run",
            example.to_str().unwrap(),
            "--seed",
            seed,
            "--outputs",
            out.to_str().unwrap(),
        ];
        if with_inputs {
            args.extend(["--inputs", inputs.to_str().unwrap()]);
        }
        let (code, stdout, stderr) = rime(&args);
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        std::fs::read(out).unwrap()
    };
    let given = run("1", true);
    assert_eq!(
        given,
        run("2", true),
        "every input was given: the seed must not matter"
    );
    assert_ne!(given, run("1", false), "the given inputs must be used");
    std::fs::remove_dir_all(&dir).ok();
}

/// `--outputs /dev/stdout` with stdout appended to a file: replacing that file would lose what
/// it held (and rime's own report), so the output is refused and the file kept.
#[cfg(target_os = "linux")]
#[test]
fn outputs_on_a_redirected_stdout_keep_the_file() {
    let dir = std::env::temp_dir().join(format!("rime-run-stdout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("log.txt");
    std::fs::write(&log, "important\n").unwrap();
    for stream in ["/dev/stdout", "/dev/stderr"] {
        let append = || std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        let status = Command::new(env!("CARGO_BIN_EXE_rime"))
            .args(["run", example().to_str().unwrap(), "--target", "cpu"])
            .args(["--outputs", stream])
            .stdout(append())
            .stderr(append())
            .status()
            .expect("rime runs");
        assert_eq!(status.code(), Some(1), "{stream}");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.starts_with("important\n"), "{stream}: {text}");
        assert!(text.contains("refusing to write outputs to"), "{text}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A pipe named `/dev/fd/N` (bash's process substitution) has no canonical path; it is written
/// as a stream (it used to fail: "cannot create a file in /proc/<pid>/fd").
#[cfg(target_os = "linux")]
#[test]
fn outputs_into_a_dev_fd_pipe_are_written() {
    let script = format!(
        "'{}' run '{}' --target cpu --outputs >(wc -c) >/dev/null",
        env!("CARGO_BIN_EXE_rime"),
        example().display()
    );
    let out = Command::new("bash")
        .args(["-c", &script])
        .output()
        .expect("bash runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // wc's count arrives on bash's stdout: a safetensors file of the three gradients.
    let count: u64 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("a count");
    assert!(count > 1000, "{count} bytes");
}

/// A FIFO given as both `--inputs` and `--outputs` is refused before it is opened for writing
/// (opening it first blocked forever: no process reads it).
#[cfg(target_os = "linux")]
#[test]
fn a_fifo_read_and_written_is_refused_without_blocking() {
    let dir = std::env::temp_dir().join(format!("rime-run-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("p");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let fifo = fifo.to_str().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rime"))
        .args(["run", example().to_str().unwrap(), "--target", "cpu"])
        .args(["--inputs", fifo, "--outputs", fifo])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rime runs");
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("rime blocked on the FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("it is the --inputs file"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}
