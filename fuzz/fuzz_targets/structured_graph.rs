//! Structure-aware: the fuzzer's bytes choose a well-formed SDPA graph (sizes, masks, bias,
//! padding, sink, scale, GQA, layouts, a forward twin; `tests/support/graph_spec.rs`) and then
//! a list of edits to its canonical JSON (dims, strides, data types, uids, ports, options set
//! to boundary values). The edited text goes through load, validate, analyze on every target,
//! heuristics, approval and rendering; nothing may panic and every rejection has a documented
//! code.

#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use rime_graph::{json, DataType, Port};
use serde_json::{json as value, Value};

#[path = "../../tests/support/exercise.rs"]
mod exercise;
#[path = "../../tests/support/graph_spec.rs"]
mod graph_spec;

use graph_spec::{BiasSpec, GraphSpec, MaskSpec, ScaleSpec};

/// Sizes at and around the boundaries the analyzer cares about (envelopes, tiles, overflow).
const SIZES: &[i64] = &[
    1, 2, 3, 4, 7, 8, 16, 60, 64, 72, 96, 127, 128, 129, 160, 192, 256, 257, 4096, 65536,
];
const EXTREMES: &[i64] = &[
    -1,
    0,
    1 << 31,
    i32::MAX as i64,
    1 << 40,
    i64::MAX / 2,
    i64::MAX,
    i64::MIN,
];

fn size(u: &mut Unstructured) -> Result<i64> {
    if u.ratio(1, 32)? {
        Ok(*u.choose(EXTREMES)?)
    } else {
        Ok(*u.choose(SIZES)?)
    }
}

fn small(u: &mut Unstructured) -> Result<i64> {
    if u.ratio(1, 32)? {
        Ok(*u.choose(EXTREMES)?)
    } else {
        u.int_in_range(1..=8)
    }
}

fn spec(u: &mut Unstructured) -> Result<GraphSpec> {
    let bottom_right = u.arbitrary()?;
    let mask = match u.int_in_range(0..=2)? {
        0 => MaskSpec::None,
        1 => MaskSpec::Causal { bottom_right },
        _ => MaskSpec::Band {
            left: if u.arbitrary()? {
                Some(small(u)?)
            } else {
                None
            },
            right: small(u)?.saturating_sub(1),
            bottom_right,
        },
    };
    let bias = if u.arbitrary()? {
        Some(BiasSpec {
            per_batch: u.arbitrary()?,
            per_head: u.arbitrary()?,
            dbias: u.arbitrary()?,
        })
    } else {
        None
    };
    let scale = match u.int_in_range(0..=2)? {
        0 => ScaleSpec::Default,
        1 => ScaleSpec::Value(u.arbitrary()?),
        _ => ScaleSpec::Tensor(u.arbitrary()?),
    };
    Ok(GraphSpec {
        io: *u.choose(&[DataType::F16, DataType::Bf16])?,
        batch: small(u)?,
        heads_kv: small(u)?,
        group: small(u)?,
        seq_q: size(u)?,
        seq_kv: size(u)?,
        d_qk: size(u)?,
        d_v: size(u)?,
        bshd: u.arbitrary()?,
        mask,
        bias,
        padding: u.arbitrary()?,
        alibi: u.arbitrary()?,
        sink: if u.arbitrary()? {
            Some(u.arbitrary()?)
        } else {
            None
        },
        scale,
        deterministic: u.arbitrary()?,
        forward_twin: u.arbitrary()?,
        uids: u.arbitrary()?,
    })
}

const OPTIONS: &[&str] = &[
    "attn_scale",
    "left_bound",
    "right_bound",
    "diagonal_alignment",
    "padding_mask",
    "alibi_mask",
    "dropout_probability",
    "deterministic",
    "max_total_seq_len_q",
    "max_total_seq_len_kv",
];

fn number(u: &mut Unstructured) -> Result<Value> {
    Ok(match u.int_in_range(0..=3)? {
        0 => value!(size(u)?),
        1 => value!(*u.choose(EXTREMES)?),
        2 => value!(*u.choose(&[0.0, -0.0, 0.5, 1.0, -1.0, 1e-45, 3.4e38, 1e39, -1e300])?),
        _ => value!(u.arbitrary::<bool>()?),
    })
}

/// One edit of the canonical JSON of the graph.
fn edit(u: &mut Unstructured, doc: &mut Value) -> Result<()> {
    let names: Vec<String> = doc["tensors"]
        .as_object()
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    let nodes = doc["nodes"].as_array().map_or(0, Vec::len);
    if names.is_empty() || nodes == 0 {
        return Ok(());
    }
    let name = u.choose(&names)?.clone();
    let node = u.choose_index(nodes)?;
    let tensor = &mut doc["tensors"][&name];
    match u.int_in_range(0..=9)? {
        0 | 1 => {
            let key = *u.choose(&["dims", "strides"])?;
            let len = tensor[key].as_array().map_or(0, Vec::len);
            if len > 0 {
                let i = u.choose_index(len)?;
                tensor[key][i] = value!(if u.arbitrary()? {
                    size(u)?
                } else {
                    *u.choose(EXTREMES)?
                });
            }
        }
        2 => {
            let dt = u.choose(&DataType::ALL)?;
            tensor["data_type"] = value!(dt.name());
        }
        3 => tensor["uid"] = value!(small(u)?),
        4 => tensor["virtual"] = value!(u.arbitrary::<bool>()?),
        5 => {
            let key = *u.choose(&["dims", "strides"])?;
            if let Some(a) = tensor[key].as_array_mut() {
                if u.arbitrary()? {
                    a.pop();
                } else {
                    a.push(value!(size(u)?));
                }
            }
        }
        6 => {
            let key = *u.choose(OPTIONS)?;
            doc["nodes"][node][key] = if key == "diagonal_alignment" {
                value!(*u.choose(&["TOP_LEFT", "BOTTOM_RIGHT"])?)
            } else {
                number(u)?
            };
        }
        7 => {
            let side = *u.choose(&["inputs", "outputs"])?;
            if let Some(ports) = doc["nodes"][node][side].as_object_mut() {
                let keys: Vec<String> = ports.keys().cloned().collect();
                if !keys.is_empty() {
                    ports.remove(u.choose(&keys)?);
                }
            }
        }
        8 => {
            let side = *u.choose(&["inputs", "outputs"])?;
            let port = u.choose(&Port::ALL)?.name();
            doc["nodes"][node][side][port] = value!(name);
        }
        _ => {
            let scalar = *u.choose(&["f32", "f64", "i32", "i64"])?;
            tensor["value"] = value!({ scalar: number(u)? });
        }
    }
    Ok(())
}

fn run(u: &mut Unstructured) -> Result<()> {
    let spec = spec(u)?;
    let graph = spec.build();
    // Built in code, a graph may hold what no file can (a NaN scale): analyze it as it is.
    exercise::exercise(&graph);
    let finite = match spec.scale {
        ScaleSpec::Value(s) | ScaleSpec::Tensor(s) => s.is_finite(),
        ScaleSpec::Default => true,
    };
    let small = [
        spec.batch,
        spec.heads_kv,
        spec.group,
        spec.heads_q(),
        spec.seq_q,
        spec.seq_kv,
        spec.d_qk,
        spec.d_v,
    ]
    .iter()
    .all(|&d| (1..=65536).contains(&d));
    if small {
        if let Err(e) = graph.validate() {
            panic!("a spec of modest sizes builds a valid graph: {spec:?}: {e}");
        }
    }
    let mut doc = json::to_value(&graph);
    let edits = u.int_in_range(0..=4)?;
    for _ in 0..edits {
        edit(u, &mut doc)?;
    }
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    match json::from_str(&text, "structured.json") {
        Ok(loaded) => {
            if edits == 0 && finite {
                assert_eq!(loaded, graph, "an unedited graph round-trips");
            }
            let saved = json::to_string(&loaded);
            let again = json::from_str(&saved, "saved.json").expect("a loaded graph's save loads");
            assert_eq!(again, loaded);
            exercise::exercise(&loaded);
        }
        Err(e) => assert!(
            edits > 0 || !finite,
            "an unedited graph must load: {e}\n{text}"
        ),
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
