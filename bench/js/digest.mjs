// What SHA-256 verification costs in the package (issue #17): validate() of one safetensors file
// held in memory, without and with its expected digest (the loader hashes with ws::Sha256, built
// to wasm), beside node's own SHA-256 (OpenSSL, native) of the same bytes. Same process, best of 3.
//
//   node bench/js/digest.mjs [--mib 256]
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ws = await import(join(repo, 'wasm', 'dist', 'weightstream.mjs'));
const arg = process.argv.indexOf('--mib');
const mib = arg > 0 ? Number(process.argv[arg + 1]) : 256;

// One F16 tensor of `mib` MiB (a deterministic pattern), header padded to 8 bytes.
const n = mib * 1048576;
let json = JSON.stringify({ w: { dtype: 'F16', shape: [n / 2], data_offsets: [0, n] } });
while ((json.length + 8) % 8) json += ' ';
const head = new TextEncoder().encode(json);
const file = new Uint8Array(8 + head.length + n);
new DataView(file.buffer).setBigUint64(0, BigInt(head.length), true);
file.set(head, 8);
for (let i = 8 + head.length, x = 1; i < file.length; i++) { x = (x * 1103515245 + 12345) >>> 0; file[i] = x >>> 24; }
const digest = createHash('sha256').update(file).digest('hex');

async function best(f) {
  let t = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    await f();
    t = Math.min(t, (performance.now() - t0) / 1000);
  }
  return t;
}
const rate = (s) => (file.length / s / 1e6).toFixed(0);

const plain = await best(async () => { const v = await ws.validate(file); if (!v.valid) throw new Error(JSON.stringify(v)); });
const verified = await best(async () => { const v = await ws.validate(file, { sha256: digest }); if (!v.valid) throw new Error(JSON.stringify(v)); });
const bad = await ws.validate(file, { sha256: '0'.repeat(64) });
if (bad.error?.code !== 'DigestMismatch') throw new Error('a wrong digest was not noticed');
const native = await best(async () => createHash('sha256').update(file).digest('hex'));
// The hash alone in wasm: the verified load's extra time.
const hashOnly = verified - plain;

console.log(`validate() of a ${mib} MiB safetensors file in memory (node ${process.version}), best of 3:`);
console.log(`  without a digest             ${plain.toFixed(3)} s  ${rate(plain).padStart(6)} MB/s`);
console.log(`  with sha256 (ws::Sha256)     ${verified.toFixed(3)} s  ${rate(verified).padStart(6)} MB/s   (x${(verified / plain).toFixed(2)})`);
console.log(`  SHA-256 in wasm (the difference)        ${rate(hashOnly).padStart(6)} MB/s`);
console.log(`  node crypto SHA-256 (OpenSSL, native)   ${rate(native).padStart(6)} MB/s   (wasm/native ${(native / hashOnly).toFixed(2)})`);
