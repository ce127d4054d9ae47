#!/usr/bin/env python3
"""Dependent table look-ups per block of our Huffman decoder, for several look-aheads.

The baseline decoder (src/baseline/huffman.rs) decodes a block's AC symbols with one table
look-up per step; an entry holds one symbol, or two when both fit in the look-ahead (the
first with a value in -256..=255, the second in -16..=15 or EOB), and a symbol whose code
and magnitude bits do not fit takes the slow path (a second look-up). Each look-up waits
for the previous one's length, so the steps per block are the length of the chain that
bounds the Huffman stage. This decodes the first restart interval of each baseline stream
given (our encoder writes intervals of 64 image rows) and counts, for look-aheads of 9 to
13 bits, the steps per block and the share of steps that pair or take the slow path.

    python3 bench/huffman-steps.py stream.jpg [stream.jpg ...]

Streams like the bench's: `node bench/run.mjs` writes none to disk, so encode them with
the package, e.g. `encode({quality: 90, encoded_color_space: "rgb"}, rgb, [h, w, 3])`.
"""
import sys


def segments(data):
    """(marker, payload) of each segment up to SOS, then the entropy-coded data after it."""
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            raise ValueError(f"no marker at byte {at}")
        marker = data[at + 1]
        length = data[at + 2] << 8 | data[at + 3]
        yield marker, data[at + 4 : at + 2 + length]
        at += 2 + length
        if marker == 0xDA:
            yield None, data[at:]
            return


def first_interval(scan):
    """The destuffed bytes of the scan's first restart interval (to RSTn or EOI)."""
    out = bytearray()
    k = 0
    while k + 1 < len(scan):
        if scan[k] == 0xFF:
            if scan[k + 1] == 0:
                out.append(0xFF)
                k += 2
                continue
            break
        out.append(scan[k])
        k += 1
    return bytes(out)


def parse(path):
    data = open(path, "rb").read()
    tables, sampling, scan_components, scan = {}, {}, [], b""
    for marker, payload in segments(data):
        if marker == 0xC4:
            j = 0
            while j < len(payload):
                slot, counts = payload[j], payload[j + 1 : j + 17]
                values = payload[j + 17 : j + 17 + sum(counts)]
                code, k, table = 0, 0, {}
                for length in range(1, 17):
                    for _ in range(counts[length - 1]):
                        table[(length, code)] = values[k]
                        k += 1
                        code += 1
                    code <<= 1
                tables[slot] = table
                j += 17 + sum(counts)
        elif marker == 0xC0:
            for c in range(payload[5]):
                sampling[payload[6 + 3 * c]] = (payload[7 + 3 * c] >> 4) * (payload[7 + 3 * c] & 15)
        elif marker in (0xC1, 0xC2, 0xC3, 0xC9, 0xCA, 0xCB):
            raise ValueError(f"{path}: not a baseline stream")
        elif marker == 0xDA:
            scan_components = [(payload[1 + 2 * c], payload[2 + 2 * c] >> 4, payload[2 + 2 * c] & 15) for c in range(payload[0])]
        elif marker is None:
            scan = first_interval(payload)
    return tables, sampling, scan_components, scan


def blocks_of(path):
    """Each block's AC symbols as (code length, magnitude bits, run or 'EOB', value)."""
    tables, sampling, components, scan = parse(path)
    bits = "".join(format(b, "08b") for b in scan)
    pos = 0

    def symbol(table):
        nonlocal pos
        code = 0
        for length in range(1, 17):
            code = code << 1 | (bits[pos + length - 1] == "1")
            if (length, code) in table:
                pos += length
                return length, table[(length, code)]
        raise ValueError("bad code")

    blocks = []
    try:
        while pos < len(bits) - 64:
            for component, dc_slot, ac_slot in components:
                for _ in range(sampling[component]):
                    _, size = symbol(tables[dc_slot])
                    pos += size
                    k, block = 1, []
                    while k < 64:
                        length, rs = symbol(tables[0x10 | ac_slot])
                        run, size = rs >> 4, rs & 15
                        raw = int(bits[pos : pos + size], 2) if size else 0
                        value = raw if size == 0 or raw >= 1 << (size - 1) else raw - (1 << size) + 1
                        pos += size
                        if size == 0 and run != 15:
                            block.append((length, 0, "EOB", 0))
                            break
                        block.append((length, size, run, value))
                        k += run + 1
                    blocks.append(block)
    except (IndexError, ValueError):
        pass  # the padding at the interval's end
    return blocks


def steps(blocks, bits):
    count = pairs = slow = 0
    for block in blocks:
        i = 0
        while i < len(block):
            length, size, run, value = block[i]
            count += 1
            if length + size > bits or (run != "EOB" and not -256 <= value <= 255):
                slow += 1
                i += 1
                continue
            if run != "EOB" and i + 1 < len(block):
                length2, size2, _, value2 = block[i + 1]
                if length + size < bits and length2 + size2 <= bits - length - size and -16 <= value2 <= 15:
                    pairs += 1
                    i += 2
                    continue
            i += 1
    return count / len(blocks), pairs / count, slow / count


for path in sys.argv[1:]:
    blocks = blocks_of(path)
    print(f"{path}: {len(blocks)} blocks of the first restart interval")
    for bits in range(9, 14):
        per_block, paired, slow = steps(blocks, bits)
        print(f"  {bits:2} bits: {per_block:6.2f} steps per block, {100 * paired:5.1f} % paired, {100 * slow:4.1f} % slow")
