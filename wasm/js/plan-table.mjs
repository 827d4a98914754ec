// plan()'s outputs as columns (issue #31: a 94k-weight model's plan() made four objects a weight,
// 0.3-0.4 s, against inspect()'s 0.05 s): what the totals need — each output's bytes, the bytes it
// uploads, its file — in typed arrays, and the weights' words copied out of the loader in bulk
// (tensor-table.mjs copyWeights), from which an output's descriptor (model.mjs describe) is made
// only when it is asked for. Filled while the loader lives (it is gone when plan() returns).
import { copyWeights } from './tensor-table.mjs';
import { readWeight } from './words.mjs';
import { formatTable } from './formats.mjs';
import { u64 } from './module.mjs';

const WEIGHT_WORDS = 50;  // abi.h kWeightWords (tensor-table.mjs)

export class PlanTable {
  // L: the loader at ModelReady; `chosen`: the selected weights' indexes, in weight order; per
  // chosen weight, `outBytes` (ModelLoader::output_bytes), `onGpu` (uploaded as stored for the
  // GPU to decode: the output is its elements in `dtype`, the upload outBytes) and `asStored`
  // (handed on as stored). Outputs are ordered by their file (`files`' order), then weight.
  constructor(wasm, L, chunk, files, chosen, outBytes, onGpu, asStored, dtype) {
    const n = chosen.length;
    const list = copyWeights(wasm, L, n, chunk, null, chosen);
    const u = list.words;
    const position = new Map(files.map((f, i) => [f.table, i]));
    const fileOf = new Uint32Array(n);
    let sorted = true;
    for (let k = 0; k < n; k++) {
      fileOf[k] = position.get(u[k * WEIGHT_WORDS + 22]) ?? files.length;
      sorted &&= k === 0 || fileOf[k - 1] <= fileOf[k];
    }
    // Weights follow their tables, which follow the files: sorted already but for a model whose
    // weights' packed pieces come in another order.
    const order = new Uint32Array(n);
    for (let k = 0; k < n; k++) order[k] = k;
    if (!sorted) order.sort((a, b) => fileOf[a] - fileOf[b] || a - b);
    this.wasm = wasm;
    this.files = files;
    this.list = list;
    this.formats = formatTable(wasm);
    this.dtype = dtype;
    this.count = n;
    this.order = order;  // output p is chosen weight order[p]
    this.chosen = chosen;
    this.fileOf = fileOf;
    this.onGpu = onGpu;
    this.asStored = asStored;
    this.byteLength = new Float64Array(n);
    this.upload = new Float64Array(n);
    const size = dtype === 'f16' ? 2 : 4;
    for (let p = 0; p < n; p++) {
      const k = order[p];
      this.upload[p] = outBytes[k];
      this.byteLength[p] = onGpu[k] ? u64(u[k * WEIGHT_WORDS + 18], u[k * WEIGHT_WORDS + 19]) * size : outBytes[k];
    }
  }

  // Output p's name, file (ready.files' element) and weight (words.mjs readWeight's object, with
  // its parameters), read from the copied words.
  name(p) { const u = this.list.words, w = this.order[p] * WEIGHT_WORDS; return this.list.view.text(u[w], u[w + 1]); }
  file(p) { return this.files[this.fileOf[this.order[p]]]; }
  weight(p) {
    const k = this.order[p];
    const w = readWeight(this.list.view, k * WEIGHT_WORDS, this.chosen[k], this.formats);
    w.parameters = this.list.parameters?.[k] ?? null;
    return w;
  }
  gpu(p) { return this.onGpu[this.order[p]] !== 0; }
  stored(p) { return this.asStored[this.order[p]] !== 0; }
}
