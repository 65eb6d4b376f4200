//! The attribute and metric names of the semantic conventions this crate follows: OpenTelemetry
//! semantic conventions v1.41.1 for `gen_ai.*` and `mcp.*` (marked Development there, since
//! moved unchanged to the GenAI conventions repository, v0.1.0), and the stable HTTP ones.
//! Names of our own, where the conventions have none, are under `tool_runtime.`.

/// The version of the conventions followed, as the docs name it.
pub const SEMCONV_VERSION: &str = "1.41.1";

/// `gen_ai.operation.name`: `execute_tool`, `invoke_agent`, `chat`.
pub const GEN_AI_OPERATION: &str = "gen_ai.operation.name";
/// `gen_ai.tool.name`.
pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
/// `error.type`: the error kind of a call, the JSON-RPC code, or `tool_error`.
pub const ERROR_TYPE: &str = "error.type";

/// `tool_runtime.calls`: calls by tool, outcome and source.
pub const CALLS: &str = "tool_runtime.calls";
/// `tool_runtime.call.duration`: how long calls took, by tool, outcome and source.
pub const CALL_DURATION: &str = "tool_runtime.call.duration";
/// `http.server.request.duration`.
pub const HTTP_SERVER_DURATION: &str = "http.server.request.duration";
/// `mcp.server.operation.duration`.
pub const MCP_SERVER_DURATION: &str = "mcp.server.operation.duration";
/// `mcp.client.operation.duration`.
pub const MCP_CLIENT_DURATION: &str = "mcp.client.operation.duration";
/// `tool_runtime.mcp.sessions`: the MCP sessions open on this process (the conventions measure
/// session durations, not how many are open).
pub const MCP_SESSIONS: &str = "tool_runtime.mcp.sessions";
/// `gen_ai.client.token.usage`.
pub const GEN_AI_TOKEN_USAGE: &str = "gen_ai.client.token.usage";
/// `gen_ai.client.operation.duration`.
pub const GEN_AI_DURATION: &str = "gen_ai.client.operation.duration";
/// `tool_runtime.telemetry.exported`: spans handed to the OTLP exporter, with `error.type` when
/// they were dropped because the export failed.
pub const EXPORTED: &str = "tool_runtime.telemetry.exported";

/// The explicit buckets of the MCP and tool durations (the MCP conventions' advice), in seconds.
pub const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];
/// The buckets of `gen_ai.client.operation.duration` (the GenAI conventions' advice), in seconds.
pub const GEN_AI_DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
/// The buckets of `gen_ai.client.token.usage` (the GenAI conventions' advice).
pub const TOKEN_BUCKETS: [f64; 14] = [
    1.0,
    4.0,
    16.0,
    64.0,
    256.0,
    1024.0,
    4096.0,
    16384.0,
    65536.0,
    262_144.0,
    1_048_576.0,
    4_194_304.0,
    16_777_216.0,
    67_108_864.0,
];
/// The buckets of `http.server.request.duration` (the HTTP conventions' advice), in seconds.
pub const HTTP_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];
