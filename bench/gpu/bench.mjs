// bench/gpu: loadToWebGPU's CPU decode vs its GPU decode (decode: 'gpu'), per covered format, in
// Debian's headless Chromium (web/test/lib/browser.mjs: WebGPU on SwiftShader), in the same run.
// Prints per format and dtype the bytes uploaded per output element, the page's CPU time per GiB of
// output (its main thread's task time: the JS and wasm of the load) and the wall time per GiB (load
// from memory to the last submitted pass done), each of the fastest of REPEAT runs.
//
//   node bench/gpu/bench.mjs [--elements N] [--repeat R] [--dtype f16|f32|both]
//
// On SwiftShader the "GPU" is CPU threads: its decode time is not a GPU's (the script says so).
import { startServer } from '../../web/serve.mjs';
import { launch } from '../../web/test/lib/browser.mjs';
import { gguf, safetensors } from '../../tests/js/helpers.mjs';

const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : dflt; };
const ELEMENTS = Number(arg('elements', 1 << 22));
const REPEAT = Number(arg('repeat', 3));
const DTYPES = arg('dtype', 'both') === 'both' ? ['f16', 'f32'] : [arg('dtype')];
// GGML ids, block elements and bytes, the fp16 fields (set to 1.0 so values stay finite).
const FORMATS = {
  F16: [1, 1, 2, []], BF16: [30, 1, 2, []], Q8_0: [8, 32, 34, [0]], Q4_0: [2, 32, 18, [0]], Q4_1: [3, 32, 20, [0, 2]],
  Q5_0: [6, 32, 22, [0]], Q5_1: [7, 32, 24, [0, 2]], Q4_K: [12, 256, 144, [0, 2]], Q5_K: [13, 256, 176, [0, 2]], Q6_K: [14, 256, 210, [208]],
};

// MLX affine 4-bit, group 64, BF16 scales and biases (the "MLX int4 g64").
const MLX = 'MLX_int4_g64';

function model(fmt) {
  if (fmt === MLX) {
    const rows = 64, cols = ELEMENTS / rows;
    const packed = new Uint8Array(ELEMENTS / 2);
    let s = 7;
    for (let i = 0; i < packed.length; i++) { s = (s * 1103515245 + 12345) >>> 0; packed[i] = s >>> 24; }
    const comp = () => { const c = new Uint8Array(ELEMENTS / 64 * 2); for (let i = 0; i < c.length; i += 2) { c[i] = i & 0xFF; c[i + 1] = 0x3C; } return c; };
    const bytes = safetensors({
      'w.biases': { dtype: 'BF16', shape: [rows, cols / 64], data: comp() },
      'w.scales': { dtype: 'BF16', shape: [rows, cols / 64], data: comp() },
      'w.weight': { dtype: 'U32', shape: [rows, cols / 8], data: packed },
    }, { format: 'mlx' });
    return { bytes, name: 'w.weight', options: { quantization: { quantization: { group_size: 64, bits: 4 } } } };
  }
  return { bytes: ggufOf(fmt), name: 'w', options: {} };
}

function ggufOf(fmt) {
  const [id, be, bb, fields] = FORMATS[fmt];
  const blocks = ELEMENTS / be;
  const data = new Uint8Array(blocks * bb);
  let s = 1;
  for (let i = 0; i < data.length; i++) { s = (s * 1103515245 + 12345) >>> 0; data[i] = s >>> 24; }
  if (fmt === 'F16' || fmt === 'BF16') for (let i = 1; i < data.length; i += 2) data[i] &= 0x3F;  // finite
  for (let b = 0; b < blocks; b++) for (const f of fields) { data[b * bb + f] = 0x00; data[b * bb + f + 1] = 0x3C; }
  return gguf([{ name: 'w', type: id, ne: [ELEMENTS], data }]);
}

const server = await startServer({ port: 0 });
const browser = await launch();
try {
  const page = await browser.context.newPage();
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30000 });
  const adapter = await page.textContent('#adapter');
  const cdp = await browser.context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const taskSeconds = async () => (await cdp.send('Performance.getMetrics')).metrics.find((x) => x.name === 'TaskDuration').value;
  console.log(`bench/gpu: ${ELEMENTS} elements per tensor, best of ${REPEAT}; adapter: ${adapter.trim()}`);
  if (/swiftshader/i.test(adapter)) console.log('NOTE: SwiftShader runs WebGPU on CPU threads: the GPU decode time below is not a GPU\'s.');
  console.log('                    upload B/elem     CPU s/GiB-out      wall s/GiB-out');
  console.log('format       dtype    cpu    gpu      cpu-decode    gpu   cpu-decode     gpu');
  for (const fmt of [...Object.keys(FORMATS), MLX]) {
    const m = model(fmt);
    const b64 = Buffer.from(m.bytes).toString('base64');
    await page.evaluate((b) => { window.benchBytes = Uint8Array.from(atob(b), (c) => c.charCodeAt(0)); }, b64);
    for (const dtype of DTYPES) {
      // One load in the page: its wall time (bytes in memory to the last pass done) and the page's
      // main-thread task time (Chrome's Performance.getMetrics TaskDuration: the JS and wasm the
      // load ran on the CPU; WebGPU's work runs in the GPU process, SwiftShader's included).
      const once = async (decode) => {
        const before = await taskSeconds();
        const x = await page.evaluate(async ([dtype, decode, name, extra]) => {
          const ws = await import('/dist/weightstream.mjs');
          const device = window.wsPage.state.gpu.device;
          const t0 = performance.now();
          const m = await ws.loadToWebGPU(device, window.benchBytes, { dtype, decode, ...extra });
          await device.queue.onSubmittedWorkDone();
          const t = performance.now() - t0;
          const out = m.tensors[name].byteLength;
          const upload = m.gpuDecode ? m.gpuDecode.uploadBytes : out;
          m.destroy();
          return { t, out, upload };
        }, [dtype, decode, m.name, m.options]);
        x.cpu = (await taskSeconds()) - before;
        return x;
      };
      const r = {};
      for (const decode of ['cpu', 'gpu']) {
        await once(decode);  // warm: pipelines, wasm
        let b = null;
        for (let i = 0; i < REPEAT; i++) { const x = await once(decode); if (!b || x.t < b.t) b = x; }
        r[decode] = b;
      }
      const per = (x) => (x.upload / ELEMENTS).toFixed(3);
      const perGiB = (v, x) => (v / (x.out / 2 ** 30)).toFixed(2);
      console.log(`${fmt.padEnd(12)} ${dtype.padEnd(6)} ${per(r.cpu).padStart(9)} ${per(r.gpu).padStart(6)}  ${perGiB(r.cpu.cpu, r.cpu).padStart(12)} ${perGiB(r.gpu.cpu, r.gpu).padStart(6)}  ${perGiB(r.cpu.t / 1000, r.cpu).padStart(12)} ${perGiB(r.gpu.t / 1000, r.gpu).padStart(7)}`);
    }
  }
} finally {
  await browser.close();
  await server.close();
}
