#!/usr/bin/env bash
# run-qemu.sh MACHINE FW.elf HOST_TOOL: runs the firmware under qemu-system-arm with semihosting
# and checks (1) it exits 0 and prints "mcu PASS", (2) every "ck" line it prints equals the host
# tool's line for the same model (the full firmware: all lines equal, in order).
#   --self-test-mismatch: same, with one host line altered; must fail (proves the comparison bites).
set -uo pipefail
mismatch=0
if [ "$1" = "--self-test-mismatch" ]; then mismatch=1; shift; fi
machine="$1"; fw="$2"; host="$3"
out=$(timeout 60 qemu-system-arm -M "$machine" -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native -kernel "$fw" 2>&1)
rc=$?
if [ "$(basename "$fw")" = ws-mcu-fw-loader.elf ]; then
  expected=$("$host" run-loader | grep '^ck ')
elif [ "$(basename "$fw")" = ws-mcu-fw-loader-sha256.elf ]; then
  expected=$("$host" run-loader-sha256 | grep '^ck ')
else
  expected=$("$host" run | grep '^ck ')
fi
if [ $mismatch = 1 ]; then expected=$(echo "$expected" | sed '2s/raw_fnv=\(.\)/raw_fnv=X/'); fi
got=$(echo "$out" | grep '^ck ')
fail=0
[ $rc -eq 0 ] || { echo "qemu exit status $rc"; fail=1; }
echo "$out" | grep -qx 'mcu PASS' || { echo "no 'mcu PASS' line"; fail=1; }
case "$(basename "$fw")" in
  ws-mcu-fw.elf|ws-mcu-fw-loader.elf|ws-mcu-fw-loader-sha256.elf) cmp=$(diff <(echo "$expected") <(echo "$got")) || fail=1 ;;
  *) # parser-only / Q4_0-only: fewer lines, each must be one of the host's
     cmp=$(comm -13 <(echo "$expected" | sort) <(echo "$got" | sort))
     [ -z "$cmp" ] && [ -n "$got" ] || fail=1 ;;
esac
if [ $mismatch = 1 ]; then
  if [ $fail = 1 ]; then echo "mismatch detected: ok"; exit 0; fi
  echo "altered host line was not detected"; exit 1
fi
echo "$out"
if [ $fail = 1 ]; then echo "--- firmware vs host:"; echo "$cmp"; exit 1; fi
