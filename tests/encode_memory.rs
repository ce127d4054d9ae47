//! The encoder keeps a whole chunk's tokens (up to 2 bytes per sample) until its Huffman
//! tables are built, then writes the stream; in wasm, memory ends at 4 GiB and an
//! allocation that fails aborts (a trap). So the tokens and the stream's growth are
//! allocated fallibly (vendor/PATCHES.md, jpeg-encoder section 14): memory running out
//! while a chunk is encoded is an error that says so. This test runs encodes under an
//! allocator that refuses large allocations past a cap, at caps from what the encoder's
//! set-up takes to what the whole encode takes: each encode either gives the same stream
//! as without a cap or the error, and never aborts (which would end this test process).
#![cfg(all(not(target_arch = "wasm32"), feature = "encoder"))]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use zarr_jpeg::{encode_from_with_options, EncodeOptions, ErrorKind};

/// The system allocator, counting the bytes in use; allocations of `LARGE` bytes or more
/// fail when they would take the count past `CAP` (small ones, as in wasm, where a failed
/// `memory.grow` leaves free space for them, always succeed).
struct Capped;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static CAP: AtomicUsize = AtomicUsize::new(usize::MAX);
const LARGE: usize = 16 << 10;

fn refuse(size: usize, growth: usize) -> bool {
    size >= LARGE && IN_USE.load(Ordering::SeqCst).saturating_add(growth) > CAP.load(Ordering::SeqCst)
}

fn count(growth: usize) {
    let now = IN_USE.fetch_add(growth, Ordering::SeqCst) + growth;
    PEAK.fetch_max(now, Ordering::SeqCst);
}

unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if refuse(layout.size(), layout.size()) {
            return std::ptr::null_mut();
        }
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::SeqCst);
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // a growing realloc may hold the old and the new block at once
        if new_size > layout.size() && refuse(new_size, new_size) {
            return std::ptr::null_mut();
        }
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            count(new_size);
            IN_USE.fetch_sub(layout.size(), Ordering::SeqCst);
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Capped = Capped;

/// What an encode with `options` allocates at its peak, beyond what was in use before.
fn peak_of(run: impl FnOnce()) -> usize {
    let before = IN_USE.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    run();
    PEAK.load(Ordering::SeqCst) - before
}

// One test function: the cap is process-wide, so nothing else may allocate meanwhile.
#[test]
fn running_out_of_memory_while_encoding_is_an_error() {
    let cases = [
        (r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]}"#, vec![384u64, 384, 3]),
        (r#"{"quality": 95, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#, vec![384, 384, 3]),
        (r#"{"quality": 100, "encoded_color_space": "grayscale"}"#, vec![512, 512]),
        (r#"{"quality": 90, "encoded_color_space": "rgb"}"#, vec![256, 320, 3]),
    ];
    let (mut refused, mut fitted) = (0, 0);
    for (json, shape) in cases {
        let config = common::config(json);
        // uniform noise: nearly every block is stored raw among the tokens, the most they take
        let samples = common::noise(shape.iter().product::<u64>() as usize, 7);
        for restart_intervals in [true, false] {
            let options = EncodeOptions { restart_intervals, ..EncodeOptions::default() };
            let encode = || encode_from_with_options(&config, &samples.as_slice(), &shape, &options);
            let expected = encode().unwrap();
            // the set-up (sized by the chunk, whatever its content: input rows, the first
            // guess at the stream) against the whole encode (noise: the most tokens)
            let flat = vec![128u8; samples.len()];
            let setup = peak_of(|| {
                encode_from_with_options(&config, &flat.as_slice(), &shape, &options).unwrap();
            });
            let whole = peak_of(|| {
                encode().unwrap();
            });
            assert!(whole > 2 * setup, "{json} {shape:?}: noise takes {whole} bytes, a flat chunk {setup}");
            for step in 0..=24 {
                let cap = setup + (whole - setup) * step / 24;
                CAP.store(IN_USE.load(Ordering::SeqCst) + cap, Ordering::SeqCst);
                let result = encode();
                CAP.store(usize::MAX, Ordering::SeqCst);
                match result {
                    Ok(stream) => {
                        assert_eq!(stream, expected, "{json} {shape:?}, cap {cap}: another stream");
                        fitted += 1;
                    }
                    Err(e) => {
                        assert_eq!(e.kind(), ErrorKind::InvalidData, "{json} {shape:?}, cap {cap}: {e}");
                        assert!(e.message().ends_with("the JPEG encoder failed: out of memory"), "{json} {shape:?}, cap {cap}: {e}");
                        refused += 1;
                    }
                }
            }
        }
    }
    // both outcomes happened (the caps span the encode)
    assert!(refused > 0 && fitted > 0, "{refused} refused, {fitted} fitted");
}
