//! MCP: a tool as the `tools/list` of the MCP server describes it.

use serde_json::{Map, Value};

use crate::llm::object;
use crate::registry::RegisteredTool;
use crate::schema::walk::standard_formats_only;

/// The MCP `Tool` of a registered tool, as `tools/list` sends it (`McpServer` lists tools
/// lowered for [`Target::Mcp`](crate::llm::Target::Mcp)). Its schemas carry only the formats
/// JSON Schema defines: MCP clients validate with JSON Schema validators.
pub(in crate::llm) fn mcp(tool: &RegisteredTool) -> Value {
    let m = tool.meta();
    let a = &m.annotations;
    // The title also goes here for clients of 2025-03-26, which know no top-level `title`.
    let mut annotations = Map::from_iter([(
        "title".to_owned(),
        Value::String(m.title.clone().into_owned()),
    )]);
    for (key, value) in [
        ("readOnlyHint", a.read_only),
        ("destructiveHint", a.destructive),
        ("idempotentHint", a.idempotent),
        ("openWorldHint", a.open_world),
    ] {
        if let Some(v) = value {
            annotations.insert(key.into(), Value::Bool(v));
        }
    }
    let mut input = tool.input_schema().clone();
    standard_formats_only(&mut input, &[]);
    let mut description = object([
        ("name", Value::String(m.name.clone().into_owned())),
        ("title", Value::String(m.title.clone().into_owned())),
        (
            "description",
            Value::String(m.description.clone().into_owned()),
        ),
        ("inputSchema", input),
        ("annotations", Value::Object(annotations)),
    ]);
    // Content blocks are the result's `content`, which no `outputSchema` describes.
    if !m.content {
        // MCP requires an object at the root: other outputs are wrapped as `{"result": ...}`.
        let mut output = crate::schema::object_root(tool.output_schema()).0;
        standard_formats_only(&mut output, &[]);
        description["outputSchema"] = output;
    }
    description
}
