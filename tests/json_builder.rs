//! A graph built with the Rust builder API equals the same graph loaded from its JSON fixture.

mod support;

use rime::graph::{json, Context, DataType, Graph, SdpaBackwardAttrs, Tensor};

#[test]
fn builder_and_json_fixture_give_the_same_graph() {
    let (b, h, s, d) = (2, 4, 64, 64);
    let mut context = Context::with_io(DataType::Bf16);
    context.name = "builder twin".to_owned();
    let mut g = Graph::new(context);
    let q = g.tensor(Tensor::packed("Q", &[b, h, s, d]));
    let k = g.tensor(Tensor::packed("K", &[b, h, s, d]));
    let v = g.tensor(Tensor::packed("V", &[b, h, s, d]));
    let o = g.tensor(Tensor::packed("O", &[b, h, s, d]));
    let d_o = g.tensor(Tensor::packed("dO", &[b, h, s, d]));
    let stats = g.tensor(Tensor::packed("Stats", &[b, h, s, 1]).with_data_type(DataType::F32));
    let bias = g.tensor(Tensor::packed("Bias", &[1, h, s, s]));
    let attrs = SdpaBackwardAttrs::new()
        .name("bwd")
        .causal()
        .attn_scale(0.125)
        .bias(bias)
        .dbias()
        .deterministic();
    g.sdpa_backward(q, k, v, o, d_o, stats, attrs)
        .expect("builder accepts its own tensors");
    g.validate().expect("the built graph is valid");

    let path = support::root().join("tests/fixtures/valid/builder_twin_bwd_causal_bias.json");
    let loaded = json::load_file(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded, g);
    assert_eq!(json::to_string(&loaded), json::to_string(&g));
}
