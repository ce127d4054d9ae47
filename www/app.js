// The demo page: open a dataset by URL (or a sample), view it, inspect the compression.
import * as zarr from "zarrita";
import { register, init } from "/dist/index.js";
import { checkDataset, formatReport } from "/dist/check.js";
import { openDataset, DatasetError, codecNames } from "./dataset.js";
import { Viewer } from "./viewer.js";
import { Inspector } from "./inspector.js";

const $ = (sel) => document.querySelector(sel);
const workers = Math.max(1, Math.min(4, (navigator.hardwareConcurrency || 2) - 1));
const codecs = register(zarr.registry, { workers });

const viewer = new Viewer($("#canvas"));
const inspector = new Inspector($("#inspector"), { pool: codecs.pool });
let current = null;
let openToken = 0;

const fmtBytes = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(2)} MB` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} kB` : `${n} B`);
const escape = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);

function showMessage(kind, text) {
  const box = $("#message");
  box.hidden = !text;
  box.className = `message ${kind}`;
  box.dataset.kind = kind;
  const titles = { fetch: "Cannot open this URL", codec: "Missing codec", dtype: "Unsupported data type", layout: "Cannot show this dataset", chunk: "A chunk failed to load", info: "" };
  box.innerHTML = text ? `${titles[kind] ? `<strong>${titles[kind]}.</strong> ` : ""}${escape(text)}` : "";
}

async function loadSamples() {
  const list = $("#samples");
  let samples = [];
  try {
    const response = await fetch("/stores/index.json");
    if (response.ok) samples = await response.json();
  } catch {
    // shown below
  }
  if (!samples.length) {
    list.innerHTML = `<li class="muted">No sample stores found under /stores/ — run <code>npm start</code>, which converts them.</li>`;
    return samples;
  }
  list.innerHTML = samples.map((s) => {
    const sum = s.summary;
    return `<li><button type="button" data-url="${escape(s.url)}" title="${escape(s.description)}">
      <span class="title">${escape(s.title)}</span>
      <span class="meta">${sum.references
        ? `${sum.shape.join("×")} · ${sum.levels.length} levels · a ${fmtBytes(sum.bytesWritten)} TIFF read in place`
        : `${sum.shape.join("×")} · ${sum.levels.length} levels · ${fmtBytes(sum.bytesWritten)} · ${sum.ratio.toFixed(1)}:1 · ${sum.tiles ? `level 0: ${sum.tiles.copied} tiles copied from the TIFF` : `${sum.psnr.toFixed(1)} dB`}`}</span>
    </button></li>`;
  }).join("");
  for (const button of list.querySelectorAll("button")) button.addEventListener("click", () => open(button.dataset.url));
  return samples;
}

function describeLevels(ds) {
  const rows = ds.levels.map((L) => {
    const names = codecNames(L.meta.codecs).filter((n) => n !== "bytes" && n !== "crc32c");
    return `<tr><td>${escape(L.path || "–")}</td><td>${L.array.shape.join("×")}</td><td>${L.array.chunks.join("×")}</td>` +
      `<td>${L.sharded ? L.shardShape.join("×") : "–"}</td><td>${escape(names.join(" → "))}</td></tr>`;
  }).join("");
  const jpeg = ds.levels[0].jpeg;
  return `<p><strong>${escape(ds.name)}</strong> — ${ds.levels[0].references ? "a TIFF read in place (Zarr v2 references)" : ds.kind === "multiscale" ? "OME-Zarr multiscale image" : "Zarr v3 array"}, ` +
    `${ds.axes.composite ? `${ds.axes.channels} channels` : ds.axes.rgb ? "RGB" : "grayscale"}${ds.axes.c >= 0 ? `, channel axis ${ds.axes.c}` : ""}` +
    `${jpeg ? `, jpeg quality ${jpeg.quality} ${jpeg.encoded_color_space}` : ""}</p>` +
    (ds.axes.note ? `<p class="muted">${escape(ds.axes.note)}</p>` : "") +
    `<table class="levels"><thead><tr><th>level</th><th>shape</th><th>chunk</th><th>shard</th><th>codecs</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** Sliders for the axes held at one index (z, t, …) and, for a composite, each channel's toggle and window. */
function describeControls(ds) {
  const shape = ds.levels[0].array.shape;
  const sliders = Object.entries(ds.axes.fixed).filter(([axis]) => shape[axis] > 1).map(([axis, index]) =>
    `<label class="plane">${escape(ds.axes.names[axis])} <input type="range" data-axis="${axis}" min="0" max="${shape[axis] - 1}" value="${index}">` +
      ` <b>${index}</b> / ${shape[axis]}</label>`);
  const channels = (ds.axes.composite ?? []).map((ch, k) =>
    `<div class="channel" data-channel="${k}"><label><input type="checkbox" data-toggle="${k}"${ch.active ? " checked" : ""}>` +
      ` <span class="swatch" style="background: rgb(${ch.color.map((v) => Math.round(v * 255)).join(", ")})"></span> ${escape(ch.label)}</label>` +
      ` <label>window <input type="number" data-start="${k}" value="${ch.start}" step="1"> – <input type="number" data-end="${k}" value="${ch.end}" step="1"></label></div>`);
  return (sliders.length ? `<div id="planes">${sliders.join("")}</div>` : "") +
    (channels.length ? `<div id="channels"><p class="muted">channels blended from omero (colour, window)</p>${channels.join("")}</div>` : "");
}

function bindControls(ds) {
  for (const input of document.querySelectorAll("#planes input[data-axis]")) {
    input.addEventListener("input", () => {
      const index = Number(input.value);
      input.nextElementSibling.textContent = String(index);
      viewer.setPlane(Number(input.dataset.axis), index);
      scheduleInspect();
    });
  }
  for (const input of document.querySelectorAll("#channels input")) {
    input.addEventListener("change", () => {
      const channel = ds.axes.composite[Number(input.dataset.toggle ?? input.dataset.start ?? input.dataset.end)];
      if (input.dataset.toggle !== undefined) channel.active = input.checked;
      else if (input.dataset.start !== undefined) channel.start = Number(input.value);
      else channel.end = Number(input.value);
      if (!(channel.end > channel.start)) channel.end = channel.start + 1;
      if (!ds.axes.composite.some((c) => c.active)) {
        channel.active = true;
        input.checked = true;
      }
      viewer.refresh();
    });
  }
}

async function runCheck(url, token) {
  const pre = $("#rfc16");
  pre.textContent = "checking…";
  try {
    const result = await checkDataset(url, { registry: zarr.registry });
    if (token !== openToken) return;
    pre.textContent = formatReport(result, { source: url });
    pre.dataset.ok = String(result.ok);
  } catch (error) {
    if (token !== openToken) return;
    pre.textContent = `The RFC-16 check could not run: ${error.message}`;
    pre.dataset.ok = "false";
  }
}

let inspectTimer = 0;
function scheduleInspect(delay = 350) {
  clearTimeout(inspectTimer);
  inspectTimer = setTimeout(inspectVisible, delay);
}

async function inspectVisible() {
  if (!current) return;
  const ds = current;
  try {
    await inspector.setRegion(ds, viewer.visibleRegion());
  } catch (error) {
    if (ds === current) showMessage("chunk", `Inspecting the region failed: ${error.message}`);
  }
}

/** Opens a dataset URL; resolves to the dataset, or null after showing why not. */
async function open(url) {
  const token = ++openToken;
  $("#url").value = url;
  history.replaceState(null, "", `#url=${encodeURIComponent(url)}`);
  showMessage("info", "");
  $("#status").textContent = `opening ${url} …`;
  document.body.dataset.state = "opening";
  for (const b of document.querySelectorAll("#samples button")) b.classList.toggle("active", b.dataset.url === url);
  let ds;
  try {
    ds = await openDataset(url, zarr.registry);
  } catch (error) {
    if (token !== openToken) return null;
    current = null;
    viewer.setDataset(null);
    inspector.clear();
    $("#chunk-info").textContent = "–";
    $("#dataset").innerHTML = "";
    $("#rfc16").textContent = "";
    $("#status").textContent = "nothing open";
    showMessage(error instanceof DatasetError ? error.kind : "fetch", error.message);
    document.body.dataset.state = "error";
    if (error instanceof DatasetError && error.kind !== "fetch") runCheck(new URL(url, location.href).href.replace(/\/+$/, ""), token);
    return null;
  }
  if (token !== openToken) return null;
  current = ds;
  $("#dataset").innerHTML = describeLevels(ds) + describeControls(ds);
  bindControls(ds);
  $("#chunk-info").textContent = "hover over the image";
  inspector.setDefaults(ds);
  viewer.setDataset(ds);
  if (ds.levels[0].references) {
    // (RFC-16 lists what OME-Zarr 0.5 stores use; references to a TIFF are Zarr v2 read in place)
    $("#rfc16").textContent = "Not checked: a TIFF read in place through Zarr v2 references is not an OME-Zarr 0.5 store; convert it for one.";
    delete $("#rfc16").dataset.ok;
  } else {
    runCheck(ds.url, token);
  }
  await viewer.idle();
  if (token !== openToken) return ds;
  document.body.dataset.state = "ready";
  await inspectVisible();
  return ds;
}

// ------------------------------------------------------------------ wiring

viewer.addEventListener("render", (e) => {
  if (!current) return;
  const s = e.detail;
  const L = current.levels[s.level];
  $("#status").innerHTML =
    `level <b id="status-level">${escape(L.path || "0")}</b> (${L.width}×${L.height}, ÷${L.factor.toFixed(2).replace(/\.00$/, "")}) · ` +
    `zoom ${(s.zoom * 100).toFixed(s.zoom < 0.1 ? 1 : 0)}% · chunks <span id="status-chunks">${s.loaded}/${s.visible}</span> visible · ` +
    `${fmtBytes(s.encodedBytes)} encoded`;
});
viewer.addEventListener("viewchange", () => scheduleInspect());
viewer.addEventListener("chunkerror", (e) => showMessage("chunk", `chunk ${e.detail.chunk.id}: ${e.detail.error.message}`));

/**
 * Where a chunk's stream came from, when the converter recorded it (level 0 of a TIFF
 * input: the array's attributes.zarr_jpeg): copied unchanged from the source's JPEG tile,
 * or re-encoded.
 */
function chunkOrigin(info) {
  const level = current?.levels.find((l) => (l.path || "0") === (info.path || "0"));
  const record = level?.meta?.attributes?.zarr_jpeg;
  if (!record || info.missing || typeof record.copied_from_tiff_tiles !== "number") return "";
  const { y, x } = current.axes;
  const cy = info.coords[y];
  const cx = info.coords[x];
  const reencoded = Array.isArray(record.reencoded_chunks) && record.reencoded_chunks.some(([a, b]) => a === cy && b === cx);
  return reencoded
    ? `re-encoded from ${record.source}'s tile (its JPEG frame could not be copied)`
    : `copied unchanged from ${record.source}'s JPEG tile (tables spliced in, entropy-coded data as stored)`;
}

viewer.addEventListener("hover", (e) => {
  const tip = $("#tooltip");
  const hit = e.detail;
  const panel = $("#chunk-info");
  if (!hit) {
    tip.hidden = true;
    return;
  }
  const i = hit.info;
  const origin = i ? chunkOrigin(i) : "";
  const html = i
    ? `<div><b>${escape(i.key)}</b></div><div>level ${escape(i.path || "0")} · chunk (${i.coords.join(", ")}) · ${i.shape.join("×")} px</div>` +
      `<div>${i.missing ? "not stored (fill value)" : `${fmtBytes(i.bytes)} encoded · ${(i.bytes * 8 / (i.shape[0] * i.shape[1])).toFixed(2)} bits/px`}</div>` +
      (origin ? `<div class="chunk-origin">${escape(origin)}</div>` : "") +
      `<div>fetch ${i.fetchMs.toFixed(1)} ms · decode ${i.decodeMs.toFixed(1)} ms</div>`
    : `<div>chunk (${hit.cy}, ${hit.cx}) of level ${hit.level}: loading…</div>`;
  tip.innerHTML = html + `<div class="muted">pixel (${hit.y}, ${hit.x})</div>`;
  tip.hidden = false;
  const wrap = $("#canvas-wrap").getBoundingClientRect();
  tip.style.left = `${Math.min(hit.clientX - wrap.left + 14, wrap.width - 260)}px`;
  tip.style.top = `${Math.min(hit.clientY - wrap.top + 14, wrap.height - 90)}px`;
  panel.innerHTML = html;
});

$("#open-form").addEventListener("submit", (e) => {
  e.preventDefault();
  open($("#url").value);
});
$("#zoom-in").addEventListener("click", () => { viewer.zoomBy(2); scheduleInspect(); });
$("#zoom-out").addEventListener("click", () => { viewer.zoomBy(0.5); scheduleInspect(); });
$("#zoom-fit").addEventListener("click", () => { viewer.fit(); scheduleInspect(); });
$("#zoom-1").addEventListener("click", () => {
  const v = viewer.view;
  viewer.zoomBy(1 / v.zoom);
  scheduleInspect();
});
$("#inspect").addEventListener("click", () => inspectVisible());

// For tests and the curious: window.demo.
const ready = (async () => {
  await init();
  const samples = await loadSamples();
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("url");
  const first = fromHash ?? samples[0]?.url;
  if (first) await open(first);
})();
window.demo = { zarr, viewer, inspector, open, ready, codecs, get dataset() { return current; } };
