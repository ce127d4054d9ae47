//! What a conversion reports as it goes (progress, warnings), and its clock: the bottom
//! layer every stage may call.

use super::error::Result;

/// What a level's progress event says.
#[derive(Clone, Debug)]
pub enum Progress {
    /// A level's first chunk row is being written; the array's shape.
    Level { shape: Vec<u32> },
    /// A chunk of the level was written.
    Chunk { level_chunks_done: u64, level_chunks_total: u64 },
}

/// Where a conversion reports as it goes. A progress call that returns an error stops the
/// conversion with that error (e.g. an interrupt the caller noticed).
pub trait Events {
    fn warning(&mut self, _message: &str) {}
    fn progress(&mut self, _level: usize, _levels: usize, _chunks_done: u64, _chunks_total: u64, _what: &Progress) -> Result<()> {
        Ok(())
    }
}

/// Events that go nowhere.
pub struct Quiet;
impl Events for Quiet {}

/// Seconds on a monotonic clock (0 where there is none: wasm without a host clock).
pub(super) fn now() -> f64 {
    #[cfg(not(target_arch = "wasm32"))]
    {
        use std::sync::OnceLock;
        static START: OnceLock<std::time::Instant> = OnceLock::new();
        START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64()
    }
    #[cfg(target_arch = "wasm32")]
    {
        0.0
    }
}
