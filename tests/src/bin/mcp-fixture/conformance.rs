//! The tools the official MCP conformance suite (`@modelcontextprotocol/conformance`) calls in
//! its server scenarios, each as the scenario describes it, written with `#[tool]` and the
//! call context: media results, log messages, progress, sampling and elicitation, an event
//! stream ended mid-call.

use std::time::Duration;

use serde_json::{Value, json};
use tool_runtime::tool::peer::{Elicited, LogLevel, Sample};
use tool_runtime::{CallContext, Content, ToolError, tool};

/// A 1×1 red PNG.
pub const RED_PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

fn red_pixel() -> Content {
    Content::Image {
        data: RED_PIXEL_PNG.to_owned(),
        mime_type: "image/png".to_owned(),
    }
}

/// A tenth of a second of silence: 8 kHz, 8-bit mono PCM in a WAV file.
fn silence_wav() -> Vec<u8> {
    let samples = [0x80_u8; 800];
    let len = u32::try_from(samples.len()).expect("a short sound");
    let mut wav = Vec::with_capacity(44 + samples.len());
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + len).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16_u32.to_le_bytes()); // the format chunk's size
    wav.extend_from_slice(&1_u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1_u16.to_le_bytes()); // one channel
    wav.extend_from_slice(&8000_u32.to_le_bytes()); // samples per second
    wav.extend_from_slice(&8000_u32.to_le_bytes()); // bytes per second
    wav.extend_from_slice(&1_u16.to_le_bytes()); // bytes per frame
    wav.extend_from_slice(&8_u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&len.to_le_bytes());
    wav.extend_from_slice(&samples);
    wav
}

/// Returns a simple text.
#[tool(annotations(read_only))]
async fn test_simple_text() -> Content {
    Content::text("This is a simple text response for testing.")
}

/// Returns the region it was given, which a Streamable HTTP client also sends as the header
/// `Mcp-Param-Region` (SEP-2243): the server refuses a call whose header and argument differ.
#[tool(annotations(read_only))]
async fn test_custom_headers(
    /// The region, mirrored in `Mcp-Param-Region`.
    #[arg(header = "Region")]
    region: String,
) -> String {
    region
}

/// Returns an image.
#[tool(annotations(read_only))]
async fn test_image_content() -> Content {
    red_pixel()
}

/// Returns a sound.
#[tool(annotations(read_only))]
async fn test_audio_content() -> Content {
    Content::audio(silence_wav(), "audio/wav")
}

/// Returns an embedded resource.
#[tool(annotations(read_only))]
async fn test_embedded_resource() -> Content {
    Content::resource_text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
}

/// Returns text, an image and a resource.
#[tool(annotations(read_only))]
async fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        red_pixel(),
        Content::resource_text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ),
    ]
}

/// Sends three log messages while it runs.
#[tool(annotations(read_only))]
async fn test_tool_with_logging(ctx: &CallContext) -> Content {
    ctx.log(LogLevel::Info, "Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool execution completed");
    Content::text("Logging test completed")
}

/// Always fails.
#[tool(annotations(read_only))]
async fn test_error_handling() -> Result<Content, ToolError> {
    Err(ToolError::new(
        "tool_failed",
        "This tool intentionally returns an error for testing",
    ))
}

/// Reports progress 0, 50 and 100 out of 100.
#[tool(annotations(read_only))]
async fn test_tool_with_progress(ctx: &CallContext) -> Content {
    for (i, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.progress(done, Some(100.0), None);
    }
    Content::text("Progress test completed")
}

/// Ends its event stream mid-call, then answers: the client resumes the stream to hear it.
#[tool(annotations(read_only))]
async fn test_reconnection(ctx: &CallContext) -> Content {
    tokio::time::sleep(Duration::from_millis(100)).await;
    ctx.close_stream();
    tokio::time::sleep(Duration::from_millis(100)).await;
    Content::text("Reconnection test completed")
}

/// Asks the client's model to answer `prompt`.
#[tool(annotations(read_only))]
async fn test_sampling(
    ctx: &CallContext,
    /// The prompt to send to the model
    prompt: String,
) -> Result<Content, ToolError> {
    let answer = ctx.sample(Sample::new(prompt).max_tokens(100)).await?;
    Ok(Content::text(format!("LLM response: {}", answer.text)))
}

/// The answer to an elicitation, in words.
fn answered(prefix: &str, answer: &Elicited<serde_json::Map<String, Value>>) -> Content {
    let (action, content) = match answer {
        Elicited::Accepted(content) => ("accept", Value::Object(content.clone())),
        Elicited::Declined => ("decline", Value::Null),
        Elicited::Cancelled => ("cancel", Value::Null),
    };
    Content::text(format!("{prefix}: action={action}, content={content}"))
}

/// Asks the user for a name and an e-mail address.
#[tool(annotations(read_only))]
async fn test_elicitation(
    ctx: &CallContext,
    /// The question to show the user
    message: String,
) -> Result<Content, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    });
    let answer = ctx.elicit_with(message, schema).await?;
    Ok(answered("User response", &answer))
}

/// Asks the user for fields of every primitive type, each with a default.
#[tool(annotations(read_only))]
async fn test_elicitation_sep1034_defaults(ctx: &CallContext) -> Result<Content, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true},
        },
    });
    let answer = ctx
        .elicit_with(
            "Please review and update the form fields with defaults",
            schema,
        )
        .await?;
    Ok(answered("Elicitation completed", &answer))
}

/// Asks the user to choose, in each of the five ways an elicitation can offer choices.
#[tool(annotations(read_only))]
async fn test_elicitation_sep1330_enums(ctx: &CallContext) -> Result<Content, ToolError> {
    let titled = |prefix: &str, titles: [&str; 3]| -> Vec<Value> {
        titles
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"const": format!("{prefix}{}", i + 1), "title": t}))
            .collect()
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": titled("value", ["First Option", "Second Option", "Third Option"]),
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "items": {"anyOf": titled("value", ["First Choice", "Second Choice", "Third Choice"])},
            },
        },
    });
    let answer = ctx
        .elicit_with("Please select options from the enum fields", schema)
        .await?;
    Ok(answered("Elicitation completed", &answer))
}

/// A tool whose input schema is written out in JSON Schema 2020-12 with `$defs` and `$ref`
/// (a `#[tool]`'s own schemas are inlined): the schema is served as it was given.
pub struct JsonSchemaTool;

impl tool_runtime::Tool for JsonSchemaTool {
    fn meta(&self) -> tool_runtime::tool::ToolMeta {
        let mut meta = tool_runtime::tool::ToolMeta::new(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features",
        );
        meta.annotations.read_only = Some(true);
        meta.content = true;
        meta
    }

    fn input_schema(&self) -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                },
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
            },
            "additionalProperties": false,
        })
    }

    fn output_schema(&self) -> Value {
        tool_runtime::schema::output_schema_for::<Vec<Content>>()
    }

    fn call(
        &self,
        args: Value,
        _ctx: CallContext,
    ) -> futures_util::future::BoxFuture<'_, Result<Value, ToolError>> {
        let text = format!(
            "name={}, city={}",
            args["name"].as_str().unwrap_or("-"),
            args["address"]["city"].as_str().unwrap_or("-")
        );
        Box::pin(async move {
            serde_json::to_value(vec![Content::text(text)]).map_err(ToolError::internal)
        })
    }
}

/// The user of [`client`]: accepts every form as it is shown (leaving each field at its
/// default) and has no model to sample.
struct AcceptsForms;

impl tool_runtime::tool::peer::Peer for AcceptsForms {
    fn elicit(
        &self,
        _message: String,
        _schema: Value,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<Elicited<serde_json::Map<String, Value>>, ToolError>,
    > {
        Box::pin(async { Ok(Elicited::Accepted(serde_json::Map::new())) })
    }
}

/// The sign-in of the scenarios that authorize a user: the client is the one of the suite's
/// metadata document, or registers itself, or the one the scenario registered beforehand.
fn sign_in(context: &Value, redirect_uri: &str) -> tool_runtime::mcp::SignIn {
    use tool_runtime::Secret;
    let sign_in = tool_runtime::mcp::SignIn::new(redirect_uri, "conformance-client")
        .metadata_document("https://conformance-test.local/client-metadata.json");
    match (
        context["client_id"].as_str(),
        context["client_secret"].as_str(),
    ) {
        (Some(id), secret) => sign_in.registered(id, secret.map(|s| Secret::new(s.to_owned()))),
        (None, _) => sign_in,
    }
}

/// Opens the authorization page as a browser would, following its redirects: back to the
/// loopback port, where the sign-in waits.
fn follow(url: &str) {
    let url = url.to_owned();
    tokio::spawn(async move {
        if let Err(e) = reqwest::get(&url).await {
            eprintln!("the authorization page: {e}");
        }
    });
}

/// The client credentials a scenario gives: a secret, or a PEM key to sign with.
fn as_application(
    context: &Value,
) -> Result<tool_runtime::mcp::ClientCredentials, tool_runtime::ToolError> {
    use tool_runtime::Secret;
    use tool_runtime::mcp::ClientCredentials;
    let text = |key: &str| context[key].as_str().unwrap_or_default().to_owned();
    match context["private_key_pem"].as_str() {
        Some(pem) => ClientCredentials::private_key_jwt(
            text("client_id"),
            Secret::new(pem.to_owned()),
            &text("signing_algorithm"),
        ),
        None => Ok(ClientCredentials::secret(
            text("client_id"),
            Secret::new(text("client_secret")),
        )),
    }
}

/// The enterprise user a scenario gives: the identity provider, the user's ID token from it,
/// and this client at both servers.
fn enterprise_user(context: &Value) -> tool_runtime::mcp::EnterpriseGrant {
    use tool_runtime::Secret;
    let text = |key: &str| context[key].as_str().unwrap_or_default().to_owned();
    tool_runtime::mcp::EnterpriseGrant::new(
        text("idp_issuer"),
        text("idp_token_endpoint"),
        text("idp_client_id"),
        Secret::new(text("idp_id_token")),
        text("client_id"),
    )
    .client_secret(Secret::new(text("client_secret")))
}

/// `mcp-fixture conformance-client URL`: our MCP client ([`tool_runtime::mcp::RemoteServer`])
/// in the conformance suite's client scenarios. It mounts the server at `URL`, then calls each
/// tool it lists (`add_numbers` with two numbers, the others without arguments) as a caller
/// who accepts every form.
pub async fn client(url: &str) -> std::process::ExitCode {
    use tool_runtime::{Caller, Registry, Source};
    let registry = Registry::builder()
        .without_inventory()
        .build()
        .expect("an empty registry");
    // The revision the scenario is of: `initialize` for one of 2025 and before, else
    // `server/discover` first (2026-07-28, 2025-11-25 with a server that does not offer it).
    let server = tool_runtime::mcp::RemoteServer::http("conformance", url);
    let revision = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    let server = if revision.starts_with("2024") || revision.starts_with("2025") {
        server
    } else {
        server.discover_first()
    };
    // The scenario's settings (`MCP_CONFORMANCE_CONTEXT`): the client credentials of those
    // that mount the server as the application or an enterprise's user, the calls to make.
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let server = if scenario == "auth/enterprise-managed-authorization" {
        server.as_enterprise_user(enterprise_user(&context))
    } else if scenario == "auth/wif-jwt-bearer" {
        // The platform's token, as the scenario issued it for this authorization server.
        let text = |key: &str| context[key].as_str().unwrap_or_default().to_owned();
        server.as_workload(tool_runtime::mcp::WorkloadIdentity::new(
            text("client_id"),
            tool_runtime::Secret::new(text("valid_jwt")),
        ))
    } else if scenario.starts_with("auth/client-credentials") {
        match as_application(&context) {
            Ok(credentials) => server.as_application(credentials),
            Err(e) => {
                eprintln!("the scenario's credentials: {e}");
                return std::process::ExitCode::FAILURE;
            }
        }
    } else if scenario.starts_with("auth/") {
        // The user's browser is a client that follows the authorization server's redirect back
        // to the loopback port: the suite's authorization server approves at once.
        let browser = match tool_runtime::mcp::LoopbackBrowser::bind().await {
            Ok(browser) => browser.opening_with(follow),
            Err(e) => {
                eprintln!("{e}");
                return std::process::ExitCode::FAILURE;
            }
        };
        let sign_in = sign_in(&context, browser.redirect_uri());
        server.signed_in(sign_in, std::sync::Arc::new(browser))
    } else {
        server
    };
    let names = match registry.mount(server).await {
        Ok(names) => names,
        Err(e) => {
            eprintln!("mounting {url}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    // The calls the scenario asks for (`toolCalls` in its context), else one of every tool.
    let calls: Vec<(String, Value)> = match context["toolCalls"].as_array() {
        Some(calls) => calls
            .iter()
            .map(|c| {
                let name = c["name"].as_str().unwrap_or_default();
                (format!("conformance-{name}"), c["arguments"].clone())
            })
            .collect(),
        None => names
            .iter()
            .map(|name| (name.clone(), arguments_for(&registry, &names, name)))
            .collect(),
    };
    let mut failed = false;
    for (name, args) in calls {
        // A `null` the scenario gives for an optional value (a header to leave out) is the
        // value left out.
        let caller = Caller::new(Source::Internal)
            .confirm(true)
            .strict_nulls(true)
            .peer(std::sync::Arc::new(AcceptsForms));
        let envelope = registry.call(&name, args, caller).await;
        match envelope.outcome {
            Ok(result) => println!("{name}: {result}"),
            Err(e) => {
                eprintln!("{name}: {e}");
                failed = true;
            }
        }
    }
    if failed {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}

/// The arguments the client calls mounted tool `name` with: the sum's terms; for the schema
/// echo, the input schema of the other tool as the server sent it; else a value of its type for
/// each required parameter.
fn arguments_for(registry: &tool_runtime::Registry, names: &[String], name: &str) -> Value {
    if name.ends_with("-add_numbers") {
        return json!({"a": 3, "b": 4});
    }
    if name.ends_with("-json_schema_echo") {
        let focal = names.iter().find(|n| *n != name);
        let schema = focal
            .and_then(|n| registry.get(n))
            .map(|t| t.input_schema().clone());
        return json!({"schema": schema});
    }
    let Some(tool) = registry.get(name) else {
        return json!({});
    };
    let schema = tool.input_schema();
    let mut args = serde_json::Map::new();
    for required in schema["required"].as_array().into_iter().flatten() {
        let Some(param) = required.as_str() else {
            continue;
        };
        let value = match schema["properties"][param]["type"].as_str() {
            Some("integer" | "number") => json!(1),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("test"),
        };
        args.insert(param.to_owned(), value);
    }
    Value::Object(args)
}
