//! Resources, prompts, completions and change notifications over MCP, in process: what each
//! method answers, the errors of both protocol generations, what roles hide, pagination, and
//! the notifications a session hears.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tool_runtime::layers::policy::RequireRoles;
use tool_runtime::mcp::McpServer;
use tool_runtime::prompt::{Prompt, PromptArgument, PromptMeta, PromptReply};
use tool_runtime::resource::{CacheScope, Listed, Resource, ResourceBody, ResourceMeta};
use tool_runtime::tool::{Completing, Violation};
use tool_runtime::{CallContext, Registry, ToolError, tool};

/// A resource answering `body` for any URI its template matches.
struct Fixed {
    meta: ResourceMeta,
    body: ResourceBody,
    listed: Vec<Listed>,
}

fn fixed(name: &'static str, uri: &'static str, body: ResourceBody) -> Fixed {
    Fixed {
        meta: ResourceMeta::new(name, uri, format!("The {name} resource")),
        body,
        listed: Vec::new(),
    }
}

impl Resource for Fixed {
    fn meta(&self) -> ResourceMeta {
        self.meta.clone()
    }

    fn read(
        &self,
        uri: String,
        values: BTreeMap<String, String>,
        _: CallContext,
    ) -> BoxFuture<'_, Result<ResourceBody, ToolError>> {
        let body = match &self.body {
            // A template's text says what it was read with.
            ResourceBody::Text(t) if !values.is_empty() => {
                ResourceBody::Text(format!("{t} {uri} {values:?}"))
            }
            other => other.clone(),
        };
        Box::pin(async move { Ok(body) })
    }

    fn list(&self, _: CallContext) -> Option<BoxFuture<'_, Result<Vec<Listed>, ToolError>>> {
        let listed = self.listed.clone();
        (!listed.is_empty()).then(|| Box::pin(async move { Ok(listed) }) as BoxFuture<'_, _>)
    }

    fn complete(
        &self,
        c: Completing,
    ) -> Option<BoxFuture<'static, Result<Vec<String>, ToolError>>> {
        let values = ["alpha", "beta", "alps"]
            .into_iter()
            .filter(|v| v.starts_with(c.value()))
            .map(str::to_owned)
            .collect();
        Some(Box::pin(async move { Ok(values) }))
    }
}

/// A prompt of one typed argument: `count`, a whole number, parsed by the prompt.
struct Repeat;

impl Prompt for Repeat {
    fn meta(&self) -> PromptMeta {
        let mut meta = PromptMeta::new("repeat", "Says hello `count` times");
        meta.arguments.push(PromptArgument {
            name: "count".into(),
            description: "How many times".into(),
            required: true,
            completes: true,
        });
        meta
    }

    fn get(
        &self,
        args: BTreeMap<String, String>,
        _: CallContext,
    ) -> BoxFuture<'_, Result<PromptReply, ToolError>> {
        Box::pin(async move {
            let raw = args.get("count").cloned().unwrap_or_default();
            let count: usize = raw.parse().map_err(|e| {
                ToolError::invalid_arguments(vec![Violation::new(
                    "/count",
                    "decode",
                    format!("`{raw}` is not a whole number: {e}"),
                )])
            })?;
            Ok(PromptReply::from("hello ".repeat(count)))
        })
    }

    fn complete(
        &self,
        _: Completing,
    ) -> Option<BoxFuture<'static, Result<Vec<String>, ToolError>>> {
        Some(Box::pin(async {
            Ok((1..=150).map(|i| i.to_string()).collect())
        }))
    }
}

/// Tells the subscribers of `uri` that it changed.
#[tool(annotations(read_only))]
async fn touch(ctx: &CallContext, #[arg(length(max = 100))] uri: String) -> String {
    ctx.notifier().resource_updated(uri.clone());
    uri
}

fn registry() -> Arc<Registry> {
    let mut text = fixed(
        "notes",
        "notes://today",
        ResourceBody::Text("buy milk".into()),
    );
    text.meta.mime_type = Some("text/markdown".into());
    text.meta.size = Some(8);
    text.meta.audience = vec!["user".into()];
    text.meta.priority = Some(0.5);
    text.meta.ttl = Some(Duration::from_secs(60));
    text.meta.scope = Some(CacheScope::Public);
    let mut files = fixed(
        "files",
        "files://docs/{name}",
        ResourceBody::Text("file".into()),
    );
    files.listed = vec![Listed::new("files://docs/readme", "readme")];
    let mut secret = fixed(
        "secret",
        "secret://vault",
        ResourceBody::Text("hidden".into()),
    );
    secret.meta.options.roles = vec!["ops".into()];
    Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(touch::descriptor())
            .resource(text)
            .resource(fixed(
                "logo",
                "img://logo",
                ResourceBody::Blob(vec![1, 2, 3]),
            ))
            .resource(files)
            .resource(secret)
            .prompt(Repeat)
            .policy(RequireRoles)
            .build()
            .unwrap(),
    )
}

/// Newline-delimited JSON-RPC to an in-process server, keeping the notifications heard. The
/// session ends when it is dropped.
pub(super) struct Pipe {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    heard: Vec<Value>,
    id: i64,
    /// `_meta` of a 2026-07-28 request standing alone; `None` after `initialize`.
    modern: Option<Value>,
}

impl Pipe {
    fn connect(server: McpServer) -> Self {
        use tokio::io::AsyncBufReadExt;
        let (client, end) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(end);
        tokio::spawn(server.serve_on(sr, sw));
        let (cr, cw) = tokio::io::split(client);
        Self {
            write: cw,
            read: tokio::io::BufReader::new(cr).lines(),
            heard: Vec::new(),
            id: 0,
            modern: None,
        }
    }

    /// A session begun with `initialize` at 2025-11-25.
    pub(super) async fn legacy(server: McpServer) -> Self {
        let mut pipe = Self::connect(server);
        pipe.send(tool_test_support::mcp_initialize("2025-11-25"))
            .await;
        pipe.answer(0).await;
        pipe.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        pipe
    }

    /// A 2026-07-28 client: each request stands alone.
    fn modern(server: McpServer) -> Self {
        let mut pipe = Self::connect(server);
        pipe.modern = Some(json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}));
        pipe
    }

    async fn send(&mut self, message: Value) {
        use tokio::io::AsyncWriteExt;
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.read.next_line())
            .await
            .expect("a message within 10 s")
            .unwrap()
            .expect("open");
        serde_json::from_str(&line).unwrap()
    }

    async fn answer(&mut self, id: i64) -> Value {
        loop {
            let message = self.next().await;
            if message["id"] == json!(id) {
                return message;
            }
            self.heard.push(message);
        }
    }

    /// Sends request `method` and waits for its answer (`result` or `error`).
    pub(super) async fn request(&mut self, method: &str, mut params: Value) -> Value {
        self.id += 1;
        if let Some(meta) = &self.modern {
            params["_meta"] = meta.clone();
        }
        let id = self.id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.answer(id).await
    }

    /// Waits for a notification of `method`.
    async fn notified(&mut self, method: &str) -> Value {
        if let Some(at) = self.heard.iter().position(|m| m["method"] == method) {
            return self.heard.remove(at);
        }
        loop {
            let message = self.next().await;
            if message["method"] == method {
                return message;
            }
            self.heard.push(message);
        }
    }
}

#[tokio::test]
async fn resources_are_listed_and_read_with_their_metadata() {
    let mut pipe = Pipe::legacy(McpServer::new(registry())).await;
    let listed = pipe.request("resources/list", json!({})).await;
    let resources = listed["result"]["resources"].as_array().unwrap();
    let uris: Vec<&str> = resources
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    // Static ones (the most literal first), then those the template lists; the one needing a
    // role is not there.
    assert_eq!(uris, ["notes://today", "img://logo", "files://docs/readme"]);
    assert_eq!(
        resources[0],
        json!({"uri": "notes://today", "name": "notes", "title": "Notes",
               "description": "The notes resource", "mimeType": "text/markdown", "size": 8,
               "annotations": {"audience": ["user"], "priority": 0.5}})
    );
    // No caching hints before 2026-07-28.
    assert!(listed["result"].get("ttlMs").is_none(), "{listed}");

    let templates = pipe.request("resources/templates/list", json!({})).await;
    assert_eq!(
        templates["result"]["resourceTemplates"],
        json!([{"uriTemplate": "files://docs/{name}", "name": "files", "title": "Files",
                "description": "The files resource"}])
    );

    let text = pipe
        .request("resources/read", json!({"uri": "notes://today"}))
        .await;
    assert_eq!(
        text["result"]["contents"],
        json!([{"uri": "notes://today", "mimeType": "text/markdown", "text": "buy milk"}])
    );
    let blob = pipe
        .request("resources/read", json!({"uri": "img://logo"}))
        .await;
    assert_eq!(
        blob["result"]["contents"],
        json!([{"uri": "img://logo", "mimeType": "application/octet-stream", "blob": "AQID"}])
    );
    let read_from_template = pipe
        .request("resources/read", json!({"uri": "files://docs/a%20b"}))
        .await;
    let said = read_from_template["result"]["contents"][0]["text"]
        .as_str()
        .unwrap();
    assert!(said.contains(r#"{"name": "a b"}"#), "{said}");
}

#[tokio::test]
async fn a_missing_resource_is_32002_before_2026_07_28_and_32602_from_it_on() {
    let server = McpServer::new(registry());
    let mut legacy = Pipe::legacy(server.clone()).await;
    let missing = legacy
        .request("resources/read", json!({"uri": "nowhere://x"}))
        .await;
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    assert_eq!(missing["error"]["data"]["uri"], "nowhere://x");
    assert_eq!(missing["error"]["data"]["type"], "not_found");

    let mut modern = Pipe::modern(server);
    let missing = modern
        .request("resources/read", json!({"uri": "nowhere://x"}))
        .await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert_eq!(missing["error"]["data"]["uri"], "nowhere://x");
}

#[tokio::test]
async fn on_2026_07_28_lists_and_reads_carry_caching_hints() {
    let mut pipe = Pipe::modern(McpServer::new(registry()));
    let read = pipe
        .request("resources/read", json!({"uri": "notes://today"}))
        .await;
    assert_eq!(
        (&read["result"]["ttlMs"], &read["result"]["cacheScope"]),
        (&json!(60_000), &json!("public")),
        "{read}"
    );
    // A resource that states nothing may not be cached.
    let read = pipe
        .request("resources/read", json!({"uri": "img://logo"}))
        .await;
    assert_eq!(
        (&read["result"]["ttlMs"], &read["result"]["cacheScope"]),
        (&json!(0), &json!("private"))
    );
    // A list is as cacheable as its least cacheable item.
    for method in [
        "resources/list",
        "resources/templates/list",
        "prompts/list",
        "tools/list",
    ] {
        let list = pipe.request(method, json!({})).await;
        assert_eq!(
            (&list["result"]["ttlMs"], &list["result"]["cacheScope"]),
            (&json!(0), &json!("private")),
            "{method}: {list}"
        );
    }
}

#[tokio::test]
async fn a_resource_behind_a_role_is_neither_listed_nor_read_and_escapes_are_refused() {
    let mut pipe = Pipe::legacy(McpServer::new(registry())).await;
    let refused = pipe
        .request("resources/read", json!({"uri": "secret://vault"}))
        .await;
    // Answered as a URI nothing serves: its existence is not told.
    assert_eq!(refused["error"]["code"], -32002, "{refused}");
    assert_eq!(refused["error"]["data"]["type"], "not_found");
    let subscribe = pipe
        .request("resources/subscribe", json!({"uri": "secret://vault"}))
        .await;
    assert_eq!(subscribe["error"]["code"], -32002, "{subscribe}");

    // A template value that climbs out of its place never reaches the resource.
    let escape = pipe
        .request("resources/read", json!({"uri": "files://docs/..%2Fetc"}))
        .await;
    assert_eq!(escape["error"]["code"], -32602, "{escape}");
    assert_eq!(escape["error"]["data"]["type"], "invalid_arguments");
    let message = escape["error"]["message"].as_str().unwrap();
    assert!(message.contains("`..` segment"), "{message}");
}

#[tokio::test]
async fn prompts_are_got_with_typed_arguments_and_arguments_are_completed() {
    let registry = registry();
    let mut pipe = Pipe::legacy(McpServer::new(registry.clone())).await;
    let listed = pipe.request("prompts/list", json!({})).await;
    assert_eq!(
        listed["result"]["prompts"],
        json!([{"name": "repeat", "title": "Repeat", "description": "Says hello `count` times",
                "arguments": [{"name": "count", "description": "How many times", "required": true}]}])
    );
    let got = pipe
        .request(
            "prompts/get",
            json!({"name": "repeat", "arguments": {"count": "2"}}),
        )
        .await;
    assert_eq!(
        got["result"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "hello hello "}}])
    );
    let unparsable = pipe
        .request(
            "prompts/get",
            json!({"name": "repeat", "arguments": {"count": "two"}}),
        )
        .await;
    assert_eq!(unparsable["error"]["code"], -32602, "{unparsable}");
    assert_eq!(
        unparsable["error"]["data"]["violations"][0]["path"],
        "/count"
    );
    let unknown = pipe
        .request("prompts/get", json!({"name": "nope", "arguments": {}}))
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert_eq!(unknown["error"]["data"]["name"], "nope");

    // Completions: capped at 100 with the total, and a template's variable by prefix.
    let completed = pipe
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "repeat"},
                   "argument": {"name": "count", "value": ""}}),
        )
        .await;
    let completion = &completed["result"]["completion"];
    assert_eq!(completion["values"].as_array().unwrap().len(), 100);
    assert_eq!(
        (&completion["total"], &completion["hasMore"]),
        (&json!(150), &json!(true))
    );
    let completed = pipe
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "files://docs/{name}"},
                   "argument": {"name": "name", "value": "al"}}),
        )
        .await;
    assert_eq!(
        completed["result"]["completion"]["values"],
        json!(["alpha", "alps"])
    );
    let wrong = pipe
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "repeat"},
                   "argument": {"name": "nope", "value": ""}}),
        )
        .await;
    assert_eq!(wrong["error"]["code"], -32602, "{wrong}");

    // Completions are advertised since some argument offers them.
    let info = Pipe::modern(McpServer::new(registry))
        .request("server/discover", json!({}))
        .await;
    let capabilities = &info["result"]["capabilities"];
    assert!(capabilities.get("completions").is_some(), "{info}");
    assert_eq!(
        capabilities["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    assert_eq!(capabilities["prompts"], json!({"listChanged": true}));
}

/// A tool numbered `i`, one of many.
struct Numbered(usize);

impl tool_runtime::Tool for Numbered {
    fn meta(&self) -> tool_runtime::tool::ToolMeta {
        tool_runtime::tool::ToolMeta::new(format!("tool_{:03}", self.0), "One of many")
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn output_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn call(&self, _: Value, _: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async { Ok(json!({})) })
    }
}

#[tokio::test]
async fn lists_come_a_page_at_a_time_and_a_foreign_cursor_is_invalid_params() {
    let builder = (0..250).fold(Registry::builder().without_inventory(), |b, i| {
        b.tool(Numbered(i))
    });
    let mut pipe = Pipe::legacy(McpServer::new(Arc::new(builder.build().unwrap()))).await;
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = cursor.map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let page = pipe.request("tools/list", params).await;
        let tools = page["result"]["tools"].as_array().unwrap();
        assert!(tools.len() <= 100);
        names.extend(tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
        pages += 1;
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!((pages, names.len()), (3, 250));
    assert_eq!(names[100], "tool_100");
    let bad = pipe
        .request("tools/list", json!({"cursor": "not-a-cursor"}))
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");

    // A smaller page, set on the server.
    let builder = (0..5).fold(Registry::builder().without_inventory(), |b, i| {
        b.tool(Numbered(i))
    });
    let server = McpServer::new(Arc::new(builder.build().unwrap())).page_size(2);
    let mut pipe = Pipe::legacy(server).await;
    let page = pipe.request("tools/list", json!({})).await;
    assert_eq!(page["result"]["tools"].as_array().unwrap().len(), 2);
    assert!(page["result"]["nextCursor"].is_string());
}

#[tokio::test]
async fn subscribers_hear_updates_of_their_resources_and_every_session_hears_list_changes() {
    let registry = registry();
    let mut pipe = Pipe::legacy(McpServer::new(registry.clone())).await;
    let subscribed = pipe
        .request("resources/subscribe", json!({"uri": "notes://today"}))
        .await;
    assert_eq!(subscribed["result"], json!({}), "{subscribed}");
    // An update of another resource is not heard; one of the subscribed one is.
    let touch = |uri: &str| json!({"name": "touch", "arguments": {"uri": uri}});
    pipe.request("tools/call", touch("img://logo")).await;
    pipe.request("tools/call", touch("notes://today")).await;
    let updated = pipe.notified("notifications/resources/updated").await;
    assert_eq!(updated["params"]["uri"], "notes://today");
    assert!(
        !pipe
            .heard
            .iter()
            .any(|m| m["params"]["uri"] == "img://logo"),
        "{:?}",
        pipe.heard
    );
    // Unsubscribed: no more.
    pipe.request("resources/unsubscribe", json!({"uri": "notes://today"}))
        .await;
    pipe.request("tools/call", touch("notes://today")).await;
    pipe.request("ping", json!({})).await;
    assert!(
        !pipe
            .heard
            .iter()
            .any(|m| m["method"] == "notifications/resources/updated"),
        "{:?}",
        pipe.heard
    );

    // A resource added at run time is announced, and listed.
    registry
        .add_resource(fixed(
            "late",
            "late://one",
            ResourceBody::Text("late".into()),
        ))
        .unwrap();
    pipe.notified("notifications/resources/list_changed").await;
    let listed = pipe.request("resources/list", json!({})).await;
    assert!(listed.to_string().contains("late://one"), "{listed}");
}

#[tokio::test]
async fn on_2026_07_28_a_listen_hears_what_its_filter_accepted() {
    let registry = registry();
    let mut pipe = Pipe::modern(McpServer::new(registry.clone()));
    let mut meta = pipe.modern.clone().unwrap();
    meta["progressToken"] = json!(1);
    pipe.send(
        json!({"jsonrpc": "2.0", "id": 99, "method": "subscriptions/listen", "params": {
        "_meta": meta,
        "notifications": {"resourcesListChanged": true,
                          "resourceSubscriptions": ["notes://today", "secret://vault"]}}}),
    )
    .await;
    let acknowledged = pipe
        .notified("notifications/subscriptions/acknowledged")
        .await;
    assert_eq!(
        acknowledged["params"]["notifications"]["resourcesListChanged"], true,
        "{acknowledged}"
    );
    registry.notifier().resource_updated("secret://vault");
    registry.notifier().resource_updated("notes://today");
    registry.notifier().prompts_changed();
    registry.notifier().resources_changed();
    let updated = pipe.notified("notifications/resources/updated").await;
    assert_eq!(updated["params"]["uri"], "notes://today", "{updated}");
    assert_eq!(
        updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        99
    );
    pipe.notified("notifications/resources/list_changed").await;
    // Neither the update of a resource the caller cannot read nor a change not asked for.
    assert!(
        !pipe
            .heard
            .iter()
            .any(|m| m["params"]["uri"] == "secret://vault"
                || m["method"] == "notifications/prompts/list_changed"),
        "{:?}",
        pipe.heard
    );
}

/// A template listing one resource, counting how often its list runs.
struct Counted(usize, Arc<AtomicUsize>);

impl Resource for Counted {
    fn meta(&self) -> ResourceMeta {
        ResourceMeta::new(
            format!("counted_{}", self.0),
            format!("counted{}://{{x}}", self.0),
            "Counted",
        )
    }

    fn read(
        &self,
        _: String,
        _: BTreeMap<String, String>,
        _: CallContext,
    ) -> BoxFuture<'_, Result<ResourceBody, ToolError>> {
        Box::pin(async { Ok(ResourceBody::Text("x".into())) })
    }

    fn list(&self, _: CallContext) -> Option<BoxFuture<'_, Result<Vec<Listed>, ToolError>>> {
        self.1.fetch_add(1, Ordering::SeqCst);
        let uri = format!("counted{}://one", self.0);
        Some(Box::pin(async move { Ok(vec![Listed::new(uri, "one")]) }))
    }
}

#[tokio::test]
async fn a_page_of_resources_runs_only_the_lists_its_cursor_reaches() {
    let runs = Arc::new(AtomicUsize::new(0));
    let builder = (0..6).fold(Registry::builder().without_inventory(), |b, i| {
        b.resource(Counted(i, Arc::clone(&runs)))
    });
    let server = McpServer::new(Arc::new(builder.build().unwrap())).page_size(2);
    let mut pipe = Pipe::legacy(server).await;
    let (mut uris, mut cursor, mut pages) = (Vec::new(), None::<String>, 0);
    loop {
        let params = cursor.map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let page = pipe.request("resources/list", params).await;
        let listed = page["result"]["resources"].as_array().unwrap();
        assert!(!listed.is_empty() && listed.len() <= 2, "{page}");
        uris.extend(listed.iter().map(|r| r["uri"].as_str().unwrap().to_owned()));
        pages += 1;
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    let expected: Vec<String> = (0..6).map(|i| format!("counted{i}://one")).collect();
    assert_eq!((pages, uris), (3, expected));
    // Each list once, and once more where a page ends: not every list for every page (18).
    let runs = runs.load(Ordering::SeqCst);
    assert!(runs <= 6 + pages, "{runs} list runs for {pages} pages");
    let bad = pipe
        .request("resources/list", json!({"cursor": "not-a-cursor"}))
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
}

#[tokio::test]
async fn a_resource_a_filter_guards_is_never_cached_as_public() {
    use tool_runtime::layers::policy::ToolFilter;
    let build = |filter: ToolFilter| {
        let mut notes = fixed("notes", "notes://today", ResourceBody::Text("milk".into()));
        notes.meta.ttl = Some(Duration::from_secs(60));
        notes.meta.scope = Some(CacheScope::Public);
        Arc::new(
            Registry::builder()
                .without_inventory()
                .resource(notes)
                .policy(filter)
                .build()
                .unwrap(),
        )
    };
    let hints = |answer: &Value| {
        (
            answer["result"]["ttlMs"].clone(),
            answer["result"]["cacheScope"].clone(),
        )
    };
    // A filter for everyone decides alike for every caller: the resource's own scope stands.
    let everyone = ToolFilter::new().for_everyone(Vec::<String>::new(), ["other"]);
    let mut pipe = Pipe::modern(McpServer::new(build(everyone)));
    let read = pipe
        .request("resources/read", json!({"uri": "notes://today"}))
        .await;
    assert_eq!(hints(&read), (json!(60_000), json!("public")), "{read}");
    let list = pipe.request("resources/list", json!({})).await;
    assert_eq!(hints(&list), (json!(60_000), json!("public")), "{list}");
    // Hidden from guests: what others read and list depends on who asks.
    let guests = ToolFilter::new().for_role("guest", Vec::<String>::new(), ["notes"]);
    let mut pipe = Pipe::modern(McpServer::new(build(guests)));
    let read = pipe
        .request("resources/read", json!({"uri": "notes://today"}))
        .await;
    assert_eq!(hints(&read), (json!(60_000), json!("private")), "{read}");
    let list = pipe.request("resources/list", json!({})).await;
    assert_eq!(hints(&list), (json!(60_000), json!("private")), "{list}");
}

#[tokio::test]
async fn a_session_follows_at_most_its_cap_of_resources_and_is_refused_past_it_by_name() {
    let registry = registry();
    let mut pipe = Pipe::legacy(McpServer::new(registry.clone()).max_subscriptions(2)).await;
    let subscribe = |uri: &str| json!({"uri": uri});
    for uri in ["notes://today", "files://docs/a", "notes://today"] {
        let answer = pipe.request("resources/subscribe", subscribe(uri)).await;
        assert_eq!(answer["result"], json!({}), "{uri}: {answer}");
    }
    let refused = pipe
        .request("resources/subscribe", subscribe("files://docs/b"))
        .await;
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    assert_eq!(
        refused["error"]["data"]["max_subscriptions"], 2,
        "{refused}"
    );
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("follows 2 resources") && message.contains("max_subscriptions"),
        "{message}"
    );
    // What it follows is not disturbed.
    pipe.request(
        "tools/call",
        json!({"name": "touch", "arguments": {"uri": "notes://today"}}),
    )
    .await;
    let updated = pipe.notified("notifications/resources/updated").await;
    assert_eq!(updated["params"]["uri"], "notes://today");
    // One let go makes room for another.
    pipe.request("resources/unsubscribe", subscribe("files://docs/a"))
        .await;
    let answer = pipe
        .request("resources/subscribe", subscribe("files://docs/b"))
        .await;
    assert_eq!(answer["result"], json!({}), "{answer}");
}

#[tokio::test]
async fn on_2026_07_28_the_listens_of_a_session_share_its_cap_until_they_end() {
    let registry = registry();
    let mut pipe = Pipe::modern(McpServer::new(registry.clone()).max_subscriptions(2));
    let meta = pipe.modern.clone().unwrap();
    let listen = |id: i64, uris: &[&str]| {
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
            "_meta": meta, "notifications": {"resourceSubscriptions": uris}}})
    };
    // More URIs than the cap: none accepted, and the listen refused by name.
    pipe.send(listen(
        10,
        &["notes://today", "files://docs/a", "files://docs/b"],
    ))
    .await;
    let refused = pipe.answer(10).await;
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("names 3 resources") && message.contains("at most 2"),
        "{message}"
    );
    let acknowledged = pipe
        .notified("notifications/subscriptions/acknowledged")
        .await;
    assert!(
        acknowledged["params"]["notifications"]
            .get("resourceSubscriptions")
            .is_none(),
        "{acknowledged}"
    );

    // Two open listens of the same session count together.
    pipe.send(listen(11, &["notes://today", "files://docs/a"]))
        .await;
    pipe.notified("notifications/subscriptions/acknowledged")
        .await;
    pipe.send(listen(12, &["files://docs/b"])).await;
    let refused = pipe.answer(12).await;
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("already follows 2"), "{message}");
    // The first one ended, its URIs no longer count. (On stdio a notification counts once a
    // request has had a result.)
    pipe.request("tools/list", json!({})).await;
    pipe.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 11, "_meta": meta}}),
    )
    .await;
    // A listen begun before that end is refused: another is begun until one hears updates.
    let accepted = tokio::time::timeout(Duration::from_secs(10), async {
        for id in 13.. {
            pipe.send(listen(id, &["files://docs/b"])).await;
            loop {
                registry.notifier().resource_updated("files://docs/b");
                let Ok(message) =
                    tokio::time::timeout(Duration::from_millis(100), pipe.next()).await
                else {
                    continue;
                };
                if message["id"] == json!(id) {
                    assert!(
                        message["error"]["message"]
                            .as_str()
                            .is_some_and(|m| m.contains("already follows 2")),
                        "{message}"
                    );
                    break;
                }
                if message["method"] == "notifications/resources/updated" {
                    return message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
                        .clone();
                }
            }
        }
        unreachable!()
    })
    .await
    .expect("a listen accepted once the first one ended");
    assert!(accepted.as_i64().is_some_and(|id| id >= 13), "{accepted}");
}
