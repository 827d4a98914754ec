// UQFF directories (FORMATS §4): `{ uqff: [sources] }` — the shards `<stem>-<n>.uqff` (taken in
// numeric order of n) and `residual.safetensors` — decoded as one model of logical weights.
//
// The rules are the library's (LogicalModel::build_uqff / feed_uqff / resolve_uqff through
// conventions.mjs); this file only moves bytes. A layer's format tag, GGML type, shape, bits,
// group size and block count are tiny tensors (data, not header), so the model is read in three
// steps: every file's header (each file's session stays alive: the model reads its table); the
// scalar tensors the model wants, by byte range (coalesced), fed to it; then each file streams with
// a plan in which every layer is known. A source that cannot seek (a stream, a server without
// Range) is read into memory first.
import { toSource } from './sources.mjs';
import { makeError } from './errors.mjs';
import { scanFile } from './scan.mjs';
import { fileEvents } from './model.mjs';
import { Model } from './conventions.mjs';

export function isUqffSource(source) {
  return source !== null && typeof source === 'object' && Array.isArray(source.uqff);
}

// A list entry's file name: `{name, source}`, a File's name, or a path's / URL's last segment.
function entryName(e, i) {
  if (e && typeof e === 'object' && 'source' in e && !(e instanceof URL)) return e.name ?? `file-${i}`;
  if (typeof e === 'string') return e.split(/[\\/]/).pop();
  if (e instanceof URL) return e.pathname.split('/').pop();
  if (typeof Blob !== 'undefined' && e instanceof Blob && e.name) return e.name;
  return `file-${i}`;
}

// The files in mistral.rs' order: `.uqff` shards by their trailing number, then the rest
// (residual.safetensors) in the order given.
export function uqffFiles(list) {
  const files = list.map((e, i) => ({
    name: entryName(e, i),
    input: e && typeof e === 'object' && 'source' in e && !(e instanceof URL) ? e.source : e,
    given: i,
  }));
  const num = (n) => { const m = /(\d*)\.uqff$/.exec(n); return m ? (m[1] ? Number(m[1]) : 0) : null; };
  const shards = files.filter((f) => num(f.name) !== null).sort((a, b) => num(a.name) - num(b.name) || a.given - b.given);
  return [...shards, ...files.filter((f) => num(f.name) === null)];
}

// Reads the scalar tensors of every file by range (neighbours closer than `gap` share a request).
async function readScalars(files, wanted, options) {
  const bytes = new Map();  // header tensor -> its bytes
  for (const f of files) {
    const ts = wanted.filter((r) => r.f === f).map((r) => r.t).sort((a, b) => a.offset - b.offset);
    if (!ts.length) continue;
    const src = await toSource(f.input, options);
    await src.open(options.signal);
    try {
      const gap = src.url ? 1 << 20 : 64 << 10;
      for (let i = 0; i < ts.length;) {
        let j = i + 1;
        while (j < ts.length && ts[j].offset - (ts[j - 1].offset + ts[j - 1].byteLength) <= gap) j++;
        const a = ts[i].offset, b = Math.max(...ts.slice(i, j).map((t) => t.offset + t.byteLength));
        const buf = new Uint8Array(b - a);
        let at = 0;
        for await (const c of src.range(a, b, options.signal)) { buf.set(c, at); at += c.length; }
        if (at !== b - a) throw makeError({ code: 'TruncatedData', offset: a + at, tensor: ts[i].name, shard: f.name, detail: `${f.name} ends inside its scalar tensors` });
        for (const t of ts.slice(i, j)) bytes.set(t, buf.subarray(t.offset - a, t.offset - a + t.byteLength));
        i = j;
      }
    } finally {
      src.close();
    }
  }
  return bytes;
}

// Every file's header, the library's model over them, its scalars: per file, the `logical` input
// planOutputs takes. Returns {files, version, weights, plan, tensors}.
export async function openUqff(wasm, source, options) {
  const files = uqffFiles(source.uqff);
  if (!files.length) throw new TypeError('weightstream: { uqff: [...] } needs at least one file');
  const readAll = async (src) => {
    await src.open(options.signal);
    const parts = [];
    let n = 0;
    for await (const c of src.chunks(options.signal)) { parts.push(c); n += c.length; }
    src.close();
    const all = new Uint8Array(n);
    let at = 0;
    for (const p of parts) { all.set(p, at); at += p.length; }
    return all;
  };
  try {
    for (const f of files) {
      // A source that cannot seek is read once, into memory: its scalars are needed before the
      // plan. Streams never seek; a URL seeks when its server answers the first request with 206.
      let src = await toSource(f.input, options);
      if (!src.url && !src.seekable) {
        f.input = await readAll(src);
        src = await toSource(f.input, options);
      }
      const keep = {};
      const o = { ...options, select: () => false, ranges: false, headerOnly: true, shard: f.name, keep };
      for await (const ev of scanFile(wasm, src, o)) if (ev.kind === 'header') f.header = ev.header;
      f.session = keep.session;
      if (!src.seekable) f.input = await readAll(await toSource(f.input, options));
    }
    const model = new Model(wasm, files.map((f) => ({ session: f.session, header: f.header, name: f.name })));
    let weights, version, plan;
    try {
      model.build('uqff');
      const wanted = [];
      files.forEach((f, table) => { for (const t of f.header.tensors) if (model.wants(table, t.index)) wanted.push({ f, t, table }); });
      const scalars = await readScalars(files, wanted, options);
      for (const r of wanted) model.feed(r.table, r.t.index, r.t.offset, scalars.get(r.t));
      model.resolve();
      weights = model.weights(options.chunkSize ?? (1 << 20));
      version = model.version().join('.');
      plan = model.plan(options.chunkSize ?? (1 << 20));
      const headers = files.map((f) => f.header), names = files.map((f) => f.name);
      files.forEach((f, table) => { f.logical = { table, headers, names, weights }; });
      return { files, version, weights, plan };
    } finally {
      model.destroy();
    }
  } finally {
    for (const f of files) { f.session?.destroy(); f.session = null; }
  }
}

// Decode events of the whole directory: the files one after another, each event tagged with its
// file; one 'done' at the end, with the version and the file list.
export async function* uqffEvents(wasm, source, options, progress) {
  const model = await openUqff(wasm, source, options);
  const sizes = model.files.map((f) => f.header.size ?? null);
  if (sizes.every((n) => n !== null)) progress?.setTotal(sizes.reduce((a, b) => a + b, 0));
  for (const f of model.files) {
    const src = await toSource(f.input, options);
    for await (const ev of fileEvents(wasm, src, options, progress, { shard: f.name, logical: f.logical })) {
      if (ev.kind === 'done') continue;
      ev.shard = f.name;
      yield ev;
    }
  }
  yield { kind: 'done', validated: 'full', index: { convention: 'uqff', version: model.version, metadata: null, shards: model.files.map((f) => f.name) } };
}
