//! User text made safe to print: names, keys and paths from a graph file reach terminals and
//! logs through messages, so control characters (ANSI escapes, carriage returns, bidi
//! overrides) are escaped and very long text is cut with its length given.
//!
//! ```
//! use rime_graph::{shown, shown_text};
//! assert_eq!(shown("Q\u{1b}[31m").to_string(), "Q\\u{1b}[31m");
//! let long = "x".repeat(10_000_000);
//! assert_eq!(shown(&long).to_string(), format!("{}… (10000000 bytes)", "x".repeat(64)));
//! assert_eq!(shown_text("line 1\nline 2").to_string(), "line 1\\nline 2");
//! ```

use std::fmt;

/// Names longer than this many characters are cut.
pub const NAME_CHARS: usize = 64;

/// Free text (messages that quote user text, file paths) longer than this is cut.
pub const TEXT_CHARS: usize = 1024;

/// Displays `text` with control characters escaped and cut after `max` characters.
#[derive(Debug, Clone, Copy)]
pub struct Shown<'a> {
    text: &'a str,
    max: usize,
}

/// A name (tensor, node, key) for a message: escaped, cut after [`NAME_CHARS`] characters.
pub fn shown(name: &str) -> Shown<'_> {
    Shown {
        text: name,
        max: NAME_CHARS,
    }
}

/// Longer text (a message quoting user text, a path): escaped, cut after [`TEXT_CHARS`].
pub fn shown_text(text: &str) -> Shown<'_> {
    Shown {
        text,
        max: TEXT_CHARS,
    }
}

/// Characters a terminal may act on instead of printing: C0, DEL, C1, and the Unicode
/// direction and zero-width controls that reorder or hide what is displayed.
fn is_hazard(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (count, c) in self.text.chars().enumerate() {
            if count == self.max {
                return write!(f, "… ({} bytes)", self.text.len());
            }
            match c {
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                c if is_hazard(c) => write!(f, "\\u{{{:x}}}", u32::from(c))?,
                c => fmt::Write::write_char(f, c)?,
            }
        }
        Ok(())
    }
}

/// Several names, each shown, as `[a, b]`.
pub fn shown_list(names: &[String]) -> String {
    let items: Vec<String> = names.iter().map(|n| format!("\"{}\"", shown(n))).collect();
    format!("[{}]", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_every_hazard_and_keeps_ordinary_unicode() {
        for (raw, want) in [
            ("plain", "plain"),
            ("Größe", "Größe"),
            ("\u{1b}[2J", "\\u{1b}[2J"),
            ("a\rb", "a\\rb"),
            ("\u{7f}\u{9b}", "\\u{7f}\\u{9b}"),
            ("abc\u{202e}def", "abc\\u{202e}def"),
            ("", ""),
        ] {
            assert_eq!(shown(raw).to_string(), want, "{raw:?}");
        }
    }

    #[test]
    fn cuts_long_text_after_the_limit_only() {
        let exact = "y".repeat(NAME_CHARS);
        assert_eq!(shown(&exact).to_string(), exact);
        let over = "é".repeat(NAME_CHARS + 1);
        assert_eq!(
            shown(&over).to_string(),
            format!("{}… ({} bytes)", "é".repeat(NAME_CHARS), over.len())
        );
        assert_eq!(shown_text(&over).to_string(), over);
    }
}
