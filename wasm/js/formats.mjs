// Quant formats as the library names them (dequant.h), and which ones this build can decode.
export const OutType = { f32: 0, f16: 1 };
export const KernelImpl = { auto: 0, reference: 1, simd128: 2 };
const NONE = 0xFFFFFFFF;

export function formatTable(wasm) {
  if (wasm.formats) return wasm.formats;
  const x = wasm.x;
  const byName = new Map();
  const list = [];
  for (let f = 0, n = x.ws_quant_format_count(); f < n; f++) {
    const w = x.ws_quant_format_info(f) >> 2;
    const u = wasm.u32;
    const info = { id: f, name: wasm.cstr(u[w]), blockElems: u[w + 1], blockBytes: u[w + 2], companion: u[w + 3] !== 0 };
    info.supported = x.ws_quant_supported(f, KernelImpl.auto) !== 0;
    list.push(info);
    byName.set(info.name, info);
  }
  wasm.formats = { list, byName };
  return wasm.formats;
}

export function formatFromGgml(wasm, typeId, dialectId) {
  const f = wasm.x.ws_quant_format_from_ggml(typeId, dialectId);
  return f === NONE ? null : formatTable(wasm).list[f];
}

export function formatFromDtype(wasm, dtypeId) {
  const f = wasm.x.ws_quant_format_from_dtype(dtypeId);
  return f === NONE ? null : formatTable(wasm).list[f];
}

// The formats this build decodes (with the kernel family the library picks).
export function supportedFormats(wasm) {
  return formatTable(wasm).list.filter((f) => f.supported).map((f) => f.name);
}
