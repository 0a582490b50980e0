//! Spec section 7's table (`tests/data/status-table.tsv`), row by row, through the sans-I/O
//! steps the fetcher and the cache are built on: `Retrieval` for each response, the default hop
//! rule for each redirect, `CacheConfig::next` for what is held after. The Python package runs
//! the same rows through its binding of these steps.

use std::time::Duration;

use bytes::Bytes;
use robots_fetch::{
    Answer, CacheConfig, FetchOutcome, HopRule, Kept, NetworkError, NetworkErrorKind, Next, Origin,
    Retrieval, UnreachableCause, Validators,
};

const TABLE: &str = include_str!("../data/status-table.tsv");

/// One response of a retrieval: `STATUS;name=value;…`.
fn response(text: &str) -> (u16, http::HeaderMap) {
    let mut parts = text.split(';');
    let status = parts.next().unwrap().parse().unwrap();
    let mut headers = http::HeaderMap::new();
    for header in parts {
        let (name, value) = header.split_once('=').unwrap();
        let name: http::HeaderName = name.parse().unwrap();
        headers.insert(name, value.parse().unwrap());
    }
    (status, headers)
}

/// What the origin's entry holds between retrievals.
#[derive(Default)]
struct Held {
    kept: Kept,
    validators: Validators,
}

impl Held {
    /// One retrieval (`network`, or responses separated by `>`), then what is held after it.
    fn retrieve(&mut self, origin: &Origin, text: &str) -> Next {
        let outcome = if text == "network" {
            FetchOutcome::Unreachable(UnreachableCause::Network(NetworkError {
                kind: NetworkErrorKind::Connect,
                message: "connection refused".into(),
            }))
        } else {
            self.outcome(origin, text)
        };
        let next = CacheConfig::default().next(self.kept, &outcome);
        match &outcome {
            FetchOutcome::Parsed { validators, .. } => self.validators = validators.clone(),
            FetchOutcome::NotModified { validators, .. } => {
                self.validators = self.validators.updated_by(validators);
            }
            FetchOutcome::Unavailable { .. } => self.validators = Validators::default(),
            FetchOutcome::Unreachable(_) => {}
        }
        self.kept = self.kept.after(&outcome, &next).aged(next.lives_for);
        next
    }

    fn outcome(&self, origin: &Origin, text: &str) -> FetchOutcome {
        let mut retrieval = Retrieval::revalidating(origin, &self.validators);
        let rule = HopRule::default();
        for step in text.split('>') {
            let (status, headers) = response(step);
            match retrieval.answer(status, &headers) {
                Answer::Done(outcome) => return outcome,
                Answer::ReadBody => return retrieval.body(status, &headers, Bytes::new()),
                Answer::Redirect(next) if !rule.allows(retrieval.url(), &next) => {
                    return retrieval.refused(&next, &rule, "");
                }
                Answer::Redirect(next) => retrieval.follow(next),
            }
        }
        panic!("`{text}` ends on a redirect");
    }
}

#[test]
fn every_row_of_the_status_table_holds() {
    let origin = Origin::parse("https://example.com").unwrap();
    let rows: Vec<&str> = TABLE
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .skip(1)
        .collect();
    assert!(rows.len() >= 30, "{} rows", rows.len());
    for row in rows {
        let columns: Vec<&str> = row.split('\t').collect();
        let [before, answer, rules, lives, failures] = columns[..] else {
            panic!("row `{row}` has {} columns", columns.len());
        };
        let mut held = Held::default();
        for earlier in before.split(' ').filter(|r| !r.is_empty()) {
            held.retrieve(&origin, earlier);
        }
        let next = held.retrieve(&origin, answer);
        let found = (
            next.rules.as_str(),
            next.lives_for,
            next.failures.to_string(),
        );
        let expected = (
            rules,
            Duration::from_secs(lives.parse().unwrap()),
            failures.to_string(),
        );
        assert_eq!(found, expected, "row `{row}`");
    }
}
