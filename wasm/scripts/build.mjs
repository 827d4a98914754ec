// npm run build: the Emscripten build of lib/ + the C ABI (wasm/CMakeLists.txt) in build/wasm at
// the repository's root, then dist/ = the ES modules of js/ bundled (weightstream.mjs, worker.mjs
// and the chunk they share, with source maps), the .wasm and the TypeScript types.
// Prints the module's size, raw and gzipped.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const wasmDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const root = resolve(wasmDir, '..');
const buildDir = process.env.WS_WASM_BUILD_DIR ?? join(root, 'build', 'wasm');
const dist = join(wasmDir, 'dist');

// Debian's Emscripten 3.1.6 runs its JS optimizer under node and needs Debian's node modules.
const env = { ...process.env, NODE_PATH: [process.env.NODE_PATH, '/usr/share/nodejs'].filter(Boolean).join(':') };

function run(cmd, args) {
  console.log(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env });
  if (r.error) throw new Error(`${cmd}: ${r.error.message} (run tools/install-deps.sh)`);
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const generator = spawnSync('ninja', ['--version']).status === 0 ? ['-G', 'Ninja'] : [];
if (!existsSync(join(buildDir, 'CMakeCache.txt'))) {
  run('emcmake', ['cmake', '-S', wasmDir, '-B', buildDir, ...generator, '-DCMAKE_BUILD_TYPE=Release']);
}
// One job: the CI machine has 2 cores and other builds may be running.
run('cmake', ['--build', buildDir, '-j1']);

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
// The two entry points (the package and weightstream/worker), bundled and minified by esbuild: the
// modules they share go into one chunk both import (one instance of every module's state, as
// when the sources are loaded unbundled), names and comments of js/ stay in the source maps.
// Node built-ins are imported lazily, only under Node, and stay imports.
const esbuild = await import('esbuild');
await esbuild.build({
  entryPoints: { weightstream: join(wasmDir, 'js', 'weightstream.mjs'), worker: join(wasmDir, 'js', 'worker.mjs') },
  outdir: dist,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  external: ['node:*'],
  minify: true,
  sourcemap: 'linked',
  legalComments: 'none',
  logLevel: 'warning',
});
cpSync(join(buildDir, 'weightstream.wasm'), join(dist, 'weightstream.wasm'));
// The WGSL decoders as files (the same strings the package exports): dist/wgsl/<FORMAT>.wgsl,
// each the common functions and the format's decoder (gpu-decode/wgsl.mjs documents the binding).
const { GPU_FORMATS, wgslDecoder } = await import('../js/gpu-decode/wgsl.mjs');  // (companion formats included)
mkdirSync(join(dist, 'wgsl'), { recursive: true });
for (const f of GPU_FORMATS) writeFileSync(join(dist, 'wgsl', `${f}.wgsl`), wgslDecoder(f));
for (const f of ['weightstream.d.ts', 'worker.d.ts']) cpSync(join(wasmDir, 'types', f), join(dist, f));

// Sizes: the .wasm alone, and everything a page loads (the .wasm and every .mjs).
const files = readdirSync(dist).filter((f) => f.endsWith('.mjs') || f.endsWith('.wasm'));
let raw = 0, gz = 0;
for (const f of files) {
  const bytes = readFileSync(join(dist, f));
  raw += bytes.length;
  gz += gzipSync(bytes, { level: 9 }).length;
}
const wasmBytes = readFileSync(join(dist, 'weightstream.wasm'));
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
console.log(`weightstream.wasm: ${kb(wasmBytes.length)} raw, ${kb(gzipSync(wasmBytes, { level: 9 }).length)} gzip`);
console.log(`dist (wasm + ${files.length - 1} ES modules): ${kb(raw)} raw, ${kb(gz)} gzip (target <= 150 KiB gzip)`);
console.log(`built ${dist} (${statSync(join(dist, 'weightstream.mjs')).size} B entry)`);
