//! The polite client, one URL fetched through it, and the links of a page.

use std::collections::HashSet;
use std::time::Duration;

use robots_tower::{DecidingRule, RobotsError, RobotsInfo, RobotsMiddleware, Visit};
use url::Url;

use crate::CliError;

use super::CrawlArgs;
use super::report::{Done, outcome_of, refusal};

pub(super) fn client(
    args: &CrawlArgs,
) -> Result<(reqwest_middleware::ClientWithMiddleware, RobotsMiddleware), CliError> {
    let seconds = Duration::from_secs_f64;
    let resolver =
        crate::resolver::from_flags(args.dns_cache, &args.resolve, &args.allow_internal)?;
    let crawler = args.crawler.crawler(None)?;
    let mut config = RobotsMiddleware::builder(&crawler.user_agent)
        .politeness_key(args.politeness_key)
        .resolver(resolver)
        .min_delay(seconds(args.min_delay))
        .max_delay(seconds(args.max_delay))
        .overlong_crawl_delay(args.overlong_crawl_delay)
        .backoff(seconds(args.backoff_base), seconds(args.backoff_max))
        .max_retry_after(seconds(args.max_retry_after))
        .retries(args.retries)
        .delay_factor(args.delay_factor)
        .concurrency(args.concurrency as usize)
        .fetch_timeout(seconds(args.timeout))
        .cache_config(robots_fetch::CacheConfig {
            min_ttl: seconds(args.robots_min_ttl),
            ..robots_fetch::CacheConfig::default()
        });
    config = config.tokens(crawler.tokens);
    if let Some(path) = &args.signing_key {
        // (The key's own message names the file and says why, never the key.)
        let key = robots_fetch::SigningKey::from_file(path)
            .map_err(|e| CliError::Usage(format!("--signing-key: {e}")))?;
        let mut signer =
            robots_fetch::RequestSigner::new(key).validity(seconds(args.signature_validity));
        if let Some(agent) = &args.signature_agent {
            signer = signer
                .signature_agent(agent.clone())
                .map_err(|e| CliError::Usage(format!("--signature-agent: {e}")))?;
        }
        config = config.signer(signer);
    }
    if let Some(url) = &args.redis {
        let fleet =
            robots_tower::RedisFleet::new(url).map_err(|e| CliError::Usage(e.to_string()))?;
        config = config
            .fleet(&fleet)
            .fleet_size(args.fleet_size)
            .fleet_outage_grace(seconds(args.fleet_outage_grace))
            // A request cannot outlive --timeout, so a place held longer belongs to a process
            // that died: it is freed then.
            .fleet_lease(seconds(args.timeout) + Duration::from_secs(2));
    }
    let middleware = config
        .page_timeout(seconds(args.timeout))
        .build()
        .map_err(|e| CliError::Usage(format!("cannot set up HTTP: {e}")))?;
    // Pages connect through the resolver the middleware groups and judges hops by, with its
    // bounded idle connections. (A site with nothing more queued gets its connection closed
    // after its page: see `fetch`.)
    let client = middleware
        .client()
        .map_err(|e| CliError::Usage(format!("cannot set up HTTP: {e}")))?;
    Ok((client, middleware))
}

/// Whether a job's connection is worth keeping open after its request: its site has more
/// queued, and few enough sites are under way that the connections kept take little memory
/// (each holds its buffers, some 14 KB). A broad crawl meets most sites once, or comes back
/// to each only after many others.
pub(super) fn keep_alive(job: &robots_tower::Job, frontier: &robots_tower::Frontier) -> bool {
    job.queued_behind() > 0 && frontier.groups() <= KEPT_ALIVE
}

/// The most sites under way for which connections are kept open (about 4 MB of them).
const KEPT_ALIVE: usize = 256;

/// Fetches a frontier job's URL (given as `url`, the text of its line) and reads its body to
/// the end: its line's result, and the visit for the crawl loop (with `follow`, the page's
/// same-origin links). The caller holds the job, and with it its group's place, until then.
pub(super) async fn fetch(
    client: &reqwest_middleware::ClientWithMiddleware,
    url: String,
    job: &robots_tower::Job,
    follow: bool,
    keep_alive: bool,
) -> (Done, Visit) {
    let outcome = |outcome, status, rule: Option<&DecidingRule>, waited: Duration, error| {
        outcome_of(url.clone(), outcome, status, rule, waited, error)
    };
    let done = |outcome| Done {
        outcome,
        not_a_url: false,
        at: None,
    };
    let mut request = client.get(job.url().clone());
    if !keep_alive {
        // (The tool's client speaks HTTP/1.1 only: reqwest without its `http2` feature.)
        request = request.header(http::header::CONNECTION, "close");
    }
    match request.send().await {
        Ok(response) => {
            let status = response.status().as_u16();
            let info = response.extensions().get::<RobotsInfo>().cloned();
            let final_url = response.url().clone();
            let html = response
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|t| t.to_ascii_lowercase().contains("html"));
            let nofollow = info.as_ref().is_some_and(|i| i.directives().nofollow);
            let wants_links = follow && html && !nofollow && (200..300).contains(&status);
            // Its turn in the frontier (how long its group kept it), then any wait the
            // middleware added.
            let waited = job.waited() + info.as_ref().map_or(Duration::ZERO, |i| i.waited());
            let rule = info.as_ref().and_then(|i| i.rule());
            // Every body is read to its end (a page is fetched only when it all came); only
            // the first 2 MB are kept, and only to find links.
            let keep = if wants_links { LINKS_READ_FROM } else { 0 };
            match read_body(response, keep).await {
                Ok(body) => {
                    let links = if wants_links {
                        same_origin_links(&final_url, &body)
                    } else {
                        Vec::new()
                    };
                    let fetched = outcome("fetched", Some(status), rule, waited, None);
                    (done(fetched), Visit::Fetched(links))
                }
                Err(broke) => {
                    let error = Some(broke.to_string());
                    let broke = outcome("error", Some(status), rule, waited, error);
                    (done(broke), Visit::Failed)
                }
            }
        }
        Err(error) => {
            let robots = match &error {
                reqwest_middleware::Error::Middleware(e) => e.downcast_ref::<RobotsError>(),
                reqwest_middleware::Error::Reqwest(_) => None,
            };
            match robots {
                Some(robots) => (
                    done(refusal(url.clone(), robots, error.to_string())),
                    Visit::Refused(robots.clone()),
                ),
                None => (
                    done(outcome(
                        "error",
                        None,
                        None,
                        Duration::ZERO,
                        Some(error.to_string()),
                    )),
                    Visit::Failed,
                ),
            }
        }
    }
}

/// How many pages `crawl` remembers to queue each once (sitemap pages; with --follow, the
/// seeds and links): a hash in a set and in a queue, about 40 MB at most.
pub(super) const SEEN_REMEMBERED: usize = 1 << 20;

/// Pages seen, by hash, the last `SEEN_REMEMBERED` of them.
#[derive(Default)]
pub(super) struct Seen {
    pub(super) seen: HashSet<u64>,
    pub(super) order: std::collections::VecDeque<u64>,
}

impl Seen {
    /// Whether `hash` was not among the pages remembered (it is from now on).
    pub(super) fn first_time(&mut self, hash: u64) -> bool {
        if !self.seen.insert(hash) {
            return false;
        }
        self.order.push_back(hash);
        if self.order.len() > SEEN_REMEMBERED
            && let Some(oldest) = self.order.pop_front()
        {
            self.seen.remove(&oldest);
        }
        true
    }
}

/// A page URL's 64-bit hash, for de-duplication (collisions: one in about 2^64 per pair).
pub(super) fn page_hash(url: &Url) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    // Fixed keys: the same URL hashes the same for the whole run.
    let mut hasher =
        std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
            .build_hasher();
    hasher.write(url.as_str().as_bytes());
    hasher.finish()
}

/// How much of a page's body links are looked for in.
const LINKS_READ_FROM: usize = 2 * 1024 * 1024;

/// A body that did not come whole: cut by a reset, by a length it never reached, or by the
/// request's timeout.
#[derive(Debug, thiserror::Error)]
#[error("the body broke off after {bytes} bytes: {cause}")]
pub(super) struct BrokeOff {
    bytes: u64,
    cause: String,
}

/// Reads `response`'s body to its end, keeping its first `keep` bytes.
async fn read_body(mut response: reqwest::Response, keep: usize) -> Result<Vec<u8>, BrokeOff> {
    let mut body = Vec::new();
    let mut bytes = 0u64;
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                bytes = bytes.saturating_add(chunk.len() as u64);
                let room = keep.saturating_sub(body.len());
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Ok(None) => return Ok(body),
            Err(error) => {
                // The cause's own words (reqwest's say only "error decoding response body").
                let mut cause = error.to_string();
                let mut source = std::error::Error::source(&error);
                while let Some(next) = source {
                    cause.push_str(": ");
                    cause.push_str(&next.to_string());
                    source = next.source();
                }
                return Err(BrokeOff { bytes, cause });
            }
        }
    }
}

/// Same-origin `href` targets of an HTML page (attribute names in any case, quoted or not),
/// resolved against the page, without fragments.
pub(super) fn same_origin_links(page: &Url, html: &[u8]) -> Vec<Url> {
    let lower = html.to_ascii_lowercase();
    let mut links = Vec::new();
    let mut at = 0;
    while let Some(found) = memchr::memmem::find(&lower[at..], b"href") {
        let mut i = at + found + 4;
        at = i;
        while lower.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
            i += 1;
        }
        if lower.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        while lower.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
            i += 1;
        }
        let (start, end) = match html.get(i) {
            Some(&q @ (b'"' | b'\'')) => {
                let end = memchr::memchr(q, &html[i + 1..]).map_or(html.len(), |e| i + 1 + e);
                (i + 1, end)
            }
            Some(_) => {
                let end = html[i..]
                    .iter()
                    .position(|b| b.is_ascii_whitespace() || *b == b'>')
                    .map_or(html.len(), |e| i + e);
                (i, end)
            }
            None => break,
        };
        let Ok(target) = std::str::from_utf8(&html[start..end]) else {
            continue;
        };
        if let Ok(mut link) = page.join(target.trim()) {
            link.set_fragment(None);
            if link.origin() == page.origin() {
                links.push(link);
            }
        }
    }
    links
}

#[cfg(test)]
mod tests {
    #[test]
    fn pages_are_remembered_up_to_the_bound() {
        let mut listed = Seen::default();
        assert!(listed.first_time(1));
        assert!(!listed.first_time(1));
        for hash in 2..=SEEN_REMEMBERED as u64 + 1 {
            assert!(listed.first_time(hash));
        }
        // The oldest was forgotten; the set holds the bound, no more.
        assert_eq!(listed.seen.len(), SEEN_REMEMBERED);
        assert!(listed.first_time(1));
    }

    use super::*;

    #[test]
    fn links_of_a_page() {
        let page = Url::parse("http://h.example/dir/page.html").unwrap();
        let html = br#"<a href="/a">a</a> <A HREF='b#frag'>b</A> <a href=c.html>c</a>
            <a href="http://other.example/x">x</a> <a href = "/d" >d</a> <a href="mailto:x@y">m</a>"#;
        let links: Vec<String> = same_origin_links(&page, html)
            .iter()
            .map(|u| u.path().to_string())
            .collect();
        assert_eq!(links, ["/a", "/dir/b", "/dir/c.html", "/d"]);
    }
}
