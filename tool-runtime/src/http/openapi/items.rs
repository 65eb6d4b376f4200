//! The OpenAPI description of resources, prompts and completions (`http::items`).

use serde_json::{Map, Value, json};

use super::{ok_response, with_errors};

/// The routes of resources, prompts and completions (`http::items`), and their schemas.
#[allow(clippy::too_many_lines)] // Reason: the document reads best as one literal-heavy listing.
pub(super) fn item_paths(
    paths: &mut Map<String, Value>,
    schemas: &mut Map<String, Value>,
    auth: bool,
) {
    let text = json!({"type": "string"});
    schemas.insert(
        "ResourceContents".into(),
        json!({
            "type": "object",
            "required": ["uri"],
            "properties": {
                "uri": text,
                "mimeType": text,
                "text": text,
                "blob": {"type": "string", "contentEncoding": "base64"}
            }
        }),
    );
    schemas.insert(
        "PromptMessage".into(),
        json!({
            "type": "object",
            "required": ["role", "content"],
            "properties": {
                "role": {"enum": ["user", "assistant"]},
                "content": {"type": "object", "required": ["type"], "properties": {"type": text}}
            }
        }),
    );
    let contents = json!({
        "type": "object", "required": ["contents"],
        "properties": {"contents": {"type": "array", "minItems": 1,
            "items": {"$ref": "#/components/schemas/ResourceContents"}}}
    });
    let listed = json!({
        "type": "object", "required": ["uri", "name"],
        "properties": {"uri": text, "name": text, "title": text, "description": text, "mimeType": text}
    });
    let template = json!({
        "type": "object", "required": ["uriTemplate", "name", "title"],
        "properties": {"uriTemplate": text, "name": text, "title": text, "description": text, "mimeType": text}
    });
    paths.insert("/resources".into(), json!({"get": {
        "operationId": "list_resources",
        "summary": "The resources (static, and those each template lists) and the resource templates",
        "responses": with_errors(json!({"200": ok_response(json!({
            "type": "object", "required": ["resources", "templates"],
            "properties": {
                "resources": {"type": "array", "items": listed},
                "templates": {"type": "array", "items": template}
            }
        }))}), auth, false)
    }}));
    // A JSON resource read raw is JSON too: `application/json` is the envelope or the
    // resource's own JSON.
    let mut read_ok = ok_response(json!({"anyOf": [contents, {}]}));
    read_ok["description"] = json!(
        "The only contents as they are (text, or the blob decoded) with their media type; with `format=json`, or when a read answers several contents, `{\"contents\": [...]}` (`ResourceContents`)"
    );
    read_ok["content"]["*/*"] = json!({"schema": {}});
    read_ok["headers"]["Cache-Control"] = json!({
        "description": "`max-age=N` from the resource's time to live (else `no-cache`), `public` or `private` from its scope",
        "schema": {"type": "string"}
    });
    paths.insert("/resources/read".into(), json!({"get": {
        "operationId": "read_resource",
        "summary": "Read the resource at a URI",
        "parameters": [
            {"name": "uri", "in": "query", "required": true, "schema": text,
             "description": "The resource's URI (a static resource's, or one a template matches)"},
            {"name": "format", "in": "query", "required": false, "schema": {"enum": ["json"]},
             "description": "`json`: the contents as JSON, whatever their media type"}
        ],
        "responses": with_errors(json!({"200": read_ok}), auth, true)
    }}));
    paths.insert("/prompts".into(), json!({"get": {
        "operationId": "list_prompts",
        "summary": "The prompts and their arguments",
        "responses": with_errors(json!({"200": ok_response(json!({
            "type": "object", "required": ["prompts"],
            "properties": {"prompts": {"type": "array", "items": {
                "type": "object", "required": ["name", "title", "description", "arguments"],
                "properties": {
                    "name": text, "title": text, "description": text,
                    "arguments": {"type": "array", "items": {
                        "type": "object", "required": ["name", "required"],
                        "properties": {"name": text, "description": text, "required": {"type": "boolean"}}
                    }}
                }
            }}}
        }))}), auth, false)
    }}));
    paths.insert("/prompts/{name}".into(), json!({"post": {
        "operationId": "get_prompt",
        "summary": "A prompt's messages for these arguments",
        "parameters": [{"name": "name", "in": "path", "required": true, "schema": text}],
        "requestBody": {"required": false, "content": {"application/json": {"schema": {
            "type": "object", "additionalProperties": text
        }}}},
        "responses": with_errors(json!({"200": ok_response(json!({
            "type": "object", "required": ["messages"],
            "properties": {
                "description": text,
                "messages": {"type": "array", "items": {"$ref": "#/components/schemas/PromptMessage"}}
            }
        }))}), auth, true)
    }}));
    paths.insert("/complete".into(), json!({"post": {
        "operationId": "complete",
        "summary": "Values for a prompt's argument or a resource template's variable, as MCP's `completion/complete`",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
            "type": "object", "required": ["ref", "argument"], "additionalProperties": false,
            "properties": {
                "ref": {"oneOf": [
                    {"type": "object", "required": ["type", "name"], "additionalProperties": false,
                     "properties": {"type": {"const": "ref/prompt"}, "name": text}},
                    {"type": "object", "required": ["type", "uri"], "additionalProperties": false,
                     "properties": {"type": {"const": "ref/resource"}, "uri": text}}
                ]},
                "argument": {"type": "object", "required": ["name", "value"], "additionalProperties": false,
                    "properties": {"name": text, "value": text}},
                "context": {"type": "object", "additionalProperties": false, "properties": {
                    "arguments": {"type": "object", "additionalProperties": text}
                }}
            }
        }}}},
        "responses": with_errors(json!({"200": ok_response(json!({
            "type": "object", "required": ["completion"],
            "properties": {"completion": {
                "type": "object", "required": ["values", "hasMore"],
                "properties": {
                    "values": {"type": "array", "maxItems": 100, "items": text},
                    "total": {"type": "integer", "minimum": 0},
                    "hasMore": {"type": "boolean"}
                }
            }}
        }))}), auth, true)
    }}));
}
