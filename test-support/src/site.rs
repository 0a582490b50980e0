//! A raw HTTP/1.1 test site on 127.0.0.1 that logs every request exactly as received (target,
//! `User-Agent`, `From`, arrival time) and answers from a routing function. One request per
//! connection. Shared by the tests of every package.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request as the site saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub target: String,
    pub user_agent: Option<String>,
    pub from: Option<String>,
    /// The `Host` header, without its port.
    pub host: Option<String>,
    pub at: Instant,
    /// The request head as received (request line and headers).
    pub head: String,
}

/// An answer: status line (`200 OK`), extra header lines, body, a delay before answering, and
/// one in the middle of the body (the head and half the body go first: a slow body).
/// An empty status resets the connection instead of answering; `cut_after` sends only that
/// many bytes of the body (its whole length announced) and closes: a body that breaks off.
pub struct Answer {
    pub status: &'static str,
    pub headers: Vec<String>,
    pub body: String,
    pub delay: Duration,
    pub body_delay: Duration,
    pub cut_after: Option<usize>,
}

impl Answer {
    pub fn ok(body: impl Into<String>) -> Answer {
        Answer {
            status: "200 OK",
            headers: vec!["Content-Type: text/html".into()],
            body: body.into(),
            delay: Duration::ZERO,
            body_delay: Duration::ZERO,
            cut_after: None,
        }
    }

    /// No answer: the connection is reset (RST) after the delay.
    pub fn reset() -> Answer {
        Answer::status("", &[])
    }

    pub fn status(status: &'static str, headers: &[&str]) -> Answer {
        Answer {
            status,
            headers: headers.iter().map(|h| h.to_string()).collect(),
            body: String::new(),
            delay: Duration::ZERO,
            body_delay: Duration::ZERO,
            cut_after: None,
        }
    }
}

type Route = dyn Fn(&str, usize) -> Answer + Send + Sync;

#[derive(Clone)]
pub struct Site {
    pub base: String,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl Site {
    /// Starts the site; `route(target, how_many_times_seen_before)` answers each request.
    pub async fn start(route: impl Fn(&str, usize) -> Answer + Send + Sync + 'static) -> Site {
        Site::start_on("127.0.0.1:0", route).await
    }

    /// [`Site::start`] on another loopback address (`127.0.0.2:0`, `[::1]:0`): a server of "the
    /// user's own network" for the address rule's tests.
    pub async fn start_on(
        address: &str,
        route: impl Fn(&str, usize) -> Answer + Send + Sync + 'static,
    ) -> Site {
        let listener = TcpListener::bind(address)
            .await
            .unwrap_or_else(|e| panic!("bind {address}: {e}"));
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let log: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let route: Arc<Route> = Arc::new(route);
        let server_log = log.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let log = server_log.clone();
                let route = route.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 65536 {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let text = String::from_utf8_lossy(&head).into_owned();
                    let target = text
                        .lines()
                        .next()
                        .and_then(|l| l.split(' ').nth(1))
                        .unwrap_or("")
                        .to_string();
                    let header = |name: &str| {
                        text.split("\r\n").skip(1).find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
                        })
                    };
                    let seen_before = {
                        let mut log = log.lock().unwrap();
                        let before = log.iter().filter(|s| s.target == target).count();
                        log.push(Seen {
                            target: target.clone(),
                            user_agent: header("user-agent"),
                            from: header("from"),
                            host: header("host").map(|h| match h.rsplit_once(':') {
                                Some((name, port)) if !port.contains(']') => name.to_string(),
                                _ => h,
                            }),
                            at: Instant::now(),
                            head: text.clone(),
                        });
                        before
                    };
                    let answer = route(&target, seen_before);
                    tokio::time::sleep(answer.delay).await;
                    if answer.status.is_empty() {
                        // Closed with a zero linger: the peer sees a reset, not an end. (The
                        // deprecation is about blocking on drop, which a zero linger does not.)
                        #[allow(deprecated)]
                        let _ = stream.set_linger(Some(Duration::ZERO));
                        drop(stream);
                        return;
                    }
                    let mut response = format!("HTTP/1.1 {}\r\n", answer.status);
                    for line in &answer.headers {
                        response.push_str(line);
                        response.push_str("\r\n");
                    }
                    response.push_str(&format!(
                        "Content-Length: {}\r\nConnection: close\r\n\r\n",
                        answer.body.len(),
                    ));
                    if let Some(cut) = answer.cut_after {
                        let sent = &answer.body.as_bytes()[..cut.min(answer.body.len())];
                        let _ = stream.write_all(response.as_bytes()).await;
                        let _ = stream.write_all(sent).await;
                        let _ = stream.shutdown().await;
                        return;
                    }
                    let middle = (0..=answer.body.len() / 2)
                        .rev()
                        .find(|i| answer.body.is_char_boundary(*i))
                        .unwrap_or(0);
                    let (first, rest) = answer.body.split_at(middle);
                    response.push_str(first);
                    let _ = stream.write_all(response.as_bytes()).await;
                    if !answer.body_delay.is_zero() {
                        let _ = stream.flush().await;
                        tokio::time::sleep(answer.body_delay).await;
                    }
                    let _ = stream.write_all(rest.as_bytes()).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        Site { base, log }
    }

    /// The socket address it listens on (for `reqwest::ClientBuilder::resolve`).
    pub fn addr(&self) -> std::net::SocketAddr {
        self.base
            .trim_start_matches("http://")
            .parse()
            .expect("the base is http://ip:port")
    }

    pub fn port(&self) -> u16 {
        self.addr().port()
    }

    /// A URL of this site under another name (resolved to it with `--resolve`).
    pub fn url_as(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.port())
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.log.lock().unwrap().clone()
    }

    /// Requests other than robots.txt.
    pub fn pages(&self) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.target != "/robots.txt")
            .collect()
    }

    pub fn count(&self, target: &str) -> usize {
        self.seen().iter().filter(|s| s.target == target).count()
    }

    /// Every request these sites saw, as `BASE TARGET`: what a test that must reach none of them
    /// asserts empty.
    pub fn requests_to(sites: &[Site]) -> Vec<String> {
        sites
            .iter()
            .flat_map(|site| {
                site.seen()
                    .into_iter()
                    .map(|seen| format!("{} {}", site.base, seen.target))
            })
            .collect()
    }

    pub fn clear(&self) {
        self.log.lock().unwrap().clear();
    }
}
