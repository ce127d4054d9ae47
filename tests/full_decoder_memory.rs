//! Before zune-jpeg decodes a stream (the full decoder), `src/decode/full.rs` reserves what
//! zune will allocate, `decode::zune_buffer_sizes`, so that an image too large for memory
//! is an error naming the problem instead of an allocation failure inside zune, which
//! aborts (a trap in wasm: `tests/js/full-decoder.test.mjs` checks that side). The
//! reservation only helps if it covers zune's allocations: this test counts every byte
//! zune allocates while it decodes each stream, and checks the reservation against them.
#![cfg(all(not(target_arch = "wasm32"), feature = "full-decoder"))]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use zarr_jpeg::testing::{read_header, zune_buffer_sizes};
use zune_jpeg::zune_core::bytestream::ZCursor;
use zune_jpeg::zune_core::colorspace::ColorSpace;
use zune_jpeg::zune_core::options::DecoderOptions;
use zune_jpeg::JpegDecoder;

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = IN_USE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(now, Ordering::SeqCst);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::SeqCst);
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            // counted as both at once, as a moving realloc briefly holds both
            let now = IN_USE.fetch_add(new_size, Ordering::SeqCst) + new_size;
            PEAK.fetch_max(now, Ordering::SeqCst);
            IN_USE.fetch_sub(layout.size(), Ordering::SeqCst);
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The bytes zune-jpeg allocates at its peak while decoding `stream` into an output
/// allocated beforehand, as `run_zune` in src/decode/full.rs calls it.
fn zune_peak(stream: &[u8], out: &mut [u8], colour: ColorSpace) -> usize {
    let options = DecoderOptions::default()
        .set_strict_mode(true)
        .jpeg_set_out_colorspace(colour);
    let before = IN_USE.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let mut decoder = JpegDecoder::new_with_options(ZCursor::new(stream), options);
    decoder.decode_headers().unwrap();
    assert_eq!(decoder.output_buffer_size(), Some(out.len()));
    decoder.decode_into(out).unwrap();
    drop(decoder);
    PEAK.load(Ordering::SeqCst) - before
}

// One test function: the counts are process-wide, so nothing else may allocate meanwhile.
#[test]
fn reservation_covers_what_zune_allocates() {
    let mut cases: Vec<(String, Vec<u8>, usize)> = vec![
        ("gray_progressive_q90_cjpeg_61x47.jpg".into(), fixture("gray_progressive_q90_cjpeg_61x47.jpg"), 1),
        ("ycc420_progressive_q90_cjpeg_61x47.jpg".into(), fixture("ycc420_progressive_q90_cjpeg_61x47.jpg"), 3),
        ("ycc420_progressive_q90_pil_61x47.jpg".into(), fixture("ycc420_progressive_q90_pil_61x47.jpg"), 3),
        ("ycc420_q90_cjpeg_61x47.jpg (baseline)".into(), fixture("ycc420_q90_cjpeg_61x47.jpg"), 3),
    ];
    let samplings: [&[(u8, u8)]; 9] = [
        &[(1, 1)],
        // a lone component's factors mean nothing (T.81 A.2.2), but zune pads by them
        &[(2, 2)],
        &[(1, 4)],
        &[(1, 1), (1, 1), (1, 1)],
        &[(2, 2), (1, 1), (1, 1)],
        &[(2, 1), (1, 1), (1, 1)],
        &[(1, 2), (1, 1), (1, 1)],
        &[(4, 1), (1, 1), (1, 1)],
        &[(4, 2), (1, 1), (1, 1)],
    ];
    for sampling in samplings {
        for (width, height) in [(61, 47), (1000, 700), (2049, 1023)] {
            let stream = common::flat_progressive(width, height, sampling);
            cases.push((format!("flat {width}×{height} {sampling:?}"), stream, sampling.len()));
        }
    }
    // sequential streams that code their components in separate scans (`cjpeg -scans`),
    // which zune also keeps whole until the last scan
    let scans = std::env::temp_dir().join(format!("zarr-jpeg-memory-scans-{}.txt", std::process::id()));
    std::fs::write(&scans, "0;\n1;\n2;\n").unwrap();
    let image = common::ihc().tile(300, 500, 0, 0);
    for sample in ["2x2", "1x1", "4x2"] {
        let stream = common::cjpeg(&image, &["-quality", "90", "-sample", sample, "-scans", scans.to_str().unwrap()]);
        cases.push((format!("cjpeg -scans, 500×300 {sample}"), stream, 3));
    }
    std::fs::remove_file(&scans).ok();
    for (name, stream, components) in cases {
        let header = read_header(&stream).unwrap();
        let samples = usize::from(header.width) * usize::from(header.height) * components;
        let mut out = vec![0u8; samples];
        let colour = if components == 1 { ColorSpace::Luma } else { ColorSpace::RGB };
        let peak = zune_peak(&stream, &mut out, colour) as u64;
        let reserved: u64 = zune_buffer_sizes(&header).iter().sum();
        assert!(peak <= reserved, "{name}: zune allocated {peak} bytes at its peak, more than the {reserved} reserved");
        // and not so much more that images zune could decode would be refused
        assert!(reserved <= peak + peak / 4 + (64 << 10), "{name}: {reserved} bytes reserved for zune's {peak}");
        if name.starts_with("flat") {
            assert!(out.iter().all(|&s| s == 128), "{name}: a flat stream decodes to mid-grey");
        }
    }
}
