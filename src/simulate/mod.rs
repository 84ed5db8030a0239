//! Simulated platforms: real servers on loopback that answer like the platforms orderbridge
//! talks to, so tests, benchmarks and demos drive the real clients over real HTTP with no
//! network. Only the other side is simulated.

pub mod big_commerce;
mod http;
