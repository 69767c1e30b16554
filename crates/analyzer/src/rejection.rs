//! A rejection: the code, what it is about, the limit involved, and what to do.

use std::fmt;

use rime_graph::{shown, Port};

use crate::ReasonCode;

/// What a rejection is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Subject {
    /// The graph as a whole (e.g. a cycle, the context).
    Graph,
    /// A tensor, independent of any node.
    Tensor {
        /// Tensor name.
        tensor: String,
    },
    /// A node (its options).
    Node {
        /// Node name.
        node: String,
    },
    /// A port of a node, and the tensor bound to it when there is one.
    Port {
        /// Node name.
        node: String,
        /// The port.
        port: Port,
        /// The bound tensor's name.
        tensor: Option<String>,
    },
    /// The target device.
    Target {
        /// Target name.
        target: String,
    },
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Graph => f.write_str("graph"),
            Subject::Tensor { tensor } => write!(f, "tensor `{}`", shown(tensor)),
            Subject::Node { node } => write!(f, "node `{}`", shown(node)),
            Subject::Port {
                node,
                port,
                tensor: Some(t),
            } => write!(f, "node `{}` port {port} (`{}`)", shown(node), shown(t)),
            Subject::Port {
                node,
                port,
                tensor: None,
            } => write!(f, "node `{}` port {port}", shown(node)),
            Subject::Target { target } => write!(f, "target `{}`", shown(target)),
        }
    }
}

/// A limit that was exceeded: its name, the value requested and the values allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    /// What is limited, e.g. `head dim (Dqk, Dv)`.
    pub name: String,
    /// The value the graph asks for.
    pub requested: String,
    /// What is allowed.
    pub allowed: String,
}

/// One reason why a graph, node or configuration cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The stable reason code.
    pub code: ReasonCode,
    /// What it is about.
    pub subject: Subject,
    /// The specifics, one sentence.
    pub message: String,
    /// The limit involved, when there is one.
    pub limit: Option<Limit>,
    /// What to do about it (defaults to the code's `Fix:` paragraph).
    pub hint: String,
}

impl Rejection {
    /// A rejection with the code's default hint and no limit.
    pub fn new(code: ReasonCode, subject: Subject, message: impl Into<String>) -> Self {
        Rejection {
            code,
            subject,
            message: message.into(),
            limit: None,
            hint: code.fix(),
        }
    }

    /// Adds the limit involved.
    pub fn limit(
        mut self,
        name: impl Into<String>,
        requested: impl fmt::Display,
        allowed: impl fmt::Display,
    ) -> Self {
        self.limit = Some(Limit {
            name: name.into(),
            requested: requested.to_string(),
            allowed: allowed.to_string(),
        });
        self
    }

    /// Replaces the default hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = hint.into();
        self
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.code, self.subject, self.message)?;
        if let Some(l) = &self.limit {
            write!(
                f,
                " [{}: requested {}, allowed {}]",
                l.name, l.requested, l.allowed
            )?;
        }
        Ok(())
    }
}
