//! DICOM whole-slide images in (VL Whole Slide Microscopy, Supplement 145): a series' files
//! read in place (elements.rs), its volume instances grouped into levels and level 0's
//! frames placed on a tile grid (TILED_FULL by frame order, TILED_SPARSE by each frame's
//! position), each frame located in its Pixel Data (frames.rs) and read when it is needed.
//! JPEG Baseline frames are copied into level 0's chunks (tile_copy.rs); other transfer
//! syntaxes are decoded into rows (rows.rs) and encoded like any image. Label, overview and
//! thumbnail instances are not converted: the summary names them, as the SVS path does
//! its associated images.

mod elements;
mod frames;
mod rows;

use super::error::{ConvertError, Result};
use super::options::{ConvertOptions, Rescale};
use super::source::{ImageInfo, PixelSize, ReadAt, RowSource, TileGrid};
use super::tile_copy::{check_tile_size, TileInput, TileJob, TileSpec};
use crate::decode::StoredColorSpace;
use crate::ConfigValue as V;
use elements::{read_instance, Instance};
use frames::{read_frame, without_padding, Frame};

pub use elements::is_dicom;

/// VL Whole Slide Microscopy Image Storage.
const WSI_SOP_CLASS: &str = "1.2.840.10008.5.1.4.1.1.77.1.6";
/// The largest frame side this converter reads.
const MAX_FRAME_SIDE: u64 = 65535;
/// The largest total pixel matrix (2^40 pixels: a million on a side).
const MAX_MATRIX_PIXELS: u64 = 1 << 40;
/// The most frames a level's grid may have (the frame index holds one entry per grid cell):
/// a terapixel in 256 × 256 frames.
const MAX_GRID_FRAMES: u64 = 1 << 24;

/// What an opened DICOM series is converted as.
pub enum Opened<'a> {
    Rows(Box<dyn RowSource + 'a>),
    Tiles(Box<TileJob<'a>>, Vec<String>),
}

/// How a transfer syntax's frames are read.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Coding {
    /// JPEG Baseline (8-bit lossy): copied
    Baseline,
    /// JPEG Extended (8- or 12-bit): copied where 8-bit baseline-compatible, else decoded
    Extended,
    Native,
    Jpeg2000,
    Rle,
}

fn coding(syntax: &str) -> std::result::Result<Coding, String> {
    Ok(match syntax {
        "1.2.840.10008.1.2.4.50" => Coding::Baseline,
        "1.2.840.10008.1.2.4.51" => Coding::Extended,
        "1.2.840.10008.1.2" | "1.2.840.10008.1.2.1" => Coding::Native,
        "1.2.840.10008.1.2.4.90" | "1.2.840.10008.1.2.4.91" => Coding::Jpeg2000,
        "1.2.840.10008.1.2.5" => Coding::Rle,
        other => {
            let name = match other {
                "1.2.840.10008.1.2.4.57" | "1.2.840.10008.1.2.4.70" => "JPEG Lossless",
                "1.2.840.10008.1.2.4.80" | "1.2.840.10008.1.2.4.81" => "JPEG-LS",
                "1.2.840.10008.1.2.4.201" | "1.2.840.10008.1.2.4.202" | "1.2.840.10008.1.2.4.203" => "High-Throughput JPEG 2000",
                s if s.starts_with("1.2.840.10008.1.2.4.10") => "MPEG video",
                _ => "an unknown transfer syntax",
            };
            return Err(format!(
                "its frames use {name} ({other}), which this converter cannot decode (it reads JPEG Baseline and Extended, \
                 JPEG 2000, RLE and uncompressed frames)"
            ));
        }
    })
}

fn sop_class_name(uid: &str) -> &str {
    match uid {
        "1.2.840.10008.5.1.4.1.1.2" => "CT Image Storage",
        "1.2.840.10008.5.1.4.1.1.4" => "MR Image Storage",
        "1.2.840.10008.5.1.4.1.1.7" => "Secondary Capture Image Storage",
        "1.2.840.10008.5.1.4.1.1.77.1.2" => "VL Microscopic Image Storage",
        "1.2.840.10008.5.1.4.1.1.77.1.3" => "VL Slide-Coordinates Microscopic Image Storage",
        "1.2.840.10008.1.3.10" => "Media Storage Directory (DICOMDIR)",
        "1.2.840.10008.5.1.4.1.1.88.59" => "Key Object Selection",
        "1.2.840.10008.5.1.4.1.1.66.4" => "Segmentation Storage",
        "1.2.840.10008.5.1.4.1.1.91.1" => "Microscopy Bulk Simple Annotations",
        _ => "",
    }
}

/// One input file of the series.
pub struct DicomFile<'a> {
    pub name: String,
    pub input: &'a dyn ReadAt,
}

struct Read<'a> {
    file: DicomFile<'a>,
    instance: Instance,
}

fn image_kind(instance: &Instance) -> &str {
    instance.image_type.get(2).map(String::as_str).unwrap_or("")
}

/// A volume instance's level 0 frames: where each of the grid's tiles lies.
struct Level0<'a> {
    parts: Vec<(DicomFile<'a>, Vec<Frame>)>,
    /// tile i → (part, frame) or none
    tiles: Vec<Option<(u32, u32)>>,
    frame_bytes_max: u64,
    /// the colour space of frames whose own markers state none
    photometric_declared: StoredColorSpace,
}

fn full_count_mismatch(where_: &str, frames: u64, columns: u64, rows: u64, frame_columns: u64, frame_rows: u64, tiles: u64) -> ConvertError {
    ConvertError::input(format!(
        "{where_}: Number of Frames {frames} disagrees with the matrix size: TILED_FULL {columns} × {rows} in frames of {frame_columns} × {frame_rows} needs {tiles}"
    ))
}

fn required(value: Option<u64>, name: &str, file: &str) -> Result<u64> {
    value.ok_or_else(|| ConvertError::input(format!("{file}: the volume instance has no {name}")))
}

/// Opens the files of a DICOM series (`folder` names them in messages).
pub fn open<'a>(files: Vec<DicomFile<'a>>, folder: &str, options: &ConvertOptions, rescale: Option<Rescale>) -> Result<Opened<'a>> {
    let mut warnings = Vec::new();
    let mut reads = Vec::new();
    let mut not_dicom = Vec::new();
    let mut other_classes = Vec::new();
    let single = files.len() == 1;
    for file in files {
        let head = super::source::read_bytes(file.input, 0, 132).map_err(|e| ConvertError::input(format!("cannot read {}: {e}", file.name)))?;
        if !is_dicom(&head) {
            not_dicom.push(file.name);
            continue;
        }
        let instance = read_instance(file.input, &file.name)?;
        if instance.sop_class != WSI_SOP_CLASS {
            let name = sop_class_name(&instance.sop_class);
            other_classes.push(format!(
                "{} ({}{})",
                file.name,
                if name.is_empty() { "SOP class " } else { name },
                if name.is_empty() { instance.sop_class.clone() } else { String::new() }
            ));
            continue;
        }
        reads.push(Read { file, instance });
    }
    if reads.is_empty() {
        if let Some(first) = other_classes.first() {
            return Err(ConvertError::input(format!(
                "{} is not a whole-slide image: {first} is not of the VL Whole Slide Microscopy Image Storage class ({WSI_SOP_CLASS})",
                if single { "the DICOM file" } else { folder }
            )));
        }
        return Err(ConvertError::input(format!(
            "{folder} is a directory with no DICOM file in it (a directory is read as a DICOM whole-slide series; \
             none of its files has \"DICM\" after a 128-byte preamble)"
        )));
    }
    if !not_dicom.is_empty() {
        warnings.push(format!("{} file(s) in {folder} that are not DICOM were skipped ({})", not_dicom.len(), list(&not_dicom)));
    }
    if !other_classes.is_empty() {
        warnings.push(format!("{} DICOM file(s) that are not whole-slide images were skipped: {}", other_classes.len(), list(&other_classes)));
    }
    let mut series: Vec<&str> = reads.iter().map(|r| r.instance.series_uid.as_str()).collect();
    series.sort_unstable();
    series.dedup();
    if series.len() > 1 {
        return Err(ConvertError::input(format!(
            "{folder} holds {} whole-slide series (Series Instance UIDs differ); convert one series' files at a time",
            series.len()
        )));
    }
    let (volumes, associated): (Vec<Read>, Vec<Read>) = reads.into_iter().partition(|r| image_kind(&r.instance) == "VOLUME");
    let associated: Vec<String> = associated.iter().map(|r| format!("{} ({})", image_kind(&r.instance).to_lowercase(), r.file.name)).collect();
    if volumes.is_empty() {
        return Err(ConvertError::input(format!(
            "{folder} holds no VOLUME instance (Image Type value 3), only {}",
            if associated.is_empty() { "instances of no known type".to_string() } else { associated.join(", ") }
        )));
    }
    // level 0: the largest total pixel matrix
    let area = |r: &Read| r.instance.total_columns.unwrap_or(0).saturating_mul(r.instance.total_rows.unwrap_or(0));
    let largest = volumes.iter().map(area).max().unwrap_or(0);
    let levels_in_series = {
        let mut sizes: Vec<u64> = volumes.iter().map(area).collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes.len()
    };
    let (level0, _): (Vec<Read>, Vec<Read>) = volumes.into_iter().partition(|r| area(r) == largest);
    let first = &level0[0];
    let file0 = first.file.name.clone();
    let i0 = first.instance.clone();
    let where_ = format!("{file0}: level 0");

    // the frame and the matrix
    let frame_rows = required(i0.rows, "Rows (0028,0010)", &file0)?;
    let frame_columns = required(i0.columns, "Columns (0028,0011)", &file0)?;
    let total_columns = required(i0.total_columns, "Total Pixel Matrix Columns (0048,0006)", &file0)?;
    let total_rows = required(i0.total_rows, "Total Pixel Matrix Rows (0048,0007)", &file0)?;
    let spp = i0.samples_per_pixel.unwrap_or(1);
    for (name, v) in [("Rows", frame_rows), ("Columns", frame_columns), ("Total Pixel Matrix Columns", total_columns), ("Total Pixel Matrix Rows", total_rows)] {
        if v == 0 {
            return Err(ConvertError::input(format!("{where_}: its {name} is 0")));
        }
    }
    if frame_rows > MAX_FRAME_SIDE || frame_columns > MAX_FRAME_SIDE {
        return Err(ConvertError::input(format!("{where_}: frames of {frame_columns} × {frame_rows} pixels are larger than this converter accepts")));
    }
    if total_columns.saturating_mul(total_rows) > MAX_MATRIX_PIXELS || total_columns > u64::from(u32::MAX) || total_rows > u64::from(u32::MAX) {
        return Err(ConvertError::input(format!("{where_}: a pixel matrix of {total_columns} × {total_rows} is larger than this converter accepts")));
    }
    if i0.focal_planes.unwrap_or(1) > 1 {
        return Err(ConvertError::input(format!(
            "{where_}: the slide has {} focal planes; this converter writes one 2-D image: extract one focal plane first",
            i0.focal_planes.unwrap_or(1)
        )));
    }
    if i0.optical_paths.unwrap_or(1) > 1 {
        return Err(ConvertError::input(format!(
            "{where_}: the slide has {} optical paths; this converter writes one 2-D image: extract one optical path first",
            i0.optical_paths.unwrap_or(1)
        )));
    }
    if spp != 1 && spp != 3 {
        return Err(ConvertError::input(format!("{where_}: {spp} samples per pixel; 1 or 3 are supported")));
    }
    let bits = i0.bits_allocated.unwrap_or(8);
    if bits != 8 || i0.bits_stored.unwrap_or(8) != 8 {
        return Err(ConvertError::input(format!(
            "{where_}: {}-bit samples (Bits Allocated {bits}); the jpeg codec stores 8-bit samples only",
            i0.bits_stored.unwrap_or(bits)
        )));
    }
    let declared = match (i0.photometric.as_str(), spp) {
        ("MONOCHROME2", 1) => StoredColorSpace::Grayscale,
        ("RGB", 3) => StoredColorSpace::Rgb,
        ("YBR_FULL" | "YBR_FULL_422" | "YBR_ICT" | "YBR_RCT", 3) => StoredColorSpace::Ycbcr,
        (p, _) => {
            return Err(ConvertError::input(format!(
                "{where_}: Photometric Interpretation {} with {spp} sample(s) is not supported",
                if p.is_empty() { "(none)" } else { p }
            )))
        }
    };
    let coding = coding(&i0.transfer_syntax).map_err(|m| ConvertError::input(format!("{where_}: {m}")))?;
    let grid_rows = total_rows.div_ceil(frame_rows);
    let grid_columns = total_columns.div_ceil(frame_columns);
    let tile_count = grid_rows * grid_columns;
    if tile_count > MAX_GRID_FRAMES {
        return Err(ConvertError::input(format!(
            "{where_}: a {total_columns} × {total_rows} matrix in frames of {frame_columns} × {frame_rows} is a grid of {tile_count} frames, more than this converter accepts ({MAX_GRID_FRAMES})"
        )));
    }
    let sparse = match i0.dimension_organization.as_str() {
        "TILED_SPARSE" => true,
        "TILED_FULL" => false,
        "" => !i0.positions.is_empty(),
        other => {
            return Err(ConvertError::input(format!(
                "{where_}: Dimension Organization Type {other}; TILED_FULL and TILED_SPARSE are supported"
            )))
        }
    };

    // level 0's instances (a concatenation may split it), each one's frames located
    let mut parts_in = level0;
    parts_in.sort_by_key(|r| r.instance.concatenation_offset.unwrap_or(0));
    let frames_in_level = parts_in.iter().fold(0u64, |n, r| n.saturating_add(r.instance.frames.unwrap_or(1)));
    if !sparse && frames_in_level != tile_count {
        return Err(full_count_mismatch(&where_, frames_in_level, total_columns, total_rows, frame_columns, frame_rows, tile_count));
    }
    let frame_samples = frame_rows * frame_columns * spp;
    let native_frame_bytes = frame_samples;
    let mut parts = Vec::new();
    let mut tiles: Vec<Option<(u32, u32)>> = vec![None; tile_count as usize];
    let mut next_offset = 0u64;
    let mut method = "";
    for (p, read) in parts_in.into_iter().enumerate() {
        let inst = &read.instance;
        let name = &read.file.name;
        for (what, a, b) in [
            ("Rows", inst.rows, i0.rows),
            ("Columns", inst.columns, i0.columns),
            ("Samples per Pixel", inst.samples_per_pixel, i0.samples_per_pixel),
        ] {
            if a != b {
                return Err(ConvertError::input(format!("{name}: its {what} differ from {file0}'s, in the same level")));
            }
        }
        if inst.transfer_syntax != i0.transfer_syntax || inst.photometric != i0.photometric {
            return Err(ConvertError::input(format!("{name}: its transfer syntax or photometric interpretation differs from {file0}'s, in the same level")));
        }
        let count = inst.frames.unwrap_or(1);
        if count == 0 || count > tile_count {
            return Err(ConvertError::input(format!(
                "{name}: Number of Frames {count} disagrees with its {total_columns} × {total_rows} matrix of {frame_columns} × {frame_rows} frames ({tile_count} tiles)"
            )));
        }
        let index = frames::index(read.file.input, name, inst, count, native_frame_bytes)?;
        method = index.method;
        if sparse {
            if inst.positions.len() as u64 != count {
                return Err(ConvertError::input(format!(
                    "{name}: TILED_SPARSE with {} per-frame position(s) for {count} frame(s)",
                    inst.positions.len()
                )));
            }
            for (f, position) in inst.positions.iter().enumerate() {
                let (Some(column), Some(row)) = *position else {
                    return Err(ConvertError::input(format!("{name}: frame {f} has no position in the total pixel matrix (Plane Position (Slide) Sequence)")));
                };
                let (x, y) = (column - 1, row - 1);
                let aligned = x >= 0 && y >= 0 && x as u64 % frame_columns == 0 && y as u64 % frame_rows == 0;
                if !aligned || x as u64 >= total_columns || y as u64 >= total_rows {
                    return Err(ConvertError::input(format!(
                        "{name}: frame {f} is at column {column}, row {row}, not on the {frame_columns} × {frame_rows} grid of the {total_columns} × {total_rows} matrix"
                    )));
                }
                let t = (y as u64 / frame_rows * grid_columns + x as u64 / frame_columns) as usize;
                if tiles[t].is_some() {
                    return Err(ConvertError::input(format!("{name}: frame {f} is at column {column}, row {row}, where another frame already is")));
                }
                tiles[t] = Some((p as u32, f as u32));
            }
        } else {
            let offset = inst.concatenation_offset.unwrap_or(next_offset);
            if offset != next_offset || offset + count > tile_count {
                return Err(ConvertError::input(format!(
                    "{name}: its frames start at frame {offset} of the level, where {next_offset} was expected ({tile_count} in all)"
                )));
            }
            for f in 0..count {
                tiles[(offset + f) as usize] = Some((p as u32, f as u32));
            }
            next_offset = offset + count;
        }
        parts.push((read.file, index.frames));
    }
    if !sparse && next_offset != tile_count {
        return Err(full_count_mismatch(&where_, next_offset, total_columns, total_rows, frame_columns, frame_rows, tile_count));
    }
    let spacing = i0.pixel_spacing.map(|(row, column)| PixelSize { x: column * 1000.0, y: row * 1000.0, source: "DICOM Pixel Spacing" });
    let identifiers = options.flag("dicomIdentifiers")?;
    let summary = source_summary(&i0, &where_, method, levels_in_series, &associated, spacing, identifiers, sparse);
    let grid = TileGrid { rows: grid_rows, columns: grid_columns, planes: 1, count: tile_count, kind: "frame" };
    let level = Level0 {
        parts,
        tiles,
        // a JPEG frame is at most its raw size and some (tables, markers), here twice and 64 KiB
        frame_bytes_max: frame_samples * 2 + (1 << 16),
        photometric_declared: declared,
    };
    let empty = level.tiles.iter().filter(|t| t.is_none()).count() as u64;
    let Some(first_tile) = level.tiles.iter().position(Option::is_some) else {
        return Err(ConvertError::input(format!("{where_}: it holds no frame")));
    };
    if empty > 0 {
        warnings.push(format!("{where_}: {empty} of {tile_count} frames are absent (TILED_SPARSE); their chunks are left empty (fill value 0)"));
    }
    if let Some(w) = skipped_note(&associated) {
        warnings.push(w);
    }
    if rescale.is_some() {
        return Err(ConvertError::argument(format!("rescale applies to 16-bit input; {where_} is 8-bit")));
    }
    match coding {
        Coding::Baseline | Coding::Extended => {
            let spec = TileSpec {
                file: file0.clone(),
                label: "level 0".to_string(),
                container: "DICOM",
                image_noun: "image",
                height: total_rows,
                width: total_columns,
                tile_height: frame_rows,
                tile_width: frame_columns,
                grid,
                planes: 1,
                components: spp as usize,
                first: first_tile as u64,
                empty,
                pixel: spacing,
                summary,
                copied_key: "copied_from_dicom_frames",
                format: "dicom",
                attributes: identifiers.then(|| ("dicom".to_string(), identifier_members(&i0))).into_iter().collect(),
            };
            let job = TileJob::prepare(Box::new(level), spec, options, &mut warnings)?;
            Ok(Opened::Tiles(Box::new(job), warnings))
        }
        _ => {
            if declared == StoredColorSpace::Ycbcr && coding != Coding::Jpeg2000 {
                return Err(ConvertError::input(format!(
                    "{where_}: {} frames in Photometric Interpretation {} are not supported (RGB or MONOCHROME2 are)",
                    if coding == Coding::Rle { "RLE" } else { "uncompressed" },
                    i0.photometric
                )));
            }
            // (each frame is decoded whole: the tile-copy path's bound on a tile's size)
            check_tile_size(&where_, frame_columns, frame_rows, "frames")?;
            let info = ImageInfo {
                height: total_rows as u32,
                width: total_columns as u32,
                channels: spp as usize,
                format: "dicom",
                planes: false,
                pixel_size: spacing.map(|p| p.x),
                summary: Some(summary),
            };
            let source = rows::FrameRows::new(level.parts, level.tiles, grid, (frame_rows, frame_columns), spp as usize, coding_name(coding), info, where_, warnings);
            Ok(Opened::Rows(Box::new(source)))
        }
    }
}

fn coding_name(coding: Coding) -> rows::FrameCoding {
    match coding {
        Coding::Jpeg2000 => rows::FrameCoding::Jpeg2000,
        Coding::Rle => rows::FrameCoding::Rle,
        _ => rows::FrameCoding::Native,
    }
}

fn list(names: &[String]) -> String {
    let mut out: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
    if names.len() > 3 {
        out.push("…");
    }
    out.join(", ")
}

fn skipped_note(associated: &[String]) -> Option<String> {
    (!associated.is_empty()).then(|| format!("not converted: {} (the store holds the slide's volume only)", associated.join(", ")))
}

/// The colour space a JPEG frame's own markers state (Adobe, JFIF, 'R','G','B' ids, one
/// component) by the decoder's rules, or None where it states none (and they would fall
/// back to YCbCr).
fn stated_color(stream: &[u8]) -> Option<StoredColorSpace> {
    let header = crate::markers::read_header(stream).ok()?;
    let states = header.components.len() == 1 || header.adobe_transform.is_some() || header.jfif || header.ids_are_rgb();
    states.then(|| crate::decode::stored_color_space(&header).ok()).flatten()
}

impl TileInput for Level0<'_> {
    fn read(&self, i: u64, label: &str) -> Result<Option<Vec<u8>>> {
        let Some((part, f)) = self.tiles[i as usize] else {
            return Ok(None);
        };
        let (file, frames) = &self.parts[part as usize];
        let bytes = read_frame(file.input, &frames[f as usize], self.frame_bytes_max)
            .map(without_padding)
            .map_err(|m| ConvertError::input(format!("{label}: {m}")))?;
        if stated_color(&bytes).is_some() {
            // the frame says what it is: copied as it is
            return Ok(Some(bytes));
        }
        crate::tile_stream::complete_tile_stream(&bytes, None, Some(self.photometric_declared))
            .map(Some)
            .map_err(|e| ConvertError::input(format!("{label}: {e}")))
    }
}

#[allow(clippy::too_many_arguments)]
fn source_summary(
    i0: &Instance,
    level: &str,
    method: &str,
    levels: usize,
    associated: &[String],
    pixel: Option<PixelSize>,
    identifiers: bool,
    sparse: bool,
) -> V {
    let s = |t: &str| V::String(t.to_string());
    let mut members = vec![
        ("format".to_string(), s("dicom")),
        ("page".into(), s(&format!("{level}: {} × {} in frames of {} × {}", i0.total_columns.unwrap_or(0), i0.total_rows.unwrap_or(0), i0.columns.unwrap_or(0), i0.rows.unwrap_or(0)))),
        ("transferSyntax".into(), s(&i0.transfer_syntax)),
        ("dimensionOrganization".into(), s(if sparse { "TILED_SPARSE" } else { "TILED_FULL" })),
        ("frameIndex".into(), s(method)),
        ("volumeLevels".into(), V::Number(levels as f64)),
        ("notConverted".into(), V::Array(associated.iter().map(|a| s(a)).collect())),
        (
            "pixelSize".into(),
            pixel.map_or(V::Null, |p| V::Object(vec![("x".into(), V::Number(p.x)), ("y".into(), V::Number(p.y)), ("source".into(), s(p.source))])),
        ),
    ];
    if identifiers {
        members.push(("identifiers".into(), identifier_members(i0)));
    }
    V::Object(members)
}

/// The slide's identifiers, written only when asked (`dicomIdentifiers`); patient data never.
fn identifier_members(i0: &Instance) -> V {
    let s = |t: &str| V::String(t.to_string());
    V::Object(vec![
        ("containerIdentifier".into(), s(&i0.container_id)),
        ("studyInstanceUid".into(), s(&i0.study_uid)),
        ("seriesInstanceUid".into(), s(&i0.series_uid)),
        ("accessionNumber".into(), s(&i0.accession)),
    ])
}
