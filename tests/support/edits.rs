//! Edits of a JSON document by JSON pointer, for case tables that derive bad graphs from a
//! valid fixture: `{"at": "/nodes/0/name", "set": VALUE}` sets (creating a missing last key),
//! `{"at": ..., "remove": true}` deletes, `{"at": ..., "repeat": ["x", N]}` sets a string of
//! N copies of "x" (a very long name without a very long case table).

#![allow(dead_code)] // each includer uses its own subset

use serde_json::Value;

/// Applies one edit to `doc`.
///
/// # Panics
/// On an edit that does not fit the document (a broken case table, not a finding).
pub fn apply(doc: &mut Value, edit: &Value) {
    let at = edit["at"].as_str().expect("edit.at");
    let (parent, key) = at.rsplit_once('/').expect("pointer with a parent");
    let parent = doc
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("no {parent}"));
    let value = match edit.get("repeat").and_then(Value::as_array) {
        Some(r) => {
            let text = r[0].as_str().expect("repeat text");
            let times = r[1].as_u64().expect("repeat count");
            Value::String(text.repeat(usize::try_from(times).expect("count")))
        }
        None => edit["set"].clone(),
    };
    let remove = edit["remove"].as_bool().unwrap_or(false);
    match parent {
        Value::Object(map) if remove => {
            map.remove(key);
        }
        Value::Object(map) => {
            map.insert(key.to_owned(), value);
        }
        Value::Array(items) if remove => {
            items.remove(key.parse::<usize>().expect("array index"));
        }
        Value::Array(items) => {
            let i: usize = key.parse().expect("array index");
            if i == items.len() {
                items.push(value);
            } else {
                items[i] = value;
            }
        }
        other => panic!("cannot edit inside {other}"),
    }
}
