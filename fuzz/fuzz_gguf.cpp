// libFuzzer target: GGUF header + stream, KV events included (see reader_target.inc).
#include "reader_target.inc"
