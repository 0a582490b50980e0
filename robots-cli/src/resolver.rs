//! The resolver a command connects with, from its flags: `--dns-cache`, `--resolve` and
//! `--allow-internal` mean the same in `crawl` and `sitemaps --expand`.

use std::time::Duration;

use robots_tower::Resolver;

use crate::CliError;

/// A resolver keeping addresses `dns_cache` seconds, with the `--resolve` overrides and the
/// names `--allow-internal` made internal-allowed.
pub(crate) fn from_flags(
    dns_cache: f64,
    resolve: &[String],
    allow_internal: &[String],
) -> Result<Resolver, CliError> {
    let mut resolver = Resolver::with_ttl(Duration::from_secs_f64(dns_cache));
    for text in resolve {
        resolver = resolver
            .with_override_text(text)
            .map_err(|e| CliError::Usage(format!("--resolve: {e}")))?;
    }
    for host in allow_internal {
        resolver = resolver.with_internal_allowed(host);
    }
    Ok(resolver)
}
