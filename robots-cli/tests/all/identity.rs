//! Web Bot Auth through the binary: `robots key generate` and `directory`, a crawl (one process
//! of a fleet on a real Redis) that signs every request it sends (robots.txt, pages, a redirect
//! hop, a retry), each signature checked by Cloudflare's `web-bot-auth` crate and by a verifier
//! written here from the RFC (neither the library's), then by `robots key verify`.
#![cfg(feature = "redis")]

use crate::cli::robots;
use crate::crawl::{UA, crawl_async};
use crate::site::{Answer, Site};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

/// A folder of its own for one test's files.
fn folder(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("robots-identity-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A header of a request head as the site received it (names are case-insensitive).
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.split("\r\n").skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim()
            .eq_ignore_ascii_case(name)
            .then_some(value.trim())
    })
}

/// Verifies a captured request's signature from first principles (RFC 9421 sections 2.5 and
/// 3.2, the webbotauth profile): the base built by hand from the headers, the Ed25519 check
/// with the directory's public key. Returns the signature's parameters.
fn verify_by_hand(head: &str, public_x: &str) -> String {
    let input = header(head, "signature-input").expect("Signature-Input");
    let signature = header(head, "signature").expect("Signature");
    let agent = header(head, "signature-agent").expect("Signature-Agent");
    let params = input.strip_prefix("sig1=").expect("label sig1");
    assert!(
        params.starts_with("(\"@authority\" \"signature-agent\";key=\"sig1\");"),
        "{params}"
    );
    // Host names the authority as the client connected (an explicit port included).
    let authority = header(head, "host").unwrap().to_ascii_lowercase();
    let member = agent.strip_prefix("sig1=").expect("a member sig1");
    let base = format!(
        "\"@authority\": {authority}\n\"signature-agent\";key=\"sig1\": {member}\n\"@signature-params\": {params}"
    );
    let bytes = STANDARD
        .decode(
            signature
                .strip_prefix("sig1=:")
                .and_then(|s| s.strip_suffix(':'))
                .expect("sig1=:…:"),
        )
        .unwrap();
    let key = ed25519_dalek::VerifyingKey::from_bytes(
        &URL_SAFE_NO_PAD
            .decode(public_x)
            .unwrap()
            .try_into()
            .unwrap(),
    )
    .unwrap();
    let signature = ed25519_dalek::Signature::from_slice(&bytes).unwrap();
    key.verify_strict(base.as_bytes(), &signature)
        .unwrap_or_else(|e| panic!("{e}: {base}"));
    params.to_string()
}

/// A captured request as Cloudflare's `web-bot-auth` crate reads messages (its own RFC 9421
/// implementation: the signature base, the parameters, Ed25519).
struct Captured {
    authority: String,
    method: String,
    headers: Vec<(String, String)>,
}

impl Captured {
    fn of(head: &str) -> Captured {
        Captured {
            authority: header(head, "host").unwrap().to_ascii_lowercase(),
            method: head.split(' ').next().unwrap().to_string(),
            headers: head
                .split("\r\n")
                .skip(1)
                .filter_map(|l| l.split_once(':'))
                .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
                .collect(),
        }
    }
}

impl web_bot_auth::message_signatures::SignedMessage for Captured {
    fn lookup_component(&self, name: &web_bot_auth::components::CoveredComponent) -> Vec<String> {
        use web_bot_auth::components::{
            CoveredComponent, DerivedComponent, HTTPField, HTTPFieldParameters,
        };
        match name {
            CoveredComponent::Derived(DerivedComponent::Authority { .. }) => {
                vec![self.authority.clone()]
            }
            CoveredComponent::Derived(DerivedComponent::Method { .. }) => vec![self.method.clone()],
            CoveredComponent::HTTP(HTTPField { name, parameters }) => {
                let values: Vec<String> = self
                    .headers
                    .iter()
                    .filter(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
                    .collect();
                let key = parameters.0.iter().find_map(|p| match p {
                    HTTPFieldParameters::Key(key) => Some(key.clone()),
                    _ => None,
                });
                // A dictionary member (`;key=`): its value, serialized (RFC 9421 2.1.2).
                match key {
                    None => values,
                    Some(key) => {
                        let dictionary: sfv::Dictionary =
                            sfv::Parser::new(&values.join(", ")).parse().unwrap();
                        let mut member = sfv::ListSerializer::new();
                        member.members(dictionary.get(key.as_str()));
                        member.finish().into_iter().collect()
                    }
                }
            }
            _ => vec![],
        }
    }
}

/// Verifies a captured request with Cloudflare's `web-bot-auth`, against the public key.
fn verify_by_cloudflare(head: &str, keyid: &str, public_x: &str) {
    use web_bot_auth::keyring::{Algorithm, KeyRing};
    let verifier = web_bot_auth::WebBotAuthVerifier::parse(&Captured::of(head))
        .unwrap_or_else(|e| panic!("{e:?}: {head}"));
    assert!(
        !verifier.get_signature_agents().is_empty(),
        "the Signature-Agent was read"
    );
    let mut keyring = KeyRing::default();
    keyring.import_raw(
        keyid.to_string(),
        Algorithm::Ed25519,
        URL_SAFE_NO_PAD.decode(public_x).unwrap(),
    );
    verifier
        .verify(&keyring, None)
        .unwrap_or_else(|e| panic!("{e:?}: {head}"));
}

/// A parameter of a Signature-Input (`name=value`, quotes kept).
fn param<'a>(params: &'a str, name: &str) -> &'a str {
    params
        .split(';')
        .find_map(|p| p.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name} in {params}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_crawl_signs_every_request_and_the_signatures_verify() {
    let dir = folder("crawl");
    let pem = dir.join("crawler.pem");
    let pem_arg = pem.to_str().unwrap().to_string();

    // A key, written for its owner only; its keyid printed, never the key.
    let out = robots(&["key", "generate", "--out", &pem_arg], b"");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let keyid = stdout.trim().to_string();
    assert_eq!(keyid.len(), 43, "a base64url SHA-256: {keyid}");
    let written = std::fs::read_to_string(&pem).unwrap();
    assert!(written.starts_with("-----BEGIN PRIVATE KEY-----"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&pem).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
    // Not overwritten.
    let again = robots(&["key", "generate", "--out", &pem_arg], b"");
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again).1.contains("cannot write the key"),
        "{}",
        text(&again).1
    );
    assert_eq!(std::fs::read_to_string(&pem).unwrap(), written);

    // The key directory: its public half, its thumbprint as kid, nothing private.
    let out = robots(&["key", "directory", &pem_arg], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out).1);
    let directory: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let jwk = &directory["keys"][0];
    assert_eq!(
        (jwk["kty"].as_str(), jwk["crv"].as_str()),
        (Some("OKP"), Some("Ed25519"))
    );
    assert_eq!(jwk["kid"], keyid.as_str());
    assert!(jwk.get("d").is_none());
    let public_x = jwk["x"].as_str().unwrap().to_string();
    let directory_file = dir.join("directory.json");
    std::fs::write(&directory_file, &out.stdout).unwrap();

    // A crawl: robots.txt, a redirect hop, a page, a 429 and its retry.
    let site = Site::start(|target, seen_before| match target {
        "/robots.txt" => Answer::ok("User-agent: *\nDisallow: /private\n"),
        "/go" => Answer::status("302 Found", &["Location: /page"]),
        "/busy" if seen_before == 0 => Answer::status("429 Too Many Requests", &["Retry-After: 1"]),
        _ => Answer::ok("<p>page</p>"),
    })
    .await;
    // As one process of a fleet: robots.txt through the shared store, pacing through Redis.
    let Some(redis) = crate::redis_server::RedisServer::start() else {
        return;
    };
    let redis_url = redis.url();
    let args: Vec<String> = [
        "--user-agent",
        UA,
        "--redis",
        &redis_url,
        "--signing-key",
        &pem_arg,
        "--signature-agent",
        "https://crawler.example",
        "--min-delay",
        "0.1",
        "--retries",
        "1",
        "--format",
        "json",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain(["/go", "/busy", "/private/x"].iter().map(|p| site.url(p)))
    .collect();
    let out = crawl_async(args).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let private = written
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect::<String>();
    assert!(
        !stdout.contains(&private) && !stderr.contains(&private),
        "the key was printed"
    );

    let seen = site.seen();
    let targets: Vec<&str> = seen.iter().map(|s| s.target.as_str()).collect();
    assert_eq!(targets, ["/robots.txt", "/go", "/page", "/busy", "/busy"]);
    let mut nonces = Vec::new();
    for request in &seen {
        assert_eq!(
            header(&request.head, "signature-agent"),
            Some("sig1=\"https://crawler.example\""),
            "{}",
            request.target
        );
        let params = verify_by_hand(&request.head, &public_x);
        verify_by_cloudflare(&request.head, &keyid, &public_x);
        assert_eq!(param(&params, "keyid"), format!("\"{keyid}\""));
        assert_eq!(param(&params, "alg"), "\"ed25519\"");
        assert_eq!(param(&params, "tag"), "\"web-bot-auth\"");
        let created: u64 = param(&params, "created").parse().unwrap();
        let expires: u64 = param(&params, "expires").parse().unwrap();
        assert_eq!(expires - created, 300, "the default validity");
        nonces.push(param(&params, "nonce").to_string());
    }
    nonces.sort();
    nonces.dedup();
    assert_eq!(
        nonces.len(),
        seen.len(),
        "a new signature for every request"
    );

    // `robots key verify` on a captured request: valid; the same signature on another host:
    // not.
    let page = seen.iter().find(|s| s.target == "/page").unwrap();
    let captured = dir.join("page.http");
    std::fs::write(&captured, &page.head).unwrap();
    let verify = |file: &std::path::Path| {
        robots(
            &[
                "key",
                "verify",
                "--directory",
                directory_file.to_str().unwrap(),
                "--scheme",
                "http",
                file.to_str().unwrap(),
            ],
            b"",
        )
    };
    let out = verify(&captured);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    assert!(
        text(&out)
            .0
            .starts_with(&format!("valid: key {keyid} of https://crawler.example")),
        "{}",
        text(&out).0
    );
    let host = header(&page.head, "host").unwrap();
    let replayed = dir.join("replayed.http");
    std::fs::write(&replayed, page.head.replace(host, "elsewhere.example")).unwrap();
    let out = verify(&replayed);
    assert_eq!(out.status.code(), Some(1));
    let tampered = std::panic::catch_unwind(|| {
        verify_by_cloudflare(
            &page.head.replace(host, "elsewhere.example"),
            &keyid,
            &public_x,
        )
    });
    assert!(
        tampered.is_err(),
        "another authority verifies with Cloudflare's implementation"
    );
    assert!(text(&out).0.starts_with("invalid: "), "{}", text(&out).0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_key_file_is_a_clear_error_with_exit_2() {
    let dir = folder("bad");
    let bad = dir.join("not-a-key.pem");
    std::fs::write(
        &bad,
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    let bad = bad.to_str().unwrap();
    let missing = dir.join("missing.pem");
    let missing = missing.to_str().unwrap();
    for args in [
        vec![
            "crawl",
            "--user-agent",
            "FooBot/1.0",
            "--signing-key",
            bad,
            "http://127.0.0.1:9/",
        ],
        vec![
            "crawl",
            "--user-agent",
            "FooBot/1.0",
            "--signing-key",
            missing,
            "http://127.0.0.1:9/",
        ],
        vec!["key", "directory", bad],
    ] {
        let out = robots(&args, b"");
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("not-a-key.pem") || stderr.contains("missing.pem"),
            "{args:?}: the file is named: {stderr}"
        );
        assert!(
            stderr.contains("not an Ed25519 private key") || stderr.contains("cannot read"),
            "{args:?}: {stderr}"
        );
    }
    // A Signature-Agent without a key says what is missing.
    let out = robots(
        &[
            "crawl",
            "--user-agent",
            "FooBot/1.0",
            "--signature-agent",
            "https://crawler.example",
            "http://127.0.0.1:9/",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("--signing-key"), "{}", text(&out).1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A key `robots key generate` wrote, read back by the standard tool: PKCS#8 v1, as `openssl
/// genpkey` writes it (OpenSSL 3.0 refuses ed25519-dalek's v2). Returns the key file and keyid.
fn generated_key(dir: &std::path::Path) -> (std::path::PathBuf, String) {
    let key = dir.join("crawler.pem");
    let out = robots(&["key", "generate", "--out", key.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    (key, text(&out).0.trim().to_string())
}

#[test]
fn a_generated_key_is_read_by_openssl() {
    let dir = folder("openssl");
    let (key, _) = generated_key(&dir);
    let openssl = std::process::Command::new("openssl")
        .args(["pkey", "-in", key.to_str().unwrap(), "-noout"])
        .output();
    match openssl {
        Ok(out) => assert!(
            out.status.success(),
            "openssl pkey refuses the key: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        // .ci/run installs openssl; a machine without it says so rather than passing quietly.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("SKIPPED a_generated_key_is_read_by_openssl: no openssl on this machine")
        }
        Err(e) => panic!("openssl: {e}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `robots key verify` on captured requests signed by hand with the crawler's key: what the
/// web-bot-auth profile forbids is refused, each with the rule it breaks.
#[test]
fn key_verify_refuses_what_the_profile_forbids() {
    use ed25519_dalek::Signer;
    use ed25519_dalek::pkcs8::DecodePrivateKey;
    let dir = folder("profile");
    let (key_file, keyid) = generated_key(&dir);
    let directory = dir.join("directory.json");
    let out = robots(&["key", "directory", key_file.to_str().unwrap()], b"");
    std::fs::write(&directory, &out.stdout).unwrap();
    let pem = std::fs::read_to_string(&key_file).unwrap();
    let key = ed25519_dalek::SigningKey::from_pkcs8_pem(&pem).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    // A request whose Signature-Input has these parameters (after the components), validly
    // signed: only the profile's rules can refuse it.
    let captured = |name: &str, times: &str| {
        let params = format!("(\"@authority\"){times};keyid=\"{keyid}\";tag=\"web-bot-auth\"");
        let base = format!("\"@authority\": example.com\n\"@signature-params\": {params}");
        let signature = STANDARD.encode(key.sign(base.as_bytes()).to_bytes());
        let head = format!(
            "GET /page HTTP/1.1\r\nHost: example.com\r\nSignature-Input: sig1={params}\r\nSignature: sig1=:{signature}:\r\n\r\n"
        );
        let file = dir.join(name);
        std::fs::write(&file, head).unwrap();
        robots(
            &[
                "key",
                "verify",
                "--directory",
                directory.to_str().unwrap(),
                file.to_str().unwrap(),
            ],
            b"",
        )
    };
    let valid = captured(
        "valid.http",
        &format!(";created={};expires={}", now - 10, now + 300),
    );
    assert_eq!(valid.status.code(), Some(0), "{:?}", text(&valid));
    for (name, times, says) in [
        (
            "no-expires.http",
            format!(";created={}", now - 10),
            "no `expires`",
        ),
        (
            "no-created.http",
            format!(";expires={}", now + 300),
            "no `created`",
        ),
        (
            "negative.http",
            format!(";created={};expires=-1", now - 10),
            "`expires` is -1, not a time",
        ),
        (
            "future.http",
            format!(";created={};expires={}", now + 3600, now + 3900),
            "in the future",
        ),
        (
            "expired.http",
            format!(";created={};expires={}", now - 600, now - 300),
            "expired",
        ),
    ] {
        let out = captured(name, &times);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {stdout}{stderr}");
        assert!(
            stdout.starts_with("invalid: ") && stdout.contains(says),
            "{name}: {stdout}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Credentials in the key directory's URL would reach every site: refused before anything is
/// sent, without repeating the secret.
#[tokio::test(flavor = "multi_thread")]
async fn a_signature_agent_with_credentials_is_refused_and_nothing_is_sent() {
    let site = Site::start(|_, _| Answer::ok("User-agent: *\nAllow: /\n")).await;
    let dir = folder("userinfo");
    let (key_file, _) = generated_key(&dir);
    let url = site.url("/page");
    let out = tokio::task::spawn_blocking(move || {
        robots(
            &[
                "crawl",
                "--user-agent",
                "FooBot/1.0",
                "--signing-key",
                key_file.to_str().unwrap(),
                "--signature-agent",
                "https://bot:secret@crawler.example/keys/dir",
                &url,
            ],
            b"",
        )
    })
    .await
    .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("user information"), "{stderr}");
    assert!(
        !stderr.contains("secret") && !stdout.contains("secret"),
        "{stderr}"
    );
    assert!(site.seen().is_empty(), "sent: {:?}", site.seen().len());
    let _ = std::fs::remove_dir_all(&dir);
}
