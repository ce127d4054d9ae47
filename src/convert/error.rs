//! The converter's one error type: what was refused, in words a user can act on, and which
//! side of the conversion was wrong (the bindings hand `kind` on as the JS `error.kind`
//! and the Python exception's `kind`).

use std::fmt;

/// Which side of a conversion was wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvertErrorKind {
    /// An option or argument.
    InvalidArgument,
    /// The input cannot be converted (unreadable, corrupt, unsupported).
    InvalidInput,
    /// The output is in the way or cannot be written.
    OutputUnavailable,
    /// The caller stopped the conversion (a progress callback said so).
    Interrupted,
}

impl ConvertErrorKind {
    pub fn name(self) -> &'static str {
        match self {
            ConvertErrorKind::InvalidArgument => "InvalidArgument",
            ConvertErrorKind::InvalidInput => "InvalidInput",
            ConvertErrorKind::OutputUnavailable => "OutputUnavailable",
            ConvertErrorKind::Interrupted => "Interrupted",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertError {
    kind: ConvertErrorKind,
    message: String,
}

impl ConvertError {
    pub fn new(kind: ConvertErrorKind, message: impl Into<String>) -> Self {
        ConvertError { kind, message: message.into() }
    }
    pub fn argument(message: impl Into<String>) -> Self {
        Self::new(ConvertErrorKind::InvalidArgument, message)
    }
    pub fn input(message: impl Into<String>) -> Self {
        Self::new(ConvertErrorKind::InvalidInput, message)
    }
    pub fn output(message: impl Into<String>) -> Self {
        Self::new(ConvertErrorKind::OutputUnavailable, message)
    }
    pub fn kind(&self) -> ConvertErrorKind {
        self.kind
    }
    /// The message without the "zarr-jpeg convert: " prefix.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "zarr-jpeg convert: {}", self.message)
    }
}

impl std::error::Error for ConvertError {}

pub type Result<T> = std::result::Result<T, ConvertError>;
