//! Names for the tensors of a 2.0 dump. There a tensor is identified by its uid and its name
//! is an optional label that several tensors may share; rime needs a unique name per tensor.

use std::collections::HashMap;

/// One name per tensor, given each tensor's label (absent or empty: none) and uid: the label
/// itself when no other tensor has it, `label#uid` when several do, `#uid` without one.
pub(super) fn unique_names(tensors: &[(Option<&str>, i64)]) -> Vec<String> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (label, _) in tensors {
        if let Some(l) = label.filter(|l| !l.is_empty()) {
            *count.entry(l).or_default() += 1;
        }
    }
    tensors
        .iter()
        .map(|(label, uid)| match label.filter(|l| !l.is_empty()) {
            Some(l) if count.get(l) == Some(&1) => l.to_owned(),
            Some(l) => format!("{l}#{uid}"),
            None => format!("#{uid}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_unique_shared_and_absent() {
        let names = unique_names(&[
            (Some("Q"), 1),
            (Some("x"), 2),
            (None, 3),
            (Some("x"), 4),
            (Some(""), 5),
        ]);
        assert_eq!(names, ["Q", "x#2", "#3", "x#4", "#5"]);
    }
}
