// Drives our MCP server with the official TypeScript SDK clients: @modelcontextprotocol/sdk 1.x
// (protocol 2025-11-25) by default, or with `--sdk 2` @modelcontextprotocol/client 2.x pinned to
// 2026-07-28, where a destructive tool's confirmation comes as an input-required result the SDK
// answers through the same elicitation handler and retries.
//
//   node mcp_check.mjs [--sdk 2] --stdio CMD ARGS...
//   node mcp_check.mjs [--sdk 2] --url URL --token TOKEN
//
// Each check prints `ok <name>`; the first failure throws and the exit status is non-zero.
// `demo-app/tests/mcp.rs` runs it against the demo app.

let args = process.argv.slice(2);
const sdk = args[0] === "--sdk" ? args[1] : "1";
if (args[0] === "--sdk") args = args.slice(2);
const v2 = sdk === "2";
const { Client, StdioClientTransport, StreamableHTTPClientTransport, elicitHandler, isProtocolError } = v2
  ? await (async () => {
      const client = await import("@modelcontextprotocol/client");
      const stdio = await import("@modelcontextprotocol/client/stdio");
      return {
        ...client,
        ...stdio,
        elicitHandler: (c, handler) => c.setRequestHandler("elicitation/create", handler),
        isProtocolError: (e, code) => e instanceof client.ProtocolError && e.code === code,
      };
    })()
  : await (async () => {
      const client = await import("@modelcontextprotocol/sdk/client/index.js");
      const stdio = await import("@modelcontextprotocol/sdk/client/stdio.js");
      const http = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
      const types = await import("@modelcontextprotocol/sdk/types.js");
      return {
        ...client,
        ...stdio,
        ...http,
        elicitHandler: (c, handler) => c.setRequestHandler(types.ElicitRequestSchema, handler),
        isProtocolError: (e, code) => e instanceof types.McpError && e.code === code,
      };
    })();
const ok = (name, detail = "") => console.log(`ok ${name} ${detail}`.trimEnd());
const check = (cond, what) => {
  if (!cond) throw new Error(what);
};

function transport() {
  if (args[0] === "--stdio") {
    return new StdioClientTransport({
      command: args[1],
      args: args.slice(2),
      env: { ...process.env },
      stderr: process.env.MCP_CHECK_STDERR ?? "ignore",
    });
  }
  const url = new URL(args[args.indexOf("--url") + 1]);
  const token = args[args.indexOf("--token") + 1];
  return new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
}

const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

async function connect(answer) {
  const capabilities = answer ? { elicitation: { form: {} } } : {};
  // The 2.x client speaks the 2025 revision unless told otherwise: pinned to 2026-07-28.
  const negotiation = v2 ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {};
  const client = new Client({ name: "ts-check", version: "1.0.0" }, { capabilities, ...negotiation });
  const asked = [];
  if (answer) {
    elicitHandler(client, async (request) => {
      asked.push(request.params.message);
      return { action: answer };
    });
  }
  const t = transport();
  await client.connect(t);
  return { client, asked, transport: t };
}

const { client: plain, transport: plainTransport } = await connect(null);
ok("connect", (v2 ? plain.getNegotiatedProtocolVersion() : plainTransport.protocolVersion) ?? "(stdio)");

// The SDK compiles each outputSchema with ajv as it lists the tools; ajv warns (console.warn) of
// every format it does not know, as JSON Schema's are all it is given.
const warned = [];
const warn = console.warn;
console.warn = (...parts) => warned.push(parts.join(" "));
const { tools } = await plain.listTools().finally(() => {
  console.warn = warn;
});
check(warned.length === 0, `warnings while listing: ${warned.join("; ")}`);
const JSON_SCHEMA_FORMATS = new Set(["date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template", "json-pointer", "relative-json-pointer", "regex"]);
const formats = (schema) => (schema && typeof schema === "object" ? Object.entries(schema).flatMap(([k, v]) => (k === "format" && typeof v === "string" ? [v] : formats(v))) : []);
const unknown = tools.flatMap((t) => formats([t.inputSchema, t.outputSchema]).filter((f) => !JSON_SCHEMA_FORMATS.has(f)).map((f) => `${t.name}: ${f}`));
check(unknown.length === 0, `formats JSON Schema does not define: ${unknown.join(", ")}`);
ok("formats", "JSON Schema's only, no warning");
const names = tools.map((t) => t.name);
const demoTools = ["cancel_task", "channel_add", "channel_list", "channel_remove", "device_add", "device_export", "device_list", "device_pair", "device_revoke", "host_execute", "list_tasks", "schedule_task", "web_fetch", "web_search"];
check(JSON.stringify(names) === JSON.stringify(demoTools), `names ${names}`);
for (const t of tools) {
  check(t.inputSchema.type === "object" && t.outputSchema?.type === "object", `${t.name}: schema roots`);
}
check(tools.find((t) => t.name === "device_revoke").annotations.destructiveHint === true, "destructiveHint");
ok("list", `${tools.length} tools`);

// The client validates structuredContent against outputSchema (ajv) and throws if it does not fit.
const added = await plain.callTool({ name: "device_add", arguments: { workspace: "ts", ttl_seconds: 600 } });
check(!added.isError, text(added));
check(JSON.stringify(JSON.parse(text(added))) === JSON.stringify(added.structuredContent), "text = structured");
const code = added.structuredContent.code;
ok("device_add", code);

const bad = await plain.callTool({ name: "device_add", arguments: { ttl_seconds: 5, bogus: true } });
check(bad.isError === true && text(bad).startsWith("invalid_arguments:"), text(bad));
check(text(bad).includes("/ttl_seconds") && text(bad).includes("/bogus"), text(bad));
ok("invalid_arguments");

try {
  await plain.callTool({ name: "device_ad", arguments: {} });
  throw new Error("unknown tool: no error");
} catch (e) {
  check(isProtocolError(e, -32602), `unknown tool: ${e}`);
}
ok("unknown_tool", "-32602");

const paired = await plain.callTool({ name: "device_pair", arguments: { code, device_name: "tablet" } });
check(!paired.isError, text(paired));
const device = paired.structuredContent.device_id;
const refused = await plain.callTool({ name: "device_revoke", arguments: { device_id: device } });
check(refused.isError === true && text(refused).startsWith("confirmation_required:"), text(refused));
ok("destructive_refused");
await plain.close();

const { client: asking, asked } = await connect("accept");
await asking.listTools();
const revoked = await asking.callTool({ name: "device_revoke", arguments: { device_id: device } });
check(!revoked.isError && revoked.structuredContent.revoked_at, text(revoked));
check(asked.length === 1 && asked[0].includes(device), `asked: ${asked}`);
ok("elicitation_accepted", revoked.structuredContent.revoked_at);
await asking.close();
console.log("done");
