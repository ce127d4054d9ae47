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
    /// A stream this build does not decode (built without the `full-decoder` feature,
    /// e.g. a progressive stream in the npm package's small modules), but the full
    /// decoder does: retry there. The message names the reason.
    NeedsFullDecoder,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecError {
    kind: ErrorKind,
    message: String,
}

impl CodecError {
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

pub type Result<T> = std::result::Result<T, CodecError>;
