//! A network of the test's own: the test runs again inside a new network and mount namespace
//! (`unshare -mn`, as root, as CI runs), where only loopback exists, with the addresses it asks
//! for on it ("public" ones such as 203.0.113.7 and internal ones such as 10.9.9.9 alike) and a
//! DNS server the test scripts (answers that change, lookups that fail) as the system resolver.
//! No packet leaves the namespace.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::process::Command;
use std::sync::{Arc, Mutex};

/// The environment variable that tells a test process it runs inside its namespace.
const INSIDE: &str = "ROBOTS_TEST_NETNS";

/// Runs the test `name` (its full path, as `cargo test` names it) again inside a namespace of
/// its own with `addresses` on its loopback interface, and returns `true` there; outside, waits
/// for that run, panics if it failed, and returns `false` (the caller then returns). Inside,
/// `/etc/resolv.conf` names the DNS server [`Dns::start`] serves, and `/etc/hosts` knows only
/// `localhost`.
pub fn inside(name: &str, addresses: &[&str]) -> bool {
    if std::env::var(INSIDE).as_deref() == Ok(name) {
        setup(addresses);
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new("unshare")
        .args(["--mount", "--net", "--"])
        .arg(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(INSIDE, name)
        .output()
        .unwrap_or_else(|e| panic!("unshare: {e} (these tests need util-linux's unshare)"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(
        output.status.success(),
        "{name} inside its network namespace failed (these tests run as root, as CI does):\n{stdout}\n{stderr}"
    );
    // The test ran (and was not filtered out by name).
    assert!(
        stdout.contains("1 passed"),
        "{name} did not run inside its namespace:\n{stdout}\n{stderr}"
    );
    eprintln!("{stderr}");
    false
}

fn run(program: &str, args: &[&str]) {
    let status = Command::new(program)
        .args(args)
        .status()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(status.success(), "{program} {args:?} failed");
}

fn setup(addresses: &[&str]) {
    run("ip", &["link", "set", "lo", "up"]);
    for address in addresses {
        let prefix = if address.contains(':') { "128" } else { "32" };
        run(
            "ip",
            &["addr", "add", &format!("{address}/{prefix}"), "dev", "lo"],
        );
    }
    // The namespace's own resolver configuration, seen by this process and its children only.
    let dir = std::env::temp_dir().join(format!("robots-netns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let resolv = dir.join("resolv.conf");
    std::fs::write(
        &resolv,
        "nameserver 127.0.0.1\noptions attempts:1 timeout:2\n",
    )
    .expect("resolv.conf");
    let hosts = dir.join("hosts");
    std::fs::write(&hosts, "127.0.0.1 localhost\n::1 localhost\n").expect("hosts");
    // A private mount tree first, so the binds below stay in this namespace.
    run("mount", &["--make-rprivate", "/"]);
    for (file, over) in [(&resolv, "/etc/resolv.conf"), (&hosts, "/etc/hosts")] {
        run("mount", &["--bind", &file.to_string_lossy(), over]);
    }
}

/// One scripted answer of [`Dns`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// An A record (TTL 0).
    A(Ipv4Addr),
    /// SERVFAIL: the lookup fails.
    ServFail,
}

/// A DNS server on 127.0.0.1:53 (UDP) answering A queries from a script: each name's replies
/// in turn, the last one again for every later query. AAAA queries get no records; a name not
/// scripted gets NXDOMAIN. Counts the A queries per name.
#[derive(Clone, Default)]
pub struct Dns {
    script: Arc<Mutex<HashMap<String, Script>>>,
}

/// A name's replies, and how many A queries it got.
type Script = (Vec<Reply>, usize);

impl Dns {
    /// Starts it (inside a namespace made by [`inside`]).
    pub async fn start() -> Dns {
        let socket = tokio::net::UdpSocket::bind("127.0.0.1:53")
            .await
            .expect("bind 127.0.0.1:53 (inside the test's namespace, as root)");
        let dns = Dns::default();
        let serving = dns.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 1500];
            while let Ok((n, peer)) = socket.recv_from(&mut buf).await {
                if let Some(answer) = serving.answer(&buf[..n]) {
                    let _ = socket.send_to(&answer, peer).await;
                }
            }
        });
        dns
    }

    /// Scripts `name`'s answers (lowercase, no trailing dot).
    pub fn script(&self, name: &str, replies: &[Reply]) {
        self.script
            .lock()
            .unwrap()
            .insert(name.to_string(), (replies.to_vec(), 0));
    }

    /// How many A queries `name` got.
    pub fn queries(&self, name: &str) -> usize {
        self.script
            .lock()
            .unwrap()
            .get(name)
            .map_or(0, |(_, asked)| *asked)
    }

    /// The answer to one query packet (`None`: not a query this server reads).
    fn answer(&self, query: &[u8]) -> Option<Vec<u8>> {
        if query.len() < 12 {
            return None;
        }
        // The question: labels, then type and class.
        let mut at = 12;
        let mut labels = Vec::new();
        loop {
            let len = *query.get(at)? as usize;
            at += 1;
            if len == 0 {
                break;
            }
            labels.push(String::from_utf8_lossy(query.get(at..at + len)?).to_ascii_lowercase());
            at += len;
        }
        let qtype = u16::from_be_bytes([*query.get(at)?, *query.get(at + 1)?]);
        let question_end = at + 4;
        let question = query.get(12..question_end)?;
        let name = labels.join(".");
        let reply = {
            let mut script = self.script.lock().unwrap();
            match script.get_mut(&name) {
                None => None,
                Some(_) if qtype != 1 => Some(None),
                Some((replies, asked)) => {
                    let reply = replies.get(*asked).or(replies.last()).copied();
                    *asked += 1;
                    Some(reply)
                }
            }
        };
        // Header: the query's id, a response, recursion available; one question.
        let mut out = vec![query[0], query[1], 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0];
        match reply {
            None => out[3] = 0x83, // NXDOMAIN
            Some(None) => {}       // no records of that type
            Some(Some(Reply::ServFail)) => out[3] = 0x82,
            Some(Some(Reply::A(address))) => {
                out[7] = 1;
                out.extend_from_slice(question);
                // A pointer to the question's name, type A, class IN, TTL 0, 4 bytes.
                out.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4]);
                out.extend_from_slice(&address.octets());
                return Some(out);
            }
        }
        out.extend_from_slice(question);
        Some(out)
    }
}
