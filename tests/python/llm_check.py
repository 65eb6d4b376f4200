"""Checks tool specs lowered for LLM providers, independently of the code that lowers them.

Reads one JSON object on stdin: {"openai": [...], "openai-responses": [...], "anthropic": [...],
"gemini": [{"functionDeclarations": [...]}]}, each the `tools` value of one request. Prints one
line per problem and exits 1 when there is any.

The rules are the providers' published ones, checked two ways:
- with the providers' own SDKs where they validate or normalise: google-genai's pydantic
  `FunctionDeclaration` (unknown keys and wrong types are rejected), anthropic's
  `transform_schema` and openai's `_ensure_strict_json_schema` (a strict schema must be a fixed
  point: nothing left to rewrite);
- with the rules of the documents, written out here:
  https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
  https://docs.claude.com/en/docs/build-with-claude/structured-outputs
  https://ai.google.dev/api/caching#Schema
"""

import copy
import json
import re
import sys

from anthropic.lib._parse._transform import transform_schema
from google.genai import types as genai
from openai.lib._pydantic import _ensure_strict_json_schema

problems = []


def problem(target, tool, message):
    problems.append(f"{target}: {tool}: {message}")


def subschemas(schema, path=""):
    """Every subschema with its JSON Pointer, depth first."""
    if not isinstance(schema, dict):
        return
    yield path, schema
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        for name, sub in (schema.get(key) or {}).items():
            yield from subschemas(sub, f"{path}/{key}/{name}")
    for key in ("items", "additionalProperties", "not", "if", "then", "else", "contains"):
        if isinstance(schema.get(key), dict):
            yield from subschemas(schema[key], f"{path}/{key}")
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for i, sub in enumerate(schema.get(key) or []):
            yield from subschemas(sub, f"{path}/{key}/{i}")


OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
OPENAI_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
# "Supported properties" of the structured-outputs guide, with the schema structure keywords.
OPENAI_ALLOWED = {"type", "properties", "required", "additionalProperties", "items", "anyOf",
                  "enum", "const", "description", "title", "$ref", "$defs", "pattern", "format",
                  "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
                  "minItems", "maxItems"}
OPENAI_NEVER = {"allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas",
                "patternProperties", "oneOf", "default", "unevaluatedProperties", "propertyNames"}


def check_openai(target, function):
    name = function.get("name", "")
    if not OPENAI_NAME.match(name):
        problem(target, name, "name must match ^[a-zA-Z0-9_-]{1,64}$")
    params = function.get("parameters")
    if not isinstance(params, dict) or params.get("type") != "object":
        problem(target, name, "parameters must be an object schema")
        return
    if "$schema" in params:
        problem(target, name, "$schema is not accepted in parameters")
    if not function.get("strict"):
        return
    if "anyOf" in params:
        problem(target, name, "the root of a strict schema must not be anyOf")
    fixed = _ensure_strict_json_schema(copy.deepcopy(params), path=(), root=params)
    if fixed != params:
        problem(target, name, "strict schema is not a fixed point of the SDK's strict form")
    properties = enums = 0
    depth = 0
    for path, sub in subschemas(params):
        for key in sorted(OPENAI_NEVER & set(sub)):
            problem(target, name, f"{path or '/'}: `{key}` is not supported in strict mode")
        for key in sorted(set(sub) - OPENAI_ALLOWED - OPENAI_NEVER):
            problem(target, name, f"{path or '/'}: `{key}` is not a supported property in strict mode")
        fmt = sub.get("format")
        if fmt is not None and fmt not in OPENAI_FORMATS:
            problem(target, name, f"{path or '/'}: format {fmt} is not supported")
        if sub.get("type") == "object" or "properties" in sub:
            if sub.get("additionalProperties") is not False:
                problem(target, name, f"{path or '/'}: additionalProperties must be false")
            props = list((sub.get("properties") or {}).keys())
            if sorted(sub.get("required") or []) != sorted(props):
                problem(target, name, f"{path or '/'}: every property must be required")
            properties += len(props)
            depth = max(depth, path.count("/properties/") + 1)
        enums += len(sub.get("enum") or [])
        if "$ref" in sub and len(sub) > 1:
            problem(target, name, f"{path}: $ref must stand alone")
    if properties > 5000 or depth > 10 or enums > 1000:
        problem(target, name, "over the size limits of strict mode")


ANTHROPIC_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def check_anthropic(target, tool):
    name = tool.get("name", "")
    if not ANTHROPIC_NAME.match(name):
        problem(target, name, "name must match ^[a-zA-Z0-9_-]{1,64}$")
    schema = tool.get("input_schema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        problem(target, name, "input_schema must be an object schema")
        return
    if set(tool) - {"name", "description", "input_schema", "strict"}:
        problem(target, name, f"unknown keys {sorted(set(tool) - {'name', 'description', 'input_schema', 'strict'})}")
    if not tool.get("strict"):
        return
    if "$defs" in schema or any("$ref" in sub for _, sub in subschemas(schema)):
        problem(target, name, "strict tools may not be recursive")
    try:
        transformed = transform_schema(copy.deepcopy(schema))
    except (AssertionError, ValueError) as e:
        problem(target, name, f"the SDK's strict transform rejects it: {e}")
        return
    if transformed != schema:
        problem(target, name, "strict schema is not a fixed point of the SDK's strict transform")


GEMINI_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")
GEMINI_NEVER = {"additionalProperties", "$ref", "$defs", "oneOf", "allOf", "not", "const",
                "$schema", "default", "if", "then", "else", "patternProperties"}
GEMINI_FORMATS = {"number": {"float", "double"}, "integer": {"int32", "int64"}, "string": {"enum", "date-time"}}


def check_gemini(target, declaration):
    name = declaration.get("name", "")
    if not GEMINI_NAME.match(name):
        problem(target, name, "name must start with a letter or _ and have at most 64 of a-zA-Z0-9_.:-")
    try:
        genai.FunctionDeclaration.model_validate(declaration)
    except Exception as e:  # pydantic's ValidationError, with every field named
        problem(target, name, f"google-genai rejects it: {e}")
    params = declaration.get("parameters")
    if params is None:
        return
    if str(params.get("type", "")).lower() != "object" or not params.get("properties"):
        problem(target, name, "parameters must be an OBJECT with at least one property")
    for path, sub in subschemas(params):
        for key in GEMINI_NEVER & set(sub):
            problem(target, name, f"{path or '/'}: `{key}` is not in Gemini's Schema")
        ty = sub.get("type")
        if ty is not None and not isinstance(ty, str):
            problem(target, name, f"{path or '/'}: type must be one type (nullable for null)")
        if "enum" in sub and not all(isinstance(v, str) for v in sub["enum"]):
            problem(target, name, f"{path or '/'}: enum values must be strings")
        fmt = sub.get("format")
        if fmt is not None and fmt not in GEMINI_FORMATS.get(str(ty).lower(), set()):
            problem(target, name, f"{path or '/'}: format {fmt} is not supported for {ty}")
        if str(sub.get("type", "")).lower() == "array" and "items" not in sub:
            problem(target, name, f"{path or '/'}: an ARRAY needs items")


def main():
    specs = json.load(sys.stdin)
    for tool in specs.get("openai", []):
        if tool.get("type") != "function" or set(tool) != {"type", "function"}:
            problem("openai", tool.get("function", {}).get("name"), "a Chat Completions tool is {type: function, function: {...}}")
        check_openai("openai", tool.get("function", {}))
    for tool in specs.get("openai-responses", []):
        if tool.get("type") != "function" or "function" in tool:
            problem("openai-responses", tool.get("name"), "a Responses tool is {type: function, name, parameters, strict}")
        check_openai("openai-responses", tool)
    for key in ("anthropic", "anthropic-strict"):
        for tool in specs.get(key, []):
            check_anthropic(key, tool)
    gemini = specs.get("gemini")
    if gemini is not None:
        if not (isinstance(gemini, list) and len(gemini) == 1 and set(gemini[0]) == {"functionDeclarations"}):
            problem("gemini", "", "tools must be [{functionDeclarations: [...]}]")
        else:
            declarations = gemini[0]["functionDeclarations"]
            if len(declarations) > 128:
                problem("gemini", "", "at most 128 function declarations")
            for d in declarations:
                check_gemini("gemini", d)
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()
