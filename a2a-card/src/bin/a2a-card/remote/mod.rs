//! `a2a-card inspect` and `a2a-card call`: a running agent from the command line, through
//! [`a2a_card::client`]. This module holds what both commands share: how to reach the agent
//! ([`Access`]: credentials, trust, the binding) and the runtime a command runs on.

mod call;
mod inspect;

use std::path::PathBuf;

use a2a_card::client::Connect;
use a2a_card::sign::{Algorithm, Jwks};
use clap::Args;

use super::{AlgArg, Failure, read_text};

pub use call::{CallArgs, run_call};
pub use inspect::{InspectArgs, run_inspect};

/// Credentials and trust, shared by `inspect` and `call`.
#[derive(Args)]
pub struct Access {
    /// A header to send on every request, as `Name: value` (repeatable).
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// A bearer token, sent as `Authorization: Bearer TOKEN` (default: $A2A_TOKEN when set,
    /// which keeps the token out of the process list).
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// Trusted keys (a JWKS document or one JWK) to verify the card's signature with.
    #[arg(long, value_name = "FILE")]
    jwks: Option<PathBuf>,
    /// The signature algorithms to accept.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [AlgArg::EdDSA, AlgArg::ES256])]
    alg: Vec<AlgArg>,
    /// PEM certificates to trust beside the system's roots, for an https agent whose
    /// certificate a private CA signed (repeatable).
    #[arg(long = "ca-cert", value_name = "FILE")]
    ca_certs: Vec<PathBuf>,
    /// The protocol binding to call the agent over, among those its card offers (default:
    /// JSON-RPC, else HTTP+JSON, else gRPC).
    #[arg(long, value_enum)]
    binding: Option<Binding>,
    /// An extension to ask for, by its URI (repeatable): sent in the `A2A-Extensions` header,
    /// as an agent that requires one expects.
    #[arg(long = "extension", value_name = "URI")]
    extensions: Vec<String>,
}

/// A protocol binding, as `--binding` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Binding {
    /// JSON-RPC.
    Jsonrpc,
    /// HTTP+JSON.
    #[value(name = "http-json")]
    HttpJson,
    /// gRPC.
    Grpc,
}

impl Binding {
    /// The card's name for it.
    fn name(self) -> &'static str {
        match self {
            Binding::Jsonrpc => "JSONRPC",
            Binding::HttpJson => "HTTP+JSON",
            Binding::Grpc => "GRPC",
        }
    }
}

impl Access {
    fn connect(&self, url: &str) -> Result<Connect, Failure> {
        let mut connect = Connect::new(url);
        for header in &self.headers {
            let Some((name, value)) = header.split_once(':') else {
                return Err(Failure::from(format!(
                    "--header `{}`: write it as `Name: value`",
                    header.split(['=', ' ']).next().unwrap_or_default()
                )));
            };
            let name = name.trim();
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(Failure::from(format!(
                    "--header: `{name}` is not a header name"
                )));
            }
            connect = connect.header(name, value.trim());
        }
        let from_env = std::env::var("A2A_TOKEN")
            .ok()
            .filter(|t| !t.trim().is_empty());
        if let Some(token) = self.token.clone().or(from_env) {
            connect = connect.bearer_token(token.trim());
        }
        for path in &self.ca_certs {
            connect = connect.root_certificates_pem(read_text(path)?);
        }
        for uri in &self.extensions {
            if !a2a_card_rules::urls::is_absolute_uri(uri.trim()) {
                return Err(Failure::from(format!(
                    "--extension `{uri}`: an extension is named by its URI, e.g. https://example.com/ext/v1"
                )));
            }
            connect = connect.extension(uri.trim());
        }
        connect = connect.prefer_bindings(match self.binding {
            Some(binding) => vec![binding.name()],
            None => vec!["JSONRPC", "HTTP+JSON", "GRPC"],
        });
        Ok(connect)
    }

    /// Whether `card` offers the binding `--binding` asks for (when it asks).
    fn offered(&self, card: &a2a_card::AgentCard) -> Result<(), Failure> {
        let Some(binding) = self.binding else {
            return Ok(());
        };
        if card
            .interfaces
            .iter()
            .any(|i| i.protocol_binding.eq_ignore_ascii_case(binding.name()))
        {
            return Ok(());
        }
        let offered: Vec<&str> = card
            .interfaces
            .iter()
            .map(|i| i.protocol_binding.as_str())
            .collect();
        Err(Failure::from(format!(
            "--binding {}: the card offers no {} interface (it lists {})",
            binding.name().to_lowercase(),
            binding.name(),
            offered.join(", ")
        )))
    }

    fn keys(&self) -> Result<Option<(Jwks, Vec<Algorithm>)>, Failure> {
        let Some(path) = &self.jwks else {
            return Ok(None);
        };
        let jwks = Jwks::from_text(&read_text(path)?)
            .map_err(|e| Failure::from(format!("{}: {e}", path.display())))?;
        Ok(Some((jwks, self.alg.iter().map(|&a| a.into()).collect())))
    }
}

/// Runs `fut` on a runtime of its own (the command does nothing else).
fn block_on<F: std::future::Future>(fut: F) -> Result<F::Output, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map(|rt| rt.block_on(fut))
        .map_err(|e| Failure::from(format!("cannot start: {e}")))
}
