//! Serving a declared agent (feature `server`): every binding decoded into one call that its
//! own task lifecycle answers, on the official A2A types.
//!
//! One call gives an [`axum::Router`] (or a running server) with:
//!
//! | route | what |
//! |---|---|
//! | `POST <path>` | A2A JSON-RPC 1.0, and 0.3 requests translated onto the same calls |
//! | `<path>/message:send`, `<path>/tasks/{id}`, ... | A2A HTTP+JSON 1.0 |
//! | `GET /.well-known/agent-card.json` | the card, profile by the `A2A-Version` request header |
//! | `GET /capabilities` | the AG-UI `AgentCapabilities` snapshot of the same declaration |
//! | `GET /healthz`, `GET /readyz` | liveness and readiness, on a served listener ([`Listening::serve`]) |
//!
//! `<path>` is the path of the card's URL (`/` for `http://127.0.0.1:8080`, `/a2a` for
//! `https://shop.example.com/a2a`); the card and capabilities are there too
//! (`/a2a/.well-known/agent-card.json`). A [`Host`] serves several agents on one listener,
//! each under a path of its own.
//!
//! The path a request takes, one module per step (the layers in the order a request meets
//! them, the way back in reverse; `wiring` puts them together; on a served listener, `front`
//! applies the first three to each request in one future, and they are layers of the router
//! only where [`Server::router`] is nested in an app of the user's own):
//!
//! ```text
//! front                   (a served listener) a plain GET of a published document (the card,
//!                         /capabilities, the catalog): answered at once from its bytes;
//!                         /healthz and /readyz go to their routes alone
//! drain                   (a served listener) refused once stopping began; streams ended then
//! http::body::keep_alive  a body the answer left unread: read and dropped, or Connection: close
//!   telemetry              the request's span and metrics
//!     documents, ui        the card, /capabilities (any other method), /ui, /metrics
//!     console              (feature `console`) the operators' pages, behind their own check
//!     auth::layer          the card's security: what the credentials came to, in the extensions
//!       http::{jsonrpc, rest} | grpc | mcp/   decode into a call (call: operation + context) ...
//!         lifecycle        ... answered by Lifecycle::call (operations/: a module per operation):
//!                          recorded once; checks, dispatch, the turn
//!           run            the skill's run: its signals made events, questions, cancel
//!           task           the one place a task changes: the table of changes (machine),
//!                          the handler (stage), the recorder: every event numbered,
//!                          applied, logged; readers read the log
//!             store        memory, SQLite, Postgres (store/sql/: writer, round, statements)
//!             push         webhooks, in order, retried
//!           replicas       answers forwarded, cancels heard, another replica's log followed
//!       http::{jsonrpc, rest} | grpc | mcp/   ... and encode its answer
//! ```
//!
//! 1. [`auth`]: the card's security, one layer for every binding; what the credentials came
//!    to (the caller's principal, or the refusal) goes in the request's extensions. Whatever
//!    answers a request, a body it left unread is read and dropped before the answer goes (or
//!    the answer says `Connection: close`), so that a client's next request finds its
//!    connection open.
//! 2. The binding decodes the request into a `call`: one operation with its typed parameters
//!    and its context (the caller, the binding, the extensions asked for, `Last-Event-ID`).
//!    `jsonrpc`: JSON-RPC 1.0 read with the `a2a` types' serde (ProtoJSON spellings such as
//!    snake_case names brought to the one serde reads, value to value), 0.3 requests mapped
//!    onto the same calls and their typed answers back; streams as SSE whose event ids are the
//!    events' numbers, so that `Last-Event-ID` resumes a subscription. `rest`: HTTP+JSON 1.0
//!    the same way, every error a `google.rpc.Status`. `grpc`: the official protobuf service,
//!    each method one call. `mcp`: a tool call, a call of its skill.
//! 3. `lifecycle` answers every call (and, for callers in the process, the official request
//!    handler trait: [`Server::request_handler`]): the message checked and
//!    dispatched once by the [structured input flow](crate::dispatch) before any task exists;
//!    the task created and its skill run; every change of the task checked against one
//!    table of what may happen where it stands, and carried out in one place that numbers its
//!    events in the task's event log, applies them to the task, writes the store and posts
//!    the webhooks; readers read the log. What a finished task keeps in memory is bounded by
//!    count and bytes ([`FinishedLogs`]); nothing where the store keeps the log.
//! 4. [`store`]: where tasks and their event logs are kept (memory; SQLite and Postgres keep
//!    the log too, so streams resume after a restart and on any replica), and `push` delivery.
//!
//! The card served names exactly what is mounted: a JSON-RPC 1.0 and an HTTP+JSON 1.0
//! interface at the card's URL, and a JSON-RPC 0.3 interface there too unless
//! [`Server::a2a_0_3`] turns the translation off. The URL is the declared one
//! (`#[agent(url = ...)]`), or [`Server::public_url`]; when the declared host is loopback,
//! [`Server::bind`] (and [`serve`](crate::serve)) put in the address actually bound, so that the card says
//! where the agent listens.
//!
//! | card request header | profile |
//! |---|---|
//! | none | compat (1.0 and 0.3 fields in one document) |
//! | `A2A-Version: 1.0` (any `1.x`) | A2A 1.0 |
//! | `A2A-Version: 0.3` | A2A 0.3 |
//! | anything else | `400`, saying which versions there are |
//!
//! Each document is serialised once, when the router is built, and answered with a strong
//! `ETag` (`If-None-Match` gives `304`), `Cache-Control: public, max-age=300` (see
//! [`Server::card_max_age`]), `Vary: A2A-Version` and `Access-Control-Allow-Origin: *`, with
//! `OPTIONS` preflight.
//!
//! Protocol requests are limited to [`DEFAULT_BODY_LIMIT`] bytes (see [`Server::body_limit`]).
//! On the JSON-RPC route every JSON-RPC error is answered with HTTP `200`, as the official SDKs
//! answer (their clients take any other status for a transport failure and lose the code): a
//! body that is not UTF-8 or not JSON (`-32700`), not a JSON-RPC request (`-32600`), or that
//! names an unknown method (`-32601`). Only the transport's own refusals have their status: a
//! body that is too large (`413`), not declared as JSON (`415`), and the authentication
//! refusals (`401`, `403`, with their challenges).
//!
//! ```no_run
//! use a2a_card::{agent, skill};
//!
//! struct Echo;
//! /// Says back what it is told.
//! #[agent(url = "http://127.0.0.1:9000")]
//! impl Echo {
//!     /// Echoes the text.
//!     #[skill]
//!     fn echo(&self, text: String) -> String { text }
//! }
//!
//! # async fn run() -> Result<(), a2a_card::server::ServerError> {
//! a2a_card::serve(Echo, "127.0.0.1:9000").await
//! # }
//! ```

pub mod auth;
mod bindings;
mod call;

#[cfg(feature = "console")]
mod console;
mod errors;
#[cfg(test)]
mod fixtures;
mod hosting;
mod idempotency;
mod lifecycle;
mod limits;
mod message;
mod push;
mod server_error;
pub mod store;
pub(crate) mod telemetry;

pub use crate::clock::Clock;
#[cfg(feature = "testing")]
pub(crate) use crate::clock::Driven;
#[cfg(feature = "grpc")]
use bindings::grpc;
use bindings::http;
#[cfg(feature = "mcp")]
pub use bindings::mcp;
#[cfg(feature = "ui")]
use bindings::ui;
#[cfg(feature = "console")]
pub use console::Console;
pub use drain::SHUT_DOWN;
pub use host::Host;
pub use hosting::server::{
    DEFAULT_BODY_LIMIT, DEFAULT_CARD_MAX_AGE, DEFAULT_DRAIN_TIMEOUT, DEFAULT_INPUT_TIMEOUT,
    DEFAULT_MAX_INLINE_FILE, Server,
};
use hosting::{catalog, documents, drain, front, host, interfaces, listening, wiring};
pub use interfaces::{AGENT_CARD_PATH, AI_CATALOG_PATH, CAPABILITIES_PATH};
pub use lifecycle::FinishedLogs;
#[cfg(feature = "testing")]
pub(crate) use lifecycle::{Checked, Lifecycle};
pub use limits::{Limits, Rate};
pub use listening::Listening;
pub use push::Webhooks;
pub use server_error::ServerError;
