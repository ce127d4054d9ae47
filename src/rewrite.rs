//! Rewriting the encoder's markers (encoder builds only): the `rgb` form the spec and
//! libjpeg-turbo agree on, and dropping a quantisation table one-component streams
//! never use. Entropy-coded data is copied unchanged.

use crate::error::{CodecError, Result};
use crate::markers::{entropy_coded_end, next_marker, segment, APP0, APP14, EOI, SOI, SOS};

const DQT: u8 = 0xDB;

/// The APP14 "Adobe" segment with colour transform 0 (unknown: no inverse YCbCr
/// transform), as libjpeg writes it: version 100, no flags.
const ADOBE_TRANSFORM_0: [u8; 16] = [
    0xFF, APP14, 0x00, 0x0E, b'A', b'd', b'o', b'b', b'e', 0x00, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00,
];

/// Turns the encoder's three-component stream (JFIF, ids 0/1/2, two quantisation
/// tables) into the `rgb` form the spec and libjpeg-turbo agree on: no JFIF APP0, an
/// Adobe APP14 with transform 0, component ids 'R','G','B', and every component on
/// quantisation table 0 (the caller made both tables identical).
pub fn rewrite_as_rgb(stream: &[u8]) -> Result<Vec<u8>> {
    const IDS: [u8; 3] = [b'R', b'G', b'B'];
    rewrite_segments(stream, &ADOBE_TRANSFORM_0, |marker, payload| {
        match marker {
            APP0 if payload.starts_with(b"JFIF\0") => return Ok(false),
            DQT if defines_table_1(payload) => return Ok(false),
            0xC0 => {
                let specs = payload.get_mut(6..).ok_or("short SOF")?;
                for (i, c) in specs.chunks_exact_mut(3).enumerate() {
                    c[0] = *IDS.get(i).ok_or("more than 3 components")?;
                    c[2] = 0;
                }
            }
            SOS => {
                let n = usize::from(*payload.first().ok_or("empty SOS")?);
                let selectors = payload.get_mut(1..1 + 2 * n).ok_or("short SOS")?;
                for c in selectors.chunks_exact_mut(2) {
                    c[0] = *IDS
                        .get(usize::from(c[0]))
                        .ok_or("unexpected component id")?;
                }
            }
            _ => {}
        }
        Ok(true)
    })
}

/// Drops quantisation table 1, which the encoder writes even for one-component streams.
pub fn drop_unused_chroma_table(stream: &[u8]) -> Result<Vec<u8>> {
    rewrite_segments(stream, &[], |marker, payload| {
        Ok(!(marker == DQT && defines_table_1(payload)))
    })
}

/// One table per DQT segment in the encoder's output; is it table 1?
fn defines_table_1(payload: &[u8]) -> bool {
    payload.first().map(|pq_tq| pq_tq & 0x0F) == Some(1)
}

/// Copies the encoder's `stream`, inserting `after_soi` after SOI and passing every
/// marker segment's payload through `edit`, which may change it or drop it (false).
/// Entropy-coded data is copied unchanged. Errors here mean the encoder wrote
/// something unexpected.
fn rewrite_segments(
    stream: &[u8],
    after_soi: &[u8],
    mut edit: impl FnMut(u8, &mut Vec<u8>) -> std::result::Result<bool, &'static str>,
) -> Result<Vec<u8>> {
    let internal = |what: &str| {
        CodecError::corrupt(format!(
            "internal error rewriting the encoded stream: {what}"
        ))
    };
    if !stream.starts_with(&[0xFF, SOI]) {
        return Err(internal("no SOI"));
    }
    let mut out = Vec::with_capacity(stream.len() + after_soi.len());
    out.extend_from_slice(&[0xFF, SOI]);
    out.extend_from_slice(after_soi);
    let mut pos = 2;
    loop {
        let (marker, after) = next_marker(stream, pos).map_err(|_| internal("bad marker"))?;
        if marker == EOI {
            out.extend_from_slice(&[0xFF, EOI]);
            return Ok(out);
        }
        let (payload, next) =
            segment(stream, after, marker).map_err(|_| internal("bad segment"))?;
        let mut payload = payload.to_vec();
        if edit(marker, &mut payload).map_err(internal)? {
            out.extend_from_slice(&[0xFF, marker]);
            out.extend_from_slice(&((payload.len() + 2) as u16).to_be_bytes());
            out.extend_from_slice(&payload);
        }
        pos = next;
        if marker == SOS {
            let end = entropy_coded_end(stream, pos);
            out.extend_from_slice(&stream[pos..end]);
            pos = end;
        }
    }
}
