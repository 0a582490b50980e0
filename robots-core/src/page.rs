//! Page-level directives (spec section 9): the values of `X-Robots-Tag` headers and of
//! `<meta name="robots" content="…">`, optionally scoped to one crawler (`googlebot: noindex`).

/// `max-image-preview` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum ImagePreview {
    /// No image preview.
    None,
    /// A default-size preview.
    Standard,
    /// A large preview.
    Large,
}

/// What a page asks of crawlers. Fields are `false`/`None` unless a directive set them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Directives {
    /// `noindex` (or `none`).
    pub noindex: bool,
    /// `nofollow` (or `none`).
    pub nofollow: bool,
    /// `noarchive`.
    pub noarchive: bool,
    /// `nosnippet`.
    pub nosnippet: bool,
    /// `noodp`.
    pub noodp: bool,
    /// `notranslate`.
    pub notranslate: bool,
    /// `noimageindex`.
    pub noimageindex: bool,
    /// `unavailable_after: <date>`, the date as written.
    pub unavailable_after: Option<String>,
    /// `max-snippet: N` (−1 = no limit).
    pub max_snippet: Option<i64>,
    /// `max-image-preview: none|standard|large`.
    pub max_image_preview: Option<ImagePreview>,
    /// `max-video-preview: N` (−1 = no limit).
    pub max_video_preview: Option<i64>,
    /// Directives that were not understood, as written.
    pub unknown: Vec<String>,
}

impl Directives {
    /// Adds the directives of one comma-separated list (`noindex, max-snippet: 20`).
    fn apply(&mut self, list: &str) {
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, value) = match item.split_once(':') {
                Some((n, v)) => (n.trim(), Some(v.trim())),
                None => (item, None),
            };
            let number = || value.and_then(|v| v.parse::<i64>().ok());
            match (name.to_ascii_lowercase().as_str(), value) {
                ("all", None) => {}
                ("none", None) => (self.noindex, self.nofollow) = (true, true),
                ("noindex", None) => self.noindex = true,
                ("nofollow", None) => self.nofollow = true,
                ("noarchive", None) => self.noarchive = true,
                ("nosnippet", None) => self.nosnippet = true,
                ("noodp", None) => self.noodp = true,
                ("notranslate", None) => self.notranslate = true,
                ("noimageindex", None) => self.noimageindex = true,
                ("unavailable_after", Some(date)) if !date.is_empty() => {
                    self.unavailable_after = Some(date.to_string())
                }
                ("max-snippet", Some(_)) if number().is_some() => self.max_snippet = number(),
                ("max-video-preview", Some(_)) if number().is_some() => {
                    self.max_video_preview = number()
                }
                ("max-image-preview", Some(v)) if image_preview(v).is_some() => {
                    self.max_image_preview = image_preview(v)
                }
                _ => self.unknown.push(item.to_string()),
            }
        }
    }

    /// Whether no directive was given.
    pub fn is_empty(&self) -> bool {
        *self == Directives::default()
    }
}

fn image_preview(value: &str) -> Option<ImagePreview> {
    match value.to_ascii_lowercase().as_str() {
        "none" => Some(ImagePreview::None),
        "standard" => Some(ImagePreview::Standard),
        "large" => Some(ImagePreview::Large),
        _ => None,
    }
}

/// Directive names that take a value after a colon, so a colon after them does not scope.
const VALUED: [&str; 4] = [
    "unavailable_after",
    "max-snippet",
    "max-image-preview",
    "max-video-preview",
];

/// Every directive a page gave: those for all crawlers, and those scoped to one.
///
/// ```
/// use robots_core::PageDirectives;
/// let mut page = PageDirectives::default();
/// page.add("noarchive, max-snippet: 50");
/// page.add("googlebot: noindex, nofollow");
/// let googlebot = page.for_agent("Googlebot/2.1");
/// assert!(googlebot.noindex && googlebot.noarchive && googlebot.max_snippet == Some(50));
/// assert!(!page.for_agent("FooBot").noindex);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PageDirectives {
    /// For every crawler.
    pub all: Directives,
    /// Scoped to one crawler: (lowercase token, directives).
    pub scoped: Vec<(String, Directives)>,
}

impl PageDirectives {
    /// Adds one `X-Robots-Tag` header value or one meta robots `content` value.
    pub fn add(&mut self, value: &str) {
        let value = value.trim();
        // `agent: directives` — unless the part before the colon is itself a directive name.
        if let Some((head, rest)) = value.split_once(':') {
            let head = head.trim();
            let is_agent = !head.is_empty()
                && !head.contains(',')
                && !VALUED.contains(&head.to_ascii_lowercase().as_str())
                && head
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if is_agent {
                let agent = head.to_ascii_lowercase();
                match self.scoped.iter_mut().find(|(a, _)| *a == agent) {
                    Some((_, directives)) => directives.apply(rest),
                    None => {
                        let mut directives = Directives::default();
                        directives.apply(rest);
                        self.scoped.push((agent, directives));
                    }
                }
                return;
            }
        }
        self.all.apply(value);
    }

    /// Parses the `X-Robots-Tag` headers of a response.
    pub fn from_headers<'a>(values: impl IntoIterator<Item = &'a str>) -> PageDirectives {
        let mut page = PageDirectives::default();
        for value in values {
            page.add(value);
        }
        page
    }

    /// What applies to a crawler (a product token or a full User-Agent string): the directives
    /// for all crawlers plus those scoped to its token.
    pub fn for_agent(&self, agent: &str) -> Directives {
        let token = crate::product_token(agent);
        let mut merged = self.all.clone();
        for (_, scoped) in self
            .scoped
            .iter()
            .filter(|(a, _)| a.eq_ignore_ascii_case(token))
        {
            merged.noindex |= scoped.noindex;
            merged.nofollow |= scoped.nofollow;
            merged.noarchive |= scoped.noarchive;
            merged.nosnippet |= scoped.nosnippet;
            merged.noodp |= scoped.noodp;
            merged.notranslate |= scoped.notranslate;
            merged.noimageindex |= scoped.noimageindex;
            merged.unavailable_after = scoped
                .unavailable_after
                .clone()
                .or(merged.unavailable_after);
            merged.max_snippet = scoped.max_snippet.or(merged.max_snippet);
            merged.max_image_preview = scoped.max_image_preview.or(merged.max_image_preview);
            merged.max_video_preview = scoped.max_video_preview.or(merged.max_video_preview);
            merged.unknown.extend(scoped.unknown.iter().cloned());
        }
        merged
    }

    /// Whether nothing was given.
    pub fn is_empty(&self) -> bool {
        self.all.is_empty() && self.scoped.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_directive() {
        let mut page = PageDirectives::default();
        page.add("all, noindex, NOFOLLOW, noarchive, nosnippet, noodp, notranslate, noimageindex");
        page.add("unavailable_after: 25 Jun 2010 15:00:00 PST");
        page.add("max-snippet: -1, max-image-preview: large, max-video-preview: 30, bogus");
        let d = &page.all;
        assert!(
            d.noindex
                && d.nofollow
                && d.noarchive
                && d.nosnippet
                && d.noodp
                && d.notranslate
                && d.noimageindex
        );
        assert_eq!(
            d.unavailable_after.as_deref(),
            Some("25 Jun 2010 15:00:00 PST")
        );
        assert_eq!(
            (d.max_snippet, d.max_image_preview, d.max_video_preview),
            (Some(-1), Some(ImagePreview::Large), Some(30))
        );
        assert_eq!(d.unknown, ["bogus"]);
        assert!(page.scoped.is_empty());
    }

    #[test]
    fn none_is_noindex_nofollow() {
        let page = PageDirectives::from_headers(["none"]);
        assert!(page.all.noindex && page.all.nofollow && !page.all.noarchive);
    }

    #[test]
    fn agent_scoped_directives() {
        let page = PageDirectives::from_headers([
            "googlebot: noindex",
            "otherbot: nofollow, max-snippet: 5",
            "noarchive",
        ]);
        assert_eq!(page.scoped.len(), 2);
        let g = page.for_agent("Googlebot");
        assert!(g.noindex && !g.nofollow && g.noarchive);
        let o = page.for_agent("OtherBot/1.0");
        assert!(!o.noindex && o.nofollow && o.max_snippet == Some(5));
        let f = page.for_agent("FooBot");
        assert!(!f.noindex && !f.nofollow && f.noarchive);
        assert!(PageDirectives::default().is_empty());
    }
}
