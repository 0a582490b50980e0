//! What a conditional refresh saves, in bytes on the wire: every corpus file is fetched once
//! (`fetch`, a 200 with its body, `ETag` and `Last-Modified`), then refreshed with its
//! validators (`revalidate`, a 304 without a body), from a raw HTTP/1.1 server on 127.0.0.1 that
//! counts the bytes it reads and writes. Bytes, not time: no criterion here.
//!
//! ```sh
//! ROBOTS_CORPUS=../shared/corpus/robots cargo bench -p robots-bench --bench revalidation
//! ```

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use robots_fetch::{FetchConfig, FetchOutcome, Origin, fetch, revalidate};
use robots_test_support::corpus::{corpus_dir, corpus_files};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The file being served, and the bytes read and written so far.
#[derive(Default)]
struct Server {
    file: Mutex<Arc<Vec<u8>>>,
    read: AtomicU64,
    written: AtomicU64,
}

impl Server {
    /// The response to a request head: a 304 when it names the file's ETag, else the file.
    fn answer(&self, head: &str) -> Vec<u8> {
        let file = self.file.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let etag = format!("\"{:x}-{:x}\"", file.len(), fnv(&file));
        let asked = head.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("if-none-match")
                .then(|| value.trim().to_string())
        });
        // Headers both answers carry, as a static file server sends them.
        let common = format!(
            "ETag: {etag}\r\nCache-Control: max-age=86400\r\nDate: Thu, 26 Nov 2026 08:00:00 GMT\r\nConnection: close\r\n"
        );
        if asked.as_deref() == Some(etag.as_str()) {
            return format!("HTTP/1.1 304 Not Modified\r\n{common}\r\n").into_bytes();
        }
        let mut out = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nLast-Modified: Tue, 24 Nov 2026 10:00:00 GMT\r\n{common}\r\n",
            file.len()
        )
        .into_bytes();
        out.extend_from_slice(&file);
        out
    }
}

/// FNV-1a: an ETag of the file's bytes.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

async fn serve(listener: TcpListener, server: Arc<Server>) {
    while let Ok((mut stream, _)) = listener.accept().await {
        let server = server.clone();
        tokio::spawn(async move {
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            server.read.fetch_add(head.len() as u64, Ordering::Relaxed);
            let answer = server.answer(&String::from_utf8_lossy(&head));
            server
                .written
                .fetch_add(answer.len() as u64, Ordering::Relaxed);
            let _ = stream.write_all(&answer).await;
            let _ = stream.shutdown().await;
        });
    }
}

fn gzipped(body: &[u8]) -> usize {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let _ = encoder.write_all(body);
    encoder.finish().map_or(body.len(), |out| out.len())
}

fn median(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or(0)
}

fn main() {
    let Some(dir) = corpus_dir(env!("CARGO_MANIFEST_DIR"), "the revalidation bytes bench") else {
        return;
    };
    let files = corpus_files(&dir, robots_core::MAX_BODY_BYTES);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let origin = Origin::parse(&format!("http://{}", listener.local_addr().expect("address")))
            .expect("origin");
        let server = Arc::new(Server::default());
        tokio::spawn(serve(listener, server.clone()));
        let config = FetchConfig::new(http::HeaderValue::from_static(
            "FooBot/1.0 (+https://foo.example/bot)",
        ));
        let client = robots_fetch::reqwest_client(&config).expect("client");
        let exchange = |server: &Server| {
            (
                server.read.swap(0, Ordering::Relaxed),
                server.written.swap(0, Ordering::Relaxed),
            )
        };
        let (mut full, mut conditional) = (Vec::new(), Vec::new());
        let (mut body_bytes, mut gzip_bytes) = (0u64, 0u64);
        for (name, body) in &files {
            *server.file.lock().unwrap_or_else(|e| e.into_inner()) = Arc::new(body.clone());
            let FetchOutcome::Parsed { validators, .. } = fetch(&client, &origin, &config).await
            else {
                panic!("{name}: not fetched");
            };
            full.push(exchange(&server));
            let outcome = revalidate(&client, &origin, &config, &validators).await;
            assert!(
                matches!(outcome, FetchOutcome::NotModified { .. }),
                "{name}: {outcome:?}"
            );
            conditional.push(exchange(&server));
            body_bytes += body.len() as u64;
            gzip_bytes += gzipped(body) as u64;
        }
        let total = |pairs: &[(u64, u64)]| pairs.iter().map(|(r, w)| r + w).sum::<u64>();
        let n = files.len() as u64;
        let (full_total, conditional_total) = (total(&full), total(&conditional));
        println!("files: {n}, bodies {body_bytes} bytes (gzip would send {gzip_bytes})");
        println!(
            "plain refresh: {full_total} bytes ({} per file, median {}), request {} + response {}",
            full_total / n,
            median(full.iter().map(|(r, w)| r + w).collect()),
            full.iter().map(|p| p.0).sum::<u64>() / n,
            full.iter().map(|p| p.1).sum::<u64>() / n,
        );
        println!(
            "conditional refresh (304): {conditional_total} bytes ({} per file, median {}), request {} + response {}",
            conditional_total / n,
            median(conditional.iter().map(|(r, w)| r + w).collect()),
            conditional.iter().map(|p| p.0).sum::<u64>() / n,
            conditional.iter().map(|p| p.1).sum::<u64>() / n,
        );
        println!(
            "saved: {:.1}% of the bytes ({:.1}% had the server gzipped the 200s)",
            100.0 * (1.0 - conditional_total as f64 / full_total as f64),
            100.0
                * (1.0
                    - conditional_total as f64
                        / (full_total - body_bytes + gzip_bytes) as f64),
        );
    });
}
