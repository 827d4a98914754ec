// Errors: WeightstreamError's fields and messages, the fix-hint table against the library's list
// of statuses and against the CLI's table (same wording), the arena retry, and — when the CLI is
// built — the same verdict as `weightstream validate --json` for every corpus file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ws, repo, corpus, readJson, streamOf, testdata, le64, concat } from './helpers.mjs';
import { JS_CODES } from '../../wasm/js/hints.mjs';

const wasm = await ws.init();

test('every ws::Status has the library\'s hint (ws_status_hint); the JS codes are no statuses', () => {
  for (let code = 0; code < wasm.statusNames.length; code++) {
    const name = wasm.statusNames[code];
    if (name !== 'Ok' && name !== 'Aborted') assert.notEqual(wasm.statusHint(code), '', name);
  }
  for (const code of Object.keys(JS_CODES)) assert.ok(!wasm.statusNames.includes(code), `${code} is a JS-only code`);
});

test("the hints are the library's table (lib/src/core/status_hint.cpp), row for row: the CLI's words", () => {
  const src = readFileSync(join(repo, 'lib', 'src', 'core', 'status_hint.cpp'), 'utf8').replace(/"\s*\n\s*"/g, '');  // join C string pieces
  const consts = Object.fromEntries([...src.matchAll(/constexpr const char\* (k\w+) =\s*"((?:[^"\\]|\\.)*)";/g)].map((m) => [m[1], m[2]]));
  const rows = [...src.matchAll(/\{Status::(\w+),\s*(?:"((?:[^"\\]|\\.)*)"|(k\w+))\}/g)];
  assert.equal(rows.length, wasm.statusNames.length);
  for (const [, status, text, constant] of rows) {
    assert.equal(wasm.statusHint(wasm.statusCode(status)), (text ?? consts[constant]).replace(/\\"/g, '"'), status);
  }
});

test('a convention error ends with the fix in its convention\'s words (GPTQ\'s bits, not MLX\'s)', () => {
  const bits = wasm.statusCode('ConventionBitsNotAllowed');
  const ids = Object.fromEntries(wasm.conventionNames.map((n, i) => [n, i]));
  assert.match(wasm.statusHint(bits, ids.mlx), /^MLX cannot produce/);
  assert.match(wasm.statusHint(bits, ids.gptq), /^GPTQ packs 2, 3, 4 or 8 bits/);
  assert.match(wasm.statusHint(bits, ids.awq), /4 bits/);
  assert.doesNotMatch(wasm.statusHint(bits), /MLX/);
  assert.match(wasm.statusHint(wasm.statusCode('ConventionUnknownParams'), ids['compressed-tensors']), /num_bits/);
});

test('WeightstreamError: an Error subclass with code, offset, tensor; the message says what, where, the numbers and the fix', async () => {
  const bytes = concat(le64(4294967296), new TextEncoder().encode('{}'));
  const r = await ws.validate(bytes);
  assert.deepEqual(r, {
    valid: false, format: 'safetensors', tensors: 0,
    error: {
      code: 'HeaderTooLarge', offset: 0, tensor: null,
      message: 'HeaderTooLarge at byte 0: declared header length exceeds the header limit (header says 4294967296 bytes; the limit is 100000000). Is this really a safetensors file?',
    },
    warnings: [],
  });
  await assert.rejects(ws.inspect(bytes), (e) => {
    assert.ok(e instanceof Error && e instanceof ws.WeightstreamError);
    assert.equal(e.name, 'WeightstreamError');
    assert.equal(e.code, 'HeaderTooLarge');
    assert.equal(e.offset, 0);
    assert.equal(e.tensor, null);
    assert.equal(e.found, 4294967296n);
    assert.equal(e.expected, 100000000n);
    return true;
  });
  // What the first bytes look like, for files that are not model files at all.
  const html = new TextEncoder().encode('<!DOCTYPE html><html>not found</html>');
  const v = await ws.validate(html);
  assert.equal(v.error.code, 'HeaderTooLarge');
  assert.match(v.error.message, /did the download save an error page instead of the model\?$/);
  // A size mismatch names the tensor and both sizes.
  const header = new TextEncoder().encode('{"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}}');
  const m = await ws.validate(concat(le64(header.length), header, new Uint8Array(20)));
  assert.equal(m.error.message, `TensorSizeMismatch at byte ${8 + header.length - 2} in tensor "w": data_offsets span differs from element count times dtype size (data_offsets span 20 bytes; dtype and shape need 24). The shape and dtype do not match the bytes data_offsets reserve: re-export the model.`);
});

test('ArenaExhausted is answered by one retry with the measured arena, even for a stream', async () => {
  const path = join(testdata, 'real', 'safetensors', 'many_tensors_2001.safetensors');
  const bytes = new Uint8Array(readFileSync(path));
  const h = await ws.inspect(streamOf(bytes, 4096), { arenaSize: 4096 });
  assert.equal(h.tensors.length, 2001);
  const v = await ws.validate(streamOf(bytes, 1000), { arenaSize: 1024 });
  assert.equal(v.valid, true);
  // With a limit the arena cannot meet, the message says what to pass.
  const err = await ws.validate(bytes, { arenaSize: 64, limits: { maxTensors: 10 } });
  assert.equal(err.error.code, 'TooManyTensors');
});

test('I/O problems are WeightstreamErrors too: a missing file is IoError at byte 0', async () => {
  const r = await ws.validate(join(testdata, 'no-such-file.safetensors'));
  assert.equal(r.valid, false);
  assert.equal(r.error.code, 'IoError');
  assert.equal(r.error.offset, 0);
  assert.match(r.error.message, /^IoError at byte 0: the input could not be read \(cannot open .*no-such-file\.safetensors/);
});

const cli = process.env.WS_CLI ?? join(repo, 'build', 'release', 'tools', 'weightstream');
test('the same verdict as the CLI (`weightstream validate --json`) for every corpus file', { skip: existsSync(cli) ? false : `the CLI is not built (${cli})` }, async () => {
  let n = 0;
  for (const format of ['safetensors', 'gguf']) {
    const index = join(corpus, format, 'expected.json');
    if (!existsSync(index)) continue;
    const cases = readJson(index).cases;
    const paths = cases.map((c) => join(corpus, format, c.file));
    let out;
    try {
      out = execFileSync(cli, ['validate', '--json', '--no-progress', ...paths], { encoding: 'utf8', maxBuffer: 64 << 20 });
    } catch (e) {
      out = e.stdout;  // exit status 1: some files are invalid, as they should be
    }
    const lines = out.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines.length, paths.length);
    for (const [i, line] of lines.entries()) {
      // The CLI declares regular files' sizes; so does a Uint8Array source.
      const bytes = new Uint8Array(readFileSync(paths[i]));
      const pick = (x) => (x.error ? { code: x.error.code, offset: x.error.offset, tensor: x.error.tensor } : null);
      const r = await ws.validate(bytes);
      assert.deepEqual(pick(r), pick(line), paths[i]);
      assert.equal(r.valid, line.valid, paths[i]);
      // Size unknown on both sides: the CLI reading standard input, JS a ReadableStream.
      const piped = spawnSync(cli, ['validate', '--json', '--no-progress', '-'], { input: bytes, encoding: 'utf8' });
      const s = await ws.validate(streamOf(bytes, 4096));
      assert.deepEqual(pick(s), pick(JSON.parse(piped.stdout)), `${paths[i]} (stdin)`);
      n++;
    }
  }
  assert.ok(n > 300);
});

test('a wasm trap is contained: a WeightstreamError (InternalError), and the next call gets a fresh module', async () => {
  const wasm = await ws.init();
  // A handle pointer far outside memory: the loader's next() reads out of bounds and traps.
  assert.throws(() => wasm.x.ws_loader_next(0xFFFFFFF0), (e) => e instanceof ws.WeightstreamError && e.code === 'InternalError' &&
    e.cause instanceof WebAssembly.RuntimeError && /^InternalError: the WebAssembly module trapped \(.* in ws_loader_next\)\. This is a bug/.test(e.message));
  const fresh = await ws.init();
  assert.notEqual(fresh, wasm, 'the trapped instance is discarded');
  assert.equal(await ws.init(), fresh, 'and the fresh one is kept');
  const v = await ws.validate(new Uint8Array([1, 2, 3]));
  assert.equal(v.error.code, 'HeaderTooSmall');
});
