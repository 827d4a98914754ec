// The word layouts of wasm/src/abi.h read into JS objects: one reader for each layout, whichever
// handle wrote it (a session, one file of a model loader, a logical model).
import { u64, u64big } from './module.mjs';
import { formatTable } from './formats.mjs';

export const FormatNames = ['unknown', 'safetensors', 'gguf'];
export const NONE = 0xFFFFFFFF;
// PieceRole order (conventions.h).
export const ROLES = ['packed', 'scales', 'biases', 'globalScale', 'format', 'ggmlType', 'shape', 'bits', 'groupSize', 'numBlocks'];

// A rejection from the 12 error words at word index `w`.
export function readError(wasm, w) {
  const u32 = wasm.u32;
  const tensorPtr = u32[w + 4];
  const tensorLen = u32[w + 5];
  return {
    code: wasm.statusName(u32[w]),
    status: u32[w],
    offset: u64(u32[w + 1], u32[w + 2]),
    tensorIndex: u32[w + 3] === NONE ? null : u32[w + 3],
    tensor: tensorPtr ? wasm.text(tensorPtr, tensorLen) : null,
    found: u32[w + 6] ? u64big(u32[w + 8], u32[w + 9]) : null,
    expected: u32[w + 7] ? u64big(u32[w + 10], u32[w + 11]) : null,
  };
}

// Limits as the ABI reads them (8 words at word index w), from JS-style options.
export function writeLimits(wasm, w, limits) {
  const u32 = wasm.u32;
  const big = (v, at) => { const b = BigInt(v); u32[w + at] = Number(b & 0xFFFFFFFFn); u32[w + at + 1] = Number(b >> 32n); };
  big(limits.maxHeaderBytes ?? 100000000, 0);
  u32[w + 2] = limits.maxTensors ?? 0xFFFFFFFF;
  big(limits.maxNameBytes ?? 100000000, 3);
  u32[w + 5] = limits.maxRank ?? 0xFFFFFFFF;
  u32[w + 6] = limits.maxNesting ?? 127;
  u32[w + 7] = limits.keepMetadata === false ? 0 : 1;
}

// A reader event (EventOut) at word index w, with its key-value fields.
export function readKvEvent(wasm, w) {
  const u = wasm.u32;
  return {
    type: u[w], kv: u[w + 6], keyPtr: u[w + 7], keyLen: u[w + 8], valueType: u[w + 9], elemType: u[w + 10],
    count: u64(u[w + 11], u[w + 12]), index: u64(u[w + 13], u[w + 14]), first: u[w + 15] !== 0, last: u[w + 16] !== 0,
    uLo: u[w + 17], uHi: u[w + 18], iLo: u[w + 19], iHi: u[w + 20], f: wasm.f64[(w + 22) >> 1],
    data: u[w + 2], size: u[w + 3], offset: u64(u[w + 4], u[w + 5]),
  };
}

// A reader's facts (InfoOut) at word index w.
export function readInfo(wasm, w) {
  const u = wasm.u32;
  return {
    format: FormatNames[u[w]] ?? 'unknown',
    position: u64(u[w + 1], u[w + 2]),
    headerSize: u64(u[w + 3], u[w + 4]),
    headerSizeBig: u64big(u[w + 3], u[w + 4]),
    dataStart: u64(u[w + 5], u[w + 6]),
    dataSize: u64(u[w + 7], u[w + 8]),
    tensorCount: u[w + 9],
    arenaUsed: u[w + 10],
    arenaPeak: u[w + 11],
    arenaNeeded: u[w + 12],
    ggufVersion: u[w + 13],
    ggufAlignment: u[w + 14],
    ggufKvCount: u64(u[w + 15], u[w + 16]),
    dialect: u[w + 17] === 1 ? 'bitnet' : 'upstream',
    dialectId: u[w + 17],
    architecture: u[w + 18] ? wasm.text(u[w + 18], u[w + 19]) : null,
    tensorInfosOffset: u64(u[w + 20], u[w + 21]),
    metadataCount: u[w + 22],
    hasMetadata: u[w + 23] !== 0,
    arenaSize: u[w + 24],
    error: readError(wasm, w + 32),
  };
}

// One tensor's record words through item(i) and its dimensions through dims(i, ptr, max).
export function readTensor(wasm, i, item, dims, dimsPtr, dimsMax) {
  const w = item(i);
  const u = wasm.u32;
  const t = {
    name: wasm.text(u[w], u[w + 1]), type: u[w + 2], rank: u[w + 3],
    begin: u64(u[w + 4], u[w + 5]), end: u64(u[w + 6], u[w + 7]),
    entryOffset: u64(u[w + 8], u[w + 9]), elements: u64(u[w + 10], u[w + 11]), shape: null,
  };
  const rank = Math.min(t.rank, dimsMax);
  dims(i, dimsPtr, rank);
  const d = wasm.u32;
  const shape = new Array(rank);
  for (let k = 0; k < rank; k++) shape[k] = u64(d[(dimsPtr >> 2) + 2 * k], d[(dimsPtr >> 2) + 2 * k + 1]);
  t.shape = shape;
  return t;
}

// __metadata__ through reset() and next() (true while an entry is in the item words at `w`).
export function readMetadata(wasm, reset, next, w) {
  const out = Object.create(null);
  reset();
  while (next()) {
    const u = wasm.u32;
    out[wasm.text(u[w], u[w + 1])] = wasm.text(u[w + 2], u[w + 3]);
  }
  return out;
}

// Logical weight `index` from its kWeightWords words at word index w (with its load plan).
export function readWeight(wasm, w, index, formats = formatTable(wasm)) {
  const u = wasm.u32;
  const rank = u[w + 9];
  const shape = [];
  for (let d = 0; d < rank; d++) shape.push(u64(u[w + 10 + 2 * d], u[w + 11 + 2 * d]));
  const pieces = {};
  for (let r = 0; r < ROLES.length; r++) {
    if (u[w + 22 + 2 * r] !== NONE) pieces[ROLES[r]] = { table: u[w + 22 + 2 * r], index: u[w + 23 + 2 * r] };
  }
  const convention = wasm.conventionNames[u[w + 2]];
  return {
    index,
    name: wasm.text(u[w], u[w + 1]),
    convention,
    mode: wasm.modeNames[u[w + 3]],
    bits: u[w + 4],
    group: u[w + 5],
    format: formats.list[u[w + 6]],
    decodable: u[w + 7] !== 0,
    scaleDtype: u[w + 8],
    shape,
    elements: u64(u[w + 18], u[w + 19]),
    globalScaleIsOllama: u[w + 20] === 1,
    globalScaleIsModelopt: u[w + 20] === 2,
    globalScaleDivides: u[w + 20] === 3,
    uqffType: convention === 'uqff' ? wasm.uqffTypeNames[u[w + 21]] : null,
    pieces,
    plan: {
      packedBeforeCompanion: u[w + 42] !== 0,
      companionBytes: u64(u[w + 43], u[w + 44]),
      sequentialScratch: u64(u[w + 45], u[w + 46]),
      seekableScratch: u64(u[w + 47], u[w + 48]),
    },
  };
}
