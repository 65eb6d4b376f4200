//! A downstream crate's tools are found through `inventory`, with no list anywhere, and are
//! callable with the crate's own state.

use serde_json::json;
use tool_runtime::registry::BuildProblem;
use tool_runtime::{Caller, Registry, Source};

#[tokio::test]
async fn downstream_tools_are_registered_and_callable() {
    let registry = Registry::builder()
        .state(downstream::Inbox::default())
        .build()
        .unwrap();
    let names = registry.names();
    assert!(
        names.iter().any(|n| n == "ticket_open") && names.iter().any(|n| n == "ticket_list"),
        "{names:?}"
    );

    let opened = registry
        .call(
            "ticket_open",
            json!({"title": "printer on fire", "priority": "very-high", "labels": ["hw"],
                   "address": {"street": "Main 1", "zip-code": "12345"},
                   "component": {"name": "printer", "parts": [{"name": "fuser"}]}}),
            Caller::new(Source::Internal),
        )
        .await;
    let t = opened
        .result()
        .unwrap_or_else(|| panic!("{}", opened.to_json()));
    assert_eq!(t["id"], 1);
    assert_eq!(t["priority"], "very-high");
    assert_eq!(t["address"]["zip-code"], "12345");
    assert_eq!(t["metadata"], json!({}));
    assert_eq!(t["component"]["parts"][0]["name"], "fuser");

    let bad = registry
        .call(
            "ticket_open",
            json!({"title": "x", "priority": "urgent"}),
            Caller::new(Source::Internal),
        )
        .await;
    let paths: Vec<String> = bad
        .error()
        .unwrap()
        .violations()
        .iter()
        .map(|v| v.path.clone())
        .collect();
    assert!(
        paths.contains(&"/title".into()) && paths.contains(&"/priority".into()),
        "{paths:?}"
    );

    let listed = registry
        .call(
            "ticket_list",
            json!({"priority": "very-high"}),
            Caller::new(Source::Internal),
        )
        .await;
    assert_eq!(listed.result().unwrap().as_array().unwrap().len(), 1);
    let listed = registry
        .call(
            "ticket_list",
            json!({"priority": "low"}),
            Caller::new(Source::Internal),
        )
        .await;
    assert_eq!(listed.result(), Some(&json!([])));
}

#[test]
fn downstream_state_must_be_registered() {
    let err = Registry::builder().build().unwrap_err();
    assert!(err.problems.iter().any(|p| matches!(
        p,
        BuildProblem::MissingState { items, type_name, .. }
            if items.iter().any(|i| i == "tool `ticket_open`") && type_name.ends_with("Inbox")
    )));
}

#[test]
fn explicit_registration_of_an_inventory_tool_is_not_a_duplicate() {
    let registry = Registry::builder()
        .tool(downstream::ticket_open::descriptor())
        .state(downstream::Inbox::default())
        .build()
        .unwrap();
    let names = registry.names();
    assert_eq!(
        names.iter().filter(|n| *n == "ticket_open").count(),
        1,
        "{names:?}"
    );
}
