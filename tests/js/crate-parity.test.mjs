// Issue #26: the files the reference crate (safetensors 24b0b285) read differently than
// weightstream did, through the JS package: unknown fields' lone surrogates and out-of-range
// numbers, the dtype's object form, a safetensors file whose length prefix starts with '{' and
// names a tensor "layers", and fuzz finding 9 (a declared size decides the header length first).
// Every corpus case also runs through tests/js/corpus.test.mjs under every chunking.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ws, corpus, readJson, streamOf, le64, concat } from './helpers.mjs';

const st = (name) => new Uint8Array(readFileSync(join(corpus, 'safetensors', name)));
const verdict = (r) => (r.valid ? 'Ok' : `${r.error.code}@${r.error.offset}:${r.error.tensor}`);

test('a header of length 123 naming a tensor "layers" validates and inspects as safetensors, from a buffer and a stream', async () => {
  const bytes = st('ok_header_length_123_tensor_layers.safetensors');
  assert.equal(bytes[0], 0x7b);  // '{'
  for (const source of [bytes, streamOf(bytes, 50), new Blob([bytes])]) {
    const r = await ws.validate(source);
    assert.equal(r.valid, true, JSON.stringify(r.error));
    assert.equal(r.format, 'safetensors');
  }
  const h = await ws.inspect(bytes);
  assert.equal(h.format, 'safetensors');
  assert.deepEqual(h.tensors.map((t) => [t.name, t.dtype, t.shape]), [['layers', 'U8', [4]]]);
  assert.equal(await ws.fileKind(bytes, bytes.length), 'safetensors');
  assert.equal(await ws.fileKind(bytes.subarray(0, 8)), 'safetensors');
});

test('fileKind: the library rule through the C ABI', async () => {
  const enc = new TextEncoder();
  assert.equal(await ws.fileKind(enc.encode('GGUF\x03\0\0\0')), 'gguf');
  assert.equal(await ws.fileKind(enc.encode('{"schemaVersion":2,"layers":[]}')), 'ollama-manifest');
  assert.equal(await ws.fileKind(enc.encode('{"weight_map":{"layers":"a.safetensors"}}')), 'shard-index');
  assert.equal(await ws.fileKind(enc.encode('{"model_type":"llama"}')), 'json');
  assert.equal(await ws.fileKind(enc.encode('PK\x03\x04')), 'unknown');
  const h = concat(le64(123), enc.encode('{"layers":[]}'));
  assert.equal(await ws.fileKind(h, 131), 'safetensors');
  assert.equal(await ws.fileKind(h, 100), 'unknown');  // the length runs past the size: no manifest either
  assert.equal(await ws.fileKind(h, 131n), 'safetensors');
});

test('unknown fields and the dtype object form: the corpus verdicts (the crate\'s) from buffers and streams', async () => {
  const cases = readJson(join(corpus, 'safetensors', 'expected.json')).cases
    .filter((c) => /^(ok_)?(unknown_field_|dtype_object_)/.test(c.file));
  assert.equal(cases.length, 20);
  for (const c of cases) {
    assert.ok(c.crate, c.file);
    const want = c.status === 'Ok' ? 'Ok' : `${c.status}@${c.offset}:${c.tensor}`;
    const bytes = st(c.file);
    assert.equal(verdict(await ws.validate(bytes)), want, c.file);
    assert.equal(verdict(await ws.validate(streamOf(bytes, 1))), want, c.file);
  }
  const r = await ws.validate(st('unknown_field_number_1e400.safetensors'));
  assert.match(r.error.message, /^JsonNumberOutOfRange at byte 64 in tensor "t": /);
});

test('fuzz finding 9: a declared size says InvalidHeaderLength at 0 first; streamed, the duplicate key before the end', async () => {
  const bytes = new Uint8Array(readFileSync(join(corpus, 'fuzz', 'safetensors_truncated_header_small_arena_hides_duplicate_metadata_key.safetensors')));
  assert.equal(bytes.length, 347);
  assert.equal(verdict(await ws.validate(bytes)), 'InvalidHeaderLength@0:null');
  for (const piece of [50, 1, 1 << 20]) {
    assert.equal(verdict(await ws.validate(streamOf(bytes, piece))), 'DuplicateMetadataKey@158:null');
  }
});
