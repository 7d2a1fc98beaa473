//! The figures of a summary, one metric family a file: behaviour, cost, GPU, latency, pass^k,
//! placement, quality, the router, the server process, the taxonomy and what tools add.

pub mod behaviour;
pub mod cost;
pub mod cost_model;
pub mod factorial;
pub mod gpu;
pub mod latency;
pub mod passk;
pub mod placement;
pub mod provenance;
pub mod quality;
pub mod router;
pub mod server_process;
pub mod shortfall;
pub mod taxonomy;
pub mod tools_add;
