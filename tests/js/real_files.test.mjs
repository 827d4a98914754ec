// The real and synthetic files of shared/testdata against their .expect.json (written by the
// reference crate, gguf-py and ggml, never by this library): inspect() reports the same header
// facts, and the tensor bytes the reader streams have the recorded SHA-256.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ws, testdata, streamOf } from './helpers.mjs';

// JSON with integers beyond 2^53 kept exact (as strings), since 64-bit KVs exceed doubles.
function readExact(path) {
  const text = readFileSync(path, 'utf8').replace(/([:[,]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '$1"$2"');
  return JSON.parse(text);
}
const same = (got, want) => (typeof got === 'bigint' ? assert.equal(got.toString(), String(want)) : assert.deepEqual(got, want));

// SHA-256 of every tensor's bytes as createReader hands them out (stored bytes, dtype 'raw').
async function tensorHashes(source) {
  const hashes = new Map();
  let h = null;
  for await (const ev of ws.createReader().read(source)) {
    if (ev.type === 'tensorBegin') h = createHash('sha256');
    else if (ev.type === 'tensorData') h.update(ev.data);
    else if (ev.type === 'tensorEnd') hashes.set(ev.tensor.name, h.digest('hex'));
  }
  return hashes;
}

const files = (dir, ext) => readdirSync(join(testdata, dir)).filter((f) => f.endsWith(ext)).map((f) => join(testdata, dir, f));

test('real safetensors files: header facts and tensor SHA-256 as the reference crate sees them', async () => {
  const list = files('real/safetensors', '.safetensors');
  assert.ok(list.length >= 9);
  for (const path of list) {
    const want = readExact(path + '.expect.json');
    const bytes = new Uint8Array(readFileSync(path));
    const h = await ws.inspect(path);
    assert.equal(h.format, 'safetensors', path);
    assert.equal(h.headerSize, want.header_len, path);
    assert.equal(h.dataStart, want.data_start, path);
    assert.deepEqual(h.metadata === null ? null : { ...h.metadata }, want.metadata, path);
    assert.equal(h.tensors.length, want.n_tensors, path);
    // Each by name: the table's own lookup (no map of names made here).
    for (const t of want.tensors) {
      const got = h.tensors.get(t.name);
      assert.ok(got, `${path}: ${JSON.stringify(t.name)}`);
      assert.equal(got.dtype, t.dtype);
      assert.deepEqual(got.shape, t.shape);
      assert.deepEqual(got.dataOffsets, t.data_offsets);
    }
    // File order = data-offset order.
    for (let i = 1; i < h.tensors.length; i++) assert.ok(h.tensors.at(i).dataOffsets[0] >= h.tensors.at(i - 1).dataOffsets[0]);
    // The same through a stream in 999-byte pieces, and the bytes of every tensor.
    const hashes = await tensorHashes(streamOf(bytes, 999));
    for (const t of want.tensors) assert.equal(hashes.get(t.name), t.data_sha256, `${path}: ${t.name}`);
    assert.deepEqual(await ws.validate(bytes), { valid: true, format: 'safetensors', tensors: want.n_tensors, error: null, warnings: [] });
  }
});

test('real and synthetic GGUF files: version, KVs (values, arrays summarized), tensors, SHA-256 as gguf-py and ggml see them', async () => {
  const list = [...files('real/gguf', '.gguf'), ...files('synthetic/gguf', '.gguf')];
  assert.ok(list.length >= 7);
  for (const path of list) {
    const want = readExact(path + '.expect.json');
    const h = await ws.inspect(new Blob([readFileSync(path)]));
    assert.equal(h.format, 'gguf');
    assert.equal(h.gguf.version, want.version);
    assert.equal(h.gguf.alignment, want.alignment);
    assert.equal(h.gguf.kvCount, want.kv_count);
    assert.equal(h.gguf.dialect, 'upstream');
    assert.equal(h.tensors.length, want.tensor_count);
    // ggml's data offset (gguf-py pads it past the end of zero-tensor files; ggml does not).
    assert.equal(h.dataStart, want.ggml_gguf_cpp_cross_check?.data_offset ?? want.tensor_data_offset, path);
    assert.equal(h.gguf.kv.length, want.kv.length);
    want.kv.forEach((kv, i) => {
      const got = h.gguf.kv[i];
      const what = `${path}: ${kv.key}`;
      assert.equal(got.key, kv.key, what);
      assert.equal(got.offset, kv.offset, what);
      assert.equal(got.type, kv.type_name, what);
      if (kv.type_name !== 'ARRAY') {
        same(got.value, kv.value);
        same(h.metadata[kv.key], kv.value);
        return;
      }
      assert.equal(got.elementType, kv.array_type_name, what);
      assert.equal(got.count, kv.array_len, what);
      if (kv.array_string_total_bytes !== undefined) assert.equal(got.stringBytes, kv.array_string_total_bytes, what);
      if (kv.array_len <= 16) {
        (kv.array_values ?? kv.array_head).forEach((v, k) => same(got.values[k], v));
        assert.equal(got.values.length, kv.array_len);
      } else {
        assert.equal(got.head.length, 5, what);
        kv.array_head.forEach((v, k) => same(got.head[k], v));
        same(got.last, kv.array_last);
        assert.equal(h.metadata[kv.key].count, kv.array_len);
      }
    });
    const hashes = await tensorHashes(path);
    want.tensors.forEach((t, i) => {
      const got = h.tensors.at(i);
      assert.equal(got.name, t.name);
      assert.equal(got.dtype, t.type_name);
      assert.deepEqual(got.shape, t.ne);
      assert.equal(got.byteLength, t.n_bytes);
      assert.equal(got.dataOffsets[0], t.offset);
      assert.equal(got.offset, t.data_offset_absolute);
      assert.equal(hashes.get(t.name), t.data_sha256, `${path}: ${t.name}`);
    });
  }
});

// arrayLimit decides which arrays the loader previews (ModelLoaderOptions::gguf_array_*): with
// Infinity every array comes whole (a vocabulary's 32k strings; the bytes counted gguf-py's total), with
// 3 every longer array is summarized; the default (16) is the test above.
test('arrayLimit: Infinity lists a whole vocabulary, a small limit summarizes every longer array', async () => {
  const path = join(testdata, 'real', 'gguf', 'ggml-vocab-llama-spm.gguf');
  const want = readExact(path + '.expect.json');
  const bytes = readFileSync(path);
  const all = await ws.inspect(new Blob([bytes]), { arrayLimit: Infinity });
  const few = await ws.inspect(new Blob([bytes]), { arrayLimit: 3 });
  let strings = 0;
  want.kv.forEach((kv, i) => {
    if (kv.type_name !== 'ARRAY') return;
    const a = all.gguf.kv[i], f = few.gguf.kv[i];
    assert.equal(a.values.length, kv.array_len, kv.key);
    assert.equal(a.head, undefined, kv.key);
    kv.array_head.forEach((v, k) => same(a.values[k], v));
    same(a.values[kv.array_len - 1], kv.array_last);
    if (kv.array_len > 3) {
      assert.equal(f.values, undefined, kv.key);
      assert.equal(f.head.length, Math.min(5, kv.array_len), kv.key);
      kv.array_head.slice(0, 5).forEach((v, k) => same(f.head[k], v));
      same(f.last, kv.array_last);
    }
    if (kv.array_string_total_bytes === undefined) return;
    strings++;
    assert.equal(a.stringBytes, kv.array_string_total_bytes, kv.key);
    assert.equal(f.stringBytes, kv.array_string_total_bytes, kv.key);
  });
  assert.ok(strings >= 1);
});
