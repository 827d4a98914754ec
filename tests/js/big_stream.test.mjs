// A safetensors model larger than 4 GiB, generated on the fly as a ReadableStream (never stored:
// the data section is one 8 MiB pattern enqueued again and again), streamed through the wasm
// module. Every tensor's bytes as the reader hands them out are checksummed (Adler-32) and
// compared with the checksum of what was sent; offsets past 2^32 must come out exact; wasm memory
// must stay at most 32 MiB the whole time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ws, le64, concat } from './helpers.mjs';
import { adlerUpdate, adlerOfRepeated } from './adler.mjs';

const GiB = 2 ** 30;
const PATTERN = 8 << 20;
const MEMORY_CAP = 32 << 20;

function pattern() {
  const p = new Uint8Array(PATTERN);
  let x = 0x9E3779B9;
  for (let i = 0; i < p.length; i++) {  // xorshift32: every byte value, no period inside 8 MiB
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    p[i] = x & 0xFF;
  }
  return p;
}

// Sizes chosen so that tensor boundaries fall at odd offsets and the last tensors start past 2^32.
const TENSORS = [
  ['embed.weight', 'F32', [GiB / 4]],
  ['odd', 'U8', [3]],
  ['layers.0.weight', 'BF16', [GiB / 2 + 1]],
  ['layers.1.weight', 'U8', [GiB + 5]],
  ['layers.2.weight', 'I8', [GiB]],
  ['tail', 'U8', [123457]],
];
const BYTES = { F32: 4, BF16: 2, U8: 1, I8: 1 };

function model() {
  const header = {};
  let off = 0;
  const spans = [];
  for (const [name, dtype, shape] of TENSORS) {
    const n = shape.reduce((a, b) => a * b, 1) * BYTES[dtype];
    header[name] = { dtype, shape, data_offsets: [off, off + n] };
    spans.push({ name, begin: off, end: off + n });
    off += n;
  }
  let json = JSON.stringify(header);
  while (json.length % 8) json += ' ';
  const h = new TextEncoder().encode(json);
  return { head: concat(le64(h.length), h), dataSize: off, spans };
}

function streamOfModel(head, dataSize, p) {
  let sent = -1;
  return new ReadableStream({
    pull(c) {
      if (sent < 0) { c.enqueue(head); sent = 0; return; }
      if (sent >= dataSize) { c.close(); return; }
      const n = Math.min(p.length, dataSize - sent);
      c.enqueue(n === p.length ? p : p.subarray(0, n));  // the same bytes every time: zero cost
      sent += n;
    },
  });
}

test('a 4.0 GiB + 120 KiB safetensors stream: per-tensor checksums, u64 offsets, memory <= 32 MiB', { timeout: 240000 }, async () => {
  const p = pattern();
  const { head, dataSize, spans } = model();
  assert.ok(head.length + dataSize > 2 ** 32);
  const wasm = await ws.init();
  const memory = wasm.memory;
  let maxMemory = memory.buffer.byteLength;
  const seen = new Map();
  let header = null;
  let lastProgress = null;
  for await (const ev of ws.createReader({ dtype: 'raw' }).read(streamOfModel(head, dataSize, p))) {
    maxMemory = Math.max(maxMemory, memory.buffer.byteLength);
    if (ev.type === 'header') header = ev;
    else if (ev.type === 'tensorBegin') seen.set(ev.tensor.name, { sum: [1, 0], bytes: 0 });
    else if (ev.type === 'tensorData') {
      const s = seen.get(ev.tensor.name);
      assert.equal(ev.offset, s.bytes, 'pieces arrive in order, back to back');
      adlerUpdate(s.sum, ev.data);
      s.bytes += ev.data.length;
    } else if (ev.type === 'tensorEnd') {
      seen.get(ev.tensor.name).done = true;
    } else if (ev.type === 'progress') lastProgress = ev;
  }
  assert.ok(maxMemory <= MEMORY_CAP, `wasm memory reached ${maxMemory} bytes`);
  assert.equal(header.dataStart, head.length);
  // Offsets past 2^32 survive the trip through the C ABI (lo/hi words) exactly.
  const last = header.tensors.at(-1);
  assert.deepEqual(last.dataOffsets, [spans[5].begin, spans[5].end]);
  assert.equal(last.offset, head.length + spans[5].begin);
  assert.ok(last.offset > 2 ** 32);
  for (const span of spans) {
    const s = seen.get(span.name);
    assert.ok(s?.done, `${span.name} ended`);
    assert.equal(s.bytes, span.end - span.begin, `${span.name} byte count`);
    assert.deepEqual(s.sum, adlerOfRepeated(p, span.begin, span.end - span.begin), `${span.name} checksum`);
  }
  assert.equal(lastProgress.bytes, head.length + dataSize);
  assert.equal(lastProgress.tensors, TENSORS.length);
});

test('the expected checksums: adlerOfRepeated equals a direct pass over the materialized bytes', () => {
  const p = new Uint8Array(1000).map((_, i) => (i * 7919) & 0xFF);
  for (const [start, len] of [[0, 0], [0, 1000], [3, 997], [999, 2], [250, 5000], [1999, 12345]]) {
    const bytes = new Uint8Array(len).map((_, i) => p[(start + i) % p.length]);
    assert.deepEqual(adlerOfRepeated(p, start, len), adlerUpdate([1, 0], bytes), `start ${start}, len ${len}`);
  }
});
