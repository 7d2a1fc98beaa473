//! Intervals: the paired bootstrap (with Python's random numbers, so the reference's intervals
//! reproduce) and the exact and Wilson-type intervals used near 0% and 100%.

pub mod bootstrap;
pub mod interval;
pub mod mt19937;
