#!/usr/bin/env bash
# The test command: makes the Python venv the checkers need (jsonschema, openapi-spec-validator, mcp,
# schemathesis, the model providers' SDKs, openai-agents; once) and installs the MCP TypeScript SDK client and
# the reference MCP server (npm, once), then runs
# every test of the workspace. Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
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
exec cargo test --workspace "$@"
