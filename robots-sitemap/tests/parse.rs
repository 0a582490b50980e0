//! The parser on bytes: every format, the limits, and what hostile files get (spec section 13).

use std::io::Write;

use robots_sitemap::{
    AsyncSitemapReader, Format, Item, LastMod, Limit, Limits, SitemapError, SitemapReader,
    SkipReason, parse,
};

/// Every item, the error that ended the reading (if one did), and the format.
fn read(bytes: &[u8]) -> (Vec<Item>, Option<SitemapError>, Option<Format>) {
    read_with(bytes, Limits::default())
}

fn read_with(bytes: &[u8], limits: Limits) -> (Vec<Item>, Option<SitemapError>, Option<Format>) {
    let mut reader = SitemapReader::with_limits(bytes, limits);
    let mut items = Vec::new();
    let mut error = None;
    for item in reader.by_ref() {
        match item {
            Ok(item) => items.push(item),
            Err(e) => error = Some(e),
        }
    }
    (items, error, reader.format())
}

fn pages(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::Page(p) => Some(p.url.to_string()),
            _ => None,
        })
        .collect()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
        xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <url>
    <loc>https://example.com/</loc>
    <lastmod>2024-05-01T10:00:00+02:00</lastmod>
    <changefreq> daily </changefreq>
    <priority>0.8</priority>
    <image:image><image:loc>https://example.com/logo.png</image:loc></image:image>
    <xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/"/>
  </url>
  <url><loc>
      https://example.com/a?x=1&amp;y=&#50;
  </loc><lastmod>last tuesday</lastmod><priority>7</priority></url>
  <url><loc><![CDATA[https://example.com/cdata]]></loc></url>
  <url><loc>/relative</loc></url>
  <url><loc>ftp://example.com/file</loc></url>
</urlset>"#;

#[test]
fn a_urlset_with_every_field_and_extensions_skipped() {
    let (items, error, format) = read(URLSET.as_bytes());
    assert!(error.is_none(), "{error:?}");
    assert_eq!(format, Some(Format::UrlSet));
    assert_eq!(
        pages(&items),
        [
            "https://example.com/",
            "https://example.com/a?x=1&y=2",
            "https://example.com/cdata"
        ]
    );
    let Item::Page(first) = &items[0] else {
        panic!("{:?}", items[0])
    };
    assert_eq!(
        first.lastmod.as_ref().map(LastMod::as_str),
        Some("2024-05-01T10:00:00+02:00")
    );
    assert_eq!(
        first.lastmod.as_ref().map(LastMod::unix_seconds),
        Some(1_714_550_400)
    );
    assert_eq!(first.changefreq.as_deref(), Some("daily"));
    assert_eq!(first.priority, Some(0.8));
    let Item::Page(second) = &items[1] else {
        panic!("{:?}", items[1])
    };
    // An invalid lastmod is reported and the URL kept without it; a priority out of range is
    // not one.
    assert_eq!(second.lastmod, None);
    assert_eq!(second.invalid_lastmod.as_deref(), Some("last tuesday"));
    assert_eq!(second.priority, None);
    let skipped: Vec<(String, SkipReason)> = items
        .iter()
        .filter_map(|i| match i {
            Item::Skipped(s) => Some((s.text.to_string(), s.reason)),
            _ => None,
        })
        .collect();
    assert_eq!(
        skipped,
        [
            ("/relative".to_string(), SkipReason::NotAUrl),
            ("ftp://example.com/file".to_string(), SkipReason::NotHttp)
        ]
    );
}

#[test]
fn lenient_on_what_sites_publish() {
    // A BOM, blank lines before the declaration's place, no namespace, a prefixed root.
    let loose = "\u{feff}\n\n  <urlset><url><loc>https://example.com/x</loc></url></urlset>\n";
    assert_eq!(pages(&read(loose.as_bytes()).0), ["https://example.com/x"]);
    let prefixed = r#"<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:url><sm:loc>https://example.com/p</sm:loc></sm:url></sm:urlset>"#;
    assert_eq!(
        pages(&read(prefixed.as_bytes()).0),
        ["https://example.com/p"]
    );
    // Whatever follows the root's end is not read.
    let trailing = "<urlset><url><loc>https://example.com/t</loc></url></urlset><garbage";
    let (items, error, _) = read(trailing.as_bytes());
    assert_eq!((pages(&items).len(), error.is_none()), (1, true));
}

#[test]
fn an_index_lists_sitemaps() {
    let index = r#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <sitemap><loc>https://example.com/a.xml</loc><lastmod>2024-01-02</lastmod></sitemap>
      <sitemap><loc>https://example.com/b.xml.gz</loc></sitemap>
    </sitemapindex>"#;
    let (items, error, format) = read(index.as_bytes());
    assert!(error.is_none());
    assert_eq!(format, Some(Format::Index));
    let sitemaps: Vec<(String, Option<String>)> = items
        .iter()
        .map(|i| match i {
            Item::Sitemap(s) => (s.url.to_string(), s.lastmod.as_ref().map(|l| l.to_string())),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        sitemaps,
        [
            (
                "https://example.com/a.xml".into(),
                Some("2024-01-02".into())
            ),
            ("https://example.com/b.xml.gz".into(), None)
        ]
    );
}

#[test]
fn plain_text_one_url_a_line() {
    let long = format!("https://example.com/{}", "a".repeat(3000));
    let text =
        format!("\u{feff}https://example.com/1\r\n\n   \nnot a url\n{long}\nhttps://example.com/2");
    let (items, error, format) = read(text.as_bytes());
    assert!(error.is_none());
    assert_eq!(format, Some(Format::Text));
    assert_eq!(
        pages(&items),
        ["https://example.com/1", "https://example.com/2"]
    );
    let reasons: Vec<SkipReason> = items
        .iter()
        .filter_map(|i| match i {
            Item::Skipped(s) => Some(s.reason),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, [SkipReason::NotAUrl, SkipReason::TooLong]);
    // A URL of exactly 2,048 bytes is kept; one more is not.
    let exact = format!("https://example.com/{}", "b".repeat(2048 - 20));
    assert_eq!(exact.len(), 2048);
    assert_eq!(
        pages(&read(exact.as_bytes()).0),
        std::slice::from_ref(&exact)
    );
    let over = format!("{exact}c");
    assert!(matches!(
        &read(over.as_bytes()).0[..],
        [Item::Skipped(s)] if s.reason == SkipReason::TooLong
    ));
}

#[test]
fn rss_and_atom_feeds() {
    let rss = r#"<?xml version="1.0"?><rss version="2.0"><channel>
        <title>News</title><link>https://example.com/</link>
        <item><title>One</title><link>https://example.com/one</link></item>
        <item><link> https://example.com/two </link><pubDate>Mon, 06 Sep 2009 16:45:00 +0000</pubDate></item>
    </channel></rss>"#;
    let (items, error, format) = read(rss.as_bytes());
    assert!(error.is_none());
    assert_eq!(format, Some(Format::Rss));
    // The channel's own link is not a page.
    assert_eq!(
        pages(&items),
        ["https://example.com/one", "https://example.com/two"]
    );

    let atom = r#"<?xml version="1.0" encoding="utf-8"?>
    <feed xmlns="http://www.w3.org/2005/Atom"><title>Feed</title>
      <link href="https://example.com/feed" rel="self"/>
      <entry><link rel="self" href="https://example.com/self"/>
             <link href="https://example.com/post?a=1&amp;b=2"/>
             <updated>2024-02-03T04:05:06Z</updated></entry>
      <entry><link rel="alternate" href="https://example.com/other"></link></entry>
    </feed>"#;
    let (items, error, format) = read(atom.as_bytes());
    assert!(error.is_none(), "{error:?}");
    assert_eq!(format, Some(Format::Atom));
    assert_eq!(
        pages(&items),
        [
            "https://example.com/post?a=1&b=2",
            "https://example.com/other"
        ]
    );
    let Item::Page(first) = &items[0] else {
        panic!()
    };
    assert_eq!(
        first.lastmod.as_ref().map(|l| l.as_str()),
        Some("2024-02-03T04:05:06Z")
    );
}

#[test]
fn gzip_is_told_by_its_bytes_whatever_the_name() {
    let zipped = gzip(URLSET.as_bytes());
    let mut reader = SitemapReader::new(&zipped[..]);
    let items: Vec<Item> = reader.by_ref().map(Result::unwrap).collect();
    assert!(reader.is_gzip());
    assert_eq!(pages(&items).len(), 3);
    // Two gzip members, one after the other, are one file.
    let mut twice = gzip(b"https://example.com/1\n");
    twice.extend(gzip(b"https://example.com/2\n"));
    assert_eq!(
        pages(&read(&twice).0),
        ["https://example.com/1", "https://example.com/2"]
    );
    // A corrupt gzip stream is a read error, after what it gave.
    let mut corrupt = gzip(URLSET.as_bytes());
    let middle = corrupt.len() / 2;
    corrupt[middle..].fill(0x55);
    let (_, error, _) = read(&corrupt);
    assert!(
        matches!(
            error,
            Some(
                SitemapError::Read { .. }
                    | SitemapError::Xml { .. }
                    | SitemapError::Truncated { .. }
            )
        ),
        "{error:?}"
    );
}

#[test]
fn entities_of_a_dtd_are_never_expanded() {
    // The billion laughs: each entity ten of the one before.
    let mut dtd = String::from("<!DOCTYPE urlset [\n<!ENTITY lol \"lol\">\n");
    for i in 1..10 {
        let prev = if i == 1 {
            "lol".to_string()
        } else {
            format!("lol{}", i - 1)
        };
        dtd.push_str(&format!(
            "<!ENTITY lol{i} \"{}\">\n",
            format!("&{prev};").repeat(10)
        ));
    }
    dtd.push_str("]>\n");
    let bomb = format!(
        "{dtd}<urlset><url><loc>https://example.com/&lol9;</loc></url><url><loc>https://example.com/ok</loc></url></urlset>"
    );
    let (items, error, _) = read(bomb.as_bytes());
    assert!(error.is_none(), "{error:?}");
    assert!(matches!(&items[0], Item::Skipped(s) if s.reason == SkipReason::Entity));
    assert_eq!(pages(&items), ["https://example.com/ok"]);
    // An entity in an Atom link's attribute: skipped too.
    let atom = "<feed><entry><link href=\"https://example.com/&lol;\"/></entry></feed>";
    assert!(
        matches!(&read(atom.as_bytes()).0[..], [Item::Skipped(s)] if s.reason == SkipReason::Entity)
    );
}

fn urlset_of(n: usize) -> String {
    let mut xml = String::from("<urlset>");
    for i in 0..n {
        xml.push_str(&format!("<url><loc>https://example.com/{i}</loc></url>"));
    }
    xml.push_str("</urlset>");
    xml
}

#[test]
fn fifty_thousand_urls_a_file_then_a_limit() {
    let (items, error, _) = read(urlset_of(60_000).as_bytes());
    assert!(error.is_none());
    assert_eq!(pages(&items).len(), 50_000);
    assert_eq!(items.last(), Some(&Item::Limit(Limit::Urls(50_000))));
    let text: String = (0..60_000)
        .map(|i| format!("https://example.com/{i}\n"))
        .collect();
    let (items, _, _) = read(text.as_bytes());
    assert_eq!(pages(&items).len(), 50_000);
    assert_eq!(items.last(), Some(&Item::Limit(Limit::Urls(50_000))));
    // Exactly at the limit: no report.
    let (items, _, _) = read(urlset_of(50_000).as_bytes());
    assert!(matches!(items.last(), Some(Item::Page(_))));
}

#[test]
fn a_gzip_bomb_stops_at_the_byte_limit() {
    // 64 MiB of comments after a page: 64 KiB gzipped, 50 MiB read, the page kept.
    let mut xml = String::from("<urlset><url><loc>https://example.com/first</loc></url>");
    let comment = "<!-- padding padding padding padding padding padding padding -->";
    while xml.len() < 64 << 20 {
        xml.push_str(comment);
    }
    xml.push_str("</urlset>");
    let bomb = gzip(xml.as_bytes());
    assert!(bomb.len() < 1 << 20, "{}", bomb.len());
    drop(xml);
    let mut reader = SitemapReader::new(&bomb[..]);
    let items: Vec<Item> = reader.by_ref().map(Result::unwrap).collect();
    assert_eq!(pages(&items), ["https://example.com/first"]);
    assert_eq!(items.last(), Some(&Item::Limit(Limit::Bytes(50 << 20))));
    assert_eq!(reader.bytes_read(), 50 << 20);
    // A text line the limit cuts is not kept: its end is missing.
    let text = b"https://example.com/1\nhttps://example.com/22222";
    let (items, _, _) = read_with(text, Limits::default().max_bytes(30));
    assert_eq!(pages(&items), ["https://example.com/1"]);
    assert_eq!(items.last(), Some(&Item::Limit(Limit::Bytes(30))));
    // A file of exactly the limit is read whole, without a report.
    let small = urlset_of(3);
    let limits = Limits::default().max_bytes(small.len() as u64);
    let (items, error, _) = read_with(small.as_bytes(), limits);
    assert!(error.is_none());
    assert_eq!((pages(&items).len(), items.len()), (3, 3));
}

#[test]
fn one_endless_element_is_not_held() {
    // A location of 5 MB: refused once it passes a megabyte, the page before kept.
    let xml = format!(
        "<urlset><url><loc>https://example.com/1</loc></url><url><loc>https://example.com/{}</loc></url></urlset>",
        "x".repeat(5 << 20)
    );
    let (items, error, _) = read(xml.as_bytes());
    assert_eq!(pages(&items), ["https://example.com/1"]);
    assert!(
        matches!(error, Some(SitemapError::ElementTooLarge { .. })),
        "{error:?}"
    );
    // A text line without end is cut at the URL limit, not held.
    let line = "h".repeat(5 << 20);
    let (items, error, _) = read(line.as_bytes());
    assert!(error.is_none());
    assert!(
        matches!(&items[..], [Item::Skipped(s)] if s.reason == SkipReason::TooLong && s.text.len() <= 2048)
    );
}

#[test]
fn broken_xml_keeps_what_came_before() {
    let cut = "<urlset><url><loc>https://example.com/1</loc></url><url><loc>https://example.com/2";
    let (items, error, _) = read(cut.as_bytes());
    assert_eq!(pages(&items), ["https://example.com/1"]);
    assert!(
        matches!(error, Some(SitemapError::Truncated { ref open, .. }) if open == "urlset"),
        "{error:?}"
    );
    let mismatched =
        "<urlset><url><loc>https://example.com/1</loc></url><url><loc>x</url></urlset>";
    let (items, error, _) = read(mismatched.as_bytes());
    assert_eq!(pages(&items), ["https://example.com/1"]);
    assert!(matches!(error, Some(SitemapError::Xml { .. })), "{error:?}");
    let html = "<!DOCTYPE html><html><body>Not found</body></html>";
    let (items, error, _) = read(html.as_bytes());
    assert!(items.is_empty());
    assert!(matches!(error, Some(SitemapError::NotASitemap { ref root }) if root == "html"));
}

#[test]
fn the_async_reader_gives_the_same_items() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    for bytes in [
        URLSET.as_bytes().to_vec(),
        gzip(URLSET.as_bytes()),
        b"https://example.com/1\nx\n".to_vec(),
    ] {
        let sync: Vec<Item> = parse(&bytes).map(Result::unwrap).collect();
        let asynced = runtime.block_on(async {
            // A small buffer: the body comes in pieces.
            let body = tokio::io::BufReader::with_capacity(7, &bytes[..]);
            let mut reader = AsyncSitemapReader::new(body);
            let mut items = Vec::new();
            while let Some(item) = reader.next().await {
                items.push(item.unwrap());
            }
            items
        });
        assert_eq!(sync, asynced);
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

        /// Whatever the bytes, the reader ends, without a panic, with at most one error last.
        #[test]
        fn any_bytes_end_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let results: Vec<_> = parse(&bytes).collect();
            let errors = results.iter().filter(|r| r.is_err()).count();
            prop_assert!(errors <= 1);
            if errors == 1 {
                prop_assert!(results.last().is_some_and(|r| r.is_err()));
            }
        }

        /// Sitemap-shaped noise (tags, entities, text) ends too, and the sync and async readers
        /// agree on it.
        #[test]
        fn sitemap_shaped_noise_ends_and_both_readers_agree(
            parts in proptest::collection::vec(prop_oneof![
                Just("<urlset>".to_string()), Just("</urlset>".to_string()),
                Just("<url>".to_string()), Just("</url>".to_string()),
                Just("<loc>".to_string()), Just("</loc>".to_string()),
                Just("<lastmod>2024-01-01</lastmod>".to_string()),
                Just("&amp;".to_string()), Just("&x;".to_string()), Just("<![CDATA[".to_string()),
                Just("]]>".to_string()), Just("<image:image>".to_string()),
                "https://[a-z]{1,5}\\.example/[a-z0-9]{0,8}",
                "[ -~]{0,12}",
            ], 0..40)
        ) {
            let bytes = parts.concat().into_bytes();
            let sync: Vec<String> = parse(&bytes).map(|r| format!("{r:?}")).collect();
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let asynced: Vec<String> = runtime.block_on(async {
                let mut reader = AsyncSitemapReader::new(tokio::io::BufReader::with_capacity(5, &bytes[..]));
                let mut out = Vec::new();
                while let Some(item) = reader.next().await {
                    out.push(format!("{item:?}"));
                }
                out
            });
            prop_assert_eq!(sync, asynced);
        }

        /// The pages of a well-formed urlset are read back exactly, in order.
        #[test]
        fn a_generated_urlset_reads_back(paths in proptest::collection::vec("[a-z0-9/_.-]{0,30}", 0..50)) {
            let urls: Vec<String> = paths.iter().map(|p| format!("https://example.com/{p}")).collect();
            let mut xml = String::from("<urlset>");
            for url in &urls {
                xml.push_str(&format!("<url><loc>{url}</loc></url>"));
            }
            xml.push_str("</urlset>");
            let expected: Vec<String> = urls.iter().map(|u| url::Url::parse(u).unwrap().to_string()).collect();
            prop_assert_eq!(pages(&read(xml.as_bytes()).0), expected);
        }
    }
}

/// Issue 53, point 6: CR, LF and CRLF each end a text line; a lone CR does not join two URLs.
#[test]
fn every_line_end_ends_a_text_line() {
    let text = b"https://example.com/n1\rhttps://example.com/n2\r\nhttps://example.com/n3\nhttps://example.com/n4\r";
    let (items, error, format) = read(text);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(format, Some(Format::Text));
    assert_eq!(
        pages(&items),
        [
            "https://example.com/n1",
            "https://example.com/n2",
            "https://example.com/n3",
            "https://example.com/n4"
        ]
    );
}

/// Issue 53, point 6: a URL with bytes that are not UTF-8 is skipped with its reason, in XML
/// and in text, not kept as a URL nobody listed (`%EF%BF%BD`).
#[test]
fn a_url_that_is_not_utf8_is_skipped_with_its_reason() {
    let xml = b"<urlset><url><loc>https://example.com/caf\xe9</loc></url><url><loc>https://example.com/ok</loc></url></urlset>";
    let text = b"https://example.com/caf\xe9\nhttps://example.com/ok\n";
    for bytes in [&xml[..], &text[..]] {
        let (items, error, _) = read(bytes);
        assert!(error.is_none(), "{error:?}");
        assert_eq!(pages(&items), ["https://example.com/ok"]);
        assert!(
            items
                .iter()
                .any(|i| matches!(i, Item::Skipped(s) if s.reason == SkipReason::NotUtf8)),
            "{items:?}"
        );
    }
}

/// Issue 53, point 7: a UTF-16 sitemap is an error, not an empty file.
#[test]
fn a_utf16_sitemap_is_refused() {
    let utf16 = |text: &str, bom: bool| {
        let mut bytes: Vec<u8> = if bom { vec![0xFF, 0xFE] } else { Vec::new() };
        bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        bytes
    };
    let xml = "<urlset><url><loc>https://example.com/a</loc></url></urlset>";
    for bytes in [
        utf16(xml, true),
        utf16(xml, false),
        utf16("https://example.com/a\n", false),
    ] {
        let (items, error, _) = read(&bytes);
        assert!(items.is_empty(), "{items:?}");
        assert!(matches!(error, Some(SitemapError::Utf16)), "{error:?}");
        assert!(error.unwrap().to_string().contains("UTF-16"));
    }
}

/// Issue 53, point 7: an element too large says where it began (after what was read), not
/// "byte 0: not a sitemap".
#[test]
fn an_element_too_large_says_where_it_began() {
    let xml = format!(
        "<urlset><url><loc>https://example.com/1</loc></url><url><loc>https://example.com/{}</loc></url></urlset>",
        "x".repeat(3 << 20)
    );
    let (items, error, _) = read(xml.as_bytes());
    assert_eq!(pages(&items), ["https://example.com/1"]);
    let Some(SitemapError::ElementTooLarge { at, .. }) = error else {
        panic!("{error:?}");
    };
    assert!(at > 0, "it began after the first page, at {at}");
    let message = SitemapError::ElementTooLarge { at, max: 1 << 20 }.to_string();
    assert!(!message.contains("not a sitemap"), "{message}");
    assert!(
        message.contains("the rest of the file was not read"),
        "{message}"
    );
}

/// Issue 53, point 9: RSS `<pubDate>` (RFC 822) and Atom `<updated>` are a page's `lastmod`.
#[test]
fn feed_dates_are_lastmod() {
    let rss = br#"<rss version="2.0"><channel><item><link>https://example.com/a</link><pubDate>Mon, 06 Sep 2009 16:45:00 +0000</pubDate></item><item><link>https://example.com/b</link><pubDate>never</pubDate></item></channel></rss>"#;
    let (items, error, _) = read(rss);
    assert!(error.is_none(), "{error:?}");
    let lastmods: Vec<(Option<i64>, Option<String>)> = items
        .iter()
        .filter_map(|i| match i {
            Item::Page(p) => Some((
                p.lastmod.as_ref().map(LastMod::unix_seconds),
                p.invalid_lastmod.as_deref().map(String::from),
            )),
            _ => None,
        })
        .collect();
    let expected = LastMod::parse("2009-09-06T16:45:00Z")
        .unwrap()
        .unix_seconds();
    assert_eq!(
        lastmods,
        [(Some(expected), None), (None, Some("never".to_string()))]
    );
    let atom = br#"<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="https://example.com/c"/><updated>2009-09-06T16:45:00Z</updated></entry></feed>"#;
    let (items, _, _) = read(atom);
    let Some(Item::Page(page)) = items.first() else {
        panic!("{items:?}");
    };
    assert_eq!(
        page.lastmod.as_ref().map(LastMod::unix_seconds),
        Some(expected)
    );
}
