// What the package says about the library's logical weights (ws::LogicalModel, built by the model
// loader): the quantization option as the config.json document the loader reads, and inspect()'s
// row for a weight. JS keeps no convention rules of its own.
import { ROLES } from './words.mjs';

const utf8 = new TextEncoder();

// The quantization option (config.json, its quantization object, or that object's contents) as
// the document ws::MlxQuantConfig reads.
export function configBytes(q) {
  if (!q) return null;
  const doc = q.quantization !== undefined || q.quantization_config !== undefined ? q : { quantization: q };
  return utf8.encode(JSON.stringify(doc));
}

// What inspect() lists for each logical weight (the CLI's inspect --json, camel-cased).
// `files`: [{header, name}] by table.
export function publicWeight(files, w) {
  const t = (r) => files[r.table].header.tensors.at(r.index);
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
