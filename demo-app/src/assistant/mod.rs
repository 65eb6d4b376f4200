//! The tools a personal assistant ships with, on the guards of `tool_runtime::layers::guard`: web pages
//! and search ([`web`]), allow-listed host commands ([`host`]), channels that deliver messages
//! ([`channels`]) and scheduled agent runs ([`scheduler`](mod@scheduler)). Their state comes from
//! `demo-app.toml` through [`install`], never from globals.

pub mod channels;
pub mod host;
mod html;
pub mod scheduler;
pub mod web;

use futures_util::future::BoxFuture;
use tool_runtime::app::Background;
use tool_runtime::layers::guard::CommandPolicy;
use tool_runtime::registry::RegistryBuilder;

use crate::config::Config;
use crate::store::Stores;

/// Adds the assistant's tools to `builder`.
#[must_use]
pub fn tools(builder: RegistryBuilder) -> RegistryBuilder {
    builder
        .tool(web::web_fetch::descriptor())
        .tool(web::web_search::descriptor())
        .tool(host::host_execute::descriptor())
        .tool(scheduler::schedule_task::descriptor())
        .tool(scheduler::list_tasks::descriptor())
        .tool(scheduler::cancel_task::descriptor())
        .tool(channels::channel_add::descriptor())
        .tool(channels::channel_list::descriptor())
        .tool(channels::channel_remove::descriptor())
}

/// Adds the assistant tools' state, built from `config`, to `builder`: the web client, the host
/// bridges, the channels and the tasks in `stores`. `env` reads the Brave key.
#[must_use]
pub fn install(
    builder: RegistryBuilder,
    config: &Config,
    stores: &Stores,
    env: impl Fn(&str) -> Option<String>,
) -> RegistryBuilder {
    let web = web::Web::from_config(&config.web, env);
    let host = host::Host::from_config(&config.host);
    let channels = channels(config, stores, &web);
    builder
        .state(web)
        .state(host)
        .state(channels)
        .state(stores.tasks())
}

fn channels(config: &Config, stores: &Stores, web: &web::Web) -> channels::Channels {
    channels::Channels::new(
        stores.channels.clone(),
        CommandPolicy::new(config.channels.allowed_commands.clone()),
        web.clone(),
    )
}

/// `serve`'s scheduler over the tasks in `stores`, when `[scheduler]` enables it and
/// the application has an agent to run tasks with; `None` otherwise (said in the log).
pub fn scheduler(
    config: &Config,
    stores: &Stores,
    background: Background,
    env: impl Fn(&str) -> Option<String>,
) -> Option<BoxFuture<'static, ()>> {
    if !config.scheduler.enabled {
        return None;
    }
    let Some(agent) = background.agent else {
        tracing::warn!(target: "demo_app::scheduler", "scheduled tasks do not run: no agent is configured");
        return None;
    };
    let web = web::Web::from_config(&config.web, env);
    let runner = scheduler::Scheduler::new(
        stores.tasks(),
        agent,
        channels(config, stores, &web),
        config.scheduler.tick,
    );
    Some(Box::pin(runner.run(background.shutdown)))
}
