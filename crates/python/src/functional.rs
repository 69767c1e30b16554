//! The functional API's native half (`rime.sdpa`, `rime.sdpa_backward`): a call's tensors
//! (inputs, and the outputs Python allocated) and options become a one-node graph whose
//! tensors are named after the arguments, approved for the tensors' device and built once per
//! distinct call (the plan cache), then run on the tensors. A call may pass its token tensors
//! packed (THD, `rime.sdpa_varlen`): each with an `<name>_offsets` argument, the element where
//! each sequence starts, which makes it a ragged tensor of the graph.

use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rime_graph::{
    Context, DataType, DiagonalAlignment, Graph, GraphError, SdpaBackwardAttrs, SdpaForwardAttrs,
    Sequence, Tensor, TensorId,
};

use crate::array::{Place, TensorArg};
use crate::attrs::{common, Common};
use crate::cache::PlanCache;
use crate::errors::tensor_error;
use crate::runnable::Runnable;
use crate::select::approve;

/// The argument names of each tensor a call may pass, inputs then outputs (graph tensors are
/// named after them, so every error names the argument).
const INPUTS: [&str; 10] = [
    "q",
    "k",
    "v",
    "o",
    "do",
    "stats",
    "bias",
    "seq_len_q",
    "seq_len_kv",
    "sink",
];
const OUTPUTS: [&str; 7] = ["o", "stats", "dq", "dk", "dv", "dbias", "dsink"];

/// The arguments laid out token by token, which a call may pass packed (THD) with an
/// `<name>_offsets` argument (an input of the plan, outputs' included), and the sequence whose
/// tokens each one holds.
const TOKENS: [(&str, Sequence); 9] = [
    ("q", Sequence::Q),
    ("k", Sequence::Kv),
    ("v", Sequence::Kv),
    ("o", Sequence::Q),
    ("do", Sequence::Q),
    ("stats", Sequence::Q),
    ("dq", Sequence::Q),
    ("dk", Sequence::Kv),
    ("dv", Sequence::Kv),
];

/// The offsets argument of token argument `name`.
fn offsets_name(name: &str) -> String {
    format!("{name}_offsets")
}

/// True for an input name a call may pass: an [`INPUTS`] name or a token tensor's offsets.
fn known_input(name: &str) -> bool {
    INPUTS.contains(&name) || TOKENS.iter().any(|(t, _)| offsets_name(t) == name)
}

/// The scalar options of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Options {
    backward: bool,
    /// f32 bits of the scale (None: 1/sqrt(Dqk)).
    scale: Option<u32>,
    left_bound: Option<i64>,
    right_bound: Option<i64>,
    bottom_right: bool,
    alibi: bool,
    deterministic: bool,
    /// The longest query and key/value sequence of a packed (THD) call: the S of its ragged
    /// (B, H, S, D) tensors.
    max_seqlen_q: Option<i64>,
    max_seqlen_kv: Option<i64>,
    /// Tokens its packed query and key/value tensors hold (`max_total_seq_len_q/kv`).
    max_total_q: Option<i64>,
    max_total_kv: Option<i64>,
}

/// What identifies a plan: the options, the place, and each tensor's name, type, dims and
/// strides.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    options: Options,
    place: Place,
    tensors: Vec<(String, DataType, Vec<i64>, Vec<i64>)>,
}

/// A built call: its graph, the graph tensor of each argument (in call order), the plan.
#[derive(Debug)]
struct Prepared {
    graph: Arc<Graph>,
    ids: Vec<TensorId>,
    runnable: Runnable,
}

const DEFAULT_CAPACITY: usize = 256;

fn cache() -> &'static Mutex<PlanCache<Key, Prepared>> {
    static CACHE: OnceLock<Mutex<PlanCache<Key, Prepared>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(PlanCache::new(DEFAULT_CAPACITY)))
}

fn lock() -> std::sync::MutexGuard<'static, PlanCache<Key, Prepared>> {
    cache().lock().unwrap_or_else(|e| e.into_inner())
}

/// The attention scale as the graph's f32, refusing what f32 cannot hold.
pub fn scale_f32(scale: Option<f64>) -> PyResult<Option<f32>> {
    match scale {
        None => Ok(None),
        Some(s) if s.is_finite() && s.abs() <= f64::from(f32::MAX) => {
            // The graph's attn_scale is an f32: the value is rounded to it, as documented.
            #[allow(clippy::cast_possible_truncation)]
            Ok(Some(s as f32))
        }
        Some(s) => Err(PyValueError::new_err(format!(
            "scale: {s} is not a finite float32"
        ))),
    }
}

/// The tensors of a call, checked for what the functional API needs before any graph exists:
/// every argument name known, the required ones present, one io type, f32 Stats and sinks,
/// i32 sequence lengths, and one device.
fn check_args(py: Python<'_>, backward: bool, args: &[TensorArg], outputs: usize) -> PyResult<()> {
    let find = |name: &str| args.iter().find(|a| a.name == name);
    let required: &[&str] = if backward {
        &["q", "k", "v", "o", "do", "stats", "dq", "dk", "dv"]
    } else {
        &["q", "k", "v", "o"]
    };
    for name in required {
        if find(name).is_none() {
            return Err(PyValueError::new_err(format!("{name}: missing")));
        }
    }
    let q = find("q").ok_or_else(|| PyValueError::new_err("q: missing"))?;
    if !q.data_type.is_half() {
        return Err(tensor_error(
            py,
            "q",
            format!(
                "is {}; rime's attention takes float16 or bfloat16 q, k, v",
                q.data_type
            ),
        ));
    }
    for (n, a) in args.iter().enumerate() {
        let known = if n < args.len() - outputs {
            known_input(&a.name)
        } else {
            OUTPUTS.contains(&a.name.as_str())
        };
        if !known {
            return Err(PyValueError::new_err(format!(
                "{}: not an argument of the call",
                a.name
            )));
        }
        let wanted = match a.name.as_str() {
            "stats" | "sink" | "dsink" => DataType::F32,
            "seq_len_q" | "seq_len_kv" => DataType::I32,
            // Offsets: i64 (or i32), checked by the graph (their own error names them).
            name if name.ends_with("_offsets") => a.data_type,
            _ => q.data_type,
        };
        if a.data_type != wanted {
            return Err(tensor_error(
                py,
                &a.name,
                format!(
                    "is {}; it must be {wanted} here (q is {})",
                    a.data_type, q.data_type
                ),
            ));
        }
        if a.place != q.place {
            return Err(tensor_error(
                py,
                &a.name,
                format!("is on {}, q is on {}", a.place, q.place),
            ));
        }
    }
    if find("seq_len_q").is_some() != find("seq_len_kv").is_some() {
        return Err(PyValueError::new_err(
            "seq_lens: give both the query and the key/value lengths",
        ));
    }
    Ok(())
}

/// Packed (THD) arguments as the graph sees them. A tensor `x` with an `x_offsets` argument
/// arrives as (T, H, D): tokens, heads, head dim (Stats (T, H, 1)). It becomes the ragged
/// (B, H, S, D) tensor of cuDNN's THD layout: B from its B + 1 offsets, S the call's longest
/// sequence of its kind, its head, token and dim strides kept, and a batch stride of S tokens,
/// which its offsets replace. Its span stays the packed tensor's: that bounds the offsets when
/// the engine checks them.
fn ragged_views(py: Python<'_>, args: &mut [TensorArg], o: &Options) -> PyResult<()> {
    for (name, sequence) in TOKENS {
        let offsets = offsets_name(name);
        let Some(batch) = args
            .iter()
            .find(|a| a.name == offsets)
            .map(|a| a.dims[0] - 1)
        else {
            continue;
        };
        let (longest, option) = match sequence {
            Sequence::Q => (o.max_seqlen_q, "max_seqlen_q"),
            Sequence::Kv => (o.max_seqlen_kv, "max_seqlen_kv"),
        };
        let longest = longest.filter(|&s| s >= 1).ok_or_else(|| {
            PyValueError::new_err(format!("{option}: a packed {name} needs it (>= 1)"))
        })?;
        let a = args
            .iter_mut()
            .find(|a| a.name == name)
            .ok_or_else(|| PyValueError::new_err(format!("{offsets}: given without {name}")))?;
        let (&[_, heads, dim], &[token_stride, head_stride, dim_stride]) =
            (a.dims.as_slice(), a.strides.as_slice())
        else {
            return Err(tensor_error(
                py,
                name,
                format!(
                    "has dims {:?}; a packed (THD) tensor is (tokens, heads, head dim)",
                    a.dims
                ),
            ));
        };
        let batch_stride = longest.checked_mul(token_stride).ok_or_else(|| {
            tensor_error(
                py,
                name,
                format!("{option} {longest} x its token stride overflows"),
            )
        })?;
        a.dims = vec![batch, heads, longest, dim];
        a.strides = vec![batch_stride, head_stride, token_stride, dim_stride];
    }
    Ok(())
}

/// Marks each token tensor of `g` that has an offsets argument as ragged by it.
fn link_offsets(g: &mut Graph) {
    for (name, _) in TOKENS {
        if let (Some(t), Some(o)) = (g.find(name), g.find(&offsets_name(name))) {
            if let Some(t) = g.get_mut(t) {
                t.ragged_offset = Some(o);
            }
        }
    }
}

/// The one-node graph of a call: every tensor named after its argument, with its type, dims
/// and strides.
fn graph_of(options: &Options, args: &[TensorArg], outputs: usize) -> PyResult<Graph> {
    let (ins, outs) = args.split_at(args.len() - outputs);
    let io = ins
        .iter()
        .find(|a| a.name == "q")
        .map_or(DataType::Bf16, |a| a.data_type);
    let mut g = Graph::new(Context::with_io(io));
    let mut inputs: Vec<(&str, TensorId)> = Vec::new();
    for a in ins {
        let t = Tensor::new(&a.name, &a.dims, &a.strides).with_data_type(a.data_type);
        inputs.push((a.name.as_str(), g.tensor(t)));
    }
    let id = |name: &str| inputs.iter().find(|(n, _)| *n == name).map(|(_, id)| *id);
    let missing = |name: &str| PyValueError::new_err(format!("{name}: missing"));
    let built =
        |e: GraphError| PyValueError::new_err(format!("the call does not make a graph: {e}"));
    let req = |name: &str| id(name).ok_or_else(|| missing(name));
    let has_out = |name: &str| outs.iter().any(|a| a.name == name);
    let common = Common {
        name: Some(
            if options.backward {
                "sdpa_backward"
            } else {
                "sdpa"
            }
            .to_owned(),
        ),
        scale: options.scale.map(f32::from_bits),
        left_bound: options.left_bound,
        right_bound: options.right_bound,
        alignment: if options.bottom_right {
            DiagonalAlignment::BottomRight
        } else {
            DiagonalAlignment::TopLeft
        },
        alibi: options.alibi,
        bias: id("bias"),
        padding: id("seq_len_q").zip(id("seq_len_kv")),
        sink: id("sink"),
        max_total: (options.max_total_q, options.max_total_kv),
        ..Common::default()
    };
    let made: Vec<(&str, Option<TensorId>)> = if options.backward {
        let mut attrs = common!(SdpaBackwardAttrs::new(), &common);
        if has_out("dbias") {
            attrs = attrs.dbias();
        }
        if has_out("dsink") {
            attrs = attrs.dsink();
        }
        if options.deterministic {
            attrs = attrs.deterministic();
        }
        let grads = g
            .sdpa_backward(
                req("q")?,
                req("k")?,
                req("v")?,
                req("o")?,
                req("do")?,
                req("stats")?,
                attrs,
            )
            .map_err(built)?;
        vec![
            ("dq", Some(grads.dq)),
            ("dk", Some(grads.dk)),
            ("dv", Some(grads.dv)),
            ("dbias", grads.dbias),
            ("dsink", grads.dsink),
        ]
    } else {
        let mut attrs = common!(SdpaForwardAttrs::new(), &common);
        if has_out("stats") {
            attrs = attrs.generate_stats();
        }
        let out = g
            .sdpa_forward(req("q")?, req("k")?, req("v")?, attrs)
            .map_err(built)?;
        vec![("o", Some(out.o)), ("stats", out.stats)]
    };
    for a in outs {
        let tid = made
            .iter()
            .find(|(n, _)| *n == a.name)
            .and_then(|(_, id)| *id)
            .ok_or_else(|| missing(&a.name))?;
        if let Some(t) = g.get_mut(tid) {
            t.name.clone_from(&a.name);
            t.dims.clone_from(&a.dims);
            t.strides.clone_from(&a.strides);
            t.data_type = Some(a.data_type);
        }
    }
    link_offsets(&mut g);
    Ok(g)
}

/// Builds the plan of a call: graph, approval on the place's engine, engine plan.
fn prepare(py: Python<'_>, key: &Key, args: &[TensorArg], outputs: usize) -> PyResult<Prepared> {
    let graph = graph_of(&key.options, args, outputs)?;
    let approved = approve(py, &graph, key.place)?;
    let [approved] = approved.as_slice() else {
        return Err(PyValueError::new_err("a call makes one node"));
    };
    let graph = Arc::clone(approved.graph_arc());
    let ids = args
        .iter()
        .map(|a| {
            graph
                .find(&a.name)
                .ok_or_else(|| PyValueError::new_err(format!("{}: not in the graph", a.name)))
        })
        .collect::<PyResult<_>>()?;
    Ok(Prepared {
        runnable: Runnable::build(py, approved, key.place)?,
        graph,
        ids,
    })
}

impl Options {
    /// The options of a call from its keyword arguments (`scale`, `left_bound`,
    /// `right_bound`, `bottom_right`, `alibi`, `deterministic`, `max_seqlen_q`,
    /// `max_seqlen_kv`, `max_total_q`, `max_total_kv`; absent ones take their defaults).
    fn from_kwargs(backward: bool, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut o = Options {
            backward,
            scale: None,
            left_bound: None,
            right_bound: None,
            bottom_right: false,
            alibi: false,
            deterministic: false,
            max_seqlen_q: None,
            max_seqlen_kv: None,
            max_total_q: None,
            max_total_kv: None,
        };
        let Some(kwargs) = kwargs else {
            return Ok(o);
        };
        for (key, value) in kwargs.iter() {
            let key: String = key.extract()?;
            match key.as_str() {
                "scale" => o.scale = scale_f32(value.extract()?)?.map(f32::to_bits),
                "left_bound" => o.left_bound = value.extract()?,
                "right_bound" => o.right_bound = value.extract()?,
                "bottom_right" => o.bottom_right = value.extract()?,
                "alibi" => o.alibi = value.extract()?,
                "deterministic" => o.deterministic = backward && value.extract::<bool>()?,
                "max_seqlen_q" => o.max_seqlen_q = value.extract()?,
                "max_seqlen_kv" => o.max_seqlen_kv = value.extract()?,
                "max_total_q" => o.max_total_q = value.extract()?,
                "max_total_kv" => o.max_total_kv = value.extract()?,
                other => {
                    return Err(PyValueError::new_err(format!("{other}: not an option")));
                }
            }
        }
        Ok(o)
    }
}

/// A call ready to run: its tensors, read and checked, and its (cached) plan.
#[derive(Debug)]
pub struct Call {
    args: Vec<TensorArg>,
    prepared: Arc<Prepared>,
}

impl Call {
    /// Reads the tensors of a call and finds (or builds) its plan.
    ///
    /// # Errors
    /// `TensorError`, `UnsupportedGraph`, `EngineError` as the functional API documents.
    pub fn new(
        py: Python<'_>,
        backward: bool,
        inputs: &[(String, Bound<'_, PyAny>)],
        outputs: &[(String, Bound<'_, PyAny>)],
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let n_out = outputs.len();
        let mut args = inputs
            .iter()
            .chain(outputs)
            .map(|(name, obj)| TensorArg::extract(py, name, obj))
            .collect::<PyResult<Vec<_>>>()?;
        check_args(py, backward, &args, n_out)?;
        let options = Options::from_kwargs(backward, kwargs)?;
        ragged_views(py, &mut args, &options)?;
        let key = Key {
            options,
            place: args[0].place,
            tensors: args
                .iter()
                .map(|a| {
                    (
                        a.name.clone(),
                        a.data_type,
                        a.dims.clone(),
                        a.strides.clone(),
                    )
                })
                .collect(),
        };
        let cached = lock().get(&key);
        let prepared = match cached {
            Some(p) => p,
            None => {
                let built = Arc::new(prepare(py, &key, &args, n_out)?);
                lock().insert(key, built)
            }
        };
        Ok(Call { args, prepared })
    }

    /// The plan.
    pub fn runnable(&self) -> &Runnable {
        &self.prepared.runnable
    }

    /// The graph the plan was approved for.
    pub fn graph(&self) -> &Graph {
        &self.prepared.graph
    }

    /// Each tensor with the graph tensor it is bound to.
    pub fn bound(&self) -> Vec<(TensorId, &TensorArg)> {
        self.prepared
            .ids
            .iter()
            .copied()
            .zip(self.args.iter())
            .collect()
    }
}

/// Runs one SDPA forward (`backward=False`) or backward node on `inputs` and writes
/// `outputs`, both lists of (argument name, tensor or array); the options are keywords
/// (`scale`, `left_bound`, `right_bound`, `bottom_right`, `alibi`, `deterministic`, and for
/// packed tensors `max_seqlen_q`, `max_seqlen_kv`, `max_total_q`, `max_total_kv`).
///
/// The plan is built on the first call with these options, types, dims, strides and device,
/// and reused after. Not a public API: `rime.sdpa` and `rime.sdpa_backward` call it.
#[pyfunction]
#[pyo3(signature = (backward, inputs, outputs, **options))]
pub fn sdpa_call(
    py: Python<'_>,
    backward: bool,
    inputs: Vec<(String, Bound<'_, PyAny>)>,
    outputs: Vec<(String, Bound<'_, PyAny>)>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    let call = Call::new(py, backward, &inputs, &outputs, options)?;
    call.runnable().run(py, call.graph(), &call.bound(), None)
}

/// `rime.plan_cache_info()`: entries, capacity, hits and misses of the functional API's
/// plan cache, and which engine each held plan runs on.
#[pyfunction]
pub fn plan_cache_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let info = lock().info();
    let d = PyDict::new(py);
    d.set_item("entries", info.entries)?;
    d.set_item("capacity", info.capacity)?;
    d.set_item("hits", info.hits)?;
    d.set_item("misses", info.misses)?;
    Ok(d)
}

/// `rime.plan_cache_clear()`: drops every cached plan and resets the counters.
#[pyfunction]
pub fn plan_cache_clear() {
    lock().clear();
}

/// `rime.set_plan_cache_capacity(n)`: keeps at most `n` (>= 1) plans, least recently used
/// dropped first.
#[pyfunction]
pub fn set_plan_cache_capacity(capacity: usize) {
    lock().set_capacity(capacity);
}
