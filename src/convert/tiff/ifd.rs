//! A TIFF's (or BigTIFF's, either byte order) pages read in place: the main IFD chain and
//! each page's SubIFDs, with the tags the converter needs, and every tile's or strip's
//! location. Never the whole file in memory.
//!
//! The IFDs are walked here rather than by the `tiff` crate: its `Decoder::new` interprets
//! the first IFD as an image and refuses files the converter must read (no Photometric tag,
//! old-style JPEG, subsampled YCbCr outside JPEG, Aperio's compressions), and it hands out
//! no raw tile bytes. Every value a tag claims is checked against the file's size (and a
//! bound of its own) before anything is allocated for it; loops of IFD offsets are refused.

use super::super::error::{ConvertError, Result};
use super::super::source::{read_bytes, ReadAt, TileGrid};

/// The most IFDs read (pages and SubIFDs together).
pub const MAX_PAGES: usize = 100_000;
/// The most bytes one tag's values may take (a tile-offset list of 16 Mi BigTIFF offsets).
const MAX_TAG_BYTES: u64 = 128 << 20;

pub const TAG_SUBFILE_TYPE: u16 = 254;
const TAG_WIDTH: u16 = 256;
const TAG_HEIGHT: u16 = 257;
const TAG_BITS: u16 = 258;
const TAG_COMPRESSION: u16 = 259;
const TAG_PHOTOMETRIC: u16 = 262;
const TAG_DESCRIPTION: u16 = 270;
const TAG_STRIP_OFFSETS: u16 = 273;
const TAG_SAMPLES: u16 = 277;
const TAG_ROWS_PER_STRIP: u16 = 278;
const TAG_STRIP_BYTES: u16 = 279;
const TAG_X_RESOLUTION: u16 = 282;
const TAG_Y_RESOLUTION: u16 = 283;
const TAG_PLANAR: u16 = 284;
const TAG_PREDICTOR: u16 = 317;
const TAG_TILE_WIDTH: u16 = 322;
const TAG_TILE_HEIGHT: u16 = 323;
const TAG_TILE_OFFSETS: u16 = 324;
const TAG_TILE_BYTES: u16 = 325;
const TAG_SUB_IFDS: u16 = 330;
const TAG_SAMPLE_FORMAT: u16 = 339;
const TAG_JPEG_TABLES: u16 = 347;
/// old-style JPEG (compression 6): where a whole JPEG stream of the image is, and its length
const TAG_JPEG_INTERCHANGE: u16 = 513;
const TAG_JPEG_INTERCHANGE_LENGTH: u16 = 514;
const TAG_YCBCR_COEFFICIENTS: u16 = 529;
const TAG_YCBCR_SUBSAMPLING: u16 = 530;
const TAG_REFERENCE_BLACK_WHITE: u16 = 532;

/// Names of the compressions a TIFF may name, for messages.
pub fn compression_name(c: u16) -> String {
    match c {
        1 => "none".into(),
        5 => "LZW".into(),
        6 => "old-style JPEG".into(),
        7 => "JPEG".into(),
        8 | 32946 => "Deflate".into(),
        32773 => "PackBits".into(),
        33003 => "Aperio JPEG 2000 (YCbCr)".into(),
        33005 => "Aperio JPEG 2000 (RGB)".into(),
        34712 => "JPEG 2000".into(),
        50000 => "Zstandard".into(),
        50001 => "WebP".into(),
        other => format!("compression {other}"),
    }
}

pub fn photometric_name(p: Option<u16>) -> String {
    match p {
        Some(0) => "min-is-white".into(),
        Some(1) => "min-is-black".into(),
        Some(2) => "RGB".into(),
        Some(3) => "palette".into(),
        Some(4) => "mask".into(),
        Some(5) => "separated (CMYK)".into(),
        Some(6) => "YCbCr".into(),
        Some(8) => "CIELab".into(),
        Some(other) => other.to_string(),
        None => "undefined".into(),
    }
}

/// One IFD: an image (a page or a SubIFD).
#[derive(Clone, Debug)]
pub struct Page {
    /// "page 3", "page 0 SubIFD 1", or a joined description
    pub label: String,
    pub index: usize,
    pub width: u64,
    pub height: u64,
    pub bits_per_sample: Vec<u64>,
    pub samples_per_pixel: u64,
    pub sample_format: u64,
    pub compression: u16,
    pub predictor: u64,
    pub photometric: Option<u16>,
    pub planar: u64,
    pub subfile_type: u64,
    /// the first ImageDescription (a second one, as tifffile may add, is ignored as libtiff does)
    pub description: Option<String>,
    /// XResolution and YResolution: pixels per unit (an ImageJ file's `unit=`)
    pub resolution: Option<(f64, f64)>,
    pub tiled: bool,
    pub tile_width: u64,
    pub tile_height: u64,
    pub offsets: Vec<u64>,
    pub byte_counts: Vec<u64>,
    pub jpeg_tables: Option<Vec<u8>>,
    /// old-style JPEG's JPEGInterchangeFormat and its length (0: not given)
    pub jpeg_interchange: Option<(u64, u64)>,
    pub ycbcr_subsampling: (u64, u64),
    pub ycbcr_coefficients: Option<[f64; 3]>,
    pub reference_black_white: Option<[f64; 6]>,
    pub sub_ifds: Vec<Page>,
    next: u64,
    sub_ifd_offsets: Vec<u64>,
}

/// An opened TIFF: its pages in order, each with its SubIFDs.
pub struct Tiff<'a> {
    pub input: &'a dyn ReadAt,
    pub file: String,
    pub size: u64,
    pub big: bool,
    pub little_endian: bool,
    pub pages: Vec<Page>,
}

struct Entry {
    tag: u16,
    kind: u16,
    count: u64,
    /// the value field as stored (4 or 8 bytes): the values, or their offset
    field: [u8; 8],
}

struct Reader<'a> {
    input: &'a dyn ReadAt,
    file: &'a str,
    size: u64,
    big: bool,
    le: bool,
}

fn type_size(kind: u16) -> Option<u64> {
    Some(match kind {
        1 | 2 | 6 | 7 => 1,
        3 | 8 => 2,
        4 | 9 | 11 | 13 => 4,
        5 | 10 | 12 | 16 | 17 | 18 => 8,
        _ => return None,
    })
}

impl Reader<'_> {
    /// `length` bytes at `offset`, or an error naming `what` if they are not all in the file.
    fn read(&self, offset: u64, length: u64, what: &str) -> Result<Vec<u8>> {
        if offset.checked_add(length).is_none_or(|end| end > self.size) {
            return Err(ConvertError::input(format!(
                "{}: {what} at byte {offset} ({length} bytes) lies past the end of the file ({} bytes): truncated or corrupt",
                self.file, self.size
            )));
        }
        let bytes = read_bytes(self.input, offset, length as usize)
            .map_err(|e| ConvertError::input(format!("cannot read {}: {e}", self.file)))?;
        if (bytes.len() as u64) < length {
            return Err(ConvertError::input(format!("{}: {what}: the file ended while reading (it changed?)", self.file)));
        }
        Ok(bytes)
    }

    fn u16(&self, b: &[u8]) -> u16 {
        let a = [b[0], b[1]];
        if self.le {
            u16::from_le_bytes(a)
        } else {
            u16::from_be_bytes(a)
        }
    }
    fn u32(&self, b: &[u8]) -> u32 {
        let a = [b[0], b[1], b[2], b[3]];
        if self.le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    }
    fn u64(&self, b: &[u8]) -> u64 {
        let mut a = [0; 8];
        a.copy_from_slice(&b[..8]);
        if self.le {
            u64::from_le_bytes(a)
        } else {
            u64::from_be_bytes(a)
        }
    }

    fn entries(&self, offset: u64, label: &str) -> Result<(Vec<Entry>, u64)> {
        let what = format!("{label}: its IFD");
        let (count_size, entry_size, next_size) = if self.big { (8, 20, 8) } else { (2, 12, 4) };
        let head = self.read(offset, count_size, &what)?;
        let count = if self.big { self.u64(&head) } else { u64::from(self.u16(&head)) };
        if count == 0 || count > 65535 {
            return Err(ConvertError::input(format!(
                "{}: {label}: unreadable IFD at byte {offset}: it claims {count} entries",
                self.file
            )));
        }
        let body = self.read(offset + count_size, count * entry_size + next_size, &what)?;
        let mut entries = Vec::with_capacity(count as usize);
        for e in body[..(count * entry_size) as usize].chunks_exact(entry_size as usize) {
            let mut field = [0; 8];
            let (tag, kind, n, value) = if self.big {
                field.copy_from_slice(&e[12..20]);
                (self.u16(&e[0..]), self.u16(&e[2..]), self.u64(&e[4..]), field)
            } else {
                field[..4].copy_from_slice(&e[8..12]);
                (self.u16(&e[0..]), self.u16(&e[2..]), u64::from(self.u32(&e[4..])), field)
            };
            entries.push(Entry { tag, kind, count: n, field: value });
        }
        let tail = &body[(count * entry_size) as usize..];
        let next = if self.big { self.u64(tail) } else { u64::from(self.u32(tail)) };
        Ok((entries, next))
    }

    /// An entry's raw value bytes (in the file's byte order), checked before they are read.
    fn value_bytes(&self, e: &Entry, label: &str) -> Result<Option<Vec<u8>>> {
        let Some(size) = type_size(e.kind) else { return Ok(None) };
        let Some(total) = e.count.checked_mul(size) else {
            return Err(self.tag_too_big(e, label));
        };
        let inline = if self.big { 8 } else { 4 };
        if total <= inline {
            return Ok(Some(e.field[..total as usize].to_vec()));
        }
        if total > MAX_TAG_BYTES {
            return Err(self.tag_too_big(e, label));
        }
        let at = if self.big { self.u64(&e.field) } else { u64::from(self.u32(&e.field)) };
        self.read(at, total, &format!("{label}: tag {}'s values", e.tag)).map(Some)
    }

    fn tag_too_big(&self, e: &Entry, label: &str) -> ConvertError {
        ConvertError::input(format!(
            "{}: {label}: tag {} claims {} values, more than this converter reads (corrupt?)",
            self.file, e.tag, e.count
        ))
    }

    /// An entry's values as unsigned integers (none for a type that is not an integer).
    fn unsigned(&self, e: &Entry, label: &str) -> Result<Vec<u64>> {
        let Some(bytes) = self.value_bytes(e, label)? else { return Ok(Vec::new()) };
        Ok(match e.kind {
            1 | 7 => bytes.iter().map(|&b| u64::from(b)).collect(),
            3 => bytes.chunks_exact(2).map(|b| u64::from(self.u16(b))).collect(),
            4 | 13 => bytes.chunks_exact(4).map(|b| u64::from(self.u32(b))).collect(),
            16 | 18 => bytes.chunks_exact(8).map(|b| self.u64(b)).collect(),
            _ => Vec::new(),
        })
    }

    fn reals(&self, e: &Entry, label: &str) -> Result<Vec<f64>> {
        let Some(bytes) = self.value_bytes(e, label)? else { return Ok(Vec::new()) };
        Ok(match e.kind {
            5 => bytes.chunks_exact(8).map(|b| f64::from(self.u32(b)) / f64::from(self.u32(&b[4..]).max(1))).collect(),
            11 => bytes.chunks_exact(4).map(|b| f64::from(f32::from_bits(self.u32(b)))).collect(),
            12 => bytes.chunks_exact(8).map(|b| f64::from_bits(self.u64(b))).collect(),
            _ => self.unsigned(e, label)?.into_iter().map(|v| v as f64).collect(),
        })
    }

    fn page(&self, offset: u64, label: String) -> Result<Page> {
        let (entries, next) = self.entries(offset, &label)?;
        let find = |tag: u16| entries.iter().find(|e| e.tag == tag);
        let list = |tag: u16| -> Result<Option<Vec<u64>>> { find(tag).map(|e| self.unsigned(e, &label)).transpose() };
        let single = |tag: u16| -> Result<Option<u64>> { Ok(list(tag)?.and_then(|v| v.first().copied())) };
        let width = single(TAG_WIDTH)?.unwrap_or(0);
        let height = single(TAG_HEIGHT)?.unwrap_or(0);
        let tile_width = single(TAG_TILE_WIDTH)?;
        let tile_height = single(TAG_TILE_HEIGHT)?;
        let tiled = tile_width.is_some() || tile_height.is_some();
        let description = match find(TAG_DESCRIPTION) {
            Some(e) if e.kind == 2 => self.value_bytes(e, &label)?.map(|b| {
                let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                String::from_utf8_lossy(&b[..end]).into_owned()
            }),
            _ => None,
        };
        let jpeg_tables = match find(TAG_JPEG_TABLES) {
            Some(e) if matches!(e.kind, 1 | 7) => self.value_bytes(e, &label)?,
            _ => None,
        };
        let reals = |tag: u16| -> Result<Vec<f64>> { find(tag).map_or(Ok(Vec::new()), |e| self.reals(e, &label)) };
        let coefficients = reals(TAG_YCBCR_COEFFICIENTS)?;
        let reference = reals(TAG_REFERENCE_BLACK_WHITE)?;
        let subsampling = list(TAG_YCBCR_SUBSAMPLING)?.unwrap_or_default();
        let (offsets, byte_counts) = if tiled {
            (list(TAG_TILE_OFFSETS)?, list(TAG_TILE_BYTES)?)
        } else {
            (list(TAG_STRIP_OFFSETS)?, list(TAG_STRIP_BYTES)?)
        };
        Ok(Page {
            index: 0,
            width,
            height,
            bits_per_sample: list(TAG_BITS)?.filter(|b| !b.is_empty()).unwrap_or(vec![1]),
            samples_per_pixel: single(TAG_SAMPLES)?.unwrap_or(1),
            sample_format: single(TAG_SAMPLE_FORMAT)?.unwrap_or(1),
            compression: single(TAG_COMPRESSION)?.unwrap_or(1).min(u64::from(u16::MAX)) as u16,
            predictor: single(TAG_PREDICTOR)?.unwrap_or(1),
            photometric: single(TAG_PHOTOMETRIC)?.map(|p| p.min(u64::from(u16::MAX)) as u16),
            planar: single(TAG_PLANAR)?.unwrap_or(1),
            subfile_type: single(TAG_SUBFILE_TYPE)?.unwrap_or(0),
            description,
            resolution: match (reals(TAG_X_RESOLUTION)?.first(), reals(TAG_Y_RESOLUTION)?.first()) {
                (Some(&x), y) if x.is_finite() && x > 0.0 => Some((x, y.copied().filter(|y| y.is_finite() && *y > 0.0).unwrap_or(x))),
                _ => None,
            },
            tiled,
            tile_width: if tiled { tile_width.unwrap_or(0) } else { width },
            tile_height: if tiled { tile_height.unwrap_or(0) } else { single(TAG_ROWS_PER_STRIP)?.unwrap_or(height).min(height) },
            offsets: offsets.unwrap_or_default(),
            byte_counts: byte_counts.unwrap_or_default(),
            jpeg_tables,
            jpeg_interchange: single(TAG_JPEG_INTERCHANGE)?.map(|at| Ok::<_, ConvertError>((at, single(TAG_JPEG_INTERCHANGE_LENGTH)?.unwrap_or(0)))).transpose()?,
            ycbcr_subsampling: (subsampling.first().copied().unwrap_or(2), subsampling.get(1).copied().unwrap_or(2)),
            ycbcr_coefficients: (coefficients.len() >= 3).then(|| [coefficients[0], coefficients[1], coefficients[2]]),
            reference_black_white: (reference.len() >= 6).then(|| {
                let mut r = [0.0; 6];
                r.copy_from_slice(&reference[..6]);
                r
            }),
            sub_ifds: Vec::new(),
            next,
            sub_ifd_offsets: list(TAG_SUB_IFDS)?.unwrap_or_default(),
            label,
        })
    }
}

impl<'a> Tiff<'a> {
    /// Reads the header and every IFD of `input` (named `file` in messages).
    pub fn open(input: &'a dyn ReadAt, file: &str) -> Result<Tiff<'a>> {
        let size = input.size();
        let head = read_bytes(input, 0, 16).map_err(|e| ConvertError::input(format!("cannot read {file}: {e}")))?;
        let bad = |why: &str| ConvertError::input(format!("{file}: not a readable TIFF header: {why}"));
        if head.len() < 8 {
            return Err(bad("the file is shorter than a TIFF header"));
        }
        let le = head[0] == b'I';
        let mut r = Reader { input, file, size, big: false, le };
        let (big, first) = match r.u16(&head[2..]) {
            42 => (false, u64::from(r.u32(&head[4..]))),
            43 => {
                if head.len() < 16 || r.u16(&head[4..]) != 8 {
                    return Err(bad("a BigTIFF header with an offset size other than 8"));
                }
                (true, r.u64(&head[8..]))
            }
            v => return Err(bad(&format!("version {v} is neither TIFF (42) nor BigTIFF (43)"))),
        };
        r.big = big;
        let mut visited = std::collections::HashSet::new();
        let mut parse = |offset: u64, label: String| -> Result<Page> {
            if !visited.insert(offset) {
                return Err(ConvertError::input(format!(
                    "{file}: {label}: its IFD offset {offset} was already read (a loop of IFD offsets)"
                )));
            }
            if visited.len() > MAX_PAGES {
                return Err(ConvertError::input(format!("{file}: more than {MAX_PAGES} IFDs")));
            }
            r.page(offset, label)
        };
        let mut pages: Vec<Page> = Vec::new();
        let mut offset = first;
        while offset != 0 {
            let mut page = parse(offset, format!("page {}", pages.len()))?;
            page.index = pages.len();
            let subs = std::mem::take(&mut page.sub_ifd_offsets);
            for (i, &sub) in subs.iter().enumerate() {
                let mut s = parse(sub, format!("page {} SubIFD {i}", page.index))?;
                s.index = i;
                page.sub_ifds.push(s);
            }
            offset = page.next;
            pages.push(page);
        }
        if pages.is_empty() {
            return Err(ConvertError::input(format!("{file}: the TIFF has no pages")));
        }
        Ok(Tiff { input, file: file.to_string(), size, big, little_endian: le, pages })
    }

    /// `length` bytes at `offset` of the file, or an error naming `what` if they are not all in it.
    pub fn read(&self, offset: u64, length: u64, what: &str) -> Result<Vec<u8>> {
        Reader { input: self.input, file: &self.file, size: self.size, big: self.big, le: self.little_endian }.read(offset, length, what)
    }

    pub fn format(&self) -> &'static str {
        if self.big {
            "BigTIFF"
        } else {
            "TIFF"
        }
    }
}

impl Page {
    /// The page's grid of tiles (or strips): rows × columns × planes, checked against its offsets.
    pub fn grid(&self, file: &str) -> Result<TileGrid> {
        let fail = |m: String| ConvertError::input(format!("{file}: {}: {m}", self.label));
        for (name, v) in [("width", self.width), ("height", self.height), ("tile width", self.tile_width), ("tile height", self.tile_height)] {
            if v < 1 {
                return Err(fail(format!("the {name} is {}", if v == 0 { "missing".to_string() } else { v.to_string() })));
            }
        }
        if self.width > 1 << 31 || self.height > 1 << 31 || self.width * self.height > 1 << 40 {
            return Err(fail(format!(
                "claims {} × {} pixels (width × height), more than this converter accepts (2^31 per side, 2^40 in all)",
                self.width, self.height
            )));
        }
        let rows = self.height.div_ceil(self.tile_height);
        let columns = self.width.div_ceil(self.tile_width);
        let planes = if self.planar == 2 { self.samples_per_pixel } else { 1 };
        let count = rows.saturating_mul(columns).saturating_mul(planes);
        let kind = if self.tiled { "tile" } else { "strip" };
        if self.offsets.is_empty() || self.byte_counts.is_empty() {
            return Err(fail(format!("no {kind} offsets or byte counts")));
        }
        let given = self.offsets.len().min(self.byte_counts.len()) as u64;
        if given < count {
            return Err(fail(format!("{count} {kind}s needed but {given} offsets given")));
        }
        Ok(TileGrid { rows, columns, planes, count, kind })
    }
}
