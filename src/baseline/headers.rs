//! The markers before the scan, read again for decoding: quantisation and Huffman
//! tables, restart interval, frame and scan headers. Strict: anything zune-jpeg might
//! read differently (fill bytes, standalone markers, MJPEG's implied tables, extended
//! XMP, unusual APP2/APP14, DNL, a second frame, a scan that is not one interleaved scan
//! of every component in frame order with Ss = 0, Se = 63, Ah = Al = 0) defers.

use zune_jpeg::__kernels::{HuffmanTable, UN_ZIGZAG};

use super::Defer;

#[derive(Clone, Copy)]
pub(crate) struct Component {
    pub id: u8,
    pub h: usize,
    pub v: usize,
    pub tq: usize,
    pub td: usize,
    pub ta: usize,
}

pub(crate) struct Frame {
    pub width: usize,
    pub height: usize,
    pub components: Vec<Component>,
    pub qt: [Option<[i32; 64]>; 4],
    pub dc: [Option<HuffmanTable>; 4],
    pub ac: [Option<HuffmanTable>; 4],
    /// zune's `todo` at the start of the scan: the restart interval if a DRI was seen,
    /// else zune's initial 0x7fff_ffff.
    pub todo: usize,
    pub restart_interval: usize,
    /// Index of the first entropy-coded byte.
    pub scan_start: usize,
}

fn u16_at(b: &[u8], i: usize) -> Result<usize, Defer> {
    match (b.get(i), b.get(i + 1)) {
        (Some(&h), Some(&l)) => Ok(usize::from(h) << 8 | usize::from(l)),
        _ => Err(Defer::HEADERS),
    }
}

pub(crate) fn parse(stream: &[u8]) -> Result<Frame, Defer> {
    if stream.get(..2) != Some(&[0xFF, 0xD8][..]) {
        return Err(Defer::HEADERS);
    }
    let mut frame = Frame {
        width: 0,
        height: 0,
        components: Vec::new(),
        qt: [None; 4],
        dc: [None, None, None, None],
        ac: [None, None, None, None],
        todo: 0x7fff_ffff,
        restart_interval: 0,
        scan_start: 0,
    };
    let mut seen_sof = false;
    let mut pos = 2usize;
    loop {
        if stream.get(pos) != Some(&0xFF) {
            return Err(Defer::HEADERS);
        }
        let marker = *stream.get(pos + 1).ok_or(Defer::HEADERS)?;
        let len = u16_at(stream, pos + 2)?;
        if len < 2 {
            return Err(Defer::HEADERS);
        }
        let end = pos.checked_add(2 + len).ok_or(Defer::HEADERS)?;
        let payload = stream.get(pos + 4..end).ok_or(Defer::HEADERS)?;
        match marker {
            0xC0 | 0xC1 => {
                if seen_sof {
                    return Err(Defer::HEADERS);
                }
                seen_sof = true;
                parse_sof(payload, &mut frame)?;
            }
            0xC4 => parse_dht(payload, &mut frame)?,
            0xDB => parse_dqt(payload, &mut frame)?,
            0xDD => {
                if len != 4 {
                    return Err(Defer::HEADERS);
                }
                frame.restart_interval = u16_at(payload, 0)?;
                frame.todo = frame.restart_interval;
            }
            0xDA => {
                if !seen_sof {
                    return Err(Defer::HEADERS);
                }
                parse_sos(payload, &mut frame)?;
                frame.scan_start = end;
                return Ok(frame);
            }
            0xE0 if payload.starts_with(b"AVI1\0") => return Err(Defer("MJPEG (AVI1) stream")),
            0xE1 if payload.starts_with(b"http://ns.adobe.com/xmp/extension/") => {
                return Err(Defer("extended XMP"))
            }
            0xE2 if !(payload.len() > 14 && payload.starts_with(b"ICC_PROFILE\0")) => {
                return Err(Defer("APP2 other than an ICC profile"))
            }
            0xEE => {
                if payload.len() < 5 {
                    return Err(Defer::HEADERS);
                }
                if payload.starts_with(b"Adobe") && (payload.len() < 12 || payload[11] > 1) {
                    return Err(Defer("Adobe APP14 short or with transform other than 0/1"));
                }
            }
            0xE0..=0xEF | 0xFE => {}
            _ => return Err(Defer("marker not handled by the baseline decoder")),
        }
        pos = end;
    }
}

fn parse_sof(p: &[u8], frame: &mut Frame) -> Result<(), Defer> {
    if p.first() != Some(&8) {
        return Err(Defer("precision other than 8"));
    }
    frame.height = u16_at(p, 1)?;
    frame.width = u16_at(p, 3)?;
    let nf = usize::from(*p.get(5).ok_or(Defer::HEADERS)?);
    if !(nf == 1 || nf == 3) || p.len() != 6 + 3 * nf || frame.width == 0 || frame.height == 0 {
        return Err(Defer::HEADERS);
    }
    for i in 0..nf {
        let c = &p[6 + 3 * i..9 + 3 * i];
        let (id, h, v, tq) = (
            c[0],
            usize::from(c[1] >> 4),
            usize::from(c[1] & 15),
            usize::from(c[2]),
        );
        if tq > 3 || frame.components.iter().any(|o| o.id == id) {
            return Err(Defer::HEADERS);
        }
        frame.components.push(Component {
            id,
            h,
            v,
            tq,
            td: 0,
            ta: 0,
        });
    }
    Ok(())
}

fn parse_dht(p: &[u8], frame: &mut Frame) -> Result<(), Defer> {
    let mut i = 0;
    while i < p.len() {
        let info = p[i];
        let (class, index) = (info >> 4, usize::from(info & 15));
        if class > 1 || index > 3 {
            return Err(Defer("DHT class or index"));
        }
        let mut counts = [0u8; 17];
        counts[1..].copy_from_slice(p.get(i + 1..i + 17).ok_or(Defer::HEADERS)?);
        let total: usize = counts.iter().map(|&c| usize::from(c)).sum();
        if total > 256 {
            return Err(Defer("DHT with more than 256 symbols"));
        }
        let mut symbols = [0u8; 256];
        symbols[..total].copy_from_slice(p.get(i + 17..i + 17 + total).ok_or(Defer::HEADERS)?);
        // without zune's AC fast table, which the baseline decoder does not read
        let table = HuffmanTable::new_without_ac_lookup(&counts, symbols, class == 0)
            .map_err(|_| Defer("Huffman table zune rejects"))?;
        if class == 0 {
            frame.dc[index] = Some(table);
        } else {
            frame.ac[index] = Some(table);
        }
        i += 17 + total;
    }
    Ok(())
}

fn parse_dqt(p: &[u8], frame: &mut Frame) -> Result<(), Defer> {
    let mut i = 0;
    while i < p.len() {
        let info = p[i];
        let (precision, index) = (usize::from(info >> 4), usize::from(info & 15));
        if precision > 1 || index > 3 {
            return Err(Defer("DQT precision or index"));
        }
        let bytes = p
            .get(i + 1..i + 1 + 64 * (precision + 1))
            .ok_or(Defer::HEADERS)?;
        let mut table = [0i32; 64];
        for (z, &natural) in UN_ZIGZAG.iter().take(64).enumerate() {
            let value = if precision == 0 {
                i32::from(bytes[z])
            } else {
                i32::from(u16::from_be_bytes([bytes[2 * z], bytes[2 * z + 1]]))
            };
            *table.get_mut(natural).ok_or(Defer::INTERNAL)? = value;
        }
        frame.qt[index] = Some(table);
        i += 1 + 64 * (precision + 1);
    }
    Ok(())
}

fn parse_sos(p: &[u8], frame: &mut Frame) -> Result<(), Defer> {
    let ns = usize::from(*p.first().ok_or(Defer::HEADERS)?);
    if ns != frame.components.len() || p.len() != 1 + 2 * ns + 3 {
        return Err(Defer("scan does not hold every component"));
    }
    for (i, c) in frame.components.iter_mut().enumerate() {
        let (id, tables) = (p[1 + 2 * i], p[2 + 2 * i]);
        if id != c.id {
            return Err(Defer("scan components not in frame order"));
        }
        c.td = usize::from(tables >> 4);
        c.ta = usize::from(tables & 15);
        if c.td > 3 || c.ta > 3 {
            return Err(Defer("Huffman table selector"));
        }
    }
    if p[1 + 2 * ns..] != [0, 63, 0] {
        return Err(Defer(
            "spectral selection or approximation of a sequential scan",
        ));
    }
    Ok(())
}
