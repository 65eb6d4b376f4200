#!/usr/bin/env bash
# The test command: installs the Debian packages the tests drive or start (tests/debian/packages.txt:
# Chromium, nginx, Redis, PostgreSQL), makes the Python venv the checkers need (jsonschema,
# openapi-spec-validator, mcp, schemathesis, the model providers' SDKs, openai-agents; once) and
# installs the MCP TypeScript SDK client and the reference MCP server (npm, once), then runs every
# test of the workspace, after tests/downstream/registry.sh when there are no arguments. Extra
# arguments go to `cargo test`. What it cannot install stops it before any test runs.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
while read -r package command; do
  case "$package" in "" | "#"*) continue ;; esac
  # A command with a slash is a path, possibly a glob (a versioned directory such as PostgreSQL's).
  if [[ $command == */* ]]; then
    compgen -G "$command" >/dev/null && continue
  else
    command -v "$command" >/dev/null && continue
  fi
  if command -v dpkg-query >/dev/null; then
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q ' installed$' && continue
  fi
  missing+=("$package")
done <tests/debian/packages.txt
if ((${#missing[@]})); then
  if [ "$(id -u)" = 0 ]; then as_root=(); else as_root=(sudo -n); fi
  if command -v apt-get >/dev/null && { ((${#as_root[@]} == 0)) || sudo -n true 2>/dev/null; }; then
    echo "tests/run.sh: installing ${missing[*]} (Debian)" >&2
    if [[ " ${missing[*]} " == *" postgresql "* ]]; then
      # The tests start their own throwaway clusters: the package is not to create and start one.
      # postgresql-common keeps this file when it is already there (ucf, told to keep it below).
      conf=/etc/postgresql-common/createcluster.conf
      "${as_root[@]}" mkdir -p "${conf%/*}"
      "${as_root[@]}" sh -c "sed -i '/create_main_cluster/d' $conf 2>/dev/null; echo 'create_main_cluster = false' >>$conf"
    fi
    "${as_root[@]}" apt-get update -qq
    # Through env: sudo would drop variables set before it.
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive UCF_FORCE_CONFFOLD=1 \
      apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "tests/run.sh: the tests need ${missing[*]}, which this user cannot install here." >&2
    echo "Install them, then run the tests again: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
if ! .venv/bin/python -c 'import jsonschema, openapi_spec_validator, schemathesis, mcp, openai, anthropic, google.genai, agents' 2>/dev/null \
  || ! cmp -s tests/python/requirements.txt .venv/requirements.txt; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt
  cp tests/python/requirements.txt .venv/requirements.txt
fi
# The official MCP TypeScript SDK client, the reference server server-everything and the
# conformance suite (tests/node/package-lock.json), for the MCP, remote-server and conformance tests.
if ! cmp -s tests/node/package-lock.json tests/node/node_modules/.package-lock.json.installed; then
  (cd tests/node && npm ci --no-audit --no-fund --loglevel=error)
  cp tests/node/package-lock.json tests/node/node_modules/.package-lock.json.installed
fi
export TOOL_TESTS_PYTHON="$PWD/.venv/bin/python"
# A full run (no arguments) also builds tests/downstream from the packaged crates through a
# local registry, as a user of the published crates builds it (tests/downstream/registry.sh).
if (($# == 0)); then
  bash tests/downstream/registry.sh
fi
exec cargo test --workspace "$@"
