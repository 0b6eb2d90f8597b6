//! Declare an [A2A](https://a2a-protocol.org) (Agent2Agent protocol) agent in Rust, and get an
//! Agent Card that is right by construction. Handlers marked [`#[skill]`](macro@skill), and the
//! input and output types they take and return, become the skills of the card, checked at
//! compile time; the same declaration routes each structured message to its handler with
//! validated, typed input, and serves the agent over JSON-RPC, HTTP+JSON, A2A 0.3, gRPC and MCP.
//!
//! The guide is the book, in the repository's
//! [`book/`](https://github.com/a2a-card/a2a-card/tree/main/book/src) (every Rust block of it is
//! a doctest of this crate); this is the API reference. The crate holds the Agent Card: a
//! version-neutral [model](AgentCard), its JSON in the protocol's [wire profiles](wire) (A2A 1.0,
//! 0.3, and a compat document holding both), the [input/output schemas extension](NamedSchema),
//! the [structured input flow](dispatch), and a [linter](lint) that knows every rule of the
//! card. The macros [`#[agent]`](macro@agent), [`#[skill]`](macro@skill) and
//! [`Schema`](derive@Schema) declare an agent; features add the rest:
//!
//! | feature | what it adds |
//! |---|---|
//! | `server` | `serve` and `server`: every binding, the task lifecycle, authentication |
//! | `sqlite`, `postgres` | durable task stores, several replicas on Postgres |
//! | `grpc` | the official gRPC binding, served and called |
//! | `mcp` | each skill an MCP tool (`mcp`) |
//! | `ui` | the form page at `/ui` |
//! | `otel` | OpenTelemetry export (`otel`) |
//! | `sign` | signed cards (`sign`) |
//! | `client` | calling agents (`client`) and typed clients |
//! | `cli` | the `a2a-card` command |
//! | `rig` | skills as tools of a model's agent loop, a model's stream as a skill's (`rig`) |
//!
//! ```
//! use a2a_card::{AgentCard, AgentSkill, wire::Profile};
//!
//! let card = AgentCard::builder(
//!     "Fight Judge",
//!     "Decides who would win a hypothetical fight between two named contestants, with a probability and reasons.",
//!     "1.0.0",
//! )
//! .jsonrpc("https://fights.example.com/a2a")
//! .streaming(false)
//! .push_notifications(false)
//! .skill(
//!     AgentSkill::builder("fight-comparison", "Fight Comparison", "Compares two contestants and names the likely winner.")
//!         .tags(["comparison", "fight"])
//!         .example("Who wins, a lion or a tiger?"),
//! )
//! .build()?;
//! let json = card.to_json(Profile::V1);
//! assert_eq!(json["skills"][0]["id"], "fight-comparison");
//! # Ok::<(), a2a_card::BuildError>(())
//! ```
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod ag_ui;
mod agent;
mod arguments;
pub mod budget;
mod builder;
mod card;
#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "server")]
mod clock;
mod const_checks;
mod context;
pub mod dispatch;
mod file;
pub mod idempotency;
pub mod journal;
pub mod lint;
#[cfg(feature = "otel")]
pub mod otel;
#[cfg(any(feature = "client", feature = "server"))]
mod outbound;
mod principal;
#[cfg(feature = "rig")]
pub mod rig;
mod schema;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "sign")]
pub mod sign;
mod skill;
#[cfg(feature = "testing")]
pub mod testing;
#[cfg(any(feature = "client", feature = "server"))]
mod v0_3;
pub mod wire;

pub use a2a_card_rules::media;
pub use a2a_card_rules::{MediaType, MediaTypeError};
pub use agent::Agent;
pub use builder::{AgentCardBuilder, AgentSkillBuilder, BuildError};
pub use card::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, ApiKeyLocation, ApiKeyScheme, Extra, HttpAuthScheme,
    MutualTlsScheme, OAuth2Scheme, OAuthFlow, OAuthFlowKind, OAuthFlows, OpenIdConnectScheme,
    ProtocolVersion, SecurityRequirement, SecurityScheme,
};
pub use context::{Answer, Artifact, Interrupted, SkillContext};
pub use file::{File, FileContent};
pub use principal::{Identity, Principal};
pub use schema::{
    DerivesJsonSchema, IO_SCHEMAS_EXTENSION_DESCRIPTION, IO_SCHEMAS_EXTENSION_URI, NamedSchema,
    SchemaMode, SchemaOptions, schema_for,
};
pub use skill::{Input, Output, Reply, SkillError};

#[cfg(feature = "server")]
/// Binds `addr` and serves `agent` there with the default options, until the process ends.
/// A loopback URL in the declaration takes the address bound. See [`Server`](server::Server) for the options, [`Server::listen`](server::Server::listen) to serve on a listener of your own.
///
/// ```no_run
/// # use a2a_card::{agent, skill};
/// # struct Echo;
/// # /// Says back what it is told.
/// # #[agent(url = "http://127.0.0.1:9000")]
/// # impl Echo {
/// #     /// Echoes the text.
/// #     #[skill]
/// #     fn echo(&self, text: String) -> String { text }
/// # }
/// # async fn run() -> Result<(), a2a_card::server::ServerError> {
/// a2a_card::serve(Echo, "127.0.0.1:9000").await
/// # }
/// ```
pub async fn serve<A: Agent>(
    agent: A,
    addr: impl tokio::net::ToSocketAddrs,
) -> Result<(), server::ServerError> {
    server::Server::new(agent).bind(addr).await?.serve().await
}

/// Names a type's JSON Schema for the input/output schemas extension: implements
/// [`NamedSchema`] on top of `schemars::JsonSchema`.
///
/// The name defaults to the type name in lowerCamelCase (`FightComparison` ->
/// `fightComparison`) and must be usable unquoted in a media type (checked at compile time).
/// Doc comments become descriptions and serde attributes are honoured (schemars reads them);
/// `#[serde(deny_unknown_fields)]` gives `additionalProperties: false`.
///
/// | attribute | meaning |
/// |---|---|
/// | `#[schema(name = "...")]` | the schema's name on the card |
/// | `#[schema(inline)]` | inline every subschema instead of `$defs` + `$ref` |
/// | `#[schema(crate = "path")]` | where `a2a_card` is, for re-exporters |
///
/// ```
/// use a2a_card::{NamedSchema, Schema};
/// use schemars::JsonSchema;
///
/// #[derive(serde::Deserialize, JsonSchema, Schema)]
/// #[schema(name = "quote-request")]
/// struct QuoteRequest {
///     /// ISO 4217 code of the currency to sell
///     from: String,
///     /// ISO 4217 code of the currency to buy
///     to: String,
/// }
/// assert_eq!(QuoteRequest::SCHEMA_NAME, "quote-request");
/// assert_eq!(QuoteRequest::json_schema_value()["properties"]["from"]["type"], "string");
/// ```
pub use a2a_card_derive::Schema;

/// Makes a handler a skill of the agent.
///
/// On a method of an [`#[agent]`](macro@agent) impl block, or on a free function that an agent
/// lists with `#[agent(skills(path::to::function))]`. Everything has a default:
///
/// | attribute | default |
/// |---|---|
/// | `id = "..."` | the function name in kebab-case (`fight_comparison` -> `fight-comparison`) |
/// | `name = "..."` | a `# Heading` opening the doc comment, else the function name in Title Case |
/// | `description = "..."` | the doc comment (a skill needs one or the other) |
/// | `tags("a", "b")`, `examples("...")` | none (an example that is JSON data for a skill taking a schema must follow the schema, or the card does not build) |
/// | `input_modes("image/png")`, `output_modes(..)` | extra modes, beside those of the signature: the media types of the files it takes and returns, or `application/json` for a `Schema` input that also takes plain JSON (validated against the schema) |
/// | `security(scheme, oauth = ["scope"])` | one alternative requirement per `security(..)` |
/// | `extended` | off: listed on the public card; on, only on the extended card (authenticated callers) |
/// | `durable`, `durable = "VERSION"` | off; on, an `async` handler keeps a journal on SQLite and Postgres and resumes after a crash or on another replica (see the book's durable skills) |
/// | `concurrency = N` | no limit; at most `N` tasks of the skill running at once, one more refused with `429` (the server's `Limits::skill` replaces it) |
/// | `crate = "path"` | `::a2a_card` |
///
/// String values may be literals, `concat!(..)`, `include_str!(..)` or `const`s.
///
/// The signature gives the modes (the tables below): the input is one argument that is a type
/// deriving [`Schema`](macro@Schema) (`application/json;schema=NAME`), a `String`
/// (`text/plain`), an [`Input<T>`] (both) or a `serde_json::Value` (plain `application/json`), plus optionally a [`SkillContext`] (progress,
/// named artifacts, questions to the caller, cancellation: see its docs) and the message's
/// files ([`File`], `Option<File>`, `Vec<File>`, of the skill's declared `input_modes`); the
/// return is such a type, a `String`, an [`Output<T>`], a [`File`], `impl Stream<Item = R>` of
/// one of these (streamed as it is produced; the card then declares streaming), or a `Result`
/// of one of these whose error fails the task with its message. Handlers may be `async` or
/// not, and take `&self` for shared state, and up to eight arguments besides it. Anything else
/// is a compile error at the token at fault that says which shapes work.
///
/// | argument type | input mode | takes |
/// |---|---|---|
/// | `T` deriving [`Schema`](macro@Schema) (and `Deserialize`) | `application/json;schema=NAME` | a data part that follows the schema |
/// | `String` | `text/plain` | the message's text |
/// | [`Input<T>`] | both | either |
/// | `serde_json::Value` | `application/json` | a data part without a schema media type (plain `application/json`, or none), as it is |
/// | [`SkillContext`] | none | the task, the raw message, and progress, artifacts, questions |
/// | [`File`], `Option<File>`, `Vec<File>` | the skill's declared `input_modes(..)` | the message's files (exactly one, at most one, any) |
///
/// | return type | output mode |
/// |---|---|
/// | `T` deriving [`Schema`](macro@Schema) (and `Serialize`) | `application/json;schema=NAME` (a data artifact) |
/// | `String`, `&'static str` | `text/plain` |
/// | [`Output<T>`] | both |
/// | [`File`] | the skill's declared `output_modes(..)` (a file artifact) |
/// | `impl Stream<Item = R>`, `R` one of the above | as `R`, streamed: each item a chunk of one artifact |
/// | `Result<R, E>` with `E: Display` | as `R`; an `Err` fails the task with its message |
///
/// A skill that returns a stream makes the card declare `capabilities.streaming`. Each item is
/// sent as soon as the stream yields it, as a chunk of one artifact named after the skill; see
/// [`Artifact`] for how chunks are marked, and [`SkillContext`] for progress, questions, named
/// artifacts and cancellation.
///
/// ```
/// use a2a_card::{Agent, Schema, agent, skill};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Deserialize, JsonSchema, Schema)]
/// struct Order { item: String, quantity: u32 }
///
/// #[derive(Serialize, JsonSchema, Schema)]
/// struct Receipt { total_cents: u64 }
///
/// struct Shop;
///
/// /// Takes orders for the corner shop and answers questions about opening hours.
/// #[agent(url = "https://shop.example.com/a2a", streaming = false, push_notifications = false)]
/// impl Shop {
///     /// Places an order and returns the receipt, or fails when the item is sold out.
///     #[skill(tags("orders"), examples(r#"{"item": "apples", "quantity": 3}"#))]
///     async fn place_order(&self, order: Order) -> Result<Receipt, String> {
///         Ok(Receipt { total_cents: 150 * u64::from(order.quantity) })
///     }
///
///     /// # Opening Hours
///     /// Says when the shop is open.
///     #[skill]
///     fn hours(&self, _question: String) -> &'static str {
///         "8:00 to 20:00, every day"
///     }
/// }
///
/// let card = Shop::card().unwrap();
/// assert_eq!(card.skills[0].id, "place-order");
/// assert_eq!(card.skills[0].input_modes, ["application/json;schema=order"]);
/// assert_eq!(card.skills[1].name, "Opening Hours");
/// assert_eq!(card.skills[1].output_modes, ["text/plain"]);
/// ```
pub use a2a_card_derive::skill;

/// Makes an `impl` block of [`#[skill]`](macro@skill) methods (or a struct that lists skill
/// functions from other modules) an [`Agent`] with a card checked at compile time.
///
/// | attribute | meaning |
/// |---|---|
/// | `name = "..."` | default: the type name in words (`FightClub` -> `Fight Club`) |
/// | `description = "..."` | default: the doc comment of the item (one or the other is required) |
/// | `version = "..."` | default: the crate's `CARGO_PKG_VERSION` |
/// | `url = "https://..."` | the endpoint clients send requests to (https, or http on loopback) |
/// | `url(env = "VAR", default = "...")` | the same, taken from `VAR` at run time when set |
/// | `provider(organization = "...", url = "...")` | the provider |
/// | `documentation_url`, `icon_url` | links |
/// | `streaming`, `push_notifications`, `state_transition_history`, `extended_agent_card` | capabilities (`= true/false`, or bare for `true`); say only what is true |
/// | `default_input_modes(..)`, `default_output_modes(..)` | default: `text/plain` |
/// | `security_schemes = path` | a function returning `(name, SecurityScheme)` pairs |
/// | `security(scheme, oauth = ["scope"])` | one alternative requirement per `security(..)` |
/// | `skills(Self::method, module::function, ..)` | skills declared outside this block |
/// | `crate = "path"` | `::a2a_card` |
///
/// Checked at compile time: at least one skill; unique skill ids (across modules too); no two
/// skills taking the same input schema; non-empty name, description and version; modes that are
/// media types; a URL that parses, is absolute, and is https unless loopback; unknown keys (with
/// a suggestion). [`Agent::card`] builds the card once, at first use.
///
/// On an `impl` block, `#[agent]` expands the block's `#[skill]` methods itself, in its one
/// run: the skill is read from the method as written, before any other attribute macro on it
/// runs. A `#[skill]` there is still resolved as written (import it, or write
/// `#[a2a_card::skill]`; a path that names nothing is an unresolved import at it), and may not
/// sit beside a `#[cfg(..)]`, since the card lists every skill. The items each skill adds are
/// placed with its handler, so that an edit to one handler leaves the others' for the
/// compiler's incremental check to reuse.
///
/// ```
/// mod fx {
///     /// Converts an amount between two currencies, given as "100 EUR to USD".
///     #[a2a_card::skill(tags("fx"))]
///     pub fn convert(request: String) -> String {
///         format!("converted: {request}")
///     }
/// }
///
/// /// Converts currencies at today's rates, from plain-text requests.
/// #[a2a_card::agent(url(env = "FX_URL", default = "http://127.0.0.1:9000"), skills(fx::convert))]
/// struct Exchange;
///
/// use a2a_card::Agent;
/// let card = Exchange::card().unwrap();
/// assert_eq!(card.skills[0].id, "convert");
/// assert_eq!(card.version, env!("CARGO_PKG_VERSION"));
/// ```
pub use a2a_card_derive::agent;

/// The typed client `#[agent]` generates, written out from the macro's list of methods (each
/// `name = DECL_CONST: Call<Input, Output>;` or `Streaming<..>`, after its docs): kept with the
/// `client` feature, dropped without it (the macro cannot see this crate's features). Not a
/// public API.
#[cfg(feature = "client")]
#[doc(hidden)]
#[macro_export]
macro_rules! __client_items {
    (
        #[doc = $doc:literal]
        $client:ident for $agent:ty {
            $( $(#[$attr:meta])* $method:ident = $decl:ident: $kind:ident<$input:ty, $output:ty>; )*
        }
    ) => {
        #[doc = $doc]
        #[derive(::core::fmt::Debug, ::core::clone::Clone)]
        pub struct $client {
            agent: $crate::client::RemoteAgent,
        }

        #[allow(dead_code, private_interfaces, private_bounds, clippy::all)]
        impl $client {
            /// Connects to the agent at `url` (its base URL, or its card's URL): reads its card
            /// and checks that it declares this agent's skills with the same schemas.
            pub async fn connect(
                url: impl ::core::convert::Into<::std::string::String>,
            ) -> ::core::result::Result<Self, $crate::client::ClientError> {
                Self::connect_with($crate::client::Connect::new(url)).await
            }

            /// Connects with credentials or signature checks (see `a2a_card::client::Connect`).
            pub async fn connect_with(
                connect: $crate::client::Connect,
            ) -> ::core::result::Result<Self, $crate::client::ClientError> {
                $crate::client::connect_checked::<$agent>(connect)
                    .await
                    .map(|agent| $client { agent })
            }

            /// The agent as discovered: its card, lint findings, untyped calls.
            pub fn remote(&self) -> &$crate::client::RemoteAgent {
                &self.agent
            }

            $(
                $(#[$attr])*
                pub fn $method(&self, input: $input) -> $crate::client::$kind<$input, $output> {
                    $crate::client::$kind::new(&self.agent, <$agent>::$decl.id, input)
                }
            )*
        }
    };
}

/// The typed client `#[agent]` generates: kept with the `client` feature, dropped without it
/// (the macro cannot see this crate's features). Not a public API.
#[cfg(not(feature = "client"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __client_items {
    ($($item:tt)*) => {};
}

/// The README's Rust snippets, compiled (and, where they do not serve, run) as doctests, so that
/// each compiles as written: `cargo test -p a2a-card --all-features --doc`.
#[cfg(all(doctest, feature = "server"))]
#[doc = include_str!("../../README.md")]
pub struct ReadmeSnippets;

#[cfg(doctest)]
mod book;

#[cfg(test)]
pub(crate) mod counted;

/// What the macros' generated code names; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::agent::{
        AgentDecl, ExtensionDecl, RequirementDecl, SchemesFn, Skill, SkillDecl, build_card,
        build_extended_card, unknown_skill,
    };
    pub use crate::arguments::{
        CallInput, Extract, SkillArg, SkillCall, call_async, call_sync, drain,
    };
    pub use crate::const_checks::*;
    pub use crate::skill::{Io, SchemaRef, SkillFuture, SkillReturn};
    pub use schemars;
    pub use serde_json;
    pub use std::boxed::Box;
    pub use std::sync::OnceLock;

    /// Security schemes from any iterator of `(name, scheme)`.
    pub fn schemes<I, K>(iter: I) -> Vec<(String, crate::SecurityScheme)>
    where
        I: IntoIterator<Item = (K, crate::SecurityScheme)>,
        K: Into<String>,
    {
        iter.into_iter().map(|(k, v)| (k.into(), v)).collect()
    }
}
