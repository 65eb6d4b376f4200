//! Resources, prompts and completions over HTTP (`GET /resources`, `GET /resources/read`,
//! `GET /prompts`, `POST /prompts/{name}`, `POST /complete`) on a real server: what each caller
//! sees, raw and JSON reads with their media types and caching, refusals before the fn runs,
//! and the OpenAPI document that describes them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tool_runtime::http::{self, Auth, ServerOptions};

const TOKENS: &str = "[[tokens]]\ntoken = \"admin-token\"\nprincipal = \"ada\"\nroles = [\"admin\"]\n\n\
                      [[tokens]]\ntoken = \"plain-token\"\nprincipal = \"pat\"\n";

struct Server {
    base: String,
    reads: Arc<AtomicUsize>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn start() -> Server {
    let reads = Arc::new(AtomicUsize::new(0));
    let registry = Arc::new(super::items::registry(&reads).build().unwrap());
    let options = ServerOptions::default().auth(Auth::from_toml(TOKENS).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(http::serve(
        listener,
        http::router(registry, options),
        async {
            let _ = stopped.await;
        },
        &ServerOptions::default().grace(Duration::from_secs(1)),
    ));
    Server {
        base,
        reads,
        stop: Some(stop),
    }
}

impl Server {
    async fn get(&self, path: &str, query: &[(&str, &str)], token: &str) -> reqwest::Response {
        let url = reqwest::Url::parse_with_params(&format!("{}{path}", self.base), query).unwrap();
        reqwest::Client::new()
            .get(url)
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
    }

    async fn read(&self, uri: &str, token: &str) -> reqwest::Response {
        self.get("/resources/read", &[("uri", uri)], token).await
    }

    async fn post(&self, path: &str, body: &Value, token: &str) -> (StatusCode, Value) {
        let r = reqwest::Client::new()
            .post(format!("{}{path}", self.base))
            .json(body)
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        (r.status(), r.json().await.unwrap())
    }
}

fn header<'r>(r: &'r reqwest::Response, name: &str) -> &'r str {
    r.headers()
        .get(name)
        .map_or("", |v| v.to_str().unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_are_listed_per_caller_with_their_templates() {
    let s = start().await;
    let listing: Value = s
        .get("/resources", &[], "plain-token")
        .await
        .json()
        .await
        .unwrap();
    let resources = listing["resources"].as_array().unwrap();
    let uris: Vec<&str> = resources
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    // The static resources (most specific first), then those the template lists.
    let (fixed, listed) = uris.split_at(5);
    let mut fixed = fixed.to_vec();
    fixed.sort_unstable();
    assert_eq!(
        fixed,
        [
            "archive://data.bin",
            "docs://readme",
            "images://logo",
            "limited://once",
            "pair://both"
        ]
    );
    assert_eq!(listed, ["files://notes/a.txt", "files://notes/b.txt"]);
    let readme = resources
        .iter()
        .find(|r| r["uri"] == "docs://readme")
        .unwrap();
    assert_eq!(readme["name"], "readme");
    assert_eq!(readme["mimeType"], "text/markdown");
    assert_eq!(readme["description"], "The project's readme.");
    // A template's listed resources take its media type.
    assert_eq!(listing["resources"][5]["mimeType"], "text/plain");
    assert_eq!(
        listing["templates"],
        json!([{"name": "files", "uriTemplate": "files://{path*}", "title": "Files",
                "description": "A file under the root.", "mimeType": "text/plain"}])
    );

    // The admin sees the admin's resource too.
    let listing: Value = s
        .get("/resources", &[], "admin-token")
        .await
        .json()
        .await
        .unwrap();
    assert!(
        listing["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["uri"] == "secrets://key"),
        "{listing}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_answer_the_contents_as_they_are_with_type_and_caching() {
    let s = start().await;
    // Text: UTF-8 said, cached as the resource says.
    let r = s.read("docs://readme", "plain-token").await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(header(&r, "content-type"), "text/markdown; charset=utf-8");
    assert_eq!(header(&r, "cache-control"), "max-age=60, public");
    assert_eq!(header(&r, "x-content-type-options"), "nosniff");
    assert_eq!(header(&r, "content-security-policy"), "sandbox");
    assert_eq!(r.text().await.unwrap(), super::items::README);

    // A blob, decoded; without a time to live, revalidated.
    let r = s.read("images://logo", "plain-token").await;
    assert_eq!(header(&r, "content-type"), "image/png");
    assert_eq!(header(&r, "cache-control"), "no-cache, private");
    assert_eq!(&r.bytes().await.unwrap()[..], super::items::LOGO);

    // Bytes without a media type of their own.
    let r = s.read("archive://data.bin", "plain-token").await;
    assert_eq!(header(&r, "content-type"), "application/octet-stream");
    assert_eq!(&r.bytes().await.unwrap()[..], super::items::DATA);

    // A template, its value decoded from the URI.
    let r = s.read("files://notes/a%20b.txt", "plain-token").await;
    assert_eq!(header(&r, "content-type"), "text/plain; charset=utf-8");
    assert_eq!(r.text().await.unwrap(), "contents of notes/a b.txt");

    // `format=json`: the contents envelope, the blob in base64.
    let r = s
        .get(
            "/resources/read",
            &[("uri", "images://logo"), ("format", "json")],
            "plain-token",
        )
        .await;
    assert_eq!(header(&r, "content-type"), "application/json");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["contents"][0]["uri"], "images://logo");
    assert_eq!(body["contents"][0]["mimeType"], "image/png");
    assert_eq!(body["contents"][0]["blob"], super::items::LOGO_BASE64);

    // Several contents: the envelope, always.
    let r = s.read("pair://both", "plain-token").await;
    assert_eq!(header(&r, "content-type"), "application/json");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["contents"][1]["text"], "two");

    // Another format, or a query without the URI, is a bad request.
    for query in [
        &[("uri", "docs://readme"), ("format", "xml")][..],
        &[("url", "docs://readme")],
    ] {
        let r = s.get("/resources/read", query, "plain-token").await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{query:?}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["type"], "invalid_request");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_are_refused_as_the_pipeline_refuses_calls() {
    let s = start().await;
    // No resource at the URI: 404 with the URI.
    let r = s.read("nowhere://x", "plain-token").await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "not_found");
    assert_eq!(body["error"]["details"]["uri"], "nowhere://x");
    assert!(body["meta"]["request_id"].is_string());

    // A hidden resource is not found for those it is hidden from; the admin reads it.
    let r = s.read("secrets://key", "plain-token").await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["details"]["uri"], "secrets://key");
    let r = s.read("secrets://key", "admin-token").await;
    // Guarded by a role: kept by the caller's own cache only, keyed by its credentials,
    // whatever scope the resource states.
    assert_eq!(header(&r, "cache-control"), "max-age=60, private");
    assert_eq!(header(&r, "vary"), "authorization");
    assert_eq!(r.text().await.unwrap(), "s3cret");

    // A template value that climbs out of its place is refused before the fn runs.
    for uri in ["files://notes/../../etc/passwd", "files://%2Fetc/passwd"] {
        let r = s.read(uri, "plain-token").await;
        assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY, "{uri}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["type"], "invalid_arguments");
        assert_eq!(body["error"]["details"]["violations"][0]["path"], "/path");
    }
    assert_eq!(s.reads.load(Ordering::SeqCst), 0);

    // Over the rate: 429 with `Retry-After`.
    assert_eq!(
        s.read("limited://once", "plain-token").await.status(),
        StatusCode::OK
    );
    let r = s.read("limited://once", "plain-token").await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(header(&r, "retry-after").parse::<u64>().unwrap() >= 1);

    // Without a token: 401, as every route.
    let r = reqwest::get(format!("{}/resources", s.base)).await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_listed_and_got_with_their_arguments_checked() {
    let s = start().await;
    let listing: Value = s
        .get("/prompts", &[], "plain-token")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listing["prompts"][0]["name"], "review");
    assert_eq!(listing["prompts"][0]["title"], "Review");
    assert_eq!(
        listing["prompts"][0]["arguments"][0],
        json!({"name": "code", "description": "The code to review", "required": true})
    );

    let (status, reply) = s
        .post(
            "/prompts/review",
            &json!({"code": "fn main() {}", "strictness": "3", "language": "rust"}),
            "plain-token",
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    assert_eq!(reply["description"], "A review at strictness 3");
    assert_eq!(reply["messages"][0]["role"], "user");
    assert_eq!(
        reply["messages"][0]["content"],
        json!({"type": "text", "text": "Review this rust at strictness 3:\nfn main() {}"})
    );
    assert_eq!(reply["messages"][1]["role"], "assistant");

    // An argument that does not parse, one missing, one not a string, one unknown: 422.
    for (args, path) in [
        (json!({"code": "x", "strictness": "very"}), "/strictness"),
        (json!({}), ""),
        (json!({"code": 7}), "/code"),
        (json!({"code": "x", "colour": "red"}), "/colour"),
    ] {
        let (status, body) = s.post("/prompts/review", &args, "plain-token").await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{args}: {body}");
        assert_eq!(body["error"]["type"], "invalid_arguments");
        assert_eq!(
            body["error"]["details"]["violations"][0]["path"], path,
            "{body}"
        );
    }
    // Not an object: 400.
    let (status, body) = s.post("/prompts/review", &json!([1]), "plain-token").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    // An unknown prompt: 404 with its name.
    let (status, body) = s.post("/prompts/nope", &json!({}), "plain-token").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["details"]["name"], "nope");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_are_offered_for_prompt_arguments_and_template_variables() {
    let s = start().await;
    let (status, body) = s
        .post(
            "/complete",
            &json!({"ref": {"type": "ref/prompt", "name": "review"},
                    "argument": {"name": "language", "value": "p"}}),
            "plain-token",
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"completion": {"values": ["python", "perl"], "hasMore": false}})
    );
    let (_, body) = s
        .post(
            "/complete",
            &json!({"ref": {"type": "ref/resource", "uri": "files://{path*}"},
                    "argument": {"name": "path", "value": "notes/"},
                    "context": {"arguments": {}}}),
            "plain-token",
        )
        .await;
    assert_eq!(
        body["completion"]["values"],
        json!(["notes/a.txt", "notes/b.txt"])
    );
    let (status, body) = s
        .post(
            "/complete",
            &json!({"ref": {"type": "ref/prompt", "name": "nope"},
                    "argument": {"name": "x", "value": ""}}),
            "plain-token",
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = s
        .post(
            "/complete",
            &json!({"ref": {"type": "ref/tool"}}),
            "plain-token",
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_describes_the_routes_and_validates() {
    let s = start().await;
    let doc: Value = s
        .get("/openapi.json", &[], "plain-token")
        .await
        .json()
        .await
        .unwrap();
    for (path, method) in [
        ("/resources", "get"),
        ("/resources/read", "get"),
        ("/prompts", "get"),
        ("/prompts/{name}", "post"),
        ("/complete", "post"),
    ] {
        assert!(doc["paths"][path][method].is_object(), "{path}");
    }
    let read = &doc["paths"]["/resources/read"]["get"]["responses"];
    assert!(read["200"]["content"]["*/*"].is_object());
    assert!(read["404"].is_object() && read["422"].is_object() && read["429"].is_object());

    let python = tool_test_support::python_with("openapi_spec_validator");
    let dir = tool_test_support::TempDir::new("items-openapi");
    let path = dir.join("openapi.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let out = std::process::Command::new(&python)
        .args(["-m", "openapi_spec_validator", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
