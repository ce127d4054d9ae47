//! Colour conversion between RGB and YCbCr with libjpeg's fixed-point arithmetic
//! (jccolor.c / jdcolor.c), so our conversions round exactly as libjpeg-turbo's do.

const SCALE_BITS: i32 = 16;
const ONE_HALF: i32 = 1 << (SCALE_BITS - 1);

const fn fix(x: f64) -> i32 {
    (x * (1 << SCALE_BITS) as f64 + 0.5) as i32
}

#[inline(always)]
fn clamp_u8(v: i32) -> u8 {
    v.clamp(0, 255) as u8
}

/// One RGB pixel to YCbCr (JFIF, full range), as libjpeg's `rgb_ycc_convert`.
#[inline(always)]
pub fn rgb_to_ycbcr(r: u8, g: u8, b: u8) -> (u8, u8, u8) {
    let (r, g, b) = (i32::from(r), i32::from(g), i32::from(b));
    let y = (fix(0.29900) * r + fix(0.58700) * g + fix(0.11400) * b + ONE_HALF) >> SCALE_BITS;
    let cb = (-fix(0.16874) * r - fix(0.33126) * g + fix(0.5) * b + (128 << SCALE_BITS) + ONE_HALF
        - 1)
        >> SCALE_BITS;
    let cr = (fix(0.5) * r - fix(0.41869) * g - fix(0.08131) * b + (128 << SCALE_BITS) + ONE_HALF
        - 1)
        >> SCALE_BITS;
    (y as u8, cb as u8, cr as u8)
}

/// One YCbCr pixel to RGB, as libjpeg's `ycc_rgb_convert`.
#[inline(always)]
pub fn ycbcr_to_rgb(y: u8, cb: u8, cr: u8) -> (u8, u8, u8) {
    let y = i32::from(y);
    let cb = i32::from(cb) - 128;
    let cr = i32::from(cr) - 128;
    let r = y + ((fix(1.40200) * cr + ONE_HALF) >> SCALE_BITS);
    let g = y + ((-fix(0.34414) * cb + ONE_HALF - fix(0.71414) * cr) >> SCALE_BITS);
    let b = y + ((fix(1.77200) * cb + ONE_HALF) >> SCALE_BITS);
    (clamp_u8(r), clamp_u8(g), clamp_u8(b))
}

/// Converts interleaved RGB samples to interleaved YCbCr in place.
pub fn rgb_to_ycbcr_in_place(samples: &mut [u8]) {
    for px in samples.chunks_exact_mut(3) {
        let (y, cb, cr) = rgb_to_ycbcr(px[0], px[1], px[2]);
        px[0] = y;
        px[1] = cb;
        px[2] = cr;
    }
}

/// Converts interleaved YCbCr samples to interleaved RGB in place.
pub fn ycbcr_to_rgb_in_place(samples: &mut [u8]) {
    for px in samples.chunks_exact_mut(3) {
        let (r, g, b) = ycbcr_to_rgb(px[0], px[1], px[2]);
        px[0] = r;
        px[1] = g;
        px[2] = b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primaries_match_jfif() {
        // T.871 equations, rounded: white, black, and pure red.
        assert_eq!(rgb_to_ycbcr(255, 255, 255), (255, 128, 128));
        assert_eq!(rgb_to_ycbcr(0, 0, 0), (0, 128, 128));
        assert_eq!(rgb_to_ycbcr(255, 0, 0), (76, 85, 255));
        assert_eq!(ycbcr_to_rgb(76, 85, 255), (254, 0, 0));
    }

    #[test]
    fn round_trip_error_is_small() {
        let mut worst = 0;
        for r in (0..=255).step_by(5) {
            for g in (0..=255).step_by(5) {
                for b in (0..=255).step_by(5) {
                    let (y, cb, cr) = rgb_to_ycbcr(r, g, b);
                    let (r2, g2, b2) = ycbcr_to_rgb(y, cb, cr);
                    for (a, b) in [(r, r2), (g, g2), (b, b2)] {
                        worst = worst.max((i32::from(a) - i32::from(b)).abs());
                    }
                }
            }
        }
        assert!(worst <= 2, "8-bit YCbCr round trip error {worst}");
    }
}
