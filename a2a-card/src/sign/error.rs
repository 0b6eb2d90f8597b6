//! What signing and verifying can fail with.

use super::canonical::CanonicalError;

/// Why a card could not be signed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignError {
    /// The card has no canonical form (too deep, or a number RFC 8785 cannot write).
    Canonical(CanonicalError),
}

impl std::fmt::Display for SignError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SignError::Canonical(e) => write!(f, "cannot sign the card: {e}"),
        }
    }
}

impl std::error::Error for SignError {}

/// Why a card's signature was rejected. Each case has its own variant.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyError {
    /// The card carries no signature.
    NoSignatures,
    /// A signature's protected header says `alg: none`.
    AlgNone,
    /// A signature uses an HMAC algorithm (`HS256`, ...): a shared secret, which a public key
    /// must never be used as.
    Hmac(String),
    /// A signature's algorithm is not in the caller's allow-list (or not supported).
    AlgorithmNotAllowed(String),
    /// A protected header that is not base64url, not a JSON object, lacks `alg` or `kid`, or
    /// has a `typ` other than `JOSE`; or a `signature` value that is not base64url.
    MalformedHeader(String),
    /// The resolver knows no key for this `kid`.
    UnknownKey {
        /// The header's `kid`.
        kid: String,
    },
    /// The resolved key is for another algorithm than the header's `alg`.
    KeyAlgorithmMismatch {
        /// The header's `alg`.
        alg: String,
    },
    /// The signature does not match the card: a signed field was changed.
    SignatureMismatch,
    /// The signature is valid but the root `schemas` no longer match the signed
    /// `params.schemasDigest` (or the digest is missing while the card has schemas).
    SchemasDigestMismatch {
        /// The signed digest, if any.
        signed: Option<String>,
        /// The digest of the card's schemas.
        actual: String,
    },
    /// The card nests deeper than [`MAX_DEPTH`](super::MAX_DEPTH).
    TooDeep,
    /// The card has no canonical form for another reason.
    Canonical(String),
    /// Several signatures, each rejected (in card order).
    AllRejected(Vec<VerifyError>),
}

impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerifyError::NoSignatures => f.write_str("the card has no signatures"),
            VerifyError::AlgNone => f.write_str("the signature uses `alg: none` (unsigned)"),
            VerifyError::Hmac(alg) => write!(
                f,
                "the signature uses the HMAC algorithm `{alg}`, which a public key cannot verify"
            ),
            VerifyError::AlgorithmNotAllowed(alg) => {
                write!(f, "the algorithm `{alg}` is not in the allowed list")
            }
            VerifyError::MalformedHeader(why) => write!(f, "malformed signature: {why}"),
            VerifyError::UnknownKey { kid } => write!(f, "no trusted key has kid `{kid}`"),
            VerifyError::KeyAlgorithmMismatch { alg } => {
                write!(f, "the key for this kid is not a key for `{alg}`")
            }
            VerifyError::SignatureMismatch => {
                f.write_str("the signature does not match the card (a signed field was changed)")
            }
            VerifyError::SchemasDigestMismatch { signed, actual } => match signed {
                Some(signed) => write!(
                    f,
                    "the card's schemas were changed: signed digest {signed}, actual {actual}"
                ),
                None => write!(
                    f,
                    "the card has schemas but its signed extension params hold no schemasDigest (actual {actual})"
                ),
            },
            VerifyError::TooDeep => write!(
                f,
                "the card nests deeper than {} levels",
                super::canonical::MAX_DEPTH
            ),
            VerifyError::Canonical(e) => write!(f, "the card has no canonical form: {e}"),
            VerifyError::AllRejected(errors) => {
                f.write_str("no signature verifies: ")?;
                for (i, e) in errors.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "#{i}: {e}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for VerifyError {}

impl From<CanonicalError> for VerifyError {
    fn from(e: CanonicalError) -> Self {
        match e {
            CanonicalError::TooDeep { .. } => VerifyError::TooDeep,
            CanonicalError::Jcs(e) => VerifyError::Canonical(e),
        }
    }
}
