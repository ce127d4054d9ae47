//! What a source is to the pipeline: bytes read at an offset (the one IO seam on the input
//! side, which each binding fills: a file natively, a JavaScript callback in wasm), and an
//! image that yields its rows in order.

use std::io::{self, Read, Seek, SeekFrom};

use super::error::Result;

/// The input's bytes, read at any offset.
pub trait ReadAt {
    /// The input's length in bytes.
    fn size(&self) -> u64;
    /// Fills `buf` from `offset`; fewer bytes only at the end of the input (returns the count).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;
}

impl ReadAt for [u8] {
    fn size(&self) -> u64 {
        self.len() as u64
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(self.len());
        let n = buf.len().min(self.len() - start);
        buf[..n].copy_from_slice(&self[start..start + n]);
        Ok(n)
    }
}

impl ReadAt for Vec<u8> {
    fn size(&self) -> u64 {
        self.len() as u64
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.as_slice().read_at(offset, buf)
    }
}

/// A folder's files, opened by their path within it when they are needed (a neuroglancer
/// volume's `info` and chunk files): the IO seam for inputs that are folders of files.
pub trait Folder {
    /// The file at `path` ('/'-separated, relative to the folder), or None when there is none.
    fn open(&self, path: &str) -> io::Result<Option<Box<dyn ReadAt + '_>>>;
}

/// A part of an input (`length` bytes from `offset`) as an input of its own.
pub struct Within<'a> {
    pub input: &'a dyn ReadAt,
    pub offset: u64,
    pub length: u64,
}

impl ReadAt for Within<'_> {
    fn size(&self) -> u64 {
        self.length
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.length.saturating_sub(offset);
        let n = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
        match n {
            0 => Ok(0),
            n => {
                let at = self.offset.checked_add(offset).ok_or_else(|| io::Error::other("an offset past 2^64 bytes"))?;
                self.input.read_at(at, &mut buf[..n])
            }
        }
    }
}

/// Up to `n` bytes at `offset` (fewer at the end of the input).
pub fn read_bytes(input: &dyn ReadAt, offset: u64, n: usize) -> io::Result<Vec<u8>> {
    let mut out = vec![0; n];
    let mut got = 0;
    while got < n {
        let k = input.read_at(offset + got as u64, &mut out[got..])?;
        if k == 0 {
            break;
        }
        got += k;
    }
    out.truncate(got);
    Ok(out)
}

/// A [`ReadAt`] as a reader with a position (`std::io::Read + Seek`), for crates that read so.
pub struct Cursor<'a> {
    input: &'a dyn ReadAt,
    position: u64,
}

impl<'a> Cursor<'a> {
    pub fn new(input: &'a dyn ReadAt) -> Cursor<'a> {
        Cursor { input, position: 0 }
    }
}

impl Read for Cursor<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.input.read_at(self.position, buf)?;
        self.position += n as u64;
        Ok(n)
    }
}

impl Seek for Cursor<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let size = self.input.size();
        let target = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => size.checked_add_signed(d),
            SeekFrom::Current(d) => self.position.checked_add_signed(d),
        };
        self.position = target.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.position)
    }
}

/// A pixel size in micrometres and where it came from.
#[derive(Clone, Copy, Debug)]
pub struct PixelSize {
    pub x: f64,
    pub y: f64,
    pub source: &'static str,
}

/// A grid of tiles (or strips, or frames): rows × columns × planes.
#[derive(Clone, Copy, Debug)]
pub struct TileGrid {
    pub rows: u64,
    pub columns: u64,
    pub planes: u64,
    pub count: u64,
    /// what one is called in messages ("tile", "strip", "frame")
    pub kind: &'static str,
}

/// What a source says of its image before its rows are read.
#[derive(Clone, Debug, Default)]
pub struct ImageInfo {
    pub height: u32,
    pub width: u32,
    /// samples per pixel of the rows: 1 or 3, or any number when `planes`
    pub channels: usize,
    /// the format's name, for summaries ("png", "jpeg", "tiff")
    pub format: &'static str,
    /// the channels are not one colour image: a c axis of grayscale chunks
    pub planes: bool,
    /// the pixel size (µm) the file states, used unless the options give one
    pub pixel_size: Option<f64>,
    /// the summary's `source` member (what was read: format, page, pixel size)
    pub summary: Option<crate::ConfigValue>,
}

/// How reading the rows ended.
pub enum RowsEnd {
    /// Every row was delivered; warnings found while reading.
    Done(Vec<String>),
    /// The source must start again (e.g. a JPEG decoded in bands stopped part-way and will
    /// be decoded whole): everything written so far is discarded and the rows read again.
    Again,
}

/// An image that yields its rows top to bottom.
pub trait RowSource {
    fn info(&self) -> &ImageInfo;
    /// Warnings known before the rows are read.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
    /// Calls `sink(rows, n)` with every row in order, `n` rows of `width × channels` samples
    /// at a time (of luma when `to_gray`).
    fn read_rows(&mut self, to_gray: bool, sink: &mut dyn FnMut(&[u8], usize) -> Result<()>) -> Result<RowsEnd>;
    /// The rows were read a band at a time (false: decoded whole first).
    fn streamed(&self) -> bool {
        true
    }
    /// A 16-bit source's window mapped to 0–255.
    fn rescaled(&self) -> Option<(&'static str, super::options::Window)> {
        None
    }
    /// Bytes of the band of full-width rows the source holds while reading (its blocks'
    /// height × the width × its samples per pixel), where that grows with the width.
    fn band_bytes(&self) -> u64 {
        0
    }
}

/// The most a conversion from rows holds in full-width bands: the source's band and the
/// pyramid's (`pyramid::row_band_bytes`), well inside wasm's 4 GiB.
pub const MAX_BAND_BYTES: u64 = 2 << 30;

/// RGB → luma (ITU-R BT.601, JPEG's Y), rounded, as the npm package computes it.
pub fn luma(r: u8, g: u8, b: u8) -> u8 {
    (0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)).round().min(255.0) as u8
}

/// The planes of a stack (z, t) after its first, each opened as rows like the first.
pub trait StackPlanes<'a> {
    fn open(&self, at: super::stack::PlaneIndex) -> Result<Box<dyn RowSource + 'a>>;
}
