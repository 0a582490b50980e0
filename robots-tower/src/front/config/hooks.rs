//! How the hooks are built.

use robots_fetch::FetchClient;

#[cfg(feature = "reqwest")]
use super::ForHooks;
use super::RobotsConfig;
use crate::front::hooks::RobotsHooks;

impl<Target> RobotsConfig<Target> {
    /// Hooks with this configuration that fetch robots.txt with `client` (a `reqwest::Client`
    /// with redirects off, or a tower service in [`robots_fetch::ServiceClient`]).
    pub fn build_hooks_with<C: FetchClient>(self, client: C) -> RobotsHooks<C> {
        RobotsHooks::from_gate(self.gate(), client)
    }
}

#[cfg(feature = "reqwest")]
impl RobotsConfig<ForHooks> {
    /// The hooks, fetching robots.txt with the client given to `robots_client`
    /// or else one of their own (no redirect following, the configured timeouts).
    pub fn build(self) -> Result<RobotsHooks<reqwest::Client>, reqwest::Error> {
        let gate = self.gate();
        let client = self.robots_reqwest_client(&gate)?;
        Ok(RobotsHooks::from_gate(gate, client))
    }

    /// Fetch robots.txt with this client (the framework's own, redirects off), as the
    /// middleware's builder does.
    pub fn robots_client(mut self, client: reqwest::Client) -> Self {
        self.robots_client = Some(client);
        self
    }
}
