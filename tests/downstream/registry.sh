#!/usr/bin/env bash
# Builds this crate as a user of the published crates builds it: tool-grammar, tool-macros and
# tool-runtime packaged by `cargo package`, put in a local registry that stands in for crates.io
# (cargo's `local-registry` source), and a copy of the crate whose manifest says
# `tool-runtime = "0.1.0"` built from it (tool-runtime's default features), then its test
# (tests/tests/downstream.rs, copied) run. So a file a package leaves out, a path dependency, or
# a manifest that only works inside the workspace fails here.
#
# The registry's other crates are crates.io's as ~/.cargo has them: their index entries from
# cargo's index cache, their .crate files from its download cache. Nothing is fetched; a crate
# this host never downloaded stops the build, naming it. The build has a cargo home and a
# target directory of its own under the workspace's target directory (`downstream-registry/`),
# kept between runs for the dependencies; the three crates are rebuilt on every run.
#
# Needs cargo 1.90 or newer (`cargo package` of several packages that depend on each other) and
# python3. Usage: bash tests/downstream/registry.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
case "$target" in /*) ;; *) target=$root/$target ;; esac
user_registry=${CARGO_HOME:-$HOME/.cargo}/registry
work=$target/downstream-registry
crates=(tool-grammar tool-macros tool-runtime)
started=$SECONDS

# The packages as they would be uploaded. `--no-verify`: building the crate below from them is
# the verification (each package built alone, its siblings from the registry); `--allow-dirty`:
# what is checked is the working tree as it is.
cargo package --quiet --offline --no-verify --allow-dirty "${crates[@]/#/-p}"
version=$(cargo pkgid --offline -p tool-runtime | sed 's/.*[#@]//')

rm -rf "$work/registry" "$work/crate"
# Cargo unpacks a registry's crate once per version and builds from that copy again later; ours
# change without a new version, so copies an earlier run left are removed.
rm -rf "$user_registry"/src/*/tool-{grammar,macros,runtime}-[0-9]*
mkdir -p "$work/registry/index" "$work/crate/src" "$work/crate/tests" "$work/crate/.cargo"
python3 - "$target/package" "$version" "$user_registry" "$work/registry" "${crates[@]}" <<'PYTHON'
"""Writes a local registry: the packaged crates, and crates.io's crates as cargo's caches hold them."""

import hashlib
import json
import shutil
import sys
import tarfile
import tomllib
from pathlib import Path

packaged, version, user_registry, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
ours = sys.argv[5:]


def index_file(name):
    """Where the registry index keeps a crate's entries."""
    n = name.lower()
    if len(n) <= 2:
        return out / "index" / str(len(n)) / n
    if len(n) == 3:
        return out / "index" / "3" / n[0] / n
    return out / "index" / n[:2] / n[2:4] / n


def write(name, lines):
    path = index_file(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))


def cached_entries(path):
    """The (version, JSON line) pairs of a file of cargo's index cache (cache format 3)."""
    data = path.read_bytes()
    if data[:1] != b"\x03":
        sys.exit(f"registry.sh: {path}: not an index cache this script reads (format {data[:1]!r})")
    fields = data[5:].split(b"\0")
    # Then the index's version string, then version and JSON pairs, each field ended by NUL.
    pairs = fields[1:-1]
    return [(pairs[i].decode(), pairs[i + 1].decode()) for i in range(0, len(pairs), 2)]


# crates.io's crates. Of a crate with downloaded .crate files, only those versions, so the
# resolver picks nothing it cannot unpack; of one never downloaded (another platform's), every
# version, so the resolver sees it and nothing here builds it.
entries = {}
downloads = {}
for cache in sorted((user_registry / "index").glob("*/.cache")):
    cache_dir = user_registry / "cache" / cache.parent.name
    for path in cache.rglob("*"):
        if not path.is_file():
            continue
        for vers, line in cached_entries(path):
            name = json.loads(line)["name"]
            entries.setdefault(name, {})[vers] = line
            crate = cache_dir / f"{name}-{vers}.crate"
            if crate.is_file():
                downloads.setdefault(name, {})[vers] = crate
if not entries:
    sys.exit(f"registry.sh: no index cache under {user_registry}/index: build the workspace once first")
for name, versions in entries.items():
    if name in ours:
        continue
    have = downloads.get(name, {})
    if have:
        for vers, crate in have.items():
            (out / crate.name).symlink_to(crate)
        write(name, [versions[v] for v in have])
    else:
        write(name, versions.values())


def dependencies(manifest):
    """A packaged (normalized) manifest's dependencies as index entries."""
    tables = [(None, manifest)] + [(t, v) for t, v in manifest.get("target", {}).items()]
    for target, table in tables:
        for key, kind in (("dependencies", "normal"), ("dev-dependencies", "dev"), ("build-dependencies", "build")):
            for dep_name, spec in table.get(key, {}).items():
                spec = {"version": spec} if isinstance(spec, str) else spec
                if "version" not in spec:
                    sys.exit(f"registry.sh: {manifest['package']['name']}'s dependency {dep_name} has no version")
                yield {
                    "name": dep_name,
                    "req": spec["version"],
                    "features": spec.get("features", []),
                    "optional": spec.get("optional", False),
                    "default_features": spec.get("default-features", True),
                    "target": target,
                    "kind": kind,
                    "package": spec.get("package"),
                }


# The packaged crates, each with the entry crates.io would write when it is published.
for name in ours:
    crate = packaged / f"{name}-{version}.crate"
    with tarfile.open(crate) as tar:
        manifest = tomllib.load(tar.extractfile(f"{name}-{version}/Cargo.toml"))
    package = manifest["package"]
    entry = {
        "name": name,
        "vers": version,
        "deps": list(dependencies(manifest)),
        "cksum": hashlib.sha256(crate.read_bytes()).hexdigest(),
        "features": manifest.get("features", {}),
        "yanked": False,
        "links": package.get("links"),
        "rust_version": package.get("rust-version"),
        "v": 2,
    }
    shutil.copyfile(crate, out / crate.name)
    write(name, [json.dumps(entry)])
PYTHON

# The crate as a user has it: its sources and the workspace's test of its tools, a manifest
# written by hand, no workspace around it.
cp tests/downstream/src/*.rs "$work/crate/src/"
cp tests/tests/downstream.rs "$work/crate/tests/"
cat >"$work/crate/Cargo.toml" <<EOF
[package]
name = "downstream"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
tool-runtime = "$version"
serde = { version = "1", features = ["derive"] }
schemars = "1"

[dev-dependencies]
serde_json = "1"
tokio = { version = "1", features = ["macros", "rt"] }

# Every tool parameter must have a \`///\` description (read by the macro).
[package.metadata.tool-runtime]
require-docs = true

[workspace]
EOF
# The workspace's profiles (so debug settings match its builds), and crates.io replaced by the
# local registry.
{
  cat .cargo/config.toml
  printf '\n[source.crates-io]\nreplace-with = "packaged"\n\n[source.packaged]\nlocal-registry = "%s"\n' "$work/registry"
} >"$work/crate/.cargo/config.toml"

cd "$work/crate"
export CARGO_HOME=$work/home CARGO_TARGET_DIR=$work/target
# A package's files are read again only when its version changes: this run's crates replace
# the last run's unpacked sources and builds.
rm -rf "$CARGO_HOME"/registry/src/*/{tool-grammar,tool-macros,tool-runtime}-"$version"
cargo clean --quiet --offline "${crates[@]/#/-p}"
cargo build --offline
cargo test --offline
echo "registry.sh: tests/downstream built and tested against the packaged crates in $((SECONDS - started)) s"
