//! What a conversion wrote, for programs (a value with the npm CLI's `--json` keys) and for
//! people (a few lines of text): levels, bytes, compression ratios, level 0's PSNR.

use super::levels::Pyramid;
use super::{json, metadata};
use super::options::{subsampling_name, Plan};
use super::pyramid::LevelTotals;
use super::source::ImageInfo;
use crate::{ConfigValue as V, EncodeOptions, QuantTable};

/// One level of the summary.
#[derive(Clone, Debug)]
pub struct LevelSummary {
    pub path: String,
    pub shape: Vec<u32>,
    pub chunk_shape: Vec<u32>,
    pub shard_shape: Option<Vec<u32>>,
    pub chunks: u64,
    pub raw_bytes: u64,
    pub encoded_bytes: u64,
    pub ratio: f64,
}

/// Level 0 made of a source's JPEG tiles (TIFF tiles, DICOM frames): what became of them.
#[derive(Clone, Debug)]
pub struct TileCounts {
    pub copied: u64,
    pub reencoded: u64,
    pub empty: u64,
    /// the configuration of levels 1+ (level 0's is the tiles'), at level 1's quality
    pub level_config: crate::JpegConfig,
    /// each level 1+'s quality
    pub level_qualities: Vec<u8>,
    /// the PSNR target they were chosen for (None: the tiles' quality, or `quality`, for all)
    pub level_psnr: Option<f64>,
    /// level 0's quality was estimated from IJG-like tables (false: a guess)
    pub quality_estimated: bool,
    /// the pixel size (µm) and where it came from
    pub pixel: Option<(f64, &'static str)>,
    /// where the tiles came from, in messages ("TIFF", "DICOM")
    pub container: &'static str,
}

/// What a conversion wrote.
#[derive(Clone, Debug)]
pub struct Summary {
    pub output: String,
    pub name: String,
    pub input_shape: Vec<u32>,
    pub config: crate::JpegConfig,
    pub encode_options: EncodeOptions,
    pub channel_axis: Option<&'static str>,
    pub levels: Vec<LevelSummary>,
    pub chunks: u64,
    /// every byte of the store: metadata, chunks, shard indexes
    pub bytes_written: u64,
    pub encoded_bytes: u64,
    pub raw_bytes: u64,
    pub ratio: f64,
    pub level0_ratio: f64,
    /// level 0 against the input, in dB (infinite when identical)
    pub psnr: f64,
    pub seconds: f64,
    pub workers: usize,
    pub warnings: Vec<String>,
    /// the rows were read a band at a time (false: decoded whole first)
    pub streamed: bool,
    /// the 16-bit window mapped to 0–255
    pub rescale: Option<(u16, u16)>,
    pub format: &'static str,
    /// what was read (a TIFF's format, page and pixel size)
    pub source: Option<V>,
    /// level 0 is a TIFF's tiles
    pub tiles: Option<TileCounts>,
    /// more lines for people, after the levels (what became of a volume's chunks)
    pub details: Vec<String>,
}

pub(super) struct Parts<'a> {
    pub output: &'a str,
    pub name: &'a str,
    pub plan: &'a Plan,
    pub pyramid: &'a Pyramid,
    pub info: &'a ImageInfo,
    pub channels: usize,
    pub totals: &'a [LevelTotals],
    pub chunks: u64,
    pub metadata_bytes: u64,
    pub error: (u64, u64),
    pub seconds: f64,
    pub warnings: Vec<String>,
    pub streamed: bool,
}

pub(super) fn build(p: Parts) -> Summary {
    let plan = p.plan;
    let levels: Vec<LevelSummary> = p
        .pyramid
        .shapes
        .iter()
        .zip(&p.pyramid.grids)
        .zip(p.totals)
        .enumerate()
        .map(|(l, ((shape, grid), totals))| {
            let raw = u64::from(shape.0) * u64::from(shape.1) * p.channels as u64 * u64::from(plan.stack.t) * u64::from(plan.level_z(l));
            LevelSummary {
                path: l.to_string(),
                shape: metadata::array_shape(plan, l, *shape),
                chunk_shape: metadata::chunk_shape(plan, l, grid.chunk),
                shard_shape: grid.shard.map(|s| metadata::chunk_shape(plan, l, s)),
                chunks: totals.chunks,
                raw_bytes: raw,
                encoded_bytes: totals.encoded_bytes,
                ratio: raw as f64 / totals.encoded_bytes as f64,
            }
        })
        .collect();
    let raw_bytes = levels.iter().map(|l| l.raw_bytes).sum::<u64>();
    let encoded_bytes = levels.iter().map(|l| l.encoded_bytes).sum::<u64>();
    let bytes_written = p.metadata_bytes + p.totals.iter().map(|t| t.bytes_written).sum::<u64>();
    let (sum, count) = p.error;
    let mse = sum as f64 / count as f64;
    let psnr = if sum == 0 { f64::INFINITY } else { 10.0 * (255.0 * 255.0 / mse).log10() };
    let channel_axis = if plan.planes > 1 {
        Some("first")
    } else if p.channels == 3 {
        Some(plan.channel_axis.name())
    } else {
        None
    };
    let (h, w) = (p.info.height, p.info.width);
    Summary {
        output: p.output.to_string(),
        name: p.name.to_string(),
        input_shape: if p.channels == 1 { vec![h, w] } else { vec![h, w, p.channels as u32] },
        config: plan.config.clone(),
        encode_options: plan.encode_options,
        channel_axis,
        level0_ratio: levels.first().map_or(0.0, |l| l.ratio),
        levels,
        chunks: p.chunks,
        bytes_written,
        encoded_bytes,
        raw_bytes,
        ratio: raw_bytes as f64 / encoded_bytes as f64,
        psnr,
        seconds: p.seconds,
        workers: plan.workers,
        warnings: p.warnings,
        streamed: p.streamed,
        rescale: plan.rescale.map(|(_, w)| (w.min, w.max)),
        format: p.info.format,
        source: p.info.summary.clone(),
        tiles: None,
        details: Vec::new(),
    }
}

fn num(n: impl Into<f64>) -> V {
    V::Number(n.into())
}

fn shape(dims: &[u32]) -> V {
    V::Array(dims.iter().map(|&d| num(d)).collect())
}

fn member(name: &str, value: V) -> (String, V) {
    (name.to_string(), value)
}

impl Summary {
    /// The npm CLI's `--json` value (JSON writes an infinite PSNR as null).
    pub fn to_value(&self) -> V {
        let o = &self.encode_options;
        let levels = self
            .levels
            .iter()
            .map(|l| {
                V::Object(vec![
                    member("path", V::String(l.path.clone())),
                    member("shape", shape(&l.shape)),
                    member("chunkShape", shape(&l.chunk_shape)),
                    member("shardShape", l.shard_shape.as_deref().map_or(V::Null, shape)),
                    member("chunks", num(l.chunks as f64)),
                    member("rawBytes", num(l.raw_bytes as f64)),
                    member("encodedBytes", num(l.encoded_bytes as f64)),
                    member("ratio", num(l.ratio)),
                ])
            })
            .collect();
        let mut members = vec![
            member("output", V::String(self.output.clone())),
            member("name", V::String(self.name.clone())),
            member("inputShape", shape(&self.input_shape)),
            member("config", self.config.to_value()),
            member(
                "encodeOptions",
                V::Object(vec![
                    member("restartIntervals", V::Bool(o.restart_intervals)),
                    member("trellis", V::Bool(o.trellis)),
                    member("quantTable", V::String(o.quant_table.name().to_string())),
                ]),
            ),
            member("channelAxis", self.channel_axis.map_or(V::Null, |a| V::String(a.to_string()))),
            member("levels", V::Array(levels)),
            member("chunks", num(self.chunks as f64)),
            member("bytesWritten", num(self.bytes_written as f64)),
            member("encodedBytes", num(self.encoded_bytes as f64)),
            member("rawBytes", num(self.raw_bytes as f64)),
            member("ratio", num(self.ratio)),
            member("level0Ratio", num(self.level0_ratio)),
            member("psnr", num(self.psnr)),
            member("seconds", num(self.seconds)),
            member("workers", num(self.workers as f64)),
            member("warnings", V::Array(self.warnings.iter().map(|w| V::String(w.clone())).collect())),
            member("streamed", V::Bool(self.streamed)),
        ];
        if let Some(t) = &self.tiles {
            // (the npm package's order for a TIFF's tiles)
            let take = |members: &mut Vec<(String, V)>, name: &str| {
                let at = members.iter().position(|(k, _)| k == name).expect("member");
                members.remove(at)
            };
            let mut rest = members;
            let mut out = Vec::new();
            for name in ["output", "name", "inputShape"] {
                out.push(take(&mut rest, name));
            }
            out.push(member("source", self.source.clone().unwrap_or(V::Null)));
            out.push(take(&mut rest, "config"));
            out.push(member("levelConfig", t.level_config.to_value()));
            out.push(member("levelQualities", V::Array(t.level_qualities.iter().map(|&q| num(f64::from(q))).collect())));
            out.push(member("levelPsnr", t.level_psnr.map_or(V::Null, num)));
            out.push(member("qualityEstimated", V::Bool(t.quality_estimated)));
            for name in ["encodeOptions", "channelAxis", "levels"] {
                out.push(take(&mut rest, name));
            }
            out.push(member(
                "tiles",
                V::Object(vec![
                    member("copied", num(t.copied as f64)),
                    member("reencoded", num(t.reencoded as f64)),
                    member("empty", num(t.empty as f64)),
                ]),
            ));
            for name in ["chunks", "bytesWritten", "encodedBytes", "rawBytes", "ratio", "level0Ratio", "psnr", "seconds", "workers", "warnings"] {
                out.push(take(&mut rest, name));
            }
            return V::Object(out);
        }
        if let Some(source) = &self.source {
            members.push(member("source", source.clone()));
        }
        if let Some((min, max)) = self.rescale {
            members.push(member("rescale", V::Object(vec![member("min", num(min)), member("max", num(max))])));
        }
        V::Object(members)
    }

    /// A few lines for people: what was written, how small, how faithful.
    pub fn format(&self) -> String {
        let mb = |n: u64| format!("{:.2} MB", n as f64 / 1e6);
        let c = &self.config;
        let o = &self.encode_options;
        let mut codec = format!("jpeg quality {}, {}", c.quality, c.encoded_color_space.name());
        if let Some(name) = subsampling_name(c) {
            codec.push(' ');
            codec.push_str(&name);
        }
        if o.quant_table != QuantTable::AnnexK {
            codec.push_str(&format!(", {} quantisation tables", o.quant_table.name()));
        }
        if o.trellis {
            codec.push_str(", trellis quantisation");
        }
        if !o.restart_intervals {
            codec.push_str(", no restart intervals");
        }
        let join = |d: &[u32]| d.iter().map(u32::to_string).collect::<Vec<_>>().join("×");
        let mut lines = vec![
            format!("wrote {} in {:.2} s", self.output, self.seconds),
            format!(
                "  image {} → {} level(s), {} chunks, {codec}",
                join(&self.input_shape),
                self.levels.len(),
                self.chunks
            ),
        ];
        for l in &self.levels {
            let shard = l.shard_shape.as_deref().map_or(String::new(), |s| format!(", shard {}", join(s)));
            lines.push(format!(
                "  level {}: shape {}, chunk {}{shard}, {} chunks, {} ({:.1}:1)",
                l.path,
                join(&l.shape),
                join(&l.chunk_shape),
                l.chunks,
                mb(l.encoded_bytes),
                l.ratio
            ));
        }
        lines.push(format!(
            "  bytes written {} for {} of samples: compression ratio {:.1}:1",
            mb(self.bytes_written),
            mb(self.raw_bytes),
            self.ratio
        ));
        lines.extend(self.details.iter().cloned());
        if let Some(t) = &self.tiles {
            let field = |name: &str| match &self.source {
                Some(V::Object(m)) => m.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
                _ => None,
            };
            let text = |v: Option<V>| match v {
                Some(V::String(s)) => s,
                _ => String::new(),
            };
            let pixel = t.pixel.map_or(String::new(), |(x, source)| {
                format!("; pixel {} µm ({source})", super::json::compact(&V::Number(x)))
            });
            lines.insert(1, format!("  source {}: {}{pixel}", text(field("format")), text(field("page"))));
            lines.push(format!(
                "  level 0: {} tiles copied unchanged from the {}, {} re-encoded{}; quality {} {}",
                t.copied,
                t.container,
                t.reencoded,
                if t.empty > 0 { format!(", {} empty (not stored)", t.empty) } else { String::new() },
                c.quality,
                if t.quality_estimated {
                    "estimated from the tiles' quantisation tables (the nearest IJG quality)"
                } else {
                    "(the tiles' tables are not IJG-like: a guess)"
                }
            ));
            if self.levels.len() > 1 {
                let u = &t.level_config;
                let sampling = subsampling_name(u).map_or(String::new(), |n| format!(" {n}"));
                let qualities: Vec<String> = t.level_qualities.iter().map(u8::to_string).collect();
                let chosen = match t.level_psnr {
                    Some(db) => format!(
                        " (each the lowest from the tiles' {} up at which a sample of the level is ≥ {} dB from its exact averages)",
                        c.quality,
                        json::compact(&V::Number(db))
                    ),
                    None => String::new(),
                };
                let qualities = if qualities.iter().all(|q| *q == qualities[0]) { qualities[0].clone() } else { qualities.join(", ") };
                lines.push(format!("  levels 1+: re-encoded at quality {qualities}{chosen}, {}{sampling}", u.encoded_color_space.name()));
            }
            return lines.join("\n");
        }
        lines.push(format!(
            "  PSNR of level 0 against the input: {}",
            if self.psnr.is_finite() { format!("{:.2} dB", self.psnr) } else { "∞ (identical)".to_string() }
        ));
        lines.join("\n")
    }
}
