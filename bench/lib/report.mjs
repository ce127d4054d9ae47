// Tables (terminal and Markdown) and a hand-written SVG chart from results.json.
const cell = (x) => (x == null ? "—" : x.mps ? x.mps.toFixed(1) + (x.mismatch ? "*" : "") : x.unsupported ? "n/a" : x.error ? "ERR" : "?");
const ratio = (x) => (x == null ? "—" : `${x.toFixed(2)}×`);
const caseLabel = (c) => `${c.image} ${c.size}² ${c.mode === "gray" ? "gray" : c.mode === "rgb" ? "rgb" : c.mode.replace(/(\d)(\d)(\d)/, "$1:$2:$3")}`;

function speedTables(results) {
  const out = [];
  for (const kind of ["decode", "encode"]) {
    const names = results.candidates[kind];
    const ratioCols =
      kind === "decode"
        ? [["÷scalar", "decodeSimdGain"], ["÷cornerstone", "decodeVsCornerstone"], ["÷ImageDecoder", "decodeVsImageDecoder"], ["÷tjbench", "decodeVsTjbench"], [" (decodeInto)÷tjbench", "decodeIntoVsTjbench"]]
        : [["÷scalar", "encodeSimdGain"], ["÷cornerstone", "encodeVsCornerstone"], ["÷tjbench", "encodeVsTjbench"], [" (encodeInto)÷tjbench", "encodeIntoVsTjbench"], ["÷libjpeg-turbo (optimized)", "encodeVsNativeOptimized"], [" (flat, trellis)÷jsquash (baseline)", "flatTrellisVsMozjpegBaseline"]];
    const head = [`${kind} MP/s`, ...names, ...ratioCols.map((r) => `ours${r[0]}`)];
    const rows = results.cases.map((c) => [caseLabel(c), ...names.map((n) => cell(c[kind][n])), ...ratioCols.map((r) => ratio(c.ratios[r[1]]))]);
    out.push({ head, rows });
  }
  return out;
}

function payloadTable(results) {
  const head = ["payload", "part", "what", "raw B", "gzip -9 B"];
  const rows = results.payload.map((p) => [p.candidate, p.part, p.what, p.error ? "ERR" : String(p.raw), p.error ? "ERR" : String(p.gzip9)]);
  return { head, rows };
}

export function rdTable(results) {
  const rd = results.rd;
  if (!rd?.curves) return null;
  const names = Object.keys(rd.curves).sort((a, b) => (b === "ours") - (a === "ours"));
  const qs = [...new Set(names.flatMap((n) => rd.curves[n].map((p) => p.q)))].sort((a, b) => a - b);
  const head = [`RD ${rd.image} ${rd.subsampling}: q`, ...names.map((n) => `${n} B / dB`)];
  const rows = qs.map((q) => [
    String(q),
    ...names.map((n) => {
      const p = rd.curves[n].find((x) => x.q === q);
      return p ? `${p.bytes} / ${p.psnr.toFixed(2)}` : "—";
    }),
  ]);
  return { head, rows };
}

// Equal-PSNR comparison: each curve's BD-rate against Pillow with `optimize` (bench/lib/rd.mjs).
export function bdTable(rd) {
  if (!rd?.bdRate || !Object.keys(rd.bdRate).length) return null;
  const against = Object.values(rd.bdRate)[0].against;
  return {
    head: [`BD-rate ${rd.image} ${rd.subsampling} against ${against} (% bytes at equal PSNR)`, "BD-rate %", "over PSNR dB"],
    rows: Object.entries(rd.bdRate).map(([n, b]) => [n, b.percent === null ? "—" : b.percent.toFixed(2), b.psnrRange ? b.psnrRange.join("–") : b.note ?? ""]),
  };
}

function zarritaTable(results) {
  const z = results.zarrita;
  if (!z?.rows?.length) return null;
  const keys = [...new Set(z.rows.flatMap((r) => Object.keys(r)))];
  return { head: ["zarrita", ...keys.filter((k) => k !== "name")], rows: z.rows.map((r) => [String(r.name ?? ""), ...keys.filter((k) => k !== "name").map((k) => (typeof r[k] === "number" ? String(Number(r[k].toFixed(3))) : String(r[k] ?? "")))]) };
}

// Each decoder on our stream (with its restart intervals) and on the same stream rewritten
// without them (jpegtran -optimize), same run: what the intervals do to each decoder.
function restartTable(results) {
  const cases = results.cases.filter((c) => c.restartIntervalEffect);
  const names = results.candidates.plainDecode ?? [];
  if (!cases.length || !names.length) return null;
  const f = (v) => (v?.mps ? v.mps.toFixed(1) : "—");
  return {
    head: ["restart intervals: decode MP/s, ours / without", "bytes, ours / without", ...names, ...names.map((n) => `${n}: ours÷without`)],
    rows: cases.map((c) => [
      caseLabel(c),
      `${c.jpegBytes} / ${c.plainJpegBytes ?? "—"}`,
      ...names.map((n) => `${f(c.decode[n])} / ${f(c.decode[`${n} (no restarts)`])}`),
      ...names.map((n) => (c.restartIntervalEffect[n] ? `${c.restartIntervalEffect[n].toFixed(2)}×` : "—")),
    ]),
  };
}

export function allTables(results) {
  return [...speedTables(results), restartTable(results), payloadTable(results), rdTable(results), bdTable(results.rd), zarritaTable(results)].filter(Boolean);
}

export function text(t) {
  const w = t.head.map((h, i) => Math.max(h.length, ...t.rows.map((r) => r[i].length)));
  const line = (r) => r.map((x, i) => (i === 0 ? x.padEnd(w[i]) : x.padStart(w[i]))).join("  ");
  return [line(t.head), w.map((n) => "-".repeat(n)).join("  "), ...t.rows.map(line)].join("\n");
}

export function md(t) {
  const line = (r) => `| ${r.join(" | ")} |`;
  return [line(t.head), line(t.head.map((_, i) => (i === 0 ? "---" : "---:"))), ...t.rows.map(line)].join("\n");
}

export function printTables(results) {
  const m = results.meta;
  console.log(`zarr-jpeg bench ${m.date}${m.quick ? " (quick)" : ""} — nproc ${m.nproc}, ${m.cpu}, ${m.browser?.chromium ? "Chromium " + m.browser.chromium : ""}, node ${m.node}`);
  for (const t of allTables(results)) console.log("\n" + text(t));
  const z = results.zarrita;
  if (z && !z.rows) console.log(`\nzarrita: ${JSON.stringify(z).slice(0, 300)}`);
  const errors = results.cases.flatMap((c) => ["decode", "encode"].flatMap((k) => Object.entries(c[k]).filter(([, v]) => v.error).map(([n, v]) => `${c.id} ${k} ${n}: ${v.error.split("\n")[0]}`)));
  if (errors.length) console.log("\nERRORS:\n" + errors.join("\n"));
  console.log("\n* = decoded output differs from ours by a mean of more than 3 levels (wrong colours); n/a = cannot produce that format");
}

export function markdownTables(results) {
  const m = results.meta;
  const head = `Run ${m.date}${m.quick ? " (quick)" : ""}; \`nproc\` ${m.nproc}; CPU ${m.cpu}; load average ${m.loadavgAtStart?.[0] ?? "?"} → ${m.loadavgAtEnd?.[0] ?? "?"}; git ${m.git ?? "?"}; Chromium ${m.browser?.chromium ?? "?"}; node ${m.node}; ${m.tjbench ?? "no tjbench"}. Median of ${m.timing.reps} interleaved samples, MP/s; n/a = the candidate cannot produce that format.`;
  return [head, ...allTables(results).map(md)].join("\n\n") + "\n";
}

// ---- SVG ----
const COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#7f7f7f", "#e377c2"];
const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function barPanel(results, kind, x0, y0, width) {
  const names = results.candidates[kind];
  const cases = results.cases;
  const max = Math.max(1, ...cases.flatMap((c) => names.map((n) => c[kind][n]?.mps ?? 0)));
  const barH = 7;
  const groupH = names.length * barH + 10;
  const labelW = 120;
  const plotW = width - labelW - 50;
  const parts = [`<text x="${x0}" y="${y0 - 8}" font-size="14" font-weight="bold">${kind} MP/s (higher is better)</text>`];
  cases.forEach((c, ci) => {
    const gy = y0 + ci * groupH;
    parts.push(`<text x="${x0}" y="${gy + groupH / 2}" font-size="11">${esc(caseLabel(c))}</text>`);
    names.forEach((n, ni) => {
      const v = c[kind][n];
      const y = gy + ni * barH;
      if (v?.mps) {
        const w = (v.mps / max) * plotW;
        parts.push(`<rect x="${x0 + labelW}" y="${y}" width="${w.toFixed(1)}" height="${barH - 1}" fill="${COLOURS[ni]}"><title>${esc(n)}: ${v.mps.toFixed(1)} MP/s</title></rect>`);
        parts.push(`<text x="${(x0 + labelW + w + 3).toFixed(1)}" y="${y + barH - 1}" font-size="7">${v.mps.toFixed(0)}</text>`);
      } else {
        parts.push(`<text x="${x0 + labelW + 2}" y="${y + barH - 1}" font-size="7" fill="#999">${esc(n)}: ${v?.unsupported ? "n/a" : "error"}</text>`);
      }
    });
  });
  const legendY = y0 + cases.length * groupH + 12;
  names.forEach((n, ni) => {
    parts.push(`<rect x="${x0 + (ni % 3) * 150}" y="${legendY + Math.floor(ni / 3) * 14}" width="10" height="10" fill="${COLOURS[ni]}"/><text x="${x0 + (ni % 3) * 150 + 14}" y="${legendY + Math.floor(ni / 3) * 14 + 9}" font-size="10">${esc(n)}</text>`);
  });
  return { svg: parts.join("\n"), height: legendY + 3 * 14 - y0 + 10 };
}

function rdPanel(results, x0, y0, w, h) {
  const rd = results.rd;
  if (!rd?.curves) return "";
  const curves = Object.entries(rd.curves).sort(([a], [b]) => (b === "ours") - (a === "ours"));
  const pts = curves.flatMap(([, p]) => p);
  const bx = [Math.min(...pts.map((p) => p.bytes)), Math.max(...pts.map((p) => p.bytes))];
  const by = [Math.min(...pts.map((p) => p.psnr)), Math.max(...pts.map((p) => p.psnr))];
  const X = (b) => x0 + 50 + ((Math.log(b) - Math.log(bx[0])) / (Math.log(bx[1]) - Math.log(bx[0]) || 1)) * (w - 70);
  const Y = (p) => y0 + h - 30 - ((p - by[0]) / (by[1] - by[0] || 1)) * (h - 50);
  const parts = [
    `<text x="${x0}" y="${y0 - 8}" font-size="14" font-weight="bold">rate–distortion, ${esc(rd.image)} ${esc(rd.subsampling)} (bytes, log scale → PSNR dB)</text>`,
    `<rect x="${x0 + 50}" y="${y0}" width="${w - 70}" height="${h - 30}" fill="none" stroke="#ccc"/>`,
    `<text x="${x0 + 50}" y="${y0 + h - 12}" font-size="10">${bx[0]} B</text>`,
    `<text x="${x0 + w - 20}" y="${y0 + h - 12}" font-size="10" text-anchor="end">${bx[1]} B</text>`,
    `<text x="${x0 + 45}" y="${Y(by[0])}" font-size="10" text-anchor="end">${by[0].toFixed(1)}</text>`,
    `<text x="${x0 + 45}" y="${Y(by[1]) + 8}" font-size="10" text-anchor="end">${by[1].toFixed(1)}</text>`,
  ];
  curves.forEach(([name, p], i) => {
    const s = [...p].sort((a, b) => a.q - b.q);
    parts.push(`<polyline fill="none" stroke="${COLOURS[i]}" stroke-width="1.5" points="${s.map((q) => `${X(q.bytes).toFixed(1)},${Y(q.psnr).toFixed(1)}`).join(" ")}"/>`);
    for (const q of s) parts.push(`<circle cx="${X(q.bytes).toFixed(1)}" cy="${Y(q.psnr).toFixed(1)}" r="2" fill="${COLOURS[i]}"><title>${esc(name)} q${q.q}: ${q.bytes} B, ${q.psnr} dB</title></circle>`);
    parts.push(`<rect x="${x0 + 60}" y="${y0 + 8 + i * 14}" width="10" height="10" fill="${COLOURS[i]}"/><text x="${x0 + 74}" y="${y0 + 17 + i * 14}" font-size="10">${esc(name)}</text>`);
  });
  return parts.join("\n");
}

export function renderSvg(results) {
  const width = 1000;
  const dec = barPanel(results, "decode", 10, 60, width / 2 - 10);
  const enc = barPanel(results, "encode", width / 2 + 10, 60, width / 2 - 10);
  const rdY = 60 + Math.max(dec.height, enc.height) + 40;
  const rdH = results.rd?.curves ? 320 : 0;
  const height = rdY + rdH + 20;
  const m = results.meta;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="10" y="22" font-size="16" font-weight="bold">zarr-jpeg benchmark${m.quick ? " (quick)" : ""}, q${m.quality}</text>
<text x="10" y="40" font-size="11">${esc(`${m.date} — nproc ${m.nproc}, ${m.cpu}, Chromium ${m.browser?.chromium ?? "?"}; median of ${m.timing.reps} samples`)}</text>
${dec.svg}
${enc.svg}
${rdPanel(results, 10, rdY, width - 20, rdH)}
</svg>
`;
}
