//! The address rule (spec section 8) at the gate: a URL a server handed on, judged at admission
//! by its text and the address its name resolves to (an early refusal), and the refusal where
//! the connection is made ([`robots_fetch::ConnectRefused`]), said the same way.

use super::Gate;
use crate::engine::overrides::Overrides;
use crate::error::RobotsError;

/// A refusal by the address rule, logged and counted (one place for both ways it is judged).
fn address_refused(
    url: String,
    from: &url::Url,
    address: Option<std::net::IpAddr>,
    rule: String,
) -> RobotsError {
    tracing::info!(%url, %from, ?address, %rule, "a URL a server handed on is refused by the address rule");
    crate::telemetry::decided("address-refused");
    RobotsError::AddressRefused {
        url,
        from: Some(from.to_string()),
        address,
        rule,
    }
}

/// The address `to` names by its text (an address literal), else the first one its name
/// resolved to that is internal (from the resolver's cache), for a refusal to name.
pub(super) fn internal_address_of(
    to: &url::Url,
    resolver: &robots_fetch::Resolver,
) -> Option<std::net::IpAddr> {
    match to.host()? {
        url::Host::Ipv4(v4) => Some(v4.into()),
        url::Host::Ipv6(v6) => Some(v6.into()),
        url::Host::Domain(name) => resolver
            .cached(name, to.port_or_known_default()?)
            .filter(|addr| robots_fetch::is_internal_ip(*addr)),
    }
}

/// The address rule's refusal where the connection is made ([`robots_fetch::ConnectRefused`]
/// inside the error a request failed with), as the front ends report it: `None` when the request
/// failed otherwise.
pub(crate) fn refused_at_connection(
    url: &impl std::fmt::Display,
    error: &(dyn std::error::Error + 'static),
) -> Option<RobotsError> {
    let refused = robots_fetch::ConnectRefused::find(error)?;
    crate::telemetry::decided("address-refused");
    Some(RobotsError::AddressRefused {
        url: url.to_string(),
        from: None,
        address: Some(refused.address),
        rule: format!("the connection: {refused}"),
    })
}

impl Gate {
    /// The address rule (spec section 8), first of everything the gate applies: a URL a server
    /// handed on ([`crate::HandedBy`]) that the rule refuses (by default, from a public host
    /// into an internal address, judged on the address its name resolves to through the
    /// resolver the connection uses) is refused. A URL the caller gave passes.
    pub(crate) async fn check_handed(
        &self,
        url: &impl Fn() -> String,
        overrides: &Overrides,
    ) -> Result<(), RobotsError> {
        let Some(handed) = &overrides.handed_by else {
            return Ok(());
        };
        let text = url();
        // A string that is no URL never connects (its origin was refused before this).
        let Ok(to) = url::Url::parse(&text) else {
            return Ok(());
        };
        let from = handed.url();
        if self
            .handed_rule
            .allows_resolved(from, &to, self.resolver())
            .await
        {
            return Ok(());
        }
        let rule = self.handed_rule.described_for(&to);
        let address = internal_address_of(&to, self.resolver());
        Err(address_refused(text, from, address, rule))
    }

    /// The address rule judged on the text of `to` alone (no lookup): a refusal when `from`
    /// handed on a URL whose host is itself an internal address. For URLs that go no further
    /// (a sitemap's entry off its scope), so that one refused for its address is reported as
    /// such, without a name lookup for each.
    pub(crate) fn refuses_by_text(&self, from: &url::Url, to: &url::Url) -> Option<RobotsError> {
        // A page of a host the caller's word made internal-allowed hands on the caller's URLs:
        // their names may connect to internal addresses too.
        let trusted = matches!(from.host(), Some(url::Host::Domain(name)) if self.resolver().is_internal_allowed(name));
        let allowed = if trusted {
            if let Some(url::Host::Domain(to_name)) = to.host() {
                self.resolver().allow_internal(to_name);
            }
            self.handed_rule.allows_trusted(from, to)
        } else {
            self.handed_rule.allows(from, to)
        };
        if allowed {
            return None;
        }
        Some(address_refused(
            to.to_string(),
            from,
            internal_address_of(to, self.resolver()),
            self.handed_rule.to_string(),
        ))
    }
}
