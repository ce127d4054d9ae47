// The timing loop of bench/ab.mjs, shared by its Node and Chromium modes.
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Interleaved A/B decode timing of one stream: median MP/s of each, max abs difference. */
export function runCase(A, B, jpeg, config, shape, { rounds = 9, minMs = 150 } = {}) {
  const mp = (shape[0] * shape[1]) / 1e6;
  const outA = A.decode(config, jpeg, shape);
  const outB = B.decode(config, jpeg, shape);
  let maxDiff = 0;
  for (let i = 0; i < outA.length; i++) maxDiff = Math.max(maxDiff, Math.abs(outA[i] - outB[i]));
  // Warm up (lets the engine tier up) and size a batch so one sample takes ≥ minMs.
  let n = 1;
  for (let w = 0; w < 3; w++) {
    for (const lib of [A, B]) {
      const t0 = performance.now();
      lib.decode(config, jpeg, shape);
      n = Math.max(n, Math.ceil(minMs / Math.max(0.01, performance.now() - t0)));
    }
  }
  const time = (lib) => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) lib.decode(config, jpeg, shape);
    return (mp * n) / ((performance.now() - t0) / 1000);
  };
  const a = [];
  const b = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2) {
      b.push(time(B));
      a.push(time(A));
    } else {
      a.push(time(A));
      b.push(time(B));
    }
  }
  return { a: median(a), b: median(b), maxDiff };
}
