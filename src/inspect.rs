//! Inspecting a JPEG stream without decoding it: the frame (SOF type, precision, size,
//! components with their ids, sampling factors and quantisation table numbers), the colour
//! markers, and the IJG quality whose scaled Annex K tables are nearest the stream's own
//! (an estimate: a writer may use other base tables). The converter uses it to decide
//! whether a TIFF tile can be copied into a chunk as it is, and which `quality` to declare.
//!
//! Walks the markers up to the first start-of-scan with every length checked against the
//! stream; allocates nothing sized by the stream's claims; never panics.

use crate::error::{CodecError, Int, Result};

/// One component of the frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameComponent {
    pub id: u8,
    pub horizontal: u8,
    pub vertical: u8,
    pub quant_table: u8,
}

/// What the markers before the first scan say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamInfo {
    /// The SOF marker's second byte: 0xC0 baseline, 0xC1 extended sequential, 0xC2
    /// progressive, 0xC3 lossless, …
    pub sof: u8,
    pub precision: u8,
    pub height: u16,
    pub width: u16,
    pub components: Vec<FrameComponent>,
    pub jfif: bool,
    pub adobe_transform: Option<u8>,
    /// The IJG quality (1–100) nearest the quantisation tables the components use, when
    /// they are all present and 8-bit.
    pub quality: Option<u8>,
}

impl StreamInfo {
    /// The coding process by name.
    pub fn process_name(&self) -> &'static str {
        match self.sof {
            0xC0 => "baseline",
            0xC1 => "extended sequential",
            0xC2 => "progressive",
            0xC3 => "lossless",
            0xC5..=0xC7 => "hierarchical",
            0xC9..=0xCB | 0xCD..=0xCF => "arithmetic-coded",
            _ => "unknown",
        }
    }
}

/// The Annex K luminance table (ITU-T T.81 Table K.1), in natural (row-major) order.
const ANNEX_K_LUMA: [u16; 64] = [
    16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56,
    14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113,
    92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
];
/// The Annex K chrominance table (Table K.2), in natural order.
const ANNEX_K_CHROMA: [u16; 64] = [
    17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99,
    47, 66, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
    99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
];
/// Zig-zag position k → natural index (DQT stores tables in zig-zag order).
const ZIGZAG: [usize; 64] = [
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20,
    13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59,
    52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
];

/// libjpeg's `jpeg_quality_scaling` and `jpeg_add_quant_table` (force_baseline): the
/// table entry for `base` at `quality`.
pub fn ijg_scaled(base: u16, quality: u8) -> u16 {
    let q = u32::from(quality.clamp(1, 100));
    let scale = if q < 50 { 5000 / q } else { 200 - 2 * q };
    ((u32::from(base) * scale + 50) / 100).clamp(1, 255) as u16
}

/// The quality 1–100 whose IJG-scaled Annex K tables are nearest (least squared error)
/// the given tables: `(table in natural order, is_chroma)`.
pub fn nearest_ijg_quality(tables: &[([u16; 64], bool)]) -> Option<u8> {
    if tables.is_empty() {
        return None;
    }
    let mut best: Option<(u64, u8)> = None;
    for q in 1..=100u8 {
        let mut error = 0u64;
        for (table, chroma) in tables {
            let base = if *chroma {
                &ANNEX_K_CHROMA
            } else {
                &ANNEX_K_LUMA
            };
            for i in 0..64 {
                let d = i64::from(table[i]) - i64::from(ijg_scaled(base[i], q));
                error += (d * d) as u64;
            }
        }
        // ties: the higher quality (the smaller tables), by `<=`
        if best.is_none_or(|(e, _)| error <= e) {
            best = Some((error, q));
        }
    }
    best.map(|(_, q)| q)
}

fn corrupt(message: String) -> CodecError {
    CodecError::corrupt(message)
}

/// Reads the markers of `stream` up to its first start-of-scan.
pub fn inspect_stream(stream: &[u8]) -> Result<StreamInfo> {
    if stream.len() < 2 || stream[0] != 0xFF || stream[1] != 0xD8 {
        return Err(corrupt(
            "not a JPEG stream: it does not start with FF D8 (start of image)".into(),
        ));
    }
    // quantisation tables 0–3 in natural order; None until defined (16-bit ones too)
    let mut tables: [Option<[u16; 64]>; 4] = [None; 4];
    let mut sixteen_bit = false;
    let mut frame: Option<(u8, u8, u16, u16, Vec<FrameComponent>)> = None;
    let mut jfif = false;
    let mut adobe_transform = None;
    let mut pos = 2usize;
    loop {
        // skip fill bytes to the next marker
        if pos >= stream.len() {
            return Err(corrupt(
                "the stream ends before any image data (no start-of-scan marker)".into(),
            ));
        }
        if stream[pos] != 0xFF {
            return Err(corrupt(format!(
                "a byte 0x{:02X} at offset {} where a marker should be",
                stream[pos],
                Int::of(pos)
            )));
        }
        while pos < stream.len() && stream[pos] == 0xFF {
            pos += 1;
        }
        let Some(&marker) = stream.get(pos) else {
            return Err(corrupt("the stream ends inside a marker".into()));
        };
        pos += 1;
        match marker {
            0xD0..=0xD7 | 0x01 => continue,
            0xD8 => {
                return Err(corrupt(
                    "a second start-of-image marker before any image data".into(),
                ))
            }
            0xD9 => {
                return Err(corrupt(
                    "the stream ends (FF D9) before any image data".into(),
                ))
            }
            _ => {}
        }
        if pos + 2 > stream.len() {
            return Err(corrupt(format!(
                "marker FF {marker:02X} has no length (the stream ends)"
            )));
        }
        let length = usize::from(u16::from_be_bytes([stream[pos], stream[pos + 1]]));
        if length < 2 || pos + length > stream.len() {
            return Err(corrupt(format!(
                "marker FF {marker:02X} claims {} bytes but {} remain",
                Int::of(length),
                Int::of(stream.len() - pos)
            )));
        }
        let payload = &stream[pos + 2..pos + length];
        pos += length;
        match marker {
            0xDB => {
                let mut p = payload;
                while !p.is_empty() {
                    let pq = p[0] >> 4;
                    let tq = usize::from(p[0] & 0x0F);
                    let size = if pq == 0 { 64 } else { 128 };
                    if tq > 3 || pq > 1 || p.len() < 1 + size {
                        return Err(corrupt("a malformed quantisation table (DQT)".into()));
                    }
                    let mut table = [0u16; 64];
                    for (k, &natural) in ZIGZAG.iter().enumerate() {
                        table[natural] = if pq == 0 {
                            u16::from(p[1 + k])
                        } else {
                            u16::from_be_bytes([p[1 + 2 * k], p[2 + 2 * k]])
                        };
                    }
                    if pq == 1 {
                        sixteen_bit = true;
                    }
                    tables[tq] = Some(table);
                    p = &p[1 + size..];
                }
            }
            0xC0..=0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF => {
                if frame.is_some() {
                    return Err(corrupt("more than one frame header (SOF marker)".into()));
                }
                if payload.len() < 6 {
                    return Err(corrupt("the frame header is too short".into()));
                }
                let count = usize::from(payload[5]);
                if payload.len() != 6 + 3 * count || count == 0 {
                    return Err(corrupt(format!(
                        "the frame header's length does not fit its {} components",
                        Int::of(count)
                    )));
                }
                let components = payload[6..]
                    .chunks_exact(3)
                    .map(|c| FrameComponent {
                        id: c[0],
                        horizontal: c[1] >> 4,
                        vertical: c[1] & 0x0F,
                        quant_table: c[2],
                    })
                    .collect();
                frame = Some((
                    marker,
                    payload[0],
                    u16::from_be_bytes([payload[1], payload[2]]),
                    u16::from_be_bytes([payload[3], payload[4]]),
                    components,
                ));
            }
            0xE0 if payload.len() >= 14 && payload.starts_with(b"JFIF\0") => jfif = true,
            0xEE if payload.len() >= 12 && payload.starts_with(b"Adobe") => {
                adobe_transform = Some(payload[11])
            }
            0xDA => {
                let Some((sof, precision, height, width, components)) = frame else {
                    return Err(corrupt(
                        "a scan (SOS) comes before the frame header (SOF)".into(),
                    ));
                };
                let quality = if sixteen_bit {
                    None
                } else {
                    let mut used: Vec<([u16; 64], bool)> = Vec::new();
                    let mut seen = [false; 4];
                    let mut complete = true;
                    for (i, c) in components.iter().enumerate() {
                        let t = usize::from(c.quant_table & 3);
                        if seen[t] {
                            continue;
                        }
                        seen[t] = true;
                        match tables[t] {
                            Some(table) => used.push((table, i > 0)),
                            None => complete = false,
                        }
                    }
                    if complete {
                        nearest_ijg_quality(&used)
                    } else {
                        None
                    }
                };
                return Ok(StreamInfo {
                    sof,
                    precision,
                    height,
                    width,
                    components,
                    jfif,
                    adobe_transform,
                    quality,
                });
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scaled_annex_k_tables_give_back_their_quality() {
        for q in 1..=100u8 {
            let luma: [u16; 64] = std::array::from_fn(|i| ijg_scaled(ANNEX_K_LUMA[i], q));
            let chroma: [u16; 64] = std::array::from_fn(|i| ijg_scaled(ANNEX_K_CHROMA[i], q));
            let found = nearest_ijg_quality(&[(luma, false), (chroma, true)]).unwrap();
            // (at the top, several qualities clamp to the same all-ones tables)
            assert_eq!(
                (0..64)
                    .map(|i| ijg_scaled(ANNEX_K_LUMA[i], found))
                    .collect::<Vec<_>>(),
                luma.to_vec(),
                "quality {q} found as {found}"
            );
        }
    }

    #[test]
    fn truncated_and_empty_streams_are_errors() {
        for bytes in [
            &[][..],
            &[0xFF][..],
            &[0xFF, 0xD8][..],
            &[0xFF, 0xD8, 0xFF, 0xDB, 0xFF, 0xFF][..],
        ] {
            assert!(inspect_stream(bytes).is_err());
        }
    }
}
