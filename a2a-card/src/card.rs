//! The version-neutral Agent Card model.
//!
//! One set of types holds a card from any protocol version (0.1, 0.2, 0.3, 1.0); the
//! [`wire`](crate::wire) module reads and writes the JSON of each version. Every struct keeps the
//! fields it does not know in an `extra` map, so a parsed card can be linted and written back
//! without losing anything.
//!
//! Build cards with [`AgentCard::builder`] and [`AgentSkill::builder`], which check the card on
//! [`build`](crate::builder::AgentCardBuilder::build).

use indexmap::IndexMap;
use serde_json::{Map, Value};

/// Fields a struct does not model, kept verbatim in the order they came.
pub type Extra = Map<String, Value>;

/// An A2A Agent Card: what an agent is, where it listens, what it can do and how to authenticate.
///
/// The fields follow A2A 1.0; fields of earlier versions map onto them (0.3's `url` and
/// `additionalInterfaces` become [`interfaces`](Self::interfaces), its
/// `supportsAuthenticatedExtendedCard` becomes
/// [`capabilities.extended_agent_card`](AgentCapabilities::extended_agent_card), and so on).
///
/// ```
/// use a2a_card::{AgentCard, AgentSkill};
///
/// let card = AgentCard::builder("Echo Agent", "Repeats every message back, word for word.", "1.0.0")
///     .jsonrpc("https://echo.example.com/a2a")
///     .skill(
///         AgentSkill::builder("echo", "Echo", "Returns the input message unchanged.")
///             .tag("echo")
///             .example("Say hello back to me"),
///     )
///     .build()
///     .unwrap();
/// assert_eq!(card.skills[0].id, "echo");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct AgentCard {
    /// Human-readable name of the agent.
    pub name: String,
    /// What the agent does; orchestrators route on it, so be specific.
    pub description: String,
    /// The agent's own version (semver recommended).
    pub version: String,
    /// The organization that provides the agent.
    pub provider: Option<AgentProvider>,
    /// A URL to an icon for the agent.
    pub icon_url: Option<String>,
    /// A URL to human-readable documentation.
    pub documentation_url: Option<String>,
    /// Where and how the agent can be reached; the first entry is preferred.
    pub interfaces: Vec<AgentInterface>,
    /// Optional capabilities and the protocol extensions the agent supports.
    pub capabilities: AgentCapabilities,
    /// Media types the agent accepts when a skill does not say.
    pub default_input_modes: Vec<String>,
    /// Media types the agent produces when a skill does not say.
    pub default_output_modes: Vec<String>,
    /// What the agent can do.
    pub skills: Vec<AgentSkill>,
    /// Authentication methods, by name.
    pub security_schemes: IndexMap<String, SecurityScheme>,
    /// Which schemes a caller must use: a list of alternatives (OR), each naming schemes that are
    /// all required (AND).
    pub security_requirements: Vec<SecurityRequirement>,
    /// JWS signatures over the card.
    pub signatures: Vec<AgentCardSignature>,
    /// Named JSON Schemas of the input/output schemas extension (the card's root `schemas` key),
    /// referenced by `application/json;schema=NAME` modes.
    pub schemas: IndexMap<String, Value>,
    /// Root fields this model does not know, kept verbatim.
    pub extra: Extra,
}

// One of `AgentCard`'s blocks, each in the file of its concern: here, the model's own reads.
impl AgentCard {
    /// The skill with this id.
    pub fn skill(&self, id: &str) -> Option<&AgentSkill> {
        self.skills.iter().find(|skill| skill.id == id)
    }

    /// The input modes of a skill: its own, or the card's defaults when it declares none.
    pub fn input_modes_of<'a>(&'a self, skill: &'a AgentSkill) -> &'a [String] {
        if skill.input_modes.is_empty() {
            &self.default_input_modes
        } else {
            &skill.input_modes
        }
    }

    /// The output modes of a skill: its own, or the card's defaults when it declares none.
    pub fn output_modes_of<'a>(&'a self, skill: &'a AgentSkill) -> &'a [String] {
        if skill.output_modes.is_empty() {
            &self.default_output_modes
        } else {
            &skill.output_modes
        }
    }
}

/// The service provider of an agent.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct AgentProvider {
    /// The provider's organization name.
    pub organization: String,
    /// The provider's website or documentation.
    pub url: String,
    /// Fields this model does not know (for example a `contactEmail`), kept verbatim.
    pub extra: Extra,
}

impl AgentProvider {
    /// A provider with its organization name and website.
    pub fn new(organization: impl Into<String>, url: impl Into<String>) -> Self {
        AgentProvider {
            organization: organization.into(),
            url: url.into(),
            extra: Extra::new(),
        }
    }
}

/// A URL at which the agent speaks one protocol binding of one A2A version.
///
/// In A2A 0.3 cards this is the top-level `url` + `preferredTransport` (the first interface)
/// and the `additionalInterfaces`; in 1.0 cards it is an entry of `supportedInterfaces`.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct AgentInterface {
    /// The absolute URL of the endpoint.
    pub url: String,
    /// The protocol binding: [`JSONRPC`](Self::JSONRPC), [`GRPC`](Self::GRPC),
    /// [`HTTP_JSON`](Self::HTTP_JSON) or another, open-ended name.
    pub protocol_binding: String,
    /// The A2A version spoken there (`"1.0"`, `"0.3"`); `None` when a card does not say.
    pub protocol_version: Option<String>,
    /// A tenant id to send with requests (A2A 1.0).
    pub tenant: Option<String>,
    /// Fields this model does not know, kept verbatim.
    pub extra: Extra,
}

impl AgentInterface {
    /// The JSON-RPC 2.0 binding.
    pub const JSONRPC: &'static str = "JSONRPC";
    /// The gRPC binding.
    pub const GRPC: &'static str = "GRPC";
    /// The HTTP+JSON (REST) binding.
    pub const HTTP_JSON: &'static str = "HTTP+JSON";

    /// An interface at `url` with a binding and a protocol version.
    ///
    /// ```
    /// use a2a_card::{AgentInterface, ProtocolVersion};
    /// let rest = AgentInterface::new("https://a.example.com/rest", AgentInterface::HTTP_JSON, ProtocolVersion::V1_0);
    /// assert_eq!(rest.protocol_version.as_deref(), Some("1.0"));
    /// ```
    pub fn new(
        url: impl Into<String>,
        protocol_binding: impl Into<String>,
        protocol_version: ProtocolVersion,
    ) -> Self {
        AgentInterface {
            url: url.into(),
            protocol_binding: protocol_binding.into(),
            protocol_version: Some(protocol_version.as_str().to_owned()),
            tenant: None,
            extra: Extra::new(),
        }
    }

    /// Whether this interface speaks a pre-1.0 protocol (0.x), as far as the card says.
    pub fn is_pre_1_0(&self) -> bool {
        self.protocol_version
            .as_deref()
            .is_some_and(|v| v.trim_start().starts_with("0."))
    }
}

/// The A2A protocol versions this crate renders.
///
/// Version strings carry no patch number (A2A 1.0 section 3.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// A2A 1.0.
    V1_0,
    /// A2A 0.3.
    V0_3,
}

impl ProtocolVersion {
    /// The version string as it appears in a card: `"1.0"` or `"0.3"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V1_0 => "1.0",
            ProtocolVersion::V0_3 => "0.3",
        }
    }
}

/// Optional capabilities of the agent.
///
/// Each flag is `None` when the card does not say; the A2A default is `false`. Only declare
/// `true` for what the agent really does.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct AgentCapabilities {
    /// Supports streaming responses (`message/stream`, SSE).
    pub streaming: Option<bool>,
    /// Sends push notifications for long-running tasks.
    pub push_notifications: Option<bool>,
    /// Keeps a history of task state transitions (A2A 0.3; dropped in 1.0).
    pub state_transition_history: Option<bool>,
    /// Serves an extended card to authenticated callers (1.0 `extendedAgentCard`,
    /// 0.3 `supportsAuthenticatedExtendedCard`).
    pub extended_agent_card: Option<bool>,
    /// Protocol extensions the agent supports.
    pub extensions: Vec<AgentExtension>,
    /// Fields this model does not know, kept verbatim.
    pub extra: Extra,
}

impl AgentCapabilities {
    /// The declared extension with this URI.
    pub fn extension(&self, uri: &str) -> Option<&AgentExtension> {
        self.extensions.iter().find(|ext| ext.uri == uri)
    }
}

/// A protocol extension the agent supports.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct AgentExtension {
    /// The URI that identifies the extension.
    pub uri: String,
    /// How this agent uses the extension.
    pub description: Option<String>,
    /// Whether clients must understand the extension to talk to the agent.
    pub required: Option<bool>,
    /// Extension-specific parameters.
    pub params: Option<Map<String, Value>>,
    /// Fields this model does not know, kept verbatim.
    pub extra: Extra,
}

impl AgentExtension {
    /// An extension entry with only its URI.
    pub fn new(uri: impl Into<String>) -> Self {
        AgentExtension {
            uri: uri.into(),
            ..AgentExtension::default()
        }
    }

    /// Sets how this agent uses the extension.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// A distinct capability of the agent.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct AgentSkill {
    /// Unique within the card; kebab-case by convention (`code-review`).
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// What the skill does; be specific, orchestrators route on it.
    pub description: String,
    /// Lowercase keywords for search.
    pub tags: Vec<String>,
    /// Sample prompts or payloads the skill handles.
    pub examples: Vec<String>,
    /// Accepted media types; empty means the card's defaults.
    pub input_modes: Vec<String>,
    /// Produced media types; empty means the card's defaults.
    pub output_modes: Vec<String>,
    /// Security needed for this skill (alternatives, as on the card).
    pub security_requirements: Vec<SecurityRequirement>,
    /// Fields this model does not know, kept verbatim.
    pub extra: Extra,
}

/// One alternative of a security requirement: every named scheme is required, each with the
/// listed scopes.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct SecurityRequirement {
    /// Scheme name (a key of [`AgentCard::security_schemes`]) -> required scopes.
    pub schemes: IndexMap<String, Vec<String>>,
}

impl SecurityRequirement {
    /// A requirement of one scheme with the given scopes.
    ///
    /// ```
    /// use a2a_card::SecurityRequirement;
    /// let req = SecurityRequirement::scheme("oauth", ["agent:execute"]);
    /// assert_eq!(req.schemes["oauth"], vec!["agent:execute".to_owned()]);
    /// ```
    pub fn scheme<S: Into<String>>(
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        SecurityRequirement::default().and(name, scopes)
    }

    /// Adds a scheme that is also required.
    pub fn and<S: Into<String>>(
        mut self,
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.schemes
            .insert(name.into(), scopes.into_iter().map(Into::into).collect());
        self
    }
}

/// How a caller authenticates (after OpenAPI's Security Scheme Object).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[expect(
    clippy::large_enum_variant,
    reason = "a card holds a handful of schemes; boxing OAuth2 would only make matching clumsier"
)]
pub enum SecurityScheme {
    /// An API key in a header, query parameter or cookie.
    ApiKey(ApiKeyScheme),
    /// HTTP authentication (`Bearer`, `Basic`, ...).
    Http(HttpAuthScheme),
    /// OAuth 2.0.
    OAuth2(OAuth2Scheme),
    /// OpenID Connect.
    OpenIdConnect(OpenIdConnectScheme),
    /// Mutual TLS.
    MutualTls(MutualTlsScheme),
}

impl SecurityScheme {
    /// HTTP bearer authentication, optionally with a token format hint such as `"JWT"`.
    pub fn bearer(bearer_format: Option<&str>) -> Self {
        SecurityScheme::Http(HttpAuthScheme {
            scheme: "bearer".to_owned(),
            bearer_format: bearer_format.map(str::to_owned),
            description: None,
            extra: Extra::new(),
        })
    }

    /// HTTP basic authentication (a user name and a password).
    ///
    /// ```
    /// use a2a_card::SecurityScheme;
    /// let SecurityScheme::Http(basic) = SecurityScheme::basic() else { unreachable!() };
    /// assert_eq!(basic.scheme, "basic");
    /// ```
    pub fn basic() -> Self {
        SecurityScheme::Http(HttpAuthScheme {
            scheme: "basic".to_owned(),
            bearer_format: None,
            description: None,
            extra: Extra::new(),
        })
    }

    /// An API key sent in `location` under `name`.
    pub fn api_key(location: ApiKeyLocation, name: impl Into<String>) -> Self {
        SecurityScheme::ApiKey(ApiKeyScheme {
            name: name.into(),
            location: location.as_str().to_owned(),
            description: None,
            extra: Extra::new(),
        })
    }

    /// OAuth 2.0 with one flow (A2A 1.0 allows exactly one).
    pub fn oauth2(flow: OAuthFlow) -> Self {
        SecurityScheme::OAuth2(OAuth2Scheme {
            flows: OAuthFlows::default().with(flow),
            oauth2_metadata_url: None,
            description: None,
            extra: Extra::new(),
        })
    }

    /// OpenID Connect, discovered at `url`.
    pub fn open_id_connect(url: impl Into<String>) -> Self {
        SecurityScheme::OpenIdConnect(OpenIdConnectScheme {
            open_id_connect_url: url.into(),
            description: None,
            extra: Extra::new(),
        })
    }

    /// Mutual TLS.
    pub fn mutual_tls() -> Self {
        SecurityScheme::MutualTls(MutualTlsScheme::default())
    }

    /// The scheme's description, if any.
    pub fn description(&self) -> Option<&str> {
        match self {
            SecurityScheme::ApiKey(s) => s.description.as_deref(),
            SecurityScheme::Http(s) => s.description.as_deref(),
            SecurityScheme::OAuth2(s) => s.description.as_deref(),
            SecurityScheme::OpenIdConnect(s) => s.description.as_deref(),
            SecurityScheme::MutualTls(s) => s.description.as_deref(),
        }
    }
}

/// Where an API key is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApiKeyLocation {
    /// A query parameter.
    Query,
    /// A request header.
    Header,
    /// A cookie.
    Cookie,
}

impl ApiKeyLocation {
    /// The wire name: `query`, `header` or `cookie`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ApiKeyLocation::Query => "query",
            ApiKeyLocation::Header => "header",
            ApiKeyLocation::Cookie => "cookie",
        }
    }

    /// Parses a wire name (case-insensitive).
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Query, Self::Header, Self::Cookie]
            .into_iter()
            .find(|l| l.as_str().eq_ignore_ascii_case(s))
    }
}

/// An API key scheme.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ApiKeyScheme {
    /// The header, query parameter or cookie name.
    pub name: String,
    /// `query`, `header` or `cookie` (kept as written; the linter checks it).
    pub location: String,
    /// A description of the scheme.
    pub description: Option<String>,
    /// Fields this model does not know, kept verbatim.
    pub extra: Extra,
}

/// An HTTP authentication scheme.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct HttpAuthScheme {
    /// The RFC 7235 scheme name, e.g. `bearer` or `basic`.
    pub scheme: String,
    /// A hint about the bearer token format, e.g. `JWT`.
    pub bearer_format: Option<String>,
    /// A description of the scheme.
    pub description: Option<String>,
    /// Fields this model does not know, kept verbatim.
    pub extra: Extra,
}

/// An OAuth 2.0 scheme.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct OAuth2Scheme {
    /// The flows (A2A 1.0: exactly one).
    pub flows: OAuthFlows,
    /// RFC 8414 authorization server metadata URL.
    pub oauth2_metadata_url: Option<String>,
    /// A description of the scheme.
    pub description: Option<String>,
    /// Fields this model does not know, kept verbatim.
    pub extra: Extra,
}

/// An OpenID Connect scheme.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct OpenIdConnectScheme {
    /// The OpenID Connect discovery URL.
    pub open_id_connect_url: String,
    /// A description of the scheme.
    pub description: Option<String>,
    /// Fields this model does not know, kept verbatim.
    pub extra: Extra,
}

/// A mutual TLS scheme.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct MutualTlsScheme {
    /// A description of the scheme.
    pub description: Option<String>,
    /// Fields this model does not know, kept verbatim.
    pub extra: Extra,
}

/// The OAuth 2.0 flows of a scheme, one slot per kind.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct OAuthFlows {
    /// Authorization code (with PKCE, preferably).
    pub authorization_code: Option<OAuthFlow>,
    /// Client credentials.
    pub client_credentials: Option<OAuthFlow>,
    /// Device code (RFC 8628; A2A 1.0).
    pub device_code: Option<OAuthFlow>,
    /// Implicit (deprecated).
    pub implicit: Option<OAuthFlow>,
    /// Resource owner password (deprecated).
    pub password: Option<OAuthFlow>,
    /// Fields this model does not know, kept verbatim.
    pub extra: Extra,
}

impl OAuthFlows {
    /// Puts `flow` in the slot of its kind.
    pub fn with(mut self, flow: OAuthFlow) -> Self {
        let kind = flow.kind;
        *self.slot_mut(kind) = Some(flow);
        self
    }

    fn slot_mut(&mut self, kind: OAuthFlowKind) -> &mut Option<OAuthFlow> {
        match kind {
            OAuthFlowKind::AuthorizationCode => &mut self.authorization_code,
            OAuthFlowKind::ClientCredentials => &mut self.client_credentials,
            OAuthFlowKind::DeviceCode => &mut self.device_code,
            OAuthFlowKind::Implicit => &mut self.implicit,
            OAuthFlowKind::Password => &mut self.password,
        }
    }

    /// The flows that are set, in wire order.
    pub fn iter(&self) -> impl Iterator<Item = &OAuthFlow> {
        [
            &self.authorization_code,
            &self.client_credentials,
            &self.device_code,
            &self.implicit,
            &self.password,
        ]
        .into_iter()
        .flatten()
    }
}

/// The kinds of OAuth 2.0 flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OAuthFlowKind {
    /// `authorizationCode`
    AuthorizationCode,
    /// `clientCredentials`
    ClientCredentials,
    /// `deviceCode`
    DeviceCode,
    /// `implicit` (deprecated)
    Implicit,
    /// `password` (deprecated)
    Password,
}

impl OAuthFlowKind {
    /// Every kind, in wire order.
    pub const ALL: [OAuthFlowKind; 5] = [
        OAuthFlowKind::AuthorizationCode,
        OAuthFlowKind::ClientCredentials,
        OAuthFlowKind::DeviceCode,
        OAuthFlowKind::Implicit,
        OAuthFlowKind::Password,
    ];

    /// The key of this flow in an `OAuthFlows` object.
    pub const fn wire_name(self) -> &'static str {
        match self {
            OAuthFlowKind::AuthorizationCode => "authorizationCode",
            OAuthFlowKind::ClientCredentials => "clientCredentials",
            OAuthFlowKind::DeviceCode => "deviceCode",
            OAuthFlowKind::Implicit => "implicit",
            OAuthFlowKind::Password => "password",
        }
    }

    /// Whether OAuth 2.1 and A2A 1.0 deprecate this flow.
    pub const fn is_deprecated(self) -> bool {
        matches!(self, OAuthFlowKind::Implicit | OAuthFlowKind::Password)
    }
}

/// One OAuth 2.0 flow. Which URLs it needs depends on its [`kind`](Self::kind); the constructors
/// take exactly those.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OAuthFlow {
    /// Which flow this is.
    pub kind: OAuthFlowKind,
    /// The authorization URL (authorization code, implicit).
    pub authorization_url: Option<String>,
    /// The token URL (all but implicit).
    pub token_url: Option<String>,
    /// The device authorization URL (device code).
    pub device_authorization_url: Option<String>,
    /// The refresh URL.
    pub refresh_url: Option<String>,
    /// Available scopes: name -> description.
    pub scopes: IndexMap<String, String>,
    /// Whether PKCE is required (authorization code; A2A 1.0).
    pub pkce_required: Option<bool>,
    /// Fields this model does not know, kept verbatim.
    pub extra: Extra,
}

impl OAuthFlow {
    fn empty(kind: OAuthFlowKind) -> Self {
        OAuthFlow {
            kind,
            authorization_url: None,
            token_url: None,
            device_authorization_url: None,
            refresh_url: None,
            scopes: IndexMap::new(),
            pkce_required: None,
            extra: Extra::new(),
        }
    }

    /// An empty flow of `kind`, for parsers; prefer the typed constructors.
    pub(crate) fn of_kind(kind: OAuthFlowKind) -> Self {
        Self::empty(kind)
    }

    /// The authorization code flow, with PKCE required.
    pub fn authorization_code(
        authorization_url: impl Into<String>,
        token_url: impl Into<String>,
    ) -> Self {
        OAuthFlow {
            authorization_url: Some(authorization_url.into()),
            token_url: Some(token_url.into()),
            pkce_required: Some(true),
            ..Self::empty(OAuthFlowKind::AuthorizationCode)
        }
    }

    /// The client credentials flow.
    pub fn client_credentials(token_url: impl Into<String>) -> Self {
        OAuthFlow {
            token_url: Some(token_url.into()),
            ..Self::empty(OAuthFlowKind::ClientCredentials)
        }
    }

    /// The device code flow (RFC 8628).
    pub fn device_code(
        device_authorization_url: impl Into<String>,
        token_url: impl Into<String>,
    ) -> Self {
        OAuthFlow {
            device_authorization_url: Some(device_authorization_url.into()),
            token_url: Some(token_url.into()),
            ..Self::empty(OAuthFlowKind::DeviceCode)
        }
    }

    /// Adds a scope and its description.
    pub fn scope(mut self, name: impl Into<String>, description: impl Into<String>) -> Self {
        self.scopes.insert(name.into(), description.into());
        self
    }
}

/// A JWS signature of the card (RFC 7515 JSON serialization, detached payload).
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct AgentCardSignature {
    /// The base64url-encoded protected header.
    pub protected: String,
    /// The base64url-encoded signature.
    pub signature: String,
    /// The unprotected header.
    pub header: Option<Map<String, Value>>,
    /// Fields this model does not know, kept verbatim.
    pub extra: Extra,
}
