//! The few data elements of a DICOM file the converter needs, read in place: the file meta
//! group, then the data set in its transfer syntax's encoding (explicit or implicit VR,
//! little endian), sequences followed only where they hold what is wanted, and every other
//! value skipped by its length, never read. Reading stops at Pixel Data, whose position is
//! kept: its frames are read one at a time later (frames.rs).
//!
//! Every length is checked against the bytes that hold it before anything is read or
//! allocated, and sequences nest at most [`MAX_DEPTH`] deep.

use super::super::error::{ConvertError, Result};
use super::super::source::{read_bytes, ReadAt};

/// Sequences nested deeper than this are refused (a WSI file needs 3).
const MAX_DEPTH: usize = 12;
/// The largest value read into memory, but for the offset tables.
const MAX_VALUE: u64 = 1 << 20;
/// The largest extended offset table (8 bytes a frame: 16 million frames).
const MAX_TABLE: u64 = 1 << 27;
/// Bytes read from the input at a time.
const WINDOW: usize = 1 << 16;

pub const ITEM: u32 = 0xFFFE_E000;
const ITEM_END: u32 = 0xFFFE_E00D;
pub const SEQUENCE_END: u32 = 0xFFFE_E0DD;
pub const PIXEL_DATA: u32 = 0x7FE0_0010;
const EXTENDED_OFFSET_TABLE: u32 = 0x7FE0_0001;
const EXTENDED_OFFSET_LENGTHS: u32 = 0x7FE0_0002;
const UNDEFINED: u32 = 0xFFFF_FFFF;

const SHARED_GROUPS: u32 = 0x5200_9229;
const PER_FRAME_GROUPS: u32 = 0x5200_9230;
const PIXEL_MEASURES: u32 = 0x0028_9110;
const PLANE_POSITION_SLIDE: u32 = 0x0048_021A;

/// What one instance says, of what the converter reads.
#[derive(Clone, Debug, Default)]
pub struct Instance {
    pub transfer_syntax: String,
    pub sop_class: String,
    pub sop_instance: String,
    pub image_type: Vec<String>,
    pub study_uid: String,
    pub series_uid: String,
    pub container_id: String,
    pub accession: String,
    pub rows: Option<u64>,
    pub columns: Option<u64>,
    pub samples_per_pixel: Option<u64>,
    pub photometric: String,
    pub bits_allocated: Option<u64>,
    pub bits_stored: Option<u64>,
    pub pixel_representation: Option<u64>,
    pub planar_configuration: Option<u64>,
    pub frames: Option<u64>,
    pub total_columns: Option<u64>,
    pub total_rows: Option<u64>,
    pub dimension_organization: String,
    pub focal_planes: Option<u64>,
    pub optical_paths: Option<u64>,
    pub concatenation_uid: String,
    pub concatenation_offset: Option<u64>,
    /// (row spacing, column spacing) in mm, from the shared functional groups (or the first frame's)
    pub pixel_spacing: Option<(f64, f64)>,
    /// per frame, its (column, row) position in the total pixel matrix, 1-based
    pub positions: Vec<(Option<i64>, Option<i64>)>,
    pub per_frame_items: u64,
    /// where the Pixel Data value starts, and its length (None: encapsulated, undefined length)
    pub pixel_data: Option<(u64, Option<u64>)>,
    pub extended_offsets: Option<Vec<u64>>,
    pub extended_lengths: Option<Vec<u64>>,
}

/// Whether the bytes are a DICOM file (the "DICM" prefix after the 128-byte preamble).
pub fn is_dicom(head: &[u8]) -> bool {
    head.len() >= 132 && &head[128..132] == b"DICM"
}

/// A position in the input read through a window of bytes.
pub struct Reader<'a> {
    input: &'a dyn ReadAt,
    size: u64,
    pub pos: u64,
    window: Vec<u8>,
    window_at: u64,
    /// the file's name in messages
    file: &'a str,
}

impl<'a> Reader<'a> {
    pub fn new(input: &'a dyn ReadAt, file: &'a str) -> Reader<'a> {
        Reader { input, size: input.size(), pos: 0, window: Vec::new(), window_at: 0, file }
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn error(&self, message: impl std::fmt::Display) -> ConvertError {
        ConvertError::input(format!("{}: {message}", self.file))
    }

    /// `n` bytes at the position (n ≤ WINDOW), or an error naming what was being read.
    fn take(&mut self, n: usize, what: &str) -> Result<&[u8]> {
        self.take_reading(n, WINDOW, what)
    }

    /// As [`Self::take`], reading at least `ahead` bytes where the window must be refilled.
    fn take_reading(&mut self, n: usize, ahead: usize, what: &str) -> Result<&[u8]> {
        let end = self.pos.checked_add(n as u64).filter(|&e| e <= self.size);
        let Some(end) = end else {
            return Err(self.error(format!("the file ends inside {what} (at byte {} of {})", self.pos, self.size)));
        };
        if self.pos < self.window_at || end > self.window_at + self.window.len() as u64 {
            let want = ahead.max(n);
            self.window = read_bytes(self.input, self.pos, want).map_err(|e| self.error(format!("cannot read: {e}")))?;
            self.window_at = self.pos;
            if (self.window.len() as u64) < n as u64 {
                return Err(self.error(format!("the file ends inside {what} (at byte {} of {})", self.pos, self.size)));
            }
        }
        let start = (self.pos - self.window_at) as usize;
        self.pos = end;
        Ok(&self.window[start..start + n])
    }

    pub fn u16(&mut self, what: &str) -> Result<u16> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub fn u32(&mut self, what: &str) -> Result<u32> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn tag(&mut self, what: &str) -> Result<u32> {
        let group = self.u16(what)?;
        let element = self.u16(what)?;
        Ok(u32::from(group) << 16 | u32::from(element))
    }

    /// An item header (tag, length), read without the window's read-ahead: between the
    /// fragments of Pixel Data, read ahead would read their data too.
    pub fn item_header(&mut self, what: &str) -> Result<(u32, u32)> {
        let b = self.take_reading(8, 8, what)?;
        let tag = u32::from(u16::from_le_bytes([b[0], b[1]])) << 16 | u32::from(u16::from_le_bytes([b[2], b[3]]));
        Ok((tag, u32::from_le_bytes([b[4], b[5], b[6], b[7]])))
    }

    /// `n` bytes of a value (n checked against the file first).
    pub fn bytes(&mut self, n: u64, what: &str) -> Result<Vec<u8>> {
        if self.pos.checked_add(n).is_none_or(|e| e > self.size) {
            return Err(self.error(format!("{what} claims {n} bytes at byte {}, past the end of the file ({} bytes)", self.pos, self.size)));
        }
        if n <= WINDOW as u64 {
            return Ok(self.take(n as usize, what)?.to_vec());
        }
        let out = read_bytes(self.input, self.pos, n as usize).map_err(|e| self.error(format!("cannot read: {e}")))?;
        if out.len() as u64 != n {
            return Err(self.error(format!("the file ends inside {what}")));
        }
        self.pos += n;
        Ok(out)
    }

    pub fn skip(&mut self, n: u64, what: &str) -> Result<()> {
        match self.pos.checked_add(n).filter(|&e| e <= self.size) {
            Some(end) => {
                self.pos = end;
                Ok(())
            }
            None => Err(self.error(format!("{what} claims {n} bytes at byte {}, past the end of the file ({} bytes)", self.pos, self.size))),
        }
    }
}

/// The name of an element, for messages.
pub fn tag_name(tag: u32) -> String {
    let known = match tag {
        0x0002_0010 => "Transfer Syntax UID",
        0x0008_0016 => "SOP Class UID",
        0x0028_0008 => "Number of Frames",
        0x0028_0010 => "Rows",
        0x0028_0011 => "Columns",
        PIXEL_DATA => "Pixel Data",
        EXTENDED_OFFSET_TABLE => "Extended Offset Table",
        EXTENDED_OFFSET_LENGTHS => "Extended Offset Table Lengths",
        PER_FRAME_GROUPS => "Per-Frame Functional Groups Sequence",
        SHARED_GROUPS => "Shared Functional Groups Sequence",
        _ => "",
    };
    let code = format!("({:04X},{:04X})", tag >> 16, tag & 0xFFFF);
    if known.is_empty() {
        code
    } else {
        format!("{known} {code}")
    }
}

/// VRs whose explicit form has a 4-byte length.
fn long_length(vr: [u8; 2]) -> bool {
    matches!(&vr, b"OB" | b"OD" | b"OF" | b"OL" | b"OV" | b"OW" | b"SQ" | b"SV" | b"UC" | b"UN" | b"UR" | b"UT" | b"UV")
}

/// The VR of a wanted element in an implicit-VR data set.
fn implicit_vr(tag: u32) -> [u8; 2] {
    match tag {
        SHARED_GROUPS | PER_FRAME_GROUPS | PIXEL_MEASURES | PLANE_POSITION_SLIDE => *b"SQ",
        0x0028_0010 | 0x0028_0011 | 0x0028_0002 | 0x0028_0100 | 0x0028_0101 | 0x0028_0103 | 0x0028_0006 => *b"US",
        0x0048_0006 | 0x0048_0007 | 0x0048_0302 | 0x0048_0303 | 0x0020_9228 => *b"UL",
        0x0048_021E | 0x0048_021F => *b"SL",
        EXTENDED_OFFSET_TABLE | EXTENDED_OFFSET_LENGTHS => *b"OV",
        _ => *b"UN",
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim_matches(|c: char| c == '\0' || c.is_whitespace()).to_string()
}

fn number(vr: [u8; 2], bytes: &[u8]) -> Option<i64> {
    let le = |n: usize| bytes.get(..n).map(|b| b.iter().rev().fold(0u64, |a, &x| a << 8 | u64::from(x)));
    match &vr {
        b"US" => le(2).map(|v| v as i64),
        b"UL" => le(4).map(|v| v as i64),
        b"SS" => le(2).map(|v| i64::from(v as u16 as i16)),
        b"SL" => le(4).map(|v| i64::from(v as u32 as i32)),
        b"IS" | b"DS" => text(bytes).split('\\').next()?.trim().parse::<f64>().ok().filter(|v| v.is_finite()).map(|v| v as i64),
        _ => None,
    }
}

/// Reads the file meta group and the data set up to Pixel Data.
pub fn read_instance(input: &dyn ReadAt, file: &str) -> Result<Instance> {
    let mut r = Reader::new(input, file);
    let head = r.bytes(132.min(r.size()), "the preamble")?;
    if !is_dicom(&head) {
        return Err(r.error("is not a DICOM file (no \"DICM\" after the 128-byte preamble)"));
    }
    let mut instance = Instance::default();
    // the file meta group: explicit VR little endian, always
    loop {
        let at = r.pos;
        if at + 8 > r.size() {
            return Err(r.error("the file ends inside its file meta information"));
        }
        let tag = r.tag("the file meta information")?;
        if tag >> 16 != 0x0002 {
            r.pos = at;
            break;
        }
        let (_, length) = explicit_header(&mut r)?;
        if length == UNDEFINED {
            return Err(r.error(format!("{} has an undefined length in the file meta information", tag_name(tag))));
        }
        if tag == 0x0002_0010 {
            instance.transfer_syntax = text(&r.bytes(u64::from(length).min(MAX_VALUE + 1), "the Transfer Syntax UID")?);
        } else {
            r.skip(u64::from(length), &tag_name(tag))?;
        }
    }
    let syntax = instance.transfer_syntax.as_str();
    let explicit = match syntax {
        "" => return Err(r.error("has no Transfer Syntax UID (0002,0010) in its file meta information")),
        "1.2.840.10008.1.2" => false,
        "1.2.840.10008.1.2.2" => return Err(r.error("uses the retired explicit VR big endian transfer syntax (1.2.840.10008.1.2.2), which is not supported")),
        "1.2.840.10008.1.2.1.99" => return Err(r.error("uses the deflated transfer syntax (1.2.840.10008.1.2.1.99), which is not supported")),
        _ => true,
    };
    let mut walker = Walker { r, explicit, instance, done: false };
    let size = walker.r.size();
    walker.data_set(size, &mut Vec::new(), 0)?;
    Ok(walker.instance)
}

fn explicit_header(r: &mut Reader) -> Result<([u8; 2], u32)> {
    let b = r.take(2, "a value representation")?;
    let vr = [b[0], b[1]];
    if long_length(vr) {
        r.skip(2, "a value representation")?;
        Ok((vr, r.u32("a value length")?))
    } else {
        Ok((vr, u32::from(r.u16("a value length")?)))
    }
}

struct Walker<'a> {
    r: Reader<'a>,
    explicit: bool,
    instance: Instance,
    /// Pixel Data reached: nothing after it is read
    done: bool,
}

impl Walker<'_> {
    /// The elements up to `end` (or an item delimiter, where `end` is u64::MAX) inside the
    /// sequences `path`; `item` is the item's index in its sequence.
    fn data_set(&mut self, end: u64, path: &mut Vec<u32>, item: u64) -> Result<()> {
        while !self.done && self.r.pos < end {
            if end == u64::MAX && self.r.pos >= self.r.size() {
                return Err(self.r.error("the file ends inside an item of undefined length"));
            }
            let tag = self.r.tag("a data element")?;
            if tag == ITEM_END {
                self.r.u32("an item delimiter")?;
                return Ok(());
            }
            if tag == ITEM || tag == SEQUENCE_END {
                return Err(self.r.error(format!("an item tag where a data element was expected, at byte {}", self.r.pos - 4)));
            }
            let (vr, length) = if self.explicit {
                explicit_header(&mut self.r)?
            } else {
                (implicit_vr(tag), self.r.u32("a value length")?)
            };
            let at_top = path.is_empty();
            if at_top && tag == PIXEL_DATA {
                let length = (length != UNDEFINED).then_some(u64::from(length));
                self.instance.pixel_data = Some((self.r.pos, length));
                self.done = true;
                return Ok(());
            }
            let sequence = &vr == b"SQ" || (length == UNDEFINED && (&vr == b"UN" || !self.explicit));
            if sequence {
                let want = matches!(
                    (path.as_slice(), tag),
                    ([], SHARED_GROUPS | PER_FRAME_GROUPS)
                        | ([SHARED_GROUPS | PER_FRAME_GROUPS], PIXEL_MEASURES | PLANE_POSITION_SLIDE)
                );
                if !want && length != UNDEFINED {
                    self.r.skip(u64::from(length), &tag_name(tag))?;
                    continue;
                }
                if path.len() >= MAX_DEPTH {
                    return Err(self.r.error(format!("sequences nest more than {MAX_DEPTH} deep")));
                }
                let seq_end = if length == UNDEFINED { u64::MAX } else { self.r.pos + u64::from(length) };
                if seq_end != u64::MAX && seq_end > self.r.size() {
                    return Err(self.r.error(format!("{} claims {length} bytes, past the end of the file", tag_name(tag))));
                }
                path.push(tag);
                let result = self.sequence(seq_end, path, want, item);
                path.pop();
                result?;
                continue;
            }
            if length == UNDEFINED {
                return Err(self.r.error(format!("{} has an undefined length but is not a sequence", tag_name(tag))));
            }
            self.value(tag, vr, u64::from(length), path, item)?;
        }
        if end != u64::MAX && self.r.pos > end {
            return Err(self.r.error("an element runs past the end of the item or sequence that holds it"));
        }
        Ok(())
    }

    fn sequence(&mut self, end: u64, path: &mut Vec<u32>, want: bool, outer_item: u64) -> Result<()> {
        let mut index = 0u64;
        while self.r.pos < end {
            if end == u64::MAX && self.r.pos >= self.r.size() {
                return Err(self.r.error("the file ends inside a sequence of undefined length"));
            }
            let tag = self.r.tag("a sequence item")?;
            let length = self.r.u32("an item length")?;
            if tag == SEQUENCE_END {
                return Ok(());
            }
            if tag != ITEM {
                return Err(self.r.error(format!(
                    "{} holds {} where an item was expected",
                    tag_name(*path.last().expect("inside a sequence")),
                    tag_name(tag)
                )));
            }
            // the per-frame item's index is the frame's; nested items keep it
            let item = if path.len() == 1 { index } else { outer_item };
            if path.as_slice() == [PER_FRAME_GROUPS] {
                self.instance.per_frame_items = index + 1;
            }
            if !want && length != UNDEFINED {
                self.r.skip(u64::from(length), "a sequence item")?;
            } else if length == UNDEFINED {
                self.data_set(u64::MAX, path, item)?;
            } else {
                let item_end = self.r.pos + u64::from(length);
                if item_end > self.r.size() || item_end > end {
                    return Err(self.r.error(format!("a sequence item claims {length} bytes, past the end of what holds it")));
                }
                self.data_set(item_end, path, item)?;
                self.r.pos = item_end;
            }
            index += 1;
        }
        Ok(())
    }

    fn value(&mut self, tag: u32, vr: [u8; 2], length: u64, path: &[u32], item: u64) -> Result<()> {
        let top = path.is_empty();
        let wanted_top = top
            && matches!(
                tag,
                0x0008_0008
                    | 0x0008_0016
                    | 0x0008_0018
                    | 0x0008_0050
                    | 0x0020_000D
                    | 0x0020_000E
                    | 0x0040_0512
                    | 0x0028_0002
                    | 0x0028_0004
                    | 0x0028_0006
                    | 0x0028_0008
                    | 0x0028_0010
                    | 0x0028_0011
                    | 0x0028_0100
                    | 0x0028_0101
                    | 0x0028_0103
                    | 0x0048_0006
                    | 0x0048_0007
                    | 0x0048_0302
                    | 0x0048_0303
                    | 0x0020_9311
                    | 0x0020_9161
                    | 0x0020_9228
            );
        let table = top && matches!(tag, EXTENDED_OFFSET_TABLE | EXTENDED_OFFSET_LENGTHS);
        let spacing = tag == 0x0028_0030 && matches!(path, [SHARED_GROUPS | PER_FRAME_GROUPS, PIXEL_MEASURES]);
        let position = matches!(tag, 0x0048_021E | 0x0048_021F) && path == [PER_FRAME_GROUPS, PLANE_POSITION_SLIDE];
        if table {
            if length > MAX_TABLE || length % 8 != 0 {
                return Err(self.r.error(format!("{} of {length} bytes is not a table of 8-byte offsets this converter reads", tag_name(tag))));
            }
            let bytes = self.r.bytes(length, &tag_name(tag))?;
            let values = bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))).collect();
            if tag == EXTENDED_OFFSET_TABLE {
                self.instance.extended_offsets = Some(values);
            } else {
                self.instance.extended_lengths = Some(values);
            }
            return Ok(());
        }
        if !(wanted_top || spacing || position) {
            return self.r.skip(length, &tag_name(tag));
        }
        if length > MAX_VALUE {
            return Err(self.r.error(format!("{} claims {length} bytes, more than such an element holds", tag_name(tag))));
        }
        let bytes = self.r.bytes(length, &tag_name(tag))?;
        let vr = if self.explicit { vr } else { implicit_text_vr(tag).unwrap_or(vr) };
        let i = &mut self.instance;
        let n = || number(vr, &bytes).filter(|v| *v >= 0).map(|v| v as u64);
        match tag {
            0x0008_0008 => i.image_type = text(&bytes).split('\\').map(|s| s.trim().to_uppercase()).collect(),
            0x0008_0016 => i.sop_class = text(&bytes),
            0x0008_0018 => i.sop_instance = text(&bytes),
            0x0008_0050 => i.accession = text(&bytes),
            0x0020_000D => i.study_uid = text(&bytes),
            0x0020_000E => i.series_uid = text(&bytes),
            0x0040_0512 => i.container_id = text(&bytes),
            0x0028_0004 => i.photometric = text(&bytes).to_uppercase(),
            0x0020_9311 => i.dimension_organization = text(&bytes).to_uppercase(),
            0x0020_9161 => i.concatenation_uid = text(&bytes),
            0x0028_0002 => i.samples_per_pixel = n(),
            0x0028_0006 => i.planar_configuration = n(),
            0x0028_0008 => i.frames = n(),
            0x0028_0010 => i.rows = n(),
            0x0028_0011 => i.columns = n(),
            0x0028_0100 => i.bits_allocated = n(),
            0x0028_0101 => i.bits_stored = n(),
            0x0028_0103 => i.pixel_representation = n(),
            0x0048_0006 => i.total_columns = n(),
            0x0048_0007 => i.total_rows = n(),
            0x0048_0302 => i.optical_paths = n(),
            0x0048_0303 => i.focal_planes = n(),
            0x0020_9228 => i.concatenation_offset = n(),
            0x0028_0030 => {
                let shared = path[0] == SHARED_GROUPS;
                if shared || (i.pixel_spacing.is_none() && item == 0) {
                    let values: Vec<f64> = text(&bytes).split('\\').filter_map(|v| v.trim().parse().ok()).collect();
                    if let [row, column] = values[..] {
                        if row > 0.0 && column > 0.0 && row.is_finite() && column.is_finite() {
                            i.pixel_spacing = Some((row, column));
                        }
                    }
                }
            }
            0x0048_021E | 0x0048_021F => {
                let value = number(*b"SL", &bytes);
                let k = usize::try_from(item).unwrap_or(usize::MAX);
                if k >= i.positions.len() {
                    // one entry per frame item: bounded by the items the file holds
                    i.positions.resize(k + 1, (None, None));
                }
                if tag == 0x0048_021E {
                    i.positions[k].0 = value;
                } else {
                    i.positions[k].1 = value;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Text and number VRs of wanted elements in implicit-VR data sets (number() reads by VR).
fn implicit_text_vr(tag: u32) -> Option<[u8; 2]> {
    match tag {
        0x0028_0008 => Some(*b"IS"),
        0x0028_0030 => Some(*b"DS"),
        _ => None,
    }
}
