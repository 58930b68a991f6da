#!/usr/bin/env bash
# Vendor KaTeX from the npm registry into src/math2/web/static/katex/ (no CDN at run time).
# The built files are committed; rerun this to move to another version: scripts/vendor_katex.sh 0.19.1
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-0.19.1}
dest=src/math2/web/static/katex
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "katex@${version}" >/dev/null && tar xzf "katex-${version}.tgz")
rm -rf "$dest" && mkdir -p "$dest/fonts"
cp "$tmp/package/dist/katex.min.js" "$tmp/package/dist/katex.min.css" "$tmp/package/LICENSE" "$dest/"
# woff2 only: every browser the app supports reads it, and the CSS lists it first.
cp "$tmp/package/dist/fonts/"*.woff2 "$dest/fonts/"
echo "$version" > "$dest/VERSION"
echo "KaTeX $version vendored into $dest"
