//! A TIFF tile's or strip's samples from its stored bytes: uncompressed, LZW (`weezl`),
//! Deflate (`miniz_oxide`) or PackBits; the horizontal predictor undone; 16-bit samples in
//! this machine's order; subsampled YCbCr (TIFF 6.0 §21's data units) turned into RGB the
//! way libtiff's RGBA interface does. Every output is bounded by the block's expected size,
//! whatever the compressed data claims.

/// The lossless compressions whose blocks are decoded here.
pub fn decoded_compression(c: u16) -> Option<&'static str> {
    match c {
        1 => Some("none"),
        5 => Some("LZW"),
        8 | 32946 => Some("Deflate"),
        32773 => Some("PackBits"),
        _ => None,
    }
}

/// The JPEG 2000 compressions whose blocks are decoded here (Aperio's 33003, YCbCr
/// codestreams that may subsample chroma, is not).
pub fn j2k_compression(c: u16) -> Option<&'static str> {
    match c {
        34712 => Some("JPEG 2000"),
        33005 => Some("JPEG 2000 (Aperio, RGB)"),
        _ => None,
    }
}

/// A JPEG 2000 block (a codestream or a JP2 file) decoded by `hayro-jpeg2000` into a block
/// of `width × rows` pixels of `samples` samples of `bits` (8 or 16) bits, interleaved; a
/// smaller codestream (an edge strip) at its top left. The codestream's size and
/// components are checked before anything is decoded.
pub fn decode_j2k(raw: &[u8], width: usize, rows: usize, samples: usize, bits: u64) -> Result<Vec<u16>, String> {
    const CODESTREAM: &[u8] = &[0xff, 0x4f, 0xff, 0x51];
    const JP2: &[u8] = &[0x00, 0x00, 0x00, 0x0c, 0x6a, 0x50, 0x20, 0x20];
    if !raw.starts_with(CODESTREAM) && !raw.starts_with(JP2) {
        return Err("it is not a JPEG 2000 codestream (no SOC and SIZ markers, nor a JP2 signature, at its start)".into());
    }
    let settings = hayro_jpeg2000::DecodeSettings { resolve_palette_indices: false, ..Default::default() };
    let image = hayro_jpeg2000::Image::new(raw, &settings).map_err(|e| format!("the decoder refused it ({e})"))?;
    let (w, h) = (image.width() as usize, image.height() as usize);
    if w == 0 || h == 0 {
        return Err("it decodes to no image".into());
    }
    if w > width || h > rows {
        return Err(format!("its codestream is {w} × {h} pixels, larger than the page's {width} × {rows} blocks"));
    }
    let mut context = hayro_jpeg2000::DecoderContext::default();
    let decoded = image.decode(&mut context).map_err(|e| format!("the decoder could not decode it ({e})"))?;
    let components = decoded.components();
    if components.len() != samples {
        return Err(format!("its codestream has {} component(s); the page has {samples} sample(s) per pixel", components.len()));
    }
    if let Some(c) = components.iter().find(|c| u64::from(c.bit_depth()) != bits) {
        return Err(format!("its codestream holds {}-bit samples; the page says {bits}-bit", c.bit_depth()));
    }
    let max = ((1u32 << bits) - 1) as f32;
    let mut out = vec![0u16; width * rows * samples];
    for (c, component) in components.iter().enumerate() {
        let values = component.samples();
        if values.len() < w * h {
            return Err("it decodes to fewer samples than its size".into());
        }
        for y in 0..h {
            for x in 0..w {
                out[(y * width + x) * samples + c] = values[y * w + x].round().clamp(0.0, max) as u16;
            }
        }
    }
    Ok(out)
}

/// Decompresses `raw` into at most `limit` bytes (fewer if the data ends first).
pub fn decompress(compression: u16, raw: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    match compression {
        1 => Ok(raw[..raw.len().min(limit)].to_vec()),
        5 => lzw(raw, limit),
        8 | 32946 => deflate(raw, limit),
        32773 => Ok(packbits(raw, limit)),
        other => Err(format!("compression {other} is not decoded here")),
    }
}

fn lzw(raw: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let mut decoder = weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
    let mut out = vec![0u8; limit];
    let (mut read, mut written) = (0, 0);
    while written < limit {
        let r = decoder.decode_bytes(&raw[read..], &mut out[written..]);
        read += r.consumed_in;
        written += r.consumed_out;
        match r.status {
            Ok(weezl::LzwStatus::Ok) => {}
            Ok(weezl::LzwStatus::Done | weezl::LzwStatus::NoProgress) => break,
            // (data after the block's samples may be corrupt without harm)
            Err(e) if written == 0 => return Err(format!("LZW: {e}")),
            Err(_) => break,
        }
    }
    out.truncate(written);
    Ok(out)
}

fn deflate(raw: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    match miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(raw, limit) {
        Ok(out) => Ok(out),
        // (the block's samples are all there: what follows them does not matter)
        Err(e) if e.status == miniz_oxide::inflate::TINFLStatus::HasMoreOutput || e.output.len() >= limit => Ok(e.output),
        Err(e) => Err(format!("Deflate: {e}")),
    }
}

fn packbits(raw: &[u8], limit: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(limit.min(raw.len().saturating_mul(128)));
    let mut i = 0;
    while i < raw.len() && out.len() < limit {
        let n = raw[i] as i8;
        i += 1;
        if n >= 0 {
            let k = (n as usize + 1).min(raw.len() - i).min(limit - out.len());
            out.extend_from_slice(&raw[i..i + k]);
            i += n as usize + 1;
        } else if n != -128 {
            let Some(&b) = raw.get(i) else { break };
            let k = (1 - n as isize) as usize;
            out.resize(out.len() + k.min(limit - out.len()), b);
            i += 1;
        }
    }
    out
}

/// Undoes horizontal differencing (TIFF 6.0 §14) on 8-bit samples, row by row.
pub fn undo_predictor8(samples: &mut [u8], width: usize, per_pixel: usize) {
    let row = width * per_pixel;
    for line in samples.chunks_mut(row) {
        for k in per_pixel..line.len() {
            line[k] = line[k].wrapping_add(line[k - per_pixel]);
        }
    }
}

/// 16-bit samples from the file's bytes (in its byte order), the predictor undone.
pub fn samples16(bytes: &[u8], little_endian: bool, predictor: bool, width: usize, per_pixel: usize) -> Vec<u16> {
    let mut out: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|b| if little_endian { u16::from_le_bytes([b[0], b[1]]) } else { u16::from_be_bytes([b[0], b[1]]) })
        .collect();
    if predictor {
        for line in out.chunks_mut(width * per_pixel) {
            for k in per_pixel..line.len() {
                line[k] = line[k].wrapping_add(line[k - per_pixel]);
            }
        }
    }
    out
}

/// libtiff's YCbCr → RGB conversion (tif_color.c): the same fixed-point tables, from the
/// page's YCbCrCoefficients and ReferenceBlackWhite (or libtiff's defaults).
pub struct YcbcrToRgb {
    y: [i32; 256],
    cr_r: [i32; 256],
    cb_b: [i32; 256],
    cr_g: [i32; 256],
    cb_g: [i32; 256],
}

const SHIFT: i32 = 16;
const ONE_HALF: i32 = 1 << (SHIFT - 1);

fn fix(x: f32) -> i32 {
    (x * (1i64 << SHIFT) as f32 + 0.5) as i32
}

fn code_to_value(c: i32, black: f32, white: f32, range: f32) -> f32 {
    let span = if white - black != 0.0 { white - black } else { 1.0 };
    ((c - black as i32) as f32 * range) / span
}

impl YcbcrToRgb {
    pub fn new(coefficients: Option<[f64; 3]>, reference: Option<[f64; 6]>) -> YcbcrToRgb {
        let [red, green, blue] = coefficients.map_or([0.299f32, 0.587, 0.114], |c| c.map(|v| v as f32));
        let rbw = reference.map_or([0.0f32, 255.0, 128.0, 255.0, 128.0, 255.0], |r| r.map(|v| v as f32));
        let f1 = 2.0 - 2.0 * red;
        let d1 = fix(f1.clamp(0.0, 2.0));
        let d2 = -fix((red * f1 / green).clamp(0.0, 2.0));
        let f3 = 2.0 - 2.0 * blue;
        let d3 = fix(f3.clamp(0.0, 2.0));
        let d4 = -fix((blue * f3 / green).clamp(0.0, 2.0));
        let mut t = YcbcrToRgb { y: [0; 256], cr_r: [0; 256], cb_b: [0; 256], cr_g: [0; 256], cb_g: [0; 256] };
        for i in 0..256 {
            let x = i as i32 - 128;
            let cr = code_to_value(x, rbw[4] - 128.0, rbw[5] - 128.0, 127.0).clamp(-128.0 * 32.0, 128.0 * 32.0) as i32;
            let cb = code_to_value(x, rbw[2] - 128.0, rbw[3] - 128.0, 127.0).clamp(-128.0 * 32.0, 128.0 * 32.0) as i32;
            t.cr_r[i] = (d1.wrapping_mul(cr).wrapping_add(ONE_HALF)) >> SHIFT;
            t.cb_b[i] = (d3.wrapping_mul(cb).wrapping_add(ONE_HALF)) >> SHIFT;
            t.cr_g[i] = d2.wrapping_mul(cr);
            t.cb_g[i] = d4.wrapping_mul(cb).wrapping_add(ONE_HALF);
            t.y[i] = code_to_value(x + 128, rbw[0], rbw[1], 255.0).clamp(-128.0 * 32.0, 128.0 * 32.0) as i32;
        }
        t
    }

    pub fn rgb(&self, y: u8, cb: u8, cr: u8) -> [u8; 3] {
        let (y, cb, cr) = (self.y[y as usize], cb as usize, cr as usize);
        let clamp = |v: i32| v.clamp(0, 255) as u8;
        [
            clamp(y + self.cr_r[cr]),
            clamp(y + (self.cb_g[cb].wrapping_add(self.cr_g[cr]) >> SHIFT)),
            clamp(y + self.cb_b[cb]),
        ]
    }

    /// A block of `width × rows` pixels from its data units (`h × v` luma samples, then Cb
    /// and Cr, for each unit in raster order) → interleaved RGB; missing units are black.
    pub fn unpack(&self, units: &[u8], width: usize, rows: usize, h: usize, v: usize) -> Vec<u8> {
        let per_unit = h * v + 2;
        let across = width.div_ceil(h);
        let mut out = vec![0u8; width * rows * 3];
        for (u, unit) in units.chunks_exact(per_unit).enumerate() {
            let (uy, ux) = (u / across, u % across);
            if uy * v >= rows {
                break;
            }
            let (cb, cr) = (unit[h * v], unit[h * v + 1]);
            for dy in 0..v {
                let y = uy * v + dy;
                if y >= rows {
                    break;
                }
                for dx in 0..h {
                    let x = ux * h + dx;
                    if x < width {
                        let at = (y * width + x) * 3;
                        out[at..at + 3].copy_from_slice(&self.rgb(unit[dy * h + dx], cb, cr));
                    }
                }
            }
        }
        out
    }
}

/// The bytes a block of subsampled YCbCr takes: its data units.
pub fn ycbcr_block_bytes(width: usize, rows: usize, h: usize, v: usize) -> usize {
    width.div_ceil(h) * rows.div_ceil(v) * (h * v + 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packbits_runs_and_literals() {
        // TIFF 6.0's example
        let raw = [0xfe, 0xaa, 0x02, 0x80, 0x00, 0x2a, 0xfd, 0xaa, 0x03, 0x80, 0x00, 0x2a, 0x22, 0xf7, 0xaa];
        let want = [0xaa, 0xaa, 0xaa, 0x80, 0x00, 0x2a, 0xaa, 0xaa, 0xaa, 0xaa, 0x80, 0x00, 0x2a, 0x22, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa];
        assert_eq!(packbits(&raw, 1000), want);
        assert_eq!(packbits(&raw, 5).len(), 5);
        assert_eq!(packbits(&[0x7f], 100), Vec::<u8>::new());
    }

    #[test]
    fn lzw_and_deflate_are_bounded() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 7) as u8).collect();
        let packed = weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8).encode(&data).unwrap();
        assert_eq!(lzw(&packed, 10_000).unwrap(), data);
        assert_eq!(lzw(&packed, 100).unwrap(), data[..100]);
        let z = miniz_oxide::deflate::compress_to_vec_zlib(&data, 6);
        assert_eq!(deflate(&z, 10_000).unwrap(), data);
        assert_eq!(deflate(&z, 64).unwrap(), data[..64]);
        assert!(deflate(&[1, 2, 3], 10).is_err());
    }

    #[test]
    fn ycbcr_grey_stays_grey_and_units_unpack() {
        let t = YcbcrToRgb::new(None, None);
        assert_eq!(t.rgb(200, 128, 128), [200, 200, 200]);
        assert_eq!(t.rgb(76, 85, 255), [254, 0, 0]);
        // one 2×2 unit, 3 × 3 pixels wide: 2 units across, 2 down
        let units = [10, 20, 30, 40, 128, 128, 50, 60, 70, 80, 128, 128, 1, 2, 3, 4, 128, 128, 5, 6, 7, 8, 128, 128];
        let rgb = t.unpack(&units, 3, 3, 2, 2);
        let grey: Vec<u8> = rgb.chunks(3).map(|p| p[0]).collect();
        assert_eq!(grey, [10, 20, 50, 30, 40, 70, 1, 2, 5]);
    }
}
