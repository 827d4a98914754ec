// The WGSL decoders: per covered format, a function that decodes element i of block b of a block
// buffer to the bits of its f32 value, exactly as the library's reference kernels form it
// (lib/src/kernels/reference; ggml's dequantize_row_* for the GGML blocks). The decode pass
// (pass.mjs) is built from these strings, so the functions engines call are the ones the
// Playwright tests check byte for byte against the CPU decode.
//
// Binding layout (what an engine declares around them; the decode pass declares exactly this):
//   var<storage, read> ws_src: array<u32>;   the stored bytes, block 0 at byte 0, little-endian,
//                                            blocks back to back (an 18-byte Q4_0 block starts at
//                                            byte 18·b: no regrouping, reads cross words)
//   fn ws_decode_<FORMAT>(b: u32, i: u32) -> u32    element i (0 ≤ i < block elements) of block b:
//                                                   the f32 bit pattern (bitcast<f32>() it)
//   fn ws_check_<FORMAT>(b: u32) -> u32             the byte offset in block b of its first fp16
//                                                   scale that is inf or NaN (the library's
//                                                   InvalidBlockData), 0xFFFFFFFF when valid
//   fn ws_f32_to_f16(x: u32) -> u32                 f32 bits to binary16 bits, round to nearest even
// Packed weights with companions (WGSL_COMPANION_FORMATS, MLX affine) read two more arrays the
// engine declares, `ws_scales` and `ws_biases` (array<u32>, the companion tensors' stored bytes),
// and constants it defines (WS_BITS, WS_GROUP, WS_SCALE); there b is the group. MlxNvfp4 also
// calls ws_has_global(), ws_global_is_ollama(), ws_global_divides() and ws_global() (MLX: global
// scale / 2688; Ollama, ModelOpt and compressed-tensors: the global scale; f32 bits).
// `dtype: 'raw'` uploads exactly these layouts: a GGUF tensor's buffer is its stored blocks, an
// MLX weight's packed, scales and biases tensors are buffers of their own.
//
// Why integers: WGSL (W3C WGSL, "Floating Point Evaluation") leaves open exactly what bit-identity
// needs. Its f32 `x * y` and `x + y` are "correctly rounded" in the sense of "Floating Point
// Accuracy" (#floating-point-accuracy: either representable neighbour of the exact result, not
// necessarily round-to-nearest-even); "Floating Point Overview" (#floating-point-overview) lets an
// implementation flush subnormal inputs and results to zero, ignore the sign of zero, and treat
// results that would be inf or NaN as indeterminate values; "Reassociation and Fusion"
// (#reassociation-and-fusion) lets it fuse x * y + z into an FMA; and f32 -> f16 conversion and
// pack2x16float (#pack2x16float-builtin) round in a direction "Floating Point Conversion"
// (#floating-point-conversion) does not fix to nearest-even. So the decoders use no float
// arithmetic at all: a GGML value is an exact product (an 11-bit fp16 significand times integers
// of at most 13 bits) built into f32 bits by shifting; every rounding the CPU kernels do (the _1
// and K formats' one addition, MLX's s·q and + b, F8Q8's division, nvfp4's global scale) is done
// here in integers to nearest even with subnormals (ws_add_rne, ws_mul_rne_e, ws_round_pack); and
// f16 output is ws_f32_to_f16, a port of the library's kernels::f32_to_fp16. Nothing is left for
// flushing, fusion or a rounding mode to change.

export const WGSL_COMMON = /* wgsl */ `
// --- weightstream common: byte reads from ws_src and exact f32 construction ---
fn ws_byte(o: u32) -> u32 { return (ws_src[o >> 2u] >> ((o & 3u) * 8u)) & 0xFFu; }
// A little-endian u16 at any byte offset (18-, 34-, 210-byte blocks put halves across words).
fn ws_u16(o: u32) -> u32 {
  let s = (o & 3u) * 8u;
  let w = o >> 2u;
  if (s <= 16u) { return (ws_src[w] >> s) & 0xFFFFu; }
  return ((ws_src[w] >> 24u) | (ws_src[w + 1u] << 8u)) & 0xFFFFu;
}
fn ws_u32(o: u32) -> u32 {
  let s = (o & 3u) * 8u;
  let w = o >> 2u;
  if (s == 0u) { return ws_src[w]; }
  return (ws_src[w] >> s) | (ws_src[w + 1u] << (32u - s));
}
// The f32 bits of (-1)^neg · n · 2^e, exact: n < 2^24 and the result a normal f32 (every GGML
// value is: at least 2^-24 in magnitude and far below 2^128). n = 0 is a zero of that sign.
fn ws_f32_exact(neg: bool, n: u32, e: i32) -> u32 {
  let sign = select(0u, 0x80000000u, neg);
  if (n == 0u) { return sign; }
  let p = firstLeadingBit(n);
  let m = n << (23u - p);
  return sign | (u32(e + i32(p) + 127) << 23u) | (m & 0x7FFFFFu);
}
// An fp16 as an exact integer significand and exponent: value = (-1)^s · m · 2^e. w.z: 1 for inf
// or NaN (then the caller takes ws_f16_to_f32 and the IEEE rules).
struct WsF16 { s: bool, m: u32, e: i32, special: bool }
fn ws_f16_split(h: u32) -> WsF16 {
  let ex = (h >> 10u) & 0x1Fu;
  let man = h & 0x3FFu;
  if (ex == 0u) { return WsF16((h & 0x8000u) != 0u, man, -24, false); }
  return WsF16((h & 0x8000u) != 0u, man | 0x400u, i32(ex) - 25, ex == 31u);
}
// binary16 -> binary32 bits, exact; NaN quiet with its sign (kernels::fp16_to_f32).
fn ws_f16_to_f32(h: u32) -> u32 {
  let sign = (h & 0x8000u) << 16u;
  let ex = (h >> 10u) & 0x1Fu;
  let man = h & 0x3FFu;
  if (ex == 0x1Fu) { return sign | 0x7F800000u | select(0u, 0x400000u | (man << 13u), man != 0u); }
  if (ex != 0u) { return sign | ((ex + 112u) << 23u) | (man << 13u); }
  return ws_f32_exact(sign != 0u, man, -24);
}
// f32 bits -> binary16 bits, round to nearest even; overflow inf; NaN quiet with sign and the top
// payload bits (kernels::f32_to_fp16, the rule every CPU kernel's f16 output follows).
fn ws_f32_to_f16(x: u32) -> u32 {
  let sign = (x >> 16u) & 0x8000u;
  let ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) { return sign | 0x7E00u | ((ax >> 13u) & 0x3FFu); }
  if (ax >= 0x477FF000u) { return sign | 0x7C00u; }
  if (ax < 0x38800000u) {
    if (ax < 0x33000000u) { return sign; }
    let e = ax >> 23u;
    let m = (ax & 0x7FFFFFu) | 0x800000u;
    let shift = 126u - e;
    var q = m >> shift;
    let rem = m & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u) == 1u)) { q = q + 1u; }
    return sign | q;
  }
  let r = ax - 0x38000000u;
  var q = r >> 13u;
  let rem = r & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1u) == 1u)) { q = q + 1u; }
  return sign | q;
}
// x86's (and so wasm's on x86: the CPU decode in the browser) default NaN, which IEEE arithmetic
// creates for inf·0 and inf - inf. dequant.h: "the sign of a NaN that arithmetic creates is the
// platform's"; only blocks with inf/NaN scales decoded with validateBlocks: false reach it.
const WS_NAN_CREATED: u32 = 0xFFC00000u;
// (-1)^sq · q times the fp16 d, as IEEE has it: the product is exact (q < 2^13).
fn ws_mul_f16(negq: bool, q: u32, h: u32) -> u32 {
  let d = ws_f16_split(h);
  if (d.special) {
    let f = ws_f16_to_f32(h);
    if ((f & 0x7FFFFFu) != 0u) { return f; }            // NaN: it propagates
    if (q == 0u) { return WS_NAN_CREATED; }             // inf · 0
    return f ^ select(0u, 0x80000000u, negq);           // ±inf
  }
  return ws_f32_exact(negq != d.s, q * d.m, d.e);
}
// Normalizes n·2^e (n != 0) so its leading bit is bit 29; returns the shifted n, the exponent
// through the pointer.
fn ws_norm29(n: u32, e: ptr<function, i32>) -> u32 {
  let p = firstLeadingBit(n);
  if (p <= 29u) { *e = *e - i32(29u - p); return n << (29u - p); }
  *e = *e + i32(p - 29u);
  return n >> (p - 29u);  // callers pass n < 2^24: never taken
}
// Rounds (-1)^neg · S · 2^e to the nearest f32, ties to even (S: leading bit at bit 29, bit 0 a
// sticky bit for anything shifted out below): normal, subnormal (below 2^-126: rounded at 2^-149)
// or ±inf (from 2^128 up), as IEEE's one rounding of an exact result gives it.
fn ws_round_pack(neg: bool, S: u32, e: i32) -> u32 {
  let sign = select(0u, 0x80000000u, neg);
  var E = e + 29 + 127;  // the biased exponent of the leading bit
  if (E >= 1) {
    var m = S >> 6u;
    let rem = S & 63u;
    if (rem > 32u || (rem == 32u && (m & 1u) == 1u)) { m = m + 1u; }
    if (m == 0x1000000u) { m = m >> 1u; E = E + 1; }
    if (E >= 255) { return sign | 0x7F800000u; }
    return sign | (u32(E) << 23u) | (m & 0x7FFFFFu);
  }
  // Subnormal: S · 2^e in units of 2^-149 is S >> shift.
  let shift = u32(6 + 1 - E);  // 7 or more
  if (shift >= 31u) { return sign; }  // below half of 2^-149 (S < 2^30 <= 2^(shift-1))
  var m = S >> shift;
  let rem = S & ((1u << shift) - 1u);
  let half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (m & 1u) == 1u)) { m = m + 1u; }
  return sign | m;  // m = 2^23 is the smallest normal's encoding
}
// A finite f32's integer significand (subnormals included) and exponent: value = n · 2^e.
fn ws_f32_split(x: u32, e: ptr<function, i32>) -> u32 {
  let ex = (x >> 23u) & 0xFFu;
  if (ex == 0u) { *e = -149; return x & 0x7FFFFFu; }
  *e = i32(ex) - 150;
  return (x & 0x7FFFFFu) | 0x800000u;
}
// a + b for finite f32 bits, rounded once to nearest even in integers (subnormal inputs and
// results included): the sum of two exact values (q·d and m) as ggml's C rounds it (one IEEE
// addition; the library's build forbids contracting q·d + m into an FMA, and where the product
// is exact fused or not give this), or MLX's s·q + b after ws_mul_rne.
fn ws_add_rne(a: u32, b: u32) -> u32 {
  var ea: i32;
  var eb: i32;
  let na = ws_f32_split(a, &ea);
  let nb = ws_f32_split(b, &eb);
  let sa = (a & 0x80000000u) != 0u;
  let sb = (b & 0x80000000u) != 0u;
  if (na == 0u && nb == 0u) { return select(0u, 0x80000000u, sa && sb); }
  if (na == 0u) { return b; }
  if (nb == 0u) { return a; }
  var A = ws_norm29(na, &ea);
  var B = ws_norm29(nb, &eb);
  var sA = sa;
  var sB = sb;
  if (eb > ea) { let t = A; A = B; B = t; let te = ea; ea = eb; eb = te; let ts = sA; sA = sB; sB = ts; }
  let d = u32(ea - eb);
  var Bs = B;
  if (d >= 31u) { Bs = select(0u, 1u, B != 0u); }
  else if (d > 0u) { Bs = (B >> d) | select(0u, 1u, (B << (32u - d)) != 0u); }
  var S: u32;
  var neg = sA;
  if (sA == sB) { S = A + Bs; }
  else if (A >= Bs) { S = A - Bs; }
  else { S = Bs - A; neg = sB; }
  if (S == 0u) { return 0u; }  // x - x = +0 under round to nearest
  var e = ea;
  let p = firstLeadingBit(S);
  if (p > 29u) {
    let k = p - 29u;
    S = (S >> k) | select(0u, 1u, (S & ((1u << k) - 1u)) != 0u);
    e = e + i32(k);
  } else if (p < 29u) {
    S = S << (29u - p);  // cancellation: only when d <= 1, where no bit was lost
    e = e - i32(29u - p);
  }
  return ws_round_pack(neg, S, e);
}
// f32 bits x times (-1)^neg · q · 2^eadd (q < 256), rounded once to nearest even (subnormal and
// overflowing results included; MLX nvfp4's e4m3(s)·g and E2M1·s), IEEE's inf/NaN rules.
fn ws_mul_rne_e(x: u32, neg: bool, q: u32, eadd: i32) -> u32 {
  let ex = (x >> 23u) & 0xFFu;
  let flip = select(0u, 0x80000000u, neg);
  if (ex == 0xFFu) {
    if ((x & 0x7FFFFFu) != 0u) { return x; }
    if (q == 0u) { return WS_NAN_CREATED; }
    return x ^ flip;
  }
  let sign = ((x & 0x80000000u) != 0u) != neg;
  var e: i32;
  let n = ws_f32_split(x, &e);
  let P = n * q;
  if (P == 0u) { return select(0u, 0x80000000u, sign); }
  let p = firstLeadingBit(P);
  var S = P;
  if (p > 29u) {
    let k = p - 29u;
    S = (P >> k) | select(0u, 1u, (P & ((1u << k) - 1u)) != 0u);
    e = e + i32(k);
  } else {
    S = P << (29u - p);
    e = e - i32(29u - p);
  }
  return ws_round_pack(sign, S, e + eadd);
}
// f32 bits x times the integer q (< 256), rounded once to nearest even (MLX's s·float(q) with an
// f32 or bf16/f16 scale), IEEE's inf/NaN rules.
fn ws_mul_rne(x: u32, q: u32) -> u32 {
  let ex = (x >> 23u) & 0xFFu;
  if (ex == 0xFFu) {
    if ((x & 0x7FFFFFu) != 0u) { return x; }
    if (q == 0u) { return WS_NAN_CREATED; }
    return x;
  }
  let sign = (x & 0x80000000u) != 0u;
  var e: i32;
  let n = ws_f32_split(x, &e);
  let P = n * q;  // < 2^24 · 2^8
  if (P == 0u) { return select(0u, 0x80000000u, sign); }
  let p = firstLeadingBit(P);
  var S = P;
  if (p > 29u) {
    let k = p - 29u;
    S = (P >> k) | select(0u, 1u, (P & ((1u << k) - 1u)) != 0u);
    e = e + i32(k);
  } else {
    S = P << (29u - p);
    e = e - i32(29u - p);
  }
  return ws_round_pack(sign, S, e);
}
// q·d + m with IEEE's rules where d or m is inf or NaN (validateBlocks: false), else ws_add_rne.
fn ws_madd(p: u32, m: u32) -> u32 {
  let pspecial = (p & 0x7F800000u) == 0x7F800000u;
  let mspecial = (m & 0x7F800000u) == 0x7F800000u;
  if (!pspecial && !mspecial) { return ws_add_rne(p, m); }
  // Both NaN: which one comes out is not fixed on the CPU either (x86 returns an addition's first
  // NaN operand, and the wasm kernels' operand order differs between their SIMD and scalar paths:
  // the Playwright test saw both), so dequant.h promises NaN-ness only; m's is taken.
  if (mspecial && (m & 0x7FFFFFu) != 0u) { return m; }
  if (pspecial && (p & 0x7FFFFFu) != 0u) { return p; }
  if (pspecial && mspecial && ((p ^ m) & 0x80000000u) != 0u) { return WS_NAN_CREATED; }
  return select(m, p, pspecial);
}
// f32 bits x (a product of an fp16 and small integers) times (-1)^neg · q, exact (the K-quants'
// second product: its significand and q together stay below 2^24), IEEE's inf/NaN rules.
fn ws_mul_int(x: u32, neg: bool, q: u32) -> u32 {
  let ex = (x >> 23u) & 0xFFu;
  if (ex == 0xFFu) {
    if ((x & 0x7FFFFFu) != 0u) { return x; }
    if (q == 0u) { return WS_NAN_CREATED; }
    return x ^ select(0u, 0x80000000u, neg);
  }
  let s = (x & 0x80000000u) != 0u;
  if (ex == 0u) { return select(0u, 0x80000000u, s != neg); }  // ±0 (no product here is subnormal)
  var m = (x & 0x7FFFFFu) | 0x800000u;
  let tz = countTrailingZeros(m);
  m = m >> tz;
  return ws_f32_exact(s != neg, m * q, i32(ex) - 150 + i32(tz));
}
// Q4_K / Q5_K: sub-block j's 6-bit scale and min from the 12 packed bytes at o (ggml's
// get_scale_min_k4; ggml_k_quants.cpp k4_scale_min).
fn ws_k4_scale_min(o: u32, j: u32) -> vec2<u32> {
  if (j < 4u) { return vec2<u32>(ws_byte(o + j) & 63u, ws_byte(o + j + 4u) & 63u); }
  return vec2<u32>((ws_byte(o + j + 4u) & 15u) | ((ws_byte(o + j - 4u) >> 6u) << 4u),
                   (ws_byte(o + j + 4u) >> 4u) | ((ws_byte(o + j) >> 6u) << 4u));
}
// (-1)^neg · n · 2^e for n < 2^24 where the result may be an f32 subnormal or overflow (MXFP4's
// power-of-two scales reach 2^-128 and 2^127): exact when representable (every such MXFP4 value
// is a multiple of 2^-149), ±inf past the largest f32, as the CPU's multiplication gives them.
fn ws_f32_scaled(neg: bool, n: u32, e: i32) -> u32 {
  let sign = select(0u, 0x80000000u, neg);
  if (n == 0u) { return sign; }
  let p = i32(firstLeadingBit(n));
  let biased = e + p + 127;
  if (biased >= 255) { return sign | 0x7F800000u; }
  if (biased <= 0) { return sign | (n << u32(e + 149)); }
  return ws_f32_exact(neg, n, e);
}
// ggml's kvalues_iq4nl (iq_grids.cpp kIq4nlValues), as sign and magnitude.
fn ws_iq4nl(k: u32) -> i32 {
  var t = array<i32, 16>(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
  return t[k];
}
// 2 × E2M1 by 4-bit code (ggml_fp4_quants.cpp kFp4Doubled; code 8, E2M1's -0, is +0 as in ggml).
fn ws_fp4x2(k: u32) -> i32 {
  var t = array<i32, 16>(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
  return t[k];
}
fn ws_f16_bad(h: u32) -> bool { return (h & 0x7C00u) == 0x7C00u; }
`;

// Per format: block elements and bytes, and the WGSL of ws_decode_<name> and ws_check_<name>.
// The formulas are the reference kernels' (cited per format); offsets are the blocks' layouts.
export const WGSL_FORMATS = {
  // Element-wise: a "block" is one element. F16 -> f32 exact (kernels::fp16_to_f32), BF16 -> f32
  // its bits shifted (elementwise.cpp ref::BF16).
  F16: {
    blockElems: 1, blockBytes: 2, wgsl: `
fn ws_decode_F16(b: u32, i: u32) -> u32 { return ws_f16_to_f32(ws_u16(b * 2u)); }
fn ws_check_F16(b: u32) -> u32 { return 0xFFFFFFFFu; }
` },
  BF16: {
    blockElems: 1, blockBytes: 2, wgsl: `
fn ws_decode_BF16(b: u32, i: u32) -> u32 { return ws_u16(b * 2u) << 16u; }
fn ws_check_BF16(b: u32) -> u32 { return 0xFFFFFFFFu; }
` },
  // ggml_legacy_quants.cpp ref::Q8_0: {fp16 d; i8 qs[32]}, y = q·d.
  Q8_0: {
    blockElems: 32, blockBytes: 34, wgsl: `
fn ws_decode_Q8_0(b: u32, i: u32) -> u32 {
  let o = b * 34u;
  let q = ws_byte(o + 2u + i);
  let neg = q >= 128u;
  return ws_mul_f16(neg, select(q, 256u - q, neg), ws_u16(o));
}
fn ws_check_Q8_0(b: u32) -> u32 { return select(0xFFFFFFFFu, 0u, ws_f16_bad(ws_u16(b * 34u))); }
` },
  // ref::Q4_0: {fp16 d; u8 qs[16]}, element j low nibble of byte j, j + 16 the high; y = (q-8)·d.
  Q4_0: {
    blockElems: 32, blockBytes: 18, wgsl: `
fn ws_decode_Q4_0(b: u32, i: u32) -> u32 {
  let o = b * 18u;
  let q = (ws_byte(o + 2u + (i & 15u)) >> ((i >> 4u) * 4u)) & 15u;
  return ws_mul_f16(q < 8u, select(q - 8u, 8u - q, q < 8u), ws_u16(o));
}
fn ws_check_Q4_0(b: u32) -> u32 { return select(0xFFFFFFFFu, 0u, ws_f16_bad(ws_u16(b * 18u))); }
` },
  // ref::Q4_1: {fp16 d; fp16 m; u8 qs[16]}, y = q·d + m.
  Q4_1: {
    blockElems: 32, blockBytes: 20, wgsl: `
fn ws_decode_Q4_1(b: u32, i: u32) -> u32 {
  let o = b * 20u;
  let q = (ws_byte(o + 4u + (i & 15u)) >> ((i >> 4u) * 4u)) & 15u;
  return ws_madd(ws_mul_f16(false, q, ws_u16(o)), ws_f16_to_f32(ws_u16(o + 2u)));
}
fn ws_check_Q4_1(b: u32) -> u32 {
  let o = b * 20u;
  if (ws_f16_bad(ws_u16(o))) { return 0u; }
  return select(0xFFFFFFFFu, 2u, ws_f16_bad(ws_u16(o + 2u)));
}
` },
  // ref::Q5_0: {fp16 d; u8 qh[4]; u8 qs[16]}, fifth bit of element j is bit j of qh; y = (q-16)·d.
  Q5_0: {
    blockElems: 32, blockBytes: 22, wgsl: `
fn ws_decode_Q5_0(b: u32, i: u32) -> u32 {
  let o = b * 22u;
  let qh = ws_u32(o + 2u);
  let q = ((ws_byte(o + 6u + (i & 15u)) >> ((i >> 4u) * 4u)) & 15u) | (((qh >> i) & 1u) << 4u);
  return ws_mul_f16(q < 16u, select(q - 16u, 16u - q, q < 16u), ws_u16(o));
}
fn ws_check_Q5_0(b: u32) -> u32 { return select(0xFFFFFFFFu, 0u, ws_f16_bad(ws_u16(b * 22u))); }
` },
  // ref::Q5_1: {fp16 d; fp16 m; u8 qh[4]; u8 qs[16]}, y = q·d + m.
  Q5_1: {
    blockElems: 32, blockBytes: 24, wgsl: `
fn ws_decode_Q5_1(b: u32, i: u32) -> u32 {
  let o = b * 24u;
  let qh = ws_u32(o + 4u);
  let q = ((ws_byte(o + 8u + (i & 15u)) >> ((i >> 4u) * 4u)) & 15u) | (((qh >> i) & 1u) << 4u);
  return ws_madd(ws_mul_f16(false, q, ws_u16(o)), ws_f16_to_f32(ws_u16(o + 2u)));
}
fn ws_check_Q5_1(b: u32) -> u32 {
  let o = b * 24u;
  if (ws_f16_bad(ws_u16(o))) { return 0u; }
  return select(0xFFFFFFFFu, 2u, ws_f16_bad(ws_u16(o + 2u)));
}
` },
  // ggml_k_quants.cpp ref::Q4_K: {fp16 d; fp16 dmin; u8 scales[12]; u8 qs[128]}; 64-value chunk c,
  // its low nibbles sub-block 2c, high nibbles 2c+1; y = (d·sc)·q - dmin·m (products exact, the
  // subtraction rounded once).
  Q4_K: {
    blockElems: 256, blockBytes: 144, wgsl: `
fn ws_decode_Q4_K(b: u32, i: u32) -> u32 {
  let o = b * 144u;
  let c = i >> 6u;
  let hi = (i >> 5u) & 1u;
  let l = i & 31u;
  let sm = ws_k4_scale_min(o + 4u, 2u * c + hi);
  let q = (ws_byte(o + 16u + 32u * c + l) >> (4u * hi)) & 15u;
  let d1 = ws_mul_f16(false, sm.x, ws_u16(o));
  let m1 = ws_mul_f16(false, sm.y, ws_u16(o + 2u));
  return ws_madd(ws_mul_int(d1, false, q), m1 ^ 0x80000000u);
}
fn ws_check_Q4_K(b: u32) -> u32 {
  let o = b * 144u;
  if (ws_f16_bad(ws_u16(o))) { return 0u; }
  return select(0xFFFFFFFFu, 2u, ws_f16_bad(ws_u16(o + 2u)));
}
` },
  // ref::Q5_K: {fp16 d; fp16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}: Q4_K's value plus 16
  // when bit 2c (low run) / 2c+1 (high run) of qh[l] is set.
  Q5_K: {
    blockElems: 256, blockBytes: 176, wgsl: `
fn ws_decode_Q5_K(b: u32, i: u32) -> u32 {
  let o = b * 176u;
  let c = i >> 6u;
  let hi = (i >> 5u) & 1u;
  let l = i & 31u;
  let sm = ws_k4_scale_min(o + 4u, 2u * c + hi);
  let q = ((ws_byte(o + 48u + 32u * c + l) >> (4u * hi)) & 15u) + select(0u, 16u, ((ws_byte(o + 16u + l) >> (2u * c + hi)) & 1u) == 1u);
  let d1 = ws_mul_f16(false, sm.x, ws_u16(o));
  let m1 = ws_mul_f16(false, sm.y, ws_u16(o + 2u));
  return ws_madd(ws_mul_int(d1, false, q), m1 ^ 0x80000000u);
}
fn ws_check_Q5_K(b: u32) -> u32 {
  let o = b * 176u;
  if (ws_f16_bad(ws_u16(o))) { return 0u; }
  return select(0xFFFFFFFFu, 2u, ws_f16_bad(ws_u16(o + 2u)));
}
` },
  // ref::Q6_K: {u8 ql[128]; u8 qh[64]; i8 scales[16]; fp16 d}; per 128-value half, value
  // 32k + l takes ql[l + 32(k&1)]'s nibble k>>1 and qh[l] bits 2k..2k+1, minus 32, scale
  // scales[l/16 + 2k]; y = (d·sc)·q, both products exact.
  Q6_K: {
    blockElems: 256, blockBytes: 210, wgsl: `
fn ws_decode_Q6_K(b: u32, i: u32) -> u32 {
  let o = b * 210u;
  let h = i >> 7u;
  let k = (i >> 5u) & 3u;
  let l = i & 31u;
  let low = (ws_byte(o + 64u * h + l + 32u * (k & 1u)) >> (4u * (k >> 1u))) & 15u;
  let top = (ws_byte(o + 128u + 32u * h + l) >> (2u * k)) & 3u;
  let q = i32(low | (top << 4u)) - 32;
  let sc = i32(ws_byte(o + 192u + 8u * h + (l >> 4u) + 2u * k) << 24u) >> 24u;
  let d1 = ws_mul_f16(sc < 0, u32(abs(sc)), ws_u16(o + 208u));
  return ws_mul_int(d1, q < 0, u32(abs(q)));
}
fn ws_check_Q6_K(b: u32) -> u32 { return select(0xFFFFFFFFu, 208u, ws_f16_bad(ws_u16(b * 210u + 208u))); }
` },
  // ggml_k_quants.cpp ref::Q2_K: {u8 scales[16]; u8 qs[64]; fp16 d; fp16 dmin}; per 128-value
  // half h, run r = 0..7 (shift 2(r>>1), part r&1) of 16 values uses scales[8h + r]: low nibble
  // times d, high nibble times dmin; y = dl·q - ml.
  Q2_K: {
    blockElems: 256, blockBytes: 84, wgsl: `
fn ws_decode_Q2_K(b: u32, i: u32) -> u32 {
  let o = b * 84u;
  let h = i >> 7u;
  let r = (i >> 4u) & 7u;
  let l = i & 15u;
  let sc = ws_byte(o + 8u * h + r);
  let q = (ws_byte(o + 16u + 32u * h + 16u * (r & 1u) + l) >> (2u * (r >> 1u))) & 3u;
  let dl = ws_mul_f16(false, sc & 15u, ws_u16(o + 80u));
  let ml = ws_mul_f16(false, sc >> 4u, ws_u16(o + 82u));
  return ws_madd(ws_mul_int(dl, false, q), ml ^ 0x80000000u);
}
fn ws_check_Q2_K(b: u32) -> u32 {
  let o = b * 84u;
  if (ws_f16_bad(ws_u16(o + 80u))) { return 80u; }
  return select(0xFFFFFFFFu, 82u, ws_f16_bad(ws_u16(o + 82u)));
}
` },
  // ref::Q3_K: {u8 hmask[32]; u8 qs[64]; u8 scales[12]; fp16 d}; runs as Q2_K, run r of half h
  // is scale 8h + r (6-bit, stored +32) and hmask bit 4h + (r>>1); a clear bit subtracts 4.
  // y = (d·scale)·v.
  Q3_K: {
    blockElems: 256, blockBytes: 110, wgsl: `
fn ws_decode_Q3_K(b: u32, i: u32) -> u32 {
  let o = b * 110u;
  let h = i >> 7u;
  let r = (i >> 4u) & 7u;
  let l = 16u * (r & 1u) + (i & 15u);
  let si = 8u * h + r;
  let lo4 = select(ws_byte(o + 96u + si - 8u) >> 4u, ws_byte(o + 96u + si) & 15u, si < 8u);
  let hi2 = (ws_byte(o + 96u + 8u + (si & 3u)) >> (2u * (si >> 2u))) & 3u;
  let scale = i32(lo4 | (hi2 << 4u)) - 32;
  let shift = 2u * (r >> 1u);
  let hbit = ((ws_byte(o + l) >> (4u * h + (r >> 1u))) & 1u) == 1u;
  let v = i32((ws_byte(o + 32u + 32u * h + l) >> shift) & 3u) - select(4, 0, hbit);
  let dl = ws_mul_f16(scale < 0, u32(abs(scale)), ws_u16(o + 108u));
  return ws_mul_int(dl, v < 0, u32(abs(v)));
}
fn ws_check_Q3_K(b: u32) -> u32 { return select(0xFFFFFFFFu, 108u, ws_f16_bad(ws_u16(b * 110u + 108u))); }
` },
  // ggml_iq_quants.cpp ref::IQ4_NL: {fp16 d; u8 qs[16]}, y = d·K[nibble], nibbles as Q4_0.
  IQ4_NL: {
    blockElems: 32, blockBytes: 18, wgsl: `
fn ws_decode_IQ4_NL(b: u32, i: u32) -> u32 {
  let o = b * 18u;
  let k = ws_iq4nl((ws_byte(o + 2u + (i & 15u)) >> ((i >> 4u) * 4u)) & 15u);
  return ws_mul_f16(k < 0, u32(abs(k)), ws_u16(o));
}
fn ws_check_IQ4_NL(b: u32) -> u32 { return select(0xFFFFFFFFu, 0u, ws_f16_bad(ws_u16(b * 18u))); }
` },
  // ref::IQ4_XS: {fp16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128]}; sub-block ib of 32 values,
  // ls = nibble ib%2 of scales_l[ib/2] | bits 2ib of scales_h << 4; y = (d·(ls-32))·K[nibble].
  IQ4_XS: {
    blockElems: 256, blockBytes: 136, wgsl: `
fn ws_decode_IQ4_XS(b: u32, i: u32) -> u32 {
  let o = b * 136u;
  let ib = i >> 5u;
  let j = i & 31u;
  let ls = i32(((ws_byte(o + 4u + (ib >> 1u)) >> (4u * (ib & 1u))) & 15u) | (((ws_u16(o + 2u) >> (2u * ib)) & 3u) << 4u)) - 32;
  let k = ws_iq4nl((ws_byte(o + 8u + 16u * ib + (j & 15u)) >> ((j >> 4u) * 4u)) & 15u);
  let dl = ws_mul_f16(ls < 0, u32(abs(ls)), ws_u16(o));
  return ws_mul_int(dl, k < 0, u32(abs(k)));
}
fn ws_check_IQ4_XS(b: u32) -> u32 { return select(0xFFFFFFFFu, 0u, ws_f16_bad(ws_u16(b * 136u))); }
` },
  // ggml_fp4_quants.cpp ref::MXFP4: {u8 e (E8M0); u8 qs[16]}, y = F[nibble]·2^(e-128) (F doubled
  // E2M1), nibbles as Q4_0; e = 0xFF is 2^127 (ggml; validation rejects it).
  MXFP4: {
    blockElems: 32, blockBytes: 17, wgsl: `
fn ws_decode_MXFP4(b: u32, i: u32) -> u32 {
  let o = b * 17u;
  let f = ws_fp4x2((ws_byte(o + 1u + (i & 15u)) >> ((i >> 4u) * 4u)) & 15u);
  return ws_f32_scaled(f < 0, u32(abs(f)), i32(ws_byte(o)) - 128);
}
fn ws_check_MXFP4(b: u32) -> u32 { return select(0xFFFFFFFFu, 0u, ws_byte(b * 17u) == 0xFFu); }
` },
  // ref::NVFP4: {u8 d[4] (UE4M3, halved: ue4m3_half_to_f32); u8 qs[32]}; sub-block s of 16
  // values, qs bytes 8s.., low nibbles values 0..7, high 8..15; y = F[nibble]·d[s]; d of 0x00 or
  // 0x7F is 0, bit 7 ignored.
  NVFP4: {
    blockElems: 64, blockBytes: 36, wgsl: `
fn ws_decode_NVFP4(b: u32, i: u32) -> u32 {
  let o = b * 36u;
  let s = i >> 4u;
  let j = i & 15u;
  let f = ws_fp4x2((ws_byte(o + 4u + 8u * s + (j & 7u)) >> ((j >> 3u) * 4u)) & 15u);
  let x = ws_byte(o + s);
  let ex = (x >> 3u) & 15u;
  let man = x & 7u;
  if (x == 0u || x == 0x7Fu) { return ws_f32_exact(f < 0, 0u, 0); }
  if (ex == 0u) { return ws_f32_exact(f < 0, u32(abs(f)) * man, -10); }
  return ws_f32_exact(f < 0, u32(abs(f)) * (8u + man), i32(ex) - 11);
}
fn ws_check_NVFP4(b: u32) -> u32 { return 0xFFFFFFFFu; }
` },
  // uqff_f8q8.cpp ref::F8Q8 (UQFF, mistral.rs f8q8): {E4M3FN d; i8 qs[32]}, d = e4m3(byte) / 448
  // rounded once, y = q·d rounded once; a NaN scale byte (0x7F/0xFF) makes the block +NaN. The
  // division is done in integers: sig·2^28 / 7 (at least 26 quotient bits: 24, a guard bit, and
  // the remainder as the sticky bit), then rounded to nearest even.
  F8Q8: {
    blockElems: 32, blockBytes: 33, wgsl: `
fn ws_decode_F8Q8(b: u32, i: u32) -> u32 {
  let o = b * 33u;
  let x = ws_byte(o);
  if ((x & 0x7Fu) == 0x7Fu) { return 0x7FC00000u; }
  let ex = (x >> 3u) & 15u;
  let man = x & 7u;
  let sig = select(8u + man, man, ex == 0u);
  let e = select(i32(ex) - 10, -9, ex == 0u);
  var d = select(0u, 0x80000000u, x >= 128u);
  if (sig != 0u) {
    let num = sig << 28u;  // 448 = 7·2^6: sig·2^e / 448 = (sig·2^28 / 7)·2^(e-34)
    let Q = num / 7u;
    let p = firstLeadingBit(Q);  // 25..28
    let S = (Q << (29u - p)) | select(0u, 1u, num % 7u != 0u);
    d = ws_round_pack(x >= 128u, S, e - 34 - i32(29u - p));
  }
  let q = ws_byte(o + 1u + i);
  return ws_mul_rne_e(d, q >= 128u, select(q, 256u - q, q >= 128u), 0);
}
fn ws_check_F8Q8(b: u32) -> u32 { return 0xFFFFFFFFu; }
` },
  // Element-wise FP8 (elementwise.cpp): F8_E4M3 is float8_e4m3fn (fp_convert.h e4m3fn_to_f32:
  // 0x7F/0xFF NaN with the sign, subnormals man·2^-9); F8_E5M2 the top byte of an fp16.
  F8_E4M3: {
    blockElems: 1, blockBytes: 1, wgsl: `
fn ws_decode_F8_E4M3(b: u32, i: u32) -> u32 {
  let x = ws_byte(b);
  let sign = (x & 0x80u) << 24u;
  if ((x & 0x7Fu) == 0x7Fu) { return sign | 0x7FC00000u; }
  let ex = (x >> 3u) & 15u;
  let man = x & 7u;
  if (ex == 0u) { return ws_f32_exact(sign != 0u, man, -9); }
  return sign | ((ex + 120u) << 23u) | (man << 20u);
}
fn ws_check_F8_E4M3(b: u32) -> u32 { return 0xFFFFFFFFu; }
` },
  F8_E5M2: {
    blockElems: 1, blockBytes: 1, wgsl: `
fn ws_decode_F8_E5M2(b: u32, i: u32) -> u32 { return ws_f16_to_f32(ws_byte(b) << 8u); }
fn ws_check_F8_E5M2(b: u32) -> u32 { return 0xFFFFFFFFu; }
` },
};

// Packed weights with companion tensors (MLX; lib/src/kernels/reference/mlx_quants.cpp). Their
// decoders read two more bindings the engine declares, `ws_scales` and `ws_biases`
// (array<u32>: the companions' stored bytes), and constants it defines: WS_BITS, WS_GROUP, and
// WS_SCALE (the companions' dtype: 0 F32, 1 F16, 2 BF16). b is the group, i the element in it.
export const WGSL_COMPANION_FORMATS = {
  // ref::MlxAffine: the group's bytes are one LSB-first bitstream of WS_BITS-bit values;
  // w = (s·float(q)) + b, two roundings (lib builds with -ffp-contract=off).
  MlxAffine: {
    biases: true, wgsl: `
fn ws_companion16(w: u32, g: u32) -> u32 { return (w >> ((g & 1u) * 16u)) & 0xFFFFu; }
fn ws_scale_of(g: u32) -> u32 {
  if (WS_SCALE == 0u) { return ws_scales[g]; }
  let h = ws_companion16(ws_scales[g >> 1u], g);
  if (WS_SCALE == 1u) { return ws_f16_to_f32(h); }
  return h << 16u;
}
fn ws_bias_of(g: u32) -> u32 {
  if (WS_SCALE == 0u) { return ws_biases[g]; }
  let h = ws_companion16(ws_biases[g >> 1u], g);
  if (WS_SCALE == 1u) { return ws_f16_to_f32(h); }
  return h << 16u;
}
fn ws_decode_MlxAffine(b: u32, i: u32) -> u32 {
  let o = b * (WS_GROUP * WS_BITS / 8u) + ((i * WS_BITS) >> 3u);
  let q = (ws_u32(o) >> ((i * WS_BITS) & 7u)) & ((1u << WS_BITS) - 1u);
  return ws_madd(ws_mul_rne(ws_scale_of(b), q), ws_bias_of(b));
}
// The byte offset of group b's scale in the scales tensor when it is inf or NaN (the library
// checks the scales, not the biases, up front), else 0xFFFFFFFF.
fn ws_check_MlxAffine(b: u32) -> u32 {
  let s = ws_scale_of(b);
  if ((s & 0x7F800000u) != 0x7F800000u) { return 0xFFFFFFFFu; }
  return b * select(2u, 4u, WS_SCALE == 0u);
}
` },
  // ref::MlxMxfp4: 32-value groups, codes LSB-first (low nibble first), U8 E8M0 scales (MLX:
  // 0 -> 2^-127, 0xFF -> +inf); w = E2M1[code]·2^(s-127), exact (subnormal or inf where f32 is).
  MlxMxfp4: {
    biases: false, wgsl: `
fn ws_scale_u8(g: u32) -> u32 { return (ws_scales[g >> 2u] >> ((g & 3u) * 8u)) & 0xFFu; }
// ±inf·v for an E8M0 0xFF scale: inf·0 is the created NaN.
fn ws_times_inf(neg: bool, zero: bool) -> u32 { if (zero) { return WS_NAN_CREATED; } return select(0x7F800000u, 0xFF800000u, neg); }
fn ws_decode_MlxMxfp4(b: u32, i: u32) -> u32 {
  let code = (ws_byte(b * 16u + (i >> 1u)) >> ((i & 1u) * 4u)) & 15u;
  let k = u32(abs(ws_fp4x2(code)));  // 2·|E2M1|; code 8 is -0
  let s = ws_scale_u8(b);
  if (s == 0xFFu) { return ws_times_inf(code >= 8u, k == 0u); }
  return ws_f32_scaled(code >= 8u, k, i32(s) - 128);
}
fn ws_check_MlxMxfp4(b: u32) -> u32 { return select(0xFFFFFFFFu, b, ws_scale_u8(b) == 0xFFu); }
` },
  // ref::MlxMxfp8: 32-value groups of E4M3 bytes (MLX: 0x7F/0xFF are ±480), E8M0 scales;
  // w = e4m3(x)·2^(s-127), exact.
  MlxMxfp8: {
    biases: false, wgsl: `
fn ws_scale_u8(g: u32) -> u32 { return (ws_scales[g >> 2u] >> ((g & 3u) * 8u)) & 0xFFu; }
fn ws_times_inf(neg: bool, zero: bool) -> u32 { if (zero) { return WS_NAN_CREATED; } return select(0x7F800000u, 0xFF800000u, neg); }
fn ws_decode_MlxMxfp8(b: u32, i: u32) -> u32 {
  let x = ws_byte(b * 32u + i);
  let ex = (x >> 3u) & 15u;
  let man = x & 7u;
  let sig = select(8u + man, man, ex == 0u);
  let e = select(i32(ex) - 10, -9, ex == 0u);
  let s = ws_scale_u8(b);
  if (s == 0xFFu) { return ws_times_inf(x >= 128u, sig == 0u); }
  return ws_f32_scaled(x >= 128u, sig, e + i32(s) - 127);
}
fn ws_check_MlxMxfp8(b: u32) -> u32 { return select(0xFFFFFFFFu, b, ws_scale_u8(b) == 0xFFu); }
` },
  // ref::MlxNvfp4: 16-value groups, codes low nibble first, U8 E4M3 scales (MLX's E4M3); without a
  // global scale w = E2M1[code]·e4m3(s) (exact); with MLX's, s·g first and then E2M1·(s·g), each
  // product rounded once. g = global_scale / 2688 as the CPU's f32 division gives it: the host
  // computes it (a double quotient rounded to f32 is the f32 quotient) and the including shader
  // provides fn ws_has_global() -> bool and fn ws_global() -> u32 (g's bits); Ollama's global scale
  // multiplies E2M1·e4m3(s) instead (fn ws_global_is_ollama() -> bool; ws_global() its bits);
  // compressed-tensors' divides e4m3(s), the quotient rounded once, then E2M1·(s/g) as MLX's
  // (fn ws_global_divides() -> bool; ws_global() the global scale's bits).
  MlxNvfp4: {
    biases: false, global: true, wgsl: `
fn ws_scale_u8(g: u32) -> u32 { return (ws_scales[g >> 2u] >> ((g & 3u) * 8u)) & 0xFFu; }
// (-1)^neg · sig · 2^e divided by the f32 bits g, rounded once to nearest even (subnormal and
// overflowing quotients included), IEEE's rules for zero, inf and NaN divisors (x86's created NaN
// for 0/0): a long division of the significands, 30 quotient bits and a sticky remainder bit.
fn ws_div_rne(neg: bool, sig: u32, e: i32, g: u32) -> u32 {
  let sign = neg != ((g & 0x80000000u) != 0u);
  let sbit = select(0u, 0x80000000u, sign);
  let eg = (g >> 23u) & 0xFFu;
  if (eg == 0xFFu) {
    if ((g & 0x7FFFFFu) != 0u) { return g | 0x400000u; }  // NaN: the divisor's, quieted
    return sbit;  // x / inf
  }
  var e2: i32;
  var G = ws_f32_split(g, &e2);
  if (G == 0u) {
    if (sig == 0u) { return WS_NAN_CREATED; }
    return sbit | 0x7F800000u;
  }
  if (sig == 0u) { return sbit; }
  let pg = firstLeadingBit(G);  // G to [2^23, 2^24)
  G = G << (23u - pg);
  e2 = e2 - i32(23u - pg);
  var N = sig << (23u - firstLeadingBit(sig));
  var eN = e - i32(23u - firstLeadingBit(sig));
  if (N < G) { N = N << 1u; eN = eN - 1; }
  var Q = 0u;
  for (var k = 0u; k < 30u; k = k + 1u) {
    Q = Q << 1u;
    if (N >= G) { N = N - G; Q = Q | 1u; }
    N = N << 1u;
  }
  return ws_round_pack(sign, Q | select(0u, 1u, N != 0u), eN - e2 - 29);
}
fn ws_decode_MlxNvfp4(b: u32, i: u32) -> u32 {
  let code = (ws_byte(b * 8u + (i >> 1u)) >> ((i & 1u) * 4u)) & 15u;
  let k = u32(abs(ws_fp4x2(code)));
  let x = ws_scale_u8(b);
  let ex = (x >> 3u) & 15u;
  let man = x & 7u;
  let sig = select(8u + man, man, ex == 0u);
  let e = select(i32(ex) - 10, -9, ex == 0u);
  let neg = (code >= 8u) != (x >= 128u);
  if (!ws_has_global()) { return ws_f32_scaled(neg, k * sig, e - 1); }
  // Ollama: (E2M1 · e4m3(s)) · global, the product exact, the second rounded.
  if (ws_global_is_ollama()) { return ws_mul_rne_e(ws_global(), neg, k * sig, e - 1); }
  // compressed-tensors: s = e4m3(x) / g, rounded; then E2M1 · s, rounded.
  if (ws_global_divides()) { return ws_mul_rne_e(ws_div_rne(x >= 128u, sig, e, ws_global()), code >= 8u, k, -1); }
  // s = e4m3(x) · g, rounded; then E2M1 · s = (k/2) · s, rounded.
  let sg = ws_mul_rne_e(ws_global(), x >= 128u, sig, e);
  return ws_mul_rne_e(sg, code >= 8u, k, -1);
}
fn ws_check_MlxNvfp4(b: u32) -> u32 { return select(0xFFFFFFFFu, b, (ws_scale_u8(b) & 0x7Fu) == 0x7Fu); }
` },
};

// The formats decoded on the GPU, in the library's names.
export const GPU_FORMATS = Object.freeze([...Object.keys(WGSL_FORMATS), ...Object.keys(WGSL_COMPANION_FORMATS)]);

// The WGSL an engine includes for `format`: the common functions and the format's decoder (it
// declares ws_src itself). null for a format not covered.
export function wgslDecoder(format) {
  const f = WGSL_FORMATS[format] ?? WGSL_COMPANION_FORMATS[format];
  return f ? WGSL_COMMON + f.wgsl : null;
}
