// Adler-32 with zlib's combine: the checksum of a concatenation from its parts' checksums, so the
// expected checksum of gigabytes of a repeated pattern costs a few combines, not a pass over them.
export const BASE = 65521;

// Continues (a, b) over u8[start, end).
export function adlerUpdate(state, u8, start = 0, end = u8.length) {
  let a = state[0], b = state[1];
  while (start < end) {
    const n = Math.min(end, start + 5552);  // zlib's NMAX: no overflow before the reduction
    for (; start < n; start++) { a += u8[start]; b += a; }
    a %= BASE;
    b %= BASE;
  }
  state[0] = a;
  state[1] = b;
  return state;
}

export const adlerOf = (u8, start, end) => adlerUpdate([1, 0], u8, start, end);

// adler(A ‖ B) from adler(A), adler(B) and |B| (zlib's adler32_combine).
export function adlerCombine(x, y, lenY) {
  const rem = lenY % BASE;
  let a = x[0] + y[0] + BASE - 1;
  let b = (rem * x[0]) % BASE + x[1] + y[1] + BASE - rem;
  a %= BASE;
  b %= BASE;
  return [a, b];
}

// Adler-32 of `len` bytes of the infinite repetition of `pattern`, starting at position `start`.
export function adlerOfRepeated(pattern, start, len) {
  const C = pattern.length;
  let acc = [1, 0];
  let pos = start;
  let left = len;
  // Up to the next period boundary.
  const head = Math.min(left, (C - (pos % C)) % C);
  if (head) { acc = adlerUpdate(acc, pattern, pos % C, pos % C + head); pos += head; left -= head; }
  // Whole periods, by doubling.
  let k = Math.floor(left / C);
  let unit = adlerOf(pattern);
  let unitLen = C;
  while (k > 0) {
    if (k & 1) acc = adlerCombine(acc, unit, unitLen);
    unit = adlerCombine(unit, unit, unitLen);
    unitLen *= 2;
    k = Math.floor(k / 2);
  }
  left %= C;
  if (left) acc = adlerUpdate(acc, pattern, 0, left);
  return acc;
}
