//! A JPEG file in: decoded a band of rows at a time by the core's row decoder (baseline and
//! extended sequential streams), so memory holds the compressed file and a band, never the
//! image; progressive streams, components in separate scans and streams the band decoder
//! stops at part-way are decoded whole. The colour rules are the codec's own: grayscale
//! stays grayscale, anything else is decoded to RGB from what the markers say it stores.

use super::error::{ConvertError, Result};
use super::source::{luma, read_bytes, ImageInfo, ReadAt, RowSource, RowsEnd, Within};
use crate::{ConfigValue, ErrorKind, JpegConfig, RowDecoder, Rows};

/// Rows handed on at a time from a whole decoded image.
const WHOLE_BAND_ROWS: usize = 64;

/// The frame header's precision, size and component count.
pub struct Frame {
    pub precision: u8,
    pub height: u16,
    pub width: u16,
    pub components: u8,
}

/// The frame header (SOFn) of the stream, stepping over the segments before it.
pub fn find_frame(input: &dyn ReadAt) -> Option<Frame> {
    let mut at = 2u64;
    loop {
        let head = read_bytes(input, at, 10).ok()?;
        if head.len() < 4 || head[0] != 0xff {
            return None;
        }
        let marker = head[1];
        if marker == 0xff {
            at += 1;
            continue;
        }
        let length = u64::from(u16::from_be_bytes([head[2], head[3]]));
        let is_sof = (0xc0..=0xcf).contains(&marker) && ![0xc4, 0xc8, 0xcc].contains(&marker);
        if is_sof && head.len() >= 10 {
            return Some(Frame {
                precision: head[4],
                height: u16::from_be_bytes([head[5], head[6]]),
                width: u16::from_be_bytes([head[7], head[8]]),
                components: head[9],
            });
        }
        if marker == 0xda {
            return None;
        }
        at += 2 + length;
    }
}

pub struct JpegSource<'a> {
    input: Within<'a>,
    file: String,
    pub(super) info: ImageInfo,
    config: JpegConfig,
    shape: Vec<u64>,
    whole: bool,
}

/// The largest image decoded whole (a progressive JPEG), and the most a whole decode may
/// hold with the file: WebAssembly's one piece and its whole memory, the same everywhere.
const MAX_WHOLE_IMAGE: u64 = 2 << 30;
const MAX_WHOLE_DECODE: u64 = 4 << 30;

impl<'a> JpegSource<'a> {
    pub fn open(input: &'a dyn ReadAt, file: &str) -> Result<JpegSource<'a>> {
        Self::open_within(Within { input, offset: 0, length: input.size() }, file)
    }

    /// The JPEG stream that is `input`'s part (e.g. inside a TIFF).
    pub fn open_within(input: Within<'a>, file: &str) -> Result<JpegSource<'a>> {
        let Some(frame) = find_frame(&input) else {
            return Err(ConvertError::input(format!("{file}: cannot find a JPEG frame header (truncated or not a JPEG)")));
        };
        if frame.precision != 8 {
            return Err(ConvertError::input(format!(
                "{file} is a {}-bit JPEG; the jpeg codec stores 8-bit (uint8) samples only",
                frame.precision
            )));
        }
        if frame.components != 1 && frame.components != 3 {
            return Err(ConvertError::input(format!(
                "{file} has {} colour components (CMYK?); only grayscale and colour JPEGs are supported",
                frame.components
            )));
        }
        if frame.width == 0 || frame.height == 0 {
            return Err(ConvertError::input(format!(
                "{file}: the image is {} × {} pixels (width × height); it needs at least 1 × 1",
                frame.width, frame.height
            )));
        }
        let gray = frame.components == 1;
        let config = JpegConfig::parse(&ConfigValue::Object(vec![
            ("quality".into(), ConfigValue::Number(95.0)),
            ("encoded_color_space".into(), ConfigValue::String(if gray { "grayscale" } else { "rgb" }.into())),
        ]))
        .expect("a valid configuration");
        let (h, w) = (u64::from(frame.height), u64::from(frame.width));
        Ok(JpegSource {
            input,
            file: file.to_string(),
            info: ImageInfo { height: frame.height.into(), width: frame.width.into(), channels: frame.components.into(), format: "jpeg", ..Default::default() },
            config,
            shape: if gray { vec![h, w] } else { vec![h, w, 3] },
            whole: false,
        })
    }

    fn stream(&self) -> Result<Vec<u8>> {
        let size = usize::try_from(self.input.size())
            .map_err(|_| ConvertError::input(format!("{}: the file is larger than this machine's memory", self.file)))?;
        let bytes = read_bytes(&self.input, 0, size).map_err(|e| ConvertError::input(format!("cannot read {}: {e}", self.file)))?;
        if bytes.len() < size {
            return Err(ConvertError::input(format!(
                "{}: the file got shorter while it was read ({} of {size} bytes)",
                self.file,
                bytes.len()
            )));
        }
        Ok(bytes)
    }

    /// Refuses, before anything is allocated for it, a whole decode of more than the
    /// converter allows on any platform (so that npm and Python refuse the same files):
    /// the image at most 2 GiB, `bytes` (what the decode holds) and the file 4 GiB in all.
    fn check_whole_fits(&self, reason: &str, bytes: u64) -> Result<()> {
        let samples: u64 = self.shape.iter().product();
        let size = self.input.size();
        if samples <= MAX_WHOLE_IMAGE && bytes.saturating_add(size) <= MAX_WHOLE_DECODE {
            return Ok(());
        }
        let what = match reason.contains("progressive") {
            true => "is a progressive JPEG, which is decoded whole".to_string(),
            false => format!("is decoded whole ({reason})"),
        };
        let gb = |n: u64| format!("{:.2} GB", n as f64 / 1e9);
        Err(ConvertError::input(format!(
            "{} {what}: its {} × {} (height × width) image needs {} of memory beside the {} file, more than the \
             converter takes for a whole decode (4 GiB in all, the image at most 2 GiB). Baseline JPEGs are converted \
             a band of rows at a time: make it one first, e.g. losslessly with libjpeg's jpegtran \
             (jpegtran -copy all {} > baseline.jpg)",
            self.file,
            self.info.height,
            self.info.width,
            gb(bytes),
            gb(size),
            self.file
        )))
    }

    fn decode_error(&self, e: crate::CodecError) -> ConvertError {
        ConvertError::input(format!("{}: cannot decode JPEG: {e}", self.file))
    }
}

/// Rows to `sink`, converted to luma when `to_gray` (3-channel rows).
fn deliver(rows: &[u8], row_bytes: usize, to_gray: bool, gray: &mut Vec<u8>, sink: &mut dyn FnMut(&[u8], usize) -> Result<()>) -> Result<()> {
    let n = rows.len() / row_bytes;
    if !to_gray {
        return sink(rows, n);
    }
    gray.clear();
    gray.extend(rows.chunks_exact(3).map(|p| luma(p[0], p[1], p[2])));
    sink(gray, n)
}

impl RowSource for JpegSource<'_> {
    fn info(&self) -> &ImageInfo {
        &self.info
    }

    fn streamed(&self) -> bool {
        !self.whole
    }

    fn read_rows(&mut self, to_gray: bool, sink: &mut dyn FnMut(&[u8], usize) -> Result<()>) -> Result<RowsEnd> {
        let stream = self.stream()?;
        let row_bytes = self.info.width as usize * self.info.channels;
        let mut gray = Vec::new();
        if !self.whole {
            match RowDecoder::new(&self.config, stream, &self.shape).map_err(|e| self.decode_error(e))? {
                Rows::Bands(mut decoder) => loop {
                    match decoder.next_rows() {
                        Ok(Some(band)) => deliver(band, row_bytes, to_gray, &mut gray, sink)?,
                        Ok(None) => return Ok(RowsEnd::Done(Vec::new())),
                        // stopped part-way (data the full decoder may read otherwise): start again, whole
                        Err(e) if e.kind() == ErrorKind::NeedsFullDecoder => {
                            self.whole = true;
                            return Ok(RowsEnd::Again);
                        }
                        Err(e) => return Err(self.decode_error(e)),
                    }
                },
                Rows::Whole { reason, bytes } => {
                    self.whole = true;
                    self.check_whole_fits(&reason, bytes)?;
                }
            }
            return self.read_rows(to_gray, sink);
        }
        let samples: u64 = self.shape.iter().product();
        self.check_whole_fits("its data stops the band decoder part-way", samples)?;
        let data = crate::decode(&self.config, &stream, &self.shape).map_err(|e| self.decode_error(e))?;
        drop(stream);
        for band in data.chunks(WHOLE_BAND_ROWS * row_bytes) {
            deliver(band, row_bytes, to_gray, &mut gray, sink)?;
        }
        Ok(RowsEnd::Done(Vec::new()))
    }
}
