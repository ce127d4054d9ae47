// OME-Zarr RFC-16 allowlist: allowlist.json against the allowlist written out below,
// checkArray, checkDataset, supportedExtensions and the `check` CLI.
// Run: node --test tests/js/allowlist.test.mjs
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, mkdir, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  allowlist, checkArray, checkDataset, supportedExtensions, canRead, lookupExtension, formatReport, EXTENSION_POINTS,
} from "../../js/allowlist.js";
import { main as checkMain } from "../../js/check-cli.js";
import { startServer } from "./helpers/server.mjs";

// ---------------------------------------------------------------- the allowlist, written out independently of allowlist.json

// RFC-16 (draft D3) lists, per extension point, each name with the level at which readers
// must support it and where it is specified ("core": the Zarr v3 core specification,
// "registry": zarr-extensions). Written here a second time, compactly, so that an edit to
// allowlist.json has to agree with an independent statement of the same rules.
const EXPECTED = {
  data_type: {
    core: {
      MUST: ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32", "float64"],
      SHOULD: ["int64", "uint64", "float16"],
    },
  },
  codec: {
    core: { MUST: ["blosc", "bytes", "crc32c", "gzip", "sharding_indexed", "transpose"] },
    registry: {
      MUST: ["zstd"],
      SHOULD: ["bitround", "cast_value", "conditional", "jpeg", "reshape", "scale_offset"],
      MAY: ["packbits", "zfp"],
    },
  },
  chunk_grid: { core: { MUST: ["regular"] }, registry: { MAY: ["rectilinear"] } },
  chunk_key_encoding: { core: { MUST: ["default", "v2"] }, registry: { MAY: ["template"] } },
};
// A codec's kind decides where it may sit in a codec chain.
const CODEC_TYPES = {
  "array → array": ["transpose", "bitround", "cast_value", "reshape", "scale_offset"],
  "array → bytes": ["bytes", "sharding_indexed", "jpeg", "packbits", "zfp"],
  "bytes → bytes": ["blosc", "crc32c", "gzip", "zstd", "conditional"],
};

const expectedEntries = Object.entries(EXPECTED).flatMap(([point, bySource]) =>
  Object.entries(bySource).flatMap(([source, byLevel]) =>
    Object.entries(byLevel).flatMap(([readers, names]) => names.map((name) => ({
      point, name, readers, source,
      type: point === "codec" ? Object.keys(CODEC_TYPES).find((type) => CODEC_TYPES[type].includes(name)) : undefined,
    })))));

describe("allowlist.json matches the RFC-16 allowlist entry by entry", () => {
  test("the expected table has 12 data types, 15 codecs, 2 chunk grids, 3 chunk key encodings", () => {
    const count = (point) => expectedEntries.filter((e) => e.point === point).length;
    assert.deepEqual([count("data_type"), count("codec"), count("chunk_grid"), count("chunk_key_encoding")], [12, 15, 2, 3]);
    for (const entry of expectedEntries.filter((e) => e.point === "codec")) assert.ok(entry.type, `${entry.name} has a codec type`);
  });

  for (const expected of expectedEntries) {
    test(`${expected.point} "${expected.name}": readers ${expected.readers}, source ${expected.source}`, () => {
      const entry = allowlist.extensionPoints[expected.point].entries.find((e) => e.name === expected.name);
      assert.ok(entry, `allowlist.json has ${expected.point} "${expected.name}"`);
      assert.equal(entry.readers, expected.readers);
      assert.equal(entry.source, expected.source);
      assert.equal(typeof entry.description, "string");
      assert.ok(entry.description.length > 0, "a description for the report");
      if (expected.type) assert.equal(entry.type, expected.type);
    });
  }

  test("allowlist.json has no entry that the expected table lacks", () => {
    for (const point of ["data_type", "codec", "chunk_grid", "chunk_key_encoding"]) {
      const json = allowlist.extensionPoints[point].entries.map((e) => e.name).sort();
      const expected = expectedEntries.filter((e) => e.point === point).map((e) => e.name).sort();
      assert.deepEqual(json, expected, point);
    }
  });

  test("RFC-16 storage transformers: the allowlist is empty", () => {
    assert.deepEqual(allowlist.extensionPoints.storage_transformer.entries, []);
  });

  test("RFC-16 Conformance: numcodecs.bitround is a deprecated alias of bitround", () => {
    assert.equal(allowlist.aliases.find((a) => a.name === "numcodecs.bitround")?.aliasOf, "bitround");
  });

  test("every alias, related and excluded name says where it comes from, and its sources are defined", () => {
    for (const item of [...allowlist.aliases, ...allowlist.related, ...allowlist.excluded]) {
      assert.ok(item.sources.length > 0, item.name);
      for (const source of item.sources) assert.ok(allowlist.sources[source], `${item.name}: source "${source}" is described in "sources"`);
      assert.equal(lookupExtension(item.extensionPoint, item.name).level, "not-allowed", `${item.name} is not itself allowlisted`);
    }
    for (const alias of allowlist.aliases) {
      assert.ok(lookupExtension(alias.extensionPoint, alias.aliasOf).entry, `${alias.name} → ${alias.aliasOf} is allowlisted`);
    }
  });
});

// ---------------------------------------------------------------- checkArray

const RFC_CONFORMING_EXAMPLE = {
  zarr_format: 3,
  node_type: "array",
  shape: [1, 512, 2048, 2048],
  data_type: "uint16",
  chunk_grid: { name: "regular", configuration: { chunk_shape: [1, 128, 1024, 1024] } },
  chunk_key_encoding: { name: "default", configuration: { separator: "/" } },
  codecs: [
    {
      name: "sharding_indexed",
      configuration: {
        chunk_shape: [1, 32, 32, 32],
        codecs: [
          { name: "bytes", configuration: { endian: "little" } },
          { name: "zstd", configuration: { level: 3 } },
        ],
        index_codecs: [{ name: "bytes", configuration: { endian: "little" } }, { name: "crc32c" }],
        index_location: "end",
      },
    },
  ],
  fill_value: 0,
};

const RFC_NONCONFORMING_EXAMPLE = {
  codecs: [
    { name: "bytes", configuration: { endian: "little" } },
    { name: "numcodecs.lz4", configuration: { acceleration: 1 } },
  ],
};

/** A conforming single-chunk array, with members replaced. */
function array(overrides = {}) {
  return {
    zarr_format: 3,
    node_type: "array",
    shape: [64, 64],
    data_type: "uint8",
    chunk_grid: { name: "regular", configuration: { chunk_shape: [64, 64] } },
    chunk_key_encoding: { name: "default", configuration: { separator: "/" } },
    codecs: [{ name: "bytes" }, { name: "zstd", configuration: { level: 1 } }],
    fill_value: 0,
    ...overrides,
  };
}

const at = (result, location) => result.findings.find((f) => f.location === location);
const errors = (result) => result.findings.filter((f) => f.severity === "error");

describe("checkArray", () => {
  test("RFC-16 example: the sharded uint16 array conforms, nested codecs are reported with their locations", () => {
    const result = checkArray(RFC_CONFORMING_EXAMPLE);
    assert.equal(result.ok, true);
    assert.deepEqual(errors(result), []);
    const seen = result.findings.map((f) => [f.extensionPoint, f.name, f.location, f.level]);
    assert.deepEqual(seen, [
      ["data_type", "uint16", "data_type", "MUST"],
      ["chunk_grid", "regular", "chunk_grid", "MUST"],
      ["chunk_key_encoding", "default", "chunk_key_encoding", "MUST"],
      ["codec", "sharding_indexed", "codecs[0]", "MUST"],
      ["codec", "bytes", "codecs[0].configuration.codecs[0]", "MUST"],
      ["codec", "zstd", "codecs[0].configuration.codecs[1]", "MUST"],
      ["codec", "bytes", "codecs[0].configuration.index_codecs[0]", "MUST"],
      ["codec", "crc32c", "codecs[0].configuration.index_codecs[1]", "MUST"],
    ]);
  });

  test("RFC-16 example: numcodecs.lz4 is not on the allowlist", () => {
    const result = checkArray(RFC_NONCONFORMING_EXAMPLE);
    assert.equal(result.ok, false);
    const lz4 = at(result, "codecs[1]");
    assert.equal(lz4.name, "numcodecs.lz4");
    assert.equal(lz4.level, "not-allowed");
    assert.equal(lz4.severity, "error");
    assert.match(lz4.message, /numcodecs\.lz4.*codecs\[1\].*not on the allowlist/);
    assert.equal(at(result, "codecs[0]").level, "MUST");
    // The example is a fragment: the missing required members are reported too, as invalid metadata.
    assert.ok(result.findings.some((f) => f.location === "data_type" && f.level === "invalid"));
  });

  test("RFC-16 example, completed into a full array, fails only on numcodecs.lz4", () => {
    const result = checkArray(array(RFC_NONCONFORMING_EXAMPLE));
    assert.deepEqual(errors(result).map((f) => f.name), ["numcodecs.lz4"]);
  });

  describe("every RFC-16 table entry is reported at its reader level", () => {
    for (const entry of expectedEntries) {
      test(`${entry.point} "${entry.name}" → ${entry.readers}`, () => {
        const overrides = {
          data_type: { data_type: entry.name },
          codec: { codecs: [{ name: entry.name }] },
          chunk_grid: { chunk_grid: { name: entry.name, configuration: {} } },
          chunk_key_encoding: { chunk_key_encoding: { name: entry.name } },
        }[entry.point];
        const location = { data_type: "data_type", codec: "codecs[0]", chunk_grid: "chunk_grid", chunk_key_encoding: "chunk_key_encoding" }[entry.point];
        const result = checkArray(array(overrides));
        const found = at(result, location);
        assert.equal(found.extensionPoint, entry.point);
        assert.equal(found.name, entry.name);
        assert.equal(found.level, entry.readers);
        assert.equal(result.ok, true);
      });
    }
  });

  test("data type as an object {name} is read like the string form", () => {
    assert.equal(at(checkArray(array({ data_type: { name: "float32" } })), "data_type").level, "MUST");
  });

  test("codec given as a bare name string is checked", () => {
    const result = checkArray(array({ codecs: ["bytes", "numcodecs.zlib"] }));
    assert.equal(at(result, "codecs[0]").level, "MUST");
    assert.equal(at(result, "codecs[1]").level, "not-allowed");
  });

  test("v2 chunk key encoding is reported (MUST)", () => {
    const result = checkArray(array({ chunk_key_encoding: { name: "v2", configuration: { separator: "." } } }));
    assert.equal(result.ok, true);
    assert.equal(at(result, "chunk_key_encoding").name, "v2");
    assert.equal(at(result, "chunk_key_encoding").level, "MUST");
  });

  test("names not on the allowlist at every extension point are errors naming the point, value and rule", () => {
    const result = checkArray(array({
      data_type: "bfloat16",
      chunk_grid: { name: "irregular" },
      chunk_key_encoding: { name: "fanout" },
    }));
    assert.equal(result.ok, false);
    assert.match(at(result, "data_type").message, /data type "bfloat16" at data_type is not on the allowlist.*allowlisted data types \(bool, int8/);
    assert.match(at(result, "chunk_grid").message, /chunk grid "irregular"/);
    assert.match(at(result, "chunk_key_encoding").message, /chunk key encoding "fanout"/);
  });

  test("names the RFC deliberately leaves out say why (vlen-utf8, string)", () => {
    const result = checkArray(array({ data_type: "string", codecs: [{ name: "vlen-utf8" }] }));
    assert.match(at(result, "data_type").message, /deliberately not on the allowlist: strings are not used/);
    assert.match(at(result, "codecs[0]").message, /deliberately not on the allowlist/);
  });

  test("RFC-16 rule 2: nested sharding is walked to any depth", () => {
    const inner = { name: "sharding_indexed", configuration: {
      chunk_shape: [8, 8],
      codecs: [{ name: "bytes" }, { name: "numcodecs.lz4" }],
      index_codecs: [{ name: "bytes" }, { name: "crc32c" }],
    } };
    const outer = { name: "sharding_indexed", configuration: {
      chunk_shape: [32, 32],
      codecs: [inner],
      index_codecs: [{ name: "bytes" }, { name: "numcodecs.crc32" }],
    } };
    const result = checkArray(array({ codecs: [outer] }));
    assert.equal(result.ok, false);
    assert.equal(at(result, "codecs[0].configuration.codecs[0]").name, "sharding_indexed");
    assert.equal(at(result, "codecs[0].configuration.codecs[0].configuration.codecs[1]").name, "numcodecs.lz4");
    assert.equal(at(result, "codecs[0].configuration.codecs[0].configuration.index_codecs[1]").level, "MUST");
    assert.equal(at(result, "codecs[0].configuration.index_codecs[1]").name, "numcodecs.crc32");
    assert.deepEqual(errors(result).map((f) => f.location), [
      "codecs[0].configuration.codecs[0].configuration.codecs[1]",
      "codecs[0].configuration.index_codecs[1]",
    ]);
  });

  test("RFC-16 rule 2: conditional's wrapped codecs, in any member shape, are walked", () => {
    const conditional = { name: "conditional", configuration: {
      condition: { kind: "size_at_least", bytes: 1024 },
      codecs: [{ name: "zstd", configuration: { level: 5 } }],
      branches: [
        { when: "large", codecs: [{ name: "gzip", configuration: { level: 5 } }] },
        { when: "huge", codec: { name: "numcodecs.bz2", configuration: { level: 9 } } },
      ],
      fallback: { name: "blosc", configuration: { cname: "zstd" } },
    } };
    const result = checkArray(array({ codecs: [{ name: "bytes" }, conditional] }));
    assert.equal(at(result, "codecs[1]").level, "SHOULD");
    assert.equal(at(result, "codecs[1].configuration.codecs[0]").name, "zstd");
    assert.equal(at(result, "codecs[1].configuration.branches[0].codecs[0]").name, "gzip");
    assert.equal(at(result, "codecs[1].configuration.branches[1].codec").name, "numcodecs.bz2");
    assert.equal(at(result, "codecs[1].configuration.fallback").name, "blosc");
    assert.deepEqual(errors(result).map((f) => f.name), ["numcodecs.bz2"]);
    assert.equal(at(result, "codecs[1].configuration.condition"), undefined);
  });

  test("the nested-codec rule is by shape: any {name, configuration} object in a codec configuration is checked as a codec", () => {
    // conditional's spec is newer than our copy, so a predicate written in codec shape is checked (and flagged) too
    const result = checkArray(array({ codecs: [{ name: "bytes" }, { name: "conditional", configuration: {
      condition: { name: "size_at_least", configuration: { bytes: 1024 } }, codecs: [{ name: "zstd" }],
    } }] }));
    assert.equal(at(result, "codecs[1].configuration.condition").level, "not-allowed");
  });

  test("plain configuration values are not mistaken for codecs (transpose order, reshape shape, jpeg)", () => {
    const result = checkArray(array({ codecs: [
      { name: "transpose", configuration: { order: [1, 0] } },
      { name: "reshape", configuration: { shape: [[0, 1]] } },
      { name: "jpeg", configuration: { quality: 90, encoded_color_space: "grayscale" } },
    ] }));
    assert.equal(result.ok, true);
    assert.equal(result.findings.filter((f) => f.extensionPoint === "codec").length, 3);
  });

  test("cast_value's target data_type is checked as a data type", () => {
    const ok = checkArray(array({ data_type: "float32", codecs: [{ name: "cast_value", configuration: { data_type: "uint8" } }, { name: "bytes" }] }));
    assert.equal(ok.ok, true);
    assert.equal(at(ok, "codecs[0].configuration.data_type").extensionPoint, "data_type");
    const bad = checkArray(array({ data_type: "float32", codecs: [{ name: "cast_value", configuration: { data_type: "complex64" } }, { name: "bytes" }] }));
    assert.equal(bad.ok, false);
    assert.equal(at(bad, "codecs[0].configuration.data_type").level, "not-allowed");
  });

  describe("RFC-16 Conformance: aliases MUST NOT be written", () => {
    for (const alias of allowlist.aliases) {
      test(`${alias.name} → error naming ${alias.aliasOf}`, () => {
        const result = checkArray(array({ codecs: [{ name: "bytes" }, { name: alias.name, configuration: {} }] }));
        const found = at(result, "codecs[1]");
        assert.equal(result.ok, false);
        assert.equal(found.level, "not-allowed");
        assert.equal(found.aliasOf, alias.aliasOf);
        assert.match(found.message, new RegExp(`alias .*write "${alias.aliasOf}"`));
      });
    }
    for (const related of allowlist.related) {
      test(`${related.name} is not an alias; the error says what to re-encode with`, () => {
        const found = at(checkArray(array({ codecs: [{ name: related.name }] })), "codecs[0]");
        assert.equal(found.level, "not-allowed");
        assert.deepEqual(found.insteadUse, related.insteadUse);
        assert.equal(found.aliasOf, undefined);
      });
    }
    test("numcodecs.imagecodecs_jpeg is not an alias of jpeg (a bytes → bytes codec): the error says to re-encode with jpeg, not to rename", () => {
      assert.equal(allowlist.aliases.find((a) => a.name === "numcodecs.imagecodecs_jpeg"), undefined);
      const result = checkArray(array({ codecs: [{ name: "bytes" }, { name: "numcodecs.imagecodecs_jpeg", configuration: { level: 90 } }] }));
      const found = at(result, "codecs[1]");
      assert.equal(result.ok, false);
      assert.equal(found.aliasOf, undefined);
      assert.deepEqual(found.insteadUse, ["jpeg"]);
      assert.doesNotMatch(found.message, /write "jpeg"/);
      assert.match(found.message, /bytes → bytes codec.*re-encode.*zarr-jpeg convert/);
    });
    test("an alias nested in sharding is found too", () => {
      const result = checkArray(array({ codecs: [{ name: "sharding_indexed", configuration: {
        chunk_shape: [8, 8], codecs: [{ name: "numcodecs.bitround", configuration: { keepbits: 4 } }, { name: "bytes" }], index_codecs: [{ name: "bytes" }],
      } }] }));
      assert.equal(at(result, "codecs[0].configuration.codecs[0]").aliasOf, "bitround");
    });
  });

  describe("RFC-16 storage transformers: absent or empty", () => {
    test("absent is fine", () => assert.equal(checkArray(array()).ok, true));
    test("[] is fine", () => assert.equal(checkArray(array({ storage_transformers: [] })).ok, true));
    test("any storage transformer is an error naming it and the rule", () => {
      const result = checkArray(array({ storage_transformers: [{ name: "chunk_manifest", configuration: {} }] }));
      assert.equal(result.ok, false);
      const found = at(result, "storage_transformers[0]");
      assert.equal(found.extensionPoint, "storage_transformer");
      assert.equal(found.name, "chunk_manifest");
      assert.match(found.message, /allowlist of storage transformers is empty.*absent or \[\]/);
    });
    test("a storage transformer marked must_understand: false is ignored", () => {
      const result = checkArray(array({ storage_transformers: [{ name: "hint", must_understand: false }] }));
      assert.equal(result.ok, true);
      assert.equal(at(result, "storage_transformers[0]").level, "ignored");
    });
    test("storage_transformers that is not an array is invalid", () => {
      assert.equal(at(checkArray(array({ storage_transformers: {} })), "storage_transformers").level, "invalid");
    });
  });

  describe('RFC-16: members marked "must_understand": false are not restricted', () => {
    test("an extra top-level member with must_understand: false is ignored", () => {
      const result = checkArray(array({ consolidated_hint: { name: "whatever", must_understand: false } }));
      assert.equal(result.ok, true);
      assert.equal(at(result, "consolidated_hint").level, "ignored");
    });
    test("a codec marked must_understand: false is ignored, not flagged", () => {
      const result = checkArray(array({ codecs: [{ name: "bytes" }, { name: "numcodecs.crc32", must_understand: false }] }));
      assert.equal(result.ok, true);
      assert.equal(at(result, "codecs[1]").level, "ignored");
      assert.deepEqual(result.extensions.map((e) => e.name), ["uint8", "regular", "default", "bytes"]);
    });
    test("a nested configuration member marked must_understand: false is ignored", () => {
      const result = checkArray(array({ codecs: [{ name: "sharding_indexed", configuration: {
        chunk_shape: [8, 8], codecs: [{ name: "bytes" }], index_codecs: [{ name: "bytes" }], statistics: { name: "numcodecs.zlib", must_understand: false },
      } }] }));
      assert.equal(result.ok, true);
      assert.equal(at(result, "codecs[0].configuration.statistics").level, "ignored");
    });
    test("an extra top-level member without must_understand: false is a warning, not an RFC-16 error", () => {
      const result = checkArray(array({ my_extension: { enabled: true } }));
      assert.equal(result.ok, true);
      assert.equal(at(result, "my_extension").severity, "warning");
    });
  });

  describe("invalid metadata gives a finding, never an exception", () => {
    const hostile = {};
    Object.defineProperty(hostile, "zarr_format", { enumerable: true, get() { throw new Error("boom"); } });
    const cases = {
      "null": null,
      "a number": 42,
      "an array": [],
      "text that is not JSON": "{not json",
      "bytes that are not JSON": new TextEncoder().encode("\u0000\u0001"),
      "Zarr v2 metadata": { zarr_format: 2, dtype: "<u2", compressor: { id: "lz4" } },
      "a group": { ...array(), node_type: "group" },
      "codecs that is a string": array({ codecs: "zstd" }),
      "empty codecs": array({ codecs: [] }),
      "a codec that is a number": array({ codecs: [42] }),
      "a codec without a name": array({ codecs: [{ configuration: {} }] }),
      "a codec configuration that is not an object": array({ codecs: [{ name: "bytes", configuration: "little" }] }),
      "a data type that is a number": array({ data_type: 8 }),
      "a chunk grid without a name": array({ chunk_grid: { configuration: {} } }),
      "a missing chunk key encoding": array({ chunk_key_encoding: undefined }),
      "a getter that throws": hostile,
    };
    for (const [label, metadata] of Object.entries(cases)) {
      test(label, () => {
        const result = checkArray(metadata);
        assert.equal(result.ok, false);
        const bad = result.findings.find((f) => f.level === "invalid");
        assert.ok(bad, "an invalid finding");
        assert.equal(typeof bad.message, "string");
        assert.equal(bad.extensionPoint, "metadata");
      });
    }
    test("zarr.json text and bytes are accepted as well as objects", () => {
      assert.equal(checkArray(JSON.stringify(RFC_CONFORMING_EXAMPLE)).ok, true);
      assert.equal(checkArray(new TextEncoder().encode(JSON.stringify(RFC_CONFORMING_EXAMPLE))).ok, true);
    });
  });
});

// ---------------------------------------------------------------- supportedExtensions

describe("supportedExtensions: what zarrita + zarr-jpeg read", () => {
  test("one row per allowlist entry, with its reader level", () => {
    const rows = supportedExtensions();
    assert.equal(rows.length, expectedEntries.length);
    for (const entry of expectedEntries) {
      const row = rows.find((r) => r.extensionPoint === entry.point && r.name === entry.name);
      assert.equal(row.readers, entry.readers, entry.name);
      assert.equal(typeof row.supported, "boolean");
    }
  });

  test("zarrita 0.7.5 + this package: every MUST entry is readable", () => {
    const unreadable = supportedExtensions().filter((r) => r.readers === "MUST" && !r.supported).map((r) => r.name);
    assert.deepEqual(unreadable, []);
  });

  test("jpeg and reshape come from this package; zfp, packbits, conditional, rectilinear, template are not read", () => {
    const row = (name) => supportedExtensions().find((r) => r.name === name);
    assert.equal(row("jpeg").by, "zarr-jpeg");
    assert.equal(row("reshape").by, "zarr-jpeg");
    for (const name of ["zfp", "packbits", "conditional", "rectilinear", "template"]) assert.equal(row(name).supported, false, name);
  });

  test("float16 is readable exactly when the runtime has Float16Array", () => {
    const row = supportedExtensions().find((r) => r.name === "float16");
    assert.equal(row.supported, typeof globalThis.Float16Array === "function");
  });

  test("given a zarrita registry, codecs are looked up in it", async () => {
    const { registry } = await import("zarrita");
    const rows = supportedExtensions(registry);
    assert.equal(rows.find((r) => r.name === "zstd").supported, true);
    assert.equal(rows.find((r) => r.name === "jpeg").supported, registry.has("jpeg"));
    assert.equal(rows.find((r) => r.name === "sharding_indexed").supported, true);
    const custom = new Map([["bytes", () => null], ["jpeg", () => null]]);
    assert.equal(canRead("codec", "zstd", custom).supported, false);
    assert.equal(canRead("codec", "jpeg", custom).supported, true);
  });
});

// ---------------------------------------------------------------- checkDataset

/** A zarrita-style in-memory store: get("/a/zarr.json") → bytes | undefined. */
function memoryStore(files) {
  const encoded = new Map(Object.entries(files).map(([key, value]) =>
    [`/${key}`, new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value))]));
  return { get: async (key) => encoded.get(key) };
}

const group = (ome) => ({ zarr_format: 3, node_type: "group", attributes: { ome: { version: "0.5", ...ome } } });
const multiscales = (...paths) => ({ multiscales: [{ axes: [{ name: "y" }, { name: "x" }], datasets: paths.map((p) => ({ path: p })) }] });
const jpegCodecs = [{ name: "jpeg", configuration: { quality: 90, encoded_color_space: "grayscale" } }];

describe("checkDataset", () => {
  test("an image with levels and labels: per-array results and the union of extensions with levels", async () => {
    const store = memoryStore({
      "zarr.json": group(multiscales("0", "1")),
      "0/zarr.json": array({ codecs: jpegCodecs }),
      "1/zarr.json": array({ data_type: "uint16" }),
      "labels/zarr.json": group({ labels: ["cells"] }),
      "labels/cells/zarr.json": group(multiscales("0")),
      "labels/cells/0/zarr.json": array({ data_type: "uint32", chunk_key_encoding: { name: "v2" } }),
    });
    const result = await checkDataset(store);
    assert.equal(result.ok, true);
    assert.deepEqual(result.arrays.map((a) => a.path), ["0", "1", "labels/cells/0"]);
    const needs = result.requiredExtensions.map((r) => `${r.extensionPoint}:${r.name}:${r.level}`);
    assert.deepEqual(needs, [
      "data_type:uint16:MUST", "data_type:uint32:MUST", "data_type:uint8:MUST",
      "codec:bytes:MUST", "codec:zstd:MUST", "codec:jpeg:SHOULD",
      "chunk_grid:regular:MUST",
      "chunk_key_encoding:default:MUST", "chunk_key_encoding:v2:MUST",
    ]);
    assert.deepEqual(result.requiredExtensions.find((r) => r.name === "jpeg").arrays, ["0"]);
    assert.deepEqual(result.unsupported, []);
  });

  test("a plate: wells and their fields of view are walked; a non-allowlisted codec fails the dataset", async () => {
    const store = memoryStore({
      "zarr.json": group({ plate: { rows: [{ name: "A" }], columns: [{ name: "1" }, { name: "2" }], wells: [{ path: "A/1" }, { path: "A/2" }] } }),
      "A/1/zarr.json": group({ well: { images: [{ path: "0" }] } }),
      "A/1/0/zarr.json": group(multiscales("0")),
      "A/1/0/0/zarr.json": array(),
      "A/2/zarr.json": group({ well: { images: [{ path: "0" }] } }),
      "A/2/0/zarr.json": group(multiscales("0")),
      "A/2/0/0/zarr.json": array({ codecs: [{ name: "bytes" }, { name: "zfp", configuration: { mode: "reversible" } }, { name: "numcodecs.lz4" }] }),
    });
    const result = await checkDataset(store);
    assert.equal(result.ok, false);
    assert.deepEqual(result.arrays.map((a) => [a.path, a.ok]), [["A/1/0/0", true], ["A/2/0/0", false]]);
    const zfp = result.requiredExtensions.find((r) => r.name === "zfp");
    assert.equal(zfp.level, "MAY");
    assert.equal(zfp.supported, false);
    // zarrita registers numcodecs.lz4, so only zfp is out of reach
    assert.deepEqual(result.unsupported.map((r) => r.name), ["zfp"]);
    assert.equal(result.requiredExtensions.find((r) => r.name === "numcodecs.lz4").level, "not-allowed");
  });

  test("a plain array at the root is checked on its own", async () => {
    const result = await checkDataset(memoryStore({ "zarr.json": RFC_CONFORMING_EXAMPLE }));
    assert.equal(result.ok, true);
    assert.deepEqual(result.arrays.map((a) => [a.path, a.role]), [["", "root"]]);
  });

  test("a missing level, broken JSON and an escaping path are hierarchy findings", async () => {
    const result = await checkDataset(memoryStore({
      "zarr.json": group(multiscales("0", "1", "../outside")),
      "0/zarr.json": "{oops",
    }));
    assert.equal(result.ok, false);
    const messages = result.findings.map((f) => `${f.location}: ${f.message}`);
    assert.ok(messages.some((m) => /^0: .*not valid JSON/.test(m)), messages.join("\n"));
    assert.ok(messages.some((m) => /^1: multiscale level "1" has no zarr.json/.test(m)), messages.join("\n"));
    assert.ok(messages.some((m) => /multiscales\[0\]\.datasets\[2\]\.path must be a relative path/.test(m)), messages.join("\n"));
  });

  test("an empty store is an error, not an exception; a store that throws is a finding", async () => {
    assert.equal((await checkDataset(memoryStore({}))).ok, false);
    const failing = { get: async () => { throw new Error("network down"); } };
    const result = await checkDataset(failing);
    assert.equal(result.ok, false);
    assert.match(result.findings[0].message, /network down/);
  });

  test("sharding nested in sharding is allowed, but zarrita cannot read it", async () => {
    const nested = array({ codecs: [{ name: "sharding_indexed", configuration: {
      chunk_shape: [32, 32], index_codecs: [{ name: "bytes" }],
      codecs: [{ name: "sharding_indexed", configuration: { chunk_shape: [8, 8], codecs: [{ name: "bytes" }], index_codecs: [{ name: "bytes" }] } }],
    } }] });
    const result = await checkDataset(memoryStore({ "zarr.json": nested }));
    assert.equal(result.ok, true);
    const sharding = result.requiredExtensions.find((r) => r.name === "sharding_indexed");
    assert.equal(sharding.supported, false);
    assert.match(sharding.note, /nested/);
  });

  test("a bioformats2raw layout: series 0, 1 are found", async () => {
    const result = await checkDataset(memoryStore({
      "zarr.json": group({ "bioformats2raw.layout": 3 }),
      "0/zarr.json": group(multiscales("0")),
      "0/0/zarr.json": array(),
      "1/zarr.json": group(multiscales("0")),
      "1/0/zarr.json": array(),
    }));
    assert.deepEqual(result.arrays.map((a) => a.path), ["0/0", "1/0"]);
  });

  test("a URL is read with zarrita's FetchStore", async (t) => {
    const dir = await writeHierarchy({
      "img.zarr/zarr.json": group(multiscales("0")),
      "img.zarr/0/zarr.json": array({ codecs: jpegCodecs }),
    });
    const server = await startServer(dir);
    t.after(async () => { await server.close(); await rm(dir, { recursive: true }); });
    const result = await checkDataset(`${server.url}/img.zarr`);
    assert.equal(result.ok, true);
    assert.deepEqual(result.arrays.map((a) => a.path), ["0"]);
  });

  test("not a store: a TypeError naming what was given", async () => {
    await assert.rejects(checkDataset(42), (e) => e instanceof TypeError && e.kind === "InvalidArgument" && /^zarr-jpeg check: checkDataset\(\) takes a URL string or a store with get\(key\), got number 42$/.test(e.message));
  });

  test("formatReport says whether the dataset conforms and lists what a reader needs", async () => {
    const result = await checkDataset(memoryStore({ "zarr.json": array(RFC_NONCONFORMING_EXAMPLE) }));
    const text = formatReport(result, { source: "x.zarr" });
    assert.match(text, /x\.zarr: DOES NOT CONFORM/);
    assert.match(text, /numcodecs\.lz4/);
    assert.match(text, /a reader needs:/);
  });

  // Before: names and paths from the metadata were written as they were, so a codec named
  // "jpeg\u001b[31m…" sent a terminal escape sequence to whoever ran `zarr-jpeg check`, and
  // a newline in one faked a line of the report.
  test("formatReport shows control characters from the metadata escaped, never raw", async () => {
    const hostile = { ...array(RFC_NONCONFORMING_EXAMPLE), codecs: [{ name: "jpeg\u001b[31mEVIL\u001b[0m\nERROR fake line", configuration: {} }] };
    const result = await checkDataset(memoryStore({ "zarr.json": hostile }));
    const text = formatReport(result, { source: "x.zarr" });
    assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    assert.match(text, /jpeg\\u001b\[31mEVIL\\u001b\[0m\\u000aERROR fake line/);
    assert.ok(!text.split("\n").some((line) => line.startsWith("ERROR fake line")));
  });
});

// ---------------------------------------------------------------- the CLI

async function writeHierarchy(files) {
  const dir = await mkdtemp(path.join(tmpdir(), "zarr-jpeg-allowlist-"));
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), typeof content === "string" ? content : JSON.stringify(content));
  }
  return dir;
}

/** Runs the check CLI's main with console output captured. */
async function runCli(argv) {
  const out = [];
  const err = [];
  const { log, error } = console;
  console.log = (...args) => out.push(args.join(" "));
  console.error = (...args) => err.push(args.join(" "));
  try {
    const code = await checkMain(argv);
    return { code, stdout: out.join("\n"), stderr: err.join("\n") };
  } finally {
    console.log = log;
    console.error = error;
  }
}

describe("zarr-jpeg check (CLI)", () => {
  test("a conforming OME-Zarr image on disk: exit 0 and a readable report", async (t) => {
    const dir = await writeHierarchy({
      "zarr.json": group(multiscales("0", "1")),
      "0/zarr.json": array({ codecs: jpegCodecs }),
      "1/zarr.json": RFC_CONFORMING_EXAMPLE,
      "labels/zarr.json": group({ labels: ["nuclei"] }),
      "labels/nuclei/zarr.json": group(multiscales("0")),
      "labels/nuclei/0/zarr.json": array({ data_type: "uint16" }),
    });
    t.after(() => rm(dir, { recursive: true }));
    const { code, stdout } = await runCli([dir]);
    assert.equal(code, 0, stdout);
    assert.match(stdout, /: conforms/);
    assert.match(stdout, /array labels\/nuclei\/0 .*ok/);
    assert.match(stdout, /codec\s+jpeg\s+SHOULD\s+readable/);
  });

  test("a non-conforming dataset: exit 1, the report names the codec and its location", async (t) => {
    const dir = await writeHierarchy({
      "zarr.json": group(multiscales("0")),
      "0/zarr.json": array({ codecs: [{ name: "bytes" }, { name: "numcodecs.bitround", configuration: { keepbits: 3 } }] }),
    });
    t.after(() => rm(dir, { recursive: true }));
    const { code, stdout } = await runCli([dir]);
    assert.equal(code, 1);
    assert.match(stdout, /DOES NOT CONFORM/);
    assert.match(stdout, /"numcodecs\.bitround" at codecs\[1\] is an alias .* write "bitround"/);
  });

  test("--json prints the checkDataset result", async (t) => {
    const dir = await writeHierarchy({ "zarr.json": array() });
    t.after(() => rm(dir, { recursive: true }));
    const { code, stdout } = await runCli([dir, "--json"]);
    assert.equal(code, 0);
    const parsed = JSON.parse(stdout);
    assert.equal(parsed.ok, true);
    assert.equal(parsed.arrays.length, 1);
  });

  test("usage errors exit 2: no path, two paths, unknown option, a path that is not a directory", async () => {
    assert.equal((await runCli([])).code, 2);
    assert.equal((await runCli(["a", "b"])).code, 2);
    assert.equal((await runCli(["--frobnicate", "x"])).code, 2);
    const missing = await runCli([path.join(tmpdir(), "no-such-dataset.zarr")]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /is not a directory or an http\(s\) URL/);
  });

  test("--help exits 0", async () => {
    const { code, stdout } = await runCli(["--help"]);
    assert.equal(code, 0);
    assert.match(stdout, /usage: zarr-jpeg check/);
  });

  test("an empty directory is not a conforming dataset: exit 1", async (t) => {
    const dir = await writeHierarchy({});
    t.after(() => rm(dir, { recursive: true }));
    assert.equal((await runCli([dir])).code, 1);
  });
});

test("EXTENSION_POINTS lists the five RFC-16 extension points", () => {
  assert.deepEqual([...EXTENSION_POINTS].sort(), Object.keys(allowlist.extensionPoints).sort());
});
