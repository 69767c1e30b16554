//! Which format a graph file is in, and the one reader of both: rime's own format (marked by
//! its top-level `format` key, `"rime.graph"`) and the cuDNN frontend's graph JSON (marked by
//! `json_version`, which rime's format does not have). The command line and the Python
//! package read graph files through [`from_str_any`] / [`load_file_any`].
//!
//! ```
//! use rime_graph::json::{self, Format, ReadAs};
//! let dump = r#"{"json_version": "2.0", "context": {"io_data_type": "HALF"},
//!                "nodes": [], "tensors": []}"#;
//! assert_eq!(json::detect(dump, "dump.json").unwrap(), Format::Cudnn);
//! let loaded = json::from_str_any(dump, "dump.json", None).unwrap();
//! assert_eq!(loaded.read_as.to_string(), "cuDNN frontend graph JSON 2.0");
//! assert!(matches!(loaded.read_as, ReadAs::Cudnn(_)));
//! // Asked to read it as rime's format, it is refused by what it is, not by a key deep inside.
//! let wrong = json::from_str_any(dump, "dump.json", Some(Format::Rime)).unwrap_err();
//! assert!(wrong.to_string().contains("is a cuDNN frontend graph dump"), "{wrong}");
//! ```

use std::fmt;
use std::path::Path;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

use super::cudnn::{self, JsonVersion};
use super::error::LoadError;
use super::locate::JsonPath;
use super::Describer;
use crate::{shown, Graph};

/// A graph file format rime reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// rime's own format (`docs/json-format.md`): `"format": "rime.graph"`, `"version": 1`.
    Rime,
    /// The cuDNN frontend's graph JSON, version 1.0 or 2.0 (`json_version`).
    Cudnn,
}

impl Format {
    /// Both formats.
    pub const ALL: [Format; 2] = [Format::Rime, Format::Cudnn];

    /// The short name: `rime` or `cudnn` (the command line's `--format` and `--to` values).
    pub const fn name(self) -> &'static str {
        match self {
            Format::Rime => "rime",
            Format::Cudnn => "cudnn",
        }
    }

    /// The format of a short name.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// What a file of this format is, for messages: "a rime graph", "a cuDNN frontend graph
    /// dump".
    pub const fn described(self) -> &'static str {
        match self {
            Format::Rime => "a rime graph",
            Format::Cudnn => "a cuDNN frontend graph dump",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a graph file was read as: its format and that format's version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadAs {
    /// rime's own format, version 1.
    Rime,
    /// A cuDNN frontend dump of this graph JSON version.
    Cudnn(JsonVersion),
}

impl ReadAs {
    /// The format.
    pub const fn format(self) -> Format {
        match self {
            ReadAs::Rime => Format::Rime,
            ReadAs::Cudnn(_) => Format::Cudnn,
        }
    }
}

impl fmt::Display for ReadAs {
    /// `rime graph JSON v1` or `cuDNN frontend graph JSON 2.0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadAs::Rime => write!(f, "rime graph JSON v{}", super::VERSION),
            ReadAs::Cudnn(v) => write!(f, "cuDNN frontend graph JSON {}", v.name()),
        }
    }
}

/// A graph read from a file, and what the file was read as.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The graph (loaded, not validated).
    pub graph: Graph,
    /// The format and version of the file.
    pub read_as: ReadAs,
}

impl Loaded {
    /// What points the graph's structural errors back into `text`, the file it was read from
    /// (named `file`). rime's own files are located by line and column; a cuDNN dump's errors
    /// name the file and the tensor or node only, since the reader renames and drops tensors
    /// of the frontend's lowering (its tensors are not where rime's paths say).
    pub fn describer<'a>(&'a self, text: &str, file: &'a str) -> Describer<'a> {
        match self.read_as {
            ReadAs::Rime => Describer::new(text, file, &self.graph),
            ReadAs::Cudnn(_) => Describer::unlocated(file, &self.graph),
        }
    }
}

/// Keys of the top level shown in the message about a file that is neither format.
const KEYS_SHOWN: usize = 8;

/// The top-level keys that tell the formats apart, and the first few keys, for messages. The
/// values are skipped, not built: telling the formats apart costs one scan of the text.
struct Markers {
    format: bool,
    json_version: bool,
    /// rime's `version` key (without `format`, a rime file missing its marker).
    version: bool,
    keys: Vec<String>,
    count: usize,
}

impl<'de> Deserialize<'de> for Markers {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Markers;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object: a rime graph or a cuDNN frontend graph dump")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Markers, A::Error> {
                let mut m = Markers {
                    format: false,
                    json_version: false,
                    version: false,
                    keys: Vec::new(),
                    count: 0,
                };
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    m.format |= key == "format";
                    m.json_version |= key == "json_version";
                    m.version |= key == "version";
                    m.count += 1;
                    if m.keys.len() < KEYS_SHOWN {
                        m.keys.push(format!("`{}`", shown(&key)));
                    }
                }
                Ok(m)
            }
        }
        deserializer.deserialize_map(V)
    }
}

impl Markers {
    /// The format the keys say, if they say one: `format` is rime's marker, `json_version`
    /// the frontend's (a file with both is judged by `format`, and rime's reader then names
    /// `json_version` as a key it does not know).
    fn format(&self) -> Option<Format> {
        if self.format {
            Some(Format::Rime)
        } else if self.json_version {
            Some(Format::Cudnn)
        } else {
            None
        }
    }

    /// The key that marks `format`.
    const fn key(format: Format) -> &'static str {
        match format {
            Format::Rime => "format",
            Format::Cudnn => "json_version",
        }
    }
}

/// The format of a graph text, from its top-level keys: `format` (rime's own, whatever its
/// value: rime's reader checks it) or `json_version` (a cuDNN frontend dump).
///
/// # Errors
/// [`LoadError::Syntax`] for text that is not JSON; [`LoadError::Format`] at the top level
/// for JSON that is not an object, or an object with neither key (naming its keys).
pub fn detect(text: &str, source: &str) -> Result<Format, LoadError> {
    let markers: Markers = super::parse(text, source)?;
    markers.format().ok_or_else(|| {
        let found = if markers.count == 0 {
            "it is an empty object".to_owned()
        } else {
            let more = markers.count - markers.keys.len();
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!("its top-level keys are {}{more}", markers.keys.join(", "))
        };
        let hint = if markers.version {
            " (a rime graph needs `\"format\": \"rime.graph\"` next to its `version`)"
        } else {
            ""
        };
        LoadError::format_at(
            super::without_bom(text),
            source,
            &JsonPath::default(),
            format!(
                "neither a rime graph (which has `\"format\": \"rime.graph\"`) nor a cuDNN \
                 frontend graph dump (which has `json_version`): {found}{hint}"
            ),
        )
    })
}

/// Parses a graph text of `format`, or of the format [`detect`] finds when `None`; `source`
/// names it in errors.
///
/// # Errors
/// As [`detect`], [`super::from_str`] and [`cudnn::from_str`]; and a [`LoadError::Format`] at
/// the other format's marker key when `format` is given and the text is plainly the other
/// format (a dump read as rime's format would otherwise fail on a key deep inside).
pub fn from_str_any(text: &str, source: &str, format: Option<Format>) -> Result<Loaded, LoadError> {
    let format = match format {
        None => detect(text, source)?,
        Some(asked) => {
            // Text that is not JSON gets the reader's own message; only a clear marker of the
            // other format is refused here.
            let found = super::parse::<Markers>(text, source)
                .ok()
                .and_then(|m| m.format());
            if let Some(found) = found.filter(|&f| f != asked) {
                return Err(LoadError::format_at(
                    super::without_bom(text),
                    source,
                    &JsonPath::default().key(Markers::key(found)),
                    format!(
                        "asked to read {} ({}), but this is {} (it has `{}`): read it as {}, \
                         or let the format be detected",
                        asked.described(),
                        asked.name(),
                        found.described(),
                        Markers::key(found),
                        found.name()
                    ),
                ));
            }
            asked
        }
    };
    match format {
        Format::Rime => super::from_str(text, source).map(|graph| Loaded {
            graph,
            read_as: ReadAs::Rime,
        }),
        Format::Cudnn => cudnn::from_str_with_version(text, source).map(|(graph, v)| Loaded {
            graph,
            read_as: ReadAs::Cudnn(v),
        }),
    }
}

/// Reads a graph file of at most `max_bytes` ([`super::read_text`]) and parses it as
/// [`from_str_any`] does, with the path as the source name.
///
/// # Errors
/// As [`super::read_text`] and [`from_str_any`].
pub fn load_file_any(
    path: impl AsRef<Path>,
    max_bytes: u64,
    format: Option<Format>,
) -> Result<Loaded, LoadError> {
    let path = path.as_ref();
    let text = super::read_text(path, max_bytes)?;
    from_str_any(&text, &path.display().to_string(), format)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RIME: &str = r#"{"format": "rime.graph", "version": 1, "tensors": {}, "nodes": []}"#;
    const DUMP: &str = r#"{"json_version": "1.0", "nodes": [], "tensors": {}}"#;

    #[test]
    fn the_marker_keys_decide() {
        assert_eq!(detect(RIME, "r.json").unwrap(), Format::Rime);
        assert_eq!(detect(DUMP, "d.json").unwrap(), Format::Cudnn);
        // A wrong value of `format` is still rime's file, for rime's reader to refuse.
        let odd = r#"{"format": "rime.grahp", "json_version": "2.0"}"#;
        assert_eq!(detect(odd, "o.json").unwrap(), Format::Rime);
        assert_eq!(
            detect(&format!("\u{feff}{DUMP}"), "bom.json").unwrap(),
            Format::Cudnn
        );
    }

    #[test]
    fn neither_names_the_file_the_place_and_the_keys() {
        let e = detect("{\n  \"nodes\": [], \"tensors\": {}}", "n.json").unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("n.json:1:1: at `(top level)`: neither"),
            "{text}"
        );
        assert!(text.contains("`nodes`, `tensors`"), "{text}");
        assert!(!text.contains("next to its `version`"), "{text}");
        let e = detect(r#"{"version": 1, "nodes": []}"#, "v.json").unwrap_err();
        assert!(e.to_string().ends_with("next to its `version`)"), "{e}");
        let many: String = (0..12).map(|i| format!("\"k{i}\": {i},")).collect();
        let e = detect(&format!("{{{}}}", many.trim_end_matches(',')), "m.json").unwrap_err();
        assert!(e.to_string().contains("`k7` and 4 more"), "{e}");
        let e = detect("{}", "e.json").unwrap_err();
        assert!(e.to_string().contains("an empty object"), "{e}");
        let e = detect("[1, 2]", "a.json").unwrap_err();
        assert!(
            e.to_string()
                .contains("expected an object: a rime graph or a cuDNN"),
            "{e}"
        );
        assert!(matches!(
            detect("{\"format\": ", "s.json"),
            Err(LoadError::Syntax { .. })
        ));
    }

    #[test]
    fn a_format_asked_for_is_read_as_that_format() {
        let r = from_str_any(RIME, "r.json", Some(Format::Rime)).unwrap();
        assert_eq!(r.read_as, ReadAs::Rime);
        assert_eq!(r.read_as.to_string(), "rime graph JSON v1");
        let d = from_str_any(DUMP, "d.json", Some(Format::Cudnn)).unwrap();
        assert_eq!(d.read_as, ReadAs::Cudnn(JsonVersion::V1));
        // The other format's marker is refused where it is.
        let e = from_str_any(RIME, "r.json", Some(Format::Cudnn)).unwrap_err();
        assert!(e.to_string().starts_with("r.json:1:12: at `format`: asked to read a cuDNN frontend graph dump (cudnn), but this is a rime graph"), "{e}");
        // Neither marker: the asked reader's own message.
        let e = from_str_any("{\"nodes\": []}", "n.json", Some(Format::Cudnn)).unwrap_err();
        assert!(e.to_string().contains("json_version"), "{e}");
        let e = from_str_any("{\"nodes\": []}", "n.json", Some(Format::Rime)).unwrap_err();
        assert!(e.to_string().contains("missing field `format`"), "{e}");
    }

    #[test]
    fn names_round_trip() {
        for f in Format::ALL {
            assert_eq!(Format::from_name(f.name()), Some(f));
            assert_eq!(f.to_string(), f.name());
        }
        assert_eq!(Format::from_name("auto"), None);
    }
}
