//! Demo data (written next).
