// Sharded models from local files: `{ index, shards }` with Files, `{name, source}` pairs, bytes,
// streams or (file) => source — the same model as the index's path, checked the same way.
// Fixture: tests/data/conventions/sharded-mlx (3 shards; q_proj's packed weight in shard 1, its
// scales and biases in shard 2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ws, repo, streamOf } from './helpers.mjs';
import { FakeDevice } from './fake-gpu.mjs';

const cli = process.env.WS_CLI ?? join(repo, 'build', 'release', 'tools', 'weightstream');
const noCli = existsSync(cli) ? false : `the CLI is not built (${cli})`;
const dir = join(repo, 'tests', 'data', 'conventions', 'sharded-mlx');
const indexPath = join(dir, 'model.safetensors.index.json');
const SHARDS = ['model-00001-of-00003.safetensors', 'model-00002-of-00003.safetensors', 'model-00003-of-00003.safetensors'];
const bytesOf = (n) => new Uint8Array(readFileSync(join(dir, n)));
const quantization = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
const weightMap = JSON.parse(readFileSync(indexPath, 'utf8')).weight_map;
const tmp = mkdtempSync(join(tmpdir(), 'ws-sharded-files-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

const files = () => ({ index: new File([bytesOf('model.safetensors.index.json')], 'model.safetensors.index.json'), shards: SHARDS.map((n) => new File([bytesOf(n)], n)) });
// The same model in each shape `{ index, shards }` takes.
const shapes = () => [
  ['Files', files()],
  // As a page gets them: everything picked, the index and config.json among the shards.
  ['every picked File', (() => { const f = files(); return { index: f.index, shards: [new File([readFileSync(join(dir, 'config.json'))], 'config.json'), f.index, ...f.shards.reverse()] }; })()],
  ['{name, source} with bytes', { index: bytesOf('model.safetensors.index.json'), shards: SHARDS.map((n) => ({ name: n, source: bytesOf(n) })) }],
  ['{name, source} with streams', { index: streamOf(bytesOf('model.safetensors.index.json'), 100), shards: SHARDS.map((n) => ({ name: n, source: streamOf(bytesOf(n), 37) })) }],
  ['paths', { index: indexPath, shards: SHARDS.map((n) => join(dir, n)) }],
  ['a function', { index: new Blob([bytesOf('model.safetensors.index.json')]), shards: (file) => new Blob([bytesOf(file)]) }],
  ['a directory', { index: indexPath, shards: dir }],
];

// createReader's output: Map(name -> {t, bytes}). Shards stream two at once, so their tensors'
// events interleave: each event is placed by its tensor's name.
async function decodeAll(source, options) {
  const out = new Map();
  for await (const ev of ws.createReader(options).read(source)) {
    if (ev.type === 'tensorBegin') out.set(ev.tensor.name, { t: ev.tensor, shard: ev.shard, bytes: new Uint8Array(ev.tensor.byteLength) });
    else if (ev.type === 'tensorData') out.get(ev.tensor.name).bytes.set(ev.data, ev.offset);
  }
  return out;
}

// inspect() without the shards' source names (a path's full path, a File's name), and without
// their sizes for streams (a stream's size is not known from its header).
const unnamed = (info, sized = true) => ({ ...info, shards: info.shards.map(({ name, size, ...sh }) => (sized ? { ...sh, size } : sh)) });

function cliValues(name, to) {
  const out = join(tmp, 'out.bin');
  execFileSync(cli, ['dequant', indexPath, '--tensor', name, '--to', to, '-o', out, '--no-progress'], { stdio: 'pipe' });
  return new Uint8Array(readFileSync(out));
}

test('{ index, shards }: createReader output bit-identical to the index path and to the CLI, for every way of giving the shards', { skip: noCli }, async () => {
  const wasm = await ws.init();
  const base = { ...wasm.live };
  const logicalNames = Object.keys(weightMap).filter((n) => !/\.(scales|biases)$/.test(n)).sort();
  assert.notEqual(weightMap['model.layers.0.self_attn.q_proj.weight'], weightMap['model.layers.0.self_attn.q_proj.scales'], 'the fixture splits a layer');
  for (const to of ['f32', 'f16']) {
    const byPath = await decodeAll(indexPath, { dtype: to, quantization });
    assert.deepEqual([...byPath.keys()].sort(), logicalNames);
    const cliOut = new Map(logicalNames.map((n) => [n, cliValues(n, to)]));
    for (const [what, source] of shapes()) {
      const got = await decodeAll(source, { dtype: to, quantization });
      assert.deepEqual([...got.keys()].sort(), logicalNames, `${what} ${to}`);
      for (const [name, { bytes, shard }] of got) {
        assert.deepEqual(bytes, byPath.get(name).bytes, `${what} ${to} ${name}: as the path`);
        assert.deepEqual(bytes, cliOut.get(name), `${what} ${to} ${name}: as the CLI`);
        assert.equal(shard, byPath.get(name).shard, `${what} ${name}: its shard`);
      }
    }
  }
  // raw: every stored tensor, tagged with its shard as the index places it.
  const raw = await decodeAll(files(), {});
  assert.deepEqual([...raw.keys()].sort(), Object.keys(weightMap).sort());
  const rawPath = await decodeAll(indexPath, {});
  for (const [name, { shard, bytes }] of raw) {
    assert.equal(shard, weightMap[name], name);
    assert.deepEqual(bytes, rawPath.get(name).bytes, name);
  }
  assert.deepEqual(wasm.live, base, 'no handle left');
});

test('{ index, shards }: inspect and validate equal the index path; logical weights and plan peaks equal the CLI inspect --json', { skip: noCli }, async () => {
  const wasm = await ws.init();
  const base = { ...wasm.live };
  const byPath = await ws.inspect(indexPath, { quantization });
  const c = JSON.parse(spawnSync(cli, ['inspect', indexPath, '--json'], { encoding: 'utf8' }).stdout).logical;
  for (const [what, source] of shapes()) {
    const info = await ws.inspect(source, { quantization });
    const sized = !what.includes('streams');
    // The lazy tables as their plain objects (each view has its own bytes and closures).
    const plain = (x) => JSON.parse(JSON.stringify(x));
    assert.deepEqual(plain(unnamed(info, sized)), plain(unnamed(byPath, sized)), what);
    assert.equal(info.sharded, true);
    assert.deepEqual(info.shards.map((s) => s.file), SHARDS);
    assert.deepEqual(info.logical.weights.map((w) => [w.name, w.mode, w.bits, w.group, w.shape, w.bytes]),
      c.weights.map((w) => [w.name, w.mode, w.bits, w.group, w.shape, w.bytes]), what);
    assert.deepEqual(info.logical.plan, { chunk: c.plan.chunk, sequentialPeak: c.plan.sequential_peak, seekablePeak: c.plan.seekable_peak });
  }
  // validate() is the model's verdict (#16): an MLX model needs its quantization — the option, or
  // a config.json among the files given — as the CLI reads config.json beside the index.
  for (const [what, source] of shapes()) {
    assert.deepEqual(await ws.validate(source, { quantization }), { valid: true, format: 'safetensors', tensors: Object.keys(weightMap).length, error: null, warnings: [] }, what);
  }
  const [[, noConfig], [, withConfig]] = shapes();
  assert.equal((await ws.validate(noConfig)).error.code, 'ConventionUnknownParams');
  assert.equal((await ws.validate(withConfig)).valid, true);
  assert.deepEqual(wasm.live, base, 'no handle left');
});

test('{ index, shards }: loadToWebGPU uploads what createReader gives', async () => {
  const want = await decodeAll(indexPath, { dtype: 'f16', quantization });
  const device = new FakeDevice();
  const model = await ws.loadToWebGPU(device, files(), { dtype: 'f16', quantization });
  assert.deepEqual(Object.keys(model.tensors).sort(), [...want.keys()].sort());
  for (const [name, t] of Object.entries(model.tensors)) assert.deepEqual(t.buffer.data.subarray(0, t.byteLength), want.get(name).bytes, name);
  model.destroy();
  assert.ok(device.buffers.every((b) => b.destroyed));
});

test('{ index, shards }: a shard the index names but not given is ShardNotGiven, naming it, before any shard is read', async () => {
  const wasm = await ws.init();
  const base = { ...wasm.live };
  let reads = 0;
  const counted = (n) => ({ name: n, source: { [Symbol.asyncIterator]: async function* () { reads++; yield bytesOf(n); } } });
  const src = () => ({ index: bytesOf('model.safetensors.index.json'), shards: [counted(SHARDS[0]), counted(SHARDS[2]), { name: 'config.json', source: new Uint8Array(2) }] });
  const v = await ws.validate(src());
  assert.equal(v.valid, false);
  assert.deepEqual([v.error.code, v.error.shard, v.error.offset, v.error.tensor], ['ShardNotGiven', SHARDS[1], null, null]);
  assert.equal(v.error.message, `ShardNotGiven of ${SHARDS[1]}: a shard the index names is not among the files given (the index names 3 shards; not given: ${SHARDS[1]}). Pass every shard the index names: add ${SHARDS[1]} to shards (pick or drop them with the index).`);
  for (const run of [() => ws.inspect(src(), { quantization }), () => decodeAll(src(), { dtype: 'f32', quantization }), () => ws.loadToWebGPU(new FakeDevice(), src(), { quantization })]) {
    await assert.rejects(run(), (e) => e.code === 'ShardNotGiven' && e.shard === SHARDS[1]);
  }
  assert.equal(reads, 0, 'no shard read');
  // A function that returns nothing for a file: the same error; two missing: both named.
  await assert.rejects(decodeAll({ index: indexPath, shards: (f) => (f === SHARDS[0] ? join(dir, f) : undefined) }, {}),
    (e) => e.code === 'ShardNotGiven' && e.shard === SHARDS[1] && e.message.includes(`not given: ${SHARDS[1]}, ${SHARDS[2]}`));
  assert.deepEqual(wasm.live, base, 'no handle left');
});

test('{ index, shards }: a shard given under another shard\'s name fails as the same files on disk do (code, shard, tensor)', async () => {
  const wasm = await ws.init();
  const base = { ...wasm.live };
  // On disk: shard 1's bytes saved as shard 2 and the other way round.
  const swapped = mkdtempSync(join(tmp, 'swap-'));
  copyFileSync(indexPath, join(swapped, 'model.safetensors.index.json'));
  copyFileSync(join(dir, SHARDS[0]), join(swapped, SHARDS[1]));
  copyFileSync(join(dir, SHARDS[1]), join(swapped, SHARDS[0]));
  copyFileSync(join(dir, SHARDS[2]), join(swapped, SHARDS[2]));
  const asFiles = { index: bytesOf('model.safetensors.index.json'), shards: [new File([bytesOf(SHARDS[0])], SHARDS[1]), new File([bytesOf(SHARDS[1])], SHARDS[0]), new File([bytesOf(SHARDS[2])], SHARDS[2])] };
  const want = await ws.validate(join(swapped, 'model.safetensors.index.json'));
  assert.equal(want.valid, false);
  assert.equal(want.error.code, 'ShardTensorWrongShard');
  assert.deepEqual(await ws.validate(asFiles), want);
  const err = async (p) => { try { await p; } catch (e) { return [e.code, e.shard, e.tensor, e.message]; } return null; };
  const viaPath = await err(decodeAll(join(swapped, 'model.safetensors.index.json'), { dtype: 'f32', quantization }));
  assert.notEqual(viaPath, null);
  assert.deepEqual(await err(decodeAll(asFiles, { dtype: 'f32', quantization })), viaPath);
  // A crafted index naming a shard outside its directory is refused for files too.
  const crafted = new TextEncoder().encode(JSON.stringify({ weight_map: { a: '../a.safetensors' } }));
  const u = await ws.validate({ index: crafted, shards: [] });
  assert.equal(u.error.code, 'UnsafeShardPath');
  // Not a list, directory or function.
  await assert.rejects(ws.validate({ index: indexPath, shards: 5 }), TypeError);
  assert.deepEqual(wasm.live, base, 'no handle left');
});
