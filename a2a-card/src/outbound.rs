//! What every outbound HTTP client shares (agents called, webhooks, JWKS documents): the
//! certificate roots trusted beside the platform's, and errors told with their causes.

use std::fmt;

/// PEM certificates to trust beside the platform's roots; none by default.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct ExtraRoots(Vec<u8>);

impl ExtraRoots {
    /// Adds the certificates of a PEM bundle (checked when a client is built).
    pub(crate) fn add(&mut self, pem: &[u8]) {
        self.0.extend_from_slice(pem);
        self.0.push(b'\n');
    }

    /// `builder`, trusting these certificates too; an error says what is wrong with them.
    pub(crate) fn apply(
        &self,
        builder: reqwest::ClientBuilder,
    ) -> Result<reqwest::ClientBuilder, String> {
        if self.0.is_empty() {
            return Ok(builder);
        }
        let certs = reqwest::Certificate::from_pem_bundle(&self.0)
            .map_err(|e| format!("the root certificates given are not a PEM bundle: {e}"))?;
        if certs.is_empty() {
            return Err(
                "the root certificates given hold no `-----BEGIN CERTIFICATE-----` block"
                    .to_owned(),
            );
        }
        Ok(builder.tls_certs_merge(certs))
    }
}

/// An error and its causes, on one line ("connection refused" or "invalid peer certificate" is
/// usually a cause).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

impl fmt::Debug for ExtraRoots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self
            .0
            .windows(b"-----BEGIN CERTIFICATE-----".len())
            .filter(|w| *w == b"-----BEGIN CERTIFICATE-----")
            .count();
        write!(f, "{count} certificate(s)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_without_certificates_is_an_error_that_says_so() {
        let mut roots = ExtraRoots::default();
        roots.add(b"not a certificate");
        let e = roots.apply(reqwest::Client::builder()).err().unwrap();
        assert!(e.contains("BEGIN CERTIFICATE"), "{e}");
        assert_eq!(format!("{roots:?}"), "0 certificate(s)");
    }

    #[test]
    fn no_roots_leave_the_builder_as_it_is() {
        let roots = ExtraRoots::default();
        assert!(roots.apply(reqwest::Client::builder()).is_ok());
    }
}
