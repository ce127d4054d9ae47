//! Where decoded samples go: the [`SampleSink`] trait and the [`Target`] both decoders
//! write to. Its own module so that `decode` (which dispatches) and `baseline` (which it
//! dispatches to) both depend on it and neither on the other's types.

use crate::error::{CodecError, Int, Result};

/// Where [`decode_to_sink`](crate::decode_to_sink) writes a chunk's samples (C-order uint8,
/// as [`decode`](crate::decode) returns them): a byte slice, or storage the decoder cannot
/// borrow as one slice (the wasm boundary's new `Uint8Array`). The baseline decoder hands
/// over one band of whole rows (up to 64 KiB, at least one row) at a time from a small
/// buffer it reuses, still in cache, so no chunk-sized buffer is made; the bands come in
/// order and cover the chunk once. A stream left to zune-jpeg (full-decoder builds) is
/// decoded into a whole buffer and handed over as one band, after whatever bands the
/// baseline decoder wrote before it deferred. On an error the sink's contents are
/// unspecified.
pub trait SampleSink {
    /// Called once, when the stream has been checked against the chunk and before any
    /// `write`: the chunk holds `sample_count` samples.
    fn start(&mut self, sample_count: usize) -> Result<()>;

    /// Writes `band` to bytes `offset..offset + band.len()` (always within the
    /// `sample_count` given to `start`, which is where a sink refuses what it cannot hold).
    fn write(&mut self, offset: usize, band: &[u8]);
}

impl SampleSink for &mut [u8] {
    fn start(&mut self, sample_count: usize) -> Result<()> {
        check_output_len(self.len(), sample_count)
    }

    fn write(&mut self, offset: usize, band: &[u8]) {
        // always within the length `start` checked
        if let Some(out) = self.get_mut(offset..offset + band.len()) {
            out.copy_from_slice(band);
        }
    }
}

/// Where a decoder puts a chunk's samples: a slice of the whole chunk, written in place,
/// or a started [`SampleSink`] of `len` samples, handed one band of rows at a time.
pub(crate) enum Target<'o> {
    Slice(&'o mut [u8]),
    Sink {
        sink: &'o mut dyn SampleSink,
        len: usize,
    },
}

impl Target<'_> {
    /// The chunk's sample count.
    pub(crate) fn len(&self) -> usize {
        match self {
            Target::Slice(out) => out.len(),
            Target::Sink { len, .. } => *len,
        }
    }

    /// The same target for a shorter borrow (for a decoder that may defer to another).
    pub(crate) fn reborrow(&mut self) -> Target<'_> {
        match self {
            Target::Slice(out) => Target::Slice(out),
            Target::Sink { sink, len } => Target::Sink {
                sink: *sink,
                len: *len,
            },
        }
    }
}

/// A colour conversion applied in place to decoded samples (a band of rows, or the whole
/// chunk), where the decoder's view of the stream differs from what its markers say.
pub(crate) type Conversion = fn(&mut [u8]);

/// An error unless an output buffer of `len` bytes holds exactly `sample_count` samples.
pub(crate) fn check_output_len(len: usize, sample_count: usize) -> Result<()> {
    if len != sample_count {
        return Err(CodecError::data(format!(
            "the output buffer holds {} bytes but the chunk shape needs {}",
            Int::of(len),
            Int::of(sample_count)
        )));
    }
    Ok(())
}
