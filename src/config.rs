//! The codec configuration: parsing, every validation rule of the spec, defaults,
//! and the normalised form.

use crate::config_value::{quote, ConfigValue};
use crate::error::{owned, CodecError, Int, Result};

/// The colour space of the samples as stored in the JPEG stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodedColorSpace {
    Grayscale,
    Ycbcr,
    Rgb,
}

/// The colour space of the chunk data (encoder input, decoder output).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodedColorSpace {
    Grayscale,
    Rgb,
    Ycbcr,
}

impl EncodedColorSpace {
    pub fn name(self) -> &'static str {
        match self {
            EncodedColorSpace::Grayscale => "grayscale",
            EncodedColorSpace::Ycbcr => "ycbcr",
            EncodedColorSpace::Rgb => "rgb",
        }
    }
    /// The component count this colour space fixes (spec: 1 for grayscale, 3 otherwise).
    pub fn components(self) -> usize {
        match self {
            EncodedColorSpace::Grayscale => 1,
            EncodedColorSpace::Ycbcr | EncodedColorSpace::Rgb => 3,
        }
    }
}

impl DecodedColorSpace {
    pub fn name(self) -> &'static str {
        match self {
            DecodedColorSpace::Grayscale => "grayscale",
            DecodedColorSpace::Rgb => "rgb",
            DecodedColorSpace::Ycbcr => "ycbcr",
        }
    }
    pub fn components(self) -> usize {
        match self {
            DecodedColorSpace::Grayscale => 1,
            DecodedColorSpace::Rgb | DecodedColorSpace::Ycbcr => 3,
        }
    }
}

/// One component's JPEG sampling factors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SamplingFactor {
    pub horizontal: u8,
    pub vertical: u8,
}

impl SamplingFactor {
    pub const ONE: SamplingFactor = SamplingFactor {
        horizontal: 1,
        vertical: 1,
    };
}

/// The first-component factors (with chroma at [1, 1]) that this implementation
/// encodes and decodes: every combination the spec allows that a baseline JPEG can
/// carry. The others are rejected when parsing, as the spec requires of an
/// implementation that cannot honour them:
/// - a factor of 3: jpeg-encoder cannot write it, zune-jpeg cannot read a horizontal 3;
/// - [4, 4], [3, 3], [4, 3], [3, 4]: an MCU would hold more than the 10 blocks that
///   ITU-T T.81 (B.2.3) allows, so no baseline JPEG can carry them.
pub const SUPPORTED_LUMA_FACTORS: [(u8, u8); 8] = [
    (1, 1),
    (2, 1),
    (1, 2),
    (2, 2),
    (4, 1),
    (1, 4),
    (4, 2),
    (2, 4),
];

/// `SUPPORTED_LUMA_FACTORS` as the error messages list them, written out (a test checks it)
/// rather than formatted at run time.
const SUPPORTED_LUMA_LIST: &str = "[1, 1], [2, 1], [1, 2], [2, 2], [4, 1], [1, 4], [4, 2], [2, 4]";

/// A validated configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JpegConfig {
    pub quality: u8,
    pub encoded_color_space: EncodedColorSpace,
    pub decoded_color_space: DecodedColorSpace,
    /// One entry per component of the encoded colour space.
    pub subsampling: Vec<SamplingFactor>,
}

const MEMBERS: [&str; 4] = [
    "quality",
    "encoded_color_space",
    "decoded_color_space",
    "subsampling",
];

/// `MEMBERS.join(", ")` for the error messages, written out (a test checks it): `join`
/// costs ~0.6 KB of wasm.
const MEMBER_LIST: &str = "quality, encoded_color_space, decoded_color_space, subsampling";

/// The error for a configuration that is not an object; `got` says what it is.
pub fn not_an_object(got: &str) -> CodecError {
    CodecError::config(format!(
        "the configuration must be an object with members {MEMBER_LIST}, got {got}"
    ))
}

impl JpegConfig {
    /// Parses and validates a configuration object (the codec's `configuration` member).
    pub fn parse(value: &ConfigValue) -> Result<JpegConfig> {
        let members = match value {
            ConfigValue::Object(members) => members,
            other => return Err(not_an_object(&other.describe())),
        };
        for (i, (key, _)) in members.iter().enumerate() {
            if !MEMBERS.contains(&key.as_str()) {
                return Err(CodecError::config(format!(
                    "unknown member {}; the jpeg codec's configuration allows only {}",
                    quote(key),
                    MEMBER_LIST
                )));
            }
            if members[..i].iter().any(|(k, _)| k == key) {
                return Err(CodecError::config(format!(
                    "member {} appears more than once",
                    quote(key)
                )));
            }
        }
        let get = |name: &str| members.iter().find(|(k, _)| k == name).map(|(_, v)| v);

        let quality = parse_quality(get("quality"))?;
        let encoded = parse_encoded(get("encoded_color_space"))?;
        let decoded = parse_decoded(get("decoded_color_space"), encoded)?;
        let subsampling = parse_subsampling(get("subsampling"), encoded)?;
        Ok(JpegConfig {
            quality,
            encoded_color_space: encoded,
            decoded_color_space: decoded,
            subsampling,
        })
    }

    /// Component count of the chunk data (decoded colour space) and of the stream.
    pub fn components(&self) -> usize {
        self.encoded_color_space.components()
    }

    /// The first component's sampling factors; the others are always [1, 1].
    pub fn luma_sampling(&self) -> SamplingFactor {
        self.subsampling[0]
    }

    /// The normalised configuration: `decoded_color_space` filled in; `subsampling`
    /// present only for `ycbcr`, since the spec says it SHOULD be omitted otherwise.
    /// This is the form a writer should store in `zarr.json`.
    pub fn to_value(&self) -> ConfigValue {
        let mut members = vec![
            (owned("quality"), ConfigValue::Number(self.quality as f64)),
            (
                owned("encoded_color_space"),
                ConfigValue::String(owned(self.encoded_color_space.name())),
            ),
            (
                owned("decoded_color_space"),
                ConfigValue::String(owned(self.decoded_color_space.name())),
            ),
        ];
        if self.encoded_color_space == EncodedColorSpace::Ycbcr {
            let pairs = self
                .subsampling
                .iter()
                .map(|f| {
                    ConfigValue::Array(vec![
                        ConfigValue::Number(f.horizontal as f64),
                        ConfigValue::Number(f.vertical as f64),
                    ])
                })
                .collect();
            members.push((owned("subsampling"), ConfigValue::Array(pairs)));
        }
        ConfigValue::Object(members)
    }
}

fn parse_quality(value: Option<&ConfigValue>) -> Result<u8> {
    const RULE: &str = "quality must be an integer from 1 to 100";
    match value {
        None => Err(CodecError::config(format!(
            "quality is required and has no default ({RULE}; 95 is the recommended value)"
        ))),
        Some(ConfigValue::Number(n)) if n.fract() == 0.0 && (1.0..=100.0).contains(n) => {
            Ok(*n as u8)
        }
        Some(other) => Err(CodecError::config(format!(
            "{RULE}, got {}",
            other.describe()
        ))),
    }
}

fn parse_encoded(value: Option<&ConfigValue>) -> Result<EncodedColorSpace> {
    const ALLOWED: &str = "\"grayscale\", \"ycbcr\" or \"rgb\"";
    match value {
        None => Err(CodecError::config(format!(
            "encoded_color_space is required and has no default (one of {ALLOWED})"
        ))),
        Some(ConfigValue::String(s)) => match s.as_str() {
            "grayscale" => Ok(EncodedColorSpace::Grayscale),
            "ycbcr" => Ok(EncodedColorSpace::Ycbcr),
            "rgb" => Ok(EncodedColorSpace::Rgb),
            _ => Err(CodecError::config(format!(
                "encoded_color_space must be {ALLOWED}, got {}",
                quote(s)
            ))),
        },
        Some(other) => Err(CodecError::config(format!(
            "encoded_color_space must be {ALLOWED}, got {}",
            other.describe()
        ))),
    }
}

fn parse_decoded(
    value: Option<&ConfigValue>,
    encoded: EncodedColorSpace,
) -> Result<DecodedColorSpace> {
    const ALLOWED: &str = "\"grayscale\", \"rgb\" or \"ycbcr\"";
    let decoded = match value {
        None => {
            return Ok(match encoded {
                EncodedColorSpace::Grayscale => DecodedColorSpace::Grayscale,
                _ => DecodedColorSpace::Rgb,
            })
        }
        Some(ConfigValue::String(s)) => match s.as_str() {
            "grayscale" => DecodedColorSpace::Grayscale,
            "rgb" => DecodedColorSpace::Rgb,
            "ycbcr" => DecodedColorSpace::Ycbcr,
            _ => {
                return Err(CodecError::config(format!(
                    "decoded_color_space must be {ALLOWED}, got {}",
                    quote(s)
                )))
            }
        },
        Some(other) => {
            return Err(CodecError::config(format!(
                "decoded_color_space must be {ALLOWED}, got {}",
                other.describe()
            )))
        }
    };
    use DecodedColorSpace as D;
    use EncodedColorSpace as E;
    let valid = matches!(
        (decoded, encoded),
        (D::Grayscale, E::Grayscale) | (D::Rgb, E::Ycbcr) | (D::Rgb, E::Rgb) | (D::Ycbcr, E::Ycbcr)
    );
    if !valid {
        return Err(CodecError::config(format!(
            "decoded_color_space \"{}\" cannot be combined with encoded_color_space \"{}\"; \
             the valid combinations (decoded → encoded) are grayscale → grayscale, rgb → ycbcr, \
             rgb → rgb and ycbcr → ycbcr",
            decoded.name(),
            encoded.name()
        )));
    }
    Ok(decoded)
}

fn parse_subsampling(
    value: Option<&ConfigValue>,
    encoded: EncodedColorSpace,
) -> Result<Vec<SamplingFactor>> {
    let count = encoded.components();
    let default = vec![SamplingFactor::ONE; count];
    let value = match value {
        None if encoded == EncodedColorSpace::Ycbcr => {
            return Err(CodecError::config(
                "subsampling is required when encoded_color_space is \"ycbcr\" \
                 (e.g. [[2, 2], [1, 1], [1, 1]] for 4:2:0, [[1, 1], [1, 1], [1, 1]] for 4:4:4)",
            ))
        }
        None => return Ok(default),
        Some(v) => v,
    };
    let factors = parse_factor_list(value, count, encoded)?;
    match encoded {
        EncodedColorSpace::Ycbcr => {
            for (i, f) in factors.iter().enumerate().skip(1) {
                if *f != SamplingFactor::ONE {
                    return Err(CodecError::config(format!(
                        "subsampling[{}] must be [1, 1] for ycbcr (the chroma components Cb and Cr \
                         are the ones subsampled relative to luma), got [{}, {}]",
                        Int::of(i),
                        Int(f.horizontal.into()),
                        Int(f.vertical.into())
                    )));
                }
            }
            check_supported_luma_factor(factors[0])?;
        }
        _ => {
            if factors != default {
                let expected = if count == 1 {
                    "[[1, 1]]"
                } else {
                    "[[1, 1], [1, 1], [1, 1]]"
                };
                return Err(CodecError::config(format!(
                    "subsampling must be omitted or equal to its default {expected} when \
                     encoded_color_space is \"{}\" (no subsampling is applied), got {}",
                    encoded.name(),
                    value.describe()
                )));
            }
        }
    }
    Ok(factors)
}

fn parse_factor_list(
    value: &ConfigValue,
    count: usize,
    encoded: EncodedColorSpace,
) -> Result<Vec<SamplingFactor>> {
    let items = match value {
        ConfigValue::Array(items) => items,
        other => {
            return Err(CodecError::config(format!(
                "subsampling must be an array of [horizontal, vertical] pairs, got {}",
                other.describe()
            )))
        }
    };
    if items.len() != count {
        return Err(CodecError::config(format!(
            "subsampling must have one [horizontal, vertical] pair per component: {} for \
             encoded_color_space \"{}\", got {} ({})",
            Int::of(count),
            encoded.name(),
            Int::of(items.len()),
            value.describe()
        )));
    }
    // A loop rather than `collect::<Result<_>>()`, whose adapter costs ~0.6 KB of wasm.
    let mut factors = Vec::with_capacity(count);
    for (i, item) in items.iter().enumerate() {
        let i = Int::of(i);
        let pair = match item {
            ConfigValue::Array(pair) if pair.len() == 2 => pair,
            other => {
                return Err(CodecError::config(format!(
                    "subsampling[{i}] must be a [horizontal, vertical] pair of integers from 1 to 4, got {}",
                    other.describe()
                )))
            }
        };
        let factor = |j: usize| match &pair[j] {
            ConfigValue::Number(n) if n.fract() == 0.0 && (1.0..=4.0).contains(n) => Ok(*n as u8),
            other => Err(CodecError::config(format!(
                "subsampling[{i}][{}] must be an integer sampling factor from 1 to 4, got {}",
                Int::of(j),
                other.describe()
            ))),
        };
        factors.push(SamplingFactor {
            horizontal: factor(0)?,
            vertical: factor(1)?,
        });
    }
    Ok(factors)
}

fn check_supported_luma_factor(f: SamplingFactor) -> Result<()> {
    let (h, v) = (f.horizontal, f.vertical);
    if SUPPORTED_LUMA_FACTORS.contains(&(h, v)) {
        return Ok(());
    }
    let blocks = u32::from(h) * u32::from(v) + 2;
    let (h, v) = (Int(h.into()), Int(v.into()));
    if blocks > 10 {
        let blocks = Int(blocks.into());
        return Err(CodecError::config(format!(
            "subsampling [[{h}, {v}], [1, 1], [1, 1]] cannot be stored as baseline JPEG: a minimum \
             coded unit would hold {blocks} blocks and ITU-T T.81 allows at most 10"
        )));
    }
    Err(CodecError::config(format!(
        "subsampling [[{h}, {v}], [1, 1], [1, 1]] is allowed by the spec but not supported by this \
         implementation (sampling factors of 3 cannot be encoded); supported first-component \
         factors are {SUPPORTED_LUMA_LIST}"
    )))
}

#[cfg(test)]
mod tests {
    use super::{MEMBERS, MEMBER_LIST, SUPPORTED_LUMA_FACTORS, SUPPORTED_LUMA_LIST};

    #[test]
    fn the_member_list_in_messages_names_every_member() {
        assert_eq!(MEMBER_LIST, MEMBERS.join(", "));
    }

    #[test]
    fn the_luma_factor_list_in_messages_names_every_supported_factor() {
        let listed: Vec<String> = SUPPORTED_LUMA_FACTORS
            .iter()
            .map(|(h, v)| format!("[{h}, {v}]"))
            .collect();
        assert_eq!(SUPPORTED_LUMA_LIST, listed.join(", "));
    }
}
