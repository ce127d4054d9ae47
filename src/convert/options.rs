//! The converter's options: read from a JSON-like object with the npm package's names
//! (`channelAxis`, `pixelSize`, …; the Python package maps its snake_case names to these),
//! checked with the messages the package has always given, and resolved against the input's
//! channel count into a [`Plan`].

use super::error::{ConvertError, Result};
use super::json;
use crate::{ConfigValue, EncodeOptions, JpegConfig};

pub const DEFAULT_QUALITY: u8 = 95;
pub const DEFAULT_CHUNK: u32 = 256;
/// A JPEG side: the largest chunk.
const MAX_JPEG_SIDE: f64 = 65535.0;
/// The most encode threads (the npm package's worker pool has the same bound).
pub const MAX_WORKERS: usize = 256;

/// J:a:b names of the spec's subsampling schemes, as (h, v) factors of Y, Cb, Cr.
pub const SUBSAMPLING: [(&str, [[u8; 2]; 3]); 4] = [
    ("4:4:4", [[1, 1], [1, 1], [1, 1]]),
    ("4:2:2", [[2, 1], [1, 1], [1, 1]]),
    ("4:4:0", [[1, 2], [1, 1], [1, 1]]),
    ("4:2:0", [[2, 2], [1, 1], [1, 1]]),
];

const KNOWN: [&str; 20] = [
    "quality", "color", "subsampling", "chunk", "chunkDepth", "downsampleZ", "shard", "levels", "channelAxis", "name",
    "pixelSize", "unit", "restartIntervals", "trellis", "quantTable", "workers", "overwrite",
    "rescale", "levelPsnr", "dicomIdentifiers",
];

/// The options as given: an object of known members (null members are absent).
#[derive(Clone, Debug, Default)]
pub struct ConvertOptions {
    members: Vec<(String, ConfigValue)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelAxis {
    First,
    Last,
}

impl ChannelAxis {
    pub fn name(self) -> &'static str {
        match self {
            ChannelAxis::First => "first",
            ChannelAxis::Last => "last",
        }
    }
}

/// A 16-bit input's window mapped to 0–255.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub min: u16,
    pub max: u16,
}

impl Window {
    /// The window over samples from `min` to `max` (at least one value wide).
    pub fn of_range(min: u16, max: u16) -> Window {
        Window { min, max: max.max(min.saturating_add(1)) }
    }

    /// A sample mapped to 0–255: the window's ends to 0 and 255, linearly between, rounded.
    pub fn map(&self, v: u16) -> u8 {
        if v <= self.min {
            0
        } else if v >= self.max {
            255
        } else {
            // (255 / span first, as the npm package computes it: the same rounding)
            (f64::from(v - self.min) * (255.0 / f64::from(self.max - self.min))).round() as u8
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rescale {
    Auto,
    Window(Window),
}

/// What a conversion writes, resolved from the options and the input's channels.
#[derive(Clone, Debug)]
pub struct Plan {
    pub config: JpegConfig,
    pub chunk: u32,
    /// z planes per chunk (1: 2-D chunks); a chunk's JPEG is its planes one above the other
    pub chunk_depth: u32,
    /// each level halves z too (2 × 2 × 2 averaging), not only y and x
    pub downsample_z: bool,
    pub shard: Option<u32>,
    pub levels: Option<u32>,
    pub channel_axis: ChannelAxis,
    pub pixel_size: Option<f64>,
    pub unit: Option<String>,
    pub encode_options: EncodeOptions,
    pub workers: usize,
    pub warnings: Vec<String>,
    /// 1 (grayscale chunks) or 3
    pub components: usize,
    /// MCU height, width
    pub mcu: (u32, u32),
    /// A c axis of this many grayscale planes (1: none).
    pub planes: usize,
    /// 16-bit samples mapped to uint8 through this window (recorded in the metadata).
    pub rescale: Option<(&'static str, Window)>,
    /// The time points and z planes outside each plane, and the channels' names.
    pub stack: super::stack::Stack,
    /// Each channel's window, found in the data (empty: 0–255).
    pub windows: Vec<Option<super::histogram::DataWindow>>,
}

impl Plan {
    /// Level `l`'s z planes and how many times z was halved to get them: with
    /// `downsample_z`, halved (rounded up) per level while the level above had more than one.
    fn level_z_halvings(&self, l: usize) -> (u32, u32) {
        let (mut z, mut halvings) = (self.stack.z, 0);
        while self.downsample_z && (halvings as usize) < l && z > 1 {
            z = z.div_ceil(2);
            halvings += 1;
        }
        (z, halvings)
    }

    /// Level `l`'s z planes.
    pub fn level_z(&self, l: usize) -> u32 {
        self.level_z_halvings(l).0
    }

    /// How many of level 0's z planes one of level `l`'s spans.
    pub fn level_z_factor(&self, l: usize) -> f64 {
        2f64.powi(self.level_z_halvings(l).1 as i32)
    }

    /// Level `l`'s z planes per chunk: the chunk depth, or fewer where the level has fewer.
    pub fn level_depth(&self, l: usize) -> u32 {
        self.chunk_depth.clamp(1, self.level_z(l).max(1))
    }

    /// Level `l`'s chunks along the stack's outer axes: time points × chunks of z planes.
    pub fn stack_chunks(&self, l: usize) -> u64 {
        u64::from(self.stack.t) * u64::from(self.level_z(l).div_ceil(self.level_depth(l)))
    }
}

pub(super) fn is_int(v: &ConfigValue) -> Option<f64> {
    match v {
        ConfigValue::Number(n) if n.is_finite() && n.fract() == 0.0 => Some(*n),
        _ => None,
    }
}

fn js(v: &ConfigValue) -> String {
    json::compact(v)
}

impl ConvertOptions {
    /// From a JSON-like object; unknown members are errors.
    pub fn parse(value: &ConfigValue) -> Result<ConvertOptions> {
        let members = match value {
            ConfigValue::Null => return Ok(ConvertOptions::default()),
            ConfigValue::Object(members) => members,
            other => {
                let got = match other {
                    ConfigValue::Array(_) => "object".to_string(), // (typeof [] is "object" in JS)
                    ConfigValue::Bool(_) => "boolean".into(),
                    ConfigValue::Number(_) => "number".into(),
                    _ => "string".into(),
                };
                return Err(ConvertError::argument(format!("options must be an object, got {got}")));
            }
        };
        let mut out = ConvertOptions::default();
        for (name, value) in members {
            if !KNOWN.contains(&name.as_str()) {
                return Err(ConvertError::argument(format!("unknown option {}", js(&ConfigValue::String(name.clone())))));
            }
            if matches!(value, ConfigValue::Null) {
                continue;
            }
            // (a later duplicate wins, as in a JS object literal)
            out.members.retain(|(n, _)| n != name);
            out.members.push((name.clone(), value.clone()));
        }
        Ok(out)
    }

    /// These options with the pixel size a file states (in micrometres, unless a unit is given).
    pub fn with_pixel_size(&self, size: f64) -> ConvertOptions {
        let mut out = self.clone();
        out.members.push(("pixelSize".into(), ConfigValue::Number(size)));
        if out.get("unit").is_none() {
            out.members.push(("unit".into(), ConfigValue::String("micrometer".into())));
        }
        out
    }

    /// The names of the options given.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.members.iter().map(|(n, _)| n.as_str())
    }

    pub fn get(&self, name: &str) -> Option<&ConfigValue> {
        self.members.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    pub fn string(&self, name: &str) -> Result<Option<&str>> {
        match self.get(name) {
            None => Ok(None),
            Some(ConfigValue::String(s)) => Ok(Some(s)),
            Some(other) => Err(ConvertError::argument(format!("{name} must be a string, got {}", js(other)))),
        }
    }

    pub fn flag(&self, name: &str) -> Result<bool> {
        match self.get(name) {
            None => Ok(false),
            Some(ConfigValue::Bool(b)) => Ok(*b),
            Some(other) => Err(ConvertError::argument(format!("{name} must be true or false, got {}", js(other)))),
        }
    }

    /// `color` as given (None: the input's own).
    pub fn color(&self) -> Option<&ConfigValue> {
        self.get("color")
    }

    /// `rescale`: "auto", "MIN:MAX" or {min, max}.
    pub fn rescale(&self) -> Result<Option<Rescale>> {
        let Some(value) = self.get("rescale") else { return Ok(None) };
        if let ConfigValue::String(s) = value {
            if s == "auto" {
                return Ok(Some(Rescale::Auto));
            }
        }
        let pair = match value {
            ConfigValue::String(s) => parse_window(s),
            ConfigValue::Object(_) => {
                let member = |k: &str| match value {
                    ConfigValue::Object(m) => m.iter().rev().find(|(n, _)| n == k).and_then(|(_, v)| is_int(v)),
                    _ => None,
                };
                member("min").zip(member("max"))
            }
            _ => None,
        };
        match pair {
            Some((min, max)) if min >= 0.0 && max > min && max <= 65535.0 => {
                Ok(Some(Rescale::Window(Window { min: min as u16, max: max as u16 })))
            }
            _ => Err(ConvertError::argument(format!(
                "rescale must be \"auto\" or \"MIN:MAX\" (integers, 0 ≤ MIN < MAX ≤ 65535), got {}",
                js(value)
            ))),
        }
    }

    /// The plan for an input of `channels` samples per pixel (1 or 3) in chunks of
    /// `components` (1 when the channels become a c axis of grayscale planes).
    pub fn resolve(&self, channels: usize) -> Result<Plan> {
        if self.get("levelPsnr").is_some() {
            return Err(ConvertError::argument(
                "levelPsnr applies to a TIFF of JPEG tiles, whose levels 1+ are re-encoded from the copied tiles; \
                 other input encodes every level at quality",
            ));
        }
        let quality = match self.get("quality") {
            None => f64::from(DEFAULT_QUALITY),
            Some(v) => match is_int(v) {
                Some(q) if (1.0..=100.0).contains(&q) => q,
                _ => {
                    return Err(ConvertError::argument(format!(
                        "quality must be an integer from 1 to 100 (the jpeg codec's range), got {}",
                        js(v)
                    )))
                }
            },
        };
        let color = match self.get("color") {
            None => if channels == 3 { "ycbcr" } else { "grayscale" }.to_string(),
            Some(ConfigValue::String(s)) if ["ycbcr", "rgb", "grayscale"].contains(&s.as_str()) => s.clone(),
            Some(v) => return Err(ConvertError::argument(format!("color must be ycbcr, rgb or grayscale, got {}", js(v)))),
        };
        if channels == 1 && color != "grayscale" {
            return Err(ConvertError::argument(format!(
                "the input is grayscale (1 channel); color {color} needs 3 channels (use --color grayscale)"
            )));
        }
        let subsampling: Option<ConfigValue> = match self.get("subsampling") {
            Some(given) => {
                if color != "ycbcr" {
                    return Err(ConvertError::argument(format!(
                        "subsampling applies only to color ycbcr (the spec allows no subsampling for {color})"
                    )));
                }
                match given {
                    ConfigValue::String(name) => match SUBSAMPLING.iter().find(|(n, _)| n == name) {
                        Some((_, f)) => Some(factors(f)),
                        None => {
                            let names: Vec<&str> = SUBSAMPLING.iter().map(|(n, _)| *n).collect();
                            return Err(ConvertError::argument(format!(
                                "subsampling must be one of {}, got {}",
                                names.join(", "),
                                js(given)
                            )));
                        }
                    },
                    other => Some(other.clone()),
                }
            }
            None if color == "ycbcr" => Some(factors(&SUBSAMPLING[3].1)),
            None => None,
        };
        let mut raw = vec![
            ("quality".to_string(), ConfigValue::Number(quality)),
            ("encoded_color_space".to_string(), ConfigValue::String(color.clone())),
        ];
        if let Some(s) = subsampling {
            raw.push(("subsampling".to_string(), s));
        }
        let raw = ConfigValue::Object(raw);
        let config = JpegConfig::parse(&raw).map_err(|e| {
            ConvertError::argument(format!("invalid jpeg configuration {}: {e}", js(&raw)))
        })?;
        let chunk = match self.get("chunk") {
            None => f64::from(DEFAULT_CHUNK),
            Some(v) => match is_int(v) {
                Some(c) if c > 0.0 && c <= MAX_JPEG_SIDE => c,
                _ => {
                    return Err(ConvertError::argument(format!(
                        "chunk must be a positive integer of at most 65535 (a JPEG side), got {}",
                        js(v)
                    )))
                }
            },
        } as u32;
        let mut warnings = Vec::new();
        let mcu = mcu_size(&config);
        if !chunk.is_multiple_of(mcu.0) || !chunk.is_multiple_of(mcu.1) {
            warnings.push(format!(
                "chunk {chunk} is not a multiple of this configuration's {} × {} (height × width) MCU: the edge blocks \
                 of every chunk are padded, which can add artefacts near its right and bottom edges",
                mcu.0, mcu.1
            ));
        }
        if color == "rgb" {
            warnings.push(
                "color rgb stores the channels without a colour transform (marked by an Adobe APP14 marker, transform 0), \
                 which not every JPEG decoder supports: some ignore the marker and return wrong values (e.g. jpgjs, used by \
                 Neuroglancer). Use rgb only when portability does not matter; grayscale and ycbcr are read everywhere"
                    .to_string(),
            );
        }
        let shard = match self.get("shard") {
            None => None,
            Some(v) => match is_int(v) {
                Some(s) if s > 0.0 && s <= f64::from(u32::MAX) && (s as u32).is_multiple_of(chunk) => Some(s as u32),
                _ => {
                    return Err(ConvertError::argument(format!(
                        "shard must be a positive multiple of chunk ({chunk}), got {}",
                        js(v)
                    )))
                }
            },
        };
        let common = self.pyramid_options()?;
        let chunk_depth = match self.get("chunkDepth") {
            None => 1,
            Some(v) => match is_int(v) {
                Some(d) if d > 0.0 && d <= MAX_JPEG_SIDE => d as u32,
                _ => {
                    return Err(ConvertError::argument(format!(
                        "chunkDepth must be a positive integer (z planes per chunk), got {}",
                        js(v)
                    )))
                }
            },
        };
        Ok(Plan {
            config,
            chunk,
            chunk_depth,
            downsample_z: self.flag("downsampleZ")?,
            shard,
            levels: common.levels,
            channel_axis: common.channel_axis,
            pixel_size: common.pixel_size,
            unit: common.unit,
            encode_options: common.encode_options,
            workers: common.workers,
            warnings,
            components: if color == "grayscale" { 1 } else { 3 },
            mcu,
            planes: 1,
            rescale: None,
            stack: super::stack::Stack::default(),
            windows: Vec::new(),
        })
    }

    /// The options every input checks alike: levels, channel axis, pixel size and unit,
    /// encode options, workers.
    pub fn pyramid_options(&self) -> Result<PyramidOptions> {
        let levels = match self.get("levels") {
            None => None,
            Some(v) => match is_int(v) {
                Some(n) if n > 0.0 && n <= f64::from(u32::MAX) => Some(n as u32),
                _ => return Err(ConvertError::argument(format!("levels must be a positive integer, got {}", js(v)))),
            },
        };
        let channel_axis = match self.get("channelAxis") {
            None => ChannelAxis::First,
            Some(ConfigValue::String(s)) if s == "first" => ChannelAxis::First,
            Some(ConfigValue::String(s)) if s == "last" => ChannelAxis::Last,
            Some(v) => {
                return Err(ConvertError::argument(format!("channelAxis must be \"first\" or \"last\", got {}", js(v))))
            }
        };
        let pixel_size = match self.get("pixelSize") {
            None => None,
            Some(ConfigValue::Number(n)) if *n > 0.0 && n.is_finite() => Some(*n),
            Some(v) => return Err(ConvertError::argument(format!("pixelSize must be a positive number, got {}", js(v)))),
        };
        let mut encode = Vec::new();
        for (name, js_name) in [("restartIntervals", "restartIntervals"), ("trellis", "trellis"), ("quantTable", "quantTable")] {
            if let Some(v) = self.get(name) {
                encode.push((js_name.to_string(), v.clone()));
            }
        }
        let encode_options =
            EncodeOptions::parse(&ConfigValue::Object(encode)).map_err(|e| ConvertError::argument(e.message()))?;
        let workers = match self.get("workers") {
            None => 0,
            Some(v) => match is_int(v) {
                Some(n) if n >= 0.0 && n <= MAX_WORKERS as f64 => n as usize,
                _ => {
                    return Err(ConvertError::argument(format!(
                        "workers must be a whole number from 0 to {MAX_WORKERS}, got {}",
                        js(v)
                    )))
                }
            },
        };
        let unit = self.string("unit")?.map(str::to_string);
        Ok(PyramidOptions { levels, channel_axis, pixel_size, unit, encode_options, workers })
    }
}

/// The options of [`ConvertOptions::pyramid_options`].
pub struct PyramidOptions {
    pub levels: Option<u32>,
    pub channel_axis: ChannelAxis,
    pub pixel_size: Option<f64>,
    pub unit: Option<String>,
    pub encode_options: EncodeOptions,
    pub workers: usize,
}

fn parse_window(s: &str) -> Option<(f64, f64)> {
    let (a, b) = s.split_once(':')?;
    let digits = |t: &str| {
        let t = t.trim_matches(|c: char| c.is_whitespace());
        (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())).then(|| t.parse::<f64>().ok()).flatten()
    };
    Some((digits(a)?, digits(b)?))
}

/// Sampling factors as the configuration's `subsampling` value: `[[h, v], …]`.
fn factors(f: &[[u8; 2]]) -> ConfigValue {
    ConfigValue::Array(
        f.iter()
            .map(|p| ConfigValue::Array(vec![ConfigValue::Number(f64::from(p[0])), ConfigValue::Number(f64::from(p[1]))]))
            .collect(),
    )
}

/// The MCU of a configuration: 8·v_max rows by 8·h_max columns.
pub fn mcu_size(config: &JpegConfig) -> (u32, u32) {
    if config.encoded_color_space != crate::EncodedColorSpace::Ycbcr {
        return (8, 8);
    }
    let h = config.subsampling.iter().map(|f| u32::from(f.horizontal)).max().unwrap_or(1);
    let v = config.subsampling.iter().map(|f| u32::from(f.vertical)).max().unwrap_or(1);
    (8 * v, 8 * h)
}

/// The J:a:b name of a configuration's subsampling, if it has one.
pub fn subsampling_name(config: &JpegConfig) -> Option<String> {
    if config.encoded_color_space != crate::EncodedColorSpace::Ycbcr {
        return None;
    }
    let given: Vec<[u8; 2]> = config.subsampling.iter().map(|f| [f.horizontal, f.vertical]).collect();
    Some(match SUBSAMPLING.iter().find(|(_, f)| f[..] == given[..]) {
        Some((name, _)) => name.to_string(),
        None => json::compact(&factors(&given)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(members: &[(&str, ConfigValue)]) -> ConvertOptions {
        ConvertOptions::parse(&ConfigValue::Object(members.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()))
            .unwrap()
    }

    #[test]
    fn messages_are_the_npm_packages() {
        let bad = |m: &[(&str, ConfigValue)], channels| opts(m).resolve(channels).unwrap_err().message().to_string();
        assert_eq!(
            bad(&[("quality", ConfigValue::Number(0.0))], 3),
            "quality must be an integer from 1 to 100 (the jpeg codec's range), got 0"
        );
        assert_eq!(
            bad(&[("color", ConfigValue::String("rgb".into()))], 1),
            "the input is grayscale (1 channel); color rgb needs 3 channels (use --color grayscale)"
        );
        assert_eq!(
            bad(&[("subsampling", ConfigValue::String("4:1:1".into()))], 3),
            "subsampling must be one of 4:4:4, 4:2:2, 4:4:0, 4:2:0, got \"4:1:1\""
        );
        assert_eq!(
            bad(&[("shard", ConfigValue::Number(300.0))], 3),
            "shard must be a positive multiple of chunk (256), got 300"
        );
        let unknown = ConvertOptions::parse(&ConfigValue::Object(vec![("qualty".into(), ConfigValue::Number(1.0))]));
        assert_eq!(unknown.unwrap_err().message(), "unknown option \"qualty\"");
    }

    #[test]
    fn defaults_and_rescale() {
        let plan = opts(&[]).resolve(3).unwrap();
        assert_eq!((plan.chunk, plan.mcu, plan.components), (256, (16, 16), 3));
        assert_eq!(
            opts(&[("rescale", ConfigValue::String(" 10 : 400 ".into()))]).rescale().unwrap(),
            Some(Rescale::Window(Window { min: 10, max: 400 }))
        );
        assert!(opts(&[("rescale", ConfigValue::String("5:5".into()))]).rescale().is_err());
    }
}
