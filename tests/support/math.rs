//! A graph as far as the math goes: what two graphs must share to compute the same thing even
//! when one was read from a cuDNN dump and the other written by hand.

use std::collections::BTreeMap;

use rime::graph::{json, Graph};

/// The canonical text of `graph` with every tensor's effective data type written out (the
/// context's where the tensor names none), tensors sorted by name and uids left out (the
/// frontend numbers tensors itself).
pub fn math_of(graph: &Graph) -> serde_json::Value {
    let mut g = graph.clone();
    let ids: Vec<_> = g.tensor_ids().collect();
    for id in ids {
        let effective = g.data_type(id);
        if let Some(t) = g.get_mut(id) {
            t.data_type = effective;
        }
    }
    let mut doc = json::to_value(&g);
    if let Some(tensors) = doc["tensors"].as_object_mut() {
        let mut sorted: BTreeMap<String, serde_json::Value> = BTreeMap::new();
        for (name, mut t) in std::mem::take(tensors) {
            if let Some(t) = t.as_object_mut() {
                t.remove("uid");
            }
            sorted.insert(name, t);
        }
        *tensors = sorted.into_iter().collect();
    }
    doc
}
