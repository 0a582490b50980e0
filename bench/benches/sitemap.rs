//! Sitemap parsing (issue 46): robots-sitemap against the `sitemap` crate (0.4, on xml-rs) on
//! the same large files in one run, in MB/s of XML; then the most memory robots-sitemap holds
//! while reading a 50 MiB file, counted by a global allocator.
//!
//! ```sh
//! cargo bench -p robots-bench --bench sitemap
//! ```
//!
//! Files: 50,000 `<url>` entries with `lastmod`, `changefreq`, `priority` and an image extension
//! (the largest file sitemaps.org allows by count, 12 MB), and the same padded with
//! `xhtml:link` alternates to 50 MiB (the largest by size).

use std::time::Instant;

use criterion::{Criterion, Throughput};
use robots_sitemap::{Item, SitemapReader};
use robots_test_support::alloc::{Counting, live_bytes};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn urlset(alternates: usize) -> Vec<u8> {
    let mut xml = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:xhtml="http://www.w3.org/1999/xhtml">
"#,
    );
    for i in 0..50_000 {
        xml.push_str(&format!(
            "  <url>\n    <loc>https://www.example.com/articles/{i}/a-reasonably-long-slug-for-page-{i}.html</loc>\n    <lastmod>2024-0{}-1{}T10:{:02}:00+00:00</lastmod>\n    <changefreq>weekly</changefreq>\n    <priority>0.{}</priority>\n    <image:image><image:loc>https://img.example.com/{i}.jpg</image:loc></image:image>\n",
            1 + i % 9,
            i % 10,
            i % 60,
            i % 10
        ));
        for lang in 0..alternates {
            xml.push_str(&format!(
                "    <xhtml:link rel=\"alternate\" hreflang=\"l{lang}\" href=\"https://www.example.com/l{lang}/articles/{i}.html\"/>\n"
            ));
        }
        xml.push_str("  </url>\n");
    }
    xml.push_str("</urlset>\n");
    xml.into_bytes()
}

fn ours(xml: &[u8]) -> usize {
    SitemapReader::new(xml)
        .filter(|item| matches!(item, Ok(Item::Page(_))))
        .count()
}

fn peer(xml: &[u8]) -> usize {
    sitemap::reader::SiteMapReader::new(xml)
        .filter(|entity| matches!(entity, sitemap::reader::SiteMapEntity::Url(_)))
        .count()
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args().sample_size(10);
    let count_file = urlset(0);
    let size_file = {
        // Alternates enough to pass 50 MiB by a little, then the file cut to the limit's
        // size at an entry's end.
        let mut xml = urlset(12);
        let limit = 50 << 20;
        if xml.len() > limit {
            let end = xml[..limit - 12]
                .windows(8)
                .rposition(|w| w == b"</url>\n ")
                .map_or(limit - 12, |at| at + 7);
            xml.truncate(end);
            xml.extend_from_slice(b"</urlset>\n");
        }
        xml
    };
    for (name, xml) in [("12 MB, 50,000 URLs", &count_file), ("50 MiB", &size_file)] {
        assert_eq!(ours(xml), peer(xml), "both read every page of {name}");
        let mut group = criterion.benchmark_group(format!("sitemap {name}"));
        group.throughput(Throughput::Bytes(xml.len() as u64));
        group.bench_function("robots-sitemap", |b| b.iter(|| ours(xml)));
        group.bench_function("sitemap 0.4", |b| b.iter(|| peer(xml)));
        group.finish();
    }

    // Memory: the most bytes alive while reading the 50 MiB file (the file itself excluded),
    // looked at after every item.
    let before = live_bytes();
    let started = Instant::now();
    let mut most = 0;
    let mut pages = 0;
    for item in SitemapReader::new(&size_file[..]) {
        most = most.max(live_bytes() - before);
        if matches!(item, Ok(Item::Page(_))) {
            pages += 1;
        }
    }
    println!(
        "robots-sitemap read {} bytes ({pages} pages) in {:.2} s holding at most {most} bytes",
        size_file.len(),
        started.elapsed().as_secs_f64()
    );
}
