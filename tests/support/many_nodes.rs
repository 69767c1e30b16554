//! Large graphs for the load and validation bench and the hostile-input tests: `nodes`
//! independent SDPA backward nodes, each with its own nine tensors (the shape of a valid
//! 2,000-node file of about 2.7 MB), and files with many invalid tensors.

#![allow(dead_code)] // each includer uses its own subset

use rime_graph::{json, Context, DataType, Graph, SdpaBackwardAttrs, Tensor};

/// A valid graph of `nodes` backward nodes (causal, scale by value, BSHD operands).
pub fn graph(nodes: usize) -> Graph {
    let mut g = Graph::new(Context::with_io(DataType::Bf16));
    let dims = [1, 2, 64, 64];
    for i in 0..nodes {
        let t = |name: &str| Tensor::bshd(format!("n{i}.{name}"), dims);
        let (q, k, v) = (g.tensor(t("Q")), g.tensor(t("K")), g.tensor(t("V")));
        let (o, d_o) = (g.tensor(t("O")), g.tensor(t("dO")));
        let stats = Tensor::packed(format!("n{i}.Stats"), &[1, 2, 64, 1]);
        let stats = g.tensor(stats.with_data_type(DataType::F32));
        let attrs = SdpaBackwardAttrs::new()
            .name(format!("bwd{i}"))
            .causal()
            .attn_scale(0.125);
        g.sdpa_backward(q, k, v, o, d_o, stats, attrs)
            .expect("ids of this graph");
    }
    g
}

/// The canonical text of [`graph`].
pub fn text(nodes: usize) -> String {
    json::to_string(&graph(nodes))
}

/// The text of a one-node graph plus `bad` unused tensors with a negative dim each: a file
/// with `bad` validation errors, every one of which is located in the text.
pub fn invalid_text(bad: usize) -> String {
    let mut g = graph(1);
    for i in 0..bad {
        g.tensor(Tensor::new(
            format!("bad{i}"),
            &[1, -1, 4, 4],
            &[16, 16, 4, 1],
        ));
    }
    json::to_string(&g)
}
