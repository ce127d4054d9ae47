//! Chunk shape → JPEG image layout (height, width, components), per the spec's table.

use crate::config::JpegConfig;
use crate::error::{owned, CodecError, Int, Result};

/// JPEG stores each dimension in 16 bits.
pub const MAX_DIMENSION: u64 = 65535;

/// The image a chunk becomes: C-order samples, channel axis innermost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkLayout {
    pub height: u16,
    pub width: u16,
    /// 1 (grayscale) or 3 (colour).
    pub components: u8,
}

impl ChunkLayout {
    /// Applies the spec's shape table: (H, W) and (H, W, 1) → 1 component, (H, W, 3) → 3;
    /// everything else is rejected with the reason.
    pub fn from_shape(shape: &[u64]) -> Result<ChunkLayout> {
        let (h, w, components) = match *shape {
            [] => return Err(CodecError::shape("the chunk shape is empty (0-D); the jpeg codec needs (H, W), (H, W, 1) or (H, W, 3)")),
            [n] => {
                let n = Int(n);
                return Err(CodecError::shape(format!(
                    "chunk shape [{n}] is 1-D; the jpeg codec needs (H, W), (H, W, 1) or (H, W, 3): \
                     place a reshape codec before jpeg to make it 2-D"
                )))
            }
            [h, w] => (h, w, 1u8),
            [h, w, 1] => (h, w, 1),
            [h, w, 3] => (h, w, 3),
            [_, _, c] => {
                let c = Int(c);
                return Err(CodecError::shape(format!(
                    "chunk shape {} has {c} channels on its last axis; JPEG stores 1 (grayscale) or 3 \
                     (colour) components: reshape or shard so the channel axis is 1 or 3",
                    describe(shape)
                )))
            }
            _ => {
                return Err(CodecError::shape(format!(
                    "chunk shape {} is {}-D; the jpeg codec accepts 2-D or 3-D chunks: place transpose \
                     and/or reshape codecs before jpeg to bring it down to (H, W) or (H, W, C)",
                    describe(shape),
                    Int::of(shape.len())
                )))
            }
        };
        for (axis, size) in [("height (axis 0)", h), ("width (axis 1)", w)] {
            if size == 0 || size > MAX_DIMENSION {
                return Err(CodecError::shape(format!(
                    "chunk shape {}: the image {axis} is {}, but JPEG dimensions must be from 1 to {}",
                    describe(shape),
                    Int(size),
                    Int(MAX_DIMENSION)
                )));
            }
        }
        let layout = ChunkLayout {
            height: h as u16,
            width: w as u16,
            components,
        };
        // On wasm32 (32-bit usize) the largest chunks do not fit in memory at all.
        if layout.checked_sample_count().is_none() {
            return Err(CodecError::shape(format!(
                "chunk shape {} holds {} samples, more than this platform can address ({} bytes)",
                describe(shape),
                Int(h * w * u64::from(components)),
                Int::of(usize::MAX)
            )));
        }
        Ok(layout)
    }

    fn checked_sample_count(&self) -> Option<usize> {
        usize::from(self.height)
            .checked_mul(usize::from(self.width))?
            .checked_mul(usize::from(self.components))
    }

    /// Like [`from_shape`](Self::from_shape), and checks the component count against the
    /// configuration's colour spaces.
    pub fn for_config(shape: &[u64], config: &JpegConfig) -> Result<ChunkLayout> {
        let layout = Self::from_shape(shape)?;
        let needed = config.components();
        if usize::from(layout.components) != needed {
            let expected = if needed == 1 {
                "(H, W) or (H, W, 1)"
            } else {
                "(H, W, 3)"
            };
            return Err(CodecError::shape(format!(
                "chunk shape {} has {} component{} but encoded_color_space \"{}\" stores {}: \
                 the chunk shape must be {expected}",
                describe(shape),
                Int(layout.components.into()),
                if layout.components == 1 { "" } else { "s" },
                config.encoded_color_space.name(),
                Int::of(needed),
            )));
        }
        Ok(layout)
    }

    /// [`for_config`](Self::for_config) of an image handed over a band of rows at a time
    /// (`RowDecoder`), which need not fit in memory: a colour image of more samples than
    /// a wasm32 `usize` counts, which `from_shape` refuses, is taken.
    pub(crate) fn for_config_in_bands(shape: &[u64], config: &JpegConfig) -> Result<ChunkLayout> {
        match (Self::for_config(shape, config), shape) {
            (Err(e), &[h, w, 3])
                if e.kind() == crate::ErrorKind::InvalidShape
                    && config.components() == 3
                    && (1..=MAX_DIMENSION).contains(&h)
                    && (1..=MAX_DIMENSION).contains(&w) =>
            {
                Ok(ChunkLayout {
                    height: h as u16,
                    width: w as u16,
                    components: 3,
                })
            }
            (result, _) => result,
        }
    }

    /// Samples in the image, whatever the platform's address space.
    pub(crate) fn sample_count_u64(&self) -> u64 {
        u64::from(self.height) * u64::from(self.width) * u64::from(self.components)
    }

    /// Samples in the chunk; `from_shape` guarantees this fits in `usize`.
    pub fn sample_count(&self) -> usize {
        self.checked_sample_count().unwrap_or(usize::MAX)
    }

    /// The data must hold exactly one byte per sample.
    pub fn check_data_len(&self, len: usize) -> Result<()> {
        let expected = self.sample_count();
        if len != expected {
            return Err(CodecError::data(format!(
                "the chunk data holds {} bytes but the chunk shape needs {} \
                 ({} × {} × {} uint8 samples)",
                Int::of(len),
                Int::of(expected),
                Int(self.height.into()),
                Int(self.width.into()),
                Int(self.components.into())
            )));
        }
        Ok(())
    }
}

pub(crate) fn describe(shape: &[u64]) -> String {
    use std::fmt::Write;
    // written out rather than collected and joined: `join` costs ~0.6 KB of wasm
    let mut text = owned("[");
    for (i, &n) in shape.iter().enumerate() {
        let _ = write!(text, "{}{}", if i == 0 { "" } else { ", " }, Int(n));
    }
    crate::error::append(&mut text, "]");
    text
}
