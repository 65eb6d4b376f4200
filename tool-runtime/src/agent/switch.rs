//! `switch_model`, the tool the agent offers its model when it has several tiers: an ordinary
//! tool, in a registry of the agent's own (so it is in no listing of the application's), lowered
//! for each provider by `llm` like every tool, its arguments validated by the pipeline against
//! its schema (the tier an enum of the tier names). The run moves to the tier it names.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::SWITCH_MODEL;
use super::model::Tiers;
use crate::registry::Registry;
use crate::tool::context::CallContext;
use crate::tool::definition::{Tool, ToolMeta};
use crate::tool::error::ToolError;

/// Where a call of `switch_model` leaves the tier it chose, for the run to move to (given to
/// each call as an extension of its caller).
#[derive(Debug, Clone, Default)]
pub(super) struct Chosen(Arc<Mutex<Option<String>>>);

impl Chosen {
    /// The tier chosen, taken.
    pub(super) fn take(&self) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }
}

struct SwitchModel {
    /// Each tier's name and `provider:model`.
    tiers: Vec<(String, String)>,
}

impl Tool for SwitchModel {
    fn meta(&self) -> ToolMeta {
        let names: Vec<&str> = self.tiers.iter().map(|(name, _)| name.as_str()).collect();
        ToolMeta::new(
            SWITCH_MODEL,
            format!(
                "Move the rest of this task to another model tier ({}). Use a stronger tier for hard steps and a faster one for simple steps.",
                names.join(", ")
            ),
        )
    }

    fn input_schema(&self) -> Value {
        let names: Vec<&str> = self.tiers.iter().map(|(name, _)| name.as_str()).collect();
        json!({
            "type": "object",
            "properties": {
                "tier": {"type": "string", "enum": names, "description": "The tier to switch to"}
            },
            "required": ["tier"],
            "additionalProperties": false,
        })
    }

    fn output_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "tier": {"type": "string"},
                "model": {"type": "string"},
                "note": {"type": "string"},
            },
            "required": ["tier", "model", "note"],
        })
    }

    fn call(&self, args: Value, ctx: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move {
            // Validated: the tier is one of the names.
            let tier = args["tier"].as_str().unwrap_or_default().to_owned();
            let model = self
                .tiers
                .iter()
                .find(|(name, _)| *name == tier)
                .map(|(_, model)| model.clone())
                .ok_or_else(|| ToolError::internal(format!("no tier `{tier}`")))?;
            if let Some(chosen) = ctx.extension::<Chosen>() {
                *chosen
                    .0
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(tier.clone());
            }
            Ok(json!({"tier": tier, "model": model, "note": "the next turn runs on this model"}))
        })
    }
}

/// A registry holding `switch_model` for `tiers`; `None` with fewer than two tiers, when there
/// is nothing to switch to.
pub(super) fn registry(tiers: &Tiers) -> Option<Registry> {
    if tiers.models.len() < 2 {
        return None;
    }
    let tiers = tiers
        .models
        .iter()
        .map(|(name, model)| (name.clone(), model.to_string()))
        .collect();
    let registry = Registry::builder()
        .without_inventory()
        .tool(SwitchModel { tiers })
        .build()
        .expect("`switch_model` is a valid tool");
    Some(registry)
}
