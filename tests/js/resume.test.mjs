// Resume (issue #19): a URL's body that fails mid-way is requested again from the next unread byte
// (Range + If-Range) and continues exactly there. A loopback server cuts bodies at seeded random
// byte positions (several per file, resets and clean short ends); every result — createReader's
// bytes (raw and f32), validate, inspect, loadToWebGPU's buffers — equals the uninterrupted load's,
// for a safetensors file, a GGUF file, a split GGUF model, a sharded model and a UQFF directory.
// A changed file and a server that ignores Range give their errors; an abort during the backoff is
// immediate; retries run out with the attempt count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ws, repo, decodeAll } from './helpers.mjs';
import { serve } from './http-server.mjs';
import { FakeDevice } from './fake-gpu.mjs';

const read = (p) => new Uint8Array(readFileSync(join(repo, p)));
const SEED = Number(process.env.WS_RESUME_SEED ?? 1919);
const fast = { retries: 3, retryDelay: 1 };

// Each model: its files on the server, and the source that names it.
const MODELS = [
  { name: 'safetensors (samples/tiny-llama)', files: { '/m/tiny-llama.safetensors': 'samples/tiny-llama.safetensors' }, source: (b) => `${b}/m/tiny-llama.safetensors` },
  { name: 'GGUF (tiny.gguf: quantized tensors)', files: { '/m/tiny.gguf': 'tests/data/split-gguf/tiny.gguf' }, source: (b) => `${b}/m/tiny.gguf` },
  { name: 'GGUF (a vocabulary: a 700 KB header)', files: { '/m/v.gguf': 'tests/data/real/gguf/ggml-vocab-llama-spm.gguf' }, source: (b) => `${b}/m/v.gguf` },
  {
    name: 'split GGUF (three splits)',
    files: Object.fromEntries([1, 2, 3].map((i) => [`/m/tiny-0000${i}-of-00003.gguf`, `tests/data/split-gguf/tiny-0000${i}-of-00003.gguf`])),
    source: (b) => `${b}/m/tiny-00001-of-00003.gguf`,
  },
  {
    name: 'sharded (samples/sharded: index + 3 shards)',
    files: Object.fromEntries(['model.safetensors.index.json', ...[1, 2, 3].map((i) => `model-0000${i}-of-00003.safetensors`)].map((f) => [`/m/${f}`, `samples/sharded/${f}`])),
    source: (b) => `${b}/m/model.safetensors.index.json`,
  },
  {
    name: 'UQFF directory',
    files: Object.fromEntries(['model-0.uqff', 'model-1.uqff', 'residual.safetensors'].map((f) => [`/d/${f}`, `tests/data/conventions/uqff/${f}`])),
    source: (b) => ({ uqff: ['model-0.uqff', 'model-1.uqff', 'residual.safetensors'].map((f) => `${b}/d/${f}`) }),
  },
];

const sha = async (bytes) => Buffer.from(await crypto.subtle.digest('SHA-256', bytes)).toString('hex');

// Everything a load gives, in comparable form; `retries` collects the retry events.
async function everything(base, source, opts, retries) {
  const onProgress = (p) => { if (p.type === 'retry') retries.push(p); };
  const out = {};
  for (const dtype of ['raw', 'f32']) {
    const events = [];
    const got = new Map();
    let cur = null;
    for await (const ev of ws.createReader({ ...opts, dtype }).read(source)) {
      if (ev.type === 'retry') { retries.push(ev); events.push('retry'); continue; }
      if (ev.type === 'tensorBegin') cur = { t: ev.tensor, bytes: new Uint8Array(ev.tensor.byteLength) };
      else if (ev.type === 'tensorData') cur.bytes.set(ev.data, ev.offset);
      else if (ev.type === 'tensorEnd') got.set(ev.tensor.name, { t: ev.tensor, sha: await sha(cur.bytes) });
    }
    out[dtype] = [...got];
  }
  out.validate = await ws.validate(source, { ...opts, onProgress });
  const h = await ws.inspect(source, { ...opts, onProgress });
  out.inspect = JSON.stringify(h, (k, v) => (typeof v === 'bigint' ? `${v}n` : v)).replaceAll(base, 'BASE');
  const device = new FakeDevice();
  const r = await ws.loadToWebGPU(device, source, { ...opts, dtype: 'f16', split: true, onProgress });
  out.gpu = [];
  for (const [name, t] of Object.entries(r.tensors)) out.gpu.push([name, t.byteLength, await sha(t.buffer.data.subarray(0, t.byteLength))]);
  assert.deepEqual(device.violations, []);
  r.destroy();
  return out;
}

for (const model of MODELS) {
  test(`resume: ${model.name} cut at seeded random positions = the uninterrupted load (createReader raw/f32, validate, inspect, loadToWebGPU)`, async () => {
    const files = new Map(Object.entries(model.files).map(([p, f]) => [p, read(f)]));
    const clean = await serve(files, { etag: true });
    let want;
    try {
      want = await everything(clean.base, model.source(clean.base), fast, []);
      assert.equal(clean.stats.drops, 0);
    } finally {
      await clean.close();
    }
    const srv = await serve(files, { etag: true, drops: { seed: SEED, perFile: 4 } });
    try {
      const retries = [];
      const got = await everything(srv.base, model.source(srv.base), fast, retries);
      assert.deepEqual(got, want);
      assert.ok(srv.stats.drops >= 4, `${srv.stats.drops} bodies cut`);
      // Every cut the client saw was resumed (one retry event each, on the first attempt), with
      // If-Range; a cut in a body the client had already cancelled (the rest of a header's
      // `bytes=0-` request) is not seen.
      assert.ok(retries.length >= 2 && retries.length <= srv.stats.drops, `${retries.length} retries, ${srv.stats.drops} cuts`);
      for (const r of retries) {
        assert.equal(r.type, 'retry');
        assert.equal(r.attempt, 1);
        assert.ok(Number.isInteger(r.offset) && r.offset >= 0);
        assert.match(r.url, /^http:\/\/127\.0\.0\.1:\d+\/[md]\//);
        assert.ok(r.error instanceof Error);
      }
      assert.equal(srv.stats.ifRange, retries.length, 'each resume sends If-Range');
      const resumed = srv.stats.log.filter((l) => l.ifRange !== null);
      assert.ok(resumed.every((l) => l.status === 206 && /^bytes=\d+-\d*$/.test(l.range)));
    } finally {
      await srv.close();
    }
  });
}

test('resume: several seeds on the sharded model and the GGUF (reproducible cuts, every load equal)', async () => {
  for (const model of [MODELS[2], MODELS[4]]) {
    const files = new Map(Object.entries(model.files).map(([p, f]) => [p, read(f)]));
    const want = new Map();
    for (const dtype of ['raw', 'f32']) {
      const clean = await serve(files, { etag: true });
      try { want.set(dtype, await decodeAll(model.source(clean.base), { dtype })); } finally { await clean.close(); }
    }
    for (let s = 1; s <= 4; s++) {
      const srv = await serve(files, { etag: true, drops: { seed: SEED * 7 + s, perFile: 6 } });
      try {
        for (const dtype of ['raw', 'f32']) {
          const got = await decodeAll(model.source(srv.base), { ...fast, dtype });
          assert.deepEqual([...got.keys()], [...want.get(dtype).keys()]);
          for (const [n, { bytes }] of got) assert.deepEqual(bytes, want.get(dtype).get(n).bytes, `${model.name} seed ${s} ${n} ${dtype}`);
          srv.rearm();
        }
        assert.ok(srv.stats.drops > 0);
      } finally {
        await srv.close();
      }
    }
  }
});

const TINY = '/m/tiny-llama.safetensors';
const tiny = () => new Map([[TINY, read('samples/tiny-llama.safetensors')]]);

test('resume: the file changed on the server (If-Range fails: 200 with a new ETag) is SourceChanged naming the URL and offset', async () => {
  const files = tiny();
  const changed = read('samples/tiny-llama.safetensors');
  changed[changed.length - 1] ^= 0xFF;
  let at = null;
  const srv = await serve(files, { etag: true, drops: { seed: SEED, perFile: 1 }, onDrop: (p, a) => { at = a; files.set(p, changed); } });
  try {
    await assert.rejects(decodeAll(`${srv.base}${TINY}`, { ...fast, dtype: 'raw' }), (e) => {
      assert.equal(e.code, 'SourceChanged');
      assert.ok(e.offset > 0 && e.offset <= at, `offset ${e.offset}, cut at ${at}`);
      assert.match(e.message, /^SourceChanged at byte \d+: the file changed on the server while it was read \(http:\/\/127\.0\.0\.1:\d+\/m\/tiny-llama\.safetensors at byte \d+: If-Range failed: the server sent the whole file again with ETag "[^"]+", not "[^"]+"/);
      return true;
    });
    assert.equal(srv.stats.log.at(-1).status, 200, 'the server sent the whole (new) file');
  } finally {
    await srv.close();
  }
});

test('resume: a server that ignores If-Range but sends another ETag, or another size, on the 206 is SourceChanged (never mixed bytes)', async () => {
  for (const how of ['etag', 'size']) {
    const files = tiny();
    const orig = read('samples/tiny-llama.safetensors');
    const changed = how === 'etag' ? orig.slice() : new Uint8Array(orig.length + 8);
    if (how === 'etag') changed[changed.length - 1] ^= 0xFF; else changed.set(orig);
    const srv = await serve(files, { etag: how === 'etag', ifRange: false, drops: { seed: SEED, perFile: 1 }, onDrop: (p) => files.set(p, changed) });
    try {
      await assert.rejects(decodeAll(`${srv.base}${TINY}`, { ...fast, dtype: 'raw' }), (e) => {
        assert.equal(e.code, 'SourceChanged', e.message);
        assert.match(e.message, how === 'etag' ? /the server now sends ETag "[^"]+", not "[^"]+"/ : new RegExp(`the file is now ${orig.length + 8} bytes, not ${orig.length}`));
        assert.match(e.message, /tiny-llama\.safetensors at byte \d+/);
        return true;
      });
    } finally {
      await srv.close();
    }
  }
});

test('resume: a server without Range support (200 to the resume) is ResumeUnsupported; rangeRequests: false is not resumed; a short body without length is the reader\'s TruncatedData', async () => {
  const srv = await serve(tiny(), { ranges: false, etag: true, drops: { seed: SEED, perFile: 1 }, cuts: 'reset' });
  try {
    const retries = [];
    await assert.rejects(decodeAll(`${srv.base}${TINY}`, { ...fast, dtype: 'raw', onProgress: (p) => p.type === 'retry' && retries.push(p) }), (e) => {
      assert.equal(e.code, 'ResumeUnsupported');
      assert.match(e.message, /^ResumeUnsupported at byte (\d+): an interrupted download could not be resumed \(http:\/\/127\.0\.0\.1:\d+\/m\/tiny-llama\.safetensors at byte \1: the server answered HTTP 200 \(the whole file\) to Range: bytes=\1- with If-Range: "[^"]+"/);
      return true;
    });
    assert.equal(retries.length, 1);
    assert.equal(srv.stats.requests, 2);
    srv.rearm();
    const before = srv.stats.requests;
    await assert.rejects(decodeAll(`${srv.base}${TINY}`, { ...fast, dtype: 'raw', rangeRequests: false }), (e) => {
      assert.equal(e.code, 'IoError');
      assert.match(e.message, /reading http:\/\/127\.0\.0\.1:\d+\/m\/tiny-llama\.safetensors failed at byte \d+: /);
      assert.equal(e.retries, 0);
      return true;
    });
    assert.equal(srv.stats.requests, before + 1, 'no second request');
  } finally {
    await srv.close();
  }
  // A 200 without Content-Length that ends early: nothing says it is short but the header; the
  // reader does (TruncatedData), and there is nothing to resume against.
  const short = await serve(tiny(), { ranges: false, drops: { seed: SEED, perFile: 1 }, cuts: 'truncate' });
  try {
    await assert.rejects(decodeAll(`${short.base}${TINY}`, { ...fast, dtype: 'raw' }), (e) => e.code === 'TruncatedData');
    assert.equal(short.stats.requests, 1);
  } finally {
    await short.close();
  }
});

test('resume: retries run out (a body cut at the same byte every time): IoError with the attempt count, retry events 1..retries, exponential backoff', async () => {
  const files = tiny();
  const at = 1_000_003;
  const srv = await serve(files, { etag: true, persistentDrop: { path: TINY, at } });
  try {
    const retries = [];
    const t0 = performance.now();
    await assert.rejects(decodeAll(`${srv.base}${TINY}`, { retries: 3, retryDelay: 20, dtype: 'raw', onProgress: (p) => p.type === 'retry' && retries.push(p) }), (e) => {
      assert.equal(e.code, 'IoError');
      assert.equal(e.offset, at);
      assert.equal(e.retries, 3);
      assert.match(e.message, new RegExp(`^IoError at byte ${at}: the input could not be read \\(reading http://127\\.0\\.0\\.1:\\d+/m/tiny-llama\\.safetensors failed at byte ${at} \\(3 retries to resume it failed too\\): `));
      return true;
    });
    const tail = retries.slice(-3);
    assert.deepEqual(tail.map((r) => [r.attempt, r.offset]), [[1, at], [2, at], [3, at]]);
    assert.ok(performance.now() - t0 >= 20 + 40 + 80, 'waits 20, 40, 80 ms');
    // retries: 0 — the first failure is the error.
    const before = srv.stats.requests;
    await assert.rejects(decodeAll(`${srv.base}${TINY}`, { retries: 0, dtype: 'raw' }), (e) => e.code === 'IoError' && e.retries === 0);
    assert.equal(srv.stats.requests - before, 1);
  } finally {
    await srv.close();
  }
});

test('resume: an abort during the backoff wait rejects at once, with no further request', async () => {
  const srv = await serve(tiny(), { etag: true, drops: { seed: SEED, perFile: 1 } });
  try {
    const controller = new AbortController();
    let abortedAt = null;
    const onProgress = (p) => {
      if (p.type === 'retry' && abortedAt === null) { abortedAt = performance.now(); setTimeout(() => controller.abort(new Error('user cancelled')), 20); }
    };
    const device = new FakeDevice();
    await assert.rejects(ws.loadToWebGPU(device, `${srv.base}${TINY}`, { retryDelay: 60_000, signal: controller.signal, onProgress }), (e) => e.name === 'AbortError' && e.code === 'Aborted');
    assert.ok(abortedAt !== null);
    assert.ok(performance.now() - abortedAt < 2000, 'did not wait for the 60 s backoff');
    assert.equal(device.live().length, 0, 'every buffer destroyed');
    const requests = srv.stats.requests;
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(srv.stats.requests, requests, 'no resume request after the abort');
  } finally {
    await srv.close();
  }
});
