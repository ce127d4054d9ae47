//! One error type for the whole codec. Every message names the field or feature,
//! the offending value, and what is allowed, so a user can fix the input without
//! reading the source.

use std::fmt;

/// Which kind of input was wrong. Lets callers (and the JS layer) branch without
/// parsing messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The codec configuration violates the spec.
    InvalidConfiguration,
    /// The chunk shape is not one the codec accepts.
    InvalidShape,
    /// The chunk data does not fit the chunk shape.
    InvalidData,
    /// A well-formed JPEG stream uses a feature this codec does not decode.
    UnsupportedStream,
    /// The bytes are not a valid JPEG stream (corrupt, truncated, hostile).
    CorruptStream,
    /// The stream is valid but does not describe this chunk (size, components).
    StreamMismatch,
    /// A stream this build does not decode (built without the `full-decoder` cargo
    /// feature, e.g. a progressive stream in the npm package's small modules), but the full
    /// decoder does: retry there. The message names the reason.
    NeedsFullDecoder,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecError {
    kind: ErrorKind,
    message: String,
}

impl CodecError {
    // Not inlined: error paths are many and cold; each would otherwise carry its own copy
    // of the conversion to `String`.
    #[inline(never)]
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        CodecError {
            kind,
            message: message.into(),
        }
    }
    pub fn config(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidConfiguration, message)
    }
    pub fn shape(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidShape, message)
    }
    pub fn data(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidData, message)
    }
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::UnsupportedStream, message)
    }
    pub fn corrupt(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::CorruptStream, message)
    }
    pub fn mismatch(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::StreamMismatch, message)
    }
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    /// The message without the kind prefix.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl ErrorKind {
    /// The kind's name, as the bindings give it to callers (a JS Error's or a Python
    /// exception's `kind`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::InvalidConfiguration => "InvalidConfiguration",
            ErrorKind::InvalidShape => "InvalidShape",
            ErrorKind::InvalidData => "InvalidData",
            ErrorKind::UnsupportedStream => "UnsupportedStream",
            ErrorKind::CorruptStream => "CorruptStream",
            ErrorKind::StreamMismatch => "StreamMismatch",
            ErrorKind::NeedsFullDecoder => "NeedsFullDecoder",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            ErrorKind::InvalidConfiguration => "invalid configuration",
            ErrorKind::InvalidShape => "invalid chunk shape",
            ErrorKind::InvalidData => "invalid chunk data",
            ErrorKind::UnsupportedStream => "unsupported JPEG stream",
            ErrorKind::CorruptStream => "corrupt JPEG stream",
            ErrorKind::StreamMismatch => "JPEG stream does not match the chunk",
            ErrorKind::NeedsFullDecoder => "JPEG stream needs the full decoder",
        }
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "jpeg: {}: {}", self.kind.describe(), self.message)
    }
}

impl std::error::Error for CodecError {}

/// An integer in an error message, written out by hand: `{}` of a `u8`, `u16`, `i32` or
/// `u64` links core's formatting code for each of those types (with `{:02X}`, about 1.2 KB
/// of wasm in the decode-only module); every message formats its integers through this
/// one function instead. Same text as `{}` of the value.
#[derive(Clone, Copy)]
pub(crate) struct Int(pub u64);

impl Int {
    /// A `usize` (at most 64 bits on every target Rust supports).
    pub(crate) fn of(n: usize) -> Int {
        Int(n as u64)
    }
}

impl fmt::Display for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut digits = [0u8; 20]; // u64::MAX has 20 digits
        let mut start = digits.len();
        let mut n = self.0;
        loop {
            start -= 1;
            digits[start] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        // SAFETY: ASCII digits. (`str::from_utf8` would link its validation, ~0.9 KB of wasm.)
        f.write_str(unsafe { std::str::from_utf8_unchecked(&digits[start..]) })
    }
}

/// A byte as two upper-case hexadecimal digits (`{:02X}`), for marker codes; see [`Int`].
#[derive(Clone, Copy)]
pub(crate) struct Hex(pub u8);

impl fmt::Display for Hex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
        let pair = [
            DIGITS[usize::from(self.0 >> 4)],
            DIGITS[usize::from(self.0 & 15)],
        ];
        // SAFETY: ASCII digits (see `Int`).
        f.write_str(unsafe { std::str::from_utf8_unchecked(&pair) })
    }
}

pub type Result<T> = std::result::Result<T, CodecError>;

/// `text.to_string()`, not inlined: the messages and value descriptions make owned strings
/// from literals in many places, each of which would otherwise carry its own copy of the
/// allocation and copy.
#[inline(never)]
pub(crate) fn owned(text: &str) -> String {
    text.to_string()
}

/// `text.push_str(more)`, not inlined (see [`owned`]).
#[inline(never)]
pub(crate) fn append(text: &mut String, more: &str) {
    text.push_str(more)
}

#[cfg(test)]
mod tests {
    use super::{Hex, Int};

    #[test]
    fn int_and_hex_format_like_core() {
        for n in [
            0,
            7,
            10,
            99,
            100,
            65535,
            1 << 32,
            9_007_199_254_740_991,
            u64::MAX,
        ] {
            assert_eq!(Int(n).to_string(), n.to_string());
            assert_eq!(format!("[{}]", Int(n)), format!("[{n}]"));
        }
        assert_eq!(Int::of(usize::MAX).to_string(), usize::MAX.to_string());
        for b in 0..=255u8 {
            assert_eq!(Hex(b).to_string(), format!("{b:02X}"));
        }
    }
}
