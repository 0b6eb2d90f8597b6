#!/usr/bin/env bash
# Builds the form page a2a-card serves at /ui (a2a_card::server::Server::ui) from ui/src/: the
# page, its two scripts (form.js: forms from JSON Schemas and the descriptions' Markdown;
# app.js: the page) and its style, copied into a2a-card/src/server/bindings/ui/, which is committed and
# embedded in the binary, so that building an agent needs only the Rust toolchain. The page
# has no runtime dependency; `npm ci` installs the browser test's (playwright-core, axe-core)
# from ui/package-lock.json.
#
#   scripts/build-ui.sh           rebuild the committed assets
#   scripts/build-ui.sh --check   fail when the committed assets differ from a fresh build (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
out=a2a-card/src/server/bindings/ui
check=false
if [[ "${1:-}" == "--check" ]]; then
  check=true
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
npm ci --silent --no-audit --no-fund --prefix ui >/dev/null
mkdir -p "$out"
if ! $check; then
  # Assets of an earlier build that this one no longer makes.
  find "$out" -maxdepth 1 -type f ! -name index.html ! -name form.js ! -name app.js ! -name app.css -delete
fi
cp ui/src/index.html ui/src/form.js ui/src/app.js ui/src/app.css "$out/"
if $check; then
  if ! diff -r "$out" a2a-card/src/server/bindings/ui; then
    echo "a2a-card/src/server/bindings/ui differs from a build of ui/: run scripts/build-ui.sh and commit" >&2
    exit 1
  fi
  echo "a2a-card/src/server/bindings/ui matches a build of ui/"
fi
