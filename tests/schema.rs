//! `schemas/graph.v1.schema.json` is the generated schema of the wire types (a stale file
//! fails here), valid fixtures satisfy it, and invalid fixtures are rejected by it unless
//! their fault is one a JSON Schema cannot express (listed below with the reason).

mod support;

use support::{fixtures, load_and_validate, relative, root};

const SCHEMA_FILE: &str = "schemas/graph.v1.schema.json";

/// Invalid fixtures whose fault the schema cannot see, and why. The loader or the validator
/// rejects each of them (checked below).
const SCHEMA_BLIND: &[(&str, &str)] = &[
    // JSON parsers keep one value of a duplicated key; the schema sees only that one.
    (
        "duplicate_json_key_port",
        "duplicate keys are invisible after parsing",
    ),
    (
        "duplicate_json_key_tensor_dims",
        "duplicate keys are invisible after parsing",
    ),
    (
        "duplicate_json_key_tensors",
        "duplicate keys are invisible after parsing",
    ),
    // Number ranges the schema states only as a format annotation.
    (
        "dims_literal_overflows_i64",
        "int64 is a format annotation, not checked",
    ),
    (
        "attn_scale_outside_f32_range",
        "f32 range is a format annotation, not checked",
    ),
    // References between tensors and nodes.
    ("dangling_port_reference", "references are not expressible"),
    ("dangling_uid_reference", "references are not expressible"),
    ("dangling_ragged_offset", "references are not expressible"),
    ("ambiguous_uid_reference", "references are not expressible"),
    (
        "duplicate_uids",
        "uniqueness across tensors is not expressible",
    ),
    (
        "duplicate_node_names",
        "uniqueness across nodes is not expressible",
    ),
    ("two_writers_one_tensor", "references are not expressible"),
    ("output_aliases_input", "references are not expressible"),
    ("cycle_two_nodes", "graph cycles are not expressible"),
    (
        "virtual_input_no_producer",
        "needs the producers of a tensor",
    ),
    (
        "output_port_as_input",
        "ports per direction and op are the validator's table",
    ),
    (
        "missing_required_port_stats",
        "required ports per op are the validator's table",
    ),
    // Shapes, layouts and types relative to other tensors.
    ("bad_rank_q", "ranks per port need the node"),
    ("last_stride_not_one", "per-port layout rule"),
    (
        "stride_count_mismatch",
        "array lengths relative to each other",
    ),
    ("twin_shape_mismatch_dq", "dims relative to another tensor"),
    ("dims_product_overflows_i64", "products of dims"),
    ("stats_not_f32", "data types per port need the node"),
    ("k_dtype_ne_q", "data types relative to another tensor"),
    ("no_data_type_anywhere", "type inference from the context"),
    ("output_passed_by_value", "needs the node's outputs"),
    (
        "bias_passed_by_value",
        "which ports take a value is per port",
    ),
    ("empty_tensor_name", "the validator's naming rule"),
];

fn schema() -> serde_json::Value {
    rime::graph::json::schema()
}

#[test]
fn schema_file_is_up_to_date() {
    let want = rime::graph::json::schema_text();
    let path = root().join(SCHEMA_FILE);
    if std::env::var_os("UPDATE_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::write(&path, &want).unwrap_or_else(|e| panic!("{SCHEMA_FILE}: {e}"));
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{SCHEMA_FILE} is stale (the wire types changed). Regenerate it with\n    \
         cargo run -p rime-cli -- schema > {SCHEMA_FILE}\nor\n    \
         UPDATE_SCHEMA=1 cargo test -p rime --test schema"
    );
}

#[test]
fn valid_fixtures_satisfy_the_schema() {
    let validator = jsonschema::validator_for(&schema()).expect("the schema compiles");
    for path in fixtures("valid") {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let value: serde_json::Value = serde_json::from_str(&text).expect("valid fixtures parse");
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", relative(&path));
    }
}

#[test]
fn invalid_fixtures_are_rejected_by_schema_or_loader() {
    let validator = jsonschema::validator_for(&schema()).expect("the schema compiles");
    let mut blind_seen = 0;
    for path in fixtures("invalid") {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            load_and_validate(&path).is_err(),
            "{}: accepted",
            relative(&path)
        );
        let schema_accepts = serde_json::from_str::<serde_json::Value>(&text)
            .is_ok_and(|value| validator.is_valid(&value));
        match SCHEMA_BLIND.iter().find(|(n, _)| *n == name) {
            Some((_, why)) => {
                blind_seen += 1;
                assert!(
                    schema_accepts,
                    "{name} is listed as schema-blind ({why}) but the schema rejects it: \
                     remove it from SCHEMA_BLIND"
                );
            }
            None => assert!(
                !schema_accepts,
                "{}: the schema accepts it; tighten the schema or list it in SCHEMA_BLIND",
                relative(&path)
            ),
        }
    }
    assert_eq!(
        blind_seen,
        SCHEMA_BLIND.len(),
        "SCHEMA_BLIND names a missing fixture"
    );
}
