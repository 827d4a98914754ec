// weightstream — WebAssembly SIMD128 intrinsics, everywhere.
//
// Under Emscripten with -msimd128 these are the real wasm_simd128.h intrinsics. Natively the same
// source compiles against SIMDe's implementation of them (Debian's libsimde-dev), so the code
// that ships in the wasm module is the code the x86 test suite runs.
#pragma once

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#else
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/wasm/simd128.h>
#endif
