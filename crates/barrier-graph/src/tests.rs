//! Tests of the whole stage on hand-built programs.
