//! Reading a JPEG stream's markers before anything is decoded: the frame header,
//! colour markers and first scan, with lengths validated. (Rewriting the encoder's
//! markers is in `rewrite.rs`.)

use crate::error::{owned, CodecError, Hex, Int, Result};

pub(crate) const SOI: u8 = 0xD8;
pub(crate) const EOI: u8 = 0xD9;
pub(crate) const SOS: u8 = 0xDA;
pub(crate) const APP0: u8 = 0xE0;
pub(crate) const APP14: u8 = 0xEE;
/// The shortest JFIF APP0 data libjpeg-turbo recognises (APP0_DATA_LEN).
const JFIF_APP0_LEN: usize = 14;
/// The shortest Adobe APP14 data libjpeg-turbo recognises (APP14_DATA_LEN).
const ADOBE_APP14_LEN: usize = 12;

/// How the stream's DCT coefficients are coded (only the decodable ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodingProcess {
    /// SOF0
    Baseline,
    /// SOF1 (8-bit, Huffman)
    ExtendedSequential,
    /// SOF2 (Huffman)
    Progressive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ComponentSpec {
    pub id: u8,
    pub horizontal: u8,
    pub vertical: u8,
    pub quant_table: u8,
}

/// What the markers before the first scan say about the image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamHeader {
    pub process: CodingProcess,
    pub height: u16,
    pub width: u16,
    pub components: Vec<ComponentSpec>,
    /// A JFIF APP0 marker (at least 14 bytes of data, as libjpeg-turbo requires) was present.
    pub jfif: bool,
    /// The colour transform of the last Adobe APP14 marker (at least 12 bytes of data), if any.
    pub adobe_transform: Option<u8>,
    /// How many components the first scan holds (all of them when interleaved).
    pub first_scan_components: u8,
}

impl StreamHeader {
    /// The components are coded in more than one scan (the first scan does not hold them all).
    pub fn separate_scans(&self) -> bool {
        usize::from(self.first_scan_components) < self.components.len()
    }

    pub fn ids_are_rgb(&self) -> bool {
        matches!(self.components.as_slice(), [r, g, b] if [r.id, g.id, b.id] == *b"RGB")
    }
}

/// Reads every marker up to the first start-of-scan, validating lengths and rejecting,
/// by name, the coding features this codec does not decode. Allocates nothing sized
/// by the stream's claims.
pub fn read_header(stream: &[u8]) -> Result<StreamHeader> {
    check_signature(stream)?;
    let mut pos = 2;
    let mut frame: Option<(CodingProcess, u16, u16, Vec<ComponentSpec>)> = None;
    let mut jfif = false;
    let mut adobe_transform = None;
    loop {
        let (marker, after_marker) = next_marker(stream, pos)?;
        match marker {
            0xD0..=0xD7 | 0x01 => {
                pos = after_marker;
                continue;
            }
            SOI => {
                return Err(CodecError::corrupt(
                    "a second start-of-image marker (FF D8) appears before any image data",
                ))
            }
            EOI => {
                return Err(CodecError::corrupt(
                    "the stream ends (FF D9) before any image data: no start-of-scan marker",
                ))
            }
            _ => {}
        }
        let (payload, next) = segment(stream, after_marker, marker)?;
        match marker {
            0xC0..=0xC2 => {
                if frame.is_some() {
                    return Err(CodecError::corrupt("more than one frame header (SOF marker)"));
                }
                let process = match marker {
                    0xC0 => CodingProcess::Baseline,
                    0xC1 => CodingProcess::ExtendedSequential,
                    _ => CodingProcess::Progressive,
                };
                frame = Some(parse_frame(payload, process)?);
            }
            0xC3 => return Err(CodecError::unsupported("lossless JPEG (SOF3) is not supported; only baseline, extended sequential and progressive DCT with Huffman coding")),
            0xC5..=0xC7 | 0xDE => return Err(CodecError::unsupported("hierarchical (differential) JPEG is not supported; only baseline, extended sequential and progressive DCT with Huffman coding")),
            0xC9..=0xCF => return Err(CodecError::unsupported("arithmetic coding is not supported; only Huffman-coded JPEG")),
            0xC8 => return Err(CodecError::unsupported("the reserved JPG extension marker (FF C8) is not supported")),
            // libjpeg-turbo's lengths (jdmarker.c examine_app0 / examine_app14): a JFIF
            // APP0 counts with at least 14 bytes of data, an Adobe APP14 with at least 12;
            // shorter ones are ignored, as there.
            APP0 if payload.len() >= JFIF_APP0_LEN && payload.starts_with(b"JFIF\0") => jfif = true,
            // wsidicom writes its DICOM frames' APP14 after the tables and SOF; libjpeg reads
            // it wherever it is in the header. A three-component sequential frame takes it
            // (nothing there depends on the component count it could contradict).
            APP14 if payload.starts_with(b"Adobe") && frame.is_some() => match &frame {
                Some((CodingProcess::Baseline | CodingProcess::ExtendedSequential, _, _, components))
                    if components.len() == 3 && payload.len() >= ADOBE_APP14_LEN =>
                {
                    adobe_transform = Some(payload[11]);
                }
                _ => return Err(late_adobe_marker()),
            },
            APP14 if payload.len() >= ADOBE_APP14_LEN && payload.starts_with(b"Adobe") => {
                adobe_transform = Some(payload[11]);
            }
            SOS => {
                let Some((process, height, width, components)) = frame else {
                    return Err(CodecError::corrupt("a scan (SOS) comes before the frame header (SOF)"));
                };
                let first_scan_components = *payload
                    .first()
                    .ok_or_else(|| CodecError::corrupt("the start-of-scan header is empty"))?;
                check_after_first_scan(stream, next)?;
                return Ok(StreamHeader { process, height, width, components, jfif, adobe_transform, first_scan_components });
            }
            _ => {}
        }
        pos = next;
    }
}

/// zune-jpeg 0.5.15 re-reads the colour space from an Adobe marker wherever it appears,
/// and after the frame header that contradicts the component count it set up (a
/// one-component progressive stream then panics at mcu_prog.rs:102, upstream issue
/// #409). One after SOF is refused but in a three-component sequential frame, before its
/// first scan.
fn late_adobe_marker() -> CodecError {
    CodecError::unsupported(
        "an Adobe APP14 marker after the frame header (SOF) is not supported; encoders write it before",
    )
}

/// Walks the markers between and after the scans (skipping entropy-coded data) for
/// what the decoder would mishandle: a late Adobe marker, a second frame header, or a
/// start-of-image marker. A missing end is left to `check_complete`.
fn check_after_first_scan(stream: &[u8], mut pos: usize) -> Result<()> {
    loop {
        pos = entropy_coded_end(stream, pos);
        if pos + 1 >= stream.len() {
            return Ok(());
        }
        let (marker, after_marker) = next_marker(stream, pos)?;
        match marker {
            EOI => return Ok(()),
            0x01 | 0xD0..=0xD7 => {
                pos = after_marker;
                continue;
            }
            SOI => {
                return Err(CodecError::corrupt(format!(
                    "a start-of-image marker (FF D8) inside the image data at byte {}",
                    Int::of(pos)
                )))
            }
            0xC0..=0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF => {
                return Err(CodecError::corrupt(format!(
                    "a second frame header (FF {}) at byte {}",
                    Hex(marker),
                    Int::of(pos)
                )))
            }
            _ => {}
        }
        let (payload, next) = segment(stream, after_marker, marker)?;
        if marker == APP14 && payload.starts_with(b"Adobe") {
            return Err(late_adobe_marker());
        }
        pos = next;
    }
}

/// The offset of the first marker after entropy-coded data starting at `pos`
/// (stuffed FF 00 bytes and restart markers belong to the data).
pub(crate) fn entropy_coded_end(stream: &[u8], mut pos: usize) -> usize {
    while let Some(offset) = stream.get(pos..).and_then(find_ff) {
        let at = pos + offset;
        match stream.get(at + 1) {
            None => return stream.len(),
            Some(0x00 | 0xD0..=0xD7 | 0xFF) => pos = at + 1,
            Some(_) => return at,
        }
    }
    stream.len()
}

/// A complete stream ends with the end-of-image marker (trailing zero padding aside).
/// zune-jpeg fills the rest of a truncated image with grey even in strict mode; such a
/// chunk must be an error, not plausible-looking wrong data.
pub fn check_complete(stream: &[u8]) -> Result<()> {
    let end = stream.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    if end >= 2 && stream[end - 2] == 0xFF && stream[end - 1] == EOI {
        return Ok(());
    }
    Err(CodecError::corrupt(format!(
        "the stream is truncated: its {} bytes do not end with the end-of-image marker FF D9",
        Int::of(stream.len())
    )))
}

/// Names other formats instead of calling them corrupt JPEG.
fn check_signature(stream: &[u8]) -> Result<()> {
    if stream.len() >= 2 && stream[0] == 0xFF && stream[1] == SOI {
        return Ok(());
    }
    let what = if stream.is_empty() {
        "the input is empty (0 bytes)"
    } else if stream.starts_with(b"\x89PNG\r\n\x1a\n") {
        "the input is a PNG file, not JPEG"
    } else if stream.starts_with(&[0xFF, 0x4F, 0xFF, 0x51])
        || stream.starts_with(b"\0\0\0\x0CjP  \r\n\x87\n")
    {
        "the input is JPEG 2000, not baseline JPEG"
    } else if stream.starts_with(&[0xFF, 0x0A]) || stream.starts_with(b"\0\0\0\x0CJXL \r\n\x87\n") {
        "the input is JPEG XL, not baseline JPEG"
    } else {
        use std::fmt::Write;
        let mut text = owned(
            "the input does not start with the JPEG start-of-image marker FF D8 (starts with",
        );
        for b in stream.iter().take(4) {
            let _ = write!(text, " {}", Hex(*b));
        }
        crate::error::append(&mut text, ")");
        return Err(CodecError::corrupt(text));
    };
    Err(CodecError::corrupt(what))
}

/// Finds the marker at `pos` (skipping fill bytes); returns its code and the offset after it.
pub(crate) fn next_marker(stream: &[u8], mut pos: usize) -> Result<(u8, usize)> {
    match stream.get(pos) {
        Some(0xFF) => {}
        Some(&b) => {
            return Err(CodecError::corrupt(format!(
                "expected a marker (FF xx) at byte {} of the header, found {}",
                Int::of(pos),
                Hex(b)
            )))
        }
        None => {
            return Err(CodecError::corrupt(format!(
                "the stream is truncated at byte {}, inside the header",
                Int::of(pos)
            )))
        }
    }
    while stream.get(pos) == Some(&0xFF) {
        pos += 1;
    }
    match stream.get(pos) {
        Some(0x00) => Err(CodecError::corrupt(format!(
            "invalid marker FF 00 at byte {}",
            Int::of(pos - 1)
        ))),
        Some(&m) => Ok((m, pos + 1)),
        None => Err(CodecError::corrupt(format!(
            "the stream is truncated at byte {}, inside the header",
            Int::of(pos)
        ))),
    }
}

/// The payload of the length-prefixed segment starting at `pos`, and where the next one starts.
pub(crate) fn segment(stream: &[u8], pos: usize, marker: u8) -> Result<(&[u8], usize)> {
    let (code, at) = (Hex(marker), Int::of(pos));
    let len_bytes = stream.get(pos..pos + 2).ok_or_else(|| {
        CodecError::corrupt(format!(
            "the stream is truncated in the length of marker FF {code} at byte {at}"
        ))
    })?;
    let length = usize::from(u16::from_be_bytes([len_bytes[0], len_bytes[1]]));
    if length < 2 {
        return Err(CodecError::corrupt(format!(
            "marker FF {code} at byte {at} has an invalid length {}",
            Int::of(length)
        )));
    }
    let end = pos + length;
    if end > stream.len() {
        return Err(CodecError::corrupt(format!(
            "marker FF {code} at byte {at} claims {} bytes but the stream ends after {}",
            Int::of(length),
            Int::of(stream.len() - pos)
        )));
    }
    Ok((&stream[pos + 2..end], end))
}

fn parse_frame(
    p: &[u8],
    process: CodingProcess,
) -> Result<(CodingProcess, u16, u16, Vec<ComponentSpec>)> {
    if p.len() < 6 {
        return Err(CodecError::corrupt(format!(
            "the frame header is {} bytes, too short",
            Int::of(p.len())
        )));
    }
    let precision = p[0];
    let height = u16::from_be_bytes([p[1], p[2]]);
    let width = u16::from_be_bytes([p[3], p[4]]);
    let count = usize::from(p[5]);
    if precision != 8 {
        return Err(CodecError::unsupported(format!(
            "{}-bit samples are not supported; the jpeg codec stores 8-bit (uint8) samples",
            Int(precision.into())
        )));
    }
    if p.len() != 6 + 3 * count {
        return Err(CodecError::corrupt(format!(
            "the frame header is {} bytes but {} components need {}",
            Int::of(p.len()),
            Int::of(count),
            Int::of(6 + 3 * count)
        )));
    }
    match count {
        1 | 3 => {}
        4 => return Err(CodecError::unsupported("4-component (CMYK or YCCK) JPEG is not supported; the jpeg codec stores 1 or 3 components")),
        n => return Err(CodecError::unsupported(format!("{}-component JPEG is not supported; the jpeg codec stores 1 or 3 components", Int::of(n)))),
    }
    if width == 0 {
        return Err(CodecError::corrupt("the frame header gives a width of 0"));
    }
    if height == 0 {
        return Err(CodecError::unsupported(
            "a frame height of 0 (to be defined by a later DNL marker) is not supported",
        ));
    }
    let mut components = Vec::with_capacity(count);
    for c in p[6..].chunks_exact(3) {
        let spec = ComponentSpec {
            id: c[0],
            horizontal: c[1] >> 4,
            vertical: c[1] & 0x0F,
            quant_table: c[2],
        };
        if !(1..=4).contains(&spec.horizontal) || !(1..=4).contains(&spec.vertical) {
            return Err(CodecError::corrupt(format!(
                "component {} has sampling factors {}×{}; JPEG allows 1 to 4",
                Int(spec.id.into()),
                Int(spec.horizontal.into()),
                Int(spec.vertical.into())
            )));
        }
        if spec.quant_table > 3 {
            return Err(CodecError::corrupt(format!(
                "component {} uses quantisation table {}; JPEG has tables 0 to 3",
                Int(spec.id.into()),
                Int(spec.quant_table.into())
            )));
        }
        if components.iter().any(|o: &ComponentSpec| o.id == spec.id) {
            return Err(CodecError::corrupt(format!(
                "component id {} appears twice in the frame header",
                Int(spec.id.into())
            )));
        }
        components.push(spec);
    }
    Ok((process, height, width, components))
}

/// The index of the first 0xFF byte: where the next marker or stuffed `FF00` starts. The
/// baseline decoder destuffs whole scans with it and the walk over entropy-coded data
/// after the first scan spends its time here, so a wasm module built with simd128
/// compares 16 bytes at a time and every other build 8 at a time in a `u64`.
#[inline(never)]
pub(crate) fn find_ff(bytes: &[u8]) -> Option<usize> {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    const STEP: usize = 16;
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    const STEP: usize = 8;
    let mut chunks = bytes.chunks_exact(STEP);
    let mut base = 0;
    for chunk in &mut chunks {
        if let Some(i) = first_ff_in_chunk(chunk) {
            return Some(base + i);
        }
        base += STEP;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == 0xFF)
        .map(|i| base + i)
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn first_ff_in_chunk(chunk: &[u8]) -> Option<usize> {
    use core::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_load};
    let Ok(chunk) = <&[u8; 16]>::try_from(chunk) else {
        return None;
    };
    // SAFETY: `chunk` is exactly 16 bytes; v128 loads need no alignment.
    let v = unsafe { v128_load(chunk.as_ptr().cast::<v128>()) };
    let hits = u8x16_bitmask(u8x16_eq(v, u8x16_splat(0xFF)));
    (hits != 0).then(|| hits.trailing_zeros() as usize)
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline(always)]
fn first_ff_in_chunk(chunk: &[u8]) -> Option<usize> {
    let Ok(chunk) = <[u8; 8]>::try_from(chunk) else {
        return None;
    };
    let y = !u64::from_le_bytes(chunk); // 0xFF bytes become zero bytes
    let zeros = y.wrapping_sub(0x0101_0101_0101_0101) & !y & 0x8080_8080_8080_8080;
    (zeros != 0).then(|| (zeros.trailing_zeros() / 8) as usize)
}

#[cfg(test)]
mod find_ff_tests {
    use super::find_ff;

    /// The chunked search (16 bytes at a time with simd128, 8 otherwise) against a plain
    /// one, on every length 0..80 with 0xFF at every position, none, or several.
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    fn finds_the_first_ff() {
        for len in 0..80usize {
            let base: Vec<u8> = (0..len).map(|i| (i * 37 % 255) as u8).collect();
            assert_eq!(
                find_ff(&base),
                base.iter().position(|&b| b == 0xFF),
                "len {len}"
            );
            for at in 0..len {
                for second in [None, Some(len - 1), Some((at + 17).min(len - 1))] {
                    let mut v = base.clone();
                    v[at] = 0xFF;
                    if let Some(s) = second {
                        v[s] = 0xFF;
                    }
                    assert_eq!(
                        find_ff(&v),
                        v.iter().position(|&b| b == 0xFF),
                        "len {len}, at {at}"
                    );
                }
            }
        }
    }
}
