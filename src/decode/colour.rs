//! The colour-marker policy: which colour space a stream's markers say its samples are
//! stored in, and how zune-jpeg's own reading of the same markers is corrected to give
//! the `decoded_color_space` asked for.

use zune_jpeg::zune_core::colorspace::ColorSpace;

use crate::baseline;
use crate::config::DecodedColorSpace;
use crate::error::{CodecError, Int, Result};
use crate::markers::StreamHeader;
use crate::sink::Conversion;

/// The colour space of the samples inside the stream, as the stream's markers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredColorSpace {
    Grayscale,
    Ycbcr,
    Rgb,
}

/// The Adobe APP14 marker first, as the spec says it indicates the stored colour space:
/// transform 0 → RGB, 1 → YCbCr, 2 (YCCK) and unknown transforms rejected; else JFIF →
/// YCbCr; else ids 'R','G','B' → RGB; else YCbCr. Where this differs from libjpeg-turbo
/// (which lets JFIF win over the Adobe marker, and reads YCCK/unknown transforms on three
/// components as YCbCr with a warning) the stream is rejected: JFIF beside transform 0
/// (decoders disagree on it) and transforms other than 0 and 1 — the spec forbids
/// returning wrongly converted data. tests/colour_markers.rs holds each rule.
pub fn stored_color_space(header: &StreamHeader) -> Result<StoredColorSpace> {
    if header.components.len() == 1 {
        return Ok(StoredColorSpace::Grayscale);
    }
    match header.adobe_transform {
        Some(0) if header.jfif => Err(CodecError::unsupported(
            "the stream has both a JFIF marker (meaning YCbCr) and an Adobe marker with transform 0 \
             (meaning RGB, no transform); decoders disagree on which wins, so it is rejected rather \
             than risk returning wrongly converted colours",
        )),
        Some(0) => Ok(StoredColorSpace::Rgb),
        Some(1) => Ok(StoredColorSpace::Ycbcr),
        Some(2) => Err(CodecError::unsupported(
            "the Adobe marker gives colour transform 2 (YCCK), which this codec cannot honour",
        )),
        Some(t) => Err(CodecError::unsupported(format!(
            "the Adobe marker gives an unknown colour transform {} (known: 0 = none/RGB, 1 = YCbCr, 2 = YCCK)",
            Int(t.into())
        ))),
        None if header.jfif => Ok(StoredColorSpace::Ycbcr),
        None if header.ids_are_rgb() => Ok(StoredColorSpace::Rgb),
        None => Ok(StoredColorSpace::Ycbcr),
    }
}

/// How to decode a checked stream to the samples asked for: what to ask the decoders for,
/// and the conversion to apply after them.
pub(super) struct ColourPlan {
    /// the samples zune-jpeg is asked for
    pub zune_out: ColorSpace,
    /// whether zune-jpeg reads the stream as RGB (see [`plan`])
    pub zune_sees_rgb: bool,
    pub convert: Option<Conversion>,
}

impl ColourPlan {
    /// The same samples, asked of the baseline decoder.
    pub fn baseline_output(&self) -> baseline::Output {
        match self.zune_out {
            ColorSpace::Luma => baseline::Output::Luma,
            ColorSpace::RGB if !self.zune_sees_rgb => baseline::Output::YcbcrToRgb,
            _ => baseline::Output::Copy,
        }
    }
}

/// The plan for a stream stored as `stored` (by its markers, `header`) decoded to
/// `decoded`, or an error if that conversion is not one the codec makes.
pub(super) fn plan(
    header: &StreamHeader,
    stored: StoredColorSpace,
    decoded: DecodedColorSpace,
) -> Result<ColourPlan> {
    // zune-jpeg decides by itself that a stream is RGB when it has an Adobe transform 0
    // or component ids 'R','G','B' (libjpeg lets JFIF win). Ask it for the samples as it
    // sees them, then convert here wherever its view and the stream's markers differ.
    let zune_sees_rgb =
        header.components.len() == 3 && (header.adobe_transform == Some(0) || header.ids_are_rgb());
    let zune_raw = if zune_sees_rgb {
        ColorSpace::RGB
    } else {
        ColorSpace::YCbCr
    };
    let (zune_out, fixup): (ColorSpace, Fixup) = match (stored, decoded) {
        (StoredColorSpace::Grayscale, DecodedColorSpace::Grayscale) => {
            (ColorSpace::Luma, Fixup::None)
        }
        (StoredColorSpace::Ycbcr, DecodedColorSpace::Rgb) if !zune_sees_rgb => {
            (ColorSpace::RGB, Fixup::None)
        }
        (StoredColorSpace::Ycbcr, DecodedColorSpace::Rgb) => (zune_raw, Fixup::YcbcrToRgb),
        (StoredColorSpace::Ycbcr, DecodedColorSpace::Ycbcr) => (zune_raw, Fixup::None),
        (StoredColorSpace::Rgb, DecodedColorSpace::Rgb) if zune_sees_rgb => (zune_raw, Fixup::None),
        (StoredColorSpace::Rgb, DecodedColorSpace::Ycbcr) if zune_sees_rgb => {
            (zune_raw, Fixup::RgbToYcbcr)
        }
        (stored, decoded) => {
            // (the names `{stored:?}` gives, without linking the derived `Debug`)
            let stored = match stored {
                StoredColorSpace::Grayscale => "Grayscale",
                StoredColorSpace::Ycbcr => "Ycbcr",
                StoredColorSpace::Rgb => "Rgb",
            };
            return Err(CodecError::mismatch(format!(
                "a stream stored as {stored} cannot be decoded to decoded_color_space \"{}\"",
                decoded.name()
            )));
        }
    };
    Ok(ColourPlan {
        zune_out,
        zune_sees_rgb,
        convert: in_place_conversion(fixup)?,
    })
}

/// A conversion of the decoded samples where zune-jpeg's view of the stream differs from
/// what its markers say (component ids 'R','G','B' beside a JFIF marker; an RGB stream
/// decoded to YCbCr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fixup {
    None,
    YcbcrToRgb,
    RgbToYcbcr,
}

/// The conversion for `fixup`. Streams that need one are rare, so the small modules (no
/// `full-decoder`) leave them to the full decoder rather than carry the conversions.
fn in_place_conversion(fixup: Fixup) -> Result<Option<Conversion>> {
    match fixup {
        Fixup::None => Ok(None),
        #[cfg(feature = "full-decoder")]
        Fixup::YcbcrToRgb => Ok(Some(crate::color::ycbcr_to_rgb_in_place)),
        #[cfg(feature = "full-decoder")]
        Fixup::RgbToYcbcr => Ok(Some(crate::color::rgb_to_ycbcr_in_place)),
        #[cfg(not(feature = "full-decoder"))]
        Fixup::YcbcrToRgb | Fixup::RgbToYcbcr => Err(super::needs_full_decoder(
            "a colour conversion after decoding, for colour markers that disagree (component \
             ids R,G,B beside a JFIF marker) or RGB samples decoded to YCbCr",
        )),
    }
}
