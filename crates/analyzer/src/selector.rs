//! Selectors: the names users deselect or pin configurations by (`sm120`, `sm120/atomic`).
//!
//! A [`Selector`] can only be built from a name that selects something, so heuristics options
//! cannot carry a typo that would keep nothing (a pin) or drop nothing (a deselection) without
//! a word: the command line, the Python package and Rust callers all parse through here.

use std::fmt;
use std::str::FromStr;

use crate::engine::label;
use crate::{EngineConfig, EngineKind, Route};

/// An engine (`cpu_reference`, `sm120`) or one SM120 backward route (`sm120/relay`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Selector {
    engine: EngineKind,
    route: Option<Route>,
}

impl Selector {
    /// Every configuration of `engine`.
    pub const fn engine(engine: EngineKind) -> Selector {
        Selector {
            engine,
            route: None,
        }
    }

    /// The SM120 backward configurations of `route` (routes belong to the SM120 engine alone).
    pub const fn route(route: Route) -> Selector {
        Selector {
            engine: EngineKind::Sm120,
            route: Some(route),
        }
    }

    /// Every selector: each engine, then each SM120 route.
    pub fn all() -> Vec<Selector> {
        let engines = EngineKind::ALL.into_iter().map(Selector::engine);
        engines
            .chain(Route::ALL.into_iter().map(Selector::route))
            .collect()
    }

    /// The engine this selector belongs to.
    pub const fn engine_kind(&self) -> EngineKind {
        self.engine
    }

    /// True when the selector names `config` exactly (its engine, or its `engine/route`): what
    /// a deselection drops.
    pub fn matches(&self, config: &EngineConfig) -> bool {
        self.engine == config.engine && (self.route.is_none() || self.route == config.route)
    }

    /// True when `config` stays under this pin: it matches, or it is a route-less
    /// configuration (a forward node) of the pinned engine — a route pin applies to backward
    /// nodes.
    pub fn keeps_under_pin(&self, config: &EngineConfig) -> bool {
        self.matches(config) || (config.route.is_none() && self.engine == config.engine)
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&label(self.engine, self.route))
    }
}

impl FromStr for Selector {
    type Err = UnknownSelector;

    /// Parses a stable name, ignoring surrounding whitespace; case matters.
    fn from_str(text: &str) -> Result<Selector, UnknownSelector> {
        let name = text.trim();
        Selector::all()
            .into_iter()
            .find(|s| s.to_string() == name)
            .ok_or_else(|| UnknownSelector {
                given: text.to_owned(),
            })
    }
}

/// A name that selects no engine configuration; its message lists the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no engine configuration is called `{}`; known: {}",
    rime_graph::shown(given),
    known_selectors().join(", ")
)]
pub struct UnknownSelector {
    /// The text as given.
    pub given: String,
}

/// Every selector's name, in [`Selector::all`] order.
pub fn known_selectors() -> Vec<String> {
    Selector::all().iter().map(Selector::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_round_trips_and_others_are_refused() {
        for s in Selector::all() {
            assert_eq!(s.to_string().parse::<Selector>(), Ok(s));
        }
        assert_eq!(" sm120/atomic ".parse(), Ok(Selector::route(Route::Atomic)));
        assert_eq!("sm120".parse(), Ok(Selector::engine(EngineKind::Sm120)));
        for bad in [
            "sm120/atomc",
            "cudnn",
            "SM120",
            "",
            "sm120/",
            "cpu_reference/atomic",
        ] {
            let e = bad.parse::<Selector>().unwrap_err();
            assert_eq!(e.given, bad);
            assert!(e
                .to_string()
                .contains("known: cpu_reference, sm120, sm120/atomic"));
        }
    }
}
