// Large outputs with non-temporal stores (native x86 only; see run_kernel in simd_util.h).
//
// The kernel body decodes a few blocks at a time into a small buffer that stays in L1; each
// tile then goes to its destination with non-temporal stores, which write whole lines without
// reading them first. The extra L1 round trip is cheap next to the memory traffic it saves.
#include "simd_util.h"

#if defined(WS_SIMD128_STREAMING_STORES)
#include <emmintrin.h>
#endif

namespace ws {
namespace kernels {
namespace simd128 {

void decode_streaming(KernelBody body, const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx,
                      size_t block_bytes, size_t block_elems) {
#if defined(WS_SIMD128_STREAMING_STORES)
  // 2 KiB: 2 K-quant blocks, 16 blocks of 32, 512 element-wise values. Small on purpose: each
  // tile's 128 streaming stores then drain while the next tile is computed, where an 8 KiB tile's
  // 512 filled the store buffer and stalled the core, so arithmetic and memory took turns
  // (64 MiB Q6_K 0.75-0.83 of memset with 8 KiB tiles, 0.94-1.00 with 2 KiB; 1 KiB no better).
  constexpr size_t kTileFloats = 512;
  alignas(64) float tile[kTileFloats];
  const size_t per_tile = block_elems >= kTileFloats ? 1 : kTileFloats / block_elems;
  for (size_t b = 0; b < n_blocks;) {
    const size_t nb = n_blocks - b < per_tile ? n_blocks - b : per_tile;
    const KernelContext c{ctx.spec, ctx.first_block + b};
    body(src + b * block_bytes, nb, tile, c);
    const size_t n = nb * block_elems;
    float* out = dst + b * block_elems;  // 16-byte aligned: every tile is a multiple of 4 values
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      _mm_stream_ps(out + i, _mm_load_ps(tile + i));
      _mm_stream_ps(out + i + 4, _mm_load_ps(tile + i + 4));
      _mm_stream_ps(out + i + 8, _mm_load_ps(tile + i + 8));
      _mm_stream_ps(out + i + 12, _mm_load_ps(tile + i + 12));
    }
    for (; i + 4 <= n; i += 4) _mm_stream_ps(out + i, _mm_load_ps(tile + i));
    for (; i < n; ++i) out[i] = tile[i];  // the last tile of an element-wise call
    b += nb;
  }
  // Non-temporal stores are weakly ordered: make them visible before the caller reads dst.
  _mm_sfence();
#else
  (void)block_bytes;
  (void)block_elems;
  body(src, n_blocks, dst, ctx);
#endif
}

}  // namespace simd128
}  // namespace kernels
}  // namespace ws
