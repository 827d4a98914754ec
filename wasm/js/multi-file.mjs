// Several files as one logical model (a UQFF directory, a sharded model): every file's header
// first, each file's session kept alive while the library's model (conventions.mjs) reads its
// table; the model's weights; and, for a weight whose companion (scales, biases, global scale) is
// in another file than its packed tensor, that companion's bytes, read by range before any file
// streams (the library looks companions up across all files; so does the decoder here).
//
// Every file's input is made seekable first: a source that cannot seek (a stream, a server
// without Range) is read into memory once, so its companions and scalars can be read out of order.
import { toSource, readAll } from './sources.mjs';
import { makeError } from './errors.mjs';
import { scanFile } from './scan.mjs';
import { Model } from './conventions.mjs';

// Reads tensors of the files by range (neighbours closer than `gap` share a request); from a
// source that cannot seek (a URL without Range), in one pass keeping only those bytes.
// wanted: [{f, t}] (f: a file of `files`, t: a header tensor). Returns Map(header tensor -> bytes).
export async function readTensors(files, wanted, options, what = 'its scalar tensors') {
  const bytes = new Map();
  for (const f of files) {
    const ts = wanted.filter((r) => r.f === f).map((r) => r.t).sort((a, b) => a.offset - b.offset);
    if (!ts.length) continue;
    const src = await toSource(f.input, options);
    await src.open(options.signal);
    try {
      if (!src.seekable) {
        // A URL served without Range: one pass over the file, keeping only the wanted bytes.
        const bufs = ts.map((t) => new Uint8Array(t.byteLength));
        let pos = 0, got = 0;
        const need = ts.reduce((n, t) => n + t.byteLength, 0);
        for await (const c of src.chunks(options.signal)) {
          const end = pos + c.length;
          ts.forEach((t, k) => {
            const a = Math.max(pos, t.offset), b = Math.min(end, t.offset + t.byteLength);
            if (a < b) { bufs[k].set(c.subarray(a - pos, b - pos), a - t.offset); got += b - a; }
          });
          pos = end;
          if (got === need) break;
        }
        if (got !== need) throw makeError({ code: 'TruncatedData', offset: pos, tensor: ts[0].name, shard: f.name, detail: `${f.name} ends inside ${what}` });
        ts.forEach((t, k) => bytes.set(t, bufs[k]));
        continue;
      }
      const gap = src.url ? 1 << 20 : 64 << 10;
      for (let i = 0; i < ts.length;) {
        let j = i + 1;
        while (j < ts.length && ts[j].offset - (ts[j - 1].offset + ts[j - 1].byteLength) <= gap) j++;
        const a = ts[i].offset, b = Math.max(...ts.slice(i, j).map((t) => t.offset + t.byteLength));
        const buf = new Uint8Array(b - a);
        let at = 0;
        if (b > a) for await (const c of src.range(a, b, options.signal)) { buf.set(c, at); at += c.length; }
        if (at !== b - a) throw makeError({ code: 'TruncatedData', offset: a + at, tensor: ts[i].name, shard: f.name, detail: `${f.name} ends inside ${what}` });
        for (const t of ts.slice(i, j)) bytes.set(t, buf.subarray(t.offset - a, t.offset - a + t.byteLength));
        i = j;
      }
    } finally {
      src.close();
    }
  }
  return bytes;
}

// Reads every file's header; f.header, f.session and f.seekable are set (the caller destroys the
// sessions). f: {name, input}; `onHeader(file, header, session)` may check a header (a shard
// against its index). A stream (it cannot be read twice) is read into memory first; a URL whose
// server has no Range support is too when `buffer` (UQFF needs its scalars out of order), and
// otherwise fetched again to stream (only a file that holds another file's companion is then read
// into memory: the companions another file needs are then taken from one more pass over it).
export async function readHeaders(wasm, files, options, onHeader = null, { buffer = true } = {}) {
  for (const f of files) {
    let src = await toSource(f.input, options);
    if (!src.url && !src.seekable) {
      f.input = await readAll(src, options.signal);
      src = await toSource(f.input, options);
    }
    const keep = {};
    const o = {
      ...options, select: () => false, ranges: false, headerOnly: true, shard: f.name, keep,
      onHeader: onHeader ? (h, s) => onHeader(f, h, s) : undefined,
    };
    try {
      for await (const ev of scanFile(wasm, src, o)) if (ev.kind === 'header') f.header = ev.header;
    } finally {
      f.session = keep.session ?? null;
    }
    // A URL is seekable when its server answered the first request with 206.
    f.seekable = src.seekable;
    if (buffer && !src.seekable) {
      f.input = await readAll(await toSource(f.input, options), options.signal);
      f.seekable = true;
    }
  }
}

export function destroySessions(files) {
  for (const f of files) { f.session?.destroy(); f.session = null; }
}

// The library's model over the files (headers read, sessions alive): `build(model)` runs the
// convention's steps. Sets f.logical for planOutputs on every file; returns {weights, plan,
// version (UQFF)}. Companions in another file than their weight are read here.
export async function buildLogical(wasm, files, options, build, { config = null, uqff = false } = {}) {
  const model = new Model(wasm, files.map((f) => ({ session: f.session, header: f.header, name: f.name })), { config });
  let weights, plan, version = null;
  try {
    await build(model);
    const chunk = options.chunkSize ?? (1 << 20);
    weights = model.weights(chunk);
    plan = model.plan(chunk);
    if (uqff) version = model.version().join('.');
  } finally {
    model.destroy();
  }
  const wanted = [];
  // inspect() reads no data: it only lists the weights.
  if (!options.noExternal) for (const w of weights) {
    for (const role of ['scales', 'biases', 'globalScale']) {
      const r = w.pieces[role];
      if (r && r.table !== w.pieces.packed.table) wanted.push({ f: files[r.table], t: files[r.table].header.tensors[r.index], key: `${r.table}:${r.index}` });
    }
  }
  const external = new Map();
  if (wanted.length) {
    const bytes = await readTensors(files, wanted, options, 'a companion of a weight in another file');
    for (const r of wanted) external.set(r.key, { bytes: bytes.get(r.t), tensor: r.t });
  }
  const headers = files.map((f) => f.header), names = files.map((f) => f.name);
  files.forEach((f, table) => { f.logical = { table, headers, names, weights, external }; });
  return { weights, plan, version };
}
