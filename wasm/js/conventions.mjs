// Logical weights by the library's rules: ws::LogicalModel behind the handle of
// wasm/src/abi_conventions.cpp (the word layouts here mirror the comments there). JS keeps no
// convention rules of its own: which tensors form a weight, its mode, bits, group, logical shape,
// format and every rejection come from the library, as they do for the CLI.
//
//   const m = openModel(wasm, files);          // files: [{session, header, name}], sessions alive
//   m.build('mlx', configBytes) / m.build('ollama') / m.build('plain') / m.build('uqff')
//   ... UQFF: m.wants(t, i), m.feed(t, i, offset, bytes), m.resolve()
//   const weights = m.weights(chunk);           // plain JS objects: valid after destroy()
//   m.destroy();
import { makeError } from './errors.mjs';
import { formatTable } from './formats.mjs';
import { u64 } from './module.mjs';
import { readError, readWeight, NONE, CONVENTIONS, ROLES } from './words.mjs';

const utf8 = new TextEncoder();

// The quantization option (config.json, its quantization object, or that object's contents) as
// the document ws::MlxQuantConfig reads.
export function configBytes(q) {
  if (!q) return null;
  const doc = q.quantization !== undefined || q.quantization_config !== undefined ? q : { quantization: q };
  return utf8.encode(JSON.stringify(doc));
}

export class Model {
  // files: [{session, header, name}] — one table each, in the order the convention wants (UQFF:
  // the shards by number, then residual.safetensors).
  constructor(wasm, files, { config = null } = {}) {
    this.wasm = wasm;
    this.files = files;
    const tensors = files.reduce((n, f) => n + f.header.tensors.length, 0);
    const inputCap = Math.max(64, config ? config.length : 0);
    this.config = config;
    this.h = wasm.x.ws_model_create(Math.max(1, tensors), tensors, inputCap, config ? 4096 + 4 * config.length : 8);
    if (!this.h) throw new RangeError(`weightstream: cannot allocate a logical model of ${tensors} tensors`);
    wasm.live.models++;
    this.input = wasm.x.ws_model_input(this.h);
    this.inputCap = inputCap;
    for (const f of files) {
      const s = wasm.x.ws_model_add_table(this.h, f.session.h, f.header.dataStart % 4294967296, Math.floor(f.header.dataStart / 4294967296));
      if (s !== 0) {
        this.destroy();
        throw makeError({ code: 'UsageError', offset: 0, detail: 'weightstream reads at most 64 files as one logical model' });
      }
    }
  }

  destroy() {
    if (this.h) { this.wasm.x.ws_model_destroy(this.h); this.wasm.live.models--; }
    this.h = 0;
  }

  // The model's rejection as a WeightstreamError, with the file of the tensor it points at.
  error(status) {
    const wasm = this.wasm;
    const w = wasm.x.ws_model_error(this.h) >> 2;
    const e = readError(wasm, w);
    const u = wasm.u32;
    const detail = u[w + 13] ? wasm.text(u[w + 12], u[w + 13]) : undefined;
    const table = u[w + 14];
    return makeError({
      code: wasm.statusName(status), offset: e.offset, tensor: e.tensor,
      shard: table !== NONE ? this.files[table].name ?? null : null,
      found: e.found ?? undefined, expected: e.expected ?? undefined, detail,
    }, wasm.statusDescription(status));
  }

  check(s) { if (s !== 0) throw this.error(s); }

  build(kind) {
    const x = this.wasm.x;
    if (kind === 'mlx') {
      let n = 0;
      if (this.config) {
        this.wasm.u8.set(this.config, this.input);
        n = this.config.length;
      }
      const s = x.ws_model_build_mlx(this.h, n);
      if (s !== 0 && n && this.configFailed()) {
        const e = readError(this.wasm, x.ws_model_config_error(this.h) >> 2);
        throw makeError({ code: this.wasm.statusName(s), offset: e.offset, tensor: null, shard: null, detail: 'in the quantization option' }, this.wasm.statusDescription(s));
      }
      this.check(s);
    } else if (kind === 'ollama') this.check(x.ws_model_build_ollama(this.h));
    else if (kind === 'plain') this.check(x.ws_model_build_plain(this.h));
    else if (kind === 'uqff') this.check(x.ws_model_build_uqff(this.h));
    else throw new TypeError(`unknown convention ${kind}`);
  }

  // The convention the files' metadata says (ws::convention_signal over every table, as the CLI
  // decides): 'ollama' if any file says so, else 'mlx' if any does or a config is given, else 'plain'.
  kind() {
    const said = this.files.map((f) => CONVENTIONS[this.wasm.x.ws_session_convention(f.session.h)]);
    return said.includes('ollama') ? 'ollama' : said.includes('mlx') || this.config ? 'mlx' : 'plain';
  }

  // True when the config itself was rejected (its error is set), not the model.
  configFailed() {
    const w = this.wasm.x.ws_model_config_error(this.h) >> 2;
    return this.wasm.u32[w] !== 0;
  }

  wants(table, tensor) { return this.wasm.x.ws_model_uqff_wants(this.h, table, tensor) !== 0; }

  // Bytes of tensor (table, index) starting at absolute file offset `offset`.
  feed(table, tensor, offset, bytes) {
    for (let at = 0; at < bytes.length; at += this.inputCap) {
      const piece = bytes.subarray(at, at + this.inputCap);
      this.wasm.u8.set(piece, this.input);
      const o = offset + at;
      this.check(this.wasm.x.ws_model_feed_uqff(this.h, table, tensor, o % 4294967296, Math.floor(o / 4294967296), this.input, piece.length));
    }
  }

  resolve() { this.check(this.wasm.x.ws_model_resolve_uqff(this.h)); }
  version() { return [0, 1, 2].map((i) => this.wasm.x.ws_model_uqff_version(this.h, i)); }

  // Every logical weight, with its load plan for seekable reads of `chunk` bytes.
  weights(chunk = 1 << 20) {
    const x = this.wasm.x;
    const formats = formatTable(this.wasm);
    const out = [];
    for (let i = 0, n = x.ws_model_weight_count(this.h); i < n; i++) out.push(readWeight(this.wasm, x.ws_model_weight(this.h, i, chunk) >> 2, i, formats));
    return out;
  }

  // The whole model's peak scratch, streaming every file in order and reading by range.
  plan(chunk = 1 << 20) {
    const w = this.wasm.x.ws_model_plan(this.h, chunk) >> 2;
    const u = this.wasm.u32;
    return { chunk, sequentialPeak: u64(u[w + 16], u[w + 17]), seekablePeak: u64(u[w + 18], u[w + 19]) };
  }
}

// What inspect() lists for each logical weight (the CLI's inspect --json, camel-cased).
// `files`: [{header, name}] by table.
export function publicWeight(files, w) {
  const t = (r) => files[r.table].header.tensors[r.index];
  const packed = t(w.pieces.packed);
  let bytes = 0;
  for (const r of Object.values(w.pieces)) bytes += t(r).byteLength;
  return {
    name: w.name,
    convention: w.convention,
    mode: w.mode,
    stored: packed.dtype,
    format: w.format.name,
    bits: w.mode === 'none' ? null : w.bits,
    group: w.mode === 'none' ? null : w.group,
    shape: w.shape,
    bytes,
    companions: ROLES.filter((r) => r !== 'packed' && w.pieces[r]),
    file: files[w.pieces.packed.table].name ?? null,
    sequentialScratch: w.plan.sequentialScratch,
    // A weight of one piece streams: nothing is held to read it by range either (as the CLI says).
    seekableScratch: Object.keys(w.pieces).length > 1 ? w.plan.seekableScratch : 0,
    packedBeforeCompanion: w.plan.packedBeforeCompanion,
  };
}
