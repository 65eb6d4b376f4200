//! `[tasks]`: how long calls run as tasks are kept, how often their callers should ask, and the
//! lease a replica holds on the tasks it runs.

use std::time::Duration;

use serde::Deserialize;
use tool_runtime::registry::RegistryBuilder;

use super::de;

/// `[tasks]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TasksConfig {
    /// How long a task is kept after its creation (default one hour).
    #[serde(deserialize_with = "de::duration")]
    pub ttl: Duration,
    /// How often a task's caller is told to ask for it (default every 500 ms).
    #[serde(deserialize_with = "de::duration")]
    pub poll_interval: Duration,
    /// How long a replica answers for a task it runs without renewing its lease (default 15
    /// s): a task whose replica died is `failed`, its outcome unknown, once this has passed.
    #[serde(deserialize_with = "de::duration")]
    pub lease: Duration,
}

impl Default for TasksConfig {
    fn default() -> Self {
        Self {
            ttl: Duration::from_secs(3600),
            poll_interval: Duration::from_millis(500),
            lease: Duration::from_secs(15),
        }
    }
}

impl TasksConfig {
    /// `builder` keeping its tasks so.
    #[must_use]
    pub fn apply(&self, builder: RegistryBuilder) -> RegistryBuilder {
        builder
            .task_lifetime(self.ttl, self.poll_interval)
            .task_lease(self.lease)
    }
}
