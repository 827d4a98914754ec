#!/usr/bin/env bash
# Size report of the Cortex-M4F firmware configurations (tests/mcu):
#   bash tools/mcu-size.sh            configure + build the mcu preset, then report
#   bash tools/mcu-size.sh --no-build BUILD_DIR   report on an existing build (the mcu-size target)
# Per configuration: the library's share of the image (from the linker map: code = .text.*,
# constants = .rodata.*, input sections from libweightstream.a that --gc-sections kept), and the
# whole image (startup, app, newlib memcpy/strlen/... included) as arm-none-eabi-size prints it.
# Then the parser-only configuration's library code per object file.
# Only the map's "Linker script and memory map" part counts: the "Discarded input sections" list
# before it names sections --gc-sections dropped and duplicate inline functions (COMDAT) the image
# does not contain.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--no-build" ]; then
  build="$2"
else
  build=build/mcu
  cmake --preset mcu >/dev/null
  cmake --build --preset mcu >/dev/null
fi
lib_share() {  # MAP [per-object] -> "code rodata" of libweightstream.a's kept input sections
  awk -v per_object="${2:-}" '
    function hex(s,   i, c, v) { v = 0; s = tolower(substr(s, 3)); for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }; return v }
    /^Linker script and memory map/ { kept = 1 }
    kept && /^ \.(text|rodata)/ {
      sec = $1
      if (NF >= 4 && $2 ~ /^0x/) { addr = $2; size = $3; file = $4 } else { getline; if ($1 !~ /^0x/) next; addr = $1; size = $2; file = $3 }
      # Merged string sections (.rodata.*.str1.1): every object that contributes one is listed at
      # the merged output address with the pool'"'"'s whole size; the pool counts once (its first object).
      if (sec ~ /^\.rodata/ && sec ~ /str1/ && seen[addr]++) next
      if (file ~ /libweightstream\.a/) {
        obj = file; sub(/.*\(/, "", obj); sub(/\.obj\)$|\.o\)$|\)$/, "", obj)
        if (sec ~ /^\.text/) { code += hex(size); ocode[obj] += hex(size) } else { ro += hex(size); oro[obj] += hex(size) }
      }
    }
    /^\/DISCARD\/|^OUTPUT\(/ { exit }
    END {
      if (per_object) { for (o in ocode) printf "  %-40s %10d %10d\n", o, ocode[o], oro[o] }
      else printf "%d %d\n", code, ro
    }' "$1"
}
printf '%-34s %10s %10s %10s %10s %8s\n' configuration "lib code" "lib const" "image text" "image bss" "stack*"
for cfg in "ws-mcu-fw-parser:parser only (safetensors + GGUF)" "ws-mcu-fw-q4:parser + Q4_0 kernel" "ws-mcu-fw:parser + Dequantizer (all kernels)" \
           "ws-mcu-fw-loader:model loader (2 files, all kernels)" \
           "ws-mcu-fw-loader-sha256:model loader + SHA-256 of each file"; do
  fw="${cfg%%:*}"; label="${cfg#*:}"
  elf="$build/mcu/$fw.elf"
  read -r code ro < <(lib_share "$elf.map")
  read -r text data bss _ < <(arm-none-eabi-size "$elf" | tail -1)
  stack=$(timeout 60 qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$elf" </dev/null 2>&1 | sed -n 's/.*stack_high_water=\([0-9]*\).*/\1/p')
  printf '%-34s %10d %10d %10d %10d %8s\n' "$label" "$code" "$ro" "$((text + data))" "$bss" "${stack:-?}"
done
echo "(bytes; stack* = high-water mark measured under qemu-system-arm -M mps2-an386, painted stack)"
echo
# SHA-256 is optional on the device: only an image that gives the loader a digest links it.
lib_share "$build/mcu/ws-mcu-fw-loader-sha256.elf.map" per-object |
  awk '$1 == "sha256.cpp" { c += $2; r += $3; s = s "sha256.cpp " $2 " B" }
       $1 == "model_digest.cpp" { c += $2; r += $3; s = s ", model_digest.cpp " $2 " B" }
       END { printf "SHA-256 .text: %d B of code, %d B of constants (%s); the other images have none\n", c, r, s }'
echo
printf '%-42s %10s %10s\n' "parser only, per object" "lib code" "lib const"
lib_share "$build/mcu/ws-mcu-fw-parser.elf.map" per-object | sort -k2,2nr
