//! The OpenAPI 3.1 document of a registry: one operation per tool, request bodies from the input
//! schemas, 200 responses with the output inside the envelope, and every error status of the
//! envelope table documented with the error envelope's shape.

mod items;
mod tasks;

use serde_json::{Map, Value, json};

use crate::registry::Registry;
use crate::registry::ToolRef;
use crate::schema::walk::standard_formats_only;

/// The statuses the pipeline and the HTTP layer produce, and when.
const ERROR_STATUSES: &[(&str, &str)] = &[
    (
        "400",
        "The body is not JSON, not an object, or nested too deeply (`invalid_request`)",
    ),
    ("403", "A policy or guard refused the call (`forbidden`)"),
    (
        "404",
        "No such tool (`unknown_tool`), or the tool's own `not_found`",
    ),
    (
        "409",
        "A destructive tool was called without confirmation (`confirmation_required`)",
    ),
    (
        "413",
        "The body is larger than the limit (`payload_too_large`)",
    ),
    (
        "415",
        "The body is not `application/json` (`unsupported_media_type`)",
    ),
    (
        "422",
        "The arguments break the input schema; every violation listed (`invalid_arguments`)",
    ),
    (
        "429",
        "Over a rate limit (`rate_limited`); see `Retry-After`",
    ),
    (
        "500",
        "The tool failed unexpectedly (`internal`) or with its own error (`tool_failed`)",
    ),
    ("503", "Not ready, or over capacity (`unavailable`)"),
    ("504", "The tool ran past its time limit (`timeout`)"),
];

/// Builds the document of the tools `caller` may see ([`Registry::visible`]), as
/// `GET /openapi.json` serves it to that caller. `auth` documents bearer authentication and the
/// 401 response.
#[must_use]
pub fn document(
    registry: &Registry,
    caller: &crate::Caller,
    title: &str,
    version: &str,
    auth: bool,
) -> Value {
    document_for(&registry.visible(caller), title, version, auth)
}

/// Builds the document of `tools`: those a caller may see.
#[must_use]
#[allow(clippy::too_many_lines, clippy::needless_pass_by_value)] // Reason: the document reads best as one literal-heavy listing.
pub(crate) fn document_for(tools: &[ToolRef<'_>], title: &str, version: &str, auth: bool) -> Value {
    let mut schemas = Map::new();
    schemas.insert(
        "Meta".into(),
        json!({
            "type": "object",
            "required": ["request_id"],
            "properties": {
                "request_id": {"type": "string"},
                "duration_ms": {"type": "number"}
            }
        }),
    );
    schemas.insert("Error".into(), json!({
        "type": "object",
        "required": ["type", "message", "retryable"],
        "properties": {
            "type": {"type": "string", "description": "Stable error type, such as `invalid_arguments`"},
            "message": {"type": "string"},
            "retryable": {"type": "boolean"},
            "details": {
                "type": "object",
                "properties": {
                    "violations": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["path", "message"],
                            "properties": {
                                "path": {"type": "string", "description": "JSON pointer to the offending value; for a missing property, its object"},
                                "message": {"type": "string"},
                                "keyword": {"type": "string", "description": "The JSON Schema keyword broken, such as `required`, `type`, `minimum`"},
                                "property": {"type": "string", "description": "The property a `required`, `additionalProperties` or `unevaluatedProperties` violation names"}
                            }
                        }
                    }
                }
            }
        }
    }));
    schemas.insert(
        "ErrorEnvelope".into(),
        json!({
            "type": "object",
            "required": ["tool", "status", "error", "meta"],
            "properties": {
                "tool": {"type": ["string", "null"]},
                "status": {"const": "error"},
                "error": {"$ref": "#/components/schemas/Error"},
                "meta": {"$ref": "#/components/schemas/Meta"}
            }
        }),
    );
    schemas.insert(
        "OkEnvelope".into(),
        json!({
            "type": "object",
            "required": ["tool", "status", "result", "meta"],
            "properties": {
                "tool": {"type": "string"},
                "status": {"const": "ok"},
                "result": {},
                "meta": {"$ref": "#/components/schemas/Meta"}
            }
        }),
    );
    schemas.insert("Tool".into(), json!({
        "type": "object",
        "required": ["name", "title", "description", "params", "input_schema", "output_schema", "annotations", "tags"],
        "properties": {
            "name": {"type": "string"},
            "title": {"type": "string"},
            "description": {"type": "string"},
            "params": {"type": "object", "additionalProperties": {
                "type": "object",
                "required": ["type", "description", "required"],
                "properties": {
                    "type": {"type": "string"},
                    "description": {"type": "string"},
                    "required": {"type": "boolean"},
                    "default": {}
                }
            }},
            "input_schema": {"type": "object"},
            "output_schema": {"type": "object"},
            "annotations": {"type": "object"},
            "tags": {"type": "array", "items": {"type": "string"}}
        }
    }));

    let formats = crate::llm::Target::ALL.map(crate::llm::Target::name);
    let mut paths = Map::new();
    paths.insert(
        "/healthz".into(),
        json!({"get": {
            "operationId": "healthz",
            "summary": "200 once the registry is built",
            "security": [],
            "responses": {"200": ok_response(json!({
                "type": "object", "required": ["status"], "properties": {"status": {"const": "ok"}}
            }))}
        }}),
    );
    paths.insert(
        "/readyz".into(),
        json!({"get": {
            "operationId": "readyz",
            "summary": "200 when the server should be sent traffic; 503 while it drains at shutdown or while an engine it needs is down",
            "security": [],
            "responses": {
                "200": ok_response(json!({
                    "type": "object", "required": ["status"],
                    "properties": {"status": {"const": "ready"}}
                })),
                "503": {
                    "description": "Not ready: draining, or the failing checks by name with their messages",
                    "content": {"application/json": {"schema": {
                        "type": "object", "required": ["status"],
                        "properties": {
                            "status": {"enum": ["draining", "unavailable"]},
                            "checks": {"type": "object", "additionalProperties": {"type": "string"}}
                        }
                    }}}
                }
            }
        }}),
    );
    paths.insert("/toolsets".into(), json!({"get": {
        "operationId": "toolsets",
        "summary": "The mounted toolsets: each one's tool count, whether it is available, its last error",
        "description": "An operator endpoint: with authentication, for callers with the operator role (`admin` unless the server names another); others get 403 `forbidden`",
        "responses": with_errors(json!({"200": ok_response(json!({
            "type": "object", "required": ["toolsets"],
            "properties": {"toolsets": {"type": "array", "items": {
                "type": "object", "required": ["name", "tools", "available", "last_error"],
                "properties": {
                    "name": {"type": "string"},
                    "tools": {"type": "integer", "minimum": 0},
                    "available": {"type": "boolean"},
                    "last_error": {"type": ["string", "null"]}
                }
            }}}
        }))}), auth, false)
    }}));
    if auth {
        paths["/toolsets"]["get"]["responses"]["403"] =
            error_response("A caller without the operator role (`forbidden`)");
    }
    paths.insert("/openapi.json".into(), json!({"get": {
        "operationId": "openapi",
        "summary": "This document",
        "responses": with_errors(json!({"200": ok_response(json!({"type": "object"}))}), auth, false)
    }}));
    paths.insert("/tools".into(), json!({"get": {
        "operationId": "list_tools",
        "summary": "Every tool, sorted by name",
        "responses": with_errors(json!({"200": ok_response(json!({
            "type": "object", "required": ["tools"],
            "properties": {"tools": {"type": "array", "items": {"$ref": "#/components/schemas/Tool"}}}
        }))}), auth, false)
    }}));
    paths.insert("/tools/{name}".into(), json!({
        "get": {
            "operationId": "get_tool",
            "summary": "One tool",
            "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": with_errors(json!({"200": ok_response(json!({"$ref": "#/components/schemas/Tool"}))}), auth, false)
        },
        "post": {
            "operationId": "call_tool",
            "summary": "Call a tool by name; each tool's own path below has its exact schemas",
            "parameters": [
                {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "confirm", "in": "query", "required": false, "schema": {"type": "boolean"}},
                {"name": "x-confirm", "in": "header", "required": false,
                 "schema": {"type": "string", "enum": ["true", "false"]}},
                {"name": "confirmation", "in": "query", "required": false, "schema": {"type": "string"}},
                {"name": "x-confirmation", "in": "header", "required": false, "schema": {"type": "string"}},
                {"name": "dry_run", "in": "query", "required": false, "schema": {"type": "boolean"}},
                {"name": "x-dry-run", "in": "header", "required": false,
                 "schema": {"type": "string", "enum": ["true", "false"]}},
                {"name": "format", "in": "query", "required": false, "schema": {"type": "string", "enum": formats}, "description": "The format of the specs the caller was shown (`GET /tools?format=`): under `openai` and `openai-responses`, `null` for an optional field leaves it out, as strict mode makes a model write it"}
            ],
            "requestBody": {"required": false, "content": {"application/json": {"schema": {"type": "object"}}}},
            "responses": with_errors(json!({"200": ok_response(json!({"$ref": "#/components/schemas/OkEnvelope"}))}), auth, true)
        }
    }));
    items::item_paths(&mut paths, &mut schemas, auth);
    tasks::describe(&mut paths, &mut schemas, auth);
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    paths.insert("/invoke".into(), json!({"post": {
        "operationId": "invoke",
        "summary": "Call any tool by name",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
            "type": "object",
            "required": ["tool"],
            "additionalProperties": false,
            "properties": {
                "tool": {"type": "string", "enum": names},
                "params": {"type": "object"},
                "confirm": {"type": "boolean"},
                "confirmation": {"type": "string"},
                "dry_run": {"type": "boolean"},
                "format": {"type": "string", "enum": formats}
            }
        }}}},
        "responses": with_errors(json!({"200": ok_response(json!({"$ref": "#/components/schemas/OkEnvelope"}))}), auth, true)
    }}));

    for tool in tools {
        let name = tool.name();
        let input = relocate(tool.input_schema(), &format!("{name}__input"), &mut schemas);
        let output = relocate(
            tool.output_schema(),
            &format!("{name}__output"),
            &mut schemas,
        );
        schemas.insert(format!("{name}__input"), input);
        schemas.insert(format!("{name}__output"), output);
        schemas.insert(
            format!("{name}__result"),
            json!({
                "type": "object",
                "required": ["tool", "status", "result", "meta"],
                "properties": {
                    "tool": {"const": name},
                    "status": {"const": "ok"},
                    "result": {"$ref": format!("#/components/schemas/{name}__output")},
                    "meta": {"$ref": "#/components/schemas/Meta"}
                }
            }),
        );
        let meta = tool.meta();
        let mut op = json!({
            "operationId": name,
            "summary": meta.summary,
            "description": meta.description,
            "tags": meta.tags,
            "parameters": [
                {"name": "confirm", "in": "query", "required": false, "schema": {"type": "boolean"},
                 "description": "Confirm a destructive call"},
                {"name": "x-confirm", "in": "header", "required": false,
                 "schema": {"type": "string", "enum": ["true", "false"]},
                 "description": "Confirm a destructive call"},
                {"name": "confirmation", "in": "query", "required": false, "schema": {"type": "string"},
                 "description": "The token of a `confirmation_required` answer: runs exactly that call"},
                {"name": "x-confirmation", "in": "header", "required": false, "schema": {"type": "string"},
                 "description": "The token of a `confirmation_required` answer: runs exactly that call"},
                {"name": "dry_run", "in": "query", "required": false, "schema": {"type": "boolean"},
                 "description": "Preview without side effects (tools that support dry runs)"},
                {"name": "x-dry-run", "in": "header", "required": false,
                 "schema": {"type": "string", "enum": ["true", "false"]},
                 "description": "Preview without side effects (tools that support dry runs)"},
                {"name": "format", "in": "query", "required": false, "schema": {"type": "string", "enum": formats}, "description": "The format of the specs the caller was shown (`GET /tools?format=`): under `openai` and `openai-responses`, `null` for an optional field leaves it out, as strict mode makes a model write it"}
            ],
            "requestBody": {"required": false, "content": {"application/json": {"schema": {
                "$ref": format!("#/components/schemas/{name}__input")
            }}}},
            "responses": with_errors(json!({"200": ok_response(json!({
                "$ref": format!("#/components/schemas/{name}__result")
            }))}), auth, true)
        });
        tasks::describe_call(&mut op, meta.task);
        if let Some(a) = op.as_object_mut() {
            a.insert("x-annotations".into(), json!(meta.annotations));
            if auth && !meta.options.scopes.is_empty() {
                // The scopes the call needs; OpenAPI 3.1 lets a bearer scheme name them too.
                a.insert("security".into(), json!([{"bearer": meta.options.scopes}]));
                let mut forbidden = error_response(
                    "The token lacks a scope the call needs (`insufficient_scope`): `WWW-Authenticate` names them",
                );
                forbidden["headers"]["WWW-Authenticate"] = json!({"schema": {"type": "string"}});
                a["responses"]["403"] = forbidden;
            }
        }
        let describe = json!({
            "operationId": format!("describe_{name}"),
            "summary": format!("Describe `{name}`"),
            "responses": with_errors(json!({"200": ok_response(json!({"$ref": "#/components/schemas/Tool"}))}), auth, false)
        });
        paths.insert(
            format!("/tools/{name}"),
            json!({"get": describe, "post": op}),
        );
    }

    let mut doc = json!({
        "openapi": "3.1.0",
        "jsonSchemaDialect": crate::schema::DRAFT_2020_12,
        "info": {"title": title, "version": version},
        "paths": paths,
        "components": {
            "schemas": schemas,
            "headers": {"x-request-id": {
                "description": "The request id: the caller's `x-request-id`, or generated",
                "schema": {"type": "string"}
            }}
        }
    });
    if auth {
        doc["components"]["securitySchemes"] =
            json!({"bearer": {"type": "http", "scheme": "bearer"}});
        doc["security"] = json!([{"bearer": []}]);
    }
    doc
}

/// Declares OAuth 2.1 beside bearer tokens in `doc`: an OpenID Connect security scheme for the
/// issuer's tokens, accepted on every operation, and on each tool's call the scopes it needs.
#[cfg(feature = "oauth")]
pub(crate) fn with_oauth(doc: &mut Value, issuer: &str) {
    doc["components"]["securitySchemes"]["oauth"] = json!({
        "type": "openIdConnect",
        "openIdConnectUrl": format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/')),
        "description": "An access token the issuer made for this server (its MCP URL or base URL as the audience)",
    });
    doc["security"] = json!([{"bearer": []}, {"oauth": []}]);
    if let Some(paths) = doc["paths"].as_object_mut() {
        for path in paths.values_mut() {
            let Some(security) = path.pointer_mut("/post/security") else {
                continue;
            };
            let scopes = security[0]["bearer"].clone();
            *security = json!([{"bearer": scopes}, {"oauth": scopes}]);
        }
    }
}

#[allow(clippy::needless_pass_by_value)] // Reason: called with `json!` temporaries.
pub(super) fn ok_response(schema: Value) -> Value {
    json!({
        "description": "Success",
        "headers": {"x-request-id": {"$ref": "#/components/headers/x-request-id"}},
        "content": {"application/json": {"schema": schema}}
    })
}

pub(super) fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "headers": {"x-request-id": {"$ref": "#/components/headers/x-request-id"}},
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}
    })
}

pub(super) fn with_errors(mut responses: Value, auth: bool, calls: bool) -> Value {
    let map = responses.as_object_mut().expect("an object");
    for (status, description) in ERROR_STATUSES {
        // Only operations that take a body or call a tool produce most errors.
        if calls || matches!(*status, "404" | "500" | "503") {
            map.insert((*status).to_owned(), error_response(description));
        }
    }
    if auth {
        let mut unauthorized = error_response("Missing or bad credentials (`unauthenticated`)");
        unauthorized["headers"]["WWW-Authenticate"] = json!({"schema": {"type": "string"}});
        map.insert("401".into(), unauthorized);
    }
    if calls {
        map["429"]["headers"]["Retry-After"] = json!({"schema": {"type": "integer"}});
        // A tool's own errors choose their status.
        map.insert(
            "default".into(),
            error_response("A tool's own error, with the status it chose"),
        );
    }
    responses
}

/// The formats OpenAPI 3.1 defines beside JSON Schema's, for numbers: a tool's schemas keep
/// these and JSON Schema's, and drop schemars' others (`uint32`, `uint8`, `uint`, ...), which
/// the bounds beside them already say.
const OPENAPI_FORMATS: [&str; 4] = ["int32", "int64", "float", "double"];

/// Moves a schema's `$defs` into `components/schemas` under `{prefix}__{name}` and rewrites
/// the references, since `#/$defs/...` would otherwise resolve against the document's root;
/// keeps only the formats OpenAPI defines ([`OPENAPI_FORMATS`] and JSON Schema's).
fn relocate(schema: &Value, prefix: &str, schemas: &mut Map<String, Value>) -> Value {
    let rename = |r: &str| -> Option<String> {
        r.strip_prefix("#/$defs/")
            .map(|n| format!("#/components/schemas/{prefix}__{n}"))
            .or_else(|| (r == "#").then(|| format!("#/components/schemas/{prefix}")))
    };
    let (mut schema, defs) = take_defs(schema, &rename);
    standard_formats_only(&mut schema, &OPENAPI_FORMATS);
    for (name, mut def) in defs {
        standard_formats_only(&mut def, &OPENAPI_FORMATS);
        schemas.insert(format!("{prefix}__{name}"), def);
    }
    schema
}

/// Takes `schema`'s `$defs` out, so they can live elsewhere in a larger document: the result
/// is the schema without `$schema` and `$defs`, and the definitions, with every `$ref` (in both)
/// renamed by `rename` (`"#/$defs/Name"` or `"#"` in, the new reference out; `None` keeps it).
fn take_defs(
    schema: &Value,
    rename: &dyn Fn(&str) -> Option<String>,
) -> (Value, Map<String, Value>) {
    let mut schema = schema.clone();
    let mut defs = match schema.as_object_mut().and_then(|o| {
        o.remove("$schema");
        o.remove("$defs")
    }) {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    let mut rewrite = |obj: &mut Map<String, Value>| {
        if let Some(Value::String(r)) = obj.get_mut("$ref")
            && let Some(new) = rename(r)
        {
            *r = new;
        }
    };
    crate::schema::walk::walk_mut(&mut schema, &mut rewrite);
    for def in defs.values_mut() {
        crate::schema::walk::walk_mut(def, &mut rewrite);
    }
    (schema, defs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taken_defs_are_renamed_with_their_references() {
        let s = json!({
            "$schema": "x",
            "properties": {"a": {"$ref": "#/$defs/A", "default": {"$ref": "#/$defs/A"}}},
            "$defs": {"A": {"properties": {"next": {"$ref": "#"}}}}
        });
        let rename = |r: &str| {
            r.strip_prefix("#/$defs/")
                .map(|n| format!("#/c/T__{n}"))
                .or_else(|| (r == "#").then(|| "#/c/T".to_owned()))
        };
        let (root, defs) = take_defs(&s, &rename);
        assert_eq!(
            root,
            json!({"properties": {"a": {"$ref": "#/c/T__A", "default": {"$ref": "#/$defs/A"}}}})
        );
        assert_eq!(
            defs["A"],
            json!({"properties": {"next": {"$ref": "#/c/T"}}})
        );
    }
}
