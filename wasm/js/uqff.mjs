// UQFF directories (FORMATS §4): `{ uqff: [sources] }` — the shards `<stem>-<n>.uqff` (taken in
// numeric order of n) and `residual.safetensors` — decoded as one model of logical weights.
//
// The rules are the library's (LogicalModel::build_uqff / feed_uqff / resolve_uqff through
// conventions.mjs); this file only moves bytes. A layer's format tag, GGML type, shape, bits,
// group size and block count are tiny tensors (data, not header), so the model is read in three
// steps: every file's header (each file's session stays alive: the model reads its table); the
// scalar tensors the model wants, by byte range (coalesced), fed to it; then each file streams with
// a plan in which every layer is known. A source that cannot seek (a stream, a server without
// Range) is read into memory first. A layer's scales may be in another file than its weight (the
// library looks companions up across files): they are read by range before the files stream.
import { toSource } from './sources.mjs';
import { fileEvents } from './model.mjs';
import { readHeaders, readTensors, buildLogical, destroySessions } from './multi-file.mjs';

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

// Every file's header, the library's model over them, its scalars: per file, the `logical` input
// planOutputs takes. Returns {files, version, weights, plan}.
export async function openUqff(wasm, source, options) {
  const files = uqffFiles(source.uqff);
  if (!files.length) throw new TypeError('weightstream: { uqff: [...] } needs at least one file');
  try {
    await readHeaders(wasm, files, options);
    const { weights, plan, version } = await buildLogical(wasm, files, options, async (model) => {
      model.build('uqff');
      const wanted = [];
      files.forEach((f, table) => { for (const t of f.header.tensors) if (model.wants(table, t.index)) wanted.push({ f, t, table }); });
      const scalars = await readTensors(files, wanted, options);
      for (const r of wanted) model.feed(r.table, r.t.index, r.t.offset, scalars.get(r.t));
      model.resolve();
    }, { uqff: true });
    return { files, version, weights, plan };
  } finally {
    destroySessions(files);
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
