// The floor under inspect() of a 92k-tensor header: making the tensor list alone, in the shape
// inspect() returns it (wasm/js/words.mjs readTable: one object per tensor with a shape array, a
// dataOffsets array and a name sliced from one decoded string), with constant inputs and no
// parsing. Fastest of 30 calls, GC included.
//
//   node bench/js/tensor-objects.mjs [--tensors N]
const args = process.argv.slice(2);
const n = Number(args.includes('--tensors') ? args[args.indexOf('--tensors') + 1] : 91991);
const text = 'model.layers.0.mlp.experts.0.gate_proj.weight_scale_inv.xyz'.repeat(n);  // 60 B per name
const entry = (name, dtype, shape, begin, end, dataStart) =>
  ({ name, dtype, shape, dataOffsets: [begin, end], byteLength: end - begin, offset: dataStart + begin });
let best = Infinity;
for (let r = 0; r < 30; r++) {
  const t0 = performance.now();
  const tensors = new Array(n);
  for (let i = 0; i < n; i++) {
    const shape = new Array(2);
    shape[0] = 2048;
    shape[1] = 7168 + (i & 7);
    tensors[i] = entry(text.substring(i * 60, i * 60 + 60), 'F8_E4M3', shape, i * 1000, i * 1000 + 1000, 12345);
  }
  globalThis.kept = tensors;  // the list survives the call, as inspect()'s does
  best = Math.min(best, performance.now() - t0);
}
console.log(`${n} tensor objects in inspect()'s shape: ${best.toFixed(1)} ms (fastest of 30, node ${process.version})`);
