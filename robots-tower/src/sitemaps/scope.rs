//! Which URLs a sitemap may list (spec section 13): the sitemaps.org rule (the sitemap's own
//! scheme, host and port, under its folder), widened to the whole origin of a robots.txt that
//! named the sitemap (cross-submission); or, as an option, anything on the sitemap's origin.

use url::Url;

/// Which URLs of a sitemap are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SitemapScope {
    /// The sitemaps.org rule (the default): a URL is kept when it has the sitemap file's scheme,
    /// host and port and lies under the sitemap's folder; a sitemap a robots.txt names may list
    /// URLs anywhere on that robots.txt's origin.
    #[default]
    Strict,
    /// Any URL on the sitemap's own scheme, host and port (or the naming robots.txt's origin).
    Host,
}

impl std::str::FromStr for SitemapScope {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "strict" => Ok(SitemapScope::Strict),
            "host" => Ok(SitemapScope::Host),
            _ => Err(format!("`{text}` is not a scope: `strict` or `host`")),
        }
    }
}

/// Whether `url` is in scope of `sitemap`; `named_by` is the origin of the robots.txt that named
/// the sitemap (or the index above it), if one did.
pub(crate) fn in_scope(
    scope: SitemapScope,
    sitemap: &Url,
    named_by: Option<&Url>,
    url: &Url,
) -> bool {
    let same_origin = |a: &Url, b: &Url| {
        a.scheme() == b.scheme()
            && a.host_str() == b.host_str()
            && a.port_or_known_default() == b.port_or_known_default()
    };
    if named_by.is_some_and(|robots| same_origin(robots, url)) {
        return true;
    }
    if !same_origin(sitemap, url) {
        return false;
    }
    match scope {
        SitemapScope::Host => true,
        SitemapScope::Strict => {
            let path = sitemap.path();
            let folder = &path[..path.rfind('/').map_or(0, |i| i + 1)];
            url.path().starts_with(folder)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        text.parse().unwrap()
    }

    #[test]
    fn strict_is_the_folder_of_the_sitemap_on_its_origin() {
        let sitemap = url("https://example.com/blog/sitemap.xml");
        let strict = |u: &str| in_scope(SitemapScope::Strict, &sitemap, None, &url(u));
        assert!(strict("https://example.com/blog/post"));
        assert!(strict("https://example.com/blog/"));
        assert!(!strict("https://example.com/about"));
        assert!(!strict("http://example.com/blog/post"));
        assert!(!strict("https://example.com:8443/blog/post"));
        assert!(!strict("https://www.example.com/blog/post"));
        // The root's sitemap covers the origin.
        let root = url("https://example.com/sitemap.xml");
        assert!(in_scope(
            SitemapScope::Strict,
            &root,
            None,
            &url("https://example.com/a/b")
        ));
    }

    #[test]
    fn robots_txt_widens_it_to_its_origin_and_host_to_the_sitemaps() {
        let sitemap = url("https://cdn.example.net/sitemaps/shop.xml");
        let robots = url("https://shop.example.com/robots.txt");
        assert!(in_scope(
            SitemapScope::Strict,
            &sitemap,
            Some(&robots),
            &url("https://shop.example.com/item/1")
        ));
        assert!(!in_scope(
            SitemapScope::Strict,
            &sitemap,
            Some(&robots),
            &url("https://other.example.com/")
        ));
        let blog = url("https://example.com/blog/sitemap.xml");
        assert!(in_scope(
            SitemapScope::Host,
            &blog,
            None,
            &url("https://example.com/about")
        ));
        assert!(!in_scope(
            SitemapScope::Host,
            &blog,
            None,
            &url("https://www.example.com/about")
        ));
    }
}
