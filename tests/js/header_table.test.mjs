// The tensor table as the package reads it in bulk (ws_loader_file_tensors: ~1,000 tensors and their
// names per call, copied out by tensor-table.mjs copyTable) and lists it (a lazy view): every
// tensor as the header declares it across many batches, names with multi-byte characters (decoded
// name by name) and without (sliced from one decode), and tensors too large for the table buffer
// (a rank of 20,000, a 70 KB name) read one by one — the same through inspect() and createReader()'s
// header event, through every accessor of the view, after the module has moved on, and through
// the `plainArrays` option. (Every fixture's tables against the plain objects of before the view:
// goldens.test.mjs.)
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

// Every way the lazy table answers, against the plain objects inspect() listed before 0.4.
function assertTable(list, want) {
  assert.equal(list.length, want.length);
  assert.deepEqual(Array.from(list), want);
  assert.deepEqual(list.toJSON(), want);
  assert.deepEqual(JSON.parse(JSON.stringify(list)), JSON.parse(JSON.stringify(want)));
  assert.deepEqual([...list], want);
  for (let i = 0; i < want.length; i++) assert.deepEqual(list.at(i), want[i], `at(${i})`);
  assert.deepEqual(list.at(-1), want.at(-1));
  assert.equal(list.at(want.length), undefined);
  // By name: every one (a scan for the first lookups, then the name hash), and names it lacks.
  for (let i = 0; i < want.length; i++) {
    assert.equal(list.indexOf(want[i].name), i, want[i].name);
    assert.deepEqual(list.get(want[i].name), want[i]);
  }
  for (const absent of ['', 'absent', `${want[0].name}x`, want[0].name.slice(0, -1), 42]) {
    assert.equal(list.get(absent), undefined);
    assert.equal(list.indexOf(absent), -1);
    assert.equal(list.has(absent), false);
  }
  assert.deepEqual(list.filter((t) => t.dtype === 'BF16'), want.filter((t) => t.dtype === 'BF16'));
  assert.deepEqual(list.map((t, i) => `${i}:${t.name}`), want.map((t, i) => `${i}:${t.name}`));
  assert.deepEqual(list.slice(5, 9), want.slice(5, 9));
  assert.deepEqual(list.slice(-3), want.slice(-3));
  assert.equal(list.find((t) => t.name === want.at(-1).name).offset, want.at(-1).offset);
  assert.equal(list.reduce((a, t) => a + t.byteLength, 0), want.reduce((a, t) => a + t.byteLength, 0));
  assert.equal(list.some((t) => t.name === 'absent'), false);
  assert.equal(list.every((t) => t.offset >= want[0].offset), true);
  // Columns, without objects.
  for (const f of ['name', 'dtype']) assert.deepEqual(list.column(f), want.map((t) => t[f]), f);
  for (const f of ['byteLength', 'offset']) assert.deepEqual(Array.from(list.column(f)), want.map((t) => t[f]), f);
  assert.deepEqual(Array.from(list.column('rank')), want.map((t) => t.shape.length));
  assert.deepEqual(Array.from(list.column('elements')), want.map((t) => t.shape.reduce((a, b) => a * b, 1)));
  assert.throws(() => list.column('shape'), TypeError);
  // A fresh object at each request: changing one changes nothing in the table.
  const t = list.at(0);
  t.shape.push(99);
  t.name = 'changed';
  assert.deepEqual(list.at(0), want[0]);
}

test('inspect() lists every tensor of a 3,000-tensor header read in batches, multi-byte names included', async () => {
  const tensors = model(3000);
  const bytes = safetensors(tensors);
  const info = await ws.inspect(bytes);
  const want = expected(tensors, info.dataStart);
  assert.ok(!Array.isArray(info.tensors));
  assertTable(info.tensors, want);
  const fromStream = await ws.inspect(streamOf(bytes, 4096));
  assert.deepEqual(Array.from(fromStream.tensors), want);
  for await (const ev of ws.createReader({ dtype: 'raw', filter: [] }).read(bytes)) {
    if (ev.type === 'header') assert.deepEqual(Array.from(ev.tensors), want);
  }
  // The old shape, behind the option (until 0.5).
  const old = await ws.inspect(bytes, { plainArrays: true });
  assert.ok(Array.isArray(old.tensors));
  assert.deepEqual(old.tensors, want);
});

test('the table stays valid after inspect() returns: other calls reuse the module\'s buffers, memory grows', async () => {
  const tensors = model(2500);
  const info = await ws.inspect(safetensors(tensors));
  const want = expected(tensors, info.dataStart);
  // Other headers through the same table buffer, and an arena large enough to grow wasm memory
  // (its buffer replaced): the view holds its own copy.
  const other = model(1800, { other: { dtype: 'F32', shape: [1], data: new Uint8Array(4) } });
  await ws.inspect(safetensors(other), { arenaSize: 96 << 20 });
  await ws.validate(safetensors(other));
  assertTable(info.tensors, want);
  // A structured clone (a worker's postMessage) carries the bytes; the list comes back whole.
  const back = info.tensors.constructor.fromParts(structuredClone(info.tensors.toParts()));
  assert.deepEqual(Array.from(back), want);
  assert.deepEqual(back.get(want[1234].name), want[1234]);
});

test('a tensor larger than the table buffer (rank 20,000; a 70 KB name) is read by itself, in place', async () => {
  const huge = { dtype: 'U8', shape: new Array(20000).fill(1), data: new Uint8Array(1) };
  const longName = `x${'n'.repeat(70000)}`;
  const tensors = model(1500, { deep: huge, [longName]: { dtype: 'F32', shape: [2], data: new Uint8Array(8) }, after: { dtype: 'U8', shape: [1], data: new Uint8Array(1) } });
  const info = await ws.inspect(safetensors(tensors), { arenaSize: 4 << 20 });
  assertTable(info.tensors, expected(tensors, info.dataStart));
  assert.equal(info.tensors.at(1500).shape.length, 20000);
  assert.equal(info.tensors.at(1501).name.length, 70001);
  assert.equal(info.tensors.get(longName).name, longName);
});

test('GGUF: a 2,500-tensor table in batches, with the GGML type names', async () => {
  const tensors = [];
  for (let i = 0; i < 2500; i++) tensors.push({ name: `blk.${i}.ffn_up.weight`, type: i % 2 ? 0 : 1, ne: [4, 1 + (i % 3)], data: new Uint8Array(4 * (1 + (i % 3)) * (i % 2 ? 4 : 2)) });
  const info = await ws.inspect(gguf(tensors));
  assert.equal(info.tensors.length, 2500);
  let off = 0;
  for (let i = 0; i < 2500; i++) {
    const t = info.tensors.at(i), n = tensors[i].data.length;
    assert.deepEqual(t, { name: tensors[i].name, dtype: i % 2 ? 'F32' : 'F16', shape: tensors[i].ne, dataOffsets: [off, off + n], byteLength: n, offset: info.dataStart + off });
    off += Math.ceil(n / 32) * 32;
  }
  assert.deepEqual(info.tensors.get('blk.2499.ffn_up.weight'), info.tensors.at(2499));
});

// A sharded model of many files, by { index, shards }: one view over every shard's table (each
// object with its shard), names found across shards; read with the default arena, which each later
// shard's header outgrows (host.mjs grows it by half again: exact sizes took one attempt per
// overflowing shard, and 8 attempts did not reach the end of 60 shards).
test('a 60-shard model with the default arena: one view over the shards, each tensor with its shard', async () => {
  const SHARDS = 60, PER = 1500;
  const names = [], shards = [], map = {};
  for (let s = 0; s < SHARDS; s++) {
    const tensors = {};
    for (let k = 0; k < PER; k++) {
      const name = `model.layers.${s}.mlp.experts.${k}.down_proj.weight`;
      tensors[name] = { dtype: 'U8', shape: [2], data: new Uint8Array(2) };
      names.push(name);
      map[name] = `model-${String(s + 1).padStart(5, '0')}-of-000${SHARDS}.safetensors`;
    }
    shards.push({ name: map[names.at(-1)], source: safetensors(tensors) });
  }
  const index = new TextEncoder().encode(JSON.stringify({ metadata: { total_size: SHARDS * PER * 2 }, weight_map: map }));
  const info = await ws.inspect({ index, shards });
  assert.equal(info.tensors.length, SHARDS * PER);
  assert.deepEqual(info.tensors.column('name'), names);
  assert.deepEqual(info.tensors.column('shard'), names.map((n) => map[n]));
  const last = names.at(-1);
  assert.deepEqual(info.tensors.get(last), { name: last, dtype: 'U8', shape: [2], dataOffsets: [2 * (PER - 1), 2 * PER], byteLength: 2, offset: info.shards.at(-1).dataStart + 2 * (PER - 1), shard: map[last] });
  assert.equal(info.tensors.indexOf(names[PER * 37 + 5]), PER * 37 + 5);
  assert.deepEqual(info.shards.map((s) => s.tensors.length), new Array(SHARDS).fill(PER));
});
