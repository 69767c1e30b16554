//! Graphs serialized by the cuDNN frontend (`Graph::serialize`) load into the same graph
//! rime's own format describes.

mod support;

use rime::graph::{json, DataType, Port, Scalar};

#[test]
fn cudnn_frontend_sdpa_bwd_graph_loads() {
    let path = support::root().join("tests/fixtures/cudnn/sdpa_bwd_frontend_dropout_bias.json");
    let text = std::fs::read_to_string(&path).expect("fixture");
    let g =
        json::cudnn::from_str(&text, &support::relative(&path)).unwrap_or_else(|e| panic!("{e}"));
    g.validate().unwrap_or_else(|e| panic!("{e}"));

    assert_eq!(g.context.io_data_type, Some(DataType::F16));
    assert_eq!(g.tensors().len(), 13);
    let node = &g.nodes()[0];
    assert_eq!(node.name, "flash_attention_backward");
    assert_eq!(node.options.dropout_probability, Some(0.1));
    assert_eq!(node.options.right_bound, Some(0));
    assert_eq!(node.options.attn_scale, None);
    // null ports are absent, uid refs resolve to the uid, name refs to the name
    assert!(node.input(Port::Sink).is_none() && node.output(Port::DBias).is_none());
    let name = |p: Port| {
        g.get(node.port(p).expect("bound"))
            .expect("exists")
            .name
            .clone()
    };
    assert_eq!(name(Port::Stats), "stats");
    assert_eq!(name(Port::DQ), "flash_attention_backward::dQ");
    let scale = g
        .get(node.input(Port::AttnScale).expect("bound"))
        .expect("exists");
    assert_eq!(scale.pass_by_value, Some(Scalar::F32(0.125)));
    let dq = g.get(node.output(Port::DQ).expect("dQ bound"));
    assert_eq!(dq.and_then(|t| t.uid), Some(102));

    // And it re-saves as a rime file that loads to the same graph.
    let saved = json::to_string(&g);
    assert_eq!(json::from_str(&saved, "saved.json").expect("reloads"), g);
    insta::assert_snapshot!(saved);
}

#[test]
fn cudnn_reader_rejects_what_it_cannot_model() {
    let base = std::fs::read_to_string(
        support::root().join("tests/fixtures/cudnn/sdpa_bwd_frontend_dropout_bias.json"),
    )
    .expect("fixture");
    let cases = [
        (
            "\"SDPA_BWD\"",
            "\"CONV_FPROP\"",
            "unknown variant `CONV_FPROP`",
        ),
        ("\"3DCCCCCD\"", "\"3DCCCC\"", "not an 8-digit hex float"),
        (
            "\"io_data_type\": \"HALF\"",
            "\"io_data_type\": \"FP8_E4M3\"",
            "unknown variant `FP8_E4M3`",
        ),
        ("\"Stats\": 5", "\"Stats\": 55", "no tensor has uid 55"),
        (
            "\"Bias\": \"bias\"",
            "\"Bias\": \"biass\"",
            "no tensor named `biass`",
        ),
        ("\"index\": 3", "\"index\": 2", "half/bfloat16"),
    ];
    for (from, to, expect) in cases {
        assert!(base.contains(from), "{from}");
        let text = base.replacen(from, to, 1);
        let err = json::cudnn::from_str(&text, "x.json")
            .expect_err(to)
            .to_string();
        assert!(err.contains(expect), "{to}: {err}");
        assert!(err.starts_with("x.json:"), "{err}");
    }
}
