#!/usr/bin/env bash
# The published crates (a2a-card, a2a-card-derive, a2a-card-rules) built with all their
# features, and their unit tests and doctests run, against the lowest versions their
# manifests allow for their direct dependencies (dev-dependencies included): a lower
# bound that is below what the code uses (a feature, a function, a fix it relies on) fails
# here, not in the build of a user whose lockfile holds an older version.
#
#   scripts/minimal-versions.sh
#
# The working tree is copied to a temporary directory whose root manifest keeps only the
# workspace's sections and the three published crates as members: the unpublished packages
# (the root package with the examples and tests, macro-tests, fuzz) do not reach users, and
# their own dependencies are left out of the resolution. The copy's lockfile is resolved anew;
# the repository's Cargo.lock and target/ are not touched. The build goes to
# target/minimal-versions/ (MINIMAL_VERSIONS_TARGET_DIR to choose another), kept between runs,
# with the resolved lockfile beside it (target/minimal-versions/Cargo.lock).
#
# Direct dependencies are resolved to their lowest allowed versions and the rest to the
# highest compatible (`-Z direct-minimal-versions`): the transitive ones are their own
# crates' bounds to get right. This resolution is strict: when another crate in the graph needs
# more of one of our direct dependencies than our bound says (axum 0.8 needs tower 0.5.2), it
# fails instead of choosing a higher version, so each bound states what the crates need with
# all their features.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
target_dir=${MINIMAL_VERSIONS_TARGET_DIR:-$repo/target/minimal-versions}
mkdir -p "$target_dir"
# As in .ci/run (a one-off build; file and line in a backtrace), unless set already.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
export CARGO_PROFILE_DEV_DEBUG=${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}
export CARGO_TARGET_DIR=$target_dir
crates=(-p a2a-card -p a2a-card-derive -p a2a-card-rules)
started=$SECONDS
step() { echo "::: $1 (at $((SECONDS - started)) s)"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step "the working tree copied to $work (without target/, .git/, node_modules/)"
tar -C "$repo" -c --exclude=./target --exclude=./.git --exclude='./ui/node_modules' \
  --exclude='./fuzz/target' --exclude='./fuzz/corpus' . | tar -C "$work" -x
# The root manifest: its [workspace*] sections (with [patch] and [profile], which apply to the
# whole workspace), the members reduced to the published crates; the root package's own
# sections are dropped.
awk '
  /^\[/ { keep = ($0 ~ /^\[(workspace|patch|profile)/) }
  keep && /^members *=/ { print "members = [\"a2a-card\", \"a2a-card-derive\", \"a2a-card-rules\"]"; next }
  keep { print }
' "$repo/Cargo.toml" >"$work/Cargo.toml"
cd "$work"

fail() {
  echo "minimal-versions: $1" >&2
  echo "minimal-versions: failed after $((SECONDS - started)) s" >&2
  exit 1
}

step "resolving: direct dependencies at their lowest allowed versions"
# `-Z` flags are nightly-only and this toolchain is stable: RUSTC_BOOTSTRAP=1 lets stable cargo
# accept this one. It only changes how the lockfile is resolved; the build and the tests below
# run without it, as a user's build would.
if ! RUSTC_BOOTSTRAP=1 cargo update -Z direct-minimal-versions 2>"$work/resolve.log"; then
  cat "$work/resolve.log" >&2
  fail "the lowest versions allowed do not resolve. Raise the lower bound of the dependency
that cargo names above (\"previously selected package\", or the one missing a feature) in
the crate's Cargo.toml or in [workspace.dependencies] of the root Cargo.toml: to the lowest
version the other requirement accepts, or the first version that has the feature."
fi
cp Cargo.lock "$target_dir/Cargo.lock"
step "resolved: the published crates' direct dependencies (all features)"
for crate in a2a-card a2a-card-derive a2a-card-rules; do
  echo "$crate:"
  cargo tree -p "$crate" --all-features -e normal,build,dev --depth 1 --prefix none \
    | tail -n +2 | sort -u | sed 's/^/  /'
done

step "build"
if ! cargo build "${crates[@]}" --all-features; then
  fail "the crates do not build with the lowest versions their manifests allow (the
versions are listed above, the lockfile is $target_dir/Cargo.lock). Raise the lower bound
of the dependency whose API the error above points at, to the first version that has what
the code uses (its changelog says which), in the crate's Cargo.toml or in
[workspace.dependencies]. When the error is in another crate's code (it calls what one of
our direct dependencies lacks at our lowest bound: its own bound is too loose), raise our
bound on the crate it calls to the version it needs (tokio-stream 0.1.18 needs tokio 1.38)."
fi
step "unit tests"
if ! cargo test "${crates[@]}" --all-features --lib; then
  fail "the crates' unit tests fail with the lowest versions their manifests allow (the
lockfile is $target_dir/Cargo.lock). Find the dependency whose older version behaves
differently and raise its lower bound to the first version that behaves as the test expects."
fi
step "doctests (the book's pages among them)"
if ! cargo test "${crates[@]}" --all-features --doc; then
  fail "the crates' doctests fail with the lowest versions their manifests allow (the
lockfile is $target_dir/Cargo.lock). Raise the lower bound of the dependency the failure
points at, as for the unit tests."
fi
echo "minimal-versions: the published crates build and pass their unit tests and doctests with their lowest allowed direct dependencies ($((SECONDS - started)) s)"
