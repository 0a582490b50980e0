//! User-agent values and crawler names (spec section 3): global `*`, product tokens.
//!
//! A crawler's token is compared **as given**, as Google's library does: `FooBot` matches
//! `User-agent: FooBot/2.1`, but a name with any byte outside `[A-Za-z_-]` (`Foo Bar`,
//! `AB42bot`) never matches a specific group and falls back to `*`. APIs that take a full
//! User-Agent string reduce it with [`user_agent_token`], which says when that loses part of the
//! crawler's name.

/// The product token of a user-agent value or a full User-Agent string: its longest prefix of
/// `[A-Za-z_-]`. Digits, `/`, spaces and everything else stop it.
///
/// ```
/// use robots_core::product_token;
/// assert_eq!(product_token("Googlebot/2.1 (+http://www.google.com/bot.html)"), "Googlebot");
/// assert_eq!(product_token("Googlebot2"), "Googlebot");
/// assert_eq!(product_token("Googlebot-Image"), "Googlebot-Image");
/// ```
pub fn product_token(agent: &str) -> &str {
    let end = agent
        .bytes()
        .position(|b| !is_token_byte(b))
        .unwrap_or(agent.len());
    // Every byte before `end` is ASCII, so this is a char boundary.
    &agent[..end]
}

/// Whether a byte may stand in a name Google's library matches: an ASCII letter, `-` or `_`.
///
/// ```
/// use robots_core::is_token_byte;
/// assert!(is_token_byte(b'G') && is_token_byte(b'-') && is_token_byte(b'_'));
/// assert!(!is_token_byte(b'7') && !is_token_byte(b'/') && !is_token_byte(b'*'));
/// ```
pub fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'-' || b == b'_'
}

/// Whether `token` can ever match a specific group: non-empty and only `[A-Za-z_-]`, as Google's
/// `IsValidUserAgentToObey`. Other names still work, but only `*` groups apply to them.
///
/// ```
/// use robots_core::is_valid_token;
/// assert!(is_valid_token("Googlebot-Image"));
/// assert!(!is_valid_token("Foo Bar"));
/// assert!(!is_valid_token("AB42bot"));
/// assert!(!is_valid_token(""));
/// ```
pub fn is_valid_token(token: &str) -> bool {
    !token.is_empty() && product_token(token).len() == token.len()
}

/// A full User-Agent string reduced to the token rules are selected by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserAgentToken<'a> {
    /// The product token: the longest prefix of `[A-Za-z_-]`.
    pub token: &'a str,
    /// The crawler's name as written (up to the first `/` or whitespace) when the token is
    /// shorter than it: `AB42bot/1.0` gives token `AB` and loses `AB42bot`. Such a crawler
    /// should name its tokens explicitly.
    pub lost: Option<&'a str>,
}

/// Reduces a full User-Agent string (`FooBot/2.1 (+https://foo.example/bot)`) to its product
/// token, and tells when that cuts the crawler's name short. The form most crawlers send,
/// `Mozilla/5.0 (compatible; FooBot/2.1; +https://…)`, gives the product after `compatible;`.
/// A browser's string with the crawler's product among its own gives that product: the one
/// followed by a `(+url)` comment (`Mozilla/5.0 (X11; Linux x86_64) FooBot/2.1 (+https://…)`),
/// else the one whose name says bot, crawl or spider. A browser's User-Agent with neither gives
/// `Mozilla`, which no robots.txt group names: pass the crawler's token explicitly then.
///
/// ```
/// use robots_core::user_agent_token;
/// let ua = user_agent_token("FooBot/2.1 (+https://foo.example/bot)");
/// assert_eq!((ua.token, ua.lost), ("FooBot", None));
/// let ua = user_agent_token("Mozilla/5.0 (compatible; FooBot/2.1; +https://foo.example/bot)");
/// assert_eq!(ua.token, "FooBot");
/// let ua = user_agent_token("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/130.0 Safari/537.36");
/// assert_eq!(ua.token, "Googlebot");
/// let ua = user_agent_token("Mozilla/5.0 (X11; Linux x86_64) FooBot/2.1 (+https://foo.example/bot)");
/// assert_eq!(ua.token, "FooBot");
/// assert_eq!(user_agent_token("Mozilla/5.0 (X11; Linux x86_64)").token, "Mozilla");
/// let ua = user_agent_token("AB42bot/1.0");
/// assert_eq!((ua.token, ua.lost), ("AB", Some("AB42bot")));
/// ```
pub fn user_agent_token(user_agent: &str) -> UserAgentToken<'_> {
    // Most crawlers send a browser's form, `Mozilla/5.0 (compatible; FooBot/2.1; +https://…)`:
    // the crawler is the product after `compatible;`, not Mozilla (which no group names).
    // Others put their product among the browser's: `Mozilla/5.0 (X11; …) FooBot/2.1 (+https://…)`.
    if product_token(user_agent).eq_ignore_ascii_case("mozilla")
        && let Some(crawler) = after_compatible(user_agent).or_else(|| bot_product(user_agent))
    {
        return user_agent_token(crawler);
    }
    let token = product_token(user_agent);
    let name_end = user_agent
        .find(|c: char| c == '/' || c.is_whitespace())
        .unwrap_or(user_agent.len());
    let name = &user_agent[..name_end];
    UserAgentToken {
        token,
        lost: (token.len() < name.len()).then_some(name),
    }
}

/// What follows `compatible;` (any case), when a product token starts there.
fn after_compatible(user_agent: &str) -> Option<&str> {
    const MARK: &[u8] = b"compatible;";
    let at = user_agent
        .as_bytes()
        .windows(MARK.len())
        .position(|w| w.eq_ignore_ascii_case(MARK))?;
    // Every byte of the mark is ASCII, so this is a char boundary.
    let rest = user_agent[at + MARK.len()..].trim_start();
    (!product_token(rest).is_empty()).then_some(rest)
}

/// In a browser's User-Agent without `compatible;`, the crawler's product, from its start: the
/// first product (outside comments) followed by a comment that starts with `+` (a URL, the
/// crawlers' convention: `FooBot/2.1 (+https://…)`), else the first whose name says it is a bot
/// (`bot`, `crawl`, `spider`, in any case). `None` for a browser's.
fn bot_product(user_agent: &str) -> Option<&str> {
    // The words outside parentheses, by byte range (each starts after an ASCII delimiter, so
    // on a char boundary).
    let mut words: Vec<(usize, usize)> = Vec::new();
    let (mut depth, mut start) = (0usize, None);
    for (i, b) in user_agent.bytes().enumerate() {
        match b {
            b'(' | b')' => {
                if let Some(s) = start.take() {
                    words.push((s, i));
                }
                depth = if b == b'(' {
                    depth.saturating_add(1)
                } else {
                    depth.saturating_sub(1)
                };
            }
            b if b.is_ascii_whitespace() => {
                if let Some(s) = start.take() {
                    words.push((s, i));
                }
            }
            _ if depth == 0 && start.is_none() => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        words.push((s, user_agent.len()));
    }
    // The first word is the browser's own `Mozilla/5.0`.
    let products = || {
        words
            .iter()
            .skip(1)
            .filter(|&&(s, e)| !product_token(&user_agent[s..e]).is_empty())
    };
    let with_url = products().find(|&&(_, e)| user_agent[e..].trim_start().starts_with("(+"));
    let named_bot = || {
        products().find(|&&(s, e)| {
            let name = product_token(&user_agent[s..e]).to_ascii_lowercase();
            ["bot", "crawl", "spider"].iter().any(|w| name.contains(w))
        })
    };
    with_url.or_else(named_bot).map(|&(s, _)| &user_agent[s..])
}

/// Byte version of [`product_token`] for user-agent values, which are not UTF-8-validated.
pub(crate) fn product_token_bytes(value: &[u8]) -> &[u8] {
    let end = value
        .iter()
        .position(|&b| !is_token_byte(b))
        .unwrap_or(value.len());
    &value[..end]
}

/// Whether the product token of a user-agent `value` is `token` (ASCII case-insensitive), as
/// `product_token_bytes(value).eq_ignore_ascii_case(token)` but without reading the value past
/// the token's length: a view's groups are chosen by this for every user-agent line.
#[inline]
pub(crate) fn names_token(value: &[u8], token: &[u8]) -> bool {
    // A product token is all token bytes: a token with any other byte is no value's.
    let Some(head) = value.get(..token.len()) else {
        return false;
    };
    head.eq_ignore_ascii_case(token)
        && value.get(token.len()).is_none_or(|&b| !is_token_byte(b))
        && token.iter().all(|&b| is_token_byte(b))
}

/// Whether a user-agent value names every crawler: `*` alone or followed by whitespace
/// (`* foo` is global; `*foo` and `**` are not).
pub fn is_global_agent(value: &[u8]) -> bool {
    match value {
        [b'*'] => true,
        [b'*', second, ..] => matches!(second, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r'),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The shortcut agrees with reducing the value to its product token and comparing.
        #[test]
        fn names_token_is_the_product_token_compared(
            value in "[A-Za-z_/ 0-9.*-]{0,12}",
            token in "[A-Za-z_ 0-9/-]{0,8}",
        ) {
            proptest::prop_assert_eq!(
                names_token(value.as_bytes(), token.as_bytes()),
                product_token_bytes(value.as_bytes()).eq_ignore_ascii_case(token.as_bytes())
            );
        }
    }

    #[test]
    fn the_compatible_form_names_the_crawler() {
        for (given, token, lost) in [
            (
                "Mozilla/5.0 (compatible; FooBot/2.1; +https://f.example)",
                "FooBot",
                None,
            ),
            (
                "mozilla/5.0 (COMPATIBLE;  bingbot/2.0; +http://www.bing.com/bingbot.htm)",
                "bingbot",
                None,
            ),
            (
                "Mozilla/5.0 (compatible; AB42bot/1.0)",
                "AB",
                Some("AB42bot"),
            ),
            // Nothing usable after `compatible;`: the browser's name, said by the callers.
            ("Mozilla/5.0 (compatible; /1.0)", "Mozilla", None),
            ("Mozilla/5.0 (X11; Linux x86_64)", "Mozilla", None),
            // Only a Mozilla form is looked into.
            ("FooBot/1.0 (compatible; BarBot/2.0)", "FooBot", None),
            // A crawler's product among a browser's: the one with a `(+url)` comment, else the
            // one named as a bot; a browser's products (Chrome, Safari…) are never taken.
            (
                "Mozilla/5.0 (X11; Linux x86_64) MyBot/2.1 (+https://mybot.example)",
                "MyBot",
                None,
            ),
            (
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36 Acme/1.0 (+https://acme.example/crawler)",
                "Acme",
                None,
            ),
            (
                "Mozilla/5.0 (Linux) Chrome/130.0 Safari/537.36 PetalBot",
                "PetalBot",
                None,
            ),
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36",
                "Mozilla",
                None,
            ),
            (
                "Mozilla/5.0 (X11; rv:130.0) Gecko/20100101 Firefox/130.0",
                "Mozilla",
                None,
            ),
            (
                "Mozilla/5.0 (X11; Linux) AB42bot/1.0 (+https://ab.example)",
                "AB",
                Some("AB42bot"),
            ),
            ("Mozilla/5.0 (unclosed MyBot/1 (+x", "Mozilla", None),
        ] {
            let reduced = user_agent_token(given);
            assert_eq!((reduced.token, reduced.lost), (token, lost), "{given}");
        }
    }

    #[test]
    fn product_tokens() {
        for (given, token) in [
            ("Googlebot/2.1", "Googlebot"),
            ("Googlebot2", "Googlebot"),
            ("Googlebot*", "Googlebot"),
            ("Googlebot Images", "Googlebot"),
            ("FooBot/2.1 (+https://foo.example/bot)", "FooBot"),
            ("foo_bar-baz9", "foo_bar-baz"),
            ("123", ""),
            ("", ""),
            ("Bötchen", "B"),
        ] {
            assert_eq!(product_token(given), token, "{given}");
            assert_eq!(
                product_token_bytes(given.as_bytes()),
                token.as_bytes(),
                "{given}"
            );
        }
    }

    #[test]
    fn user_agent_reduction_reports_lost_names() {
        for (ua, token, lost) in [
            ("FooBot/2.1 (+https://foo.example/bot)", "FooBot", None),
            ("FooBot", "FooBot", None),
            ("Foo Bar", "Foo", None),
            ("AB42bot/1.0", "AB", Some("AB42bot")),
            ("Bot2 x", "Bot", Some("Bot2")),
            ("Bötchen/1", "B", Some("Bötchen")),
            ("", "", None),
            ("/1.0", "", None),
        ] {
            let reduced = user_agent_token(ua);
            assert_eq!((reduced.token, reduced.lost), (token, lost), "{ua}");
        }
    }

    #[test]
    fn global_agents() {
        assert!(is_global_agent(b"*"));
        assert!(is_global_agent(b"* foo"));
        assert!(is_global_agent(b"*\tfoo"));
        assert!(!is_global_agent(b"*foo"));
        assert!(!is_global_agent(b"**"));
        assert!(!is_global_agent(b""));
        assert!(!is_global_agent(b"foo *"));
    }
}
