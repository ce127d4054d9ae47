// The streaming pyramid, two ways:
//
//   - walkQuadtree (JPEG-tiled TIFFs): depth-first over the tiles in Z-order, a level-L block
//     of one tile's size being the 2×2 average of the four level-(L−1) blocks below it. At
//     most one block per level is being filled, plus IN_FLIGHT tiles decoded ahead and
//     IN_FLIGHT chunks being encoded: memory does not depend on the image's size at all.
//   - LevelWriter (PNG, strips, LZW/Deflate tiles, JPEG tiles of an odd size): level 0 arrives
//     a band of rows at a time, and every level keeps only what it has not yet written — at
//     most one chunk row of samples plus one odd row waiting for its pair — so memory does
//     not grow with the image's height (the bands grow with its width).
//
//   level n+1 = level n averaged over 2×2 areas (rounded mean; a last odd row or column
//   averages what there is), exactly as convert.js's downsample2x does for a whole level.
//
// Chunks are stored as they are made (ChunkStore): one file each, or appended to their shard's
// file in row-major order, the shard closed when all its chunks are in (in Z-order, only the
// shards being walked through are open; row by row, one shard row).
import fs from "node:fs";
import path from "node:path";
import { crc32c } from "./core.js";

const EMPTY = 0xffffffffffffffffn; // shard index entry of a chunk that is not stored
/** Chunks (or tiles) in flight at once per level. */
export const IN_FLIGHT = 16;

function writeAll(fd, bytes) {
  for (let done = 0; done < bytes.length; ) done += fs.writeSync(fd, bytes, done, bytes.length - done);
}

/** Plane `c` of samples interleaved `planes` to a pixel (a chunk per channel of a c axis). */
export function planeOf(samples, planes, c) {
  const plane = new Uint8Array(samples.length / planes);
  for (let i = 0, k = c; i < plane.length; i++, k += planes) plane[i] = samples[k];
  return plane;
}

/** The bytes of a chunk's stream, or of its planes' streams (a plane's null: not stored). */
export const streamLength = (bytes) => (Array.isArray(bytes) ? bytes.reduce((n, b) => n + (b?.length ?? 0), 0) : bytes.length);

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
 * Where a level's chunks go: `store(cy, cx, bytes)` in any order, `skip(cy, cx)` for a chunk
 * that is not stored (a sparse tile). Without shards each chunk is its own file, written at
 * once. With shards, a shard's chunks are appended to its file in row-major order whatever
 * order they arrive in (a chunk that comes before its turn waits, encoded, in memory), and
 * the shard is closed — index and CRC written — when every chunk of it has been stored or
 * skipped. Chunks arriving in Z-order (./quadtree.js) or a chunk row at a time (LevelWriter)
 * both keep only the shards they are in the middle of open. `endChunkRow(cy)` closes the
 * shards of a shard row that is complete (for callers that do not skip their sparse chunks).
 *   dir: the level's directory; grid: { chunk, shard, chunks }; key(cy, cx, c): a chunk key's path parts.
 */
export class ChunkStore {
  constructor(dir, grid, key, onWrite) {
    this.dir = dir;
    this.grid = grid;
    this.key = key;
    this.onWrite = onWrite;
    this.per = grid.shard ? [grid.shard[0] / grid.chunk[0], grid.shard[1] / grid.chunk[1]] : null;
    this.shards = new Map(); // "c/sy/sx" → shard being written
    this.made = new Set(); // directories made
  }

  #mkdir(dir) {
    if (!this.made.has(dir)) {
      fs.mkdirSync(dir, { recursive: true });
      this.made.add(dir);
    }
  }

  #write(file, bytes) {
    this.#mkdir(path.dirname(file));
    fs.writeFileSync(file, bytes);
    this.onWrite(bytes.length);
  }

  /** Stores a chunk's stream; `bytes` an array of streams: one per channel plane (a c axis of grayscale chunks). */
  store(cy, cx, bytes) {
    if (Array.isArray(bytes)) {
      // (a plane's null: its chunk is not stored)
      bytes.forEach((b, c) => (b ? this.#storeOne(cy, cx, b, c) : this.#skipOne(cy, cx, c)));
      return;
    }
    this.#storeOne(cy, cx, bytes, 0);
  }

  /** A chunk that is not stored (its fill value stands): counted towards its shard's completion. */
  skip(cy, cx, planes = 1) {
    for (let c = 0; c < planes; c++) this.#skipOne(cy, cx, c);
  }

  #skipOne(cy, cx, c) {
    if (!this.per) return;
    const shard = this.#shard(cy, cx, c);
    shard.waiting.set(this.#at(cy, cx), null);
    this.#advance(shard);
  }

  #at(cy, cx) {
    const [py, px] = this.per;
    return (cy % py) * px + (cx % px);
  }

  #shard(cy, cx, c) {
    const [py, px] = this.per;
    const sy = Math.floor(cy / py);
    const sx = Math.floor(cx / px);
    const id = `${c}/${sy}/${sx}`;
    let shard = this.shards.get(id);
    if (!shard) {
      const rows = Math.min(py, this.grid.chunks[0] - sy * py);
      const cols = Math.min(px, this.grid.chunks[1] - sx * px);
      shard = {
        id, c, sy, sx, rows, cols, fd: null, offset: 0, next: 0, // next: the row-major position (in the shard) to write next
        index: new BigUint64Array(py * px * 2).fill(EMPTY),
        waiting: new Map(), // position → stream (null: skipped) that arrived before its turn
      };
      this.shards.set(id, shard);
    }
    return shard;
  }

  #storeOne(cy, cx, bytes, c) {
    if (!this.per) {
      this.#write(path.join(this.dir, this.key(cy, cx, c)), bytes);
      return;
    }
    const shard = this.#shard(cy, cx, c);
    shard.waiting.set(this.#at(cy, cx), bytes);
    this.#advance(shard);
  }

  /** Writes the waiting streams whose turn has come; closes the shard when all its chunks are in. */
  #advance(shard, force = false) {
    const px = this.per[1];
    const end = (shard.rows - 1) * px + shard.cols; // one past the shard's last position in the grid
    while (shard.next < end) {
      const at = shard.next;
      if (at % px >= shard.cols) {
        shard.next++; // beyond the grid's last column
        continue;
      }
      if (!shard.waiting.has(at)) {
        if (!force) return;
      } else {
        const bytes = shard.waiting.get(at);
        shard.waiting.delete(at);
        if (bytes) this.#append(shard, at, bytes);
      }
      shard.next++;
    }
    this.#close(shard);
  }

  #append(shard, at, bytes) {
    if (shard.fd === null) {
      const file = path.join(this.dir, this.key(shard.sy, shard.sx, shard.c));
      this.#mkdir(path.dirname(file));
      shard.fd = fs.openSync(file, "w");
    }
    shard.index[2 * at] = BigInt(shard.offset);
    shard.index[2 * at + 1] = BigInt(bytes.length);
    writeAll(shard.fd, bytes);
    this.onWrite(bytes.length);
    shard.offset += bytes.length;
  }

  #close(shard) {
    this.shards.delete(shard.id);
    if (shard.fd === null) return; // no chunk stored: no file (every chunk is the fill value)
    const indexBytes = new Uint8Array(shard.index.buffer); // little-endian on every platform Node runs on
    const crc = new DataView(new ArrayBuffer(4));
    crc.setUint32(0, crc32c(indexBytes), true);
    const tail = Buffer.concat([indexBytes, new Uint8Array(crc.buffer)]);
    writeAll(shard.fd, tail);
    this.onWrite(tail.length);
    fs.closeSync(shard.fd);
  }

  /** Shards open at once (being written or waiting for chunks). */
  get open() {
    return this.shards.size;
  }

  /** Closes the files of shards being written (after an error: the temporary store is then removed). */
  abort() {
    for (const shard of this.shards.values()) if (shard.fd !== null) fs.closeSync(shard.fd);
    this.shards.clear();
  }

  /** After chunk row cy: closes the shards of its shard row if that is complete (what was not stored, skipped). */
  endChunkRow(cy) {
    if (!this.per) return;
    const last = cy === this.grid.chunks[0] - 1;
    if (!last && (cy + 1) % this.per[0] !== 0) return;
    const sy = Math.floor(cy / this.per[0]);
    for (const shard of [...this.shards.values()]) if (shard.sy === sy) this.#advance(shard, true);
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
      this.onChunk?.(streamLength(bytes));
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

/**
 * The (ch × cw × C) tile at column x0 of a band of `rows` rows `width` pixels wide, edges
 * filled by repeating the last row/column; `valid`: the columns to take (default: to the band's edge).
 */
export function cutTile(band, rows, width, C, x0, ch, cw, valid = width - x0) {
  const out = new Uint8Array(ch * cw * C);
  const rowLen = cw * C;
  const validW = Math.min(cw, valid);
  for (let y = 0; y < ch; y++) {
    const sy = Math.min(y, rows - 1);
    const src = (sy * width + x0) * C;
    out.set(band.subarray(src, src + validW * C), y * rowLen);
    for (let x = validW; x < cw; x++) out.copyWithin(y * rowLen + x * C, y * rowLen + (validW - 1) * C, y * rowLen + validW * C);
  }
  return out;
}

/**
 * The pyramid of a tiled image, depth-first: a level-L node (a tile-sized block of level L,
 * th × tw pixels at node (y, x)) is the 2×2 average of the (up to) four level-(L−1) nodes
 * (2y + dy, 2x + dx) below it, the level-0 nodes being the decoded tiles. The nodes are
 * walked in Z-order from the top level's, so at most one node is being filled per level
 * (plus the tiles decoded ahead and the chunks being encoded): memory does not depend on the
 * image's size. The averages are downsampleRows's, each node's quadrant made from its child
 * alone: a 2×2 area never straddles two tiles when th and tw are even (the caller's check),
 * and an odd last row or column of a level is the last of an edge node.
 *
 * Every level's chunk grid is its node grid: a level's chunk is the tile (or, for a level
 * smaller than a tile, one chunk row or column rounded up to the MCU), cut from the node and
 * its edges filled by repeating the last row and column, as cutTile does.
 *
 *   shapes: [[h, w]] per level; tile: [th, tw]; channels; grids: the levels' { chunk, chunks };
 *   startTile(ty, tx) → Promise<tile>, called ahead in traversal order (at most `window`
 *     tiles started and not yet used); useTile(ty, tx, tile) → its samples (th × tw × C) or
 *     null (a sparse tile: zeros), called in traversal order;
 *   encodeChunk(level, samples) → Promise<stream> (a chunk of level ≥ 1; at most `encodes`
 *     pending at once); storeChunk(level, cy, cx, stream), called in the order they were made.
 * Nothing is used or stored once a tile or an encode has failed: the walk rejects with that
 * error, and what was in flight then is dropped.
 */
export async function walkQuadtree({ shapes, tile: [th, tw], channels: C, grids, startTile, useTile, encodeChunk, storeChunk, window = IN_FLIGHT, encodes = IN_FLIGHT }) {
  if (th % 2 || tw % 2) throw new Error(`internal: the quadtree needs tiles of an even size, not ${tw} × ${th}`);
  const top = shapes.length - 1;
  const nodeRows = shapes.map(([h]) => Math.ceil(h / th));
  const nodeCols = shapes.map(([, w]) => Math.ceil(w / tw));
  shapes.forEach((_, level) => {
    const [rows, cols] = grids[level].chunks;
    if (rows !== nodeRows[level] || cols !== nodeCols[level]) {
      throw new Error(`internal: level ${level}'s ${rows} × ${cols} chunks are not its ${nodeRows[level]} × ${nodeCols[level]} nodes`);
    }
  });
  // levels above the top, without samples, so that the walk starts from a single node
  let root = top;
  while (Math.ceil(nodeRows[top] / 2 ** (root - top)) > 1 || Math.ceil(nodeCols[top] / 2 ** (root - top)) > 1) root++;
  const rows = (level) => (level <= top ? nodeRows[level] : Math.ceil(nodeRows[top] / 2 ** (level - top)));
  const cols = (level) => (level <= top ? nodeCols[level] : Math.ceil(nodeCols[top] / 2 ** (level - top)));

  // level 0's tiles in the walk's order, started `window` ahead
  function* order(level, y, x) {
    if (y >= rows(level) || x >= cols(level)) return;
    if (level === 0) {
      yield [y, x];
      return;
    }
    for (let dy = 0; dy < 2; dy++) for (let dx = 0; dx < 2; dx++) yield* order(level - 1, 2 * y + dy, 2 * x + dx);
  }
  const tiles = order(root, 0, 0);
  const ahead = [];
  const fill = () => {
    while (ahead.length < window) {
      const next = tiles.next();
      if (next.done) return;
      const [ty, tx] = next.value;
      let job;
      try {
        job = startTile(ty, tx);
      } catch (error) {
        job = Promise.reject(error);
      }
      job.catch(() => {}); // (awaited in order)
      ahead.push({ ty, tx, job });
    }
  };
  const take = async (ty, tx) => {
    fill();
    const head = ahead.shift();
    if (!head || head.ty !== ty || head.tx !== tx) throw new Error(`internal: tile (${ty}, ${tx}) out of order`);
    fill();
    return useTile(ty, tx, await head.job);
  };

  const rowLen = tw * C;
  // A block's buffer is used again once its chunk's encode has settled (the encoder has read
  // it) and its parent has averaged it (which happens before the next chunk is made): fewer
  // fresh allocations of a tile's size. (One block is made per chunk encoded, so a few spares
  // are enough; more would only hold memory, tiles of 1024² and more being common.)
  const SPARE_BLOCKS = 4;
  const spare = [];
  const block = () => {
    const buffer = spare.pop();
    return buffer ? buffer.fill(0) : new Uint8Array(th * rowLen); // (zeros: a sparse tile's quadrant)
  };
  const pending = []; // encodes in flight, oldest first: { level, y, x, chunk, job }
  const storeOldest = async () => {
    const { level, y, x, chunk, job } = pending.shift();
    storeChunk(level, y, x, await job);
    if (chunk.length === th * rowLen && spare.length < SPARE_BLOCKS) spare.push(chunk);
  };
  const emit = async (level, y, x, samples) => {
    const [ch, cw] = grids[level].chunk;
    const hv = Math.min(th, shapes[level][0] - y * th);
    const wv = Math.min(tw, shapes[level][1] - x * tw);
    // (a whole node is its chunk: it is not changed once made, so it is sent as it is)
    const chunk = ch === th && cw === tw && hv === th && wv === tw ? samples : cutTile(samples, hv, tw, C, 0, ch, cw, wv);
    if (pending.length >= encodes) await storeOldest();
    const job = encodeChunk(level, chunk);
    job.catch(() => {}); // (awaited in order)
    pending.push({ level, y, x, chunk, job });
  };

  const node = async (level, y, x) => {
    if (level === 0) return take(y, x);
    const own = level <= top ? block() : null;
    for (let dy = 0; dy < 2; dy++) {
      for (let dx = 0; dx < 2; dx++) {
        const cy = 2 * y + dy;
        const cx = 2 * x + dx;
        if (cy >= rows(level - 1) || cx >= cols(level - 1)) continue;
        const child = await node(level - 1, cy, cx);
        if (!own || !child) continue; // (a sparse tile: zeros, as `own` is)
        // the child's valid part, halved into its quadrant of this node
        const hv = Math.min(th, shapes[level - 1][0] - cy * th);
        const wv = Math.min(tw, shapes[level - 1][1] - cx * tw);
        const at = (dy * th) / 2 * rowLen + (dx * tw) / 2 * C;
        for (let r = 0; 2 * r < hv; r++) {
          const a = child.subarray(2 * r * rowLen, 2 * r * rowLen + wv * C);
          const b = 2 * r + 1 < hv ? child.subarray((2 * r + 1) * rowLen, (2 * r + 1) * rowLen + wv * C) : null;
          downsampleRows(a, b, wv, C, own.subarray(at + r * rowLen));
        }
      }
    }
    if (own) await emit(level, y, x, own);
    return own;
  };
  await node(root, 0, 0);
  while (pending.length) await storeOldest();
}
