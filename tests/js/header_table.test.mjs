// The tensor table as the package reads it in bulk (ws_loader_file_tensors: ~1,000 tensors and their
// names per call, words.mjs readTable): every tensor as the header declares it across many
// batches, names with multi-byte characters (decoded name by name) and without (sliced from one
// decode), and tensors too large for the table buffer (a rank of 20,000, a 70 KB name) read one by
// one — the same through inspect() and createReader()'s header event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ws, safetensors, gguf, streamOf } from './helpers.mjs';

const DTYPES = [['F32', 4], ['BF16', 2], ['U8', 1], ['I64', 8]];

function model(n, extra = {}) {
  const tensors = {};
  for (let i = 0; i < n; i++) {
    const [dtype, size] = DTYPES[i % DTYPES.length];
    const shape = [[], [3], [2, 3], [1, 2, 1], [2, 1, 1, 2, 1]][i % 5];
    const name = i % 700 === 5 ? `layers.${i}.wëight.∑.😀` : `model.layers.${i}.mlp.experts.${i % 256}.up_proj.weight`;
    tensors[name] = { dtype, shape, data: new Uint8Array(shape.reduce((a, b) => a * b, 1) * size) };
  }
  Object.assign(tensors, extra);
  return tensors;
}

// What inspect() must list for `tensors` built by helpers.safetensors (file order = insertion order).
function expected(tensors, dataStart) {
  let off = 0;
  return Object.entries(tensors).map(([name, t]) => {
    const begin = off;
    off += t.data.length;
    return { name, dtype: t.dtype, shape: t.shape, dataOffsets: [begin, off], byteLength: off - begin, offset: dataStart + begin };
  });
}

test('inspect() lists every tensor of a 3,000-tensor header read in batches, multi-byte names included', async () => {
  const tensors = model(3000);
  const bytes = safetensors(tensors);
  const info = await ws.inspect(bytes);
  assert.equal(info.tensors.length, 3000);
  assert.deepEqual(info.tensors, expected(tensors, info.dataStart));
  const fromStream = await ws.inspect(streamOf(bytes, 4096));
  assert.deepEqual(fromStream.tensors, info.tensors);
  for await (const ev of ws.createReader({ dtype: 'raw', filter: [] }).read(bytes)) {
    if (ev.type === 'header') assert.deepEqual(ev.tensors, info.tensors);
  }
});

test('a tensor larger than the table buffer (rank 20,000; a 70 KB name) is read by itself, in place', async () => {
  const huge = { dtype: 'U8', shape: new Array(20000).fill(1), data: new Uint8Array(1) };
  const longName = `x${'n'.repeat(70000)}`;
  const tensors = model(1500, { deep: huge, [longName]: { dtype: 'F32', shape: [2], data: new Uint8Array(8) }, after: { dtype: 'U8', shape: [1], data: new Uint8Array(1) } });
  const info = await ws.inspect(safetensors(tensors), { arenaSize: 4 << 20 });
  assert.deepEqual(info.tensors, expected(tensors, info.dataStart));
  assert.equal(info.tensors[1500].shape.length, 20000);
  assert.equal(info.tensors[1501].name.length, 70001);
});

test('GGUF: a 2,500-tensor table in batches, with the GGML type names', async () => {
  const tensors = [];
  for (let i = 0; i < 2500; i++) tensors.push({ name: `blk.${i}.ffn_up.weight`, type: i % 2 ? 0 : 1, ne: [4, 1 + (i % 3)], data: new Uint8Array(4 * (1 + (i % 3)) * (i % 2 ? 4 : 2)) });
  const info = await ws.inspect(gguf(tensors));
  assert.equal(info.tensors.length, 2500);
  let off = 0;
  for (let i = 0; i < 2500; i++) {
    const t = info.tensors[i], n = tensors[i].data.length;
    assert.deepEqual(t, { name: tensors[i].name, dtype: i % 2 ? 'F32' : 'F16', shape: tensors[i].ne, dataOffsets: [off, off + n], byteLength: n, offset: info.dataStart + off });
    off += Math.ceil(n / 32) * 32;
  }
});
