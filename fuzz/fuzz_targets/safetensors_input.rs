//! Arbitrary bytes as the `--inputs` file of `rime run` (the CLI's `tensor_file.rs`, compiled
//! here as it is): reading and parsing never panic, reading the bytes as a regular file and as
//! a stream accept and refuse the same inputs, every refusal names the file, and a file that
//! passes the check against the graph gives buffers that lay out in the graph's tensors.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rime_graph::{Context, DataType, Graph, SdpaBackwardAttrs, Tensor};

// The CLI's reader also opens files and reports sizes, which this target does not use.
#[allow(dead_code)]
#[path = "../../crates/cli/src/tensor_file.rs"]
mod tensor_file;

use tensor_file::{caller_inputs, TensorFile};

const SOURCE: &str = "fuzz.safetensors";

/// A small backward with a bias and padding: f16 and bf16 operands, f32 Stats, i32 lengths,
/// and a by-value scale (which the file must not hold).
fn graph() -> &'static Graph {
    static GRAPH: OnceLock<Graph> = OnceLock::new();
    GRAPH.get_or_init(|| {
        let mut g = Graph::new(Context::with_io(DataType::Bf16));
        let dims = [1, 2, 3, 4];
        let q = g.tensor(Tensor::packed("Q", &dims));
        let k = g.tensor(Tensor::bshd("K", dims));
        let v = g.tensor(Tensor::packed("V", &dims));
        let o = g.tensor(Tensor::packed("O", &dims));
        let d_o = g.tensor(Tensor::packed("dO", &dims));
        let stats = g.tensor(Tensor::packed("Stats", &[1, 2, 3, 1]).with_data_type(DataType::F32));
        let bias = g.tensor(Tensor::packed("Bias", &[1, 1, 3, 3]));
        let lens = |name: &str| Tensor::packed(name, &[1, 1, 1, 1]).with_data_type(DataType::I32);
        let (lq, lkv) = (g.tensor(lens("SEQ_LEN_Q")), g.tensor(lens("SEQ_LEN_KV")));
        let scale = g.tensor(Tensor::scalar_f32("scale", 0.5));
        let attrs = SdpaBackwardAttrs::new()
            .name("bwd")
            .bias(bias)
            .padding(lq, lkv)
            .attn_scale_tensor(scale);
        g.sdpa_backward(q, k, v, o, d_o, stats, attrs).expect("builds");
        g
    })
}

fuzz_target!(|data: &[u8]| {
    let limit = 1 << 16;
    let size = u64::try_from(data.len()).ok();
    let sized = TensorFile::from_reader(SOURCE, data, size, limit);
    let streamed = TensorFile::from_reader(SOURCE, data, None, limit);
    assert_eq!(sized.is_ok(), streamed.is_ok(), "{sized:?} / {streamed:?}");
    let file = match sized {
        Ok(file) => file,
        Err(e) => {
            assert!(e.to_string().starts_with(SOURCE), "{e}");
            return;
        }
    };
    let g = graph();
    let wanted = caller_inputs(g);
    match file.check_against(g, &wanted) {
        Err(e) => assert!(e.to_string().starts_with(SOURCE), "{e}"),
        Ok(()) => {
            for entry in file.entries() {
                let id = g.find(&entry.name).expect("checked: a tensor of the graph");
                assert!(wanted.contains(&id), "{}: checked, so wanted", entry.name);
                let t = g.get(id).expect("exists");
                let dt = g.data_type(id).expect("typed");
                let logical = file.buffer(&entry.name, dt).expect("checked type and shape");
                let span = usize::try_from(t.span_elements().expect("valid")).expect("fits");
                // The graph's layouts do not overlap, so every checked buffer lays out.
                if let Err(e) = logical.from_logical(&t.dims, &t.strides, span) {
                    panic!("{}: checked dims lay out: {e}", entry.name);
                }
            }
        }
    }
});
