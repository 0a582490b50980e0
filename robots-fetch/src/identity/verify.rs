//! Verifying a Web Bot Auth signature (RFC 9421 with the webbotauth profile) against a key
//! directory: what a site operator does, and what the tests do to what we send.

use std::time::{SystemTime, UNIX_EPOCH};

use http::HeaderMap;
use sfv::{BareItem, Dictionary, ListEntry, Parser};

use super::key::KeyDirectory;
use super::sign::{SIGNATURE, SIGNATURE_INPUT, WEB_BOT_AUTH_TAG, authority};

/// How far in the future a `created` may be (the signer's clock ahead of ours).
const CLOCK_SKEW_SECS: u64 = 60;

/// A signature that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Its label in `Signature-Input` (`sig1`).
    pub label: String,
    /// The key that signed.
    pub keyid: String,
    /// The covered components, as identifiers (`"@authority"`, `"signature-agent";key="sig1"`).
    pub components: Vec<String>,
    /// When it was made (UNIX seconds).
    pub created: Option<u64>,
    /// When it expires (UNIX seconds).
    pub expires: Option<u64>,
    /// The `Signature-Agent` member it covers: where the signer's key directory is.
    pub signature_agent: Option<String>,
}

/// Why a request's signature does not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// No `Signature-Input` member with `tag="web-bot-auth"`.
    #[error("no Web Bot Auth signature (no Signature-Input member with tag=\"web-bot-auth\")")]
    Unsigned,
    /// A signature header is not what RFC 9421 says.
    #[error("malformed {header}: {reason}")]
    Malformed {
        /// Which header.
        header: &'static str,
        /// Why.
        reason: String,
    },
    /// The signature covers neither `@authority` nor `@target-uri`, as the profile requires.
    #[error("the signature covers neither @authority nor @target-uri")]
    NoAuthority,
    /// A covered component is not in the request, or not one this verifier computes.
    #[error("covered component {component} cannot be had: {reason}")]
    Component {
        /// The component.
        component: String,
        /// Why.
        reason: String,
    },
    /// `alg` is not `ed25519`.
    #[error("algorithm {alg:?} is not supported (ed25519 only)")]
    Algorithm {
        /// The algorithm named.
        alg: String,
    },
    /// No key of the directory has this `keyid`.
    #[error("no key {keyid:?} in the key directory")]
    UnknownKey {
        /// The `keyid`.
        keyid: String,
    },
    /// A Web Bot Auth signature without `created` or without `expires`, both of which the
    /// profile requires.
    #[error("the signature has no `{param}` parameter, which a web-bot-auth signature must have")]
    MissingTime {
        /// `created` or `expires`.
        param: &'static str,
    },
    /// `expires` has passed.
    #[error("the signature expired at {expires} (now {now})")]
    Expired {
        /// `expires`.
        expires: u64,
        /// Now.
        now: u64,
    },
    /// `created` is in the future.
    #[error("the signature was created at {created}, in the future (now {now})")]
    NotYetValid {
        /// `created`.
        created: u64,
        /// Now.
        now: u64,
    },
    /// The signature is not the key's over the request.
    #[error("the signature does not match the request and the key {keyid}")]
    BadSignature {
        /// The key tried.
        keyid: String,
    },
}

/// Verifies the Web Bot Auth signature of a request (`method`, `uri`, `headers`) against the
/// keys of `directory`, at `now`. Covered components it computes: `@authority` (from `uri`,
/// else the `Host` header), `@method`, `@path`, `@query`, `@scheme`, `@target-uri`, header
/// fields, and a dictionary header's member (`;key=`).
///
/// ```
/// use robots_fetch::{KeyDirectory, RequestSigner, SigningKey, verify_request};
/// let key = SigningKey::generate()?;
/// let directory = KeyDirectory::of([key.public_key()]);
/// let signer = RequestSigner::new(key).signature_agent("https://crawler.example".parse()?)?;
/// let uri: http::Uri = "https://example.com/page".parse()?;
/// let mut headers = http::HeaderMap::new();
/// signer.sign(&uri, &mut headers)?;
/// let verified = verify_request(&http::Method::GET, &uri, &headers, &directory, std::time::SystemTime::now())?;
/// assert_eq!(verified.signature_agent.as_deref(), Some("https://crawler.example"));
/// // Another site cannot replay it.
/// let elsewhere: http::Uri = "https://other.example/page".parse()?;
/// assert!(verify_request(&http::Method::GET, &elsewhere, &headers, &directory, std::time::SystemTime::now()).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn verify_request(
    method: &http::Method,
    uri: &http::Uri,
    headers: &HeaderMap,
    directory: &KeyDirectory,
    now: SystemTime,
) -> Result<Verified, VerifyError> {
    let now = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let inputs = dictionary(headers, &SIGNATURE_INPUT, "Signature-Input")?;
    let (label, list) = inputs
        .iter()
        .find_map(|(label, entry)| match entry {
            ListEntry::InnerList(list)
                if string_param(&list.params, "tag") == Some(WEB_BOT_AUTH_TAG) =>
            {
                Some((label.as_str().to_string(), list))
            }
            _ => None,
        })
        .ok_or(VerifyError::Unsigned)?;
    let signatures = dictionary(headers, &SIGNATURE, "Signature")?;
    let signature = match signatures.get(label.as_str()) {
        Some(ListEntry::Item(item)) => match &item.bare_item {
            BareItem::ByteSequence(bytes) => bytes.clone(),
            _ => {
                return Err(VerifyError::Malformed {
                    header: "Signature",
                    reason: format!("{label} is not a byte sequence"),
                });
            }
        },
        _ => {
            return Err(VerifyError::Malformed {
                header: "Signature",
                reason: format!("no {label} member"),
            });
        }
    };
    // The profile's rule, stricter than RFC 9421's: a web-bot-auth signature says both when it
    // was made and until when it holds (whose checks `verify_member` then makes).
    for param in ["created", "expires"] {
        match list.params.get(param) {
            None => return Err(VerifyError::MissingTime { param }),
            Some(value) if value.as_integer().is_some_and(|n| i64::from(n) >= 0) => {}
            Some(value) => {
                return Err(VerifyError::Malformed {
                    header: "Signature-Input",
                    reason: format!(
                        "`{param}` is {}, not a time (whole seconds since 1970)",
                        serialized_bare(value)
                    ),
                });
            }
        }
    }
    verify_member(
        &label,
        list,
        &signature,
        method,
        uri,
        headers,
        now,
        &|keyid| directory.key(keyid),
    )
}

/// A parameter's value as written.
fn serialized_bare(value: &BareItem) -> String {
    let item = sfv::Item::new(value.clone());
    serialized(&ListEntry::Item(item))
}

/// Verifies one signature (`label`, its `Signature-Input` member `list`, its bytes) of a request,
/// with the key `key_of` gives for its `keyid`.
#[allow(clippy::too_many_arguments)]
fn verify_member<'k>(
    label: &str,
    list: &sfv::InnerList,
    signature: &[u8],
    method: &http::Method,
    uri: &http::Uri,
    headers: &HeaderMap,
    now: u64,
    key_of: &dyn Fn(&str) -> Option<&'k super::key::PublicKey>,
) -> Result<Verified, VerifyError> {
    if let Some(alg) = string_param(&list.params, "alg")
        && alg != "ed25519"
    {
        return Err(VerifyError::Algorithm { alg: alg.into() });
    }
    let keyid = string_param(&list.params, "keyid").ok_or(VerifyError::Malformed {
        header: "Signature-Input",
        reason: "no keyid".into(),
    })?;
    let created = integer_param(&list.params, "created");
    let expires = integer_param(&list.params, "expires");
    if let Some(expires) = expires
        && expires <= now
    {
        return Err(VerifyError::Expired { expires, now });
    }
    if let Some(created) = created
        && created > now.saturating_add(CLOCK_SKEW_SECS)
    {
        return Err(VerifyError::NotYetValid { created, now });
    }
    // The signature base: each covered component's line, then the parameters.
    let mut base = String::new();
    let mut components = Vec::new();
    let mut signature_agent = None;
    for item in &list.items {
        let identifier = serialized(&ListEntry::Item(item.clone()));
        let BareItem::String(name) = &item.bare_item else {
            return Err(VerifyError::Malformed {
                header: "Signature-Input",
                reason: format!("component {identifier} is not a string"),
            });
        };
        let value = component(name.as_str(), item, method, uri, headers).map_err(|reason| {
            VerifyError::Component {
                component: identifier.clone(),
                reason,
            }
        })?;
        if name.as_str() == "signature-agent" {
            signature_agent = Some(
                Parser::new(&value)
                    .parse::<sfv::Item>()
                    .ok()
                    .and_then(|i| i.bare_item.as_string().map(|s| s.as_str().to_string()))
                    .unwrap_or_else(|| value.clone()),
            );
        }
        base.push_str(&identifier);
        base.push_str(": ");
        base.push_str(&value);
        base.push('\n');
        components.push(identifier);
    }
    if !components
        .iter()
        .any(|c| c == "\"@authority\"" || c == "\"@target-uri\"")
    {
        return Err(VerifyError::NoAuthority);
    }
    base.push_str("\"@signature-params\": ");
    base.push_str(&serialized(&ListEntry::InnerList(list.clone())));
    let key = key_of(keyid).ok_or_else(|| VerifyError::UnknownKey {
        keyid: keyid.into(),
    })?;
    if !key.verifies(base.as_bytes(), signature) {
        return Err(VerifyError::BadSignature {
            keyid: keyid.into(),
        });
    }
    Ok(Verified {
        label: label.to_string(),
        keyid: keyid.into(),
        components,
        created,
        expires,
        signature_agent,
    })
}

/// A header's dictionary (its field lines joined).
fn dictionary(
    headers: &HeaderMap,
    name: &http::HeaderName,
    header: &'static str,
) -> Result<Dictionary, VerifyError> {
    let joined = field_value(headers, name).ok_or(VerifyError::Unsigned)?;
    Parser::new(&joined)
        .parse::<Dictionary>()
        .map_err(|e| VerifyError::Malformed {
            header,
            reason: e.to_string(),
        })
}

/// A field's value as RFC 9421 section 2.1 takes it: its lines trimmed and joined by `, `.
fn field_value(headers: &HeaderMap, name: &http::HeaderName) -> Option<String> {
    let values: Vec<&str> = headers
        .get_all(name)
        .iter()
        .map(|v| v.to_str().map(str::trim))
        .collect::<Result<_, _>>()
        .ok()?;
    (!values.is_empty()).then(|| values.join(", "))
}

fn string_param<'a>(params: &'a sfv::Parameters, name: &str) -> Option<&'a str> {
    params
        .get(name)
        .and_then(|v| v.as_string())
        .map(|s| s.as_str())
}

fn integer_param(params: &sfv::Parameters, name: &str) -> Option<u64> {
    params
        .get(name)
        .and_then(|v| v.as_integer())
        .and_then(|n| u64::try_from(i64::from(n)).ok())
}

/// A list entry as structured fields serialize it.
fn serialized(entry: &ListEntry) -> String {
    let mut list = sfv::ListSerializer::new();
    list.members(std::iter::once(entry));
    list.finish().unwrap_or_default()
}

/// A covered component's value.
fn component(
    name: &str,
    item: &sfv::Item,
    method: &http::Method,
    uri: &http::Uri,
    headers: &HeaderMap,
) -> Result<String, String> {
    if name.starts_with('@') && !item.params.is_empty() {
        return Err("parameters on a derived component are not supported".into());
    }
    Ok(match name {
        "@authority" => authority(uri)
            .or_else(|| field_value(headers, &http::header::HOST).map(|h| h.to_ascii_lowercase()))
            .ok_or("the request names no host")?,
        "@method" => method.as_str().to_string(),
        "@path" => match uri.path() {
            "" => "/".to_string(),
            path => path.to_string(),
        },
        "@query" => format!("?{}", uri.query().unwrap_or_default()),
        "@scheme" => uri
            .scheme_str()
            .ok_or("the request URI has no scheme")?
            .to_ascii_lowercase(),
        "@target-uri" => uri.to_string(),
        derived if derived.starts_with('@') => return Err("not computed by this verifier".into()),
        field => {
            let header = http::HeaderName::from_bytes(field.as_bytes())
                .map_err(|_| "not a header name".to_string())?;
            let value = field_value(headers, &header).ok_or("not in the request")?;
            match item.params.get("key") {
                None if item.params.is_empty() => value,
                Some(BareItem::String(key)) if item.params.len() == 1 => {
                    let dictionary = Parser::new(&value)
                        .parse::<Dictionary>()
                        .map_err(|e| format!("not a dictionary ({e})"))?;
                    let member = dictionary
                        .get(key.as_str())
                        .ok_or_else(|| format!("no member {:?}", key.as_str()))?;
                    serialized(member)
                }
                _ => return Err("parameters other than key are not supported".into()),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::SigningKey;

    /// RFC 9421 appendix B.2.6: the test key, the test request, the published signature.
    #[test]
    fn rfc_9421_ed25519_example_verifies() {
        let key = SigningKey::from_jwk(
            r#"{"kty":"OKP","crv":"Ed25519","d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU"}"#,
        )
        .unwrap();
        let base = "\"date\": Tue, 20 Apr 2021 02:07:55 GMT\n\"@method\": POST\n\"@path\": /foo\n\"@authority\": example.com\n\"content-type\": application/json\n\"content-length\": 18\n\"@signature-params\": (\"date\" \"@method\" \"@path\" \"@authority\" \"content-type\" \"content-length\");created=1618884473;keyid=\"test-key-ed25519\"";
        use base64::Engine;
        let published = "wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==";
        assert_eq!(
            base64::engine::general_purpose::STANDARD.encode(key.sign(base.as_bytes())),
            published,
            "Ed25519 is deterministic: our signing gives the RFC's bytes"
        );
        // Verified through the request, the base rebuilt from its parts (the RFC's keyid is a
        // name, not a thumbprint, and its input has no tag: its member is verified directly).
        let mut headers = HeaderMap::new();
        for (name, value) in [
            ("host", "example.com"),
            ("date", "Tue, 20 Apr 2021 02:07:55 GMT"),
            ("content-type", "application/json"),
            ("content-length", "18"),
        ] {
            headers.insert(name, http::HeaderValue::from_static(value));
        }
        let input: Dictionary = Parser::new(
            "sig-b26=(\"date\" \"@method\" \"@path\" \"@authority\" \"content-type\" \"content-length\");created=1618884473;keyid=\"test-key-ed25519\"",
        )
        .parse()
        .unwrap();
        let Some(ListEntry::InnerList(list)) = input.get("sig-b26") else {
            panic!("{input:?}")
        };
        let signature = base64::engine::general_purpose::STANDARD
            .decode(published)
            .unwrap();
        let uri: http::Uri = "http://example.com/foo?param=Value&Pet=dog"
            .parse()
            .unwrap();
        let named = |keyid: &str| (keyid == "test-key-ed25519").then_some(key.public_key());
        let verify = |method: &http::Method, headers: &HeaderMap| {
            verify_member(
                "sig-b26",
                list,
                &signature,
                method,
                &uri,
                headers,
                1_618_884_480,
                &named,
            )
        };
        let verified = verify(&http::Method::POST, &headers).unwrap();
        assert_eq!(verified.components.len(), 6);
        // Any covered part changed: refused.
        assert!(matches!(
            verify(&http::Method::GET, &headers),
            Err(VerifyError::BadSignature { .. })
        ));
        headers.insert("content-length", http::HeaderValue::from_static("19"));
        assert!(matches!(
            verify(&http::Method::POST, &headers),
            Err(VerifyError::BadSignature { .. })
        ));
        headers.remove("content-length");
        assert!(matches!(
            verify(&http::Method::POST, &headers),
            Err(VerifyError::Component { .. })
        ));
    }

    #[test]
    fn expiry_the_future_and_a_retired_key_are_refused() {
        use crate::identity::RequestSigner;
        let (old, new) = (
            SigningKey::generate().unwrap(),
            SigningKey::generate().unwrap(),
        );
        let uri: http::Uri = "https://example.com/".parse().unwrap();
        let now = 1_800_000_000;
        let at = |secs: u64| UNIX_EPOCH + std::time::Duration::from_secs(secs);
        let signed = |signer: &RequestSigner, created: u64| {
            let mut headers = HeaderMap::new();
            signer.sign_at(&uri, &mut headers, created).unwrap();
            headers
        };
        let check = |headers: &HeaderMap, directory: &KeyDirectory| {
            verify_request(&http::Method::GET, &uri, headers, directory, at(now))
        };
        let both = KeyDirectory::of([old.public_key(), new.public_key()]);
        let signer = RequestSigner::new(new.clone()).validity(std::time::Duration::from_secs(300));
        assert!(check(&signed(&signer, now - 10), &both).is_ok());
        assert_eq!(
            check(&signed(&signer, now - 300), &both),
            Err(VerifyError::Expired { expires: now, now })
        );
        assert_eq!(
            check(&signed(&signer, now + 120), &both),
            Err(VerifyError::NotYetValid {
                created: now + 120,
                now
            })
        );
        // Rotation: while both are published, either key's signatures verify; once the old
        // key is retired from the directory, its signatures do not.
        let mut rotating = RequestSigner::with_keys([old.clone(), new.clone()]).unwrap();
        assert_eq!(rotating.keyid(), old.keyid());
        let by_old = signed(&rotating, now);
        assert!(rotating.signing_with(new.keyid()));
        assert!(!rotating.signing_with("no such key"));
        let by_new = signed(&rotating, now);
        assert_eq!(check(&by_old, &both).unwrap().keyid, old.keyid());
        assert_eq!(check(&by_new, &both).unwrap().keyid, new.keyid());
        let retired = KeyDirectory::of([new.public_key()]);
        assert!(matches!(
            check(&by_old, &retired),
            Err(VerifyError::UnknownKey { .. })
        ));
        assert!(check(&by_new, &retired).is_ok());
        // Not signed at all.
        assert_eq!(check(&HeaderMap::new(), &both), Err(VerifyError::Unsigned));
    }
}
