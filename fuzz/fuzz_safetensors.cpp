// libFuzzer target: safetensors header + stream (see reader_target.inc).
#include "reader_target.inc"
