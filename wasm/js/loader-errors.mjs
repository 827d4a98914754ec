// The model loader's rejection as a WeightstreamError: the code, offset and tensor are the
// loader's; the file is named as the model's documents name it; the numbers behind the message
// come from the failing file's reader (as the CLI words them, errors.mjs).
import { makeError } from './errors.mjs';
import { ggmlType } from './header.mjs';

const utf8 = new TextEncoder();

function indexShardOf(L, tensor) {
  if (tensor === null) return null;
  const wasm = L.wasm;
  const b = utf8.encode(tensor).subarray(0, L.readSize);
  wasm.u8.set(b, L.input);
  if (!wasm.x.ws_loader_index_shard_of(L.h, b.length)) return null;
  const u = wasm.u32;
  return wasm.text(u[L.item], u[L.item + 1]);
}

function manifestLayer(L, i) {
  const wasm = L.wasm;
  if (!wasm.x.ws_loader_manifest_layer(L.h, i)) return null;
  const u = wasm.u32;
  const w = L.item;
  return { file: wasm.text(u[w], u[w + 1]), name: wasm.text(u[w + 2], u[w + 3]), isTensor: u[w + 4] !== 0 };
}

// The failing file's reader facts behind a rejection (the fields errors.mjs words them with).
function readerFields(wasm, L, f, e, fields) {
  const r = L.reader(f);
  const info = r.info();
  if (!info) return;
  Object.assign(fields, {
    dataEnd: info.dataStart ? info.dataStart + info.dataSize : null,
    declaredHeader: info.format === 'safetensors' ? info.headerSizeBig : null,
    arenaNeeded: e.arenaNeeded || info.arenaNeeded,
    alignment: info.ggufAlignment,
  });
  if (fields.tensor === null && e.tensorIndex !== null && e.tensorIndex < info.tensorCount) {
    fields.tensor = r.tensor(e.tensorIndex, wasm.scratch, 0).name;
  }
  if (e.code === 'GgufRetiredType' && e.found !== null) {
    const id = Number(e.found);
    fields.retiredName = ggmlType(wasm, id, info.dialectId).name;
    if (info.dialectId === 0) {
      const b = ggmlType(wasm, id, 1);
      if (b.kind !== 0 && b.kind !== 1) fields.bitnetName = b.name;
    }
  }
}

// model: model-files.mjs's description (shardName(file) names a file in messages); feeds: the
// host's FileFeeds by file index.
export function loaderError(wasm, L, model, feeds, kvs = new Map()) {
  const e = L.error();
  const file = e.file === null ? null : L.file(e.file);
  const fields = {
    code: e.code, offset: e.offset, tensor: e.tensor,
    shard: file ? model.shardName(file) : null,
    found: e.found ?? undefined, expected: e.expected ?? undefined,
    detail: e.detail ?? undefined,
    convention: e.conventionId,  // the library words the fix for it (errors.mjs, ws_status_hint)
  };
  // What was read of the file (its first bytes, its size) and the arena, for every file; its
  // reader's facts where it has a reader.
  const feed = e.file === null ? null : feeds.get(e.file);
  const size = feed?.src.size ?? null;
  Object.assign(fields, {
    prefix: feed?.prefix ?? new Uint8Array(0), inputSize: size ?? feed?.fed ?? null, inputSizeExact: size !== null,
    arenaSize: L.arenaSize, arenaNeeded: e.arenaNeeded,
  });
  if (file?.hasReader) readerFields(wasm, L, e.file, e, fields);
  if (e.code === 'GgufDuplicateKey') {
    const k = kvs.get(e.file)?.keyAt(e.offset);
    if (k) { fields.ggufKey = k.key; fields.ggufKeyOther = k.other; }
  }
  if (e.code.startsWith('Shard') || e.code.startsWith('Index')) fields.indexShard = indexShardOf(L, fields.tensor);
  if (file?.kind === 'config' && model.configFromOption) {
    fields.shard = null;
    fields.detail = 'in the quantization option';
  }
  if (e.code === 'ManifestBlobSize') {
    fields.detail = `the blob has ${e.found} bytes, the manifest says ${e.expected}`;
  } else if (e.code === 'ManifestTensorInOtherLayer' && e.found !== null) {
    const other = manifestLayer(L, Number(e.found));
    const mine = file?.layer !== null && file?.layer !== undefined ? manifestLayer(L, file.layer) : null;
    if (other) fields.detail = `layer ${JSON.stringify(other.name)} (${other.file}) covers it, not layer ${JSON.stringify(mine?.name ?? '')}`;
  } else if (e.code === 'ManifestLayerNotInBlob') {
    fields.detail = `no tensor of the blob is named ${JSON.stringify(e.tensor)} or starts with ${JSON.stringify(e.tensor + '.')}`;
  } else if (e.code === 'DigestMismatch' && e.file !== null) {
    const d = L.fileDigest(e.file);
    fields.digestExpected = d.expected;
    fields.digestActual = d.actual;
  } else if (e.code === 'GgufSplitKeyType' && e.found !== null && e.expected !== null) {
    fields.ggufTypeFound = wasm.cstr(wasm.x.ws_gguf_type_name(Number(e.found)));
    fields.ggufTypeExpected = wasm.cstr(wasm.x.ws_gguf_type_name(Number(e.expected)));
  } else if (e.code === 'ManifestBlobMissing') {
    fields.detail = `the blob of layer ${JSON.stringify(e.tensor)} is not there`;
  }
  return makeError(fields, wasm.statusDescription(e.status));
}
