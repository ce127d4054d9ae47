//! Samples already in memory (a caller's array: `[height, width]` or `[height, width,
//! channels]` uint8, C order) as a row source: RGBA loses its alpha with a warning.

use super::error::{ConvertError, Result};
use super::source::{luma, ImageInfo, RowSource, RowsEnd};

/// Rows handed on at a time.
const BATCH: usize = 64;

pub struct SamplesSource {
    data: Vec<u8>,
    info: ImageInfo,
    warnings: Vec<String>,
}

fn shape_text(shape: &[f64]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| super::json::compact(&crate::ConfigValue::Number(*d))).collect();
    format!("[{}]", dims.join(","))
}

impl SamplesSource {
    /// `data` of `shape` (numbers as given, so a bad one is named as it was).
    pub fn new(data: Vec<u8>, shape: &[f64]) -> Result<SamplesSource> {
        let whole = |d: &f64| d.is_finite() && d.fract() == 0.0 && *d >= 1.0 && *d <= f64::from(u32::MAX);
        if !(2..=3).contains(&shape.len()) || !shape.iter().all(whole) {
            return Err(ConvertError::argument(format!(
                "shape must be [height, width] or [height, width, channels], got {}",
                shape_text(shape)
            )));
        }
        let (height, width) = (shape[0] as u64, shape[1] as u64);
        let channels = shape.get(2).map_or(1, |&c| c as u64);
        if ![1, 3, 4].contains(&channels) {
            return Err(ConvertError::argument(format!("channels must be 1 (grayscale), 3 (RGB) or 4 (RGBA), got {channels}")));
        }
        let need = height.saturating_mul(width).saturating_mul(channels);
        if data.len() as u64 != need {
            return Err(ConvertError::argument(format!(
                "data holds {} samples but shape {} needs {need}",
                data.len(),
                shape_text(shape)
            )));
        }
        let mut warnings = Vec::new();
        let data = if channels == 4 {
            warnings.push("the input has 4 channels (RGBA); JPEG has no alpha, so alpha is dropped".to_string());
            data.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect()
        } else {
            data
        };
        let info = ImageInfo {
            height: height as u32,
            width: width as u32,
            channels: if channels == 1 { 1 } else { 3 },
            format: "samples",
            ..Default::default()
        };
        Ok(SamplesSource { data, info, warnings })
    }
}

impl RowSource for SamplesSource {
    fn info(&self) -> &ImageInfo {
        &self.info
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn streamed(&self) -> bool {
        false
    }

    fn read_rows(&mut self, to_gray: bool, sink: &mut dyn FnMut(&[u8], usize) -> Result<()>) -> Result<RowsEnd> {
        let row = self.info.width as usize * self.info.channels;
        let mut gray = Vec::new();
        for rows in self.data.chunks(BATCH * row) {
            let n = rows.len() / row;
            if to_gray {
                gray.clear();
                gray.extend(rows.chunks_exact(3).map(|p| luma(p[0], p[1], p[2])));
                sink(&gray, n)?;
            } else {
                sink(rows, n)?;
            }
        }
        Ok(RowsEnd::Done(Vec::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_sizes_are_checked_by_name() {
        let message = |data: Vec<u8>, shape: &[f64]| SamplesSource::new(data, shape).err().map(|e| e.message().to_string());
        assert_eq!(message(vec![0; 10], &[4.0, 4.0]).unwrap(), "data holds 10 samples but shape [4,4] needs 16");
        assert_eq!(message(vec![0; 32], &[4.0, 4.0, 2.0]).unwrap(), "channels must be 1 (grayscale), 3 (RGB) or 4 (RGBA), got 2");
        assert!(message(vec![0; 4], &[2.0, 2.5]).unwrap().starts_with("shape must be [height, width]"));
        let rgba = SamplesSource::new(vec![1, 2, 3, 4, 5, 6, 7, 8], &[1.0, 2.0, 4.0]).unwrap();
        assert_eq!(rgba.data, vec![1, 2, 3, 5, 6, 7]);
        assert_eq!(rgba.warnings.len(), 1);
    }
}
