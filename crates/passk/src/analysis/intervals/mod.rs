//! Intervals: the paired bootstrap (with Python's random numbers, so the reference's intervals
//! reproduce) the exact and Wilson-type intervals used near 0% and 100%, and Fieller's interval of a figure
//! per successful task.

pub mod bootstrap;
pub mod interval;
pub mod mt19937;
pub mod ratio;
