// weightstream — split GGUF models (llama.cpp's gguf-split; FORMATS.md §8): the file names and the
// three keys. ws::ModelLoader applies the rules (model_loader.h); these are the pieces a host or a
// test may want on their own.
//
// A model in N splits is the files `<prefix>-00001-of-0000N.gguf` ... `<prefix>-0000N-of-0000N.gguf`
// (llama_split_path's "%s-%05d-of-%05d.gguf", numbered from 1). Each is a whole GGUF file with its
// own header and data section. Every split holds `split.no` (u16, its 0-based number),
// `split.count` (u16, N) and `split.tensors.count` (i32, the tensors of all splits); the first
// holds every other key-value of the model too, the others nothing else. A file with
// `split.count` absent, 0 or 1 is one whole model (llama.cpp: n_split > 1 makes a split model).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace ws {

constexpr const char* kGgufSplitNo = "split.no";
constexpr const char* kGgufSplitCount = "split.count";
constexpr const char* kGgufSplitTensorsCount = "split.tensors.count";
// "-00001-of-00003.gguf": what follows the prefix (split.count is a u16: five digits always).
constexpr size_t kGgufSplitSuffixChars = 20;

// The name of split `no` (0-based) of `count`: prefix + "-%05d-of-%05d.gguf". Writes it and a NUL
// to `out` and returns its length, or returns 0 when `cap` < prefix_len + 21 or no >= count or
// count > 65535.
size_t gguf_split_name(const char* prefix, size_t prefix_len, uint32_t no, uint32_t count, char* out, size_t cap);

// When `name` is a split's name for a model of `count` splits (llama_split_prefix's test: a
// non-empty prefix, then exactly "-%05d-of-%05d.gguf" with 1 <= number <= count): true, with the
// prefix's length and the split's 0-based number.
bool gguf_split_parse(const char* name, size_t n, uint32_t count, size_t* prefix_len, uint32_t* no);

}  // namespace ws
