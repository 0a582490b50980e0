//! The crawler's names, one vocabulary for every command: `--user-agent` is the User-Agent sent
//! (reduced to its product token for the rules when no token is given), `--agent` a product
//! token the rules are selected by, compared as given and repeatable. `--token` is `--agent`'s
//! other name (`crawl` called it so).

use clap::Args;

use crate::CliError;

#[derive(Args, Clone, Default)]
pub struct CrawlerArgs {
    /// A product token the rules are selected by (`FooBot`), compared as given like Google's
    /// robots_main: a name with other characters (`Foo Bar`, `FooBot/1.0`) matches only `*`
    /// groups. Repeat it, most specific first (`--agent Googlebot-Image --agent Googlebot`).
    /// Sent as the User-Agent when --user-agent is not given.
    #[arg(long = "agent", visible_alias = "token", value_name = "TOKEN")]
    pub agents: Vec<String>,
    /// The User-Agent sent (`FooBot/2.1 (+https://foo.example/bot)`). Without --agent, the rules
    /// are selected by its product token (`FooBot`; the common `Mozilla/5.0 (compatible;
    /// FooBot/2.1; +https://…)` gives `FooBot` too).
    #[arg(long, value_name = "UA")]
    pub user_agent: Option<String>,
}

/// The tokens rules are selected by, most specific first, and the User-Agent sent.
pub struct Crawler {
    pub tokens: Vec<String>,
    pub user_agent: String,
}

impl CrawlerArgs {
    /// The crawler these flags name; `default_user_agent` is sent when neither flag is given
    /// (`None`: one of them is required). Warns on stderr about a name that matches only `*`
    /// groups.
    pub fn crawler(&self, default_user_agent: Option<&str>) -> Result<Crawler, CliError> {
        if !self.agents.is_empty() {
            for token in &self.agents {
                check_token(token)?;
            }
            return Ok(Crawler {
                tokens: self.agents.clone(),
                user_agent: self
                    .user_agent
                    .clone()
                    .unwrap_or_else(|| self.agents[0].clone()),
            });
        }
        let (user_agent, given) = match (&self.user_agent, default_user_agent) {
            (Some(user_agent), _) => (user_agent.clone(), true),
            (None, Some(default)) => (default.to_string(), false),
            (None, None) => {
                return Err(CliError::Usage(
                    "give the crawler's name: --agent TOKEN (the rules' product token) or --user-agent UA"
                        .into(),
                ));
            }
        };
        let reduced = robots_core::user_agent_token(&user_agent);
        if reduced.token.is_empty() {
            return Err(CliError::Usage(format!(
                "--user-agent `{user_agent}` has no product token (letters, `-`, `_` at its start); give the token with --agent"
            )));
        }
        if given {
            if let Some(name) = reduced.lost {
                crate::say(format_args!(
                    "warning: the User-Agent's crawler name `{name}` is matched as `{}`; give the token with --agent to match it exactly",
                    reduced.token
                ));
            }
            if reduced.token.eq_ignore_ascii_case("mozilla") {
                crate::say(format_args!(
                    "warning: the User-Agent reduces to `Mozilla`, which no robots.txt group names, so only `*` groups apply; give the crawler's token with --agent"
                ));
            }
        }
        Ok(Crawler {
            tokens: vec![reduced.token.to_string()],
            user_agent,
        })
    }
}

/// A token given with --agent: not empty, and warned about when Google's library can never
/// match it to a named group (any character other than ASCII letters, `-` and `_`: a digit, a
/// `/`, a space, `*`, `!`, non-ASCII), which would silently give the `*` group's verdict.
fn check_token(token: &str) -> Result<(), CliError> {
    if token.trim().is_empty() {
        return Err(CliError::Usage(
            "--agent is empty: give the crawler's product token".into(),
        ));
    }
    if let Some(warning) = unmatchable_token_warning(token) {
        crate::say(format_args!("{warning}"));
    }
    Ok(())
}

/// The warning for a token no named group can match, naming the characters that make it so.
fn unmatchable_token_warning(token: &str) -> Option<String> {
    if robots_core::is_valid_token(token) {
        return None;
    }
    let mut others: Vec<char> = Vec::new();
    for c in token.chars() {
        let matched = u8::try_from(c).is_ok_and(robots_core::is_token_byte);
        if !matched && !others.contains(&c) {
            others.push(c);
        }
    }
    let named: Vec<String> = others
        .iter()
        .map(|c| match c {
            ' ' => "a space".to_string(),
            c if c.is_control() => format!("{:?}", c),
            c => format!("`{c}`"),
        })
        .collect();
    let reduced = robots_core::user_agent_token(token);
    let hint = if token.contains(['/', ' ', '(']) && !reduced.token.is_empty() {
        format!(
            "; --user-agent reduces a full User-Agent to its token (`{}`)",
            reduced.token
        )
    } else {
        String::new()
    };
    Some(format!(
        "warning: --agent `{token}` has {} (Google matches names of letters, `-` and `_` only), so no named group can match it and only `*` groups apply{hint}",
        named.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::unmatchable_token_warning;

    #[test]
    fn a_token_google_can_never_match_is_warned_about_by_its_characters() {
        assert_eq!(unmatchable_token_warning("FooBot"), None);
        assert_eq!(unmatchable_token_warning("Googlebot-Image"), None);
        assert_eq!(unmatchable_token_warning("foo_bot"), None);
        for (token, names) in [
            ("Rule7TestBot", "`7`"),
            ("FooBot!", "`!`"),
            ("*", "`*`"),
            ("Bötchen", "`ö`"),
            ("Foo Bar", "a space"),
            ("FooBot/1.0", "`/`, `1`, `.`, `0`"),
        ] {
            let warning = unmatchable_token_warning(token).expect(token);
            assert!(warning.contains(&format!("has {names} (")), "{warning}");
        }
        let full = unmatchable_token_warning("FooBot/1.0 (+https://x)").unwrap();
        assert!(full.contains("(`FooBot`)"), "{full}");
    }
}
