//! A real `redis-server` for tests, started on a free port of 127.0.0.1 and killed on drop.
//! Shared by the fleet tests of every package. When no `redis-server`
//! binary exists, `RedisServer::start` says so on stderr and returns `None`; the tests then
//! skip (`.ci/run` installs the binary, so CI always runs them).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct RedisServer {
    pub port: u16,
    child: Option<Child>,
    /// Extra arguments (cluster mode) and the folder the server runs in.
    extra: Vec<String>,
    dir: Option<std::path::PathBuf>,
}

/// The first port of the range the system hands out for outgoing connections (Linux's
/// `ip_local_port_range`; 32768 by default).
fn ephemeral_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// A free port of 127.0.0.1 in `low..high` (at random), or `None`. Below the ephemeral range:
/// a server restarted on its port must find it free, and an outgoing connection of any
/// process on the machine could take a port of that range while the server is down.
fn free_port_in(low: u16, high: u16, also_free: impl Fn(u16) -> bool) -> Option<u16> {
    use std::hash::{BuildHasher, Hasher};
    let span = u64::from(high.checked_sub(low).filter(|s| *s > 0)?);
    for _ in 0..200 {
        let mut random = std::collections::hash_map::RandomState::new().build_hasher();
        random.write_u64(span);
        let port = low + u16::try_from(random.finish() % span).ok()?;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() && also_free(port) {
            return Some(port);
        }
    }
    None
}

/// A free port for a server that may be restarted on it.
fn free_port() -> u16 {
    let high = ephemeral_start();
    free_port_in(high / 2, high, |_| true).expect("a free port on 127.0.0.1")
}

fn binary() -> Option<String> {
    let candidates = [
        "redis-server",
        "/usr/bin/redis-server",
        "/usr/local/bin/redis-server",
    ];
    candidates
        .iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok()
        })
        .map(|c| c.to_string())
}

impl RedisServer {
    /// A fresh server, or `None` (with a message) when there is no `redis-server` binary.
    pub fn start() -> Option<RedisServer> {
        RedisServer::start_with(&[])
    }

    /// A fresh server started with extra arguments (`--maxmemory 10mb`), or `None` as `start`.
    pub fn start_with(args: &[&str]) -> Option<RedisServer> {
        if binary().is_none() {
            eprintln!(
                "SKIPPED: no redis-server binary (apt-get install -y redis-server); fleet test not run"
            );
            return None;
        }
        // A port found free can be taken before the server binds it (tests run in parallel):
        // then another.
        for _ in 0..5 {
            let mut server = RedisServer {
                port: free_port(),
                child: None,
                extra: args.iter().map(|a| a.to_string()).collect(),
                dir: None,
            };
            if server.try_start() {
                return Some(server);
            }
        }
        panic!("redis-server did not start on any of five free ports");
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A replica of `master` on a free port, once it has synchronised.
    pub fn replica_of(master: &RedisServer) -> RedisServer {
        let port = free_port();
        let mut replica = RedisServer {
            port,
            child: None,
            extra: vec![
                "--replicaof".into(),
                "127.0.0.1".into(),
                master.port.to_string(),
            ],
            dir: None,
        };
        replica.restart();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !replica
            .command(&["INFO", "replication"])
            .contains("master_link_status:up")
        {
            assert!(Instant::now() < deadline, "the replica did not synchronise");
            std::thread::sleep(Duration::from_millis(20));
        }
        replica
    }

    /// Starts the server again on the same port (after `stop`).
    pub fn restart(&mut self) {
        assert!(
            self.try_start(),
            "redis-server did not answer on port {}",
            self.port
        );
    }

    /// Starts the server on its port; false when it exits (the port is taken) or does not
    /// answer within 10 s.
    fn try_start(&mut self) -> bool {
        let binary = binary().expect("redis-server");
        let child = Command::new(binary)
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "no",
            ])
            .args(&self.extra)
            .current_dir(self.dir.clone().unwrap_or_else(std::env::temp_dir))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.ping() {
                return true;
            }
            let exited = self
                .child
                .as_mut()
                .is_none_or(|child| !matches!(child.try_wait(), Ok(None)));
            if exited {
                self.child = None;
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.stop();
        false
    }

    /// Kills the server (as a crash would).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn ping(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
        if stream.write_all(b"PING\r\n").is_err() {
            return false;
        }
        let mut reply = [0u8; 7];
        stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
    }

    /// The integer a command answers (`PTTL key`, `DBSIZE`), or `None` for another reply.
    pub fn integer(&self, args: &[&str]) -> Option<i64> {
        self.command(args).trim().strip_prefix(':')?.parse().ok()
    }

    /// Runs one command through redis-cli-free RESP and returns the raw reply (for checks such
    /// as `PTTL key`).
    pub fn command(&self, args: &[&str]) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .expect("timeout");
        let mut request = format!("*{}\r\n", args.len());
        for arg in args {
            request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
        }
        stream.write_all(request.as_bytes()).expect("write");
        let mut reply = vec![0u8; 65536];
        let n = stream.read(&mut reply).unwrap_or(0);
        String::from_utf8_lossy(&reply[..n]).into_owned()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A real Redis Cluster of three masters, each a `redis-server` in cluster mode on a free port
/// of 127.0.0.1 (its bus port, +10000, free too), with the 16,384 slots split between them;
/// with [`RedisCluster::start_with_replicas`], a replica of each too, which the cluster
/// promotes when its master dies. `None`, with a loud SKIPPED message, when there is no
/// `redis-server` or the cluster does not form.
pub struct RedisCluster {
    /// The masters first (`nodes[0..3]`), then their replicas (`nodes[3 + i]` of master `i`).
    pub nodes: Vec<RedisServer>,
    _dir: TempDir,
}

/// The text of a RESP bulk string reply (`$<n>\r\n<text>\r\n`).
fn bulk(reply: &str) -> String {
    reply.lines().nth(1).unwrap_or_default().trim().to_string()
}

/// A folder removed on drop (the nodes' `nodes.conf` files).
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn free_cluster_port() -> Option<u16> {
    // The node's port and its bus port (+10000), both below the ephemeral range.
    let high = ephemeral_start().checked_sub(10_000)?;
    free_port_in(high / 2, high, |port| {
        TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok()
    })
}

impl RedisCluster {
    pub fn start() -> Option<RedisCluster> {
        RedisCluster::start_nodes(false)
    }

    /// Three masters and a replica of each, with a node timeout of one second: a master killed
    /// is replaced by its replica within a few seconds.
    pub fn start_with_replicas() -> Option<RedisCluster> {
        RedisCluster::start_nodes(true)
    }

    fn start_nodes(replicas: bool) -> Option<RedisCluster> {
        if binary().is_none() {
            eprintln!(
                "SKIPPED: no redis-server binary (apt-get install -y redis-server); cluster test not run"
            );
            return None;
        }
        match RedisCluster::form(replicas) {
            Ok(cluster) => Some(cluster),
            Err(why) => {
                eprintln!(
                    "SKIPPED: a Redis Cluster could not be started here ({why}); cluster test not run"
                );
                None
            }
        }
    }

    fn form(replicas: bool) -> Result<RedisCluster, String> {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "robots-cluster-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let dir = TempDir(dir);
        let mut nodes = Vec::new();
        let count = if replicas { 6 } else { 3 };
        let timeout = if replicas { "1000" } else { "5000" };
        for _ in 0..count {
            let port = free_cluster_port().ok_or("no free port pair")?;
            let mut node = RedisServer {
                port,
                child: None,
                extra: [
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    &format!("nodes-{port}.conf"),
                    "--cluster-node-timeout",
                    timeout,
                    // (A replica's first sync starts at once, not after 5 s.)
                    "--repl-diskless-sync-delay",
                    "0",
                ]
                .map(String::from)
                .to_vec(),
                dir: Some(dir.0.clone()),
            };
            node.restart();
            nodes.push(node);
        }
        // Slots split in three; every node meets the first.
        let ranges = [(0, 5460), (5461, 10922), (10923, 16383)];
        for (node, (from, to)) in nodes[..3].iter().zip(ranges) {
            let reply = node.command(&[
                "CLUSTER",
                "ADDSLOTSRANGE",
                &from.to_string(),
                &to.to_string(),
            ]);
            if !reply.starts_with("+OK") {
                return Err(format!("ADDSLOTSRANGE: {}", reply.trim()));
            }
        }
        for node in &nodes[1..] {
            let reply = nodes[0].command(&["CLUSTER", "MEET", "127.0.0.1", &node.port.to_string()]);
            if !reply.starts_with("+OK") {
                return Err(format!("MEET: {}", reply.trim()));
            }
        }
        let known = format!("cluster_known_nodes:{count}");
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut replicating = !replicas;
        loop {
            let ready = nodes.iter().all(|n| {
                let info = n.command(&["CLUSTER", "INFO"]);
                info.contains("cluster_state:ok") && info.contains(&known)
            });
            if ready && !replicating {
                // Each replica follows its master once every node knows every other.
                for i in 0..3 {
                    let id = bulk(&nodes[i].command(&["CLUSTER", "MYID"]));
                    let reply = nodes[3 + i].command(&["CLUSTER", "REPLICATE", &id]);
                    if !reply.starts_with("+OK") {
                        return Err(format!("REPLICATE: {}", reply.trim()));
                    }
                }
                replicating = true;
                continue;
            }
            let synced = !replicas
                || nodes[3..].iter().all(|n| {
                    n.command(&["INFO", "replication"])
                        .contains("master_link_status:up")
                });
            if ready && synced {
                break;
            }
            if ready {
                break;
            }
            if Instant::now() > deadline {
                return Err("the cluster did not reach cluster_state:ok in 20 s".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(RedisCluster { nodes, _dir: dir })
    }

    /// Whether node `i` is a master now (a replica promoted says so).
    pub fn is_master(&self, i: usize) -> bool {
        self.nodes[i]
            .command(&["ROLE"])
            .lines()
            .nth(2)
            .is_some_and(|role| role == "master")
    }

    /// `redis+cluster://127.0.0.1:<port>,…/`.
    pub fn url(&self) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!("redis+cluster://{}/", nodes.join(","))
    }

    /// How many keys each node holds.
    pub fn keys_per_node(&self) -> Vec<usize> {
        self.nodes
            .iter()
            .map(|n| {
                n.integer(&["DBSIZE"])
                    .and_then(|n| usize::try_from(n).ok())
                    .unwrap_or(0)
            })
            .collect()
    }
}
