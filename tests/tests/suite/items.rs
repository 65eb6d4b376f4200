//! The resources and prompts the front ends' tests serve, written by hand as a mounted server's
//! would be: text, a blob, a template that lists and completes, one for admins only, one that
//! answers two contents, bytes of no particular type, one limited to a read a minute, and a prompt with a typed argument.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tool_runtime::prompt::{Prompt, PromptArgument, PromptMessage, PromptMeta, PromptReply};
use tool_runtime::registry::RegistryBuilder;
use tool_runtime::resource::{CacheScope, Listed, Resource, ResourceBody, ResourceMeta};
use tool_runtime::tool::{Completing, EmbeddedResource, Violation};
use tool_runtime::{CallContext, Registry, ToolError};

/// The bytes `images://logo` answers: a PNG of one red pixel.
pub const LOGO: &[u8] = b"\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90\x77\x53\xde\x00\x00\x00\x0c\x49\x44\x41\x54\x78\x9c\x63\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef\x00\x00\x00\x00\x49\x45\x4e\x44\xae\x42\x60\x82";

/// [`LOGO`] in base64, as JSON carries it.
pub const LOGO_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// The bytes `archive://data.bin` answers.
pub const DATA: &[u8] = &[0, 1, 2, 3, 255];

/// The text `docs://readme` answers.
pub const README: &str = "# Readme\n\nÜber alles: UTF-8.\n";

/// `docs://readme`: Markdown, cached for a minute by anyone.
pub struct Readme;

impl Resource for Readme {
    fn meta(&self) -> ResourceMeta {
        let mut meta = ResourceMeta::new("readme", "docs://readme", "The project's readme.");
        meta.mime_type = Some("text/markdown".into());
        meta.ttl = Some(Duration::from_secs(60));
        meta.scope = Some(CacheScope::Public);
        meta
    }

    fn read(
        &self,
        _: String,
        _: BTreeMap<String, String>,
        _: CallContext,
    ) -> BoxFuture<'_, Result<ResourceBody, ToolError>> {
        Box::pin(async { Ok(ResourceBody::Text(README.to_owned())) })
    }
}

/// `images://logo`: a PNG.
pub struct Logo;

impl Resource for Logo {
    fn meta(&self) -> ResourceMeta {
        let mut meta = ResourceMeta::new("logo", "images://logo", "The logo.");
        meta.mime_type = Some("image/png".into());
        meta
    }

    fn read(
        &self,
        _: String,
        _: BTreeMap<String, String>,
        _: CallContext,
    ) -> BoxFuture<'_, Result<ResourceBody, ToolError>> {
        Box::pin(async { Ok(ResourceBody::Blob(LOGO.to_vec())) })
    }
}

/// `archive://data.bin`: bytes of no particular type.
pub struct Archive;

impl Resource for Archive {
    fn meta(&self) -> ResourceMeta {
        ResourceMeta::new("archive", "archive://data.bin", "Some bytes.")
    }

    fn read(
        &self,
        _: String,
        _: BTreeMap<String, String>,
        _: CallContext,
    ) -> BoxFuture<'_, Result<ResourceBody, ToolError>> {
        Box::pin(async { Ok(ResourceBody::Blob(DATA.to_vec())) })
    }
}

/// `files://{path*}`: a file's text; lists two notes, completes paths, counts its reads.
pub struct Files {
    /// How many times a read reached the fn.
    pub reads: Arc<AtomicUsize>,
}

impl Resource for Files {
    fn meta(&self) -> ResourceMeta {
        let mut meta = ResourceMeta::new("files", "files://{path*}", "A file under the root.");
        meta.mime_type = Some("text/plain".into());
        meta.variables[0].completes = true;
        meta
    }

    fn read(
        &self,
        _: String,
        values: BTreeMap<String, String>,
        _: CallContext,
    ) -> BoxFuture<'_, Result<ResourceBody, ToolError>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            Ok(ResourceBody::Text(format!(
                "contents of {}",
                values["path"]
            )))
        })
    }

    fn list(&self, _: CallContext) -> Option<BoxFuture<'_, Result<Vec<Listed>, ToolError>>> {
        Some(Box::pin(async {
            Ok(vec![
                Listed::new("files://notes/a.txt", "a.txt").description("The first note."),
                Listed::new("files://notes/b.txt", "b.txt"),
            ])
        }))
    }

    fn complete(
        &self,
        completing: Completing,
    ) -> Option<BoxFuture<'static, Result<Vec<String>, ToolError>>> {
        let typed = completing.value().to_owned();
        Some(Box::pin(async move {
            Ok(["notes/a.txt", "notes/b.txt", "todo.txt"]
                .into_iter()
                .filter(|p| p.starts_with(&typed))
                .map(str::to_owned)
                .collect())
        }))
    }
}

/// `secrets://key`: for callers with the `admin` role only, marked public (which its roles
/// overrule).
pub struct SecretKey;

impl Resource for SecretKey {
    fn meta(&self) -> ResourceMeta {
        let mut meta = ResourceMeta::new("secret_key", "secrets://key", "The key.");
        meta.options.roles = vec!["admin".into()];
        // Says shared caches may keep it: the roles that guard it overrule that.
        meta.scope = Some(CacheScope::Public);
        meta.ttl = Some(Duration::from_secs(60));
        meta
    }

    fn read(
        &self,
        _: String,
        _: BTreeMap<String, String>,
        _: CallContext,
    ) -> BoxFuture<'_, Result<ResourceBody, ToolError>> {
        Box::pin(async { Ok(ResourceBody::Text("s3cret".to_owned())) })
    }
}

/// `pair://both`: two contents in one read.
pub struct Both;

impl Resource for Both {
    fn meta(&self) -> ResourceMeta {
        ResourceMeta::new("both", "pair://both", "Two parts.")
    }

    fn read(
        &self,
        _: String,
        _: BTreeMap<String, String>,
        _: CallContext,
    ) -> BoxFuture<'_, Result<ResourceBody, ToolError>> {
        Box::pin(async {
            Ok(ResourceBody::Contents(vec![
                EmbeddedResource::text("pair://both/1", "one"),
                EmbeddedResource::text("pair://both/2", "two"),
            ]))
        })
    }
}

/// `limited://once`: one read a minute per caller.
pub struct Once;

impl Resource for Once {
    fn meta(&self) -> ResourceMeta {
        let mut meta = ResourceMeta::new("once", "limited://once", "Read it once a minute.");
        meta.options.rate = tool_runtime::tool::Rate::parse("1/min");
        meta
    }

    fn read(
        &self,
        _: String,
        _: BTreeMap<String, String>,
        _: CallContext,
    ) -> BoxFuture<'_, Result<ResourceBody, ToolError>> {
        Box::pin(async { Ok(ResourceBody::Text("once".to_owned())) })
    }
}

/// The prompt `review`: `code` (required), `strictness` (a number from 1 to 3), `language`
/// (completed).
pub struct Review;

impl Prompt for Review {
    fn meta(&self) -> PromptMeta {
        let mut meta = PromptMeta::new("review", "Ask for a code review.");
        let argument =
            |name: &'static str, description: &'static str, required, completes| PromptArgument {
                name: name.into(),
                description: description.into(),
                required,
                completes,
            };
        meta.arguments = vec![
            argument("code", "The code to review", true, false),
            argument("strictness", "From 1 (lenient) to 3 (strict)", false, false),
            argument("language", "Its language", false, true),
        ];
        meta
    }

    fn get(
        &self,
        args: BTreeMap<String, String>,
        _: CallContext,
    ) -> BoxFuture<'_, Result<PromptReply, ToolError>> {
        Box::pin(async move {
            let strictness = match args.get("strictness").map(|s| s.parse::<u8>()) {
                None => 2,
                Some(Ok(n)) if (1..=3).contains(&n) => n,
                Some(_) => {
                    return Err(ToolError::invalid_arguments(vec![Violation::new(
                        "/strictness",
                        "type",
                        "`strictness` is a number from 1 to 3",
                    )]));
                }
            };
            let language = args.get("language").map_or("code", String::as_str);
            Ok(PromptReply {
                description: Some(format!("A review at strictness {strictness}")),
                messages: vec![
                    PromptMessage::user(format!(
                        "Review this {language} at strictness {strictness}:\n{}",
                        args["code"]
                    )),
                    PromptMessage::assistant("I will."),
                ],
            })
        })
    }

    fn complete(
        &self,
        completing: Completing,
    ) -> Option<BoxFuture<'static, Result<Vec<String>, ToolError>>> {
        let typed = completing.value().to_owned();
        Some(Box::pin(async move {
            Ok(["python", "perl", "rust"]
                .into_iter()
                .filter(|l| l.starts_with(&typed))
                .map(str::to_owned)
                .collect())
        }))
    }
}

/// A registry of these resources and this prompt, with roles enforced; `reads` counts the
/// reads that reached `files://{path*}`.
pub fn registry(reads: &Arc<AtomicUsize>) -> RegistryBuilder {
    Registry::builder()
        .without_inventory()
        .resource(Readme)
        .resource(Logo)
        .resource(Archive)
        .resource(Files {
            reads: Arc::clone(reads),
        })
        .resource(SecretKey)
        .resource(Both)
        .resource(Once)
        .prompt(Review)
        .policy(tool_runtime::layers::policy::RequireRoles)
}
