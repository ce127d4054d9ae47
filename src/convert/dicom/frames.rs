//! Where each frame of an instance's Pixel Data lies, and reading one frame.
//!
//! Native (uncompressed) pixel data: frame `i` is `rows × columns × samples` bytes at
//! `i ×` that. Encapsulated pixel data is a sequence of items: the Basic Offset Table, then
//! fragments. A frame is found from the Extended Offset Table (7FE0,0001) where the file
//! has one, else from the Basic Offset Table, else by a scan of the fragments' item headers
//! (8 bytes each, the data between them skipped): one fragment a frame when the counts
//! agree, else a new frame at each fragment that starts a JPEG stream (SOI). Only the
//! locations are kept (16 bytes a frame); a frame's bytes are read when it is needed.

use super::super::error::Result;
use super::super::source::{read_bytes, ReadAt};
use super::elements::{Instance, Reader, ITEM, SEQUENCE_END};

/// Fragments beyond one a frame that the scan keeps (16 bytes each): frames split into many
/// fragments are rare, and an endless run of empty items must not grow the index unbounded.
const MAX_EXTRA_FRAGMENTS: u64 = 1 << 20;

/// One frame: the byte ranges of its fragments (one range for most files).
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    pub ranges: Vec<(u64, u64)>,
}

/// Every frame of an instance, located.
#[derive(Debug)]
pub struct FrameIndex {
    pub frames: Vec<Frame>,
    /// how they were found, for the summary ("extended offset table", "basic offset table",
    /// "fragment scan", "native")
    pub method: &'static str,
}

/// The frames of `instance` (which has `count` of them, each `frame_bytes` long when native).
pub fn index(input: &dyn ReadAt, file: &str, instance: &Instance, count: u64, frame_bytes: u64) -> Result<FrameIndex> {
    let mut r = Reader::new(input, file);
    let Some((start, length)) = instance.pixel_data else {
        return Err(r.error("has no Pixel Data (7FE0,0010)"));
    };
    if let Some(length) = length {
        // native: frames one after another
        let need = count.checked_mul(frame_bytes).unwrap_or(u64::MAX);
        if length < need || start.checked_add(need).is_none_or(|e| e > r.size()) {
            return Err(r.error(format!(
                "its Pixel Data holds {} bytes where {count} frame(s) of {frame_bytes} bytes need {need}",
                length.min(r.size().saturating_sub(start))
            )));
        }
        let frames = (0..count).map(|i| Frame { ranges: vec![(start + i * frame_bytes, frame_bytes)] }).collect();
        return Ok(FrameIndex { frames, method: "native" });
    }
    r.pos = start;
    // the Basic Offset Table item
    let tag = r.tag("the Basic Offset Table")?;
    let bot_length = r.u32("the Basic Offset Table")?;
    if tag != ITEM {
        return Err(r.error("its encapsulated Pixel Data does not start with a Basic Offset Table item"));
    }
    if bot_length % 4 != 0 {
        return Err(r.error(format!("its Basic Offset Table is {bot_length} bytes long, not a multiple of 4")));
    }
    let bot_bytes = r.bytes(u64::from(bot_length), "the Basic Offset Table")?;
    let first_fragment = r.pos;
    let size = r.size();
    let past_end = |r: &Reader, what: &str, i: usize, at: u64| {
        r.error(format!("{what} puts frame {i} at byte {at}, past the end of the file ({size} bytes)"))
    };
    if let (Some(offsets), Some(lengths)) = (&instance.extended_offsets, &instance.extended_lengths) {
        if offsets.len() as u64 != count || lengths.len() as u64 != count {
            return Err(r.error(format!(
                "its Extended Offset Table has {} offset(s) and {} length(s) for {count} frame(s)",
                offsets.len(),
                lengths.len()
            )));
        }
        let mut frames = Vec::with_capacity(offsets.len());
        for (i, (&offset, &length)) in offsets.iter().zip(lengths).enumerate() {
            // an offset points at the frame's item tag
            let item = first_fragment.checked_add(offset).filter(|&a| a.checked_add(8 + length).is_some_and(|e| e <= size));
            let Some(item) = item else {
                return Err(past_end(&r, "its Extended Offset Table", i, first_fragment.saturating_add(offset)));
            };
            frames.push(Frame { ranges: vec![(item + 8, length)] });
        }
        return Ok(FrameIndex { frames, method: "extended offset table" });
    }
    // the fragments' headers, in order
    let mut fragments: Vec<(u64, u64)> = Vec::new();
    loop {
        if r.pos >= size {
            return Err(r.error("the file ends inside its encapsulated Pixel Data (no sequence delimiter)"));
        }
        let (tag, length) = r.item_header("a Pixel Data fragment")?;
        if tag == SEQUENCE_END {
            break;
        }
        if tag != ITEM {
            return Err(r.error(format!("its encapsulated Pixel Data holds a tag ({:08X}) where a fragment item was expected", tag)));
        }
        if fragments.len() as u64 >= count.saturating_add(MAX_EXTRA_FRAGMENTS) {
            return Err(r.error(format!(
                "its Pixel Data holds more than {} fragments for {count} frame(s)",
                fragments.len()
            )));
        }
        let at = r.pos;
        r.skip(u64::from(length), &format!("fragment {} of the Pixel Data", fragments.len()))?;
        fragments.push((at, u64::from(length)));
    }
    if !bot_bytes.is_empty() {
        let offsets: Vec<u64> = bot_bytes.chunks_exact(4).map(|b| u64::from(u32::from_le_bytes(b.try_into().expect("4 bytes")))).collect();
        if offsets.len() as u64 != count {
            return Err(r.error(format!("its Basic Offset Table has {} offset(s) for {count} frame(s)", offsets.len())));
        }
        let mut frames = Vec::with_capacity(offsets.len());
        let mut k = 0usize;
        for (i, &offset) in offsets.iter().enumerate() {
            let item = first_fragment + offset;
            // the fragment whose item starts there
            while k < fragments.len() && fragments[k].0 - 8 < item {
                k += 1;
            }
            if k >= fragments.len() || fragments[k].0 - 8 != item {
                return match item >= size {
                    true => Err(past_end(&r, "its Basic Offset Table", i, item)),
                    false => Err(r.error(format!("its Basic Offset Table puts frame {i} at byte {item}, where no fragment starts"))),
                };
            }
            let next = offsets.get(i + 1).map(|&o| first_fragment + o);
            let mut ranges = Vec::new();
            let mut j = k;
            while j < fragments.len() && next.is_none_or(|n| fragments[j].0 - 8 < n) {
                ranges.push(fragments[j]);
                j += 1;
            }
            frames.push(Frame { ranges });
        }
        return Ok(FrameIndex { frames, method: "basic offset table" });
    }
    let frames: Vec<Frame> = if fragments.len() as u64 == count {
        fragments.iter().map(|&f| Frame { ranges: vec![f] }).collect()
    } else if count == 1 {
        vec![Frame { ranges: fragments.clone() }]
    } else {
        // a new frame at each fragment that starts with SOI (FF D8)
        let mut frames: Vec<Frame> = Vec::new();
        for &(at, length) in &fragments {
            let head = read_bytes(input, at, 2.min(length as usize)).map_err(|e| r.error(format!("cannot read: {e}")))?;
            if head == [0xFF, 0xD8] || frames.is_empty() {
                frames.push(Frame { ranges: vec![(at, length)] });
            } else {
                frames.last_mut().expect("one frame at least").ranges.push((at, length));
            }
        }
        frames
    };
    if frames.len() as u64 != count {
        return Err(r.error(format!(
            "its Pixel Data holds {} fragment(s) that make {} frame(s), and no offset table, for {count} frame(s)",
            fragments.len(),
            frames.len()
        )));
    }
    Ok(FrameIndex { frames, method: "fragment scan" })
}

/// A frame's bytes (its fragments joined).
pub fn read_frame(input: &dyn ReadAt, frame: &Frame, max: u64) -> std::result::Result<Vec<u8>, String> {
    let total: u64 = frame.ranges.iter().map(|r| r.1).sum();
    if total > max {
        return Err(format!("its {total} bytes are more than a frame of its size can hold ({max})"));
    }
    let mut out = Vec::with_capacity(total as usize);
    for &(at, length) in &frame.ranges {
        let part = read_bytes(input, at, length as usize).map_err(|e| format!("cannot read it: {e}"))?;
        if part.len() as u64 != length {
            return Err(format!("the file ends inside it (byte {} of {length} at {at})", part.len()));
        }
        out.extend_from_slice(&part);
    }
    Ok(out)
}

/// A JPEG frame without the zero byte an encoder adds after its EOI marker to make the
/// fragment's length even (PS3.5 A.4): the chunk is the JPEG stream itself.
pub fn without_padding(mut stream: Vec<u8>) -> Vec<u8> {
    if stream.ends_with(&[0xFF, 0xD9, 0x00]) {
        stream.pop();
    }
    stream
}
