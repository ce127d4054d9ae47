// A progressive JPEG of a flat mid-grey image, written by hand: one DC scan of every
// component, each block's DC difference 0 coded in one bit. The smallest stream the
// decoders accept for an image of that size, so the kind a hostile chunk would use to
// claim a huge image (tests/full_decoder_memory.rs writes the same streams natively).

/** The stream for a `width` × `height` image with these [h, v] sampling factors. */
export function flatProgressive(width, height, sampling) {
  const n = sampling.length;
  const head = [0xff, 0xd8];
  head.push(0xff, 0xdb, 0, 67, 0, ...new Array(64).fill(1)); // one quantisation table of 1s
  head.push(0xff, 0xc2, 0, 8 + 3 * n, 8, height >> 8, height & 255, width >> 8, width & 255, n);
  sampling.forEach(([h, v], i) => head.push(i + 1, (h << 4) | v, 0));
  head.push(0xff, 0xc4, 0, 20, 0x00, 1, ...new Array(15).fill(0), 0); // DC table: '0' → category 0
  head.push(0xff, 0xda, 0, 6 + 2 * n, n);
  sampling.forEach((_, i) => head.push(i + 1, 0x00));
  head.push(0, 0, 0);
  let blocks;
  if (n === 1) {
    blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  } else {
    const hMax = Math.max(...sampling.map((f) => f[0]));
    const vMax = Math.max(...sampling.map((f) => f[1]));
    const perMcu = sampling.reduce((s, [h, v]) => s + h * v, 0);
    blocks = Math.ceil(width / (8 * hMax)) * Math.ceil(height / (8 * vMax)) * perMcu;
  }
  const dataBytes = Math.ceil(blocks / 8);
  const stream = new Uint8Array(head.length + dataBytes + 2);
  stream.set(head);
  if (blocks % 8 !== 0) stream[head.length + dataBytes - 1] = 0xff >> (blocks % 8); // unused bits are 1s
  stream.set([0xff, 0xd9], head.length + dataBytes);
  return stream;
}
