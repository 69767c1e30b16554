//! Canonical text: serde_json's pretty printer, with arrays of numbers (dims, strides) kept on
//! one line so that a tensor reads as one shape.

/// Pretty JSON with number arrays folded onto one line and a trailing newline.
pub(crate) fn canonical(pretty: &str) -> String {
    let lines: Vec<&str> = pretty.lines().collect();
    let mut out = String::with_capacity(pretty.len());
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        // A raw line break never occurs inside a JSON string, so a line ending in `[` opens an
        // array, and a line holding only a number is an array item.
        if line.ends_with('[') {
            let items: Vec<&str> = lines[i + 1..]
                .iter()
                .map(|l| l.trim().trim_end_matches(','))
                .take_while(|l| is_number(l))
                .collect();
            let close = lines.get(i + 1 + items.len()).map(|l| l.trim());
            if let (false, Some(close @ ("]" | "],"))) = (items.is_empty(), close) {
                out.push_str(line);
                out.push_str(&items.join(", "));
                out.push_str(close);
                out.push('\n');
                i += items.len() + 2;
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
        i += 1;
    }
    out
}

fn is_number(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_digit() || b"-+.eE".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_number_arrays_only() {
        let v =
            serde_json::json!({"a": [1, 2, -3], "b": ["x", "y"], "c": [], "d": [[1], {"e": 2.5}]});
        let text = canonical(&serde_json::to_string_pretty(&v).unwrap());
        assert!(text.contains("\"a\": [1, 2, -3],"));
        assert!(text.contains("\"b\": [\n"));
        assert!(text.contains("    [1],\n"));
        assert!(text.ends_with("}\n"));
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }
}
