#!/usr/bin/env bash
# Installs the Debian packages weightstream needs, only those missing. Idempotent; needs root
# (or sudo) only when something is missing. Each part of the project lists its packages in
# tools/deps/*.txt (one per line).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=()
for list in tools/deps/*.txt; do
  while read -r line; do
    line="${line%%#*}"
    line="${line//[[:space:]]/}"
    [ -n "$line" ] && packages+=("$line")
  done < "$list"
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm run the JS tests and build the npm package. Checked by command, not by package:
# a machine may have them from another packaging of Node (whose nodejs bundles npm), and Debian's
# npm package must not be installed over that.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
