use super::*;

fn table(lines: &[(UsageKind, &str)]) -> UsageTable {
    let lines = lines
        .iter()
        .enumerate()
        .map(|(i, (kind, value))| (i as u32 + 1, *kind, value.as_bytes()));
    UsageTable::build(lines).unwrap_or_default()
}

#[test]
fn dictionaries_are_read_as_the_vocabulary_says() {
    let p = |s: &str| AiPreferences::parse(s.as_bytes());
    let ok = |s: &str| {
        p(s).unwrap_or(AiPreferences {
            train_ai: Preference::Yes,
            search: Preference::Yes,
        })
    };
    use Preference::*;
    assert_eq!(
        ok("train-ai=y, search=n"),
        AiPreferences {
            train_ai: Yes,
            search: No
        }
    );
    // The vocabulary's own examples: duplicates, the last one wins, and only tokens count.
    assert_eq!(
        ok("train-ai=y, train-ai, search=n, search=\"n\""),
        AiPreferences::UNKNOWN
    );
    assert_eq!(ok("train-ai;allow=n, train-ai=y").train_ai, Yes);
    // The draft's "parameters but unknown" example ends in `;`, which RFC 9651 rejects:
    // unknown either way.
    assert_eq!(ok("train-ai;has;parameters=\"?\"").train_ai, Unknown);
    let trailing = AiPreferences::parse_lenient(b"train-ai;has;parameters=\"?\";");
    assert_eq!(trailing.train_ai, Unknown);
    for unknown in [
        "train-ai=yes",
        "train-ai=1",
        "train-ai=(y)",
        "train-ai=:eQ==:",
        "train-ai=Y",
    ] {
        assert_eq!(ok(unknown).train_ai, Unknown, "{unknown}");
    }
    assert_eq!(ok("").train_ai, Unknown);
    assert_eq!(ok("  train-ai=n  ").train_ai, No);
    assert_eq!(ok("bulk=n, train-ai=n;x=1, foo=(a b)").train_ai, No);
    for broken in [
        "Train-AI=n",
        "train-ai=n,",
        "train-ai=n search=y",
        "train-ai=n\u{e9}",
        "train-ai=n;",
        "=n",
    ] {
        assert!(p(broken).is_err(), "{broken}");
    }
    let error = p("TRAIN-AI=n")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(error.contains("TRAIN-AI=n"), "{error}");
    assert_eq!(
        AiPreferences::parse_lenient(b"Train-AI=n"),
        AiPreferences::UNKNOWN
    );
    // Bytes, not text: a non-UTF-8 byte fails the dictionary, it does not panic.
    assert!(AiPreferences::parse(b"train-ai=n, x=\xFF").is_err());
}

#[test]
fn header_lines_form_one_dictionary() {
    use Preference::*;
    let lines = |l: &[&str]| AiPreferences::from_header_lines(l.iter().map(|s| s.as_bytes()));
    assert_eq!(
        lines(&["train-ai=n", "search=y"]),
        Some(AiPreferences {
            train_ai: No,
            search: Yes
        })
    );
    assert_eq!(
        lines(&["train-ai=n", "Search=y"]),
        Some(AiPreferences::UNKNOWN)
    );
    assert_eq!(lines(&[]), None);
}

#[test]
fn signals_are_read_leniently() {
    use Preference::*;
    let s = ContentSignal::parse(b" Search = YES ,ai-train=no,ai-input, ai-train=No ");
    assert_eq!((s.search, s.ai_input, s.ai_train), (Yes, Unknown, No));
    assert_eq!(
        ContentSignal::parse(b"ai-train=yes, ai-train=no").ai_train,
        No
    );
    assert_eq!(ContentSignal::parse(b"garbage \xFF,,=").search, Unknown);
    let pairs: Vec<_> = ContentSignal::entries(b"a=1,,b, =x").collect();
    assert_eq!(pairs, [(&b"a"[..], &b"1"[..]), (b"b", b"")]);
}

#[test]
fn values_split_into_path_and_preference() {
    assert_eq!(
        split_path(b"/ train-ai=n"),
        (Some(&b"/"[..]), &b"train-ai=n"[..])
    );
    assert_eq!(
        split_path(b"/a\t \ttrain-ai=n"),
        (Some(&b"/a"[..]), &b"train-ai=n"[..])
    );
    assert_eq!(
        split_path(b"*.pdf train-ai=n"),
        (Some(&b"*.pdf"[..]), &b"train-ai=n"[..])
    );
    assert_eq!(
        split_path(b"/only-a-path"),
        (Some(&b"/only-a-path"[..]), &b""[..])
    );
    assert_eq!(split_path(b""), (None, &b""[..]));
    assert_eq!(
        split_path(b"ai/ train-ai=n"),
        (None, &b"ai/ train-ai=n"[..])
    );
}

#[test]
fn the_longest_path_wins_and_equal_paths_combine() {
    use Preference::*;
    use UsageKind::ContentUsage as U;
    let t = table(&[
        (U, "train-ai=y, search=y"),
        (U, "/a/ train-ai=n"),
        (U, "/a/ search=y"),
        (U, "/a/b/ search=n"),
        (U, "/a/b/ search=y"),
    ]);
    let at = |p: &str| t.preferences(p.as_bytes());
    let root = at("/x");
    assert_eq!(
        (root.train_ai.preference, root.train_ai.line),
        (Yes, Some(1))
    );
    let a = at("/a/x");
    assert_eq!((a.train_ai.preference, a.train_ai.line), (No, Some(2)));
    assert_eq!((a.search.preference, a.search.line), (Yes, Some(3)));
    let b = at("/a/b/x");
    // The longest rules win whole: train-ai is unknown there, decided by line 4.
    assert_eq!((b.train_ai.preference, b.train_ai.line), (Unknown, Some(4)));
    assert_eq!((b.search.preference, b.search.line), (No, Some(4)));
    assert!(b.content_signal.is_none());
}

#[test]
fn patterns_match_as_allow_and_disallow_do() {
    use Preference::*;
    use UsageKind::{ContentSignal as S, ContentUsage as U};
    let t = table(&[
        (U, "/*.pdf$ train-ai=n"),
        (U, "/caf\u{e9}/ train-ai=y"),
        (S, "ai-train=yes"),
        (S, "/private ai-train=no, search=no"),
    ]);
    let at = |p: &str| t.preferences(p.as_bytes());
    assert_eq!(at("/doc/x.pdf").train_ai.preference, No);
    assert_eq!(at("/doc/x.pdf?x").train_ai.preference, Unknown);
    assert_eq!(at("/caf%C3%A9/x").train_ai.preference, Yes);
    let private = at("/private/x");
    let signal = private.content_signal.unwrap_or_default();
    assert_eq!(
        (signal.ai_train.preference, signal.ai_train.line),
        (No, Some(4))
    );
    assert_eq!(private.may_train_ai(), No);
    assert_eq!(private.may_search(), No);
    assert_eq!(at("/public").may_train_ai(), Yes);
    assert_eq!(at("/public").may_use_as_ai_input(), Unknown);
}

#[test]
fn no_usage_lines_no_table() {
    assert!(UsageTable::build(std::iter::empty()).is_none());
    let t = UsageTable::default();
    assert!(!t.preferences(b"/").is_stated());
}
