//! Results that are not data but media: text, images, audio and embedded resources, as MCP
//! carries them.

use std::borrow::Cow;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// One block of a tool's result as MCP carries it: text, an image, a sound, or an embedded
/// resource. A tool that returns `Content` or `Vec<Content>` is answered over MCP with these
/// blocks as the result's `content` (and no `outputSchema` or `structuredContent`); the other
/// front ends send the blocks as JSON, in the same shape.
///
/// ```
/// use tool_runtime::{Content, tool};
///
/// /// A red dot, and what it is.
/// #[tool]
/// async fn red_dot() -> Vec<Content> {
///     let png: &[u8] = b"\x89PNG\r\n\x1a\n"; // the image's bytes
///     vec![Content::text("A red dot:"), Content::image(png, "image/png")]
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// The image's bytes, base64-encoded.
        data: String,
        /// Its media type (`image/png`).
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A sound.
    Audio {
        /// The sound's bytes, base64-encoded.
        data: String,
        /// Its media type (`audio/wav`).
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A resource embedded in the result.
    Resource {
        /// The resource.
        resource: EmbeddedResource,
    },
    /// A link to a resource the client may read.
    #[serde(rename = "resource_link")]
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// Its media type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// What it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
}

/// A resource's contents: its URI, media type, and its contents as text or as bytes; what a
/// resource read answers with, and what a result or a prompt message embeds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EmbeddedResource {
    /// Where the resource lives (`file:///…`, `test://…`).
    pub uri: String,
    /// Its media type.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its contents as text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its contents as bytes, base64-encoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image block of these bytes, of media type `mime_type`.
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: base64(bytes.as_ref()),
            mime_type: mime_type.into(),
        }
    }

    /// A sound block of these bytes, of media type `mime_type`.
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: base64(bytes.as_ref()),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded resource whose contents are text.
    pub fn resource_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Content::Resource {
            resource: EmbeddedResource {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                text: Some(text.into()),
                blob: None,
            },
        }
    }

    /// An embedded resource whose contents are these bytes.
    pub fn resource_blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl AsRef<[u8]>,
    ) -> Self {
        Content::Resource {
            resource: EmbeddedResource {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                text: None,
                blob: Some(base64(bytes.as_ref())),
            },
        }
    }

    /// A link to the resource at `uri`, named `name`.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            mime_type: None,
            description: None,
        }
    }

    /// The bytes of an image, a sound or a binary resource, decoded; `None` for text.
    #[must_use]
    pub fn bytes(&self) -> Option<Vec<u8>> {
        let data = match self {
            Content::Image { data, .. } | Content::Audio { data, .. } => data,
            Content::Resource {
                resource:
                    EmbeddedResource {
                        blob: Some(blob), ..
                    },
            } => blob,
            _ => return None,
        };
        base64::engine::general_purpose::STANDARD.decode(data).ok()
    }
}

impl EmbeddedResource {
    /// Text contents.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: None,
            text: Some(text.into()),
            blob: None,
        }
    }

    /// Binary contents, base64-encoded.
    pub fn blob(uri: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: None,
            text: None,
            blob: Some(base64(bytes.as_ref())),
        }
    }

    /// The same contents with media type `mime_type`.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

pub(crate) fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Whether a result of type `T` is content blocks: `Content` or `Vec<Content>`.
pub(crate) fn is_content<T: schemars::JsonSchema + ?Sized>() -> bool {
    use schemars::JsonSchema as _;
    let id = T::schema_id();
    id == Content::schema_id() || id == <Vec<Content>>::schema_id()
}

/// An icon of a resource or prompt, as MCP lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// Its URL (`https:` or `data:`).
    pub src: Cow<'static, str>,
    /// Its media type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<Cow<'static, str>>,
    /// Its sizes (`48x48`, `any`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<Cow<'static, str>>,
}

/// How `#[resource]` and `#[prompt]` write icons: `(src, mime type, sizes)`.
pub(crate) type StaticIcon = (&'static str, Option<&'static str>, &'static [&'static str]);

impl Icon {
    /// The icons a descriptor lists.
    pub(crate) fn all_of(icons: &'static [StaticIcon]) -> Vec<Icon> {
        icons
            .iter()
            .map(|(src, mime, sizes)| Icon {
                src: Cow::Borrowed(src),
                mime_type: mime.map(Cow::Borrowed),
                sizes: sizes.iter().map(|s| Cow::Borrowed(*s)).collect(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_serialize_as_mcp_content_and_bytes_come_back() {
        let image = Content::image([0xff, 0x00], "image/png");
        assert_eq!(
            serde_json::to_value(&image).unwrap(),
            json!({"type": "image", "data": "/wA=", "mimeType": "image/png"})
        );
        assert_eq!(image.bytes(), Some(vec![0xff, 0x00]));
        assert_eq!(
            serde_json::to_value(Content::resource_text("test://r", "text/plain", "hi")).unwrap(),
            json!({"type": "resource", "resource": {"uri": "test://r", "mimeType": "text/plain", "text": "hi"}})
        );
        assert_eq!(Content::text("t").bytes(), None);
    }

    #[test]
    fn content_results_are_known_by_type() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Content {
            text: String,
        }
        assert!(is_content::<super::Content>());
        assert!(is_content::<Vec<super::Content>>());
        assert!(!is_content::<String>());
        assert!(!is_content::<Vec<String>>());
        assert!(!is_content::<Content>(), "a user type of the same name");
    }
}
