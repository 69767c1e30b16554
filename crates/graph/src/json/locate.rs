//! Finding places in JSON text: the line and column of a value given its path, and the path of
//! the value at a line and column. serde_json reports positions but not paths; the converter
//! knows paths but not positions. This small tolerant scanner joins the two.

use std::collections::HashMap;
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
                    write!(f, "{}", crate::shown(k))?;
                }
                Seg::Key(k) => write!(f, "[\"{}\"", crate::shown(k))?,
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
    Object(Object),
}

/// The entries of an object in text order, with a key index once there are many (the
/// `tensors` object of a large graph), so that each lookup is O(1) and locating every error
/// of a file stays linear in its size.
#[derive(Debug, Default)]
struct Object {
    /// (key, key start, key end, value)
    entries: Vec<(String, usize, usize, Span)>,
    /// Key -> index of its first entry, for objects of more than [`INDEXED`] entries.
    by_key: Option<HashMap<String, usize>>,
}

/// Objects with more entries than this get a key index.
const INDEXED: usize = 8;

impl Object {
    fn push(&mut self, entry: (String, usize, usize, Span)) {
        self.entries.push(entry);
        if self.entries.len() > INDEXED {
            let index = self.by_key.get_or_insert_with(|| {
                let mut map = HashMap::new();
                for (i, (key, ..)) in self.entries[..INDEXED].iter().enumerate() {
                    map.entry(key.clone()).or_insert(i);
                }
                map
            });
            let last = self.entries.len() - 1;
            index.entry(self.entries[last].0.clone()).or_insert(last);
        }
    }

    /// The value of the first entry with this key.
    fn get(&self, key: &str) -> Option<&Span> {
        let i = match &self.by_key {
            Some(index) => *index.get(key)?,
            None => self.entries.iter().position(|(k, ..)| k == key)?,
        };
        self.entries.get(i).map(|e| &e.3)
    }
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

    /// The decoded text of the key literal at `ks..ke` (empty when it does not decode).
    fn key(&self, ks: usize, ke: usize) -> String {
        let raw = &self.text[ks..ke];
        // Most keys hold no escape: take the bytes between the quotes as they are.
        if !raw.contains(&b'\\') {
            if let Ok(plain) = std::str::from_utf8(&raw[1..raw.len().saturating_sub(1).max(1)]) {
                return plain.to_owned();
            }
        }
        std::str::from_utf8(raw)
            .ok()
            .and_then(|raw| serde_json::from_str::<String>(raw).ok())
            .unwrap_or_default()
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
        let mut object = Object::default();
        loop {
            self.skip_ws();
            match self.peek()? {
                b'}' => {
                    self.pos += 1;
                    return Some(Kind::Object(object));
                }
                b'"' => {}
                _ => return None,
            }
            let (ks, ke) = self.string()?;
            let key = self.key(ks, ke);
            self.skip_ws();
            if self.peek()? != b':' {
                return None;
            }
            self.pos += 1;
            let value = self.value(depth + 1)?;
            object.push((key, ks, ke, value));
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

/// Where each line of a text starts: built once, so that every offset -> line:column is a
/// binary search instead of a rescan of the text.
#[derive(Debug)]
pub(crate) struct Lines {
    starts: Vec<usize>,
    len: usize,
}

impl Lines {
    pub(crate) fn new(text: &str) -> Lines {
        let starts = std::iter::once(0)
            .chain(
                text.bytes()
                    .enumerate()
                    .filter(|(_, b)| *b == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .collect();
        Lines {
            starts,
            len: text.len(),
        }
    }

    /// Line and column (1-based, bytes) of byte `offset`.
    pub(crate) fn location_of(&self, offset: usize) -> Location {
        let offset = offset.min(self.len);
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        Location {
            line,
            column: offset - self.starts[line - 1] + 1,
        }
    }

    /// Byte offset of a serde_json position (1-based line, column of the last byte read).
    fn offset_of(&self, at: Location) -> usize {
        let line = at.line.clamp(1, self.starts.len());
        (self.starts[line - 1] + at.column.saturating_sub(1)).min(self.len)
    }
}

/// A JSON text scanned once: its lines and the spans of its values, for locating any number
/// of paths in time linear in the text (plus the length of each path).
#[derive(Debug)]
pub(crate) struct SourceIndex {
    lines: Lines,
    root: Option<Span>,
}

impl SourceIndex {
    /// Scans `text` (tolerantly: text that is not JSON locates nothing).
    pub(crate) fn new(text: &str) -> SourceIndex {
        let text = super::without_bom(text);
        SourceIndex {
            lines: Lines::new(text),
            root: scan(text),
        }
    }

    /// Where the value at `path` starts, when the text has it. (The first of duplicate keys.)
    pub(crate) fn locate(&self, path: &JsonPath) -> Option<Location> {
        let mut span = self.root.as_ref()?;
        for seg in &path.0 {
            span = match (seg, &span.kind) {
                (Seg::Index(i), Kind::Array(items)) => items.get(*i)?,
                (Seg::Key(k), Kind::Object(object)) => object.get(k)?,
                _ => return None,
            };
        }
        Some(self.lines.location_of(span.start))
    }

    /// The nearest value on `path` that the text has: `path` itself, else its closest ancestor
    /// (e.g. the tensor, when its `data_type` key is absent), with where that value starts.
    pub(crate) fn locate_nearest(&self, path: &JsonPath) -> Option<(JsonPath, Location)> {
        let mut path = path.clone();
        loop {
            if let Some(at) = self.locate(&path) {
                return Some((path, at));
            }
            path.0.pop()?;
        }
    }
}

/// The nearest value on `path` that `text` has (see [`SourceIndex::locate_nearest`]), for a
/// single error: the text is scanned for it.
pub(crate) fn locate_nearest(text: &str, path: &JsonPath) -> Option<(JsonPath, Location)> {
    SourceIndex::new(text).locate_nearest(path)
}

/// The path of the innermost value (or object key) at a serde_json error position.
pub(crate) fn path_at(text: &str, at: Location) -> JsonPath {
    let mut offset = Lines::new(text).offset_of(at);
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
            Kind::Object(object) => {
                let mut found = None;
                for (key, ks, ke, value) in object.entries {
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

fn partial_entries(s: &mut Scanner<'_>) -> Object {
    s.pos += 1;
    let mut entries = Object::default();
    loop {
        s.skip_ws();
        if s.peek() != Some(b'"') {
            return entries;
        }
        let Some((ks, ke)) = s.string() else {
            return entries;
        };
        let key = s.key(ks, ke);
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
        let index = SourceIndex::new(DOC);
        let at = index.locate(&p).unwrap();
        assert_eq!((at.line, at.column), (3, 30));
        assert_eq!(path_at(DOC, at).to_string(), "nodes[0].inputs.Q");
        let dims = index
            .locate(&JsonPath::default().key("tensors").key("Q").key("dims"))
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
            let _ = SourceIndex::new(text).locate(&JsonPath::default().key("a").index(3));
            for line in 0..3 {
                for column in 0..6 {
                    let _ = path_at(text, Location { line, column });
                }
            }
        }
        let deep = "[".repeat(10_000);
        assert!(SourceIndex::new(&deep)
            .locate(&JsonPath::default().index(0))
            .is_none());
    }

    #[test]
    fn large_objects_are_indexed_and_the_first_duplicate_wins() {
        let entries: Vec<String> = (0..20).map(|i| format!("\"t{i}\": {i}")).collect();
        let text = format!("{{{}, \"t3\": 99}}", entries.join(",\n"));
        let index = SourceIndex::new(&text);
        for i in [0, 3, 8, 9, 19] {
            let at = index.locate(&JsonPath::default().key(&format!("t{i}")));
            assert_eq!(at.map(|a| a.line), Some(i + 1), "t{i}");
        }
        assert!(index.locate(&JsonPath::default().key("t20")).is_none());
        let escaped = SourceIndex::new("{\"a\\u0062\": 1}");
        assert!(escaped.locate(&JsonPath::default().key("ab")).is_some());
    }

    #[test]
    fn lines_map_offsets_to_one_based_columns() {
        let lines = Lines::new("ab\n\ncd");
        let at = |o| {
            let l = lines.location_of(o);
            (l.line, l.column)
        };
        assert_eq!(at(0), (1, 1));
        assert_eq!(at(2), (1, 3));
        assert_eq!(at(3), (2, 1));
        assert_eq!(at(4), (3, 1));
        assert_eq!(at(6), (3, 3));
        assert_eq!(at(99), (3, 3));
    }
}
