// One job of the converter's encoders, wherever it runs: in an encoding worker
// (convert-worker.js) or on the calling thread when it would otherwise wait for them
// (convert-encoders.js). The same code either way, so the store does not depend on where.
import { encode, decode } from "./loader.js";

/**
 * {id, config, options, samples, shape, decode} → an encode (and its decode again, for the
 * PSNR); {id, config, stream, shape} → a tile's decode. → [answer, transfer list]; a failure
 * is an answer with `error`.
 */
export function runJob({ id, config, options, samples, stream: input, shape, decode: again }) {
  try {
    if (input !== undefined) {
      const out = decode(config, input, shape);
      return [{ id, samples: out }, [out.buffer]];
    }
    const stream = encode(config, samples, shape, options);
    const decoded = again ? decode(config, stream, shape) : undefined;
    return [{ id, stream, decoded }, decoded ? [stream.buffer, decoded.buffer] : [stream.buffer]];
  } catch (error) {
    return [{ id, error: String(error?.message ?? error) }, []];
  }
}
