// Every case of the C++ conformance corpus (tests/corpus/*/expected.json) through the JS API:
// the same status, offset and tensor as the C++ reader, whatever the chunking.
//  - a ReadableStream (size unknown): exactly the plain verdict;
//  - a Uint8Array (size known, so declared to the reader): GGUF must give the *_with_size
//    verdict; safetensors the same status and tensor (the offset may be earlier, as the C++
//    DeclaredInputSizeGivesTheExpectedVerdict test allows).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ws, corpus, readJson, streamOf } from './helpers.mjs';

function verdict(r) {
  return r.valid ? { status: 'Ok', tensor: null } : { status: r.error.code, offset: r.error.offset, tensor: r.error.tensor };
}

function check(wrong, got, want, what) {
  try { assert.deepEqual(got, want); } catch { wrong.push(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`); }
}

for (const format of ['safetensors', 'gguf']) {
  const index = join(corpus, format, 'expected.json');
  if (format === 'safetensors' || existsSync(index)) {
    const cases = readJson(index).cases;
    test(`${format} corpus: ${cases.length} cases, streamed (size unknown) in pieces of 1 MiB, 7 and 1 bytes`, async () => {
      assert.ok(cases.length > 100);
      const wrong = [];  // every mismatch, not just the first
      for (const c of cases) {
        const bytes = new Uint8Array(readFileSync(join(corpus, format, c.file)));
        const want = c.status === 'Ok' ? { status: 'Ok', tensor: null } : { status: c.status, offset: c.offset, tensor: c.tensor };
        // 1-byte pieces only for small files: the point is that splitting changes nothing.
        const pieces = bytes.length <= 4096 ? [1 << 20, 7, 1] : [1 << 20, 7];
        for (const piece of pieces) {
          const r = await ws.validate(streamOf(bytes, piece));
          check(wrong, verdict(r), want, `${c.file} in ${piece}-byte pieces (${c.description})`);
          if (c.status === 'Ok') assert.equal(r.format, format, c.file);
        }
        // Pieces larger than the wasm input buffer are fed in parts.
        const r = await ws.validate(streamOf(bytes, 64), { chunkSize: 5 });
        check(wrong, verdict(r), want, `${c.file} through a 5-byte input buffer`);
      }
      assert.deepEqual(wrong, []);
    });

    test(`${format} corpus: bytes with known size give the declared-size verdict`, async () => {
      const wrong = [];
      for (const c of cases) {
        const bytes = new Uint8Array(readFileSync(join(corpus, format, c.file)));
        const r = await ws.validate(bytes);
        const got = verdict(r);
        if (format === 'gguf') {
          const want = c.status_with_size === 'Ok' ? { status: 'Ok', tensor: null }
            : { status: c.status_with_size, offset: c.offset_with_size, tensor: c.tensor_with_size };
          check(wrong, got, want, `${c.file} (${c.description})`);
        } else {
          check(wrong, { status: got.status, tensor: got.tensor }, { status: c.status, tensor: c.tensor ?? null }, `${c.file} (${c.description})`);
        }
        // Every rejection's message names the code and the offset, and ends a sentence.
        if (!r.valid) {
          assert.ok(r.error.message.startsWith(`${r.error.code} at byte ${r.error.offset}`), r.error.message);
          if (r.error.tensor !== null) assert.ok(r.error.message.includes(`in tensor ${JSON.stringify(r.error.tensor)}`), r.error.message);
          assert.match(r.error.message, /[.?!]$/);
        }
      }
      assert.deepEqual(wrong, []);
    });
  }
}
