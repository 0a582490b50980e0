//! User-agent values and crawler names (spec section 3): global `*`, product tokens.

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
        .position(|b| !(b.is_ascii_alphabetic() || b == b'-' || b == b'_'))
        .unwrap_or(agent.len());
    // Every byte before `end` is ASCII, so this is a char boundary.
    &agent[..end]
}

/// Byte version of [`product_token`] for user-agent values, which are not UTF-8-validated.
pub(crate) fn product_token_bytes(value: &[u8]) -> &[u8] {
    let end = value
        .iter()
        .position(|&b| !(b.is_ascii_alphabetic() || b == b'-' || b == b'_'))
        .unwrap_or(value.len());
    &value[..end]
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
