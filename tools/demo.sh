#!/usr/bin/env bash
# The main job on the bundled sample model: build the CLI (release), then stream the sample
# through it — tensor table, metadata and verdict — and validate the sharded sample.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target weightstream_cli   # the CLI; `weightstream` is the library
cli=build/release/tools/weightstream
echo
echo "\$ weightstream inspect samples/tiny-llama.safetensors"
"$cli" inspect samples/tiny-llama.safetensors
echo
echo "\$ weightstream validate samples/tiny-llama.safetensors samples/sharded/model.safetensors.index.json"
"$cli" validate samples/tiny-llama.safetensors samples/sharded/model.safetensors.index.json
echo; echo "The web page (open, inspect and stream a model into WebGPU): bash tools/web.sh, then open http://127.0.0.1:8080/"
