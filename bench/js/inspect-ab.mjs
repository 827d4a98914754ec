// inspect() of the DeepSeek-V3-size header (header.mjs's input) by two versions of the package's
// JS in one process, on the same wasm binary, alternating call by call (so that a loaded machine
// slows both alike): fastest and median of N calls each, and whether their tables are JSON-equal.
//
//   git archive b8d4d29 wasm/js | tar -x -C /tmp/base     # the JS before the lazy table
//   node bench/js/inspect-ab.mjs --base /tmp/base/wasm/js [--calls 25]
//
// Both load wasm/dist/weightstream.wasm (the C ABI the two share; `npm run build` first).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const baseDir = opt('--base', null);
if (!baseDir) throw new Error('--base DIR: a wasm/js directory of another commit (git archive REV wasm/js)');
const N = Number(opt('--calls', 25));
const bin = readFileSync(join(here, '..', '..', 'wasm', 'dist', 'weightstream.wasm'));
const now = await import(join(here, '..', '..', 'wasm', 'js', 'weightstream.mjs'));
const base = await import(join(baseDir, 'weightstream.mjs'));
await now.init({ wasmBinary: bin });
await base.init({ wasmBinary: bin });

// header.mjs's DeepSeek-V3 header, taken from its source so that the two stay the same input.
const src = readFileSync(join(here, 'header.mjs'), 'utf8');
const fn = src.slice(src.indexOf('function deepseekHeader()'), src.indexOf('\n}\n', src.indexOf('function deepseekHeader()')) + 3);
const d = new Function(`${fn}; return deepseekHeader;`)()();
const stream = () => new ReadableStream({ start(c) { for (let o = 0; o < d.bytes.length; o += 1 << 20) c.enqueue(d.bytes.subarray(o, o + (1 << 20))); c.close(); } });
const calls = {
  'base inspect()': () => base.inspect(stream()),
  'inspect()': () => now.inspect(stream()),
  'inspect(), plainArrays': () => now.inspect(stream(), { plainArrays: true }),
  'validate()': () => now.validate(stream()),
};
const times = Object.fromEntries(Object.keys(calls).map((k) => [k, []]));
for (let r = 0; r < 3; r++) for (const f of Object.values(calls)) globalThis.kept = await f();
for (let r = 0; r < N; r++) {
  for (const [k, f] of Object.entries(calls)) {
    const t0 = performance.now();
    globalThis.kept = await f();  // the result survives the call, as a caller's would
    times[k].push(performance.now() - t0);
  }
}
const same = JSON.stringify((await base.inspect(stream())).tensors) === JSON.stringify((await now.inspect(stream())).tensors);
console.log(`node ${process.version}; ${d.tensors.toLocaleString('en')} tensors, ${(d.headerBytes / 1e6).toFixed(2)} MB header; ${N} alternating calls each\n`);
console.log('| call | fastest | median | MB/s (fastest) |');
console.log('|---|---|---|---|');
for (const [k, v] of Object.entries(times)) {
  v.sort((a, b) => a - b);
  console.log(`| ${k} | ${v[0].toFixed(1)} ms | ${v[v.length >> 1].toFixed(1)} ms | ${(d.headerBytes / 1e3 / v[0]).toFixed(0)} |`);
}
console.log(`\nthe two tables JSON-equal: ${same}`);
if (!same) process.exitCode = 1;
