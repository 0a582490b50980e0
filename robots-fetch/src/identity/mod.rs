//! Identity (spec section 12): Web Bot Auth, the IETF webbotauth working group's profile of HTTP
//! Message Signatures (RFC 9421), as draft-ietf-webbotauth-httpsig-protocol-01 describes it.
//! A crawler with a signing key signs every request it sends, robots.txt included; a site
//! verifies the signature against the crawler's key directory.
//!
//! - [`SigningKey`]: an Ed25519 private key (PKCS#8 PEM or JWK), never printed.
//! - [`RequestSigner`]: signs requests (`Signature-Input`, `Signature`, `Signature-Agent`).
//! - [`KeyDirectory`]: the public keys, as served at
//!   `/.well-known/http-message-signatures-directory`.
//! - [`verify_request`]: checks a signed request against a directory.
//!
//! Built on `ed25519-dalek` (RustCrypto's Ed25519, with PKCS#8 PEM) and `sfv`, the structured
//! fields crate the rest of the library already parses with: no cryptography of our own, and a
//! signer that writes the three headers directly. Cloudflare's `web-bot-auth` crate implements
//! RFC 9421 too, but its signing goes through a message trait and `time`, `indexmap` and an older
//! `sfv`; our tests use it as the independent verifier of what we send.

mod key;
mod sign;
mod verify;

pub use key::{
    KEY_DIRECTORY_MEDIA_TYPE, KEY_DIRECTORY_PATH, KeyDirectory, KeyError, PublicKey, SigningKey,
};
pub use sign::{
    DEFAULT_VALIDITY, RequestSigner, SIGNATURE, SIGNATURE_AGENT, SIGNATURE_INPUT, SignError,
    SignatureAgentError, WEB_BOT_AUTH_TAG,
};
pub use verify::{Verified, VerifyError, verify_request};
