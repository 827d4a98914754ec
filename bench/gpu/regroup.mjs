// bench/gpu/regroup.mjs: blocks whose size is not a multiple of 4 (Q4_0 18, Q8_0 34, Q6_K 210
// bytes), decoded where they lie (the WGSL reads across word boundaries: what loadToWebGPU does)
// vs regrouped at upload (each block copied in JS to a 4-byte multiple, 20 / 36 / 212, so every
// field read is aligned). Prints, per format, the JS time to regroup per GiB of stored bytes (CPU
// work the stored upload otherwise does not do) and the decode passes' time both ways, in the same
// page. On SwiftShader the pass times are CPU emulation, not a GPU's (the script says so).
//
//   node bench/gpu/regroup.mjs [--blocks N] [--repeat R]
import { startServer } from '../../web/serve.mjs';
import { launch } from '../../web/test/lib/browser.mjs';

const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? Number(process.argv[i + 1]) : dflt; };
const BLOCKS = arg('blocks', 1 << 15);
const REPEAT = arg('repeat', 3);

const server = await startServer({ port: 0 });
const browser = await launch();
try {
  const page = await browser.context.newPage();
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30000 });
  const adapter = (await page.textContent('#adapter')).trim();
  console.log(`bench/gpu/regroup: ${BLOCKS} blocks per format, f32 output, best of ${REPEAT}; adapter: ${adapter}`);
  if (/swiftshader/i.test(adapter)) console.log('NOTE: SwiftShader runs WebGPU on CPU threads: the pass times below are not a GPU\'s.');
  console.log('format  block  padded   regroup in JS s/GiB   pass across words ms   pass regrouped ms');
  for (const [fmt, bb, be] of [['Q4_0', 18, 32], ['Q8_0', 34, 32], ['Q6_K', 210, 256]]) {
    const r = await page.evaluate(async ([fmt, bb, be, blocks, repeat]) => {
      const ws = await import('/dist/weightstream.mjs');
      const device = window.wsPage.state.gpu.device;
      const pad = Math.ceil(bb / 4) * 4;
      const stored = new Uint8Array(blocks * bb);
      for (let i = 0; i < stored.length; i++) stored[i] = (i * 2654435761) >>> 24;
      for (let b = 0; b < blocks; b++) { const at = b * bb + (fmt === 'Q6_K' ? 208 : 0); stored[at] = 0; stored[at + 1] = 0x3C; }
      // Regrouping: block by block into the padded layout (what an upload would have to do).
      const regroup = () => {
        const out = new Uint8Array(blocks * pad);
        for (let b = 0; b < blocks; b++) out.set(stored.subarray(b * bb, b * bb + bb), b * pad);
        return out;
      };
      let tRegroup = Infinity, padded;
      for (let i = 0; i < repeat; i++) { const t0 = performance.now(); padded = regroup(); tRegroup = Math.min(tRegroup, performance.now() - t0); }
      const decoder = ws.WGSL_FORMATS[fmt].wgsl;
      const shader = (stride) => `
@group(0) @binding(0) var<storage, read> ws_src: array<u32>;
@group(0) @binding(1) var<storage, read_write> ws_dst: array<u32>;
${ws.WGSL_COMMON}
${decoder.replaceAll(`b * ${bb}u`, `b * ${stride}u`)}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let t = g.x + g.y * 65535u * 64u;
  if (t >= ${blocks * be}u) { return; }
  ws_dst[t] = ws_decode_${fmt}(t / ${be}u, t % ${be}u);
}`;
      const U = GPUBufferUsage;
      const out = device.createBuffer({ size: blocks * be * 4, usage: U.STORAGE | U.COPY_SRC });
      const time = async (bytes, stride) => {
        const src = device.createBuffer({ size: Math.ceil(bytes.length / 4) * 4, usage: U.STORAGE | U.COPY_DST });
        device.queue.writeBuffer(src, 0, bytes, 0, Math.floor(bytes.length / 4) * 4);
        const module = device.createShaderModule({ code: shader(stride) });
        const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
        const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: src } }, { binding: 1, resource: { buffer: out } }] });
        const run = async () => {
          const enc = device.createCommandEncoder();
          const pass = enc.beginComputePass();
          pass.setPipeline(pipeline);
          pass.setBindGroup(0, group);
          const groups = Math.ceil(blocks * be / 64);
          pass.dispatchWorkgroups(Math.min(groups, 65535), Math.ceil(groups / 65535));
          pass.end();
          const t0 = performance.now();
          device.queue.submit([enc.finish()]);
          await device.queue.onSubmittedWorkDone();
          return performance.now() - t0;
        };
        await run();
        let best = Infinity;
        for (let i = 0; i < repeat; i++) best = Math.min(best, await run());
        src.destroy();
        return best;
      };
      const across = await time(stored, bb);
      const aligned = await time(padded, pad);
      out.destroy();
      return { pad, regroupSPerGiB: (tRegroup / 1000) / (stored.length / 2 ** 30), across, aligned };
    }, [fmt, bb, be, BLOCKS, REPEAT]);
    console.log(`${fmt.padEnd(7)} ${String(bb).padStart(5)}  ${String(r.pad).padStart(6)}   ${r.regroupSPerGiB.toFixed(3).padStart(19)}   ${r.across.toFixed(2).padStart(20)}   ${r.aligned.toFixed(2).padStart(17)}`);
  }
} finally {
  await browser.close();
  await server.close();
}
