//! Which IDCT kernel each block gets: zune's decoder's choice (`mcu.rs`,
//! `decode_mcu_width_fast`), by the block's zig-zag length: the 1×1 IDCT for DC-only
//! blocks, the 4×4 one when the last coefficient is within the first 10, the full one
//! otherwise.
//!
//! In the decode-only modules' SIMD build the kernels are known when compiling (zune's
//! simd128 kernels, with the 16-bit 8×8 one, which is 0.9 KB gzip more code than the
//! writer's payload has room for), so they are called directly: through function pointers
//! each block paid a `call_indirect` (a table bound and a signature check, and an
//! indirect branch), and same-run A/Bs gave direct calls 1.00–1.07× on whole decodes
//! (three runs, samples identical). Every other build holds the kernels zune's choosers
//! return, as function pointers. The same samples in every build.

use zune_jpeg::zune_core::options::DecoderOptions;

use super::Defer;

/// The IDCT kernels of a decode (`Idct::new`), applied per block by `Idct::block`.
#[derive(Clone, Copy)]
pub(crate) struct Idct(kernels::Kernels);

impl Idct {
    pub(crate) fn new(options: &DecoderOptions) -> Idct {
        Idct(kernels::Kernels::new(options))
    }

    /// The IDCT of `coefficients` (a block whose zig-zag length is `len`) into the 8 rows
    /// of `samples` from `at` (always inside the row buffer, which is sized for mcu_x
    /// MCUs; checked so that nothing can panic).
    #[inline(always)]
    pub(crate) fn block(
        &self,
        coefficients: &mut [i32; 64],
        len: u32,
        samples: &mut [i16],
        at: usize,
        stride: usize,
    ) -> Result<(), Defer> {
        let out = samples
            .get_mut(at..at + 7 * stride + 8)
            .ok_or(Defer::INTERNAL)?;
        self.0.run(coefficients, len, out, stride);
        Ok(())
    }
}

/// The decode-only modules' SIMD build: zune's simd128 kernels, called directly.
#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(feature = "encoder")
))]
mod kernels {
    use zune_jpeg::__wasm_simd128_kernels as k;
    use zune_jpeg::zune_core::options::DecoderOptions;

    #[derive(Clone, Copy)]
    pub(super) struct Kernels;

    impl Kernels {
        pub(super) fn new(_options: &DecoderOptions) -> Kernels {
            Kernels
        }

        #[inline(always)]
        pub(super) fn run(
            self,
            coefficients: &mut [i32; 64],
            len: u32,
            out: &mut [i16],
            stride: usize,
        ) {
            // DC-only blocks go through the full kernel's flat-block shortcut, as in the
            // other builds' SIMD choice.
            if (2..=10).contains(&len) {
                k::idct4x4_wasm_simd(coefficients, out, stride);
            } else {
                k::idct_i16_wasm_simd(coefficients, out, stride);
            }
        }
    }
}

/// Every other build: the kernels zune's choosers return, as function pointers.
#[cfg(not(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(feature = "encoder")
)))]
mod kernels {
    use zune_jpeg::__kernels as zk;
    use zune_jpeg::zune_core::options::DecoderOptions;

    #[derive(Clone, Copy)]
    pub(super) struct Kernels {
        one: zk::IDCTPtr,
        four: zk::IDCTPtr,
        full: zk::IDCTPtr,
    }

    impl Kernels {
        pub(super) fn new(options: &DecoderOptions) -> Kernels {
            let full = zk::choose_idct_func(options);
            Kernels {
                // DC-only blocks: the SIMD full IDCT starts with the same flat-block
                // shortcut, giving the 1×1 IDCT's samples, so SIMD builds use it and leave
                // the 1×1 function out (~100 B gzip); the scalar full IDCT would first
                // compare 63 coefficients
                one: if cfg!(all(target_arch = "wasm32", target_feature = "simd128")) {
                    full
                } else {
                    zk::choose_idct_1x1_func(options)
                },
                four: zk::choose_idct_4x4_func(options),
                full,
            }
        }

        #[inline(always)]
        pub(super) fn run(
            self,
            coefficients: &mut [i32; 64],
            len: u32,
            out: &mut [i16],
            stride: usize,
        ) {
            if len <= 1 {
                (self.one)(coefficients, out, stride);
            } else if len <= 10 {
                (self.four)(coefficients, out, stride);
            } else {
                (self.full)(coefficients, out, stride);
            }
        }
    }
}
