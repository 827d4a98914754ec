// The npm package: its entry point and exports, the TypeScript declarations against the runtime
// exports, and the three ways of loading the .wasm (next to the module via fs in Node, given as
// bytes, fetched from a URL as browsers do).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execFile } from 'node:child_process';
import { repo, testdata } from './helpers.mjs';
import { serve } from './http-server.mjs';

const wasmDir = join(repo, 'wasm');
const pkg = JSON.parse(readFileSync(join(wasmDir, 'package.json'), 'utf8'));
const entry = join(wasmDir, pkg.exports['.'].default);
const sample = join(testdata, 'real', 'safetensors', 'basic_f32.safetensors');

test('package.json: name, ESM exports with types, Node >= 20, files', () => {
  assert.equal(pkg.name, 'weightstream');
  assert.equal(pkg.type, 'module');
  assert.equal(pkg.exports['.'].default, './dist/weightstream.mjs');
  assert.equal(pkg.exports['.'].types, './dist/weightstream.d.ts');
  assert.equal(pkg.engines.node, '>=20');
  for (const f of [entry, join(wasmDir, 'dist', 'weightstream.wasm'), join(wasmDir, 'dist', 'weightstream.d.ts')]) assert.ok(existsSync(f), f);
});

test('the TypeScript declarations name exactly the runtime exports', async () => {
  const mod = await import(pathToFileURL(entry).href);
  const dts = readFileSync(join(wasmDir, 'types', 'weightstream.d.ts'), 'utf8');
  // Overloads (inspect's) declare a name more than once.
  const declared = [...new Set([...dts.matchAll(/^export declare (?:function|class|const) (\w+)/gm)].map((m) => m[1]))].sort();
  assert.deepEqual(declared, Object.keys(mod).sort());
});

// Each in a fresh Node process: the module is loaded once per process.
function runFresh(code) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', `import * as ws from ${JSON.stringify(pathToFileURL(entry).href)};\n${code}`],
      { encoding: 'utf8' }, (err, stdout, stderr) => (err ? reject(new Error(stderr || err.message)) : resolve(stdout.trim())));
  });
}

test('loading: from the file next to the module, from bytes, and by fetch from a URL (as browsers do)', async () => {
  const at = JSON.stringify(sample);
  assert.equal(await runFresh(`console.log((await ws.validate(${at})).valid)`), 'true');
  assert.equal(await runFresh(`import { readFileSync } from 'node:fs';
    await ws.init({ wasmBinary: readFileSync(new URL('./weightstream.wasm', ${JSON.stringify(pathToFileURL(entry).href)})) });
    console.log((await ws.inspect(${at})).tensors.at(0).name)`), 'weight');
  const bytes = readFileSync(join(wasmDir, 'dist', 'weightstream.wasm'));
  const srv = await serve(new Map([['/weightstream.wasm', bytes]]));
  try {
    assert.equal(await runFresh(`await ws.init({ wasmUrl: '${srv.base}/weightstream.wasm' }); console.log((await ws.validate(${at})).valid)`), 'true');
    assert.equal(srv.stats.requests, 1);
  } finally {
    await srv.close();
  }
});
