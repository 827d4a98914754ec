#!/usr/bin/env bash
# Stage: weightstream as another project takes it (issue #20). Installs the release build to a
# temporary prefix; builds tests/consumers against it with find_package(weightstream) and with
# pkg-config, outside the tree, and checks their output on the bundled sample exactly; builds the
# same consumer with weightstream as a subproject (add_subdirectory: the library alone); and
# cross-compiles the find_package consumer for the Cortex-M4F against an mcu-preset install.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
version=$(cat VERSION)
sample=samples/tiny-llama.safetensors
fail() { echo "45-install: $*" >&2; exit 1; }

# The consumer's output: the version line (from VERSION and the build's options), then the table
# and checksum committed in tests/consumers/tiny-llama.expected.
check_output() {  # check_output PROGRAM SIMD FAST_PATH
  "$1" "$sample" > "$work/out.txt"
  { echo "weightstream $version (simd128 $2, safetensors fast path $3)"; cat tests/consumers/tiny-llama.expected; } > "$work/want.txt"
  diff -u "$work/want.txt" "$work/out.txt" || fail "$1: output differs"
}

echo "--- native install (release preset)"
cmake --preset release >/dev/null
cmake --build --preset release --target weightstream weightstream_cli
cmake --install build/release --prefix "$work/native" >/dev/null
[ "$("$work/native/bin/weightstream" version)" = "weightstream $version" ] || fail "installed CLI version"
# Every installed header compiles on its own (a public header that includes a detail/ header that
# was not installed fails here).
for h in $(cd "$work/native/include" && find weightstream -name '*.h' | sort); do
  echo "#include <$h>" | g++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I"$work/native/include" -x c++ - ||
    fail "installed header $h does not compile alone"
done
# Nothing the library keeps private is installed.
for h in bytes.h duplicate_finder.h heap_sort.h json_scan.h json_strings.h; do
  [ ! -e "$work/native/include/weightstream/detail/$h" ] || fail "private header detail/$h installed"
done

echo "--- find_package consumer"
cmake -S tests/consumers/find_package -B "$work/fp" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/native" | tee "$work/fp.log" | grep 'weightstream '
grep -q "weightstream $version: SIMD128 kernels ON, safetensors fast path ON" "$work/fp.log" || fail "package variables"
cmake --build "$work/fp"
check_output "$work/fp/list_tensors" 1 1
# The package's version check: this major.minor is compatible, the previous minor is not (0.x:
# SameMinorVersion, a minor version may change the API).
version_ok() {  # version_ok MAJOR MINOR -> TRUE or FALSE
  printf 'set(PACKAGE_FIND_VERSION %s.%s)\nset(PACKAGE_FIND_VERSION_MAJOR %s)\nset(PACKAGE_FIND_VERSION_MINOR %s)\nset(PACKAGE_FIND_VERSION_COUNT 2)\ninclude("%s")\nmessage("${PACKAGE_VERSION_COMPATIBLE}")\n' \
    "$1" "$2" "$1" "$2" "$work/native/lib/cmake/weightstream/weightstreamConfigVersion.cmake" > "$work/vcheck.cmake"
  cmake -P "$work/vcheck.cmake" 2>&1
}
IFS=. read -r major minor _ <<< "$version"
[ "$(version_ok "$major" "$minor")" = TRUE ] || fail "ConfigVersion refuses $major.$minor"
[ "$minor" = 0 ] || [ "$(version_ok "$major" $((minor - 1)))" = FALSE ] || fail "ConfigVersion accepts $major.$((minor - 1))"

echo "--- pkg-config consumer"
export PKG_CONFIG_PATH="$work/native/lib/pkgconfig"
[ "$(pkg-config --modversion weightstream)" = "$version" ] || fail "pkg-config version"
[ "$(pkg-config --variable=kernels_simd128 weightstream)" = 1 ] || fail "pkg-config kernels_simd128"
mkdir -p "$work/pc"
make -s -C tests/consumers/pkg-config OUT="$work/pc"
check_output "$work/pc/list_tensors" 1 1
# Relocatable: the prefix moved after installing still works for both.
mv "$work/native" "$work/moved"
export PKG_CONFIG_PATH="$work/moved/lib/pkgconfig"
rm -f "$work/pc/list_tensors"
make -s -C tests/consumers/pkg-config OUT="$work/pc"
check_output "$work/pc/list_tensors" 1 1
cmake -S tests/consumers/find_package -B "$work/fp-moved" -G Ninja -DCMAKE_PREFIX_PATH="$work/moved" >/dev/null
cmake --build "$work/fp-moved" >/dev/null
check_output "$work/fp-moved/list_tensors" 1 1

echo "--- subproject (add_subdirectory): the library alone"
cmake -S tests/consumers/find_package -B "$work/sub" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DWEIGHTSTREAM_SOURCE_DIR="$root" >/dev/null
cmake --build "$work/sub" -j2 >/dev/null
check_output "$work/sub/list_tensors" 1 1

echo "--- Cortex-M4F: mcu-preset install, the find_package consumer cross-compiled"
cmake --preset mcu -B "$work/mcu-build" >/dev/null
cmake --build "$work/mcu-build" --target weightstream
cmake --install "$work/mcu-build" --prefix "$work/mcu" >/dev/null
grep -q '^kernels_simd128=0$' "$work/mcu/lib/pkgconfig/weightstream.pc" || fail "mcu .pc options"
cmake -S tests/consumers/find_package -B "$work/fp-mcu" -G Ninja -DCMAKE_BUILD_TYPE=MinSizeRel \
  -DCMAKE_TOOLCHAIN_FILE="$root/cmake/arm-none-eabi.cmake" -DCMAKE_PREFIX_PATH="$work/mcu" | tee "$work/mcu.log" | grep 'weightstream '
grep -q "weightstream $version: SIMD128 kernels OFF, safetensors fast path OFF" "$work/mcu.log" || fail "mcu package variables"
cmake --build "$work/fp-mcu"
file "$work/fp-mcu/list_tensors" | grep -q 'ELF 32-bit LSB executable, ARM' || fail "not an ARM executable"
echo "45-install: all consumers built and checked"
