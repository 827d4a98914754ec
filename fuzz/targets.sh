# The fuzz targets, their seed directories, dictionaries and input size limits: one table for
# fuzz/run.sh (local and CI runs) and fuzz/oss-fuzz/build.sh (OSS-Fuzz). Sourced, from the
# repository root.

# Every target, in the order run.sh runs them.
WS_FUZZ_TARGETS=(fuzz_safetensors fuzz_gguf fuzz_shard_index fuzz_dequant fuzz_chunk_split
                 fuzz_config_json fuzz_ollama_manifest fuzz_uqff fuzz_model_loader)

# ws_fuzz_seeds TARGET CHUNK_SPLIT_DIR: the seed directories (read-only, in the repository).
# fuzz_chunk_split's seeds are made by ws_fuzz_make_chunk_split_seeds into CHUNK_SPLIT_DIR.
ws_fuzz_seeds() {
  case $1 in
    fuzz_safetensors) echo "tests/corpus/safetensors tests/data/real/safetensors samples tests/corpus/fuzz" ;;
    fuzz_gguf) echo "tests/corpus/gguf tests/data/real/gguf tests/data/synthetic/gguf tests/corpus/fuzz tests/corpus/differential" ;;
    fuzz_shard_index) echo "fuzz/corpus/fuzz_shard_index" ;;
    fuzz_dequant) echo "fuzz/corpus/fuzz_dequant" ;;
    fuzz_chunk_split) echo "$2" ;;
    fuzz_config_json) echo "fuzz/corpus/fuzz_config_json tests/corpus/conventions tests/corpus/fuzz" ;;
    fuzz_ollama_manifest) echo "fuzz/corpus/fuzz_ollama_manifest tests/corpus/conventions" ;;
    fuzz_uqff) echo "fuzz/corpus/fuzz_uqff" ;;
    fuzz_model_loader) echo "fuzz/corpus/fuzz_model_loader" ;;
  esac
}

# ws_fuzz_dict TARGET: its dictionary files (concatenated when more than one), or nothing.
ws_fuzz_dict() {
  case $1 in
    fuzz_gguf) echo fuzz/dict/gguf.dict ;;
    fuzz_dequant) echo "" ;;
    fuzz_chunk_split|fuzz_model_loader) echo "fuzz/dict/json.dict fuzz/dict/gguf.dict" ;;
    *) echo fuzz/dict/json.dict ;;
  esac
}

# ws_fuzz_max_len TARGET: the largest input worth trying.
ws_fuzz_max_len() {
  case $1 in
    fuzz_dequant) echo 8192 ;;
    *) echo "${WS_FUZZ_MAX_LEN:-65536}" ;;
  esac
}

# ws_fuzz_make_chunk_split_seeds DIR MAX_LEN: the chunk-split target reads 8 bytes of chunking
# choices before the file, so its seeds are the corpus files (up to MAX_LEN bytes) behind four
# such prefixes.
ws_fuzz_make_chunk_split_seeds() {
  local dir=$1 max_len=$2 i=0 f
  mkdir -p "$dir"
  for f in tests/corpus/safetensors/*.safetensors tests/corpus/gguf/*.gguf tests/data/real/safetensors/*.safetensors \
           tests/data/synthetic/gguf/*.gguf; do
    [ -f "$f" ] || continue
    [ "$(stat -c %s "$f")" -le "$max_len" ] || continue
    i=$((i + 1))
    case $((i % 4)) in
      0) printf '\x00\x00\x00\x00\x01\x00\x00\x00' ;;  # whole vs bytewise
      1) printf '\x03\x11\x00\x00\x1b\x00\x00\x00' ;;  # random vs fixed 7
      2) printf '\x02\x00\x00\x00\x03\x77\x00\x00' ;;  # fixed 1 vs random
      3) printf '\x0f\xa5\x5a\x00\x07\x3c\x00\x00' ;;  # random vs random
    esac >"$dir/$i"
    cat "$f" >>"$dir/$i"
  done
}
