// The golden comparison of issue #16: what this build of the package says about every fixture
// (tests/js/make-goldens.mjs) against what the package said before the model loader port
// (golden/before.jsonl, recorded from commit e92359a's wasm/dist). Every difference must be
// explained by an entry of golden/differences.jsonl — `intended` (a change the port means to
// make) or `reported` (a change reported to the lead as a bug or an open question; it stays listed
// until it is fixed or decided) — and every entry must still explain something, so that a fix
// shows up as a stale entry to remove.
//
// An entry: {status, reason, case, call, path (regular expressions over the line's case, call and
// the difference's path, golden-diff.mjs), before?, after? (the exact values, when given)}.
//
// To see a difference inside a hashed part ({count, sha256}), write both sides in full:
//   node tests/js/make-goldens.mjs <before dist>/weightstream.mjs /tmp/b.jsonl --full
//   node tests/js/make-goldens.mjs wasm/dist/weightstream.mjs /tmp/a.jsonl --full
//   node tests/js/golden-diff.mjs /tmp/b.jsonl /tmp/a.jsonl
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ws, repo } from './helpers.mjs';
import { goldenLines, line } from './make-goldens.mjs';
import { diff, readLines, lineKey } from './golden-diff.mjs';

const golden = join(repo, 'tests', 'js', 'golden');
const before = readLines(join(golden, 'before.jsonl'));
const entries = readLines(join(golden, 'differences.jsonl')).map((e) => ({
  ...e, re: { case: new RegExp(e.case), call: new RegExp(e.call), path: new RegExp(e.path) }, used: 0,
}));

const explains = (e, l, [path, b, a]) => e.re.case.test(l.case) && e.re.call.test(l.call) && e.re.path.test(path) &&
  (!('before' in e) || JSON.stringify(e.before) === JSON.stringify(b)) && (!('after' in e) || JSON.stringify(e.after) === JSON.stringify(a));

test('every fixture gives the outputs it gave before the model loader port, but for the listed differences', async () => {
  const now = new Map();
  for await (const l of goldenLines(ws)) now.set(lineKey(l), JSON.parse(line(l)));
  const unexplained = [];
  const keys = new Set();
  for (const b of before) {
    const key = lineKey(b);
    keys.add(key);
    const a = now.get(key);
    if (!a) { unexplained.push(`${key}: no longer produced (a fixture or call gone?)`); continue; }
    for (const d of diff(b.out, a.out)) {
      const e = entries.find((x) => explains(x, b, d));
      if (e) { e.used++; continue; }
      unexplained.push(`${key}\n    ${d[0]}: ${JSON.stringify(d[1])?.slice(0, 400)}\n    => ${JSON.stringify(d[2])?.slice(0, 400)}`);
    }
  }
  for (const key of now.keys()) if (!keys.has(key)) unexplained.push(`${key}: new (not in before.jsonl)`);
  assert.deepEqual(unexplained, [], `${unexplained.length} differences not in golden/differences.jsonl:\n${unexplained.slice(0, 40).join('\n')}`);
  const stale = entries.filter((e) => e.used === 0).map((e) => `${e.status}: ${e.reason}`);
  assert.deepEqual(stale, [], 'entries of golden/differences.jsonl that explain nothing any more (fixed? remove them)');
});
