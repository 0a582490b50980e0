//! `--sitemaps`: the allowed pages of the sites' sitemaps, as seeds.

use robots_tower::RobotsError;

use super::pages::{Seen, page_hash};
use super::queued::{Backlog, NotQueued};

/// `--sitemaps`: the allowed pages the sites' sitemaps list, as seeds.
pub(super) struct SitemapSeeds {
    pub(super) hooks: robots_tower::RobotsHooks<reqwest::Client>,
    pub(super) sites: Vec<robots_fetch::Origin>,
    pub(super) since: Option<robots_tower::robots_sitemap::LastMod>,
    pub(super) max: usize,
}

impl SitemapSeeds {
    /// Expands the sitemaps into the frontier, at most `max` pages; what cannot be expanded is
    /// said on stderr (the crawl's lines are its pages'), and counted: how many sitemaps failed.
    /// A page the address rule refuses gets its line.
    pub(super) async fn seed(
        self,
        frontier: &robots_tower::Frontier,
        not_queued: &Backlog,
    ) -> usize {
        let mut failed = 0;
        use robots_tower::SitemapEvent;
        let options = robots_tower::SitemapOptions::default().max_urls(usize::MAX);
        let mut expansion = self.hooks.sitemaps_of(self.sites, options);
        let mut seeded = 0;
        // Each page once, however often and in whatever spelling it is listed: its URL is
        // normalised (scheme and host in lower case, default port and dot segments gone) when
        // parsed, and its fragment is dropped; kept as a 64-bit hash, the last
        // `SEEN_REMEMBERED` of them (bounded however much a hostile site lists).
        let mut listed = Seen::default();
        while seeded < self.max
            && let Some(event) = expansion.next().await
        {
            match event {
                SitemapEvent::Page(page) => {
                    let recent = match (&self.since, &page.lastmod) {
                        (None, _) => true,
                        (Some(since), Some(lastmod)) => {
                            lastmod.unix_seconds() >= since.unix_seconds()
                        }
                        (Some(_), None) => false,
                    };
                    if let Err(error @ RobotsError::AddressRefused { .. }) = page.verdict {
                        // Never fetched, and said: a server tried to lead the crawl inside.
                        not_queued.send(NotQueued::Address(Box::new((page.url, error))));
                        continue;
                    }
                    // A disallowed page is never queued: the sitemap listed it, robots.txt
                    // forbids it.
                    if !recent || !page.allowed() {
                        continue;
                    }
                    let mut url = page.url;
                    url.set_fragment(None);
                    if !listed.first_time(page_hash(&url)) {
                        continue;
                    }
                    seeded += 1;
                    if let Err(error) = frontier.push(url).await {
                        not_queued.send(NotQueued::Refused(Box::new(error)));
                    }
                }
                SitemapEvent::Failed { sitemap, error } => {
                    // A sitemap robots.txt forbids was not to be read: the crawler did its
                    // part. Any other failure left pages out.
                    let forbidden = matches!(
                        &error,
                        robots_tower::SitemapFailure::Refused(
                            RobotsError::Disallowed { .. } | RobotsError::DisallowedFor { .. }
                        )
                    );
                    if !forbidden {
                        failed += 1;
                    }
                    crate::say(format_args!("sitemap {sitemap}: {error}"));
                }
                SitemapEvent::Limit { sitemap, limit } => {
                    crate::say(format_args!("sitemap {sitemap}: {limit}"));
                }
                SitemapEvent::NotAbsolute { origin, value } => crate::say(format_args!(
                    "the robots.txt of {origin} names `{value}`, not an absolute URL: not fetched"
                )),
                _ => {}
            }
        }
        failed
    }
}
