#!/usr/bin/env bash
# Counts tool-runtime's public API as rustdoc lists it (every feature on, hidden items left out):
# the names at the crate's root (re-exports, modules, macros, types, traits, functions), and the
# items in each public module, and fails when the root holds more than 20 items or 16 modules:
# the root is the vocabulary a user writes with, the rest lives in modules named for what a user
# looks for. Reads the documentation `cargo doc -p tool-runtime --no-deps
# --all-features` writes under DOC_DIR (default target/doc), built here if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
doc="${DOC_DIR:-target/doc}/tool_runtime"
if [ ! -f "$doc/all.html" ]; then
  cargo doc -p tool-runtime --no-deps --all-features --quiet
fi
python3 - "$doc/all.html" "$doc/index.html" <<'PY'
import collections, re, sys

items = [re.sub(r'<wbr>', '', n) for n in re.findall(r'<li><a href="[^"]+">(.+?)</a></li>', open(sys.argv[1]).read())]
index = open(sys.argv[2]).read()
# The name each root entry links to (its title holds the full path, which `<wbr>` does not cut).
link = r'<a class="([a-z]+)" href="[^"]+" title="[a-z]+ tool_runtime::(?:[a-z_0-9]+::)*([A-Za-z_0-9]+)"'
# A name can be a module and a macro at once (`app`, as `std::vec`): both are counted.
root = set()
for kind, name in re.findall(r'<dt(?: id="[^"]*")?>(?:<code>[^<]*)?' + link, index):
    root.add((name, kind))
modules = sorted(n for n, k in root if k == "mod")
others = sorted(n + ("!" if k == "macro" else "") for n, k in root if k != "mod")
inside = collections.Counter(n.split("::")[0] for n in items if "::" in n)
print(f"root: {len(root)} names ({len(others)} items, {len(modules)} modules)")
print("  items:", " ".join(others))
print("  modules:", " ".join(modules))
print(f"in public modules: {sum(inside.values())} items")
for module, count in sorted(inside.items()):
    print(f"  {module}: {count}")
too_many = []
if len(others) > 20:
    too_many.append(f"{len(others)} items at the root (at most 20)")
if len(modules) > 16:
    too_many.append(f"{len(modules)} modules at the root (at most 16)")
if too_many:
    sys.exit("public_api: " + "; ".join(too_many) + ": move the new names into the module a user would look in")
PY
