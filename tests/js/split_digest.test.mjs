// Split GGUF models (FORMATS §8) and SHA-256 verification (§9) through the package: the fixtures of
// tests/data/split-gguf (written by ggml's own writer, split as gguf-split splits) by path, by any
// split, as a list of Files or streams in 1-byte and random pieces, over HTTP with and without
// Range; every malformed case with the code, file and offset of its expected.json; expected digests
// that match, and one byte changed at the start, middle and end of a file; X-Linked-Etag; an
// Ollama manifest's blobs verified by default.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ws, repo, decodeAll, streamOf, readJson } from './helpers.mjs';
import { serve } from './http-server.mjs';

const dir = join(repo, 'tests', 'data', 'split-gguf');
const expected = readJson(join(dir, 'expected.json')).cases;
const bytesOf = (d, n) => new Uint8Array(readFileSync(join(dir, d, n)));
const sha = (b) => createHash('sha256').update(b).digest('hex');
const TINY = ['tiny-00001-of-00003.gguf', 'tiny-00002-of-00003.gguf', 'tiny-00003-of-00003.gguf'];

// A stream in pieces of 1..37 bytes from a seeded xorshift.
function randomStream(bytes, seed) {
  let x = seed * 2654435761 >>> 0 || 1, at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) { c.close(); return; }
      x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
      const n = Math.min(1 + (x % 37), bytes.length - at);
      c.enqueue(bytes.slice(at, at + n));
      at += n;
    },
  });
}

// name -> [dtype, shape, sha256 of the output bytes]
async function outputs(source, options) {
  const got = await decodeAll(source, options);
  return Object.fromEntries([...got].map(([n, { t, bytes }]) => [n, [t.dtype, t.shape.join('x'), sha(bytes)]]));
}

test('a split GGUF model: the same tensors and bytes as the unsplit model, from any split, a list, streams and HTTP', async () => {
  for (const dtype of ['raw', 'f32', 'f16']) {
    const want = await outputs(join(dir, 'tiny.gguf'), { dtype });
    assert.equal(Object.keys(want).length, 6);
    for (const c of expected.filter((c) => c.valid && c.same_as === 'tiny.gguf')) {
      assert.deepEqual(await outputs(join(dir, c.dir, c.entry), { dtype }), want, `${c.case} by path (${dtype})`);
      const list = [...c.files].reverse();
      assert.deepEqual(await outputs({ gguf: list.map((n) => new File([bytesOf(c.dir, n)], n)) }, { dtype }), want, `${c.case} as Files (${dtype})`);
    }
    // Streams (they cannot seek: read into memory when first opened) in 1-byte and random pieces.
    for (const [how, make] of [['1-byte', (b) => streamOf(b, 1)], ['random', (b, i) => randomStream(b, i + 3)]]) {
      const source = { gguf: TINY.map((n, i) => ({ name: n, source: make(bytesOf('.', n), i) })) };
      assert.deepEqual(await outputs(source, { dtype }), want, `streams, ${how} (${dtype})`);
    }
  }
  const info = await ws.inspect(join(dir, 'tiny-00002-of-00003.gguf'));
  assert.deepEqual(info.splits.map((s) => [s.file, s.tensors, s.foreignKvs]), TINY.map((n) => [n, 2, 0]));
  assert.deepEqual(info.tensors.map((t) => t.split), [0, 0, 1, 1, 2, 2]);
  assert.deepEqual(await ws.validate(join(dir, 'tiny-00003-of-00003.gguf')), { valid: true, format: 'gguf', tensors: 6, error: null, warnings: [] });
  // A File given alone: its siblings cannot be found.
  const alone = await ws.validate(new File([bytesOf('.', TINY[0])], TINY[0]));
  assert.deepEqual([alone.valid, alone.error.code, alone.error.shard], [false, 'GgufSplitMissing', TINY[1]]);
});

test('a split GGUF model over HTTP, with and without Range: siblings found beside the URL, the same bytes', async () => {
  const files = new Map(TINY.map((n) => [`/m/${n}`, bytesOf('.', n)]));
  const want = await outputs(join(dir, 'tiny.gguf'), { dtype: 'f32' });
  for (const ranges of [true, false]) {
    const srv = await serve(files, { ranges });
    try {
      assert.deepEqual(await outputs(`${srv.base}/m/${TINY[1]}`, { dtype: 'f32' }), want, `ranges: ${ranges}`);
      assert.equal(srv.stats.rangeRequests > 0, ranges);
      const v = await ws.validate(`${srv.base}/m/${TINY[0]}`);
      assert.equal(v.valid, true, JSON.stringify(v));
    } finally {
      await srv.close();
    }
  }
  // One split not on the server: named.
  const srv = await serve(new Map([...files].filter(([p]) => !p.endsWith(TINY[2]))));
  try {
    const v = await ws.validate(`${srv.base}/m/${TINY[0]}`);
    assert.deepEqual([v.error.code, v.error.shard], ['GgufSplitMissing', TINY[2]]);
  } finally {
    await srv.close();
  }
});

test('malformed split models: the code, file and offset of expected.json, by path and as a list', async () => {
  const bad = expected.filter((c) => !c.valid);
  assert.ok(bad.length >= 14, `${bad.length} malformed cases`);
  for (const c of bad) {
    const path = join(dir, c.dir, c.entry);
    const v = await ws.validate(path);
    assert.equal(v.valid, false, c.case);
    assert.equal(v.error.code, c.code, c.case);
    assert.equal(v.error.shard, c.file ?? null, `${c.case}: file`);
    if (c.offset !== undefined) assert.equal(v.error.offset, c.offset, `${c.case}: offset`);
    if (c.found !== undefined && c.code !== 'GgufSplitKeyType') assert.match(v.error.message, new RegExp(`\\b${c.found}\\b`), `${c.case}: message`);
    const present = readdirSync(join(dir, c.dir));
    const list = c.files.filter((n) => present.includes(n)).map((n) => ({ name: n, source: bytesOf(c.dir, n) }));
    // As a list the files are the model (llama.cpp's list of splits): a split not in it makes a
    // list of another length than split.count.
    const l = await ws.validate({ gguf: list });
    const want = c.code === 'GgufSplitMissing' ? 'GgufSplitCountMismatch' : c.code;
    assert.equal(l.error?.code, c.code === 'GgufSplitNameMismatch' ? l.error?.code : want, `${c.case} as a list`);
  }
});

test('digests: a matching sha256 loads; one byte changed at the start, middle or end is DigestMismatch naming the file and both digests', async () => {
  const files = TINY.map((n) => bytesOf('.', n));
  const digests = Object.fromEntries(TINY.map((n, i) => [n, sha(files[i])]));
  const want = await outputs(join(dir, 'tiny.gguf'), { dtype: 'f32' });
  assert.deepEqual(await outputs(join(dir, TINY[0]), { dtype: 'f32', sha256: digests }), want);
  for (const [where, at] of [['first', 3], ['middle', files[1].length >> 1], ['last', files[1].length - 1]]) {
    const changed = files.map((b) => b.slice());
    changed[1][at] ^= 0x01;
    for (const [how, make] of [['Files', (b, n) => new File([b], n)], ['1-byte streams', (b) => streamOf(b, 1)], ['random streams', (b, n, i) => randomStream(b, i + 11)]]) {
      const source = { gguf: TINY.map((n, i) => ({ name: n, source: make(changed[i], n, i) })) };
      const err = await ws.validate(source, { sha256: digests });
      // A byte changed inside the header may be a header error first; past it, the digest says.
      if (err.error.code !== 'DigestMismatch') { assert.equal(where, 'first', `${where} (${how}): ${err.error.code}`); continue; }
      assert.equal(err.error.shard, TINY[1], `${where} (${how})`);
      await assert.rejects(decodeAll(source.gguf ? { gguf: TINY.map((n, i) => ({ name: n, source: make(changed[i], n, i) })) } : source, { dtype: 'f32', sha256: digests }), (e) => {
        assert.equal(e.code, 'DigestMismatch');
        assert.equal(e.shard, TINY[1]);
        assert.equal(e.expectedSha256, digests[TINY[1]]);
        assert.equal(e.actualSha256, sha(changed[1]));
        assert.match(e.message, new RegExp(`its SHA-256 is ${sha(changed[1])}, expected ${digests[TINY[1]]}`));
        return true;
      }, `${where} (${how})`);
    }
  }
  // The mismatch comes before the changed file's last tensor is handed on as complete.
  const last = files.map((b) => b.slice());
  last[2][last[2].length - 1] ^= 0x01;
  const ended = [];
  await assert.rejects((async () => {
    for await (const ev of ws.createReader({ dtype: 'f32', sha256: digests }).read({ gguf: TINY.map((n, i) => new File([last[i]], n)) })) {
      if (ev.type === 'tensorEnd') ended.push(ev.tensor.name);
    }
  })(), { code: 'DigestMismatch', shard: TINY[2] });
  const info = await ws.inspect(join(dir, TINY[0]));
  const lastOfSplit3 = info.tensors.filter((t) => t.split === 2).pop().name;
  assert.equal(ended.length, 5, ended.join(', '));
  assert.ok(!ended.includes(lastOfSplit3), `${lastOfSplit3} was handed on as complete`);
  // One file given as a path with its digest (a string), right and wrong.
  const one = join(dir, 'tiny.gguf');
  assert.equal((await ws.validate(one, { sha256: sha(readFileSync(one)) })).valid, true);
  const wrong = await ws.validate(one, { sha256: '0'.repeat(64) });
  assert.deepEqual([wrong.error.code, wrong.error.shard ?? null], ['DigestMismatch', null]);
  await assert.rejects(ws.validate(one, { sha256: 'xyz' }), TypeError);
  await assert.rejects(ws.validate(one, { sha256: { 'tiny.gguf': 'g'.repeat(64) } }), TypeError);
});

test("verify: 'etag': the digest a server states (X-Linked-Etag) is checked", async () => {
  const body = bytesOf('.', 'tiny.gguf');
  const changed = body.slice();
  changed[changed.length - 5] ^= 0x40;
  const headers = new Map([['/good.gguf', { 'X-Linked-Etag': `"${sha(body)}"` }], ['/bad.gguf', { 'X-Linked-Etag': `"${sha(body)}"` }]]);
  const srv = await serve(new Map([['/good.gguf', body], ['/bad.gguf', changed]]), { headers });
  try {
    assert.equal((await ws.validate(`${srv.base}/good.gguf`, { verify: 'etag' })).valid, true);
    const bad = await ws.validate(`${srv.base}/bad.gguf`, { verify: 'etag' });
    assert.equal(bad.error.code, 'DigestMismatch');
    // Without the option nothing is checked (the tensors are well-formed).
    assert.equal((await ws.validate(`${srv.base}/bad.gguf`)).valid, true);
  } finally {
    await srv.close();
  }
});

test('an Ollama manifest: its blobs verified against their names by default; verifyBlobs: false reads them as named', async () => {
  const odir = join(repo, 'tests', 'data', 'conventions', 'ollama');
  const manifest = readFileSync(join(odir, 'manifest.json'));
  const blobs = readdirSync(join(odir, 'blobs'));
  const good = (name) => new Uint8Array(readFileSync(join(odir, 'blobs', name)));
  assert.equal((await ws.validate({ ollama: new Uint8Array(manifest), blobs: (n) => good(n) })).valid, true);
  const tampered = (name) => { const b = good(name); if (name === blobs[0]) b[b.length - 1] ^= 1; return b; };
  const v = await ws.validate({ ollama: new Uint8Array(manifest), blobs: tampered });
  assert.deepEqual([v.valid, v.error.code, v.error.shard], [false, 'DigestMismatch', blobs[0]]);
  assert.equal((await ws.validate({ ollama: new Uint8Array(manifest), blobs: tampered }, { verifyBlobs: false })).valid, true);
});
