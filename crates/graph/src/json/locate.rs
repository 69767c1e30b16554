//! Finding places in JSON text: the line and column of a value given its path, and the path of
//! the value at a line and column. serde_json reports positions but not paths; the converter
//! knows paths but not positions. This small tolerant scanner joins the two.

use std::fmt;

use super::error::Location;

/// Deeper nesting than this is not scanned (serde_json refuses it anyway).
const MAX_DEPTH: usize = 128;

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// A path from the document root, displayed as `nodes[0].inputs.Q`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct JsonPath(pub(crate) Vec<Seg>);

impl JsonPath {
    /// This path extended by a key.
    pub(crate) fn key(&self, key: &str) -> JsonPath {
        let mut p = self.clone();
        p.0.push(Seg::Key(key.to_owned()));
        p
    }

    /// This path extended by an index.
    pub(crate) fn index(&self, index: usize) -> JsonPath {
        let mut p = self.clone();
        p.0.push(Seg::Index(index));
        p
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(top level)");
        }
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Index(n) => write!(f, "[{n}")?,
                Seg::Key(k) if is_plain(k) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(k)?;
                }
                Seg::Key(k) => write!(f, "[{k:?}")?,
            }
            if !matches!(seg, Seg::Key(k) if is_plain(k)) {
                f.write_str("]")?;
            }
        }
        Ok(())
    }
}

fn is_plain(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// A scanned value: byte span and children.
#[derive(Debug)]
struct Span {
    start: usize,
    end: usize,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Scalar,
    Array(Vec<Span>),
    /// (key, key start, key end, value)
    Object(Vec<(String, usize, usize, Span)>),
}

struct Scanner<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn skip_ws(&mut self) {
        while self
            .text
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    /// Scans one value; `None` when the text is not JSON here (the caller keeps what it has).
    fn value(&mut self, depth: usize) -> Option<Span> {
        self.skip_ws();
        let start = self.pos;
        let kind = match self.peek()? {
            b'{' if depth < MAX_DEPTH => self.object(depth)?,
            b'[' if depth < MAX_DEPTH => self.array(depth)?,
            b'"' => {
                self.string()?;
                Kind::Scalar
            }
            b'{' | b'[' => return None,
            _ => {
                while self.peek().is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b':') && !b.is_ascii_whitespace()
                }) {
                    self.pos += 1;
                }
                if self.pos == start {
                    return None;
                }
                Kind::Scalar
            }
        };
        Some(Span {
            start,
            end: self.pos,
            kind,
        })
    }

    /// Skips a string literal, returning its span (quotes included).
    fn string(&mut self) -> Option<(usize, usize)> {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek()? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Some((start, self.pos));
                }
                _ => self.pos += 1,
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Kind> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            if self.peek()? == b']' {
                self.pos += 1;
                return Some(Kind::Array(items));
            }
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            if self.peek()? == b',' {
                self.pos += 1;
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<Kind> {
        self.pos += 1;
        let mut entries = Vec::new();
        loop {
            self.skip_ws();
            match self.peek()? {
                b'}' => {
                    self.pos += 1;
                    return Some(Kind::Object(entries));
                }
                b'"' => {}
                _ => return None,
            }
            let (ks, ke) = self.string()?;
            let key = std::str::from_utf8(&self.text[ks..ke])
                .ok()
                .and_then(|raw| serde_json::from_str::<String>(raw).ok())
                .unwrap_or_default();
            self.skip_ws();
            if self.peek()? != b':' {
                return None;
            }
            self.pos += 1;
            let value = self.value(depth + 1)?;
            entries.push((key, ks, ke, value));
            self.skip_ws();
            if self.peek()? == b',' {
                self.pos += 1;
            }
        }
    }
}

fn scan(text: &str) -> Option<Span> {
    Scanner {
        text: text.as_bytes(),
        pos: 0,
    }
    .value(0)
}

/// Line and column (1-based, bytes) of byte `offset`.
pub(crate) fn location_of(text: &str, offset: usize) -> Location {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    Location {
        line,
        column: offset - line_start + 1,
    }
}

/// Byte offset of a serde_json position (1-based line, column of the last byte read).
fn offset_of(text: &str, at: Location) -> usize {
    let mut line_start = 0;
    for _ in 1..at.line {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => break,
        }
    }
    (line_start + at.column.saturating_sub(1)).min(text.len())
}

/// Where the value at `path` starts, when the text has it. (The first of duplicate keys.)
pub(crate) fn locate(text: &str, path: &JsonPath) -> Option<Location> {
    let mut span = scan(text)?;
    for seg in &path.0 {
        span = match (seg, span.kind) {
            (Seg::Index(i), Kind::Array(items)) => items.into_iter().nth(*i)?,
            (Seg::Key(k), Kind::Object(entries)) => {
                entries.into_iter().find(|(key, ..)| key == k)?.3
            }
            _ => return None,
        };
    }
    Some(location_of(text, span.start))
}

/// The nearest value on `path` that the text has: `path` itself, else its closest ancestor
/// (e.g. the tensor, when its `data_type` key is absent), with where that value starts.
pub(crate) fn locate_nearest(text: &str, path: &JsonPath) -> Option<(JsonPath, Location)> {
    let mut path = path.clone();
    loop {
        if let Some(at) = locate(text, &path) {
            return Some((path, at));
        }
        path.0.pop()?;
    }
}

/// The path of the innermost value (or object key) at a serde_json error position.
pub(crate) fn path_at(text: &str, at: Location) -> JsonPath {
    let mut offset = offset_of(text, at);
    // serde_json may stop just before the offending value (after `:` and spaces): step on to it.
    let bytes = text.as_bytes();
    while bytes
        .get(offset)
        .is_some_and(|b| b.is_ascii_whitespace() || *b == b':')
    {
        offset += 1;
    }
    let mut path = JsonPath::default();
    let Some(mut span) = scan_partial(text) else {
        return path;
    };
    loop {
        let next = match span.kind {
            Kind::Scalar => return path,
            Kind::Array(items) => items
                .into_iter()
                .enumerate()
                .find(|(_, s)| s.start <= offset && offset < s.end)
                .map(|(i, s)| (Seg::Index(i), s)),
            Kind::Object(entries) => {
                let mut found = None;
                for (key, ks, ke, value) in entries {
                    if ks <= offset && offset < ke {
                        path.0.push(Seg::Key(key));
                        return path;
                    }
                    if value.start <= offset && offset < value.end {
                        found = Some((Seg::Key(key), value));
                        break;
                    }
                }
                found
            }
        };
        match next {
            Some((seg, s)) => {
                path.0.push(seg);
                span = s;
            }
            None => return path,
        }
    }
}

/// Like [`scan`], but a document cut short still yields the containers opened so far, each
/// reaching to the end of the text (a data error can come before a later syntax error).
fn scan_partial(text: &str) -> Option<Span> {
    if let Some(span) = scan(text) {
        return Some(span);
    }
    // Re-scan truncated prefixes is costly; instead treat the whole text as the root object
    // and recover the keys that did scan.
    let mut s = Scanner {
        text: text.as_bytes(),
        pos: 0,
    };
    s.skip_ws();
    (s.peek() == Some(b'{')).then(|| Span {
        start: s.pos,
        end: text.len(),
        kind: Kind::Object(partial_entries(&mut s)),
    })
}

fn partial_entries(s: &mut Scanner<'_>) -> Vec<(String, usize, usize, Span)> {
    s.pos += 1;
    let mut entries = Vec::new();
    loop {
        s.skip_ws();
        if s.peek() != Some(b'"') {
            return entries;
        }
        let Some((ks, ke)) = s.string() else {
            return entries;
        };
        let key = std::str::from_utf8(&s.text[ks..ke])
            .ok()
            .and_then(|raw| serde_json::from_str::<String>(raw).ok())
            .unwrap_or_default();
        s.skip_ws();
        if s.peek() != Some(b':') {
            return entries;
        }
        s.pos += 1;
        let before = s.pos;
        match s.value(1) {
            Some(v) => entries.push((key, ks, ke, v)),
            None => {
                entries.push((
                    key,
                    ks,
                    ke,
                    Span {
                        start: before,
                        end: s.text.len(),
                        kind: Kind::Scalar,
                    },
                ));
                return entries;
            }
        }
        s.skip_ws();
        if s.peek() == Some(b',') {
            s.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "{\n  \"tensors\": {\"Q\": {\"dims\": [1, 2]}},\n  \"nodes\": [{\"inputs\": {\"Q\": \"X\"}}]\n}\n";

    #[test]
    fn locates_values_and_finds_paths() {
        let p = JsonPath::default()
            .key("nodes")
            .index(0)
            .key("inputs")
            .key("Q");
        assert_eq!(p.to_string(), "nodes[0].inputs.Q");
        let at = locate(DOC, &p).unwrap();
        assert_eq!((at.line, at.column), (3, 30));
        assert_eq!(path_at(DOC, at).to_string(), "nodes[0].inputs.Q");
        let dims = locate(
            DOC,
            &JsonPath::default().key("tensors").key("Q").key("dims"),
        )
        .unwrap();
        let one = Location {
            line: dims.line,
            column: dims.column + 4,
        };
        assert_eq!(path_at(DOC, one).to_string(), "tensors.Q.dims[1]");
        assert_eq!(JsonPath::default().key("a b").to_string(), "[\"a b\"]");
    }

    #[test]
    fn never_panics_on_garbage() {
        for text in [
            "",
            "{",
            "[[[[",
            "{\"a\":",
            "\"\\",
            "{\"a\" 1}",
            "}}}",
            "[1,,]",
        ] {
            let _ = locate(text, &JsonPath::default().key("a").index(3));
            for line in 0..3 {
                for column in 0..6 {
                    let _ = path_at(text, Location { line, column });
                }
            }
        }
        let deep = "[".repeat(10_000);
        assert!(locate(&deep, &JsonPath::default().index(0)).is_none());
    }
}
