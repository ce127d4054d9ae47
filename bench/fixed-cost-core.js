// The timing loop of bench/fixed-cost.mjs, shared by its Node and Chromium modes (plain ES
// module, no Node APIs: the page imports it from the bench's local server).

/**
 * Per size, µs per decodeInto() for each build in `libs` (medians over `rounds` rounds,
 * the builds interleaved, each batch ≥ `minMs`), and whether the builds' samples agree.
 * `streams[k]` is the 4:2:0 stream of a `sizes[k]`² RGB chunk.
 */
export function measure({ libs, streams, sizes, config, rounds, minMs }) {
  /** µs per decodeInto() over a batch of at least minMs. */
  function time(lib, bytes, shape, out) {
    let n = 0;
    const t0 = performance.now();
    let t = t0;
    do {
      for (let i = 0; i < 16; i++) lib.decodeInto(config, bytes, shape, out);
      n += 16;
      t = performance.now();
    } while (t - t0 < minMs);
    return ((t - t0) * 1000) / n;
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  return sizes.map((size, k) => {
    const shape = [size, size, 3];
    const outs = libs.map(() => new Uint8Array(size * size * 3));
    libs.forEach((lib, i) => lib.decodeInto(config, streams[k], shape, outs[i]));
    const same = outs.every((o) => o.every((v, j) => v === outs[0][j]));
    libs.forEach((lib, i) => time(lib, streams[k], shape, outs[i])); // warm-up
    const us = libs.map(() => []);
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 ? [...libs.keys()].reverse() : [...libs.keys()];
      for (const i of order) us[i].push(time(libs[i], streams[k], shape, outs[i]));
    }
    return { same, us: us.map(median) };
  });
}
