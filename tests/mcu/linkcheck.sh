#!/usr/bin/env bash
# linkcheck.sh NM ELF: fails (and deletes ELF) if the image defines or references an allocator,
# C++ exception or RTTI symbol: malloc/free/calloc/realloc, operator new/delete, __cxa_*,
# __gxx_personality_*, _Unwind_*, typeinfo (_ZTI*, _ZTS*).
#   linkcheck.sh --self-test NM CC: proves the check fails on an object that calls malloc.
set -euo pipefail
forbidden='^(malloc|free|calloc|realloc|_malloc_r|_free_r|_calloc_r|_realloc_r|_Znw.*|_Zna.*|_Zdl.*|_Zda.*|__cxa_.*|__gxx_personality_.*|_Unwind_.*|_ZTI.*|_ZTS.*)$'
if [ "$1" = "--self-test" ]; then
  nm="$2"; cc="$3"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  printf '#include <stdlib.h>\nvoid* f(void){return malloc(4);}\n' > "$tmp/bad.c"
  "$cc" -mthumb -mcpu=cortex-m4 -c "$tmp/bad.c" -o "$tmp/bad.o"
  if bash "$0" "$nm" "$tmp/bad.o" >/dev/null 2>&1; then echo "linkcheck passed an object that calls malloc"; exit 1; fi
  echo "linkcheck rejects malloc: ok"; exit 0
fi
nm="$1"; elf="$2"
hits=$("$nm" "$elf" | awk '{print $NF}' | grep -E "$forbidden" | sort -u || true)
if [ -n "$hits" ]; then
  echo "linkcheck: $(basename "$elf") references forbidden symbols:" >&2
  echo "$hits" | sed 's/^/  /' >&2
  rm -f "$elf"
  exit 1
fi
