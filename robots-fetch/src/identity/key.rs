//! Ed25519 keys as Web Bot Auth uses them: a private key read from PKCS#8 PEM or a JWK (never
//! printed), its public half as a JWK, its `keyid` (the JWK SHA-256 thumbprint, RFC 7638 with
//! RFC 8037), and the key directory that lists public keys.

use std::fmt;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::pkcs8::{DecodePrivateKey, EncodePrivateKey};
use sha2::{Digest, Sha256};

/// Why a key could not be read or made. Says what and where, never the key itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The key file could not be read.
    #[error("cannot read the key file {path}: {message}")]
    Read {
        /// The file.
        path: String,
        /// What the system said.
        message: String,
    },
    /// The text is neither an Ed25519 private key in PKCS#8 PEM nor an Ed25519 private JWK.
    #[error("{what} is not an Ed25519 private key (PKCS#8 PEM or JWK): {reason}")]
    NotAKey {
        /// What was read (a file name, or "the key").
        what: String,
        /// Why.
        reason: String,
    },
    /// A public key (of a key directory) is not an Ed25519 JWK.
    #[error("not an Ed25519 public key (a JWK with kty OKP, crv Ed25519 and x): {reason}")]
    NotAPublicKey {
        /// Why.
        reason: String,
    },
    /// The system's random source failed.
    #[error("no randomness for a new key: {0}")]
    Random(String),
}

/// An Ed25519 private key that signs requests. Its `Debug` shows the `keyid` only; it is
/// never logged or printed, and its bytes are wiped when it is dropped.
///
/// ```
/// use robots_fetch::SigningKey;
/// // RFC 9421's test key (appendix B.1.4), as a JWK.
/// let key = SigningKey::from_jwk(
///     r#"{"kty":"OKP","crv":"Ed25519","d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU"}"#,
/// )?;
/// assert_eq!(key.public_key().x(), "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs");
/// assert!(!format!("{key:?}").contains("n4Ni"));
/// // The same key as PKCS#8 PEM reads back the same.
/// let again = SigningKey::from_pem(&key.to_pkcs8_pem())?;
/// assert_eq!(again.keyid(), key.keyid());
/// # Ok::<(), robots_fetch::KeyError>(())
/// ```
#[derive(Clone)]
pub struct SigningKey {
    key: ed25519_dalek::SigningKey,
    public: PublicKey,
}

impl SigningKey {
    /// A new key from the system's random source.
    pub fn generate() -> Result<SigningKey, KeyError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| KeyError::Random(e.to_string()))?;
        let key = SigningKey::from_seed(&seed);
        seed.fill(0);
        Ok(key)
    }

    fn from_seed(seed: &[u8; 32]) -> SigningKey {
        let key = ed25519_dalek::SigningKey::from_bytes(seed);
        let public = PublicKey::from_bytes(key.verifying_key().to_bytes());
        SigningKey { key, public }
    }

    /// Reads a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, as `openssl genpkey -algorithm
    /// ed25519` writes it).
    pub fn from_pem(pem: &str) -> Result<SigningKey, KeyError> {
        // Not PEM at all (a robots.txt given by mistake): the decoder's own error would speak
        // of what it tripped on first, which says nothing to the user.
        if !pem.trim_start().starts_with("-----BEGIN PRIVATE KEY-----") {
            return Err(KeyError::NotAKey {
                what: "the key".into(),
                reason: "it does not start with `-----BEGIN PRIVATE KEY-----` (PKCS#8 PEM) or `{` (a JWK)".into(),
            });
        }
        let key = ed25519_dalek::SigningKey::from_pkcs8_pem(pem.trim()).map_err(|e| {
            KeyError::NotAKey {
                what: "the key".into(),
                reason: format!("not PKCS#8 PEM of Ed25519 ({e})"),
            }
        })?;
        Ok(SigningKey::from_seed(&key.to_bytes()))
    }

    /// Reads a private JWK: `{"kty":"OKP","crv":"Ed25519","d":…}` (with `x`, it must be the
    /// public half of `d`).
    pub fn from_jwk(jwk: &str) -> Result<SigningKey, KeyError> {
        let not = |reason: &str| KeyError::NotAKey {
            what: "the key".into(),
            reason: reason.into(),
        };
        let value: serde_json::Value =
            serde_json::from_str(jwk).map_err(|e| not(&format!("not JSON ({e})")))?;
        check_okp(&value).map_err(|reason| not(&reason))?;
        let d = value
            .get("d")
            .and_then(|d| d.as_str())
            .ok_or_else(|| not("no private part (`d`): a public key cannot sign"))?;
        let seed: [u8; 32] = URL_SAFE_NO_PAD
            .decode(d)
            .ok()
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or_else(|| not("`d` is not 32 bytes of base64url"))?;
        let key = SigningKey::from_seed(&seed);
        if let Some(x) = value.get("x").and_then(|x| x.as_str())
            && x != key.public.x()
        {
            return Err(not("`x` is not the public half of `d`"));
        }
        Ok(key)
    }

    /// Reads a key from text that is either PKCS#8 PEM or a JWK.
    pub fn parse(text: &str) -> Result<SigningKey, KeyError> {
        if text.trim_start().starts_with('{') {
            SigningKey::from_jwk(text)
        } else {
            SigningKey::from_pem(text)
        }
    }

    /// Reads a key file (PKCS#8 PEM or a JWK).
    pub fn from_file(path: impl AsRef<Path>) -> Result<SigningKey, KeyError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| KeyError::Read {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        SigningKey::parse(&text).map_err(|error| match error {
            KeyError::NotAKey { reason, .. } => KeyError::NotAKey {
                what: path.display().to_string(),
                reason,
            },
            other => other,
        })
    }

    /// The key as PKCS#8 v1 PEM (`PrivateKeyInfo`, the private key alone, as `openssl genpkey
    /// -algorithm ed25519` writes it), to be written to a file only the crawler reads. v2 (the
    /// public key inside too) is what ed25519-dalek writes, but OpenSSL 3.0 and Python's
    /// `cryptography` refuse it; the public key is derived from the private one anyway.
    pub fn to_pkcs8_pem(&self) -> String {
        let v1 = ed25519_dalek::pkcs8::KeypairBytes {
            secret_key: self.key.to_bytes(),
            public_key: None,
        };
        v1.to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
            .map(|pem| pem.to_string())
            .unwrap_or_default()
    }

    /// The key's `keyid`: its JWK SHA-256 thumbprint, base64url.
    pub fn keyid(&self) -> &str {
        self.public.keyid()
    }

    /// The public half.
    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }

    /// Signs `message` (a signature base).
    pub(crate) fn sign(&self, message: &[u8]) -> [u8; 64] {
        use ed25519_dalek::Signer;
        self.key.sign(message).to_bytes()
    }
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("keyid", &self.keyid())
            .field("private", &"<redacted>")
            .finish()
    }
}

/// The checks every Ed25519 JWK passes.
fn check_okp(value: &serde_json::Value) -> Result<(), String> {
    let field = |name: &str| value.get(name).and_then(|v| v.as_str());
    if !value.is_object() {
        return Err("not a JSON object".into());
    }
    if field("kty") != Some("OKP") {
        return Err(format!("`kty` is {:?}, not \"OKP\"", field("kty")));
    }
    if field("crv") != Some("Ed25519") {
        return Err(format!("`crv` is {:?}, not \"Ed25519\"", field("crv")));
    }
    Ok(())
}

/// An Ed25519 public key, with its `keyid`.
///
/// ```
/// use robots_fetch::PublicKey;
/// // RFC 8037 appendix A.2 and A.3: the key and its thumbprint.
/// let key = PublicKey::from_jwk(
///     &serde_json::json!({"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}),
/// )?;
/// assert_eq!(key.keyid(), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
/// # Ok::<(), robots_fetch::KeyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    bytes: [u8; 32],
    x: String,
    keyid: String,
}

impl PublicKey {
    fn from_bytes(bytes: [u8; 32]) -> PublicKey {
        let x = URL_SAFE_NO_PAD.encode(bytes);
        // RFC 7638: the required members, in lexicographic order, no spaces (RFC 8037 A.3).
        let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
        let keyid = URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()));
        PublicKey { bytes, x, keyid }
    }

    /// Reads a public JWK (`kty` OKP, `crv` Ed25519, `x`); other members are ignored.
    pub fn from_jwk(jwk: &serde_json::Value) -> Result<PublicKey, KeyError> {
        let not = |reason: String| KeyError::NotAPublicKey { reason };
        check_okp(jwk).map_err(not)?;
        let bytes: [u8; 32] = jwk
            .get("x")
            .and_then(|x| x.as_str())
            .and_then(|x| URL_SAFE_NO_PAD.decode(x).ok())
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or_else(|| not("`x` is not 32 bytes of base64url".into()))?;
        Ok(PublicKey::from_bytes(bytes))
    }

    /// `x`: the key, base64url.
    pub fn x(&self) -> &str {
        &self.x
    }

    /// Its JWK SHA-256 thumbprint, base64url: the `keyid` of its signatures.
    pub fn keyid(&self) -> &str {
        &self.keyid
    }

    /// The public JWK, with `kid` (the thumbprint, as the draft asks of a directory's keys),
    /// `alg` and `use`.
    pub fn to_jwk(&self) -> serde_json::Value {
        serde_json::json!({
            "kty": "OKP",
            "crv": "Ed25519",
            "x": self.x,
            "kid": self.keyid,
            "alg": "EdDSA",
            "use": "sig",
        })
    }

    /// Whether `signature` is this key's over `message`.
    pub(crate) fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        let Ok(key) = ed25519_dalek::VerifyingKey::from_bytes(&self.bytes) else {
            return false;
        };
        let Ok(signature) = ed25519_dalek::Signature::from_slice(signature) else {
            return false;
        };
        key.verify_strict(message, &signature).is_ok()
    }
}

/// A key directory: the public keys a crawler signs with, as served at
/// `/.well-known/http-message-signatures-directory` (`{"keys":[JWK…]}`, media type
/// `application/http-message-signatures-directory+json`).
///
/// ```
/// use robots_fetch::{KeyDirectory, SigningKey};
/// let (old, new) = (SigningKey::generate()?, SigningKey::generate()?);
/// let directory = KeyDirectory::of([old.public_key(), new.public_key()]);
/// let read = KeyDirectory::from_json(&directory.to_json())?;
/// assert!(read.key(new.keyid()).is_some());
/// # Ok::<(), robots_fetch::KeyError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyDirectory {
    keys: Vec<PublicKey>,
}

/// The path a key directory is served at.
pub const KEY_DIRECTORY_PATH: &str = "/.well-known/http-message-signatures-directory";

/// The media type of a key directory.
pub const KEY_DIRECTORY_MEDIA_TYPE: &str = "application/http-message-signatures-directory+json";

impl KeyDirectory {
    /// A directory of these keys.
    pub fn of<'a>(keys: impl IntoIterator<Item = &'a PublicKey>) -> KeyDirectory {
        KeyDirectory {
            keys: keys.into_iter().cloned().collect(),
        }
    }

    /// Reads a directory; keys other than Ed25519 are skipped (another algorithm the
    /// crawler does not use), a malformed Ed25519 key is an error.
    pub fn from_json(json: &str) -> Result<KeyDirectory, KeyError> {
        let not = |reason: String| KeyError::NotAPublicKey { reason };
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| not(format!("the directory is not JSON ({e})")))?;
        let keys = value
            .get("keys")
            .and_then(|k| k.as_array())
            .ok_or_else(|| not("the directory has no `keys` array".into()))?;
        let keys = keys
            .iter()
            .filter(|k| k.get("crv").and_then(|c| c.as_str()) == Some("Ed25519"))
            .map(PublicKey::from_jwk)
            .collect::<Result<_, _>>()?;
        Ok(KeyDirectory { keys })
    }

    /// The directory as JSON, pretty-printed.
    pub fn to_json(&self) -> String {
        let keys: Vec<serde_json::Value> = self.keys.iter().map(PublicKey::to_jwk).collect();
        serde_json::to_string_pretty(&serde_json::json!({ "keys": keys })).unwrap_or_default()
    }

    /// The key with this `keyid`.
    pub fn key(&self, keyid: &str) -> Option<&PublicKey> {
        self.keys.iter().find(|k| k.keyid == keyid)
    }

    /// The keys.
    pub fn keys(&self) -> &[PublicKey] {
        &self.keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_8037_keys_and_thumbprint() {
        // RFC 8037 A.1–A.3.
        let key = SigningKey::from_jwk(
            r#"{"kty":"OKP","crv":"Ed25519","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#,
        )
        .unwrap();
        assert_eq!(key.keyid(), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
    }

    #[test]
    fn bad_keys_say_why_and_never_print_the_key() {
        let wrong_x = r#"{"kty":"OKP","crv":"Ed25519","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}"#;
        for (text, says) in [
            (
                "not a key",
                "does not start with `-----BEGIN PRIVATE KEY-----`",
            ),
            // A robots.txt given by mistake: said as what it is not, nothing about its bytes.
            ("User-agent: *\nDisallow: /\n", "does not start with"),
            ("{", "not JSON"),
            (r#"{"kty":"RSA"}"#, "`kty`"),
            (r#"{"kty":"OKP","crv":"X25519"}"#, "`crv`"),
            (
                r#"{"kty":"OKP","crv":"Ed25519","x":"abc"}"#,
                "no private part",
            ),
            (r#"{"kty":"OKP","crv":"Ed25519","d":"c2hvcnQ"}"#, "32 bytes"),
            (wrong_x, "public half"),
            (
                "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
                "not PKCS#8 PEM",
            ),
        ] {
            let error = SigningKey::parse(text).unwrap_err().to_string();
            assert!(error.contains(says), "{text}: {error}");
            assert!(!error.contains("nWGxne"), "{error}");
        }
    }

    #[test]
    fn a_generated_key_round_trips_through_pem_and_signs() {
        let key = SigningKey::generate().unwrap();
        let pem = key.to_pkcs8_pem();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"), "{pem}");
        // v1: version 0 and the 32-byte key alone (48 bytes of DER), as OpenSSL writes it.
        use base64::Engine as _;
        let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        let der = base64::engine::general_purpose::STANDARD
            .decode(body)
            .unwrap();
        assert_eq!(der.len(), 48);
        assert_eq!(der[..7], [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05]);
        // A v2 file (ed25519-dalek's own form, the public key inside) is still read.
        let v2 = key
            .key
            .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
            .unwrap();
        assert!(v2.len() > pem.len());
        assert_eq!(SigningKey::from_pem(&v2).unwrap().keyid(), key.keyid());
        let read = SigningKey::from_pem(&pem).unwrap();
        assert_eq!(read.keyid(), key.keyid());
        let signature = read.sign(b"base");
        assert!(key.public_key().verifies(b"base", &signature));
        assert!(!key.public_key().verifies(b"other", &signature));
        assert_ne!(SigningKey::generate().unwrap().keyid(), key.keyid());
    }
}
