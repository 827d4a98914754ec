// convert() in Node (issue #29): a synthetic block-FP8 model (bench/convert_bench.py's, written to a
// scratch directory, never the repository) converted to bf16 by the JS package into a directory,
// its time, rate and peak RSS; in the same run, as baselines, the CLI's `weightstream convert` of the
// same model and `cp` of the same input bytes (each after the page cache holds the input), every
// peak RSS from GNU time's %M (a child each), and the outputs compared byte for byte.
//
// usage: node bench/js/convert.mjs [--size-mib N (512)] [--dir DIR (/tmp)] [--cli PATH] [--runs N (2)]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const arg = (name, dflt) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : dflt; };

// The child: one conversion, then its figures on stdout.
if (process.argv[2] === '--child') {
  const ws = await import(join(repo, 'wasm', 'dist', 'weightstream.mjs'));
  const t0 = performance.now();
  const r = await ws.convert(process.argv[3], { to: 'bf16', output: process.argv[4] });
  console.log(JSON.stringify({ seconds: (performance.now() - t0) / 1000, files: r.files.length, totalSize: r.totalSize }));
  process.exit(0);
}

const sizeMib = Number(arg('--size-mib', 512));
const runs = Number(arg('--runs', 2));
const cli = arg('--cli', join(repo, 'build', 'release', 'tools', 'weightstream'));
const scratch = mkdtempSync(join(arg('--dir', '/tmp'), 'ws-convert-bench-'));
try {
  const model = join(scratch, 'in');
  spawnSync('mkdir', ['-p', model]);
  const gen = spawnSync('python3', ['-c', `import sys; sys.path.insert(0, ${JSON.stringify(join(repo, 'bench'))}); import convert_bench as c; print(c.write_model(${JSON.stringify(model)}, ${sizeMib})[0])`], { encoding: 'utf8' });
  if (gen.status !== 0) throw new Error(gen.stderr);
  const inBytes = Number(gen.stdout.trim());
  const file = join(model, 'model.safetensors');
  const timed = (cmd) => {
    const t0 = performance.now();
    const p = spawnSync('/usr/bin/time', ['-f', '%M', ...cmd], { encoding: 'utf8' });
    const seconds = (performance.now() - t0) / 1000;
    if (p.status !== 0) throw new Error(`${cmd.join(' ')}: ${p.stderr}`);
    return { seconds, rssKib: Number(p.stderr.trim().split('\n').at(-1)), out: p.stdout };
  };
  spawnSync('cat', [file], { stdio: ['ignore', 'ignore', 'ignore'] });  // the page cache holds the input
  console.log(`input: ${(inBytes / 2 ** 20).toFixed(0)} MiB block-FP8 (${file}); ${runs} runs each; node ${process.version}`);
  for (let r = 0; r < runs; r++) {
    for (const d of ['cp', 'cli', 'js']) rmSync(join(scratch, d), { recursive: true, force: true });
    const cp = timed(['cp', file, join(scratch, 'cp')]);
    const c = timed([cli, 'convert', model, '-o', join(scratch, 'cli'), '--to', 'bf16', '--no-progress']);
    const js = timed([process.execPath, fileURLToPath(import.meta.url), '--child', file, join(scratch, 'js')]);
    const inner = JSON.parse(js.out);
    const same = readdirSync(join(scratch, 'cli')).filter((n) => !n.startsWith('.'))
      .every((n) => spawnSync('cmp', ['-s', join(scratch, 'cli', n), join(scratch, 'js', n)]).status === 0);
    const rate = (s) => `${(inBytes / s / 1e6).toFixed(0)} MB/s`;
    console.log(`run ${r + 1}: cp ${cp.seconds.toFixed(2)} s (${cp.rssKib} KiB) | CLI ${c.seconds.toFixed(2)} s, ${rate(c.seconds)}, ${(c.rssKib / 1024).toFixed(1)} MiB peak RSS | ` +
      `JS ${js.seconds.toFixed(2)} s (convert() ${inner.seconds.toFixed(2)} s, ${rate(inner.seconds)}), ${(js.rssKib / 1024).toFixed(1)} MiB peak RSS (node itself included) | outputs identical: ${same}`);
  }
  // Node's own baseline: the same child importing the package and converting nothing.
  const idle = timed([process.execPath, '-e', `await import(${JSON.stringify(join(repo, 'wasm', 'dist', 'weightstream.mjs'))}).then((ws) => ws.init())`, '--input-type=module']);
  console.log(`node + the package loaded, nothing converted: ${(idle.rssKib / 1024).toFixed(1)} MiB peak RSS`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
