// The differences between two golden lines (tests/js/make-goldens.mjs), as [path, before, after]:
// objects key by key, arrays of named things (tensors, files) by name — a change of their order is
// one difference at `<path>:order` — other arrays index by index. Shared by goldens.test.mjs and
// for reading two --full runs side by side:
//   node tests/js/golden-diff.mjs before.jsonl after.jsonl
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

// What names an element of an array: an output (its file and tensor), a header event (its file), a
// tensor or file entry; null for anything else.
function nameOf(o) {
  if (!o || typeof o !== 'object' || Array.isArray(o)) return null;
  if (o.tensor?.name !== undefined) return `${o.shard ?? ''}:${o.tensor.name}`;
  if (o.type === 'header') return `header ${o.shard ?? ''}`;
  if (o.name !== undefined) return `${o.shard ?? o.file ?? ''}:${o.name}`;
  if (o.file !== undefined) return `${o.file}:`;
  return null;
}

export function diff(x, y, path = '', out = []) {
  if (JSON.stringify(x) === JSON.stringify(y)) return out;
  // Arrays of plain values (event order, names, shapes) are one value.
  if (Array.isArray(x) && Array.isArray(y) && [...x, ...y].every((e) => e === null || typeof e !== 'object')) {
    out.push([path, x, y]);
    return out;
  }
  if (Array.isArray(x) && Array.isArray(y) && x.length && y.length && [...x, ...y].every((e) => nameOf(e) !== null)) {
    const kx = x.map(nameOf), ky = y.map(nameOf);
    if (new Set(kx).size === kx.length && new Set(ky).size === ky.length) {
      const mx = new Map(x.map((e, i) => [kx[i], e])), my = new Map(y.map((e, i) => [ky[i], e]));
      const common = (a, m) => a.filter((k) => m.has(k));
      if (JSON.stringify(common(kx, my)) !== JSON.stringify(common(ky, mx))) out.push([`${path}:order`, kx, ky]);
      for (const k of new Set([...kx, ...ky])) diff(mx.get(k), my.get(k), `${path}[${k}]`, out);
      return out;
    }
  }
  if (x && y && typeof x === 'object' && typeof y === 'object' && Array.isArray(x) === Array.isArray(y)) {
    for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) diff(x[k], y[k], `${path}.${k}`, out);
    return out;
  }
  out.push([path, x ?? null, y ?? null]);
  return out;
}

export const readLines = (p) => readFileSync(p, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
export const lineKey = (l) => `${l.case} | ${l.call}`;

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const [a, b] = process.argv.slice(2, 4).map(readLines);
  const mb = new Map(b.map((l) => [lineKey(l), l]));
  for (const l of a) {
    const o = mb.get(lineKey(l));
    if (!o) { console.log(`## ${lineKey(l)}: missing from the second file`); continue; }
    const d = diff(l.out, o.out);
    if (!d.length) continue;
    console.log(`## ${lineKey(l)}`);
    for (const [p, x, y] of d) console.log(`   ${p}: ${JSON.stringify(x)?.slice(0, 300)}  =>  ${JSON.stringify(y)?.slice(0, 300)}`);
  }
}
