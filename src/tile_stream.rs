//! Completing the JPEG data of one TIFF tile (read in place through references, or copied
//! into a chunk by the converter) into an interchange stream that carries everything a
//! decoder needs, its colour space included.
//!
//! A JPEG-compressed TIFF often stores each tile abbreviated: the quantisation and Huffman
//! tables sit once in the page's `JPEGTables` tag (347), and the colour space is stated by
//! the TIFF (Photometric tag), not by markers in the stream. Aperio's RGB tiles, for one,
//! carry component ids 0, 1, 2 and neither a JFIF nor an Adobe marker, which by the
//! spec's (and libjpeg's) marker rules reads as YCbCr. Here the tables are spliced in
//! after SOI and, where the container declares a colour space, the markers are made to
//! say it. Entropy-coded data and tables are copied unchanged.

use crate::decode::{stored_color_space, StoredColorSpace};
use crate::error::{CodecError, Hex, Int, Result};
use crate::markers::{next_marker, read_header, segment, APP0, APP14, EOI, SOI, SOS};

const DHT: u8 = 0xC4;
const DQT: u8 = 0xDB;
const DRI: u8 = 0xDD;
const COM: u8 = 0xFE;

/// An APP14 "Adobe" segment (version 100, no flags) with the given colour transform, as
/// libjpeg writes it: 0 = none (RGB), 1 = YCbCr.
fn adobe_segment(transform: u8) -> [u8; 16] {
    [
        0xFF, APP14, 0x00, 0x0E, b'A', b'd', b'o', b'b', b'e', 0x00, 0x64, 0x00, 0x00, 0x00, 0x00,
        transform,
    ]
}

/// The complete stream for `tile`: the segments of the tables-only stream `tables` (a
/// TIFF page's JPEGTables: SOI, DQT/DHT/DRI segments, EOI) inserted after the tile's SOI,
/// where the tile's own tables, read later, still take precedence as in libjpeg; then, if
/// `declared` is given, colour markers that make the spec's decoding rules
/// ([`stored_color_space`]) give exactly that colour space:
/// - `Rgb`: JFIF APP0 and Adobe APP14 segments dropped, an Adobe marker with transform 0
///   inserted (always, as the spec asks of `rgb` streams, so that decoders which ignore
///   component ids agree);
/// - `Ycbcr`: left as it is where its markers already read as YCbCr, else its Adobe
///   segments replaced by one with transform 1;
/// - `Grayscale`: checked only.
///
/// A component count the declared colour space cannot have is refused by name, as is
/// anything in `tables` but table definitions.
pub fn complete_tile_stream(
    tile: &[u8],
    tables: Option<&[u8]>,
    declared: Option<StoredColorSpace>,
) -> Result<Vec<u8>> {
    if tile.is_empty() {
        return Err(CodecError::corrupt(
            "the tile is empty (0 bytes): the TIFF holds no data for it",
        ));
    }
    let definitions = match tables {
        Some(tables) => table_definitions(tables)?,
        None => &[],
    };
    // Checks SOI (naming PNG, JPEG 2000 and the like) before anything is copied.
    if !tile.starts_with(&[0xFF, SOI]) {
        read_header(tile)?;
    }
    let mut stream = Vec::new();
    stream
        .try_reserve_exact(tile.len() + definitions.len() + 16)
        .map_err(|_| CodecError::data("the tile is too large to copy in this platform's memory"))?;
    stream.extend_from_slice(&tile[..2]);
    stream.extend_from_slice(definitions);
    stream.extend_from_slice(&tile[2..]);
    let Some(declared) = declared else {
        return Ok(stream);
    };
    let header = read_header(&stream)?;
    let components = header.components.len();
    match (declared, components) {
        (StoredColorSpace::Grayscale, 1) => return Ok(stream),
        (StoredColorSpace::Rgb | StoredColorSpace::Ycbcr, 3) => {}
        (declared, n) => {
            return Err(CodecError::mismatch(format!(
                "the container declares the JPEG data {} ({} component{}) but the tile's \
                 frame has {}",
                declared_name(declared),
                if declared == StoredColorSpace::Grayscale {
                    1
                } else {
                    3
                },
                if declared == StoredColorSpace::Grayscale {
                    ""
                } else {
                    "s"
                },
                Int::of(n)
            )))
        }
    }
    if declared == StoredColorSpace::Ycbcr
        && matches!(stored_color_space(&header), Ok(StoredColorSpace::Ycbcr))
    {
        return Ok(stream);
    }
    let transform = if declared == StoredColorSpace::Rgb {
        0
    } else {
        1
    };
    let rewritten = with_colour_marker(&stream, transform, declared == StoredColorSpace::Rgb)?;
    // The rules themselves confirm the result (a stream they still read otherwise would be
    // decoded to wrong colours without a word).
    match stored_color_space(&read_header(&rewritten)?)? {
        got if got == declared => Ok(rewritten),
        _ => Err(CodecError::unsupported(format!(
            "the tile's colour markers could not be made to declare {}",
            declared_name(declared)
        ))),
    }
}

fn declared_name(declared: StoredColorSpace) -> &'static str {
    match declared {
        StoredColorSpace::Grayscale => "grayscale",
        StoredColorSpace::Ycbcr => "YCbCr",
        StoredColorSpace::Rgb => "RGB",
    }
}

/// The bytes between SOI and EOI of a tables-only stream, after checking that they are
/// nothing but table definitions (and the markers libjpeg skips there).
fn table_definitions(tables: &[u8]) -> Result<&[u8]> {
    let refuse =
        |what: String| CodecError::corrupt(format!("the JPEG tables (JPEGTables): {what}"));
    // libtiff writes an empty tables stream (SOI, EOI) for pages whose tiles are complete.
    if !tables.starts_with(&[0xFF, SOI]) {
        return Err(refuse(
            "they do not start with the start-of-image marker FF D8".into(),
        ));
    }
    let mut pos = 2;
    loop {
        let (marker, after) = next_marker(tables, pos).map_err(|e| refuse(e.message().into()))?;
        match marker {
            EOI => return Ok(&tables[2..pos]),
            DQT | DHT | DRI | COM | 0xE0..=0xEF => {
                let (_, next) =
                    segment(tables, after, marker).map_err(|e| refuse(e.message().into()))?;
                pos = next;
            }
            other => {
                return Err(refuse(format!(
                    "marker FF {} at byte {} is not a table definition (only DQT, DHT, DRI, \
                     APPn and COM segments belong there)",
                    Hex(other),
                    Int::of(pos)
                )))
            }
        }
    }
}

/// Copies `stream` with its Adobe APP14 segments (and, if `drop_jfif`, its JFIF APP0
/// segments) before the first scan removed, and one Adobe segment with `transform`
/// inserted after SOI. From the first scan on, the bytes are copied unchanged.
fn with_colour_marker(stream: &[u8], transform: u8, drop_jfif: bool) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(stream.len() + 16);
    out.extend_from_slice(&stream[..2]);
    out.extend_from_slice(&adobe_segment(transform));
    let mut pos = 2;
    loop {
        let (marker, after) = next_marker(stream, pos)?;
        if marker == SOS || marker == EOI {
            out.extend_from_slice(&stream[pos..]);
            return Ok(out);
        }
        // (markers without a length, which the header reader skips too)
        if matches!(marker, 0x01 | 0xD0..=0xD7) {
            out.extend_from_slice(&stream[pos..after]);
            pos = after;
            continue;
        }
        let (payload, next) = segment(stream, after, marker)?;
        let dropped = (marker == APP14 && payload.starts_with(b"Adobe"))
            || (drop_jfif && marker == APP0 && payload.starts_with(b"JFIF\0"));
        if !dropped {
            out.extend_from_slice(&stream[pos..next]);
        }
        pos = next;
    }
}
