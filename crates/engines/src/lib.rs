//! rime-engines: plans, variant packs and engines that execute analyzer-approved graphs.
//!
//! The flow: the analyzer approves a configuration ([`rime_analyzer::ApprovedPlan`]), an
//! [`Engine`] builds a [`Plan`] from it, the caller fills a [`VariantPack`] (tensor uid, id or
//! name -> [`Buffer`]) and a [`Workspace`] of [`Plan::workspace_size`] bytes, and
//! [`Plan::execute`] checks both against the graph before it writes anything.
//!
//! ```
//! use rime_analyzer::{analyze, heuristics, HeuristicsOptions, Target};
//! use rime_engines::{CpuEngine, Engine, HostBuffer, VariantPack, Workspace};
//! use rime_graph::{Context, DataType, Graph, SdpaForwardAttrs, Tensor};
//!
//! let mut g = Graph::new(Context::with_io(DataType::Bf16));
//! let dims = [1, 2, 8, 16];
//! let (q, k, v) = (
//!     g.tensor(Tensor::packed("Q", &dims)),
//!     g.tensor(Tensor::packed("K", &dims)),
//!     g.tensor(Tensor::packed("V", &dims)),
//! );
//! let out = g.sdpa_forward(q, k, v, SdpaForwardAttrs::new().causal().name("fwd")).unwrap();
//!
//! let report = analyze(&g, &Target::by_name("cpu").unwrap());
//! let best = &heuristics(&report, &HeuristicsOptions::default())[0];
//! let plan = CpuEngine.build_plan(&report.approve(best).unwrap()).unwrap();
//!
//! let mut pack = VariantPack::new();
//! for name in ["Q", "K", "V"] {
//!     pack.insert(name, Box::new(HostBuffer::from_f64(DataType::Bf16, &[0.5; 256]).unwrap()));
//! }
//! pack.insert(out.o, Box::new(HostBuffer::zeros(DataType::Bf16, 256).unwrap()));
//! plan.execute(&mut pack, &mut Workspace::host(plan.workspace_size())).unwrap();
//! // Every query attends to identical values of 0.5, so O is 0.5 everywhere.
//! let o = pack.get(&out.o.into()).unwrap().as_any().downcast_ref::<HostBuffer>().unwrap();
//! assert!(o.to_f64().iter().all(|&x| x == 0.5));
//! ```

mod buffer;
pub mod cpu;
pub mod cuda;
mod engine;
mod error;
pub mod memory;
mod plan;
mod registry;
mod variant_pack;
mod workspace;

pub use buffer::{
    Buffer, FilledMap, HostBuffer, HostData, HostDataMut, LogicalOffsets, MemoryLocation,
    MemorySpan, PlaceError,
};
pub use cpu::CpuEngine;
pub use engine::{expect_engine, Engine};
pub use error::EngineError;
pub use memory::{MemoryItem, MemoryNeeds};
pub use plan::{check_workspace, Plan, PlanTensors};
pub use registry::engine_for;
pub use variant_pack::{Binding, TensorKey, VariantPack};
pub use workspace::Workspace;
