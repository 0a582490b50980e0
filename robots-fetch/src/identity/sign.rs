//! Signing a request as the Web Bot Auth profile of HTTP Message Signatures asks
//! (draft-ietf-webbotauth-httpsig-protocol-01, RFC 9421): `Signature-Input`, `Signature` and,
//! with a key directory configured, `Signature-Agent`.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::{HeaderMap, HeaderName, HeaderValue};

use super::key::SigningKey;

/// `Signature-Agent`.
pub const SIGNATURE_AGENT: HeaderName = HeaderName::from_static("signature-agent");
/// `Signature-Input`.
pub const SIGNATURE_INPUT: HeaderName = HeaderName::from_static("signature-input");
/// `Signature`.
pub const SIGNATURE: HeaderName = HeaderName::from_static("signature");

/// The label of our signature (and of our `Signature-Agent` member).
pub(crate) const LABEL: &str = "sig1";

/// The `tag` of a Web Bot Auth signature.
pub const WEB_BOT_AUTH_TAG: &str = "web-bot-auth";

/// How long a signature is valid by default.
pub const DEFAULT_VALIDITY: Duration = Duration::from_secs(5 * 60);

/// Why a request could not be signed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignError {
    /// The request names no host (`@authority` cannot be covered).
    #[error("the request to {uri} names no host: it cannot be signed")]
    NoAuthority {
        /// The request's URI.
        uri: String,
    },
    /// The system's random source failed (no nonce).
    #[error("no randomness for the signature's nonce: {0}")]
    Random(String),
}

/// Why a URL cannot name the crawler's key directory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureAgentError {
    /// The URL carries user information (`user:password@`), which every site would see.
    #[error(
        "the Signature-Agent URL carries user information (`user:password@`), which every site the crawler visits would see: name the key directory without it ({url})"
    )]
    UserInfo {
        /// The URL without its user information.
        url: String,
    },
}

/// Signs every request a crawler sends with one of its keys (Ed25519), as Web Bot Auth asks:
/// `Signature-Input` covers `@authority` (and the `Signature-Agent` member when a key directory
/// is configured), with `created`, `expires`, a `nonce`, `keyid` (the key's JWK thumbprint),
/// `alg="ed25519"` and `tag="web-bot-auth"`. Cheap to clone (the keys are shared).
///
/// Several keys may be configured for rotation: [`RequestSigner::signing_with`] chooses the one
/// that signs; the others are listed by [`RequestSigner::directory`], so that verifiers that
/// cached the old directory and those that fetch the new one both succeed.
///
/// ```
/// use robots_fetch::{RequestSigner, SigningKey};
/// let signer = RequestSigner::new(SigningKey::generate()?)
///     .signature_agent("https://crawler.example".parse()?)?;
/// let mut headers = http::HeaderMap::new();
/// let uri: http::Uri = "https://example.com/robots.txt".parse()?;
/// signer.sign(&uri, &mut headers)?;
/// assert_eq!(headers["signature-agent"], "sig1=\"https://crawler.example\"");
/// let input = headers["signature-input"].to_str()?;
/// assert!(input.starts_with("sig1=(\"@authority\" \"signature-agent\";key=\"sig1\");created="));
/// assert!(input.ends_with(";tag=\"web-bot-auth\""));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct RequestSigner {
    keys: Arc<[SigningKey]>,
    signing: usize,
    agent: Option<HeaderValue>,
    validity: Duration,
}

impl std::fmt::Debug for RequestSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestSigner")
            .field("keyid", &self.keyid())
            .field("keys", &self.keys.len())
            .field("signature_agent", &self.agent)
            .field("validity", &self.validity)
            .finish()
    }
}

impl RequestSigner {
    /// Signs with `key`, signatures valid for [`DEFAULT_VALIDITY`].
    pub fn new(key: SigningKey) -> RequestSigner {
        RequestSigner {
            keys: Arc::from(vec![key]),
            signing: 0,
            agent: None,
            validity: DEFAULT_VALIDITY,
        }
    }

    /// Several keys (rotation); the first signs until [`RequestSigner::signing_with`] says
    /// otherwise. `None` for no keys.
    pub fn with_keys(keys: impl IntoIterator<Item = SigningKey>) -> Option<RequestSigner> {
        let keys: Vec<SigningKey> = keys.into_iter().collect();
        (!keys.is_empty()).then(|| RequestSigner {
            keys: Arc::from(keys),
            signing: 0,
            agent: None,
            validity: DEFAULT_VALIDITY,
        })
    }

    /// Signs with the key of this `keyid` (one of the configured keys; unchanged otherwise, and
    /// `false`).
    pub fn signing_with(&mut self, keyid: &str) -> bool {
        match self.keys.iter().position(|k| k.keyid() == keyid) {
            Some(index) => {
                self.signing = index;
                true
            }
            None => false,
        }
    }

    /// Names the crawler's key directory in a `Signature-Agent` header (the origin that serves
    /// `/.well-known/http-message-signatures-directory`), covered by the signature.
    ///
    /// Every site the crawler visits sees this URL, so one with user information
    /// (`https://user:secret@crawler.example`) is refused, and nothing is signed with it.
    ///
    /// ```
    /// use robots_fetch::{RequestSigner, SignatureAgentError, SigningKey};
    /// let signer = RequestSigner::new(SigningKey::generate()?);
    /// let refused = signer.signature_agent("https://bot:secret@crawler.example/".parse()?);
    /// let error = refused.unwrap_err();
    /// assert!(matches!(error, SignatureAgentError::UserInfo { .. }));
    /// assert!(!error.to_string().contains("secret"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn signature_agent(mut self, url: url::Url) -> Result<RequestSigner, SignatureAgentError> {
        if !url.username().is_empty() || url.password().is_some() {
            let mut shown = url;
            let _ = shown.set_username("");
            let _ = shown.set_password(None);
            return Err(SignatureAgentError::UserInfo {
                url: shown.to_string(),
            });
        }
        // An origin as the draft writes it (`https://crawler.example`, no `/`), and any other
        // URL as given. (A URL is visible ASCII: a valid string.)
        let text = if url.path() == "/" && url.query().is_none() && url.fragment().is_none() {
            url.origin().ascii_serialization()
        } else {
            url.to_string()
        };
        let mut member = sfv::DictSerializer::new();
        if let Ok(url) = sfv::StringRef::from_str(&text) {
            let _ = member.bare_item(label(), url);
        }
        self.agent = member
            .finish()
            .and_then(|member| HeaderValue::from_str(&member).ok());
        Ok(self)
    }

    /// How long a signature is valid after it is made (`expires` − `created`, at least 1 s).
    pub fn validity(mut self, validity: Duration) -> RequestSigner {
        self.validity = validity.max(Duration::from_secs(1));
        self
    }

    /// The `keyid` of the key that signs.
    pub fn keyid(&self) -> &str {
        self.keys[self.signing].keyid()
    }

    /// The configured keys.
    pub fn keys(&self) -> &[SigningKey] {
        &self.keys
    }

    /// The key directory of the configured keys' public halves.
    pub fn directory(&self) -> super::KeyDirectory {
        super::KeyDirectory::of(self.keys.iter().map(SigningKey::public_key))
    }

    /// Signs a request to `uri`, putting the headers on `headers` (replacing any earlier
    /// signature of ours: a retry is signed anew). `@authority` is the URI's host, lowercase,
    /// with its port unless it is the scheme's default (RFC 9421 section 2.2.3).
    pub fn sign(&self, uri: &http::Uri, headers: &mut HeaderMap) -> Result<(), SignError> {
        let created = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        self.sign_at(uri, headers, created)
    }

    pub(crate) fn sign_at(
        &self,
        uri: &http::Uri,
        headers: &mut HeaderMap,
        created: u64,
    ) -> Result<(), SignError> {
        let authority = authority(uri).ok_or_else(|| SignError::NoAuthority {
            uri: uri.to_string(),
        })?;
        let mut nonce = [0u8; 32];
        getrandom::fill(&mut nonce).map_err(|e| SignError::Random(e.to_string()))?;
        let nonce = STANDARD.encode(nonce);
        let key = &self.keys[self.signing];
        let expires = created.saturating_add(self.validity.as_secs());
        let input = signature_input(key.keyid(), &nonce, created, expires, self.agent.is_some());
        // The inner list after `sig1=` is the `@signature-params` value.
        let params = input.get(LABEL.len() + 1..).unwrap_or_default();
        // The signature base (RFC 9421 section 2.5): one line per covered component, then the
        // parameters.
        let mut base = format!("\"@authority\": {authority}\n");
        if let Some(agent) = &self.agent {
            // A dictionary member's value, as serialized (`"https://…"`).
            let member = agent
                .to_str()
                .ok()
                .and_then(|a| a.get(LABEL.len() + 1..))
                .unwrap_or_default();
            base.push_str(&format!("\"signature-agent\";key=\"{LABEL}\": {member}\n"));
        }
        base.push_str("\"@signature-params\": ");
        base.push_str(params);
        let signature = key.sign(base.as_bytes());
        match &self.agent {
            Some(agent) => {
                headers.insert(SIGNATURE_AGENT, agent.clone());
            }
            None => {
                headers.remove(SIGNATURE_AGENT);
            }
        }
        // (Structured fields serialize to visible ASCII: valid header values.)
        let mut value = sfv::DictSerializer::new();
        let _ = value.bare_item(label(), signature.as_slice());
        let value = value.finish().unwrap_or_default();
        for (name, text) in [(SIGNATURE_INPUT, input), (SIGNATURE, value)] {
            if let Ok(text) = HeaderValue::from_str(&text) {
                headers.insert(name, text);
            }
        }
        Ok(())
    }
}

/// `@authority` of a request URI: host lowercase, the port unless it is the scheme's default.
pub(crate) fn authority(uri: &http::Uri) -> Option<String> {
    let host = uri.host()?.to_ascii_lowercase();
    let default = match uri.scheme_str() {
        Some("https") => Some(443),
        Some("http") => Some(80),
        _ => None,
    };
    Some(match uri.port_u16() {
        Some(port) if Some(port) != default => format!("{host}:{port}"),
        _ => host,
    })
}

fn label() -> &'static sfv::KeyRef {
    sfv::KeyRef::constant(LABEL)
}

/// `Signature-Input: sig1=(…);created=…;expires=…;keyid=…;alg="ed25519";nonce=…;tag="web-bot-auth"`.
fn signature_input(keyid: &str, nonce: &str, created: u64, expires: u64, agent: bool) -> String {
    use sfv::{Integer, KeyRef, StringRef};
    let integer = |n: u64| {
        i64::try_from(n)
            .ok()
            .and_then(|n| Integer::try_from(n).ok())
            .unwrap_or(Integer::MAX)
    };
    // (A thumbprint and a nonce are base64: valid strings.)
    let string = |text| StringRef::from_str(text).unwrap_or(StringRef::constant(""));
    let mut input = sfv::DictSerializer::new();
    {
        let mut list = input.inner_list(label());
        let _ = list.bare_item(StringRef::constant("@authority"));
        if agent {
            let _ = list
                .bare_item(StringRef::constant("signature-agent"))
                .parameter(KeyRef::constant("key"), StringRef::constant(LABEL));
        }
        let _ = list
            .finish()
            .parameter(KeyRef::constant("created"), integer(created))
            .parameter(KeyRef::constant("expires"), integer(expires))
            .parameter(KeyRef::constant("keyid"), string(keyid))
            .parameter(KeyRef::constant("alg"), StringRef::constant("ed25519"))
            .parameter(KeyRef::constant("nonce"), string(nonce))
            .parameter(
                KeyRef::constant("tag"),
                StringRef::constant(WEB_BOT_AUTH_TAG),
            );
    }
    input.finish().unwrap_or_default()
}
