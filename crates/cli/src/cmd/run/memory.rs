//! Whether a run fits in host memory, decided before any tensor is allocated: every buffer
//! the run holds (each tensor once; they live until the outputs are written), plus the
//! largest engine scratch (nodes run one at a time), plus the `--inputs` file, against the
//! memory available now and the `--max-memory` limit.

use anyhow::bail;
use rime_engines::memory::host_available;
use rime_engines::MemoryNeeds;
use rime_graph::{shown, Graph, TensorId};

use super::data::element_bytes;
use crate::limits::human;

/// Host bytes of tensor `id`'s buffer (its strided span; a ragged tensor's full sequences
/// packed), saturating.
fn buffer_bytes(graph: &Graph, id: TensorId) -> u64 {
    let (Some(t), Some(dt)) = (graph.get(id), graph.data_type(id)) else {
        return 0;
    };
    t.buffer_elements()
        .map_or(u64::MAX, |n| n.saturating_mul(element_bytes(dt)))
}

/// What the run needs: `tensors` (distinct) held at once, the largest of `scratch` (one per
/// plan), and `file` (the bytes of the `--inputs` file and its largest tensor, decoded once
/// while it is laid out).
pub fn needs(
    graph: &Graph,
    tensors: &[TensorId],
    scratch: Vec<MemoryNeeds>,
    file: (u64, u64),
) -> MemoryNeeds {
    let mut needs = MemoryNeeds::new();
    for &id in tensors {
        if let Some(t) = graph.get(id) {
            needs.add(
                format!("tensor '{}'", shown(&t.name)),
                buffer_bytes(graph, id),
            );
        }
    }
    if let Some(largest) = scratch.into_iter().max_by_key(MemoryNeeds::total) {
        needs.extend(largest);
    }
    needs.add("the --inputs file", file.0);
    needs.add("one --inputs tensor being laid out", file.1);
    needs
}

/// Refuses `needs` beyond the available memory or `limit`.
///
/// # Errors
/// The run would not fit; the message gives the total, the largest items by name and the
/// budget it exceeds.
pub fn check(needs: &MemoryNeeds, limit: Option<u64>) -> anyhow::Result<()> {
    let total = needs.total();
    let available = host_available();
    let over = match (limit, available) {
        (Some(l), _) if total > l => Some(format!("the --max-memory limit of {}", human(l))),
        (_, Some(a)) if total > a => Some(format!(
            "the {} of host memory available now (MemAvailable)",
            human(a)
        )),
        _ => None,
    };
    if let Some(budget) = over {
        bail!(
            "this run needs {} of host memory, more than {budget}; nothing was computed. Largest needs: {}",
            human(total),
            needs
                .largest(5)
                .iter()
                .map(|i| format!("{} {}", i.what, human(i.bytes)))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}
