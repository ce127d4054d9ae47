//! PNG in, through the `png` crate: rows streamed (non-interlaced, any bit depth, palette
//! expanded), or, for an interlaced PNG, decoded whole first up to a bound. Alpha is
//! dropped (with a warning), 16-bit samples are mapped to 8 bits through a rescale window.

use std::io::BufReader;

use super::error::{ConvertError, Result};
use super::options::{Rescale, Window};
use super::source::{luma, read_bytes, Cursor, ImageInfo, ReadAt, RowSource, RowsEnd};

/// The largest PNG decoded whole (an interlaced one): 64 Mi pixels.
const MAX_WHOLE_PIXELS: u64 = 1 << 26;
/// Rows handed on at a time.
const BATCH: usize = 16;

fn color_type_name(c: png::ColorType) -> &'static str {
    match c {
        png::ColorType::Grayscale => "grayscale",
        png::ColorType::Rgb => "RGB",
        png::ColorType::Indexed => "palette",
        png::ColorType::GrayscaleAlpha => "grayscale+alpha",
        png::ColorType::Rgba => "RGBA",
    }
}

/// Called with each decoded row, its samples per pixel, and whether the last is alpha.
type RowFn<'f> = dyn FnMut(&[u8], usize, bool) -> Result<()> + 'f;

pub struct PngSource<'a> {
    input: &'a dyn ReadAt,
    file: String,
    info: ImageInfo,
    color_type: png::ColorType,
    sixteen: bool,
    interlaced: bool,
    has_trns: bool,
    window: Option<Window>,
}

/// The file's structure up to its image data, checked before the `png` crate reads it, with
/// the npm package's messages: an IHDR of at least 1 × 1, and chunks up to the first IDAT
/// that lie inside the file (so a truncated file is named as such, not as a decode error).
fn check_structure(input: &dyn ReadAt, file: &str) -> Result<()> {
    let size = input.size();
    let fail = |reason: String| ConvertError::input(format!("{file}: {reason}"));
    let read = |pos: u64, n: usize| -> Result<Vec<u8>> {
        let bytes = read_bytes(input, pos, n).map_err(|e| ConvertError::input(format!("cannot read {file}: {e}")))?;
        if bytes.len() < n {
            return Err(fail(format!("truncated PNG: a chunk at byte {pos} runs past the end of the file ({size} bytes)")));
        }
        Ok(bytes)
    };
    if size < 33 {
        return Err(fail("truncated PNG (no IHDR chunk)".into()));
    }
    let ihdr = read(16, 10)?;
    let width = u32::from_be_bytes([ihdr[0], ihdr[1], ihdr[2], ihdr[3]]);
    let height = u32::from_be_bytes([ihdr[4], ihdr[5], ihdr[6], ihdr[7]]);
    if width == 0 || height == 0 {
        return Err(fail(format!("the image is {width} × {height} pixels (width × height); it needs at least 1 × 1")));
    }
    if ![0, 2, 3, 4, 6].contains(&ihdr[9]) {
        return Err(fail(format!("invalid PNG colour type {}", ihdr[9])));
    }
    let mut palette = false;
    let mut at = 8u64;
    loop {
        let head = read(at, 8)?;
        let length = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        let kind: String = head[4..8].iter().map(|&b| char::from(b)).collect();
        if length > (1 << 31) - 1 || at + 12 + u64::from(length) > size {
            return Err(fail(format!("truncated PNG: chunk {kind} at byte {at} claims {length} bytes past the end of the file")));
        }
        match kind.as_str() {
            "IDAT" => break,
            "IEND" => return Err(fail("the PNG has no image data (no IDAT chunk)".into())),
            "PLTE" => palette = true,
            _ => {}
        }
        at += 12 + u64::from(length);
    }
    if ihdr[9] == 3 && !palette {
        return Err(fail("a palette PNG without a PLTE chunk".into()));
    }
    Ok(())
}

fn reader<'a>(input: &'a dyn ReadAt, file: &str) -> Result<png::Reader<BufReader<Cursor<'a>>>> {
    let mut decoder = png::Decoder::new(BufReader::with_capacity(1 << 20, Cursor::new(input)));
    decoder.set_transformations(png::Transformations::EXPAND);
    decoder.read_info().map_err(|e| png_error(file, &e, None))
}

fn png_error(file: &str, e: &png::DecodingError, rows: Option<(usize, u32)>) -> ConvertError {
    match (e, rows) {
        (png::DecodingError::IoError(io), Some((y, h))) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            ConvertError::input(format!("{file}: truncated PNG: the image data ends after {y} of {h} rows"))
        }
        (png::DecodingError::IoError(io), None) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            ConvertError::input(format!("{file}: truncated PNG (it ends before its image data)"))
        }
        (png::DecodingError::LimitsExceeded, _) => ConvertError::input(format!(
            "{file}: the PNG decoder's memory bound (64 MiB) is exceeded: the image's rows are too wide"
        )),
        (_, Some((y, h))) => ConvertError::input(format!("{file}: corrupt PNG image data at row {y} of {h} ({e})")),
        _ => ConvertError::input(format!("{file}: cannot decode PNG: {e}")),
    }
}

impl<'a> PngSource<'a> {
    /// Reads the header; `rescale` is the option as given (16-bit input needs it).
    pub fn open(input: &'a dyn ReadAt, file: &str, rescale: Option<Rescale>) -> Result<PngSource<'a>> {
        check_structure(input, file)?;
        let r = reader(input, file)?;
        let info = r.info();
        let (width, height) = (info.width, info.height);
        let color_type = info.color_type;
        let sixteen = info.bit_depth == png::BitDepth::Sixteen;
        let interlaced = info.interlaced;
        let has_trns = info.trns.is_some();
        drop(r);
        if sixteen && rescale.is_none() {
            return Err(ConvertError::input(format!(
                "{file} is a 16-bit {} PNG: the samples are uint16; the jpeg codec stores uint8 (8-bit) samples only: \
                 pass --rescale auto (map the image's own min–max to 0–255) or --rescale MIN:MAX",
                color_type_name(color_type)
            )));
        }
        if !sixteen && rescale.is_some() {
            return Err(ConvertError::argument(format!("rescale applies to 16-bit input; {file} is an 8-bit PNG")));
        }
        if interlaced && u64::from(width) * u64::from(height) > MAX_WHOLE_PIXELS {
            let pixels = u64::from(width) * u64::from(height);
            return Err(ConvertError::input(format!(
                "{file}: an interlaced PNG is read whole, and this one has {} megapixels (more than {} Mi, about {} GiB \
                 to hold): save it as a non-interlaced PNG (streamed a band of rows at a time), e.g. with libvips: \
                 vips copy in.png out.png[interlace=false]",
                (pixels as f64 / 1e6).round(),
                MAX_WHOLE_PIXELS >> 20,
                (pixels * 7).div_ceil(1 << 30)
            )));
        }
        let channels = match color_type {
            png::ColorType::Grayscale | png::ColorType::GrayscaleAlpha => 1,
            _ => 3,
        };
        let mut source = PngSource {
            input,
            file: file.to_string(),
            info: ImageInfo { height, width, channels, format: "png", ..Default::default() },
            color_type,
            sixteen,
            interlaced,
            has_trns,
            window: None,
        };
        source.window = match rescale {
            None => None,
            Some(Rescale::Window(w)) => Some(w),
            Some(Rescale::Auto) => {
                // a first pass over every row for the image's own range
                let (min, max) = source.sample_range()?;
                Some(Window::of_range(min, max))
            }
        };
        Ok(source)
    }

    /// Samples per pixel of the decoded (expanded) rows, and whether the last is alpha.
    fn layout(r: &png::Reader<BufReader<Cursor<'a>>>) -> (usize, bool) {
        match r.output_color_type().0 {
            png::ColorType::Grayscale => (1, false),
            png::ColorType::GrayscaleAlpha => (2, true),
            png::ColorType::Rgb => (3, false),
            _ => (4, true),
        }
    }

    fn sample_range(&self) -> Result<(u16, u16)> {
        let (mut min, mut max) = (u16::MAX, 0u16);
        self.each_row(&mut |row, samples, alpha| {
            let colour = if alpha { samples - 1 } else { samples };
            for (i, pair) in row.chunks_exact(2).enumerate() {
                if i % samples < colour {
                    let v = u16::from_be_bytes([pair[0], pair[1]]);
                    min = min.min(v);
                    max = max.max(v);
                }
            }
            Ok(())
        })?;
        Ok((min, max))
    }

    /// Every decoded row in order: `f(row, samples per pixel, last sample is alpha)`.
    fn each_row(&self, f: &mut RowFn) -> Result<()> {
        let mut r = reader(self.input, &self.file)?;
        let (samples, alpha) = Self::layout(&r);
        let height = self.info.height;
        if self.interlaced {
            let size = r.output_buffer_size().ok_or_else(|| ConvertError::input(format!("{}: the PNG is too large to decode whole", self.file)))?;
            let mut whole = vec![0u8; size];
            let frame = r.next_frame(&mut whole).map_err(|e| png_error(&self.file, &e, Some((0, height))))?;
            for row in whole.chunks_exact(frame.line_size).take(height as usize) {
                f(row, samples, alpha)?;
            }
            return Ok(());
        }
        let mut y = 0usize;
        loop {
            match r.next_row() {
                Ok(Some(row)) => {
                    f(row.data(), samples, alpha)?;
                    y += 1;
                }
                Ok(None) => break,
                Err(e) => return Err(png_error(&self.file, &e, Some((y, height)))),
            }
        }
        if y < height as usize {
            return Err(ConvertError::input(format!(
                "{}: truncated PNG: the image data ends after {y} of {height} rows",
                self.file
            )));
        }
        Ok(())
    }
}

impl RowSource for PngSource<'_> {
    fn info(&self) -> &ImageInfo {
        &self.info
    }

    fn streamed(&self) -> bool {
        !self.interlaced
    }

    fn rescaled(&self) -> Option<(&'static str, Window)> {
        self.window.map(|w| ("uint16", w))
    }

    fn read_rows(&mut self, to_gray: bool, sink: &mut dyn FnMut(&[u8], usize) -> Result<()>) -> Result<RowsEnd> {
        let width = self.info.width as usize;
        let out_channels = if to_gray { 1 } else { self.info.channels };
        let row_len = width * out_channels;
        let mut out = vec![0u8; BATCH * row_len];
        let mut rows = 0usize;
        let mut opaque = true;
        // alpha that the file has (not one the expansion made from a grey or RGB tRNS)
        let real_alpha = matches!(self.color_type, png::ColorType::GrayscaleAlpha | png::ColorType::Rgba)
            || (self.color_type == png::ColorType::Indexed && self.has_trns);
        let map = self.window.map(|Window { min, max }| {
            let scale = 255.0 / f64::from(max - min);
            move |v: u16| -> u8 {
                if v <= min {
                    0
                } else if v >= max {
                    255
                } else {
                    (f64::from(v - min) * scale).round() as u8
                }
            }
        });
        let sixteen = self.sixteen;
        let height = self.info.height as usize;
        let mut done = 0usize;
        let mut colour = vec![0u8; width * 4];
        self.each_row(&mut |row, samples, alpha| {
            // the row as 8-bit samples, alpha noted
            let row8: &[u8] = if sixteen {
                let map = map.as_ref().expect("a 16-bit PNG has a window");
                for (i, pair) in row.chunks_exact(2).enumerate().take(width * samples) {
                    let v = u16::from_be_bytes([pair[0], pair[1]]);
                    let is_alpha = alpha && i % samples == samples - 1;
                    if is_alpha && real_alpha && v != u16::MAX {
                        opaque = false;
                    }
                    colour[i] = if is_alpha { (v >> 8) as u8 } else { map(v) };
                }
                &colour[..width * samples]
            } else {
                if alpha && real_alpha && row[..width * samples].iter().skip(samples - 1).step_by(samples).any(|&a| a != 255) {
                    opaque = false;
                }
                &row[..width * samples]
            };
            let o = &mut out[rows * row_len..(rows + 1) * row_len];
            match (samples, out_channels) {
                (1, _) => o.copy_from_slice(row8),
                (2, _) => o.iter_mut().zip(row8.chunks_exact(2)).for_each(|(d, s)| *d = s[0]),
                (3, 3) => o.copy_from_slice(row8),
                (_, 3) => o.chunks_exact_mut(3).zip(row8.chunks_exact(samples)).for_each(|(d, s)| d.copy_from_slice(&s[..3])),
                (_, _) => o.iter_mut().zip(row8.chunks_exact(samples)).for_each(|(d, s)| *d = luma(s[0], s[1], s[2])),
            }
            rows += 1;
            done += 1;
            if rows == BATCH || done == height {
                sink(&out[..rows * row_len], rows)?;
                rows = 0;
            }
            Ok(())
        })?;
        let mut warnings = Vec::new();
        if real_alpha {
            warnings.push(format!(
                "{} has an alpha channel ({}); JPEG has none, so alpha is dropped{}",
                self.file,
                color_type_name(self.color_type),
                if opaque { " (every pixel was opaque)" } else { " — transparent pixels keep their colour values, not a background" }
            ));
        }
        Ok(RowsEnd::Done(warnings))
    }
}
