// The timing loop of bench/ab.mjs, shared by its Node and Chromium modes (plain ES module,
// no Node APIs: the page imports it from the bench's local server).

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Interleaved A/B timing of two functions doing the same work: each is warmed up (three
 * alternating stretches of ≥ `minMs` / 2, which lets the engine tier both up), a batch size
 * is chosen so one batch takes ≥ `minMs`, then each of `rounds` rounds times one batch of A
 * and one of B, alternating which goes first. Returns the median ms per call of each. `now`
 * is the clock (ms): performance.now by default; Node can pass a CPU-time clock.
 */
export function timeAB(fnA, fnB, { rounds = 9, minMs = 150, now = () => performance.now() } = {}) {
  let fastest = Infinity;
  for (let w = 0; w < 3; w++) {
    for (const fn of [fnA, fnB]) fastest = Math.min(fastest, runFor(fn, minMs / 2, now).msPerCall);
  }
  const n = Math.max(1, Math.ceil(minMs / Math.max(0.01, fastest)));
  const batch = (fn) => {
    const t0 = now();
    for (let i = 0; i < n; i++) fn();
    return (now() - t0) / n;
  };
  const a = [];
  const b = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2) {
      b.push(batch(fnB));
      a.push(batch(fnA));
    } else {
      a.push(batch(fnA));
      b.push(batch(fnB));
    }
  }
  return { a: median(a), b: median(b) };
}

/** Calls `fn` until `ms` have passed (at least once); returns { msPerCall, calls }. */
export function runFor(fn, ms, now = () => performance.now()) {
  const t0 = now();
  let calls = 0;
  let t = t0;
  do {
    fn();
    calls++;
    t = now();
  } while (t - t0 < ms);
  return { msPerCall: (t - t0) / calls, calls };
}

/**
 * The operation of one bench case with one build (`lib`: dist/loader.js after init() or
 * initDecoder()): `encode` turns the samples `input` into a stream, decode the stream
 * `input` into samples.
 */
export const operation = (lib, { encode, config, input, shape }, encodeOptions) =>
  encode ? () => lib.encode(config, input, shape, encodeOptions) : () => lib.decode(config, input, shape);

/**
 * One A/B case: compares A's and B's outputs (encode: whether the streams are identical;
 * decode: the largest difference between the samples), then times both. Returns MP/s.
 * `options.encodeOptionsA`, `options.encodeOptionsB`: encode()'s options for A and for B
 * (e.g. `{ trellis: true }`).
 */
export function abCase(A, B, c, options) {
  const fnA = operation(A, c, options.encodeOptionsA);
  const fnB = operation(B, c, options.encodeOptionsB);
  const outA = fnA();
  const outB = fnB();
  let compared;
  if (c.encode) {
    const identical = outA.length === outB.length && outA.every((v, i) => v === outB[i]);
    compared = { bytesA: outA.length, bytesB: outB.length, identical };
  } else {
    let maxDiff = 0;
    for (let i = 0; i < outA.length; i++) maxDiff = Math.max(maxDiff, Math.abs(outA[i] - outB[i]));
    compared = { maxDiff };
  }
  const { a, b } = timeAB(fnA, fnB, options);
  const mp = (c.shape[0] * c.shape[1]) / 1e6;
  return { ...compared, a: mp / (a / 1000), b: mp / (b / 1000) };
}
