//! A node's port bindings as the frontend writes them: an object `{port: ref}` (the graph
//! dump of either version) or an array of `[port, ref]` pairs (an attribute object written on
//! its own), with `null` for an unbound port. Each binding keeps the path steps that lead to
//! its reference, for error messages.

use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::json::locate::JsonPath;
use crate::json::TensorRef;
use crate::Port;

/// The SDPA ports of the frontend that rime does not model: each one changes what the node
/// computes (paged K/V, block-sparse masks, cumulative sequence lengths, FP8 scaling, extra
/// softmax outputs), so a graph that binds one is refused rather than read without it.
const NOT_MODELLED: &[&str] = &[
    "CU_SEQ_LEN_Q",
    "CU_SEQ_LEN_KV",
    "Page_table_K",
    "Page_table_V",
    "Block_mask",
    "Descale_Q",
    "Descale_K",
    "Descale_V",
    "Descale_S",
    "Descale_O",
    "Descale_dO",
    "Descale_dP",
    "Scale_S",
    "Scale_O",
    "Scale_dQ",
    "Scale_dK",
    "Scale_dV",
    "Scale_dP",
    "Max",
    "Sum_exp",
    "Amax_S",
    "Amax_O",
    "Amax_dQ",
    "Amax_dK",
    "Amax_dV",
    "Amax_dP",
];

/// The bound ports of one side of a node, in file order.
pub(super) struct Ports(pub(super) Vec<Binding>);

/// One bound port.
pub(super) struct Binding {
    /// The port.
    pub(super) port: Port,
    /// The tensor it names.
    pub(super) tensor: TensorRef,
    /// From the side's object (`inputs`) to the reference.
    steps: Step,
}

enum Step {
    /// `inputs.Q`.
    Key(String),
    /// `inputs[3][1]`.
    Pair(usize),
}

impl Binding {
    /// The path of the reference, given the path of the side (`nodes[0].inputs`).
    pub(super) fn path(&self, side: &JsonPath) -> JsonPath {
        match &self.steps {
            Step::Key(k) => side.key(k),
            Step::Pair(i) => side.index(*i).index(1),
        }
    }
}

fn port_of<E: de::Error>(name: &str) -> Result<Port, E> {
    Port::from_name(name).ok_or_else(|| {
        if NOT_MODELLED.contains(&name) {
            E::custom(format!(
                "port `{name}` of the cuDNN frontend is not modelled by rime (it changes what \
                 the node computes)"
            ))
        } else {
            E::custom(format!("unknown port `{name}`"))
        }
    })
}

fn push<E: de::Error>(
    out: &mut Vec<Binding>,
    name: &str,
    tensor: Option<TensorRef>,
    steps: Step,
) -> Result<(), E> {
    let port = port_of(name)?;
    if out.iter().any(|b| b.port == port) {
        return Err(E::custom(format!("port `{name}` bound twice")));
    }
    if let Some(tensor) = tensor {
        out.push(Binding {
            port,
            tensor,
            steps,
        });
    }
    Ok(())
}

impl<'de> Deserialize<'de> for Ports {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ports;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of port -> tensor, or an array of [port, tensor] pairs")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Ports, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = a.next_key::<String>()? {
                    let tensor = a.next_value::<Option<TensorRef>>()?;
                    push(&mut out, &key, tensor, Step::Key(key.clone()))?;
                }
                Ok(Ports(out))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Ports, A::Error> {
                let mut out = Vec::new();
                let mut i = 0;
                while let Some((key, tensor)) = a.next_element::<(String, Option<TensorRef>)>()? {
                    push(&mut out, &key, tensor, Step::Pair(i))?;
                    i += 1;
                }
                Ok(Ports(out))
            }
        }
        deserializer.deserialize_any(V)
    }
}
