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
use super::ifd::{Page, Tiff};
use crate::ConfigValue as V;

/// The first start tag `<[prefix:]Name …>` in `text`.
fn start_tag<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    let mut from = 0;
    while let Some(at) = text[from..].find('<') {
        let start = from + at;
        let rest = &text[start + 1..];
        let end = rest.find(|c: char| !is_word(c));
        let word = &rest[..end.unwrap_or(rest.len())];
        if end.is_some() && word.rsplit(':').next() == Some(name) {
            let close = text[start..].find('>').map_or(text.len(), |e| start + e + 1);
            return Some(&text[start..close]);
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
    pub c: u64,
    pub z: u64,
    pub t: u64,
    pub source: &'static str,
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
        let at = description.find(pixels).unwrap_or(0);
        let channel = start_tag(&description[at..], "Channel").unwrap_or("");
        // SizeC counts samples: an RGB channel (SamplesPerPixel 3) is one page of three samples
        let samples = digits(attribute(channel, "SamplesPerPixel")).max(1);
        return Some(Dimensions {
            c: (digits(attribute(pixels, "SizeC")) / samples).max(1),
            z: digits(attribute(pixels, "SizeZ")),
            t: digits(attribute(pixels, "SizeT")),
            source: "OME-XML",
        });
    }
    if description.starts_with("ImageJ=") {
        let value = |name: &str| {
            let line = description.lines().find(|l| l.starts_with(name) && l[name.len()..].starts_with('='));
            line.map_or(1, |l| digits(Some(&l[name.len() + 1..])))
        };
        return Some(Dimensions { c: value("channels"), z: value("slices"), t: value("frames"), source: "the ImageJ description" });
    }
    None
}

/// The page to convert: the first page, or the first image's channel pages joined as
/// planes. `warnings` receives a warning for full-resolution pages left out of a file that
/// does not say what they are.
pub fn image_page(tiff: &Tiff, warnings: &mut Vec<String>) -> Result<Page> {
    let file = &tiff.file;
    let first = &tiff.pages[0];
    let dims = image_dimensions(first.description.as_deref());
    if let Some(d) = &dims {
        if d.z * d.t > 1 {
            return Err(ConvertError::input(format!(
                "{file}: {} describes {} z-plane(s) × {} time point(s) × {} channel(s); this converter writes one 2-D image \
                 with its channels: extract a plane first (e.g. with tifffile or bfconvert)",
                d.source, d.z, d.t, d.c
            )));
        }
        if d.c > 1 && first.samples_per_pixel == 1 {
            return join_channel_pages(tiff, d);
        }
    } else {
        let more: Vec<&Page> = tiff.pages[1..]
            .iter()
            .filter(|p| p.subfile_type & 1 == 0 && p.width == first.width && p.height == first.height)
            .collect();
        if !more.is_empty() {
            let names: Vec<&str> = more.iter().take(3).map(|p| p.label.as_str()).collect();
            warnings.push(format!(
                "{file}: {} more full-resolution page(s) of the same size ({}{}) are not converted: the file does not say \
                 they are channels (no OME-XML or ImageJ description); only page 0 is",
                more.len(),
                names.join(", "),
                if more.len() > 3 { ", …" } else { "" }
            ));
        }
    }
    Ok(first.clone())
}

fn join_channel_pages(tiff: &Tiff, dims: &Dimensions) -> Result<Page> {
    let file = &tiff.file;
    let first = &tiff.pages[0];
    let c = dims.c as usize;
    if tiff.pages.len() < c {
        return Err(ConvertError::input(format!(
            "{file}: {} describes {c} channels stored as pages, but the file has {} page(s)",
            dims.source,
            tiff.pages.len()
        )));
    }
    let pages = &tiff.pages[..c];
    let same = |p: &Page| {
        p.width == first.width
            && p.height == first.height
            && p.samples_per_pixel == 1
            && p.tile_width == first.tile_width
            && p.tile_height == first.tile_height
            && p.tiled == first.tiled
            && p.compression == first.compression
            && p.sample_format == first.sample_format
            && p.bits_per_sample[0] == first.bits_per_sample[0]
            && p.predictor == first.predictor
    };
    if let Some(odd) = pages.iter().find(|p| !same(p)) {
        return Err(ConvertError::input(format!(
            "{file}: {}, channel {} of {c}, differs from page 0 (size, tiling, compression or sample type): channel pages \
             must be alike to be stored as one array",
            odd.label, odd.index
        )));
    }
    // one block per tile (or strip) of each page, in channel order: what planar (separate)
    // samples would list
    let per_page = (first.height.div_ceil(first.tile_height.max(1)) * first.width.div_ceil(first.tile_width.max(1))) as usize;
    let mut offsets = Vec::with_capacity(per_page * c);
    let mut counts = Vec::with_capacity(per_page * c);
    for p in pages {
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
    joined.label = format!("pages 0–{} ({c} channels)", c - 1);
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
