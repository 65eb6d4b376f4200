//! `#[resource]`, `#[prompt]` and `#[arg(complete = f)]` through a `Registry`, with no front
//! end: lists, reads of each kind of contents, typed variables and arguments, screening,
//! visibility, rate limits, completions, overlapping templates, and the pipeline's observers.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tool_runtime::layers::hooks::{CallObserver, CompletedCall};
use tool_runtime::layers::policy::RequireRoles;
use tool_runtime::prelude::*;
use tool_runtime::prompt::PromptMessage;
use tool_runtime::resource::Listed;
use tool_runtime::tool::{Completing, CompletionRef};
use tool_runtime::{prompt, resource};

/// Today's message.
#[resource("motd://today")]
fn motd() -> &'static str {
    "Hello, world"
}

/// The logo.
#[resource("images://logo.png", mime = "image/png", size = 3)]
async fn logo() -> Vec<u8> {
    vec![1, 2, 3]
}

#[derive(serde::Serialize)]
struct Status {
    id: u32,
    online: bool,
    verbose: bool,
}

/// Devices, in a store.
struct Devices(Vec<u32>);

/// One device's status.
#[resource("devices://{id}/status{?verbose}", list = device_list, ttl = "30s", scope = "private")]
async fn device_status(
    id: u32,
    verbose: Option<bool>,
    devices: State<Devices>,
) -> Result<Status, ToolError> {
    if !devices.0.contains(&id) {
        return Err(ToolError::not_found(format!("no device {id}")));
    }
    Ok(Status {
        id,
        online: id.is_multiple_of(2),
        verbose: verbose.unwrap_or(false),
    })
}

async fn device_list(devices: State<Devices>) -> Vec<Listed> {
    devices
        .0
        .iter()
        .map(|id| Listed::new(format!("devices://{id}/status"), format!("device {id}")))
        .collect()
}

static SCREENED_RAN: AtomicBool = AtomicBool::new(false);

/// A file.
#[resource("files://{path*}")]
async fn file(path: String) -> String {
    SCREENED_RAN.store(true, Ordering::SeqCst);
    format!("file {path}")
}

/// A raw path, not screened.
#[resource("raw://{path*}")]
async fn raw(#[arg(unscreened)] path: String) -> String {
    format!("raw {path}")
}

/// Secrets, for admins (with the `RequireRoles` policy).
#[resource("secrets://all", roles("admin"))]
async fn secrets() -> String {
    "hunter2".into()
}

/// Limited.
#[resource("limited://x", rate = "2/min")]
async fn limited() -> String {
    "x".into()
}

/// A shelf's items.
#[resource("catalog://{shelf}/{item}")]
async fn catalog_item(
    #[arg(complete = shelves)] shelf: String,
    #[arg(complete = items)] item: String,
) -> String {
    format!("{shelf}/{item}")
}

// Reason: a plain completion fn that may fail takes the `Completing` it is given.
#[allow(clippy::needless_pass_by_value, clippy::unnecessary_wraps)]
fn shelves(c: Completing) -> Result<Vec<String>, ToolError> {
    Ok(["books", "bikes"]
        .into_iter()
        .filter(|s| s.starts_with(c.value()))
        .map(str::to_owned)
        .collect())
}

async fn items(c: Completing) -> Vec<String> {
    let shelf = c.arg("shelf").unwrap_or("none").to_owned();
    (0..150).map(|i| format!("{shelf}-{i}")).collect()
}

/// Repeat a word.
#[prompt]
async fn repeat(
    /// The word to repeat
    #[arg(complete = words)]
    word: String,
    /// How many times
    times: u32,
    /// A separator
    separator: Option<String>,
) -> String {
    vec![word; times as usize].join(&separator.unwrap_or_else(|| " ".into()))
}

async fn words(c: Completing) -> Vec<String> {
    ["apple", "apricot", "banana"]
        .into_iter()
        .filter(|w| w.starts_with(c.value()))
        .map(str::to_owned)
        .collect()
}

/// A conversation.
#[prompt(name = "chat", title = "Chat")]
fn conversation(topic: String) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(format!("Tell me about {topic}")),
        PromptMessage::assistant("Gladly."),
    ]
}

fn caller() -> Caller {
    Caller::new(Source::Internal)
}

fn registry() -> Registry {
    Registry::builder()
        .without_inventory()
        .state(Devices(vec![1, 2]))
        .resource(motd::descriptor())
        .resource(logo::descriptor())
        .resource(device_status::descriptor())
        .resource(file::descriptor())
        .resource(raw::descriptor())
        .resource(secrets::descriptor())
        .resource(limited::descriptor())
        .resource(catalog_item::descriptor())
        .prompt(repeat::descriptor())
        .prompt(conversation::descriptor())
        .policy(RequireRoles)
        .build()
        .unwrap()
}

fn violation_paths(e: &ToolError) -> Vec<String> {
    e.violations().iter().map(|v| v.path.clone()).collect()
}

#[tokio::test]
async fn lists_static_resources_and_what_templates_list() {
    let r = registry();
    let listed: Vec<String> = r
        .list_resources(&caller())
        .await
        .into_iter()
        .map(|(l, _)| l.uri)
        .collect();
    for uri in [
        "motd://today",
        "images://logo.png",
        "limited://x",
        "devices://1/status",
        "devices://2/status",
    ] {
        assert!(listed.iter().any(|u| u == uri), "{uri} in {listed:?}");
    }
    let metas = r.resources(&caller());
    let status = metas.iter().find(|m| m.name == "device_status").unwrap();
    assert_eq!(status.uri, "devices://{id}/status{?verbose}");
    assert_eq!(status.title, "Device status");
    assert_eq!(status.description, "One device's status.");
    assert_eq!(status.ttl, Some(std::time::Duration::from_secs(30)));
    let logo = metas.iter().find(|m| m.name == "logo").unwrap();
    assert_eq!(
        (logo.mime_type.as_deref(), logo.size),
        (Some("image/png"), Some(3))
    );
}

#[tokio::test]
async fn reads_text_blob_and_json() {
    let r = registry();
    let text = r.read_resource("motd://today", caller()).await.unwrap();
    assert_eq!(text.contents[0].text.as_deref(), Some("Hello, world"));
    assert_eq!(text.contents[0].mime_type.as_deref(), Some("text/plain"));

    let blob = r
        .read_resource("images://logo.png", caller())
        .await
        .unwrap();
    assert_eq!(blob.contents[0].blob.as_deref(), Some("AQID"));
    assert_eq!(blob.contents[0].mime_type.as_deref(), Some("image/png"));

    let json = r
        .read_resource("devices://2/status?verbose=true", caller())
        .await
        .unwrap();
    assert_eq!(json.contents[0].uri, "devices://2/status?verbose=true");
    assert_eq!(
        json.contents[0].mime_type.as_deref(),
        Some("application/json")
    );
    let value: Value = serde_json::from_str(json.contents[0].text.as_deref().unwrap()).unwrap();
    assert_eq!(value, json!({"id": 2, "online": true, "verbose": true}));
    assert_eq!(json.resource.name, "device_status");
}

#[tokio::test]
async fn a_typed_variable_that_does_not_parse_is_invalid_arguments() {
    let r = registry();
    let e = r
        .read_resource("devices://abc/status", caller())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::INVALID_ARGUMENTS);
    assert_eq!(violation_paths(&e), ["/id"]);
    assert!(e.violations()[0].message.contains("u32"), "{e:?}");
    let e = r
        .read_resource("devices://1/status?verbose=maybe", caller())
        .await
        .unwrap_err();
    assert_eq!(violation_paths(&e), ["/verbose"]);
    // The fn's own error passes through.
    let e = r
        .read_resource("devices://7/status", caller())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::NOT_FOUND);
}

#[tokio::test]
async fn an_unmatched_uri_is_not_found_with_the_uri() {
    let r = registry();
    let e = r
        .read_resource("nothing://here", caller())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::NOT_FOUND);
    assert_eq!(e.details(), Some(&json!({"uri": "nothing://here"})));
}

#[tokio::test]
async fn a_resource_the_caller_may_not_see_is_not_listed_and_not_found() {
    let r = registry();
    assert!(!r.resources(&caller()).iter().any(|m| m.name == "secrets"));
    let e = r
        .read_resource("secrets://all", caller())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::NOT_FOUND);
    assert_eq!(e.details(), Some(&json!({"uri": "secrets://all"})));
    let admin = caller().roles(["admin"]);
    assert!(r.resources(&admin).iter().any(|m| m.name == "secrets"));
    let read = r.read_resource("secrets://all", admin).await.unwrap();
    assert_eq!(read.contents[0].text.as_deref(), Some("hunter2"));
}

#[tokio::test]
async fn a_uri_past_the_cap_is_refused_before_any_template_is_tried() {
    let r = registry();
    let long = format!("devices://{}/x", "A".repeat(1_000_000));
    let e = r.read_resource(&long, caller()).await.unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::INVALID_ARGUMENTS);
    assert_eq!(violation_paths(&e), ["/uri"]);
    assert!(e.to_string().contains("8192"), "{e}");
    assert!(!r.can_read(&long, &caller()));
    // At the cap, a URI is read.
    let at_cap = format!("raw://{}", "a".repeat(8192 - "raw://".len()));
    assert!(r.read_resource(&at_cap, caller()).await.is_ok());
}

/// A document.
#[resource("docs://{path*}")]
async fn doc(path: String) -> String {
    format!("doc {path}")
}

/// The documents under `secret/`, for admins: more specific than `docs://{path*}`.
#[resource("docs://secret/{name}", roles("admin"))]
async fn secret_doc(name: String) -> String {
    format!("secret {name}")
}

#[tokio::test]
async fn a_hidden_template_does_not_shadow_a_visible_one() {
    let r = Registry::builder()
        .without_inventory()
        .resource(doc::descriptor())
        .resource(secret_doc::descriptor())
        .policy(RequireRoles)
        .build()
        .unwrap();
    // The caller who may not see the more specific template reads through the one it sees,
    // and is told nothing of the other.
    let read = r.read_resource("docs://secret/a", caller()).await.unwrap();
    assert_eq!(read.contents[0].text.as_deref(), Some("doc secret/a"));
    assert_eq!(read.resource.name, "doc");
    assert!(r.can_read("docs://secret/a", &caller()));
    let admin = caller().roles(["admin"]);
    let read = r
        .read_resource("docs://secret/a", admin.clone())
        .await
        .unwrap();
    assert_eq!(read.contents[0].text.as_deref(), Some("secret a"));
    // A caller who sees neither is told the URI matches nothing.
    let only_secret = Registry::builder()
        .without_inventory()
        .resource(secret_doc::descriptor())
        .policy(RequireRoles)
        .build()
        .unwrap();
    let e = only_secret
        .read_resource("docs://secret/a", caller())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::NOT_FOUND);
    assert!(!only_secret.can_read("docs://secret/a", &caller()));
    assert!(only_secret.can_read("docs://secret/a", &admin));
}

/// Invoices.
#[resource("billing://invoices")]
fn billing_invoices() -> &'static str {
    "none due"
}

/// A letter about a bill.
#[prompt]
fn billing_letter() -> Vec<PromptMessage> {
    vec![PromptMessage::user("Dear customer")]
}

#[tokio::test]
async fn a_filter_names_resources_and_prompts_by_their_own_names() {
    use tool_runtime::layers::policy::ToolFilter;
    use tool_runtime::registry::{DescribeResources, ListPrompts};
    let filtered = |deny: &[&str]| {
        Registry::builder()
            .without_inventory()
            .resource(billing_invoices::descriptor())
            .resource(motd::descriptor())
            .prompt(billing_letter::descriptor())
            .prompt(repeat::descriptor())
            .policy(ToolFilter::new().for_everyone(Vec::<String>::new(), deny.to_vec()))
            .build()
            .unwrap()
    };
    let names = |r: &Registry| {
        let mut names: Vec<String> = r
            .resources(&caller())
            .iter()
            .map(|m| m.name.to_string())
            .chain(r.prompts(&caller()).iter().map(|m| m.name.to_string()))
            .collect();
        names.sort();
        names
    };
    let r = filtered(&["billing_*"]);
    assert_eq!(names(&r), ["motd", "repeat"]);
    // The same lists as requests of the one entry.
    let resources = r.handle(DescribeResources, caller()).await;
    let prompts = r.handle(ListPrompts, caller()).await;
    assert_eq!(
        (resources.len(), resources[0].name.to_string()),
        (1, "motd".to_owned())
    );
    assert_eq!(
        (prompts.len(), prompts[0].name.to_string()),
        (1, "repeat".to_owned())
    );
    let e = r
        .read_resource("billing://invoices", caller())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::NOT_FOUND);
    let e = r
        .get_prompt("billing_letter", json!({}), caller())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::NOT_FOUND);
    // A selector narrows a pattern to one kind.
    assert_eq!(
        names(&filtered(&["resource:billing_*"])),
        ["billing_letter", "motd", "repeat"]
    );
    assert_eq!(
        names(&filtered(&["prompt:billing_*"])),
        ["billing_invoices", "motd", "repeat"]
    );
    assert_eq!(
        names(&filtered(&["tool:billing_*"])),
        ["billing_invoices", "billing_letter", "motd", "repeat"]
    );
}

/// A template whose variable completes and whose list answers, limited to two uses a minute.
#[resource("shelf://{name}", rate = "2/min", list = shelf_list)]
async fn shelf(#[arg(complete = shelf_names)] name: String) -> String {
    name
}

async fn shelf_list() -> Vec<Listed> {
    vec![Listed::new("shelf://top", "top")]
}

async fn shelf_names(c: Completing) -> Vec<String> {
    vec![format!("{}-1", c.value())]
}

#[tokio::test]
async fn completions_and_lists_pass_the_rate_limit_of_their_item_and_are_screened() {
    let r = Registry::builder()
        .without_inventory()
        .resource(shelf::descriptor())
        .build()
        .unwrap();
    let shelf = CompletionRef::Resource("shelf://{name}".into());
    let complete =
        |value: &'static str| r.complete(&shelf, "name", value, BTreeMap::new(), caller());
    // A value that climbs out of its place never reaches the completer.
    let e = complete("../etc").await.unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::INVALID_ARGUMENTS);
    assert_eq!(violation_paths(&e), ["/name"]);
    let e = complete("/etc").await.unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::INVALID_ARGUMENTS);
    // The completion and the list are charged as uses of the template: the third is refused.
    assert_eq!(complete("a").await.unwrap().values, ["a-1"]);
    assert_eq!(r.list_resources(&caller()).await.len(), 1);
    let e = complete("a").await.unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::RATE_LIMITED);
    assert!(r.list_resources(&caller()).await.is_empty());
}

#[tokio::test]
async fn a_traversal_is_refused_before_the_fn_runs_unless_unscreened() {
    let r = registry();
    let e = r
        .read_resource("files://..%2F..%2Fetc", caller())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::INVALID_ARGUMENTS);
    assert_eq!(violation_paths(&e), ["/path"]);
    assert!(!SCREENED_RAN.load(Ordering::SeqCst));
    let read = r
        .read_resource("raw://..%2F..%2Fetc", caller())
        .await
        .unwrap();
    assert_eq!(read.contents[0].text.as_deref(), Some("raw ../../etc"));
}

#[tokio::test]
async fn the_rate_limit_applies_to_reads() {
    let r = registry();
    for _ in 0..2 {
        r.read_resource("limited://x", caller()).await.unwrap();
    }
    let e = r.read_resource("limited://x", caller()).await.unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::RATE_LIMITED);
}

#[tokio::test]
async fn a_prompt_reads_typed_arguments() {
    let r = registry();
    let metas = r.prompts(&caller());
    let meta = metas.iter().find(|p| p.name == "repeat").unwrap();
    let args: Vec<(&str, &str, bool)> = meta
        .arguments
        .iter()
        .map(|a| (&*a.name, &*a.description, a.required))
        .collect();
    assert_eq!(
        args,
        [
            ("word", "The word to repeat", true),
            ("times", "How many times", true),
            ("separator", "A separator", false)
        ]
    );
    let reply = r
        .get_prompt("repeat", json!({"word": "hi", "times": "3"}), caller())
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&reply).unwrap(),
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi hi hi"}}]})
    );

    let e = r
        .get_prompt("repeat", json!({"word": "hi", "times": "three"}), caller())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::INVALID_ARGUMENTS);
    assert_eq!(violation_paths(&e), ["/times"]);
    assert!(e.violations()[0].message.contains("u32"), "{e:?}");

    let e = r
        .get_prompt("repeat", json!({"times": "3"}), caller())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::INVALID_ARGUMENTS);
    assert!(format!("{e:?}").contains("word"), "{e:?}");

    let chat = r
        .get_prompt("chat", json!({"topic": "owls"}), caller())
        .await
        .unwrap();
    assert_eq!(chat.messages.len(), 2);
    assert_eq!(
        metas.iter().find(|p| p.name == "chat").unwrap().title,
        "Chat"
    );
}

#[tokio::test]
async fn completes_prompt_arguments_and_template_variables() {
    let r = registry();
    assert!(r.has_completions());
    let c = r
        .complete(
            &CompletionRef::Prompt("repeat".into()),
            "word",
            "ap",
            BTreeMap::default(),
            caller(),
        )
        .await
        .unwrap();
    assert_eq!(c.values, ["apple", "apricot"]);
    assert!(!c.has_more);

    let c = r
        .complete(
            &CompletionRef::Resource("catalog://{shelf}/{item}".into()),
            "shelf",
            "bo",
            BTreeMap::default(),
            caller(),
        )
        .await
        .unwrap();
    assert_eq!(c.values, ["books"]);

    let c = r
        .complete(
            &CompletionRef::Resource("catalog://{shelf}/{item}".into()),
            "item",
            "",
            [("shelf".to_owned(), "books".to_owned())].into(),
            caller(),
        )
        .await
        .unwrap();
    assert_eq!(c.values.len(), 100);
    assert_eq!(c.values[0], "books-0");
    assert_eq!((c.total, c.has_more), (Some(150), true));

    // A parameter without `complete` offers nothing.
    let c = r
        .complete(
            &CompletionRef::Prompt("repeat".into()),
            "times",
            "",
            BTreeMap::default(),
            caller(),
        )
        .await
        .unwrap();
    assert!(c.values.is_empty());
}

/// One thing.
#[resource("overlap://{a}/x")]
async fn overlap_a(a: String) -> String {
    a
}

/// Another thing, matching the same URIs.
#[resource("overlap://{b}/x")]
async fn overlap_b(b: String) -> String {
    b
}

#[test]
fn templates_that_overlap_alike_do_not_build() {
    let Err(e) = Registry::builder()
        .without_inventory()
        .resource(overlap_a::descriptor())
        .resource(overlap_b::descriptor())
        .build()
    else {
        panic!("overlapping templates built");
    };
    let text = e.to_string();
    assert!(
        text.contains("overlap_a") && text.contains("overlap_b"),
        "{text}"
    );
    assert!(
        text.contains("overlap://{a}/x") && text.contains("overlap://{b}/x"),
        "{text}"
    );
}

#[derive(Default, Clone)]
struct Seen(Arc<Mutex<Vec<String>>>);

impl CallObserver for Seen {
    fn observe<'a>(&'a self, call: CompletedCall<'a>) -> BoxFuture<'a, ()> {
        if let Some(meta) = call.meta {
            self.0.lock().unwrap().push(meta.name.to_string());
        }
        Box::pin(std::future::ready(()))
    }
}

#[tokio::test]
async fn observers_see_reads_and_gets_by_their_pipeline_names() {
    let seen = Seen::default();
    let r = Registry::builder()
        .without_inventory()
        .resource(motd::descriptor())
        .prompt(conversation::descriptor())
        .observer(seen.clone())
        .build()
        .unwrap();
    r.read_resource("motd://today", caller()).await.unwrap();
    r.get_prompt("chat", json!({"topic": "x"}), caller())
        .await
        .unwrap();
    assert_eq!(*seen.0.lock().unwrap(), ["resource:motd", "prompt:chat"]);
}

#[test]
fn the_handles_name_the_items() {
    assert_eq!(device_status::NAME, "device_status");
    assert_eq!(device_status::URI, "devices://{id}/status{?verbose}");
    assert_eq!(conversation::NAME, "chat");
}
