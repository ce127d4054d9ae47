//! Each channel's histogram of a conversion's samples, read as the rows go by, for the
//! `omero` windows of a multi-channel image: the data's range, and a display window that
//! leaves out the darkest and brightest 0.1 % (a few hot pixels would otherwise set it).

/// A channel's window: its data range and its display range, in sample values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataWindow {
    pub min: u8,
    pub max: u8,
    pub start: u8,
    pub end: u8,
}

impl DataWindow {
    /// Every uint8 value, shown as it is.
    pub const FULL: DataWindow = DataWindow { min: 0, max: 255, start: 0, end: 255 };
}

/// The share of samples left out at each end of the display window.
const TAIL: f64 = 0.001;

pub struct Histograms {
    counts: Vec<[u64; 256]>,
}

impl Histograms {
    pub fn new(channels: usize) -> Histograms {
        Histograms { counts: vec![[0; 256]; channels] }
    }

    /// Counts interleaved samples (one per channel per pixel).
    pub fn add(&mut self, samples: &[u8]) {
        let channels = self.counts.len();
        if channels == 1 {
            for &s in samples {
                self.counts[0][usize::from(s)] += 1;
            }
            return;
        }
        for pixel in samples.chunks_exact(channels) {
            for (count, &s) in self.counts.iter_mut().zip(pixel) {
                count[usize::from(s)] += 1;
            }
        }
    }

    /// Each channel's window (None before any sample).
    pub fn windows(&self) -> Vec<Option<DataWindow>> {
        self.counts
            .iter()
            .map(|count| {
                let total: u64 = count.iter().sum();
                if total == 0 {
                    return None;
                }
                let min = count.iter().position(|&n| n > 0)? as u8;
                let max = count.iter().rposition(|&n| n > 0)? as u8;
                let tail = (total as f64 * TAIL).floor() as u64;
                let mut seen = 0;
                let start = count.iter().position(|&n| {
                    seen += n;
                    seen > tail
                })? as u8;
                seen = 0;
                let end = count.iter().rposition(|&n| {
                    seen += n;
                    seen > tail
                })? as u8;
                Some(DataWindow { min, max, start, end: end.max(start) })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_leave_out_the_tails() {
        let mut h = Histograms::new(2);
        // channel 0: 0..=99 ten times each, and one hot pixel; channel 1: all 7
        let samples: Vec<u8> = (0..1000u32).flat_map(|v| [(v % 100) as u8, 7]).chain([255, 7]).collect();
        h.add(&samples);
        let w = h.windows();
        assert_eq!(w[0], Some(DataWindow { min: 0, max: 255, start: 0, end: 99 }));
        assert_eq!(w[1], Some(DataWindow { min: 7, max: 7, start: 7, end: 7 }));
        assert_eq!(Histograms::new(1).windows(), vec![None]);
    }
}
