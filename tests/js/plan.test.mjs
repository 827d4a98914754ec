// plan() (issue #19, preflight): from the headers alone, the bytes a model downloads, each output's
// bytes and GPU buffers for the chosen dtype, the tensors over maxBufferSize (needing split) and
// over maxStorageBufferBindingSize, and whether the total fits a budget. Checked against the CLI's
// `inspect --json` (stored bytes of every tensor, logical shapes), the files' sizes on disk, and
// what loadToWebGPU then really creates (fake device: every buffer's size) and reads — for every
// kind of model the package loads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ws, repo, safetensors } from './helpers.mjs';
import { FakeDevice } from './fake-gpu.mjs';
import { serve } from './http-server.mjs';

const cli = process.env.WS_CLI ?? join(repo, 'build', 'release', 'tools', 'weightstream');
const noCli = existsSync(cli) ? false : `the CLI is not built (${cli})`;
const cliJson = (file) => JSON.parse(execFileSync(cli, ['inspect', '--json', file], { encoding: 'utf8', maxBuffer: 64 << 20 }));
const conv = join(repo, 'tests', 'data', 'conventions');
const split = join(repo, 'tests', 'data', 'split-gguf');
const product = (shape) => shape.reduce((a, b) => a * b, 1);
// Types nothing decodes: with f32/f16 they go out as stored (none of these fixtures has one, which
// the test checks by the CLI's dtypes).
const UNDECODED = /^(I8|I16|I32|I64|U8|U16|U64|BOOL|F64)$/;

// Each model: the source, the options it needs, the files on disk (entry document first), the data
// files the CLI inspects one by one (stored bytes per tensor), and what the CLI says its logical
// weights are (the model's entry).
const MODELS = [
  { name: 'safetensors file', source: join(repo, 'samples', 'tiny-llama.safetensors'), files: ['samples/tiny-llama.safetensors'], data: ['samples/tiny-llama.safetensors'], cliEntry: 'samples/tiny-llama.safetensors' },
  { name: 'GGUF file', source: join(split, 'tiny.gguf'), files: ['tests/data/split-gguf/tiny.gguf'], data: ['tests/data/split-gguf/tiny.gguf'], cliEntry: 'tests/data/split-gguf/tiny.gguf' },
  {
    name: 'sharded (index + 3 shards)', source: join(repo, 'samples', 'sharded', 'model.safetensors.index.json'),
    files: ['samples/sharded/model.safetensors.index.json', ...[1, 2, 3].map((i) => `samples/sharded/model-0000${i}-of-00003.safetensors`)],
    data: [1, 2, 3].map((i) => `samples/sharded/model-0000${i}-of-00003.safetensors`), cliEntry: 'samples/sharded',
  },
  {
    name: 'split GGUF (3 splits, named by the second)', source: join(split, 'tiny-00002-of-00003.gguf'),
    files: [1, 2, 3].map((i) => `tests/data/split-gguf/tiny-0000${i}-of-00003.gguf`), data: [1, 2, 3].map((i) => `tests/data/split-gguf/tiny-0000${i}-of-00003.gguf`),
    cliEntry: 'tests/data/split-gguf/tiny-00001-of-00003.gguf', cliData: ['tests/data/split-gguf/tiny-00001-of-00003.gguf'],  // the CLI lists every split's tensors
  },
  {
    name: 'MLX + config.json', source: join(conv, 'mlx', 'model.safetensors'), options: { quantization: JSON.parse(readFileSync(join(conv, 'mlx', 'config.json'), 'utf8')) },
    files: ['tests/data/conventions/mlx/model.safetensors'], data: ['tests/data/conventions/mlx/model.safetensors'], cliEntry: 'tests/data/conventions/mlx',
  },
  {
    name: 'Ollama manifest', source: { ollama: join(conv, 'ollama', 'manifest.json'), blobs: join(conv, 'ollama', 'blobs') },
    files: ['tests/data/conventions/ollama/manifest.json', 'tests/data/conventions/ollama/blobs/sha256-b99a08cf0fefc14b0bf617e61bae6bb42c19f34c2bd1126e50dd9cce7e4d8e42', 'tests/data/conventions/ollama/blobs/sha256-5f84d13ac0497a514889d54b7e52149199e29191f6a1575fa6ba1f2297bfdec7'],
    data: ['tests/data/conventions/ollama/blobs/sha256-b99a08cf0fefc14b0bf617e61bae6bb42c19f34c2bd1126e50dd9cce7e4d8e42', 'tests/data/conventions/ollama/blobs/sha256-5f84d13ac0497a514889d54b7e52149199e29191f6a1575fa6ba1f2297bfdec7'],
    cliEntry: 'tests/data/conventions/ollama/manifest.json',
  },
  {
    name: 'UQFF directory', source: { uqff: ['model-1.uqff', 'residual.safetensors', 'model-0.uqff'].map((f) => join(conv, 'uqff', f)) },
    files: ['model-0.uqff', 'model-1.uqff', 'residual.safetensors'].map((f) => `tests/data/conventions/uqff/${f}`), data: ['model-0.uqff', 'model-1.uqff', 'residual.safetensors'].map((f) => `tests/data/conventions/uqff/${f}`),
    cliEntry: 'tests/data/conventions/uqff',
  },
];

const sorted = (pairs) => pairs.map(([n, b]) => `${n} ${b}`).sort();

// The CLI's sizes: raw, every tensor of every data file as stored; f32/f16, the model's logical
// weights (its tensors for a plain model) by their logical shape.
function cliSizes(m, dtype) {
  if (dtype === 'raw') return sorted((m.cliData ?? m.data).flatMap((f) => cliJson(join(repo, f)).tensors.map((t) => [t.name, t.bytes])));
  const j = cliJson(join(repo, m.cliEntry));
  const weights = j.logical?.weights ?? (m.cliData ?? m.data).flatMap((f) => cliJson(join(repo, f)).tensors);
  return sorted(weights.map((w) => {
    assert.ok(!UNDECODED.test(w.format ?? w.dtype), `${w.name}: a type nothing decodes`);
    return [w.name, product(w.shape) * (dtype === 'f32' ? 4 : 2)];
  }));
}

for (const m of MODELS) {
  test(`plan: ${m.name} — sizes = the CLI's inspect --json, files = their sizes on disk; buffers and bytes read = what loadToWebGPU then does`, { skip: noCli }, async () => {
    const diskSize = m.files.reduce((a, f) => a + statSync(join(repo, f)).size, 0);
    for (const dtype of ['raw', 'f32', 'f16']) {
      const p = await ws.plan(m.source, { ...m.options, dtype });
      assert.equal(p.dtype, dtype);
      assert.deepEqual(sorted(p.tensors.map((t) => [t.name, t.byteLength])), cliSizes(m, dtype), `${m.name} ${dtype}`);
      assert.equal(p.outputBytes, p.tensors.reduce((a, t) => a + t.byteLength, 0));
      // Every file (in the loader's order: the entry first), by name and size.
      const base = (f) => f.split('/').pop();
      assert.deepEqual(p.files.map((f) => `${base(f.name)} ${f.size}`).sort(), m.files.map((f) => `${base(f)} ${statSync(join(repo, f)).size}`).sort(), `${m.name}: files`);
      assert.equal(p.downloadBytes, diskSize);
      assert.equal(p.limits.maxBufferSize, 268435456);
      assert.equal(p.limits.maxStorageBufferBindingSize, 134217728);
      assert.deepEqual([p.needsSplit, p.overBindingSize, p.fitsLimits, p.fitsBudget, p.fits], [[], [], true, null, true]);
      // What loadToWebGPU creates and reads.
      for (const maxBufferSize of [268435456, 1024]) {
        const device = new FakeDevice({ maxBufferSize });
        const q = maxBufferSize === 268435456 ? p : await ws.plan(m.source, { ...m.options, dtype, device, split: true });
        const r = await ws.loadToWebGPU(device, m.source, { ...m.options, dtype, split: true });
        assert.deepEqual(device.violations, []);
        assert.equal(q.gpuBytes, device.buffers.reduce((a, b) => a + b.size, 0), `${m.name} ${dtype} max ${maxBufferSize}: GPU bytes`);
        const buffers = Object.fromEntries(Object.entries(r.tensors).map(([n, t]) => [n, t.buffers?.length ?? 1]));
        for (const t of q.tensors) if (buffers[t.name] !== undefined) assert.equal(t.buffers, buffers[t.name], `${m.name} ${t.name}`);
        assert.equal(q.readBytes, r.bytes, `${m.name} ${dtype}: bytes read`);
        for (const t of q.tensors) assert.equal(t.needsSplit, Math.ceil(Math.max(t.byteLength, 4) / 4) * 4 > maxBufferSize);
        r.destroy();
      }
    }
  });
}

test('plan: limits from device.limits or a limits object: tensors over maxBufferSize need split, over maxStorageBufferBindingSize are named; split lays them out as loadToWebGPU does', { skip: noCli }, async () => {
  const file = join(repo, 'samples', 'tiny-llama.safetensors');
  const tensors = cliJson(file).tensors;
  const limits = { maxBufferSize: 200000, maxStorageBufferBindingSize: 100000 };
  const over = (n) => tensors.filter((t) => Math.ceil(t.bytes / 4) * 4 > n).map((t) => t.name).sort();
  assert.deepEqual(over(200000), ['lm_head.weight', 'model.embed_tokens.weight']);  // 393216 bytes each
  assert.equal(over(100000).length, 8);  // and the six 196608-byte MLP weights
  for (const opts of [{ limits }, { device: new FakeDevice({ maxBufferSize: 200000 }), limits: { maxStorageBufferBindingSize: 1 } }]) {
    if (opts.device) opts.device.limits.maxStorageBufferBindingSize = 100000;
    const p = await ws.plan(file, opts);
    assert.deepEqual([...p.needsSplit].sort(), over(200000));
    assert.deepEqual([...p.overBindingSize].sort(), over(100000));
    assert.deepEqual([p.fitsLimits, p.fits, p.split], [false, false, false]);
    const lm = p.tensors.find((t) => t.name === 'lm_head.weight');
    // Even without split, plan says how split would lay it out: BF16 elements, pieces of 199,998 bytes... of whole 4-byte words.
    assert.deepEqual([lm.needsSplit, lm.overBufferSize, lm.overBindingSize, lm.buffers, lm.pieceBytes, lm.gpuBytes], [true, true, true, 2, 200000, 393216]);
    const norm = p.tensors.find((t) => t.name === 'model.norm.weight');
    assert.deepEqual([norm.needsSplit, norm.overBindingSize, norm.buffers, norm.pieceBytes, norm.gpuBytes], [false, false, 1, null, 768]);
    const withSplit = await ws.plan(file, { ...opts, split: true });
    assert.deepEqual([withSplit.fitsLimits, withSplit.fits], [true, true]);
  }
  // loadToWebGPU without split refuses exactly what plan said needs it (BufferTooLarge), with it loads.
  await assert.rejects(ws.loadToWebGPU(new FakeDevice({ maxBufferSize: 200000 }), file), (e) => e.code === 'BufferTooLarge' && over(200000).includes(e.tensor));
  const device = new FakeDevice({ maxBufferSize: 200000 });
  const r = await ws.loadToWebGPU(device, file, { split: true });
  assert.equal(r.tensors['lm_head.weight'].buffers.length, 2);
  r.destroy();
  // A limits object that also holds the reader's caps: both apply.
  await assert.rejects(ws.plan(file, { limits: { maxBufferSize: 200000, maxTensors: 3 } }), (e) => e.code === 'TooManyTensors');
  await assert.rejects(ws.plan(file, { limits: { maxBufferSize: -1 } }), TypeError);
});

test('plan: tensors is a view over the plan\'s columns (each object made when asked for, anew), the plain array with plainArrays; an FP8 model\'s and a GGUF\'s alike', async () => {
  for (const [source, options] of [[join(repo, 'samples', 'tiny-llama.safetensors'), { dtype: 'f16', limits: { maxBufferSize: 200000 } }],
    [join(repo, 'tests', 'data', 'conventions', 'hub', 'fp8-block', 'model.safetensors'), { dtype: 'f32' }],
    [join(repo, 'tests', 'data', 'conventions', 'mlx', 'model.safetensors'), { dtype: 'raw' }]]) {
    const p = await ws.plan(source, options);
    const old = await ws.plan(source, { ...options, plainArrays: true });
    assert.ok(!Array.isArray(p.tensors) && Array.isArray(old.tensors), source);
    assert.equal(p.tensors.length, old.tensors.length);
    assert.deepEqual(p.tensors.toJSON(), old.tensors);
    assert.deepEqual(Array.from(p.tensors), old.tensors);
    assert.deepEqual({ ...p, tensors: null }, { ...old, tensors: null }, 'the totals are the same');
    for (const [i, t] of old.tensors.entries()) {
      assert.deepEqual(p.tensors.at(i), t);
      assert.deepEqual(p.tensors.get(t.name), t);
      assert.notEqual(p.tensors.at(i), p.tensors.at(i), 'a new object at each request');
    }
    assert.equal(p.tensors.get('no such tensor'), undefined);
    assert.equal(p.tensors.at(p.tensors.length), undefined);
    assert.deepEqual(p.tensors.at(-1), old.tensors.at(-1));
  }
});

test('plan: budget — the total GPU bytes against a number of bytes; filter as loadToWebGPU takes it (fewer outputs, fewer bytes read)', async () => {
  const file = join(repo, 'samples', 'tiny-llama.safetensors');
  const p = await ws.plan(file, { dtype: 'f16' });
  assert.equal(p.gpuBytes, p.tensors.reduce((a, t) => a + Math.ceil(Math.max(t.byteLength, 4) / 4) * 4, 0));
  for (const [budget, fits] of [[p.gpuBytes, true], [p.gpuBytes - 1, false], [0, false], [1n << 40n, true]]) {
    const q = await ws.plan(file, { dtype: 'f16', budget });
    assert.deepEqual([q.budget, q.fitsBudget, q.fits], [Number(budget), fits, fits], `budget ${budget}`);
  }
  await assert.rejects(ws.plan(file, { budget: 'lots' }), TypeError);
  await assert.rejects(ws.plan(file, { dtype: 'q4' }), TypeError);
  for (const filter of [['lm_head.weight', 'model.norm.weight'], /^lm_head/, (name) => name === 'model.norm.weight', new Set(['lm_head.weight'])]) {
    const q = await ws.plan(file, { dtype: 'f32', filter });
    const device = new FakeDevice();
    const r = await ws.loadToWebGPU(device, file, { dtype: 'f32', filter });
    assert.deepEqual(q.tensors.map((t) => t.name).sort(), Object.keys(r.tensors).sort());
    assert.equal(q.gpuBytes, device.buffers.reduce((a, b) => a + b.size, 0));
    assert.equal(q.readBytes, r.bytes);
    assert.ok(q.readBytes < p.readBytes);
    assert.equal(q.downloadBytes, p.downloadBytes, 'the files are the same');
    r.destroy();
  }
});

test('plan over HTTP: Range requests only, the header and nothing of the data; the same plan as from disk', async () => {
  const tiny = new Uint8Array(readFileSync(join(repo, 'samples', 'tiny-llama.safetensors')));
  // And a 32 MiB model, larger than what the loopback socket buffers hold.
  const big = safetensors({ 'a.weight': { dtype: 'F16', shape: [16 << 20], data: new Uint8Array(32 << 20) }, 'b.weight': { dtype: 'F32', shape: [4], data: new Uint8Array(16) } });
  const srv = await serve(new Map([['/m.safetensors', tiny], ['/big.safetensors', big]]));
  try {
    // quantization: false: no config.json is looked for beside the URL (see below).
    const p = await ws.plan(`${srv.base}/m.safetensors`, { dtype: 'f16', limits: { maxBufferSize: 200000 }, quantization: false });
    const local = await ws.plan(join(repo, 'samples', 'tiny-llama.safetensors'), { dtype: 'f16', limits: { maxBufferSize: 200000 } });
    // (tensors: a view over each plan's own columns; their objects compared.)
    const same = (x) => ({ ...x, files: null, tensors: x.tensors.toJSON() });
    assert.deepEqual(same(p), same(local));
    assert.deepEqual(p.files.map((f) => f.size), [tiny.length]);
    assert.equal(srv.stats.requests, srv.stats.rangeRequests, 'every request a Range request');
    assert.equal(srv.stats.requests, 1);
    // Without it, the plan asks for the config.json beside the model too (the CLI reads it beside a
    // path or URL alike): this server has none (404), which is fine.
    const withConfig = await ws.plan(`${srv.base}/m.safetensors`, { dtype: 'f16', limits: { maxBufferSize: 200000 } });
    assert.deepEqual(same(withConfig), same(p));
    assert.deepEqual(srv.stats.log.slice(1).map((l) => l.path), ['/m.safetensors']);
    // The rest were 404s (this server logs only the files it has): config.json, asked for once per
    // attempt of the loader.
    assert.ok(srv.stats.requests - srv.stats.log.length >= 1, `${srv.stats.requests} requests, ${srv.stats.log.length} answered`);
    srv.stats.requests = srv.stats.rangeRequests = srv.stats.log.length;
    const before = srv.stats.bytesSent;
    const q = await ws.plan(`${srv.base}/big.safetensors`, { dtype: 'f32', quantization: false });
    assert.deepEqual(q.tensors.map((t) => [t.name, t.byteLength, t.needsSplit, t.overBindingSize]), [['a.weight', 64 << 20, false, false], ['b.weight', 16, false, false]]);
    assert.equal(q.downloadBytes, big.length);
    assert.equal(srv.stats.requests, srv.stats.rangeRequests);
    // The first request's body is cancelled after the header (64 KiB writes that wait for the socket).
    assert.ok(srv.stats.bytesSent - before < big.length / 2, `${srv.stats.bytesSent - before} of ${big.length} bytes sent`);
  } finally {
    await srv.close();
  }
});
