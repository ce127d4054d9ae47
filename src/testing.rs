//! What the test suites need from inside the crate, in one place, so that everything else
//! stays private to it (the `test-hooks` feature; not part of the API).

/// The baseline decoder alone (tests/baseline_decoder.rs compares it with zune-jpeg).
pub mod baseline {
    pub use crate::baseline::{decode, Defer, Output};
}

pub use crate::decode::{check_stream, set_baseline_for_tests, stored_color_space};
#[cfg(feature = "scalar-reference")]
pub use crate::encode::{encode_scalar_reference, encode_scalar_reference_with_options};
pub use crate::markers::{read_header, CodingProcess, ComponentSpec, StreamHeader};
#[cfg(feature = "full-decoder")]
pub use crate::{
    color::rgb_to_ycbcr_in_place,
    decode::{zune_buffer_sizes, MAX_SCANS},
};
