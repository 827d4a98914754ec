// The validated header as JS objects: what inspect() returns and what every event refers to.
import { u64 } from './module.mjs';

// GGML type names by (id, dialect), asked of the library once each.
export function ggmlType(wasm, id, dialectId) {
  const key = dialectId * 65536 + id;
  wasm.ggmlCache ??= new Map();
  let t = wasm.ggmlCache.get(key);
  if (!t) {
    const w = wasm.x.ws_ggml_type(id, dialectId) >> 2;
    const u = wasm.u32;
    t = { name: wasm.cstr(u[w]), kind: u[w + 1], blockElems: u[w + 2], blockBytes: u[w + 3] };
    wasm.ggmlCache.set(key, t);
  }
  return t;
}

// Builds the header from a session that just reached HeaderReady (or a length error right after
// the header). `kvs`: the GGUF key-value collector. `tensors` is what inspect() lists: a view over
// the table's bytes (tensor-table.mjs; publicHeader hands it on as it is), which also answers what
// only the package uses of a tensor, by index: typeId(i) (DType or GGML id), elements(i).
export function buildHeader(wasm, session, info, kvs) {
  const gguf = info.format === 'gguf';
  const names = [];  // dtype names by type id, looked up once
  const dtypeOf = (type) => names[type] ??= gguf ? ggmlType(wasm, type, info.dialectId).name : wasm.dtypeNames[type] ?? '?';
  // Safetensors: row-major. GGUF: ggml order, ne[0] (the contiguous dimension) first. `offset`:
  // the absolute file offset of the first byte.
  const tensors = session.table(info.tensorCount, dtypeOf, info.dataStart);
  const header = {
    format: info.format,
    tensors,
    metadata: null,
    headerSize: gguf ? null : info.headerSize,
    dataStart: info.dataStart,
    dataSize: info.dataSize,
    arena: { size: info.arenaSize, used: info.arenaUsed, peak: info.arenaPeak },
  };
  if (gguf) {
    const { kv, metadata } = kvs.result();
    header.metadata = metadata;
    header.gguf = {
      version: info.ggufVersion,
      alignment: info.ggufAlignment,
      dialect: info.dialect,
      architecture: info.architecture,
      kvCount: info.ggufKvCount,
      tensorInfosOffset: info.tensorInfosOffset,
      kv,
    };
  } else {
    header.metadata = session.metadata(info.hasMetadata);
  }
  return header;
}

export { u64 };
