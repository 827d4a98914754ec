// loadToWebGPU's decode on the GPU (wasm/js/gpu-decode) against its CPU decode, in Debian's
// headless Chromium with WebGPU on SwiftShader: for every covered format and both dtypes, every
// output buffer read back is byte for byte the CPU decode's — on ggml's vectors (gguf-py's
// all_quant_types.gguf) and on random blocks with every scale pattern (normal, subnormal, zero,
// -0, the largest fp16, and inf/NaN with validateBlocks off), under whole, random and 1-byte
// source pieces, in several staging chunks, and split over several buffers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../serve.mjs';
import { launch } from './lib/browser.mjs';

const web = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repo = resolve(web, '..');
const { gguf, safetensors } = await import(join(repo, 'tests', 'js', 'helpers.mjs'));

let server, browser, page;
before(async () => {
  server = await startServer({ port: 0 });
  browser = await launch();
  page = await browser.context.newPage();
  page.on('pageerror', (e) => console.log(`# page error: ${e.message}`));
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30000 });
  assert.ok(await page.evaluate(() => !!window.wsPage.state.gpu?.device), 'no WebGPU device');
  // In the page: load `bytes` both ways and compare every buffer read back.
  await page.evaluate(() => {
    window.gpuCompare = async (b64, o) => {
      const ws = await import('/dist/weightstream.mjs');
      const real = window.wsPage.state.gpu.device;
      // A device whose maxBufferSize is lowered (split), everything else the real one's.
      const device = o.maxBufferSize ? new Proxy(real, {
        get(t, k) {
          if (k === 'limits') return { maxBufferSize: o.maxBufferSize, maxStorageBufferBindingSize: t.limits.maxStorageBufferBindingSize, minStorageBufferOffsetAlignment: t.limits.minStorageBufferOffsetAlignment };
          const v = t[k];
          return typeof v === 'function' ? v.bind(t) : v;
        },
      }) : real;
      const bytes = o.files ? null : Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      // Source pieces: whole, random (seeded), or 1 byte; o.files: a UQFF directory's files.
      const source = () => {
        if (o.files) return { uqff: o.files.map((n, i) => new File([Uint8Array.from(atob(b64[i]), (c) => c.charCodeAt(0))], n)) };
        if (o.pieces === 'whole') return bytes.slice();
        let seed = 12345;
        const rnd = () => { seed = (seed * 1103515245 + 12345) >>> 0; return seed >>> 8; };
        let at = 0;
        return new ReadableStream({
          pull(c) {
            if (at >= bytes.length) { c.close(); return; }
            const n = o.pieces === 'one' ? 1 : 1 + (rnd() % 5000);
            c.enqueue(bytes.slice(at, at + n));
            at += n;
          },
        });
      };
      const read = async (buf) => {
        const r = real.createBuffer({ size: buf.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
        const enc = real.createCommandEncoder();
        enc.copyBufferToBuffer(buf, 0, r, 0, buf.size);
        real.queue.submit([enc.finish()]);
        await r.mapAsync(GPUMapMode.READ);
        const out = new Uint8Array(r.getMappedRange().slice(0));
        r.unmap();
        r.destroy();
        return out;
      };
      const run = async (decode) => {
        try {
          const m = await ws.loadToWebGPU(device, source(), { dtype: o.dtype, decode, split: !!o.maxBufferSize, chunkSize: o.chunkSize, validateBlocks: o.validate, decodeChunk: o.decodeChunk, quantization: o.quantization });
          const out = {};
          for (const [name, t] of Object.entries(m.tensors)) {
            const bufs = t.buffers ?? [t.buffer];
            out[name] = { decodedOn: t.decodedOn ?? 'cpu', dtype: t.dtype, shape: t.shape, buffers: bufs.length, sizes: bufs.map((b) => b.size), data: [] };
            for (const b of bufs) out[name].data.push(await read(b));
          }
          const summary = m.gpuDecode;
          m.destroy();
          return { out, summary };
        } catch (e) {
          return { error: { code: e.code, offset: e.offset, tensor: e.tensor }, message: e.message };
        }
      };
      const cpu = await run('cpu');
      const gpu = await run('gpu');
      if (cpu.error || gpu.error) return { cpuError: cpu.error ?? null, gpuError: gpu.error ?? null, gpuMessage: gpu.message ?? null };
      const diffs = [];
      const onGpu = [];
      for (const [name, c] of Object.entries(cpu.out)) {
        const g = gpu.out[name];
        if (!g) { diffs.push(`${name}: missing`); continue; }
        if (g.decodedOn === 'gpu') onGpu.push(name);
        if (JSON.stringify([c.dtype, c.shape, c.sizes]) !== JSON.stringify([g.dtype, g.shape, g.sizes])) { diffs.push(`${name}: ${JSON.stringify([c.dtype, c.shape, c.sizes])} vs ${JSON.stringify([g.dtype, g.shape, g.sizes])}`); continue; }
        for (let k = 0; k < c.data.length; k++) {
          const a = c.data[k], b = g.data[k];
          // o.nanEqual: a NaN the CPU's arithmetic made equals any NaN (dequant.h: with validate off
          // the NaN-ness of inf·0 and friends is promised, its sign and payload are the platform's).
          const isNaN = (u8, i) => {
            const v = new DataView(u8.buffer);
            if (o.dtype === 'f32') { const w = v.getUint32(i & ~3, true); return (w & 0x7F800000) === 0x7F800000 && (w & 0x7FFFFF) !== 0; }
            const h = v.getUint16(i & ~1, true);
            return (h & 0x7C00) === 0x7C00 && (h & 0x3FF) !== 0;
          };
          for (let i = 0; i < a.length; i++) {
            if (a[i] !== b[i] && !(o.nanEqual && isNaN(a, i) && isNaN(b, i))) { diffs.push(`${name} [${k}] byte ${i}: cpu ${a[i]} gpu ${b[i]} (cpu word ${new DataView(a.buffer).getUint32(i & ~3, true).toString(16)} gpu ${new DataView(b.buffer).getUint32(i & ~3, true).toString(16)})`); break; }
          }
        }
      }
      return { names: Object.keys(cpu.out), onGpu, diffs, summary: gpu.summary, buffers: Object.fromEntries(Object.entries(gpu.out).map(([n, t]) => [n, t.buffers])) };
    };
  });
});
after(async () => { await browser?.close(); await server?.close(); });

const b64 = (u8) => Buffer.from(u8).toString('base64');
const compare = (bytes, o) => page.evaluate(([b, opt]) => window.gpuCompare(b, opt), [Array.isArray(bytes) ? bytes.map(b64) : b64(bytes), o]);

const COVERED = ['F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q4_K', 'Q5_K', 'Q6_K', 'Q3_K', 'Q2_K', 'IQ4_NL', 'IQ4_XS', 'MXFP4', 'NVFP4'];
// GGML type ids and block shapes (ggml.h ggml_type; FORMATS.md §6).
const TYPES = {
  F16: { id: 1, be: 1, bb: 2, fp16: [] }, BF16: { id: 30, be: 1, bb: 2, fp16: [] },
  Q4_0: { id: 2, be: 32, bb: 18, fp16: [0] }, Q4_1: { id: 3, be: 32, bb: 20, fp16: [0, 2] },
  Q5_0: { id: 6, be: 32, bb: 22, fp16: [0] }, Q5_1: { id: 7, be: 32, bb: 24, fp16: [0, 2] },
  Q8_0: { id: 8, be: 32, bb: 34, fp16: [0] },
  Q4_K: { id: 12, be: 256, bb: 144, fp16: [0, 2] }, Q5_K: { id: 13, be: 256, bb: 176, fp16: [0, 2] },
  Q6_K: { id: 14, be: 256, bb: 210, fp16: [208] },
  Q3_K: { id: 11, be: 256, bb: 110, fp16: [108] }, Q2_K: { id: 10, be: 256, bb: 84, fp16: [80, 82] },
  IQ4_NL: { id: 20, be: 32, bb: 18, fp16: [0] }, IQ4_XS: { id: 23, be: 256, bb: 136, fp16: [0] },
  // MXFP4's scale is an E8M0 byte (0xFF rejected by the block check); NVFP4's four UE4M3 bytes
  // take every value (no check).
  MXFP4: { id: 39, be: 32, bb: 17, fp16: [], e8m0: [0] }, NVFP4: { id: 40, be: 64, bb: 36, fp16: [] },
};
// E8M0 patterns: the subnormal 2^-128 and 2^-127, 1, the largest exponents (overflow to inf).
const E8M0 = [0, 1, 2, 127, 128, 200, 254];

// Deterministic bytes.
function rng(seed) {
  let s = seed >>> 0;
  return () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s; };
}
// fp16 scale patterns: normal of every exponent, subnormal, ±0, the largest, and (special) inf/NaN.
const SCALES = [0x3C00, 0xBC00, 0x0001, 0x83FF, 0x0000, 0x8000, 0x7BFF, 0xFBFF, 0x0400, 0x2E66, 0x1234, 0xC4D2];
const SPECIAL = [0x7C00, 0xFC00, 0x7E00, 0xFD01];

// `blocks` random blocks of `fmt`, the fp16 fields cycling through `scales`.
function blocksOf(fmt, blocks, seed, scales) {
  const t = TYPES[fmt];
  const r = rng(seed);
  const out = new Uint8Array(blocks * t.bb);
  for (let i = 0; i < out.length; i++) out[i] = r() & 0xFF;
  if (fmt === 'F16' || fmt === 'BF16') return out;
  for (let b = 0; b < blocks; b++) {
    for (const f of t.fp16) {
      const h = scales[(b * 3 + f + (r() % 7)) % scales.length];
      out[b * t.bb + f] = h & 0xFF;
      out[b * t.bb + f + 1] = h >> 8;
    }
    const special = scales.some((h) => SPECIAL.includes(h));
    for (const f of t.e8m0 ?? []) out[b * t.bb + f] = special && b % 5 === 0 ? 0xFF : E8M0[(b + (r() % 3)) % E8M0.length];
  }
  return out;
}

function randomModel(blocksPer, seed, scales) {
  const tensors = [];
  let k = 0;
  for (const fmt of COVERED) {
    const t = TYPES[fmt];
    // An odd element count for the element-wise ones; fewer of the 256-value K blocks.
    const blocks = fmt === 'F16' || fmt === 'BF16' ? blocksPer * 32 + 1 : t.be === 256 ? Math.ceil(blocksPer / 4) : blocksPer;
    tensors.push({ name: `${fmt.toLowerCase()}.weight`, type: t.id, ne: [t.be * blocks], data: blocksOf(fmt, blocks, seed + k++, scales) });
  }
  tensors.push({ name: 'tq2_0.weight', type: 35, ne: [256], data: new Uint8Array(66) });  // not covered: on the CPU
  return gguf(tensors);
}

function assertSame(r, what, expectGpu) {
  assert.equal(r.cpuError ?? null, null, `${what}: ${JSON.stringify(r)}`);
  assert.equal(r.gpuError ?? null, null, `${what}: ${JSON.stringify(r)}`);
  assert.deepEqual(r.diffs, [], what);
  assert.deepEqual(r.onGpu.sort(), expectGpu.sort(), what);
}

const covered = COVERED.map((f) => `${f.toLowerCase()}.weight`);

for (const dtype of ['f32', 'f16']) {
  test(`ggml's vectors (all_quant_types.gguf) decode on the GPU as on the CPU, ${dtype}`, async () => {
    const bytes = readFileSync(join(repo, 'tests', 'data', 'synthetic', 'gguf', 'all_quant_types.gguf'));
    for (const pieces of ['whole', 'random', 'one']) {
      const r = await compare(bytes, { dtype, pieces, chunkSize: pieces === 'one' ? 1 : undefined });
      assertSame(r, `${dtype} ${pieces}`, COVERED.map((f) => f.toLowerCase()));
      assert.ok(r.summary.uploadBytes > 0);
    }
  });

  test(`random blocks with every scale pattern, several staging chunks, ${dtype}`, async () => {
    const bytes = randomModel(300, 7, SCALES);
    for (const pieces of ['whole', 'random']) {
      const r = await compare(bytes, { dtype, pieces, decodeChunk: 4096 });
      assertSame(r, `${dtype} ${pieces}`, covered);
      assert.ok(r.summary.dispatches > 7 * 2, JSON.stringify(r.summary));
    }
    const one = await compare(randomModel(9, 3, SCALES), { dtype, pieces: 'one', chunkSize: 1, decodeChunk: 256 });
    assertSame(one, `${dtype} one`, covered);
  });

  test(`inf and NaN scales with validateBlocks off decode as the CPU's IEEE arithmetic (NaN-ness), ${dtype}`, async () => {
    const r = await compare(randomModel(64, 11, [...SCALES, ...SPECIAL]), { dtype, pieces: 'random', validate: false, decodeChunk: 1024, nanEqual: true });
    assertSame(r, dtype, covered);
  });

  test(`tensors split over several buffers, ${dtype}`, async () => {
    // 4 KiB buffers: every covered tensor takes several, blocks' values straddle them.
    const r = await compare(randomModel(200, 5, SCALES), { dtype, pieces: 'random', maxBufferSize: 4096, decodeChunk: 3000 });
    assertSame(r, dtype, covered);
    for (const n of covered) assert.ok(r.buffers[n] > 1, `${n}: ${r.buffers[n]}`);
  });
}

test('an inf scale fails the GPU decode as the CPU decode: InvalidBlockData at its byte', async () => {
  const blocks = blocksOf('Q4_1', 100, 1, SCALES);
  blocks[57 * 20 + 2] = 0x00; blocks[57 * 20 + 3] = 0x7C;  // block 57's m: +inf
  const bytes = gguf([{ name: 'a', type: 8, ne: [64], data: blocksOf('Q8_0', 2, 2, SCALES) }, { name: 'b', type: 3, ne: [3200], data: blocks }]);
  const r = await compare(bytes, { dtype: 'f32', pieces: 'random', decodeChunk: 400 });
  assert.ok(r.cpuError, JSON.stringify(r));
  assert.deepEqual(r.gpuError, r.cpuError);
  assert.equal(r.cpuError.code, 'InvalidBlockData');
  assert.equal(r.cpuError.tensor, 'b');
});

test('FP8 E4M3 / E5M2 tensors (every byte value) and F16/BF16 of a safetensors file, both dtypes', async () => {
  const every = new Uint8Array(256 * 3 + 1).map((_, i) => (i * 7) & 0xFF);  // every byte, an odd count
  const halves = new Uint8Array(2 * 4097).map((_, i) => (i * 131 + (i >> 8)) & 0xFF);
  const bytes = safetensors({
    e4m3: { dtype: 'F8_E4M3', shape: [every.length], data: every },
    e5m2: { dtype: 'F8_E5M2', shape: [every.length], data: every },
    half: { dtype: 'F16', shape: [4097], data: halves },
    bf: { dtype: 'BF16', shape: [4097], data: halves },
    ints: { dtype: 'I32', shape: [2], data: new Uint8Array(8).fill(1) },
  });
  for (const dtype of ['f32', 'f16']) {
    for (const pieces of ['whole', 'one']) {
      const r = await compare(bytes, { dtype, pieces, chunkSize: pieces === 'one' ? 1 : undefined, decodeChunk: 512 });
      assertSame(r, `${dtype} ${pieces}`, ['e4m3', 'e5m2', 'half', 'bf']);
    }
  }
});

// MLX affine: a safetensors file of quantized linears of every bits (2-8) and group (32/64/128)
// with F32, F16 and BF16 companions (config.json's per-layer overrides), random codes and
// companions of every kind of finite value (subnormal f32/bf16 scales and biases among them).
function mlxModel(seed) {
  const r = rng(seed);
  const tensors = {};
  const quantization = { group_size: 64, bits: 4 };
  const rows = 3, cols = 256;
  const scaleDtypes = ['BF16', 'F16', 'F32'];
  let k = 0;
  const companion = (dtype, n) => {
    const size = dtype === 'F32' ? 4 : 2;
    const out = new Uint8Array(n * size);
    const v = new DataView(out.buffer);
    for (let i = 0; i < n; i++) {
      const kind = r() % 6;
      if (dtype === 'F32') {
        let u = r();
        if (kind === 0) u &= 0x807FFFFF;                             // subnormal
        else if ((u & 0x7F800000) === 0x7F800000) u &= 0xBFFFFFFF;  // finite
        if (kind === 1) u = (u & 0x807FFFFF) | 0x3F000000;          // near 1
        v.setUint32(i * 4, u, true);
      } else {
        let h = r() & 0xFFFF;
        const expMask = dtype === 'F16' ? 0x7C00 : 0x7F80;
        if (kind === 0) h &= ~expMask & 0xFFFF;                      // subnormal
        else if ((h & expMask) === expMask) h &= ~(expMask & (expMask >> 1)) & 0xFFFF;  // finite
        if (kind === 1) h = (h & (dtype === 'F16' ? 0x83FF : 0x807F)) | (dtype === 'F16' ? 0x3800 : 0x3F00);
        v.setUint16(i * 2, h, true);
      }
    }
    return out;
  };
  for (const bits of [2, 3, 4, 5, 6, 8]) {
    for (const group of [32, 64, 128]) {
      const name = `l${k}`;
      const sd = scaleDtypes[k++ % 3];
      quantization[name] = { group_size: group, bits };
      const packed = new Uint8Array(rows * cols * bits / 8);
      for (let i = 0; i < packed.length; i++) packed[i] = r() & 0xFF;
      tensors[`${name}.weight`] = { dtype: 'U32', shape: [rows, cols * bits / 32], data: packed };
      tensors[`${name}.scales`] = { dtype: sd, shape: [rows, cols / group], data: companion(sd, rows * cols / group) };
      tensors[`${name}.biases`] = { dtype: sd, shape: [rows, cols / group], data: companion(sd, rows * cols / group) };
    }
  }
  tensors.norm = { dtype: 'BF16', shape: [cols], data: companion('BF16', cols) };
  return { bytes: safetensors(tensors, { format: 'mlx' }), quantization: { quantization }, names: Object.keys(quantization).filter((n) => n.startsWith('l')).map((n) => `${n}.weight`) };
}

for (const dtype of ['f32', 'f16']) {
  test(`MLX affine 2-8 bits, groups 32/64/128, F32/F16/BF16 companions, ${dtype}`, async () => {
    const m = mlxModel(21);
    for (const pieces of ['whole', 'random']) {
      const r = await compare(m.bytes, { dtype, pieces, quantization: m.quantization });
      assertSame(r, `${dtype} ${pieces}`, [...m.names, 'norm']);
    }
    const split = await compare(m.bytes, { dtype, pieces: 'random', quantization: m.quantization, maxBufferSize: 1024 });
    assertSame(split, `${dtype} split`, [...m.names, 'norm']);
  });
}

test('the MLX fixtures (tests/data/conventions: mlx, mlx-bits, mlx-overrides) decode on the GPU as on the CPU', async () => {
  for (const dir of ['mlx', 'mlx-bits', 'mlx-overrides']) {
    const at = join(repo, 'tests', 'data', 'conventions', dir);
    const bytes = readFileSync(join(at, 'model.safetensors'));
    const quantization = JSON.parse(readFileSync(join(at, 'config.json'), 'utf8'));
    for (const dtype of ['f32', 'f16']) {
      const r = await compare(bytes, { dtype, pieces: 'random', quantization });
      assert.equal(r.cpuError ?? null, null, `${dir} ${dtype}: ${JSON.stringify(r)}`);
      assert.equal(r.gpuError ?? null, null, `${dir} ${dtype}: ${JSON.stringify(r)}`);
      assert.deepEqual(r.diffs, [], `${dir} ${dtype}`);
      assert.ok(r.onGpu.length > 0, `${dir} ${dtype}: nothing on the GPU`);
    }
  }
});

test('an MLX scale that is inf fails the GPU decode as the CPU decode (InvalidBlockData at the scale)', async () => {
  const m = mlxModel(5);
  const bytes = m.bytes.slice();
  // The first F16 scales tensor (l1): its group 3's scale set to +inf.
  const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const at = 8 + n + header['l1.scales'].data_offsets[0] + 3 * 2;
  assert.equal(header['l1.scales'].dtype, 'F16');
  bytes[at] = 0x00; bytes[at + 1] = 0x7C;
  const r = await compare(bytes, { dtype: 'f32', pieces: 'random', quantization: m.quantization });
  assert.ok(r.cpuError, JSON.stringify(r));
  assert.equal(r.cpuError.code, 'InvalidBlockData');
  assert.deepEqual(r.gpuError, r.cpuError);
});

test('the page: "decode on the GPU" beside the dtype loads a GGUF with the decode pass, says what it uploaded, and the check equals the CPU decode', async () => {
  await page.fill('#url', '/corpus/gguf/ok_version_2.gguf');
  await page.click('#open-url');
  await page.waitForFunction(() => ['valid', 'invalid', 'header-valid'].includes(document.getElementById('verdict').dataset.state), null, { timeout: 60000 });
  for (const where of ['main', 'worker']) {
    await page.selectOption('#where', where);
    await page.selectOption('#dtype', 'f16');
    await page.selectOption('#decode', 'gpu');
    await page.waitForFunction(() => /decode on the GPU/.test(document.getElementById('preflight-summary').textContent), null, { timeout: 30000 });
    await page.click('#load');
    await page.waitForFunction(() => ['done', 'error', 'cancelled'].includes(document.getElementById('load-status').dataset.state) && !window.wsPage.state.loading, null, { timeout: 120000 });
    const last = await page.evaluate(() => window.wsPage.state.lastLoad);
    assert.equal(last.ok, true, JSON.stringify(last));
    assert.equal(last.decode, 'gpu');
    assert.ok(last.gpuDecoded > 0, JSON.stringify(last));
    assert.ok(last.uploaded < last.gpuBytes, JSON.stringify(last));
    assert.match(await page.textContent('#load-status'), /decoded on the GPU, .* uploaded/);
    const names = await page.evaluate(() => Object.entries(window.wsPage.state.model.tensors).filter(([, t]) => t.decodedOn === 'gpu').map(([n]) => n));
    const res = await page.evaluate((n) => window.wsPage.check(n).then((r) => ({ cpu: r.cpu, match: r.match })), names[0]);
    assert.equal(res.cpu.equal, true, `${where}: ${JSON.stringify(res)}`);
    await page.screenshot({ path: join(web, 'test-results', `gpu-decode-${where}.png`), fullPage: true });
  }
  await page.selectOption('#decode', 'cpu');
});

// MLX mxfp4 / mxfp8 / nvfp4 (U8 scales: the mode from the shapes), every scale byte the block check
// accepts (E8M0 0 and 254 among them: subnormal and overflowing values), nvfp4 with and without a
// global scale.
function mlxFpModel(seed) {
  const r = rng(seed);
  const rows = 4, cols = 256;
  const bytes = (n, ok) => { const b = new Uint8Array(n); for (let i = 0; i < n; i++) { let v = r() & 0xFF; while (!ok(v)) v = r() & 0xFF; b[i] = v; } return b; };
  const any = () => true;
  const tensors = {
    'fp4.weight': { dtype: 'U32', shape: [rows, cols / 8], data: bytes(rows * cols / 2, any) },
    'fp4.scales': { dtype: 'U8', shape: [rows, cols / 32], data: bytes(rows * cols / 32, (v) => v !== 0xFF) },
    'fp8.weight': { dtype: 'U32', shape: [rows, cols / 4], data: bytes(rows * cols, any) },
    'fp8.scales': { dtype: 'U8', shape: [rows, cols / 32], data: bytes(rows * cols / 32, (v) => v !== 0xFF) },
    'nv.weight': { dtype: 'U32', shape: [rows, cols / 8], data: bytes(rows * cols / 2, any) },
    'nv.scales': { dtype: 'U8', shape: [rows, cols / 16], data: bytes(rows * cols / 16, (v) => (v & 0x7F) !== 0x7F) },
  };
  tensors['fp4.scales'].data.set([0, 1, 254, 127, 128, 2, 253, 200]);
  tensors['fp8.scales'].data.set([0, 1, 254, 127, 128, 2, 253, 200]);
  return { bytes: safetensors(tensors, { format: 'mlx' }), names: ['fp4.weight', 'fp8.weight', 'nv.weight'] };
}

for (const dtype of ['f32', 'f16']) {
  test(`MLX mxfp4, mxfp8, nvfp4, ${dtype}`, async () => {
    const m = mlxFpModel(9);
    for (const pieces of ['whole', 'random']) {
      const r = await compare(m.bytes, { dtype, pieces, quantization: null });
      assertSame(r, `${dtype} ${pieces}`, m.names);
    }
  });
}

test('Ollama blobs (affine int4/int8, mxfp4, mxfp8, nvfp4 with its global scale) decode on the GPU as on the CPU', async () => {
  let gpu = 0;
  for (const dir of ['ollama', 'ollama-inferred']) {
    const at = join(repo, 'tests', 'data', 'conventions', dir, 'blobs');
    for (const f of readdirSync(at)) {
      const bytes = readFileSync(join(at, f));
      for (const dtype of ['f32', 'f16']) {
        const r = await compare(bytes, { dtype, pieces: 'random' });
        if (r.cpuError) continue;  // a blob that is not a model (the manifest's config)
        assert.equal(r.gpuError ?? null, null, `${dir}/${f} ${dtype}: ${JSON.stringify(r)}`);
        assert.deepEqual(r.diffs, [], `${dir}/${f} ${dtype}`);
        gpu += r.onGpu.length;
      }
    }
  }
  assert.ok(gpu >= 2 * 8, `${gpu} tensors on the GPU`);
});

// Issue #27: gpt-oss's <p>_blocks + <p>_scales (MlxMxfp4's decoder) and ModelOpt's nvfp4 with
// weight_scale_2 multiplied as stored (MlxNvfp4's, ws_global() = the scale itself), f32 and f16;
// a weight_scale_2 of zero fails the GPU decode as the CPU's (InvalidBlockData at its bytes).
test('gpt-oss mxfp4 and ModelOpt nvfp4 (tests/data/conventions/hub) decode on the GPU as on the CPU', async () => {
  const hub = join(repo, 'tests', 'data', 'conventions', 'hub');
  for (const dir of ['mxfp4-gpt-oss-no-config', 'modelopt-nvfp4-no-config']) {
    const bytes = readFileSync(join(hub, dir, 'model.safetensors'));
    for (const dtype of ['f32', 'f16']) {
      const r = await compare(bytes, { dtype, pieces: 'random' });
      assert.equal(r.cpuError ?? null, null, `${dir} ${dtype}: ${JSON.stringify(r)}`);
      assert.equal(r.gpuError ?? null, null, `${dir} ${dtype}: ${JSON.stringify(r)}`);
      assert.deepEqual(r.diffs, [], `${dir} ${dtype}`);
      assert.ok(r.onGpu.length >= 2, `${dir} ${dtype}: ${r.onGpu}`);
    }
  }
  const bytes = readFileSync(join(hub, 'modelopt-nvfp4-no-config', 'model.safetensors')).slice();
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const at = 8 + n + header['model.layers.0.mlp.down_proj.weight_scale_2'].data_offsets[0];
  bytes.fill(0, at, at + 4);
  const r = await compare(bytes, { dtype: 'f32', pieces: 'random' });
  assert.equal(r.cpuError?.code, 'InvalidBlockData', JSON.stringify(r));
  assert.deepEqual(r.gpuError, r.cpuError);
});

// compressed-tensors nvfp4-pack-quantized (its weight_global_scale divides: MlxNvfp4's WGSL with
// ws_global_divides(), the quotient by an integer long division) and mxfp4-pack-quantized
// (MlxMxfp4's): the fixtures, then every E4M3 scale byte under global scales whose quotients are
// normal, subnormal, rounded to zero and overflowing, and (validateBlocks off) a zero, inf and
// NaN divisor; a zero divisor with validation fails both decodes at its bytes.
function ctNvfp4Model(seed, global, validate = true) {
  const r = rng(seed);
  const rows = 8, cols = 512;
  const packed = new Uint8Array(rows * cols / 2).map(() => r() & 0xFF);
  // Every byte; with validation, E4M3's NaNs (0x7F, 0xFF: refused at their bytes) one below.
  const scales = new Uint8Array(rows * cols / 16).map((_, i) => (validate && (i & 0x7F) === 0x7F ? (i & 0xFF) - 1 : i & 0xFF));
  const g = new Uint8Array(4);
  new DataView(g.buffer).setUint32(0, global, true);
  return safetensors({
    'm.weight_global_scale': { dtype: 'F32', shape: [1], data: g },
    'm.weight_packed': { dtype: 'U8', shape: [rows, cols / 2], data: packed },
    'm.weight_scale': { dtype: 'F8_E4M3', shape: [rows, cols / 16], data: scales },
  });
}

test('compressed-tensors nvfp4 (the global scale divides) and mxfp4 decode on the GPU as on the CPU', async () => {
  const hub = join(repo, 'tests', 'data', 'conventions', 'hub');
  for (const dir of ['ct-nvfp4-no-config', 'ct-mxfp4']) {
    const bytes = readFileSync(join(hub, dir, 'model.safetensors'));
    const cfg = dir === 'ct-mxfp4' ? JSON.parse(readFileSync(join(hub, dir, 'config.json'), 'utf8')) : undefined;
    for (const dtype of ['f32', 'f16']) {
      const r = await compare(bytes, { dtype, pieces: 'random', quantization: cfg });
      assert.equal(r.cpuError ?? null, null, `${dir} ${dtype}: ${JSON.stringify(r)}`);
      assert.equal(r.gpuError ?? null, null, `${dir} ${dtype}: ${JSON.stringify(r)}`);
      assert.deepEqual(r.diffs, [], `${dir} ${dtype}`);
      assert.ok(r.onGpu.length >= 2, `${dir} ${dtype}: ${r.onGpu}`);
    }
  }
  // 2688 / 0.7431, 1 / 3, 3e38 (quotients subnormal or zero), 1e-30 (overflow to inf), -7.5, a
  // subnormal divisor, two whose quotients of significands 13 and 8 have a round bit, five zero
  // bits and a nonzero remainder below (only the sticky bit rounds them up); with validation
  // off, 0, -0, inf, NaN.
  const globals = [[0x4562B2A4, true], [0x3EAAAAAB, true], [0x7F61A3D4, true], [0x0DA24260, true], [0xC0F00000, true], [0x00000123, true],
    [0x417311D8, true], [0x4175A892, true],
    [0x00000000, false], [0x80000000, false], [0x7F800000, false], [0x7FC00000, false]];
  for (const [bits, validate] of globals) {
    for (const dtype of ['f32', 'f16']) {
      const r = await compare(ctNvfp4Model(bits, bits, validate), { dtype, pieces: 'whole', validate, nanEqual: true });
      assert.equal(r.gpuError ?? null, null, `0x${bits.toString(16)} ${dtype}: ${JSON.stringify(r)}`);
      assert.deepEqual(r.diffs, [], `0x${bits.toString(16)} ${dtype}`);
      assert.deepEqual(r.onGpu, ['m.weight'], `0x${bits.toString(16)} ${dtype}`);
    }
  }
  const r = await compare(ctNvfp4Model(5, 0), { dtype: 'f32', pieces: 'random' });
  assert.equal(r.cpuError?.code, 'InvalidBlockData', JSON.stringify(r));
  assert.deepEqual(r.gpuError, r.cpuError);
});

test('UQFF directories (GGML, unquantized, F8Q8, Afq and mxfp4 layers) decode on the GPU as on the CPU', async () => {
  for (const dir of ['uqff', 'uqff-f8q8']) {
    const at = join(repo, 'tests', 'data', 'conventions', dir);
    const files = ['model-0.uqff', 'model-1.uqff', 'residual.safetensors', 'config.json'];
    for (const dtype of ['f32', 'f16']) {
      const r = await compare(files.map((f) => readFileSync(join(at, f))), { dtype, files });
      assert.equal(r.cpuError ?? null, null, `${dir} ${dtype}: ${JSON.stringify(r)}`);
      assert.equal(r.gpuError ?? null, null, `${dir} ${dtype}: ${JSON.stringify(r)}`);
      assert.deepEqual(r.diffs, [], `${dir} ${dtype}`);
      assert.ok(r.onGpu.length >= (dir === 'uqff' ? 8 : 4), `${dir} ${dtype}: ${r.onGpu}`);
    }
  }
});

test('a large MLX weight decodes in ranges bound at their own offsets (a packed piece over the binding limit), split output', async () => {
  const r0 = rng(77);
  const rows = 64, cols = 1024;
  const rnd = (n) => { const b = new Uint8Array(n); for (let i = 0; i < n; i++) b[i] = r0() & 0xFF; return b; };
  const comp = (n) => { const b = rnd(n * 2); for (let i = 1; i < b.length; i += 2) b[i] &= 0xBF; return b; };  // finite bf16
  const scales = comp(rows * cols / 32);
  const bytes = safetensors({
    'w.biases': { dtype: 'BF16', shape: [rows, cols / 32], data: comp(rows * cols / 32) },
    'w.scales': { dtype: 'BF16', shape: [rows, cols / 32], data: scales },
    'w.weight': { dtype: 'U32', shape: [rows, cols / 8], data: rnd(rows * cols / 2) },
  }, { format: 'mlx' });
  const quantization = { quantization: { group_size: 32, bits: 4 } };
  for (const dtype of ['f32', 'f16']) {
    // 2 KiB of packed bytes a range: 8192 values (256 groups), 8 ranges; 8 KiB output buffers.
    const r = await compare(bytes, { dtype, pieces: 'random', quantization, decodeChunk: 2048, maxBufferSize: 8192 });
    assertSame(r, dtype, ['w.weight']);
    assert.ok(r.summary.dispatches >= 8, JSON.stringify(r.summary));
  }
  // A bad scale in the fifth range: the error names its byte, as the CPU's.
  const bad = bytes.slice();
  const n = Number(new DataView(bad.buffer).getBigUint64(0, true));
  const h = JSON.parse(new TextDecoder().decode(bad.subarray(8, 8 + n)));
  const at = 8 + n + h['w.scales'].data_offsets[0] + (4 * 256 + 17) * 2;
  bad[at] = 0x80; bad[at + 1] = 0x7F;  // bf16 +inf
  const e = await compare(bad, { dtype: 'f32', pieces: 'random', quantization, decodeChunk: 2048 });
  assert.equal(e.cpuError?.code, 'InvalidBlockData', JSON.stringify(e));
  assert.deepEqual(e.gpuError, e.cpuError);
});
