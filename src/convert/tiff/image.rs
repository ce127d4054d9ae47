//! Which pages of a TIFF make the image to convert, and what its description says.
//!
//! Usually the first page (its SubIFDs and the reduced-resolution pages after it are the
//! file's own pyramid, which the converter makes anew). But OME-TIFF and ImageJ files store
//! each channel of a multi-channel image as a page of its own: converting only the first
//! page would silently drop every other channel. Such pages are joined into one page with
//! planar (separate) samples, one plane per channel, stored as a `c` axis of grayscale
//! chunks; z-stacks and time series are refused by name.

use super::super::error::{ConvertError, Result};
use super::super::source::PixelSize;
use super::super::stack::{ome_color, time_unit as time_unit_name, ChannelInfo, Spacing, Stack};
use super::ifd::{Page, Tiff};
use crate::ConfigValue as V;

/// The first start tag `<[prefix:]Name …>` in `text`.
fn start_tag<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    find_start_tag(text, name).map(|(_, tag)| tag)
}

/// The first start tag `<[prefix:]Name …>` in `text`, and where it starts.
fn find_start_tag<'t>(text: &'t str, name: &str) -> Option<(usize, &'t str)> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    let mut from = 0;
    while let Some(at) = text[from..].find('<') {
        let start = from + at;
        let rest = &text[start + 1..];
        let end = rest.find(|c: char| !is_word(c));
        let word = &rest[..end.unwrap_or(rest.len())];
        if end.is_some() && word.rsplit(':').next() == Some(name) {
            let close = text[start..].find('>').map_or(text.len(), |e| start + e + 1);
            return Some((start, &text[start..close]));
        }
        from = start + 1;
    }
    None
}

/// The value of ` name="…"` in a start tag.
pub fn attribute<'t>(tag: &'t str, name: &str) -> Option<&'t str> {
    let mut from = 0;
    while let Some(at) = tag[from..].find(name) {
        let start = from + at;
        let before = tag.as_bytes().get(start.wrapping_sub(1)).copied();
        let rest = &tag[start + name.len()..];
        if start > 0 && before.is_some_and(|c| !(c.is_ascii_alphanumeric() || c == b'_')) && rest.starts_with("=\"") {
            let value = &rest[2..];
            return value.find('"').map(|end| &value[..end]);
        }
        from = start + name.len();
    }
    None
}

/// The first image's `<Pixels …>` start tag in an OME-XML description.
pub fn ome_pixels(description: &str) -> Option<&str> {
    start_tag(description, "Pixels")
}

/// The first image's dimensions from an OME-XML or ImageJ description.
pub struct Dimensions {
    /// channels stored as pages (an RGB channel is one page of three samples)
    pub c: u64,
    pub z: u64,
    pub t: u64,
    pub source: &'static str,
    /// the order of the planes' pages, fastest first: "ZCT", "CZT", …
    pub order: String,
    /// OME-XML `TiffData` elements: which IFDs hold which planes (empty: every plane in order)
    pub tiff_data: Vec<TiffData>,
    pub z_spacing: Option<Spacing>,
    pub t_increment: Option<Spacing>,
    pub channels: Vec<ChannelInfo>,
    /// OME-XML's Channel gives no SamplesPerPixel (`c` is then SizeC as it stands)
    pub samples_unstated: bool,
}

/// An OME-XML `<TiffData IFD FirstZ FirstC FirstT PlaneCount>`: `count` planes (None: all)
/// from plane (z, c, t) on, in the IFDs from `ifd` on.
#[derive(Clone, Debug, PartialEq)]
pub struct TiffData {
    pub ifd: u64,
    pub first: (u64, u64, u64),
    pub count: Option<u64>,
    /// the file a `<UUID FileName=…>` names
    pub file_name: Option<String>,
}

/// The part of an OME-XML description inside the first image's `<Pixels>` element.
fn pixels_element(description: &str) -> &str {
    let Some((at, _)) = find_start_tag(description, "Pixels") else { return "" };
    let rest = &description[at..];
    let end = rest.find("Pixels>").map_or(rest.len(), |e| e + 7);
    &rest[..end]
}

/// Every start tag `<[prefix:]Name …>` in `text`, in order, with the offset just past it.
fn start_tags<'t>(text: &'t str, name: &str) -> Vec<(usize, &'t str)> {
    let mut tags = Vec::new();
    let mut from = 0;
    while let Some((at, tag)) = find_start_tag(&text[from..], name) {
        from += at + tag.len();
        tags.push((from, tag));
    }
    tags
}

/// A number attribute, if the tag has it and it is a whole number.
fn count_attribute(tag: &str, name: &str) -> Option<u64> {
    attribute(tag, name).and_then(|v| v.trim().parse().ok())
}

/// A positive length in `unit` (µm unless given), as micrometres.
fn spacing_micrometres(value: Option<&str>, unit: Option<&str>) -> Option<Spacing> {
    let value = value.map_or(f64::NAN, js_number);
    let factor = micrometres_per(unit.unwrap_or("µm"))?;
    (value.is_finite() && value > 0.0).then_some(Spacing { value: value * factor, unit: "micrometer" })
}

/// A positive time in `unit` (seconds unless given), with the unit's OME-Zarr name.
fn time_spacing(value: Option<&str>, unit: Option<&str>) -> Option<Spacing> {
    let value = value.map_or(f64::NAN, js_number);
    let unit = time_unit_name(unit.unwrap_or("s"))?;
    (value.is_finite() && value > 0.0).then_some(Spacing { value, unit })
}

fn digits(v: Option<&str>) -> u64 {
    v.and_then(|s| {
        let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        s[..end].parse().ok()
    })
    .unwrap_or(1)
}

pub fn image_dimensions(description: Option<&str>) -> Option<Dimensions> {
    let description = description?;
    if description.contains("<OME") {
        let pixels = ome_pixels(description)?;
        let element = pixels_element(description);
        let channel_tags: Vec<&str> = start_tags(element, "Channel").into_iter().map(|(_, tag)| tag).collect();
        let channel = channel_tags.first().copied().unwrap_or("");
        // SizeC counts samples: an RGB channel (SamplesPerPixel 3) is one page of three samples
        let samples = digits(attribute(channel, "SamplesPerPixel")).max(1);
        let order = attribute(pixels, "DimensionOrder").unwrap_or("XYZCT");
        let tiff_data = start_tags(element, "TiffData")
            .into_iter()
            .map(|(at, tag)| {
                // a <UUID FileName=…> child, before the element closes
                let inside = if tag.ends_with("/>") { "" } else { &element[at..at + element[at..].find("TiffData>").unwrap_or(0)] };
                TiffData {
                    ifd: count_attribute(tag, "IFD").unwrap_or(0),
                    first: (
                        count_attribute(tag, "FirstZ").unwrap_or(0),
                        count_attribute(tag, "FirstC").unwrap_or(0),
                        count_attribute(tag, "FirstT").unwrap_or(0),
                    ),
                    count: count_attribute(tag, "PlaneCount").or(attribute(tag, "IFD").map(|_| 1)),
                    file_name: start_tag(inside, "UUID").and_then(|u| attribute(u, "FileName")).map(str::to_string),
                }
            })
            .collect();
        let t_increment = time_spacing(attribute(pixels, "TimeIncrement"), attribute(pixels, "TimeIncrementUnit"));
        return Some(Dimensions {
            c: (digits(attribute(pixels, "SizeC")) / samples).max(1),
            z: digits(attribute(pixels, "SizeZ")),
            t: digits(attribute(pixels, "SizeT")),
            source: "OME-XML",
            samples_unstated: attribute(channel, "SamplesPerPixel").is_none(),
            order: order.trim_start_matches("XY").to_string(),
            tiff_data,
            z_spacing: spacing_micrometres(attribute(pixels, "PhysicalSizeZ"), attribute(pixels, "PhysicalSizeZUnit")),
            t_increment,
            channels: channel_tags
                .iter()
                .map(|tag| ChannelInfo {
                    name: attribute(tag, "Name").filter(|n| !n.is_empty()).map(xml_text),
                    color: attribute(tag, "Color").and_then(ome_color),
                })
                .collect(),
        });
    }
    if description.starts_with("ImageJ=") {
        let line = |name: &str| imagej_value(description, name);
        let value = |name: &str| line(name).map_or(1, |v| digits(Some(v)));
        let unit = imagej_unit(description);
        let z_spacing = spacing_micrometres(line("spacing"), unit);
        let t_increment = time_spacing(line("finterval"), line("tunit"));
        return Some(Dimensions {
            c: value("channels"),
            z: value("slices"),
            t: value("frames"),
            source: "the ImageJ description",
            samples_unstated: false,
            // ImageJ's hyperstacks: channels fastest, then slices, then frames
            order: "CZT".into(),
            tiff_data: Vec::new(),
            z_spacing,
            t_increment,
            channels: Vec::new(),
        });
    }
    None
}

/// An attribute's text with XML's predefined entities replaced.
fn xml_text(text: &str) -> String {
    text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&apos;", "'").replace("&amp;", "&")
}

/// The image to convert: its first plane's page (the first page, or the first image's
/// channel pages joined as planes), and for a stack the pages of every plane.
pub struct Chosen {
    pub page: Page,
    pub stack: Stack,
    /// per plane, time points outermost, the page index of each channel
    pub planes: Vec<Vec<usize>>,
}

/// Chooses the pages to convert. `warnings` receives a warning for full-resolution pages
/// left out of a file that does not say what they are.
pub fn choose(tiff: &Tiff, warnings: &mut Vec<String>) -> Result<Chosen> {
    let file = &tiff.file;
    let first = &tiff.pages[0];
    let Some(d) = image_dimensions(first.description.as_deref()) else {
        let more: Vec<&Page> = tiff.pages[1..]
            .iter()
            .filter(|p| p.subfile_type & 1 == 0 && p.width == first.width && p.height == first.height)
            .collect();
        if !more.is_empty() {
            let names: Vec<&str> = more.iter().take(3).map(|p| p.label.as_str()).collect();
            warnings.push(format!(
                "{file}: {} more full-resolution page(s) of the same size ({}{}) are not converted: the file does not say \
                 they are channels, z planes or time points (no OME-XML or ImageJ description); only page 0 is",
                more.len(),
                names.join(", "),
                if more.len() > 3 { ", …" } else { "" }
            ));
        }
        return Ok(Chosen { page: first.clone(), stack: Stack::default(), planes: vec![vec![0]] });
    };
    let too_many = |what: &str, n: u64| {
        ConvertError::input(format!("{file}: {} describes {n} {what}, more than the {} IFDs this converter reads", d.source, super::ifd::MAX_PAGES))
    };
    for (n, what) in [(d.c, "channels"), (d.z, "z planes"), (d.t, "time points")] {
        if n > super::ifd::MAX_PAGES as u64 {
            return Err(too_many(what, n));
        }
    }
    let total = d.c * d.z * d.t;
    if total > super::ifd::MAX_PAGES as u64 {
        return Err(too_many("planes", total));
    }
    let mut d = d;
    let spp = first.samples_per_pixel.max(1);
    if d.samples_unstated && spp > 1 && d.c % spp == 0 {
        // SizeC counts samples, and the Channel does not say how many a page holds: the page does
        d.c /= spp;
    }
    let planes = plane_pages(tiff, &d)?;
    let stack = Stack {
        t: d.t as u32,
        z: d.z as u32,
        z_spacing: d.z_spacing.clone(),
        t_increment: d.t_increment.clone(),
        channels: if d.c > 1 { d.channels.clone() } else { Vec::new() },
    };
    let page = join_pages(tiff, &planes[0], d.source)?;
    // every plane's pages must be alike for the planes to be one array
    for (plane, at) in planes.iter().zip(stack.planes()).skip(1) {
        for &p in plane {
            check_alike(tiff, &tiff.pages[p], first, &format!("the page of plane t={}, z={}", at.t, at.z))?;
        }
    }
    Ok(Chosen { page, stack, planes })
}

/// Per plane (time points outermost, then z), the page index of each channel, from the
/// description's order and `TiffData` mapping, checked against the IFDs the file has.
fn plane_pages(tiff: &Tiff, d: &Dimensions) -> Result<Vec<Vec<usize>>> {
    let file = &tiff.file;
    let ifds = tiff.pages.len() as u64;
    let total = d.c * d.z * d.t;
    // the stride of z, c and t in the description's plane order (its letters, fastest first)
    let mut strides = (0u64, 0u64, 0u64);
    let mut stride = 1;
    for letter in d.order.chars().chain("ZCT".chars()) {
        let slot = match letter {
            'Z' => &mut strides.0,
            'C' => &mut strides.1,
            'T' => &mut strides.2,
            _ => continue,
        };
        if *slot == 0 {
            *slot = stride;
            stride *= match letter {
                'Z' => d.z,
                'C' => d.c,
                _ => d.t,
            };
        }
    }
    let order_index = |(z, c, t): (u64, u64, u64)| z * strides.0 + c * strides.1 + t * strides.2;
    // by order index: the IFD holding that plane
    let mut ifd_of: Vec<Option<u64>> = vec![None; total as usize];
    if d.tiff_data.is_empty() {
        if ifds < total {
            return Err(ConvertError::input(format!(
                "{file}: {} describes {} z-plane(s) × {} channel(s) × {} time point(s) = {total} planes, but the file has {ifds} IFD(s)",
                d.source, d.z, d.c, d.t
            )));
        }
        ifd_of.iter_mut().enumerate().for_each(|(i, slot)| *slot = Some(i as u64));
    }
    let own_name = file.rsplit(['/', '\\']).next().unwrap_or(file);
    for td in &d.tiff_data {
        if let Some(name) = td.file_name.as_deref().filter(|n| *n != own_name) {
            return Err(ConvertError::input(format!(
                "{file}: the OME-XML puts planes in another file ({name}); a multi-file OME-TIFF is not converted: \
                 join it into one file first (e.g. with bfconvert)"
            )));
        }
        let (z, c, t) = td.first;
        if z >= d.z || c >= d.c || t >= d.t {
            return Err(ConvertError::input(format!(
                "{file}: a TiffData's first plane (Z {z}, C {c}, T {t}) lies outside the image's {} × {} × {} planes",
                d.z, d.c, d.t
            )));
        }
        let start = order_index(td.first);
        let count = td.count.unwrap_or(total - start);
        if start + count > total {
            return Err(ConvertError::input(format!(
                "{file}: a TiffData maps {count} planes from plane {start} on, past the image's {total} planes"
            )));
        }
        let last = td.ifd.saturating_add(count.saturating_sub(1));
        if count > 0 && last >= ifds {
            return Err(ConvertError::input(format!(
                "{file}: a TiffData points at IFD {last}, past the last IFD (the file has {ifds}: 0–{})",
                ifds - 1
            )));
        }
        for k in 0..count {
            ifd_of[(start + k) as usize] = Some(td.ifd + k);
        }
    }
    let mut planes = Vec::with_capacity((d.t * d.z) as usize);
    for t in 0..d.t {
        for z in 0..d.z {
            let channels = (0..d.c).map(|c| {
                ifd_of[order_index((z, c, t)) as usize].map(|ifd| ifd as usize).ok_or_else(|| {
                    ConvertError::input(format!("{file}: the OME-XML's TiffData elements give no IFD for plane Z {z}, C {c}, T {t}"))
                })
            });
            planes.push(channels.collect::<Result<Vec<usize>>>()?);
        }
    }
    Ok(planes)
}

/// Refuses `page` (a channel or plane) unless it is stored like `first`.
fn check_alike(tiff: &Tiff, page: &Page, first: &Page, what: &str) -> Result<()> {
    let same = page.width == first.width
        && page.height == first.height
        && page.samples_per_pixel == first.samples_per_pixel
        && page.tile_width == first.tile_width
        && page.tile_height == first.tile_height
        && page.tiled == first.tiled
        && page.compression == first.compression
        && page.sample_format == first.sample_format
        && page.bits_per_sample == first.bits_per_sample
        && page.predictor == first.predictor
        && page.photometric == first.photometric
        && page.planar == first.planar;
    if !same {
        return Err(ConvertError::input(format!(
            "{}: {}, {what}, differs from page 0 ({} against {}): the pages of an image's channels and planes must be \
             stored alike to be one array",
            tiff.file,
            page.label,
            describe_page(page),
            describe_page(first)
        )));
    }
    Ok(())
}

/// One plane's page: its single page, or its channel pages joined as planar samples.
pub fn join_pages(tiff: &Tiff, indices: &[usize], source: &str) -> Result<Page> {
    let first = &tiff.pages[indices[0]];
    if indices.len() == 1 {
        return Ok(first.clone());
    }
    if first.samples_per_pixel != 1 {
        return Err(ConvertError::input(format!(
            "{}: {} describes {} channels of {} samples each; channels stored as pages must have one sample each",
            tiff.file,
            source,
            indices.len(),
            first.samples_per_pixel
        )));
    }
    join_channel_pages(tiff, indices)
}

fn join_channel_pages(tiff: &Tiff, indices: &[usize]) -> Result<Page> {
    let file = &tiff.file;
    let first = &tiff.pages[indices[0]];
    let c = indices.len();
    let pages: Vec<&Page> = indices.iter().map(|&i| &tiff.pages[i]).collect();
    for (i, p) in pages.iter().enumerate() {
        check_alike(tiff, p, first, &format!("channel {i} of {c}"))?;
    }
    // one block per tile (or strip) of each page, in channel order: what planar (separate)
    // samples would list
    let per_page = (first.height.div_ceil(first.tile_height.max(1)) * first.width.div_ceil(first.tile_width.max(1))) as usize;
    let mut offsets = Vec::with_capacity(per_page * c);
    let mut counts = Vec::with_capacity(per_page * c);
    for p in &pages {
        if p.offsets.len() < per_page || p.byte_counts.len() < per_page {
            return Err(ConvertError::input(format!(
                "{file}: {}: {per_page} {}s needed but {} offsets given",
                p.label,
                if p.tiled { "tile" } else { "strip" },
                p.offsets.len().min(p.byte_counts.len())
            )));
        }
        offsets.extend_from_slice(&p.offsets[..per_page]);
        counts.extend_from_slice(&p.byte_counts[..per_page]);
    }
    let mut joined = first.clone();
    joined.label = match indices.windows(2).all(|w| w[1] == w[0] + 1) {
        true => format!("pages {}–{} ({c} channels)", indices[0], indices[c - 1]),
        false => format!("pages {} ({c} channels)", indices.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    };
    joined.samples_per_pixel = c as u64;
    joined.bits_per_sample = pages.iter().map(|p| p.bits_per_sample[0]).collect();
    joined.planar = 2;
    joined.photometric = Some(first.photometric.unwrap_or(1));
    joined.offsets = offsets;
    joined.byte_counts = counts;
    Ok(joined)
}


fn micrometres_per(unit: &str) -> Option<f64> {
    Some(match unit {
        "µm" | "um" | "μm" | "micrometer" | "micron" => 1.0,
        "nm" | "nanometer" => 1e-3,
        "mm" | "millimeter" => 1e3,
        "cm" | "centimeter" => 1e4,
        "m" | "meter" => 1e6,
        "Å" | "angstrom" => 1e-4,
        "pm" => 1e-6,
        _ => return None,
    })
}

/// JavaScript's `Number(text)` for the decimal forms a description holds (NaN otherwise).
fn js_number(text: &str) -> f64 {
    let t = text.trim();
    if t.is_empty() {
        return 0.0;
    }
    t.parse().unwrap_or(f64::NAN)
}

/// The pixel size from OME-XML (PhysicalSizeX/Y with units) or an Aperio description (MPP).
pub fn pixel_size_from_description(description: Option<&str>) -> Option<PixelSize> {
    let description = description?;
    if description.contains("<OME") && description.contains("PhysicalSizeX") {
        let pixels = ome_pixels(description).unwrap_or("");
        let size = |axis: &str| {
            let value = attribute(pixels, &format!("PhysicalSize{axis}")).map_or(f64::NAN, js_number);
            let unit = attribute(pixels, &format!("PhysicalSize{axis}Unit")).unwrap_or("µm");
            let factor = micrometres_per(unit)?;
            (value.is_finite() && value > 0.0).then_some(value * factor)
        };
        let x = size("X")?;
        let y = size("Y").unwrap_or(x);
        return Some(PixelSize { x, y, source: "OME-XML PhysicalSizeX/Y" });
    }
    if description.starts_with("Aperio") {
        let at = description.find("MPP")?;
        // "| MPP = 0.4990": the field after a bar
        let before = description[..at].trim_end();
        if !before.ends_with('|') {
            return None;
        }
        let rest = description[at + 3..].trim_start().strip_prefix('=')?.trim_start();
        let end = rest.find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))).unwrap_or(rest.len());
        let mpp = js_number(&rest[..end]);
        if mpp.is_finite() && mpp > 0.0 && end > 0 {
            return Some(PixelSize { x: mpp, y: mpp, source: "Aperio MPP" });
        }
    }
    None
}

/// An ImageJ description's `name=value` line's value.
fn imagej_value<'d>(description: &'d str, name: &str) -> Option<&'d str> {
    description.lines().find(|l| l.starts_with(name) && l[name.len()..].starts_with('=')).map(|l| l[name.len() + 1..].trim())
}

/// An ImageJ description's length unit (`unit=`), its escaped µ read as µ.
fn imagej_unit(description: &str) -> Option<&str> {
    imagej_value(description, "unit").map(|u| if u == "micron" || u == "\\u00B5m" { "µm" } else { u })
}

/// A page's pixel size in micrometres: from its description (OME-XML, Aperio), else, in an
/// ImageJ file, from XResolution/YResolution, pixels per its `unit=` (ImageJ writes
/// ResolutionUnit none). Other TIFFs' resolution tags are not taken: writers fill them with
/// defaults (libvips: 10 pixels per centimetre; many: 72 per inch) that are no pixel size.
pub fn pixel_size(page: &Page) -> Option<PixelSize> {
    if let Some(size) = pixel_size_from_description(page.description.as_deref()) {
        return Some(size);
    }
    let (x, y) = page.resolution?;
    let description = page.description.as_deref().filter(|d| d.starts_with("ImageJ="))?;
    let per_unit = micrometres_per(imagej_unit(description)?)?;
    let (x, y) = (per_unit / x, per_unit / y);
    (x.is_finite() && y.is_finite() && x > 0.0 && y > 0.0).then_some(PixelSize { x, y, source: "ImageJ XResolution/YResolution and unit" })
}

/// "W × H, N sample(s) of B bits, compression, photometric", for summaries.
pub fn describe_page(page: &Page) -> String {
    let bits: Vec<String> = page.bits_per_sample.iter().map(u64::to_string).collect();
    format!(
        "{} × {}, {} sample(s) of {} bits, {}, {}",
        page.width,
        page.height,
        page.samples_per_pixel,
        bits.join("/"),
        super::ifd::compression_name(page.compression),
        super::ifd::photometric_name(page.photometric)
    )
}

/// Refuses a page whose samples are not uint8, naming their type.
pub fn check_uint8(page: &Page, where_: &str) -> Result<()> {
    if page.sample_format != 1 || page.bits_per_sample.iter().any(|&b| b != 8) {
        return Err(ConvertError::input(format!(
            "{where_}: the samples are {}; the jpeg codec stores uint8 (8-bit) samples only",
            dtype_name(page)
        )));
    }
    Ok(())
}

/// "uint8", "int16", "float32": a page's sample type, for messages.
pub fn dtype_name(page: &Page) -> String {
    let bits = page.bits_per_sample[0];
    match page.sample_format {
        3 => format!("float{bits}"),
        2 => format!("int{bits}"),
        _ => format!("uint{bits}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ome_dimensions_and_pixel_size() {
        let d = r#"<?xml version="1.0"?><OME><Image><ome:Pixels DimensionOrder="XYCZT" SizeC="6" SizeZ="1" SizeT="1" PhysicalSizeX="0.5" PhysicalSizeXUnit="nm"><Channel SamplesPerPixel="3"/></ome:Pixels></Image></OME>"#;
        let dims = image_dimensions(Some(d)).unwrap();
        assert_eq!((dims.c, dims.z, dims.t), (2, 1, 1));
        let p = pixel_size_from_description(Some(d)).unwrap();
        assert!((p.x - 5e-4).abs() < 1e-12 && p.x == p.y);
        assert!(ome_pixels("<OME><PixelsX a='1'/></OME>").is_none());
    }

    #[test]
    fn bio_formats_tiff_data_one_per_plane() {
        // Bio-Formats writes a TiffData per plane, with a UUID naming the file
        let d = r#"<OME><Image><Pixels DimensionOrder="XYCZT" SizeC="2" SizeZ="3" SizeT="1" PhysicalSizeZ="500" PhysicalSizeZUnit="nm" TimeIncrement="250" TimeIncrementUnit="ms"><Channel Name="A &amp; B" Color="-16776961" SamplesPerPixel="1"/><Channel SamplesPerPixel="1"><LightPath/></Channel><TiffData FirstC="1" FirstT="0" FirstZ="2" IFD="5" PlaneCount="1"><UUID FileName="x.ome.tif">urn:uuid:1</UUID></TiffData><TiffData IFD="0" PlaneCount="5"/></Pixels></Image></OME>"#;
        let dims = image_dimensions(Some(d)).unwrap();
        assert_eq!((dims.c, dims.z, dims.t, dims.order.as_str()), (2, 3, 1, "CZT"));
        assert_eq!(dims.tiff_data[0], TiffData { ifd: 5, first: (2, 1, 0), count: Some(1), file_name: Some("x.ome.tif".into()) });
        assert_eq!(dims.tiff_data[1], TiffData { ifd: 0, first: (0, 0, 0), count: Some(5), file_name: None });
        assert_eq!(dims.z_spacing, Some(Spacing { value: 0.5, unit: "micrometer" }));
        assert_eq!(dims.t_increment, Some(Spacing { value: 250.0, unit: "millisecond" }));
        assert_eq!(dims.channels[0], ChannelInfo { name: Some("A & B".into()), color: Some("FF0000".into()) });
        assert_eq!(dims.channels[1], ChannelInfo::default());
    }

    #[test]
    fn imagej_and_aperio() {
        let d = image_dimensions(Some("ImageJ=1.11a\nimages=6\nchannels=3\nslices=2\n")).unwrap();
        assert_eq!((d.c, d.z, d.t), (3, 2, 1));
        let p = pixel_size_from_description(Some("Aperio Image Library v12\n46000x32914 -> 11500x8228 - |AppMag = 20|MPP = 0.4990|X=1")).unwrap();
        assert_eq!(p.x, 0.499);
        assert!(pixel_size_from_description(Some("Aperio |MPP = x")).is_none());
    }
}

/// What the summary says of the source: its format, the page read and the pixel size.
pub fn source_summary(tiff: &Tiff, page: &Page, pixel: Option<PixelSize>) -> V {
    let num = |n: f64| V::Number(n);
    V::Object(vec![
        ("format".into(), V::String(tiff.format().into())),
        ("page".into(), V::String(describe_page(page))),
        (
            "pixelSize".into(),
            pixel.map_or(V::Null, |p| {
                V::Object(vec![("x".into(), num(p.x)), ("y".into(), num(p.y)), ("source".into(), V::String(p.source.into()))])
            }),
        ),
    ])
}
