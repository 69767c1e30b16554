//! Memory rime did not allocate (a framework's tensors) wrapped with `DeviceMemory::from_raw`:
//! its span, the keep-alive it holds, and the variant pack's refusal of an output that shares
//! memory with another buffer — none of which touches a device. Running a plan on a stream of
//! the caller's (`CudaDevice::on_stream`, `on_raw_stream`, `Sm120EnginePlan::enqueue_on`)
//! needs a GPU: that test is ignored without one (`cargo test -- --ignored` on a GPU machine).

use std::any::Any;
use std::sync::Arc;

use rime_engines::cuda::{DeviceBuffer, DeviceMemory};
use rime_engines::{Buffer, EngineError, MemoryLocation, MemorySpan, VariantPack};
use rime_graph::{Context, DataType, Graph, SdpaBackwardAttrs, Tensor, TensorId};

/// Wraps a made-up address range. The handles are only given to the variant pack's checks,
/// which compare addresses; nothing copies, fills or launches on them.
fn wrapped(ptr: u64, bytes: usize, keep: Option<Arc<dyn Any + Send + Sync>>) -> DeviceMemory {
    // SAFETY: no operation that reads or writes device memory is ever called on these handles
    // (see above), so the range need not be live.
    unsafe { DeviceMemory::from_raw(0, ptr, bytes, keep) }
}

fn buffer(ptr: u64, elements: usize, data_type: DataType) -> Box<dyn Buffer> {
    let memory = wrapped(ptr, elements * data_type.size_bytes(), None);
    Box::new(DeviceBuffer::new(data_type, elements, memory).expect("fits"))
}

#[test]
fn wrapped_memory_has_its_span_and_keeps_its_owner_alive_while_any_view_does() {
    let owner = Arc::new(String::from("a framework tensor"));
    let keep: Arc<dyn Any + Send + Sync> = owner.clone();
    let memory = wrapped(0x10_0000, 4096, Some(keep));
    assert_eq!(Arc::strong_count(&owner), 2);
    let view = memory.slice(1024..3072).expect("inside");
    drop(memory);
    let buf = DeviceBuffer::new(DataType::Bf16, 1000, view).expect("2000 of 2048 bytes");
    assert_eq!(Arc::strong_count(&owner), 2, "the view keeps the owner");
    assert_eq!(buf.location(), MemoryLocation::Device(0));
    assert_eq!(
        buf.span(),
        Some(MemorySpan {
            location: MemoryLocation::Device(0),
            start: 0x10_0000 + 1024,
            end: 0x10_0000 + 1024 + 2000,
        })
    );
    drop(buf);
    assert_eq!(
        Arc::strong_count(&owner),
        1,
        "released with the last handle"
    );
    assert!(wrapped(0x10_0000, 16, None).slice(8..32).is_err());
    assert!(DeviceBuffer::new(DataType::F32, 5, wrapped(0x20_0000, 19, None)).is_err());
}

/// A small backward graph: Q, K, V, O, dO (1, 1, 16, 16) bf16, Stats f32, and its gradients.
fn graph() -> (Graph, Vec<(TensorId, DataType, usize)>) {
    let mut g = Graph::new(Context::with_io(DataType::Bf16));
    let dims = [1, 1, 16, 16];
    let ids: Vec<TensorId> = ["Q", "K", "V", "O", "dO"]
        .iter()
        .map(|n| g.tensor(Tensor::packed(*n, &dims)))
        .collect();
    let stats = g.tensor(Tensor::packed("Stats", &[1, 1, 16, 1]).with_data_type(DataType::F32));
    let grads = g
        .sdpa_backward(
            ids[0],
            ids[1],
            ids[2],
            ids[3],
            ids[4],
            stats,
            SdpaBackwardAttrs::new(),
        )
        .expect("builds");
    let mut all: Vec<(TensorId, DataType, usize)> =
        ids.iter().map(|&id| (id, DataType::Bf16, 256)).collect();
    all.push((stats, DataType::F32, 16));
    for id in [grads.dq, grads.dk, grads.dv] {
        all.push((id, DataType::Bf16, 256));
    }
    (g, all)
}

fn pack_at(all: &[(TensorId, DataType, usize)], address: impl Fn(usize) -> u64) -> VariantPack {
    let mut pack = VariantPack::new();
    for (n, &(id, t, len)) in all.iter().enumerate() {
        pack.insert(id, buffer(address(n), len, t));
    }
    pack
}

#[test]
fn an_output_sharing_wrapped_memory_with_another_buffer_is_refused() {
    let (g, all) = graph();
    let needed: Vec<TensorId> = all.iter().map(|(id, _, _)| *id).collect();
    let outputs: Vec<TensorId> = needed[6..].to_vec();
    // Every tensor in its own 4 KiB: accepted.
    let pack = pack_at(&all, |n| 0x100_0000 + 4096 * n as u64);
    let binding = pack.check(&g, &needed).expect("types and sizes");
    pack.check_overlaps(&g, &binding, &outputs)
        .expect("disjoint");
    // Inputs may share memory (Q, K, V as views of one QKV tensor).
    let pack = pack_at(&all, |n| {
        if n < 3 {
            0x100_0000
        } else {
            0x100_0000 + 4096 * n as u64
        }
    });
    let binding = pack.check(&g, &needed).expect("types and sizes");
    pack.check_overlaps(&g, &binding, &outputs)
        .expect("inputs may alias");
    // dQ (entry 6) starting inside K's bytes: refused, naming both.
    let pack = pack_at(&all, |n| match n {
        6 => 0x100_0000 + 4096 + 100,
        n => 0x100_0000 + 4096 * n as u64,
    });
    let binding = pack.check(&g, &needed).expect("types and sizes");
    match pack.check_overlaps(&g, &binding, &outputs) {
        Err(EngineError::AliasedBuffers { output, other }) => {
            assert!(output.ends_with("dQ"), "{output}");
            assert_eq!(other, "K");
        }
        other => panic!("expected AliasedBuffers, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --ignored on one)"]
fn a_plan_built_once_runs_on_a_borrowed_stream_and_refuses_a_foreign_one() {
    use rime_analyzer::{analyze, HeuristicsOptions};
    use rime_engines::cuda::{CudaDevice, CudaError, Sm120EnginePlan};
    use rime_engines::{CpuEngine, Engine, HostBuffer, Workspace};
    use rime_graph::SdpaForwardAttrs;

    let dev = Arc::new(CudaDevice::open_default(0).expect("a GPU"));
    let mut g = Graph::new(Context::with_io(DataType::Bf16));
    let dims = [1, 2, 128, 64];
    let (q, k, v) = (
        g.tensor(Tensor::packed("Q", &dims)),
        g.tensor(Tensor::packed("K", &dims)),
        g.tensor(Tensor::packed("V", &dims)),
    );
    let out = g
        .sdpa_forward(q, k, v, SdpaForwardAttrs::new().causal())
        .expect("builds");
    let report = analyze(&g, &dev.target().expect("target"));
    let pinned = HeuristicsOptions {
        pin: Some(rime_analyzer::Selector::engine(
            rime_analyzer::EngineKind::Sm120,
        )),
        ..HeuristicsOptions::default()
    };
    let approved = report
        .approve_best(&pinned)
        .expect("sm120 supports it")
        .remove(0);
    let plan = Sm120EnginePlan::new(Arc::clone(&dev), &approved).expect("builds");
    let values: Vec<f64> = (0..128 * 128)
        .map(|i| ((i % 13) as f64 - 6.0) / 8.0)
        .collect();
    let host = HostBuffer::from_f64(DataType::Bf16, &values).expect("bf16");
    let mut pack = VariantPack::new();
    for id in [q, k, v] {
        pack.insert(
            id,
            Box::new(DeviceBuffer::upload(&dev, &host).expect("upload")),
        );
    }
    pack.insert(
        out.o,
        Box::new(DeviceBuffer::poisoned(&dev, DataType::Bf16, 128 * 128).expect("o")),
    );
    let mut ws = Workspace::host(0);

    // A stream of the same (primary) context made with cudarc, and the null stream.
    let theirs = dev.context().new_stream().expect("stream");
    let on_theirs = dev.on_stream(Arc::clone(&theirs)).expect("same context");
    assert!(on_theirs.same_context(&dev));
    plan.enqueue_on(&on_theirs, &mut pack, &mut ws)
        .expect("runs");
    on_theirs.synchronize().expect("sync");
    // SAFETY: the null stream is the context's legacy default stream, alive for the process.
    let on_null = unsafe { dev.on_raw_stream(std::ptr::null_mut()) }.expect("null stream");
    plan.enqueue_on(&on_null, &mut pack, &mut ws).expect("runs");
    on_null.synchronize().expect("sync");
    let got = pack
        .get(&out.o.into())
        .and_then(|b| b.as_any().downcast_ref::<DeviceBuffer>())
        .expect("o")
        .download(&dev)
        .expect("download")
        .to_f64();

    let cpu_report = analyze(&g, &rime_analyzer::Target::by_name("cpu").expect("cpu"));
    let cpu = CpuEngine
        .build_plan(
            &cpu_report
                .approve_best(&HeuristicsOptions::default())
                .expect("cpu")[0],
        )
        .expect("cpu plan");
    let mut host_pack = VariantPack::new();
    for id in [q, k, v] {
        host_pack.insert(id, Box::new(host.clone()));
    }
    host_pack.insert(
        out.o,
        Box::new(HostBuffer::zeros(DataType::Bf16, 128 * 128).expect("o")),
    );
    cpu.execute(&mut host_pack, &mut Workspace::host(0))
        .expect("cpu runs");
    let want = host_pack
        .get(&out.o.into())
        .and_then(|b| b.as_any().downcast_ref::<HostBuffer>())
        .expect("o")
        .to_f64();
    let worst = got
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst < 2e-2, "max |sm120 - cpu| = {worst}");

    // A stream of another context is refused, by the view and by the plan.
    let other = cudarc::driver::CudaContext::new_non_primary(0, 0).expect("context");
    let foreign = other.new_stream().expect("stream");
    assert!(matches!(
        dev.on_stream(foreign),
        Err(CudaError::ForeignStream { .. })
    ));
}
