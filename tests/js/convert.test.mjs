// convert() (issue #29): a quantized model out as plain safetensors through the caller's sinks.
// Every output file is compared byte for byte with what the CLI's `weightstream convert` writes
// for the same model and options (MLX, a sharded MLX input, FP8 block, GPTQ, GGUF blocks, Ollama,
// UQFF, a sharded output with a small maxShardSize, --keep, --filter); without the CLI built those
// comparisons are skipped. Independently of the CLI: f32 output equals createReader's f32 values,
// the outputs are valid safetensors with the planned layout, and the three sinks (a function
// returning a WritableStream, a directory handle, a Node directory) get the same bytes. Cancelling
// and errors reject with exact codes, abort the open file and free every handle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ws, repo, testdata, decodeAll, streamOf } from './helpers.mjs';
import { FakeDir } from './fake-opfs.mjs';

const cli = process.env.WS_CLI ?? join(repo, 'build', 'release', 'tools', 'weightstream');
const noCli = existsSync(cli) ? false : `the CLI is not built (${cli})`;
const conv = join(repo, 'tests', 'data', 'conventions');
const hub = join(conv, 'hub');
const ggufBlocks = join(testdata, 'synthetic', 'gguf', 'all_quant_types.gguf');
const tmp = mkdtempSync(join(tmpdir(), 'ws-convert-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

// An in-memory sink: name → bytes once the file is closed; `events` records opens, closes, aborts.
function memorySink() {
  const files = new Map(), events = [];
  const sink = (name) => {
    const parts = [];
    events.push(['open', name]);
    return new WritableStream({
      write(chunk) { parts.push(chunk.slice()); },
      close() { files.set(name, Buffer.concat(parts)); events.push(['close', name]); },
      abort() { events.push(['abort', name]); },
    });
  };
  return { sink, files, events };
}

let runs = 0;
// The CLI's output directory for MODEL and its arguments: name → bytes (the hidden .sha256 files
// are its resume records, not outputs).
function cliConvert(model, args) {
  const dir = join(tmp, `cli-${runs++}`);
  execFileSync(cli, ['convert', model, '-o', dir, '--no-progress', ...args], { stdio: 'pipe' });
  return new Map(readdirSync(dir).filter((n) => !n.startsWith('.')).map((n) => [n, readFileSync(join(dir, n))]));
}

function assertSameFiles(js, cliFiles, what) {
  assert.deepEqual([...js.keys()].sort(), [...cliFiles.keys()].sort(), `${what}: the files`);
  for (const [name, bytes] of cliFiles) assert.ok(Buffer.compare(js.get(name), bytes) === 0, `${what}: ${name} differs from the CLI's (${js.get(name).length} vs ${bytes.length} bytes)`);
}

// A safetensors file read here (8-byte length, JSON, data): {meta, tensors: [{name, dtype, shape, bytes}]}.
function readSafetensors(buf) {
  const n = Number(buf.readBigUInt64LE(0));
  assert.equal(n % 8, 0);
  const h = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  const meta = h.__metadata__ ?? null;
  delete h.__metadata__;
  const data = buf.subarray(8 + n);
  let at = 0;
  const tensors = Object.entries(h).map(([name, e]) => {
    assert.equal(e.data_offsets[0], at, `${name}: contiguous`);
    at = e.data_offsets[1];
    return { name, dtype: e.dtype, shape: e.shape, bytes: data.subarray(e.data_offsets[0], e.data_offsets[1]) };
  });
  assert.equal(at, data.length, 'no bytes after the last tensor');
  return { meta, tensors };
}

// Each case: the JS source, the CLI's model path, the options (and the CLI's arguments for them).
const CASES = [
  { name: 'MLX to bf16', source: join(conv, 'mlx', 'model.safetensors'), options: { to: 'bf16' }, args: ['--to', 'bf16'] },
  { name: 'MLX to f16', source: join(conv, 'mlx', 'model.safetensors'), options: { to: 'f16' }, args: ['--to', 'f16'] },
  { name: 'MLX to f32', source: join(conv, 'mlx', 'model.safetensors'), options: { to: 'f32' }, args: ['--to', 'f32'] },
  { name: 'a sharded MLX input', source: join(conv, 'sharded-mlx', 'model.safetensors.index.json'), options: { to: 'bf16' }, args: ['--to', 'bf16'] },
  { name: 'a sharded output (maxShardSize 600)', source: join(conv, 'mlx', 'model.safetensors'), options: { to: 'bf16', maxShardSize: 600 }, args: ['--to', 'bf16', '--max-shard-size', '600'], files: 5 },
  { name: 'FP8 block to bf16', source: join(hub, 'fp8-block', 'model.safetensors'), options: { to: 'bf16' }, args: ['--to', 'bf16'] },
  { name: 'FP8 block (BF16 scales) to f32, BF16 kept', source: join(hub, 'fp8-block-bf16', 'model.safetensors'), options: { to: 'f32', keep: ['bf16'] }, args: ['--to', 'f32', '--keep', 'bf16'] },
  { name: 'a sharded output (maxShardSize \'0.6KB\', Hugging Face\'s spelling)', source: join(conv, 'mlx', 'model.safetensors'), options: { to: 'bf16', maxShardSize: '0.6KB' }, args: ['--to', 'bf16', '--max-shard-size', '0.6KB'], files: 5 },
  { name: 'GPTQ to f16', source: join(hub, 'gptq', 'model.safetensors'), options: { to: 'f16' }, args: ['--to', 'f16'] },
  { name: 'AWQ to bf16', source: join(hub, 'awq', 'model.safetensors'), options: { to: 'bf16' }, args: ['--to', 'bf16'] },
  { name: 'compressed-tensors to f32', source: join(hub, 'ct-w4a16-group', 'model.safetensors'), options: { to: 'f32' }, args: ['--to', 'f32'] },
  // nvfp4-pack-quantized to bf16: compressed-tensors' own decompress output dtype (the global scale divides).
  { name: 'compressed-tensors nvfp4 to bf16', source: join(hub, 'ct-nvfp4', 'model.safetensors'), options: { to: 'bf16' }, args: ['--to', 'bf16'] },
  { name: 'compressed-tensors mxfp4 to bf16', source: join(hub, 'ct-mxfp4', 'model.safetensors'), options: { to: 'bf16' }, args: ['--to', 'bf16'] },
  { name: 'bitsandbytes NF4 (nested) to bf16', source: join(hub, 'bnb-nf4-nested', 'model.safetensors'), options: { to: 'bf16' }, args: ['--to', 'bf16'] },
  { name: 'GGUF blocks to bf16', source: ggufBlocks, options: { to: 'bf16' }, args: ['--to', 'bf16'], needs: ggufBlocks },
  { name: 'GGUF blocks to f32, sharded by 4096 bytes', source: ggufBlocks, options: { to: 'f32', maxShardSize: 4096 }, args: ['--to', 'f32', '--max-shard-size', '4096'], needs: ggufBlocks },
  { name: 'Ollama to bf16', source: { ollama: join(conv, 'ollama', 'manifest.json'), blobs: join(conv, 'ollama', 'blobs') }, cliModel: join(conv, 'ollama', 'manifest.json'), options: { to: 'bf16' }, args: ['--to', 'bf16'] },
  { name: 'a filter function (name, {name, index})', source: join(conv, 'sharded-mlx', 'model.safetensors.index.json'), options: { to: 'bf16', filter: (n, w) => n === w.name && Number.isInteger(w.index) && n.includes('.mlp.') }, args: ['--to', 'bf16', '--filter', '*.mlp.*'] },
  { name: 'a filter (a RegExp; the CLI: a glob)', source: join(conv, 'mlx', 'model.safetensors'), options: { to: 'f16', filter: /^model\.layers\.0\.mlp\./ }, args: ['--to', 'f16', '--filter', 'model.layers.0.mlp.*'] },
];

for (const c of CASES) {
  test(`convert: ${c.name} — the CLI's bytes`, { skip: noCli || (c.needs && !existsSync(c.needs) && `${c.needs} is missing`) }, async () => {
    const { sink, files, events } = memorySink();
    const r = await ws.convert(c.source, { ...c.options, output: sink });
    assertSameFiles(files, cliConvert(c.cliModel ?? c.source, c.args), c.name);
    assert.deepEqual(r.files.map((f) => [f.name, f.size]), r.files.map((f) => [f.name, files.get(f.name).length]));
    assert.equal(r.to, c.options.to);
    if (c.files) assert.equal(files.size, c.files);
    // Each file opened once and closed, one at a time, none aborted.
    assert.deepEqual(events.filter((e) => e[0] === 'abort'), []);
    for (let i = 0; i < events.length; i += 2) assert.deepEqual([events[i][0], events[i + 1][0], events[i][1]], ['open', 'close', events[i + 1][1]]);
  });
}

test('convert: a UQFF directory ({ uqff }) writes the CLI\'s model.safetensors', { skip: noCli }, async () => {
  const dir = join(conv, 'uqff');
  const { sink, files } = memorySink();
  const r = await ws.convert({ uqff: ['model-0.uqff', 'model-1.uqff', 'residual.safetensors'].map((n) => join(dir, n)) }, { to: 'bf16', output: sink });
  assert.equal(r.from, 'uqff');
  const theirs = cliConvert(join(dir, 'model-0.uqff'), ['--to', 'bf16']);
  // A list of files has nothing beside it: no config.json (the CLI reads the directory's).
  assert.ok(Buffer.compare(files.get('model.safetensors'), theirs.get('model.safetensors')) === 0);
  assert.deepEqual([...files.keys()], ['model.safetensors']);
});

test('convert: f32 output holds createReader\'s f32 values, in a valid file with the marked metadata and config.json without quantization', async () => {
  const src = join(conv, 'mlx', 'model.safetensors');
  const { sink, files } = memorySink();
  const r = await ws.convert(src, { to: 'f32', output: sink });
  assert.deepEqual(r, {
    files: [{ name: 'model.safetensors', size: files.get('model.safetensors').length }, { name: 'config.json', size: files.get('config.json').length }],
    weights: 6, totalSize: 1556 * 2, to: 'f32', from: 'mlx', skipped: [],
  });
  const out = readSafetensors(files.get('model.safetensors'));
  const want = await decodeAll(src, { dtype: 'f32' });
  assert.deepEqual(out.tensors.map((t) => t.name), [...want.keys()].sort((a, b) => out.tensors.findIndex((t) => t.name === a) - out.tensors.findIndex((t) => t.name === b)));
  for (const t of out.tensors) {
    const w = want.get(t.name);
    assert.equal(t.dtype, w.t.dtype === 'f32' ? 'F32' : w.t.dtype, t.name);
    assert.deepEqual(t.shape, w.t.shape, t.name);
    assert.ok(Buffer.compare(t.bytes, Buffer.from(w.bytes)) === 0, `${t.name}: the values`);
  }
  assert.equal(out.meta['weightstream.converted_from'], 'mlx');
  assert.equal(out.meta['weightstream.converted_to'], 'f32');
  const config = JSON.parse(files.get('config.json'));
  const original = JSON.parse(readFileSync(join(conv, 'mlx', 'config.json')));
  assert.ok('quantization' in original);
  delete original.quantization;
  delete original.quantization_config;
  assert.deepEqual(config, original);
  assert.equal((await ws.validate(new Blob([files.get('model.safetensors')]))).valid, true);
});

test('convert: the three sinks get the same bytes (a function, a directory handle, a Node directory); a stream source with the quantization option writes no config.json unless `config` gives one', async () => {
  const src = join(conv, 'hub', 'fp8-block', 'model.safetensors');
  const mem = memorySink();
  await ws.convert(src, { to: 'bf16', output: mem.sink, maxShardSize: 1 });
  const dir = new FakeDir();
  await ws.convert(src, { to: 'bf16', output: dir, maxShardSize: 1 });
  const path = join(tmp, 'node-dir');
  await ws.convert(src, { to: 'bf16', output: path, maxShardSize: 1 });
  assert.ok(mem.files.size >= 3, 'several shards, the index and config.json');
  for (const [name, bytes] of mem.files) {
    const f = await (await dir.getFileHandle(name)).getFile();
    assert.ok(Buffer.compare(Buffer.from(await f.arrayBuffer()), bytes) === 0, `${name} through the directory handle`);
    assert.ok(Buffer.compare(readFileSync(join(path, name)), bytes) === 0, `${name} in the Node directory`);
  }
  // No .partial left; beside each shard, its digest (the resume record, hidden as the CLI's).
  assert.deepEqual(readdirSync(path).filter((n) => !n.startsWith('.')).sort(), [...mem.files.keys()].sort(), 'no .partial left');
  // The same model from a stream, its quantization given by the option: the same shards.
  const bytes = readFileSync(src);
  const config = JSON.parse(readFileSync(join(conv, 'hub', 'fp8-block', 'config.json')));
  const s = memorySink();
  await ws.convert(streamOf(new Uint8Array(bytes), 7), { to: 'bf16', output: s.sink, maxShardSize: 1, quantization: config });
  assert.deepEqual([...s.files.keys()].sort(), [...mem.files.keys()].filter((n) => n !== 'config.json').sort());
  for (const [name, b] of s.files) assert.ok(Buffer.compare(b, mem.files.get(name)) === 0, `${name} from a 7-byte stream`);
  // config.json given (a Blob), beside the stream: written, edited, as from the path.
  const g = memorySink();
  await ws.convert(streamOf(new Uint8Array(bytes), 7), { to: 'bf16', output: g.sink, maxShardSize: 1, quantization: config,
    config: new Blob([readFileSync(join(conv, 'hub', 'fp8-block', 'config.json'))]) });
  assert.deepEqual([...g.files.keys()].sort(), [...mem.files.keys()].sort());
  assert.ok(Buffer.compare(g.files.get('config.json'), mem.files.get('config.json')) === 0);
  // config: false — none, beside a path that has one.
  const n = memorySink();
  await ws.convert(src, { to: 'bf16', output: n.sink, config: false });
  assert.deepEqual([...n.files.keys()], ['model.safetensors']);
  // A config given that is not there is an error (one beside that is not there is none).
  await assert.rejects(ws.convert(src, { output: memorySink().sink, config: join(tmp, 'nowhere.json') }), (e) => e.code === 'IoError');
});

test('convert: run again into a directory, complete files are kept (size, header and the digest recorded beside each, as the CLI records it); damaged, cut or missing ones are written again; the CLI\'s directory is resumed too', async () => {
  const src = join(conv, 'mlx', 'model.safetensors');
  const opts = { to: 'bf16', maxShardSize: 1 };  // a file per weight
  const mem = memorySink();
  await ws.convert(src, { ...opts, output: mem.sink });
  const shards = [...mem.files.keys()].filter((n) => n.startsWith('model-')).sort();
  assert.equal(shards.length, 6);
  const hex = (b) => createHash('sha256').update(b).digest('hex');
  let k = 0;
  for (const make of [() => join(tmp, `resume-${k++}`), () => new FakeDir()]) {
    const out = make();
    const node = typeof out === 'string';
    const read = async (name) => (node ? readFileSync(join(out, name)) : Buffer.from(await (await (await out.getFileHandle(name)).getFile()).arrayBuffer()));
    const put = async (name, bytes) => {
      if (node) return writeFileSync(join(out, name), bytes);
      const w = await (await out.getFileHandle(name, { create: true })).createWritable();
      await w.write(bytes);
      await w.close();
    };
    const remove = async (name) => (node ? rmSync(join(out, name)) : out.removeEntry(name));
    const what = node ? 'a Node directory' : 'a directory handle';
    const first = await ws.convert(src, { ...opts, output: out });
    assert.deepEqual(first.files.filter((f) => f.kept), [], what);
    for (const name of shards) assert.equal((await read(`.${name}.sha256`)).toString(), `${hex(mem.files.get(name))}\n`, `${what}: ${name}'s digest`);
    const again = await ws.convert(src, { ...opts, output: out });
    assert.deepEqual(again.files.filter((f) => f.kept).map((f) => f.name), shards, `${what}: every shard kept`);
    // Shard 1 damaged (its size kept), shard 2 cut short, shard 3 and its digest gone, shard 4's
    // digest gone: shards 0 and 5 are kept; every file ends as the first run wrote it.
    const damaged = Buffer.from(mem.files.get(shards[1]));
    damaged[damaged.length - 1] ^= 1;
    await put(shards[1], damaged);
    await put(shards[2], mem.files.get(shards[2]).subarray(0, 100));
    await remove(shards[3]);
    await remove(`.${shards[3]}.sha256`);
    await remove(`.${shards[4]}.sha256`);
    const seen = [];
    const third = await ws.convert(src, { ...opts, output: out, onProgress: (p) => seen.push(p.bytes), progressInterval: 0 });
    assert.deepEqual(third.files.filter((f) => f.kept).map((f) => f.name), [shards[0], shards[5]], what);
    // The kept files count as written from the first report; the last is every shard's bytes.
    const kept = mem.files.get(shards[0]).length + mem.files.get(shards[5]).length;
    assert.ok(seen.length > 0 && seen.every((b) => b >= kept), `${what}: the kept files count as written (${seen})`);
    assert.equal(seen.at(-1), shards.reduce((n, s) => n + mem.files.get(s).length, 0), what);
    for (const [name, bytes] of mem.files) assert.ok(Buffer.compare(await read(name), bytes) === 0, `${what}: ${name}`);
    for (const name of shards) assert.equal((await read(`.${name}.sha256`)).toString(), `${hex(mem.files.get(name))}\n`, `${what}: ${name}'s digest`);
  }
  if (!noCli) {
    const dir = join(tmp, 'resume-cli');
    execFileSync(cli, ['convert', src, '-o', dir, '--no-progress', '--to', 'bf16', '--max-shard-size', '1'], { stdio: 'pipe' });
    const r = await ws.convert(src, { ...opts, output: dir });
    assert.deepEqual(r.files.filter((f) => f.kept).map((f) => f.name), shards, 'the CLI\'s shards kept');
  }
});

test('convert: onProgress reports the output bytes up to every file\'s size', async () => {
  const { sink, files } = memorySink();
  const seen = [];
  await ws.convert(join(conv, 'mlx', 'model.safetensors'), { to: 'bf16', output: sink, maxShardSize: 600, onProgress: (p) => seen.push(p), progressInterval: 0 });
  const total = [...files].filter(([n]) => n.endsWith('.safetensors')).reduce((s, [, b]) => s + b.length, 0);
  const last = seen.at(-1);
  assert.equal(last.bytes, total);
  assert.equal(last.totalBytes, total);
  assert.equal(last.tensors, 6);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].bytes >= seen[i - 1].bytes);
});

test('convert: an abort rejects with Aborted (also while a stalled sink holds a write), aborts the open file, closes none after it and frees every handle', async () => {
  const wasm = await ws.init();
  const base = { ...wasm.live };
  const ctl = new AbortController();
  const events = [];
  let writes = 0;
  const sink = (name) => {
    events.push(['open', name]);
    return new WritableStream({
      write() { if (++writes === 2) ctl.abort(new Error('stop')); },  // the header, then a weight's first piece
      close() { events.push(['close', name]); },
      abort() { events.push(['abort', name]); },
    });
  };
  await assert.rejects(ws.convert(join(conv, 'mlx', 'model.safetensors'), { to: 'f32', output: sink, signal: ctl.signal }),
    (e) => e instanceof ws.WeightstreamError && e.code === 'Aborted' && e.name === 'AbortError' && e.cause?.message === 'stop');
  assert.deepEqual(events, [['open', 'model.safetensors'], ['abort', 'model.safetensors']]);
  // A sink that stalls (its write never settles): the abort still rejects at once.
  const stall = new AbortController();
  const stalled = (name) => new WritableStream({ write() { if (name === 'model.safetensors') setTimeout(() => stall.abort(), 20); return new Promise(() => {}); } });
  const t0 = performance.now();
  await assert.rejects(ws.convert(join(conv, 'mlx', 'model.safetensors'), { output: stalled, signal: stall.signal }), (e) => e.code === 'Aborted');
  assert.ok(performance.now() - t0 < 5000);
  // Aborted before it starts: nothing opened.
  const opened = [];
  await assert.rejects(ws.convert(join(conv, 'mlx', 'model.safetensors'), { output: (n) => { opened.push(n); return new WritableStream(); }, signal: AbortSignal.abort() }),
    (e) => e.code === 'Aborted');
  assert.deepEqual(opened, []);
  assert.deepEqual(wasm.live, base);
});

test('convert: errors — a truncated model (the library\'s code and offset), a failing sink (IoError in that file), misuse (TypeError)', async () => {
  const wasm = await ws.init();
  const base = { ...wasm.live };
  const file = readFileSync(join(conv, 'mlx', 'model.safetensors'));
  const config = JSON.parse(readFileSync(join(conv, 'mlx', 'config.json')));
  const cut = new Blob([file.subarray(0, file.length - 10)]);
  const verdict = await ws.validate(cut);
  assert.equal(verdict.error.code, 'TruncatedData');
  const { sink, files, events } = memorySink();
  await assert.rejects(ws.convert(cut, { to: 'bf16', output: sink, quantization: config }),
    (e) => e.code === 'TruncatedData' && e.offset === verdict.error.offset);
  assert.equal(files.size, 0, 'no file completed');
  assert.ok(events.every((e) => e[0] !== 'close'));
  // A sink that fails on its first write: IoError at byte 0 of that file, with the cause.
  const failing = () => new WritableStream({ write() { throw new Error('disk full'); } });
  await assert.rejects(ws.convert(join(conv, 'mlx', 'model.safetensors'), { output: failing }),
    (e) => e.code === 'IoError' && e.shard === 'model.safetensors' && e.offset === 0 && e.cause?.message === 'disk full');
  // A sink that cannot open the file.
  await assert.rejects(ws.convert(join(conv, 'mlx', 'model.safetensors'), { output: () => { throw new Error('denied'); } }),
    (e) => e.code === 'IoError' && e.shard === 'model.safetensors' && e.offset === null);
  const out = memorySink().sink;
  await assert.rejects(ws.convert(join(conv, 'mlx', 'model.safetensors'), { to: 'q4', output: out }), TypeError);
  await assert.rejects(ws.convert(join(conv, 'mlx', 'model.safetensors'), { keep: ['Q4'], output: out }), /keep wants safetensors dtypes/);
  await assert.rejects(ws.convert(join(conv, 'mlx', 'model.safetensors'), { maxShardSize: -1, output: out }), TypeError);
  for (const bad of ['5TB', '1.5', '', '5 GB', '0GB']) {
    await assert.rejects(ws.convert(join(conv, 'mlx', 'model.safetensors'), { maxShardSize: bad, output: out }),
      (e) => e instanceof TypeError && e.message.includes(`not ${JSON.stringify(bad)}`), bad);
  }
  await assert.rejects(ws.convert(join(conv, 'mlx', 'model.safetensors'), {}), /needs output/);
  assert.deepEqual(wasm.live, base);
});
