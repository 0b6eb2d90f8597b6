#!/usr/bin/env bash
# Builds the form page a2a-card serves at /ui (a2a_card::server::Server::ui) from ui/: installs
# the pinned npm packages from ui/package-lock.json (`npm ci`) and copies the page, its script
# and style, and @json-editor/json-editor's own built bundle (with its licence) into
# a2a-card/src/server/ui/, which is committed and embedded in the binary, so that building an
# agent needs only the Rust toolchain.
#
#   scripts/build-ui.sh           rebuild the committed assets
#   scripts/build-ui.sh --check   fail when the committed assets differ from a fresh build (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
out=a2a-card/src/server/ui
check=false
if [[ "${1:-}" == "--check" ]]; then
  check=true
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
npm ci --silent --no-audit --no-fund --prefix ui >/dev/null
editor=ui/node_modules/@json-editor/json-editor
mkdir -p "$out"
cp ui/src/index.html ui/src/app.js ui/src/app.css "$out/"
cp "$editor/dist/jsoneditor.js" "$out/jsoneditor.js"
{
  echo "@json-editor/json-editor $(node -p "require('./$editor/package.json').version"), https://github.com/json-editor/json-editor"
  echo
  cat "$editor/LICENSE"
  echo
  cat "$editor/dist/jsoneditor.js.LICENSE.txt"
} > "$out/jsoneditor.LICENSE.txt"
if $check; then
  if ! diff -r "$out" a2a-card/src/server/ui; then
    echo "a2a-card/src/server/ui differs from a build of ui/: run scripts/build-ui.sh and commit" >&2
    exit 1
  fi
  echo "a2a-card/src/server/ui matches a build of ui/"
fi
