// UQFF directories (FORMATS §4): `{ uqff: [sources] }` — the shards `<stem>-<n>.uqff` (taken in
// numeric order of n) and `residual.safetensors` — decoded as one model of logical weights.
//
// A layer's format tag, GGML type, shape, bits, group size and block count are tiny tensors (data,
// not header), so the model is read in three steps: every file's header; the scalar tensors by
// byte range (coalesced); then each file streams with a plan in which every layer is known. A
// source that cannot seek (a stream, a server without Range) is read into memory first.
//
// The rules, their order and the statuses mirror LogicalModel::build_uqff / uqff_layer /
// resolve_uqff (lib/src/conventions/uqff_layers.cpp), so the hints of hints.mjs apply.
import { toSource } from './sources.mjs';
import { makeError } from './errors.mjs';
import { scanFile } from './scan.mjs';
import { ggmlType } from './header.mjs';
import { formatFromGgml, formatTable } from './formats.mjs';
import { finishQuantized, MAX_RANK } from './quantized.mjs';
import { fileEvents } from './model.mjs';

// UqffSuffix order (uqff.h): bit s of a layer's mask is SUFFIX[s].
const SUFFIX = ['.weight', '.weight.format', '.weight.dtype', '.weight.shape', '.weight.scales', '.weight.zeros',
  '.weight.bits', '.weight.group_size', '.weight.axis', '.weight.dequant_w_scale', '.weight.dequant_x_scale',
  '.weight.quant_scale', '.weight.biases', '.weight.num_blocks', '.weight.optimization_steps', '.weight.round_zeros',
  '.weight.channel_wise'];
const S = Object.fromEntries(['Weight', 'Format', 'Dtype', 'Shape', 'Scales', 'Zeros', 'Bits', 'GroupSize', 'Axis',
  'DequantWScale', 'DequantXScale', 'QuantScale', 'Biases', 'NumBlocks', 'OptimizationSteps', 'RoundZeros',
  'ChannelWise'].map((n, i) => [n, i]));
const bit = (s) => 1 << s;
const BASE = bit(S.Weight) | bit(S.Format);
const TYPES = ['gguf', 'unquant', 'hqq', 'fp8', 'afq', 'f8q8', 'mxfp4'];
const SETS = [
  BASE | bit(S.Dtype) | bit(S.Shape),
  BASE,
  BASE | bit(S.Scales) | bit(S.Zeros) | bit(S.Shape) | bit(S.Bits) | bit(S.GroupSize) | bit(S.Axis),
  BASE | bit(S.DequantWScale) | bit(S.DequantXScale) | bit(S.QuantScale) | bit(S.Dtype),
  BASE | bit(S.Scales) | bit(S.Biases) | bit(S.Bits) | bit(S.GroupSize),
  BASE | bit(S.NumBlocks) | bit(S.Shape),
  BASE | bit(S.Scales),
];
const OPTIONAL = [0, 0, bit(S.OptimizationSteps) | bit(S.RoundZeros) | bit(S.ChannelWise), 0, 0, 0, 0];
// Suffixes whose tensors are scalars read before planning (PieceRole Format..NumBlocks).
const SCALARS = [S.Format, S.Dtype, S.Shape, S.Bits, S.GroupSize, S.NumBlocks];
const VERSION = ['uqff.version.major', 'uqff.version.minor', 'uqff.version.patch'];
const MAJOR = 1, MAX_MINOR = 2;  // kUqffMajor, kUqffMaxMinor (uqff.h)

const popcount = (v) => { let n = 0; for (; v; v &= v - 1) n++; return n; };
const le32 = (b, at = 0) => (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;

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

// The model over every file's header (build_uqff + uqff_layer). Returns the layers and, per file,
// the tensors that are no output of their own (version and scalar tensors, scales, biases).
function buildModel(wasm, files) {
  const err = (code, t, tensor, file, extra = {}) => makeError({ code, offset: t ? t.entryOffset : 0, tensor, shard: file ? file.name : null, ...extra }, wasm.statusDescription(wasm.statusCode(code)));
  // Pre-1.0 files name every tensor with digits only.
  for (const f of files) {
    const ts = f.header.tensors;
    if (ts.length && ts.every((t) => /^[0-9]+$/.test(t.name))) throw err('UqffPreV1', ts[0], ts[0].name, f);
  }
  // Names are unique across the files; lookups take the first (file order).
  const byName = new Map();
  for (const f of files) {
    for (const t of f.header.tensors) {
      if (byName.has(t.name)) throw err('UqffDuplicateKey', t, t.name, f);
      byName.set(t.name, { f, t });
    }
  }
  const version = VERSION.map((n) => {
    const t = files[0].header.tensors.find((x) => x.name === n);
    if (!t) throw makeError({ code: 'UqffMissingVersion', offset: 0, tensor: n, shard: null }, wasm.statusDescription(wasm.statusCode('UqffMissingVersion')));
    if (t.dtype !== 'U32' || t.shape.length !== 0) throw err('UqffVersionNotScalar', t, n, files[0]);
    return { f: files[0], t };
  });
  const layers = [];
  for (const f of files) {
    f.skip = new Set();
    for (const t of f.header.tensors) {
      if (f === files[0] && version.some((v) => v.t === t)) { f.skip.add(t.index); continue; }
      const name = t.name;
      if (name.endsWith(SUFFIX[S.Format])) {
        layers.push(layer(f, t, name.slice(0, -SUFFIX[S.Format].length)));
        continue;
      }
      // A known suffix belongs to its key's layer (built at the tag); without a tag `<key>.weight`
      // is a plain tensor and the others are orphans.
      let handled = false;
      for (let s = 0; s < SUFFIX.length && !handled; s++) {
        if (s === S.Format || !name.endsWith(SUFFIX[s])) continue;
        const key = name.slice(0, -SUFFIX[s].length);
        if (byName.has(key + SUFFIX[S.Format])) handled = true;
        else if (s !== S.Weight) throw err('ConventionOrphanCompanion', t, name, f);
      }
      if (handled) continue;
      for (let p = name.indexOf('.weight.'); p >= 0; p = name.indexOf('.weight.', p + 1)) {
        if (byName.has(name.slice(0, p) + SUFFIX[S.Format])) throw err('UqffUnexpectedCompanion', t, name, f, { detail: name.slice(p) });
      }
    }
  }

  function layer(f, ft, key) {
    const refs = SUFFIX.map((s) => byName.get(key + s) ?? null);
    let mask = 0;
    refs.forEach((r, s) => { if (r) mask |= bit(s); });
    const w = refs[S.Weight];
    const lname = w ? w.t.name : ft.name;
    const lref = w ?? { f, t: ft };
    const fail = (code, r, extra) => { throw err(code, r.t, lname, r.f, extra); };
    const failData = (code, r, extra) => { throw makeError({ code, offset: r.t.offset, tensor: lname, shard: r.f.name, ...extra }, wasm.statusDescription(wasm.statusCode(code))); };
    if (ft.dtype !== 'U8' || ft.shape.length !== 0) fail('UqffFormatNotScalar', { f, t: ft });
    let type = -1, best = -1, bestDiff = 99;
    for (let k = 0; k < SETS.length; k++) {
      const m = mask & ~OPTIONAL[k];
      if (m === SETS[k]) type = k;
      const diff = popcount(m ^ SETS[k]);
      if (diff < bestDiff) { bestDiff = diff; best = k; }
    }
    if (type < 0) {
      const extra = mask & ~SETS[best] & ~OPTIONAL[best], missing = SETS[best] & ~mask;
      for (let s = 0; s < SUFFIX.length; s++) if (extra & bit(s)) throw err('UqffUnexpectedCompanion', refs[s].t, refs[s].t.name, refs[s].f, { detail: SUFFIX[s] });
      for (let s = 0; s < SUFFIX.length; s++) if (missing & bit(s)) fail('UqffMissingCompanion', lref, { detail: SUFFIX[s] });
    }
    if (type === 2 || type === 3) fail('UqffUnsupportedType', lref, { detail: TYPES[type] });
    for (const s of [S.Dtype, S.Shape, S.Bits, S.GroupSize, S.NumBlocks]) {
      const r = refs[s];
      if (!r) continue;
      const c = r.t;
      const ok = s === S.Dtype ? c.dtype === 'U32' && c.shape.length === 0
        : s === S.Bits || s === S.GroupSize ? c.dtype === 'U8' && c.shape.length === 0
          : s === S.NumBlocks ? (c.dtype === 'U32' || c.dtype === 'U64') && c.shape.length === 0
            : c.dtype === 'U32' && c.shape.length === 1 && c.shape[0] >= 1 && c.shape[0] <= MAX_RANK;
      if (!ok) fail('ConventionCompanionShape', r);
    }
    if ((type === 0 || type === 5 || type === 6) && w.t.dtype !== 'U8') fail('ConventionCompanionShape', w);
    if (type === 6 && refs[S.Scales].t.dtype !== 'U8') fail('ConventionCompanionShape', refs[S.Scales]);
    return { name: lname, key, type, refs, fail, failData };
  }
  return { layers, version };
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

// resolve_uqff: the version, then each layer's tag and the scalars that decide its logical form.
function resolve(wasm, model, scalars) {
  const [maj, min] = model.version;
  const major = le32(scalars.get(maj.t)), minor = le32(scalars.get(min.t));
  const vfail = (code, r, found, expected) => {
    throw makeError({ code, offset: r.t.offset, tensor: r.t.name, shard: r.f.name, found: BigInt(found), expected: BigInt(expected) }, wasm.statusDescription(wasm.statusCode(code)));
  };
  if (major !== MAJOR) vfail('UqffMajorVersion', maj, major, MAJOR);
  if (minor > MAX_MINOR) vfail('UqffMinorVersionTooNew', min, minor, MAX_MINOR);
  const formats = formatTable(wasm);
  const out = [];
  for (const L of model.layers) {
    const { refs, fail, failData } = L;
    const val = (s) => scalars.get(refs[s].t);
    const tag = val(S.Format)[0];
    if (tag >= TYPES.length) failData('UqffUnknownFormatTag', refs[S.Format], { found: BigInt(tag) });
    if (tag !== L.type) failData('UqffFormatTagMismatch', refs[S.Format], { found: BigInt(tag), expected: BigInt(L.type) });
    const w = refs[S.Weight];
    const shapeOf = () => {
      const r = refs[S.Shape], b = val(S.Shape);
      const shape = [];
      let n = 1;
      for (let d = 0; d < r.t.shape[0]; d++) { shape.push(le32(b, 4 * d)); n *= shape[d]; }
      if (!Number.isSafeInteger(n)) failData('ShapeOverflow', r);
      return { shape, elements: n };
    };
    if (tag === 1) continue;  // Unquant: a plain tensor, decided by its dtype
    if (tag === 0) {
      const id = le32(val(S.Dtype));
      const info = ggmlType(wasm, id, 0);
      if (info.kind === 0 || info.kind === 1) failData(info.kind === 0 ? 'GgufInvalidType' : 'GgufRetiredType', refs[S.Dtype], { found: BigInt(id) });
      const f = formatFromGgml(wasm, id, 0);
      if (!f) failData('UnsupportedFormat', refs[S.Dtype], { found: BigInt(id) });
      const { shape, elements } = shapeOf();
      if (shape[shape.length - 1] % info.blockElems !== 0) failData('GgufBlockMisaligned', refs[S.Shape]);
      const bytes = elements / info.blockElems * info.blockBytes;
      if (bytes !== w.t.byteLength) fail('ConventionCompanionShape', w, { found: BigInt(w.t.byteLength), expected: BigInt(bytes) });
      out.push({ L, w, format: f, shape, companions: [], spec: {}, quant: { format: f.name, convention: 'uqff', uqffType: 'gguf', ggmlType: info.name } });
    } else if (tag === 4) {
      const bits = val(S.Bits)[0], group = val(S.GroupSize)[0];
      // UQFF allows fewer widths than MLX: no 5-bit.
      if (![2, 3, 4, 6, 8].includes(bits)) failData('ConventionBitsNotAllowed', refs[S.Bits], { found: BigInt(bits) });
      if (![32, 64, 128].includes(group)) failData('ConventionBitsNotAllowed', refs[S.GroupSize], { found: BigInt(group) });
      const sc = refs[S.Scales], bi = refs[S.Biases];
      const { shape } = finishQuantized((code, at) => fail(code, [sc, bi, w].find((r) => r.t === at)), w.t, sc.t, bi.t, null, 'affine', bits, group);
      out.push({ L, w, format: formats.byName.get('MlxAffine'), shape, companions: [sc, bi], spec: { bits, group, scaleDtype: wasm.dtypeNames.indexOf(sc.t.dtype) },
        quant: { format: 'MlxAffine', convention: 'uqff', uqffType: 'afq', mode: 'affine', bits, groupSize: group, scales: sc.t.name, biases: bi.t.name } });
    } else if (tag === 5) {
      const nr = refs[S.NumBlocks], nb = val(S.NumBlocks);
      const blocks = le32(nb) + (nr.t.dtype === 'U64' ? le32(nb, 4) * 4294967296 : 0);
      const { shape, elements } = shapeOf();
      if (!Number.isSafeInteger(blocks * 33) || elements !== blocks * 32) failData('ConventionCompanionShape', nr, { found: BigInt(blocks) });
      if (w.t.byteLength !== blocks * 33) fail('ConventionCompanionShape', w, { found: BigInt(w.t.byteLength), expected: BigInt(blocks * 33) });
      out.push({ L, w, format: formats.byName.get('F8Q8'), shape, companions: [], spec: {}, quant: { format: 'F8Q8', convention: 'uqff', uqffType: 'f8q8' } });
    } else if (tag === 6) {
      const sc = refs[S.Scales];
      const p = w.t.shape, s = sc.t.shape;
      if (p.length === 0 || p.length > MAX_RANK || s.length !== p.length) fail('ConventionCompanionShape', p.length === 0 ? w : sc);
      const last = p.length - 1;
      for (let d = 0; d < last; d++) if (s[d] !== p[d]) fail('ConventionCompanionShape', sc);
      const k = p[last] * 2;
      if (k % 32 !== 0) fail('ConventionGroupNotDividing', w);
      if (s[last] !== k / 32) fail('ConventionCompanionShape', sc);
      out.push({ L, w, format: formats.byName.get('MlxMxfp4'), shape: [...p.slice(0, -1), k], companions: [sc], spec: { bits: 4, group: 32, scaleDtype: wasm.dtypeNames.indexOf('U8') },
        quant: { format: 'MlxMxfp4', convention: 'uqff', uqffType: 'mxfp4', mode: 'mxfp4', bits: 4, groupSize: 32, scales: sc.t.name, biases: null } });
    }
  }
  return { major, minor, patch: le32(scalars.get(model.version[2].t)), weights: out };
}

// Every file's header, the model, its scalars: per file, the plan input planOutputs takes
// (`uqff` option): {weights: [{w, format, shape, companions, spec, quant}], consumed}.
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
  for (const f of files) {
    // A source that cannot seek is read once, into memory: its scalars are needed before the
    // plan. Streams never seek; a URL seeks when its server answers the first request with 206.
    let src = await toSource(f.input, options);
    if (!src.url && !src.seekable) {
      f.input = await readAll(src);
      src = await toSource(f.input, options);
    }
    const o = { ...options, select: () => false, ranges: false, headerOnly: true, shard: f.name };
    for await (const ev of scanFile(wasm, src, o)) if (ev.kind === 'header') f.header = ev.header;
    if (!src.seekable) f.input = await readAll(await toSource(f.input, options));
  }
  const model = buildModel(wasm, files);
  const wanted = [...model.version];
  for (const L of model.layers) for (const s of SCALARS) if (L.refs[s]) wanted.push(L.refs[s]);
  const scalars = await readScalars(files, wanted, options);
  const resolved = resolve(wasm, model, scalars);
  for (const f of files) f.plan = { weights: [], consumed: new Set(f.skip) };
  for (const r of wanted) files.find((f) => f === r.f).plan.consumed.add(r.t.index);
  for (const q of resolved.weights) {
    const f = q.w.f;
    for (const c of q.companions) {
      // The pipeline streams file by file: a layer's scales and biases must be in its file.
      if (c.f !== f) throw makeError({ code: 'UsageError', offset: c.t.entryOffset, tensor: q.L.name, shard: c.f.name, detail: `${c.t.name} is in ${c.f.name}, its weight in ${f.name}; the JS bindings read a layer from one file` });
      f.plan.consumed.add(c.t.index);
    }
    f.plan.weights.push({ w: q.w.t, format: q.format, shape: q.shape, companions: q.companions.map((c) => c.t.index), spec: q.spec, quant: q.quant });
  }
  return { files, version: `${resolved.major}.${resolved.minor}.${resolved.patch}`, layers: model.layers.length };
}

// Decode events of the whole directory: the files one after another, each event tagged with its
// file; one 'done' at the end, with the version and the file list.
export async function* uqffEvents(wasm, source, options, progress) {
  const model = await openUqff(wasm, source, options);
  const sizes = model.files.map((f) => f.header.size ?? null);
  if (sizes.every((n) => n !== null)) progress?.setTotal(sizes.reduce((a, b) => a + b, 0));
  for (const f of model.files) {
    const src = await toSource(f.input, options);
    for await (const ev of fileEvents(wasm, src, options, progress, { shard: f.name, uqff: f.plan })) {
      if (ev.kind === 'done') continue;
      ev.shard = f.name;
      yield ev;
    }
  }
  yield { kind: 'done', validated: 'full', index: { convention: 'uqff', version: model.version, metadata: null, shards: model.files.map((f) => f.name) } };
}
