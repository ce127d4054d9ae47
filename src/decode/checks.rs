//! The checks of a stream's header against the chunk, made before anything is allocated
//! from the stream's claims.

use super::colour::{stored_color_space, StoredColorSpace};
use crate::chunk::ChunkLayout;
use crate::error::{owned, CodecError, Int, Result};
use crate::markers::{self, StreamHeader};

/// Reads the header and checks it against the chunk before anything large is allocated;
/// returns it with the stored colour space its markers give.
pub fn check_stream(
    stream: &[u8],
    layout: &ChunkLayout,
) -> Result<(StreamHeader, StoredColorSpace)> {
    let header = markers::read_header(stream)?;
    markers::check_complete(stream)?;
    if header.width != layout.width || header.height != layout.height {
        return Err(CodecError::mismatch(format!(
            "the stream holds a {} × {} (height × width) image but the chunk is {} × {}",
            Int(header.height.into()),
            Int(header.width.into()),
            Int(layout.height.into()),
            Int(layout.width.into())
        )));
    }
    if header.components.len() != usize::from(layout.components) {
        return Err(CodecError::mismatch(format!(
            "the stream has {} component{} but the chunk shape expects {}",
            Int::of(header.components.len()),
            if header.components.len() == 1 {
                ""
            } else {
                "s"
            },
            Int(layout.components.into())
        )));
    }
    check_sampling(&header)?;
    let stored = stored_color_space(&header)?;
    // Every 8×8 block of the first component (which has the largest sampling factors,
    // so covers the whole image) costs at least one bit of entropy-coded data, its DC
    // code. A shorter stream cannot hold the image it claims (zune-jpeg would pad it
    // with zeros): reject it before the chunk-sized output is allocated, so a few bytes
    // claiming 65535 × 65535 cost nothing whatever chunk shape is given.
    let blocks = u64::from(header.width).div_ceil(8) * u64::from(header.height).div_ceil(8);
    if (stream.len() as u64) * 8 < blocks {
        return Err(CodecError::corrupt(format!(
            "the stream is {} bytes, too short for the {} × {} image its header claims \
             ({} blocks need at least {} bytes)",
            Int::of(stream.len()),
            Int(header.height.into()),
            Int(header.width.into()),
            Int(blocks),
            Int(blocks.div_ceil(8))
        )));
    }
    Ok((header, stored))
}

/// Sampling layouts this decoder reconstructs correctly; the others are rejected by name
/// rather than decoded wrongly:
/// - factors 1, 2 or 4 that divide the largest factor, at most 10 blocks per MCU (T.81 B.2.3);
/// - the first (luma) component has the largest factors (zune-jpeg upsamples relative to it).
///
/// (Sequential streams that code components in separate scans: `check_separate_scans`.)
fn check_sampling(header: &StreamHeader) -> Result<()> {
    if header.components.len() == 1 {
        return Ok(());
    }
    let h_max = header
        .components
        .iter()
        .map(|c| c.horizontal)
        .max()
        .unwrap_or(1);
    let v_max = header
        .components
        .iter()
        .map(|c| c.vertical)
        .max()
        .unwrap_or(1);
    let blocks: u32 = header
        .components
        .iter()
        .map(|c| u32::from(c.horizontal) * u32::from(c.vertical))
        .sum();
    let describe = || {
        use std::fmt::Write;
        let mut text = owned("[");
        for (i, c) in header.components.iter().enumerate() {
            let separator = if i == 0 { "" } else { ", " };
            let _ = write!(
                text,
                "{separator}[{}, {}]",
                Int(c.horizontal.into()),
                Int(c.vertical.into())
            );
        }
        crate::error::append(&mut text, "]");
        text
    };
    if blocks > 10 {
        return Err(CodecError::corrupt(format!(
            "sampling factors {} put {} blocks in a minimum coded unit; JPEG allows at most 10",
            describe(),
            Int(blocks.into())
        )));
    }
    let divides = |f: u8, max: u8| f != 3 && max.is_multiple_of(f);
    if header
        .components
        .iter()
        .any(|c| !divides(c.horizontal, h_max) || !divides(c.vertical, v_max))
    {
        return Err(CodecError::unsupported(format!(
            "sampling factors {} are not supported by this decoder (factors must be 1, 2 or 4 and \
             divide the largest factor)",
            describe()
        )));
    }
    let first = header.components[0];
    if first.horizontal != h_max || first.vertical != v_max {
        return Err(CodecError::unsupported(format!(
            "sampling factors {} are not supported by this decoder: a later component is sampled \
             more finely than the first",
            describe()
        )));
    }
    Ok(())
}
