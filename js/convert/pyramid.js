// The streaming pyramid: level 0 arrives a band of rows at a time (a row of tiles), and
// every level keeps only what it has not yet written — at most one chunk row of samples
// plus one odd row waiting for its pair — so memory does not grow with the image.
//
//   level n+1 = level n averaged over 2×2 areas (rounded mean; a last odd row or column
//   averages what there is), exactly as convert.js's downsample2x does for a whole level.
//
// Chunks are stored as they are made: one file each, or gathered into the shards of the
// current shard row and written when that shard row is complete.
import fs from "node:fs";
import path from "node:path";
import { crc32c } from "./core.js";

const EMPTY = 0xffffffffffffffffn;
/** Chunks (or tiles) in flight at once per level. */
export const IN_FLIGHT = 16; // shard index entry of a chunk that is not stored

function writeAll(fd, bytes) {
  for (let done = 0; done < bytes.length; ) done += fs.writeSync(fd, bytes, done, bytes.length - done);
}

/** Averages two rows (b may be null: the last odd row) of `width` pixels × C into `out`. */
export function downsampleRows(a, b, width, C, out) {
  const pairs = (width >> 1) * 2 * C;
  let o = 0;
  // (the common cases without the loop over channels: about 2× faster)
  if (b && C === 3) {
    for (let i = 0; i < pairs; i += 6, o += 3) {
      out[o] = (a[i] + a[i + 3] + b[i] + b[i + 3] + 2) >> 2;
      out[o + 1] = (a[i + 1] + a[i + 4] + b[i + 1] + b[i + 4] + 2) >> 2;
      out[o + 2] = (a[i + 2] + a[i + 5] + b[i + 2] + b[i + 5] + 2) >> 2;
    }
    if (width & 1) for (let c = 0; c < 3; c++) out[o++] = (a[pairs + c] + b[pairs + c] + 1) >> 1;
    return out;
  }
  if (b && C === 1) {
    for (let i = 0; i < pairs; i += 2) out[o++] = (a[i] + a[i + 1] + b[i] + b[i + 1] + 2) >> 2;
    if (width & 1) out[o++] = (a[pairs] + b[pairs] + 1) >> 1;
    return out;
  }
  if (b) {
    for (let i = 0; i < pairs; i += 2 * C) {
      for (let c = 0; c < C; c++) out[o++] = (a[i + c] + a[i + C + c] + b[i + c] + b[i + C + c] + 2) >> 2;
    }
    if (width & 1) for (let c = 0; c < C; c++) out[o++] = (a[pairs + c] + b[pairs + c] + 1) >> 1;
  } else {
    for (let i = 0; i < pairs; i += 2 * C) {
      for (let c = 0; c < C; c++) out[o++] = (a[i + c] + a[i + C + c] + 1) >> 1;
    }
    if (width & 1) for (let c = 0; c < C; c++) out[o++] = a[pairs + c];
  }
  return out;
}

/**
 * Where a level's chunks go: `store(cy, cx, bytes)` in any order within a chunk row, and
 * `endChunkRow(cy)` after each chunk row (writes the shards it completes).
 *   dir: the level's directory; grid: { chunk, shard, chunks }; key(cy, cx): a chunk key's path parts.
 */
export class ChunkStore {
  constructor(dir, grid, key, onWrite) {
    this.dir = dir;
    this.grid = grid;
    this.key = key;
    this.onWrite = onWrite;
    this.per = grid.shard ? [grid.shard[0] / grid.chunk[0], grid.shard[1] / grid.chunk[1]] : null;
    this.shards = new Map(); // sx → { index, parts, offset }
    this.made = new Set(); // directories made
  }

  #write(file, bytes) {
    const dir = path.dirname(file);
    if (!this.made.has(dir)) {
      fs.mkdirSync(dir, { recursive: true });
      this.made.add(dir);
    }
    fs.writeFileSync(file, bytes);
    this.onWrite(bytes.length);
  }

  /** Stores a chunk's stream; `bytes` an array of streams: one per channel plane (a c axis of grayscale chunks). */
  store(cy, cx, bytes) {
    if (Array.isArray(bytes)) {
      bytes.forEach((b, c) => this.#storeOne(cy, cx, b, c));
      return;
    }
    this.#storeOne(cy, cx, bytes, 0);
  }

  #storeOne(cy, cx, bytes, c) {
    if (!this.per) {
      this.#write(path.join(this.dir, this.key(cy, cx, c)), bytes);
      return;
    }
    // A shard's chunks are appended to its file as they come (the index is kept, not the
    // streams), so a shard row costs no memory for its encoded chunks.
    const [py, px] = this.per;
    const sx = Math.floor(cx / px);
    const id = `${c}/${sx}`;
    let shard = this.shards.get(id);
    if (!shard) {
      const file = path.join(this.dir, this.key(Math.floor(cy / py), sx, c));
      const dir = path.dirname(file);
      if (!this.made.has(dir)) {
        fs.mkdirSync(dir, { recursive: true });
        this.made.add(dir);
      }
      shard = { c, sx, fd: fs.openSync(file, "w"), index: new BigUint64Array(py * px * 2).fill(EMPTY), offset: 0 };
      this.shards.set(id, shard);
    }
    const at = 2 * ((cy % py) * px + (cx - sx * px));
    shard.index[at] = BigInt(shard.offset);
    shard.index[at + 1] = BigInt(bytes.length);
    writeAll(shard.fd, bytes);
    this.onWrite(bytes.length);
    shard.offset += bytes.length;
  }

  /** Closes the files of shards being written (after an error: the temporary store is then removed). */
  abort() {
    for (const shard of this.shards.values()) fs.closeSync(shard.fd);
    this.shards.clear();
  }

  endChunkRow(cy) {
    if (!this.per) return;
    const last = cy === this.grid.chunks[0] - 1;
    if (!last && (cy + 1) % this.per[0] !== 0) return;
    for (const shard of this.shards.values()) {
      const indexBytes = new Uint8Array(shard.index.buffer); // little-endian on every platform Node runs on
      const crc = new DataView(new ArrayBuffer(4));
      crc.setUint32(0, crc32c(indexBytes), true);
      const tail = Buffer.concat([indexBytes, new Uint8Array(crc.buffer)]);
      writeAll(shard.fd, tail);
      this.onWrite(tail.length);
      fs.closeSync(shard.fd);
    }
    this.shards.clear();
  }
}

/**
 * One level that takes rows and writes chunks: `push(rows, n)` (n rows of `width` × C
 * samples), `finish()`. `encodeChunk(samples, cy, cx)` → Promise<Uint8Array>; `next` the
 * level below (or null). `writeChunks` false: level 0 whose chunks were copied, so its rows
 * only feed the level below.
 */
export class LevelWriter {
  constructor({ height, width, channels, grid, store, encodeChunk, next, writeChunks = true, onChunk }) {
    Object.assign(this, { height, width, channels, grid, store, encodeChunk, next, writeChunks, onChunk });
    const [ch] = grid.chunk;
    this.rowLen = width * channels;
    this.band = writeChunks ? new Uint8Array(ch * this.rowLen) : null;
    this.bandRows = 0;
    this.chunkRow = 0;
    this.rowsIn = 0;
    this.pending = null; // an odd row waiting for its pair (for the level below)
    this.down = next ? new Uint8Array(next.rowLen * 64) : null; // rows made for the level below, sent in batches
    this.downRows = 0;
  }

  async push(rows, n) {
    const { rowLen } = this;
    if (this.rowsIn + n > this.height) throw new Error(`internal: level got ${this.rowsIn + n} rows of ${this.height}`);
    // rows into the band, a chunk row at a time
    if (this.band) {
      for (let r = 0; r < n; ) {
        const take = Math.min(n - r, this.grid.chunk[0] - this.bandRows);
        this.band.set(rows.subarray(r * rowLen, (r + take) * rowLen), this.bandRows * rowLen);
        this.bandRows += take;
        r += take;
        if (this.bandRows === this.grid.chunk[0] || this.rowsIn + r === this.height) await this.#writeChunkRow();
      }
    }
    // pairs of rows averaged for the level below (a pair may straddle two calls)
    if (this.next) {
      const row = (r) => rows.subarray(r * rowLen, (r + 1) * rowLen);
      const emit = async (a, b) => {
        downsampleRows(a, b, this.width, this.channels, this.down.subarray(this.downRows * this.next.rowLen));
        if (++this.downRows * this.next.rowLen === this.down.length) await this.#sendDown();
      };
      let r = 0;
      if (this.pending && n > 0) {
        await emit(this.pending, row(0));
        this.pending = null;
        r = 1;
      }
      for (; r + 1 < n; r += 2) await emit(row(r), row(r + 1));
      if (r < n) {
        if (this.rowsIn + n === this.height) await emit(row(r), null); // the last, odd row
        else this.pending = row(r).slice();
      }
    }
    this.rowsIn += n;
  }

  async #sendDown() {
    const n = this.downRows;
    this.downRows = 0;
    // (a copy: `down` is refilled while the level below may still hold rows of it — it does not: it copies them)
    await this.next.push(this.down, n);
  }

  async #writeChunkRow() {
    const [ch, cw] = this.grid.chunk;
    const C = this.channels;
    const cy = this.chunkRow++;
    // at most IN_FLIGHT chunks cut and being encoded at once: enough to keep the workers
    // busy, few enough that their samples do not grow with the image's width
    const pending = [];
    for (let cx = 0, next = 0; cx < this.grid.chunks[1]; cx++) {
      while (next < this.grid.chunks[1] && pending.length < IN_FLIGHT) {
        const samples = cutTile(this.band, this.bandRows, this.width, C, next * cw, ch, cw);
        const job = this.encodeChunk(samples, cy, next++);
        job.catch(() => {}); // (awaited in order below)
        pending.push(job);
      }
      const bytes = await pending.shift();
      this.store.store(cy, cx, bytes);
      this.onChunk?.(Array.isArray(bytes) ? bytes.reduce((n, b) => n + b.length, 0) : bytes.length);
    }
    this.store.endChunkRow(cy);
    this.bandRows = 0;
  }

  /** Called after the last row: flushes rows for the level below, then finishes it. */
  async finish() {
    if (this.rowsIn !== this.height) throw new Error(`internal: level finished with ${this.rowsIn} rows of ${this.height}`);
    if (this.next) {
      if (this.downRows) await this.#sendDown();
      await this.next.finish();
    }
  }
}

/** The (ch × cw × C) tile at column x0 of a band of `rows` rows, edges filled by repeating the last row/column. */
export function cutTile(band, rows, width, C, x0, ch, cw) {
  const out = new Uint8Array(ch * cw * C);
  const rowLen = cw * C;
  const validW = Math.min(cw, width - x0);
  for (let y = 0; y < ch; y++) {
    const sy = Math.min(y, rows - 1);
    const src = (sy * width + x0) * C;
    out.set(band.subarray(src, src + validW * C), y * rowLen);
    for (let x = validW; x < cw; x++) out.copyWithin(y * rowLen + x * C, y * rowLen + (validW - 1) * C, y * rowLen + validW * C);
  }
  return out;
}
