//! The trait a declared agent implements, and how its declaration becomes a card (the user
//! guide is on `Agent`; the declaration types are reached through `__private`).

use serde_json::Value;

use crate::arguments::SkillCall;
use crate::builder::{AgentCardBuilder, BuildError};
use crate::card::*;
use crate::lint::{Finding, Rule};
use crate::schema::{PLAIN_JSON, SchemaMode};
use crate::skill::{Io, SkillError, SkillFuture};

/// An agent declared with [`#[agent]`](macro@crate::agent): its card, and the glue the
/// dispatcher uses to call its skills.
///
/// `#[agent]` implements it for the type; the declaration it generates (skills, modes, schemas,
/// card values) is checked at compile time where the values are known then, and turned into an
/// [`AgentCard`] once, at first use, by [`Agent::card`].
pub trait Agent: Send + Sync + 'static {
    /// The card-level declaration.
    #[doc(hidden)]
    const DECL: AgentDecl;
    /// The skills, in declaration order.
    #[doc(hidden)]
    const SKILLS: &'static [SkillDecl];

    /// The agent's card, built once from the declaration at first use.
    ///
    /// Fails only for what the compiler could not check: a URL taken from the environment at
    /// run time, security schemes built by a function, or two different types that publish a
    /// schema under one name.
    fn card() -> Result<&'static AgentCard, &'static BuildError>;

    /// Calls skill `index` (of [`SKILLS`](Agent::SKILLS)) with the call's input.
    #[doc(hidden)]
    fn call_skill<'a>(&'a self, index: usize, call: SkillCall) -> SkillFuture<'a>;
}

/// An agent as the server runs it, its type erased: its declaration, its skills, and their
/// handlers. The server's code (the task lifecycle, the bindings) holds this, so that it is
/// compiled once in this crate, not once more for each agent type of each crate that serves one.
#[cfg(feature = "server")]
pub(crate) trait Declared: Send + Sync + 'static {
    /// The card-level declaration.
    fn decl(&self) -> &'static AgentDecl;
    /// The skills, in declaration order.
    fn skills(&self) -> &'static [SkillDecl];
    /// Runs skill `index` (of [`skills`](Declared::skills)) with the call's input.
    fn run_skill(&self, index: usize, call: SkillCall) -> SkillFuture<'_>;
}

#[cfg(feature = "server")]
impl<A: Agent> Declared for A {
    fn decl(&self) -> &'static AgentDecl {
        &A::DECL
    }

    fn skills(&self) -> &'static [SkillDecl] {
        A::SKILLS
    }

    fn run_skill(&self, index: usize, call: SkillCall) -> SkillFuture<'_> {
        self.call_skill(index, call)
    }
}

/// A function that gives the agent's security schemes, by name.
#[doc(hidden)] // Macro plumbing: reached by generated code through `__private`.
pub type SchemesFn = fn() -> Vec<(String, SecurityScheme)>;

/// A scheme name and its scopes, in a security requirement.
#[doc(hidden)] // Macro plumbing: reached by generated code through `__private`.
pub type RequirementDecl = &'static [(&'static str, &'static [&'static str])];

/// The card-level values of `#[agent(...)]`.
#[derive(Debug, Clone, Copy)]
#[doc(hidden)]
pub struct AgentDecl {
    pub name: &'static str,
    pub description: &'static str,
    pub version: &'static str,
    /// An environment variable that overrides `url` at run time.
    pub url_env: Option<&'static str>,
    pub url: &'static str,
    pub provider: Option<(&'static str, &'static str)>,
    pub documentation_url: Option<&'static str>,
    pub icon_url: Option<&'static str>,
    pub streaming: Option<bool>,
    pub push_notifications: Option<bool>,
    pub state_transition_history: Option<bool>,
    pub extended_agent_card: Option<bool>,
    pub default_input_modes: &'static [&'static str],
    pub default_output_modes: &'static [&'static str],
    pub security_schemes: Option<SchemesFn>,
    pub security: &'static [RequirementDecl],
    /// The extensions the card declares (`#[agent(extension(..))]`).
    pub extensions: &'static [ExtensionDecl],
    /// Where the declaration is (the type name), for messages.
    pub source: &'static str,
}

/// An extension `#[agent(extension(..))]` declares: its URI, what the agent does with it,
/// whether callers must ask for it, and its params (a JSON object the macro checked).
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct ExtensionDecl {
    pub uri: &'static str,
    pub description: Option<&'static str>,
    pub required: bool,
    pub params: Option<&'static str>,
}

impl AgentDecl {
    /// A stand-in for an agent whose macro reported an error.
    pub const POISONED: AgentDecl = AgentDecl {
        name: "",
        description: "",
        version: "",
        url_env: None,
        url: "",
        provider: None,
        documentation_url: None,
        icon_url: None,
        streaming: None,
        push_notifications: None,
        state_transition_history: None,
        extended_agent_card: None,
        default_input_modes: &[],
        default_output_modes: &[],
        security_schemes: None,
        security: &[],
        extensions: &[],
        source: "",
    };
}

/// A skill declared on a free function, usable by any agent (`#[agent(skills(path))]`).
#[doc(hidden)]
pub trait Skill<A: ?Sized> {
    /// The declaration.
    const DECL: SkillDecl;
    /// Calls the handler.
    fn call<'a>(agent: &'a A, call: SkillCall) -> SkillFuture<'a>;
}

/// One skill, as `#[skill]` declares it.
#[derive(Debug, Clone, Copy)]
#[doc(hidden)]
pub struct SkillDecl {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub tags: &'static [&'static str],
    pub examples: &'static [&'static str],
    pub input: Io,
    pub output: Io,
    pub extra_input_modes: &'static [&'static str],
    pub extra_output_modes: &'static [&'static str],
    pub security: &'static [RequirementDecl],
    /// Listed only on the extended card (`#[skill(extended)]`), for authenticated callers.
    pub extended: bool,
    /// Durable (`#[skill(durable)]`): the version of the handler's code its journals are kept
    /// for (`""`: none named, so every version runs on them); `None`: not durable.
    pub durable: Option<&'static str>,
    /// At most this many tasks of the skill running at once (`#[skill(concurrency = N)]`);
    /// `Limits::skill` (the server's builder) overrides it.
    pub concurrency: Option<usize>,
    /// The handler as written (`fight_comparison`, `fx::convert`), for messages.
    pub source: &'static str,
    /// Set when the macro reported an error: the declaration is a stand-in, skipped by checks.
    pub poisoned: bool,
}

impl SkillDecl {
    /// Every field at its default (empty, `false`, `None`): what `#[skill]` completes a
    /// declaration with (`..SkillDecl::BLANK`), writing out only the fields a skill sets, so
    /// that the compiler reads fewer tokens for each skill.
    pub const BLANK: SkillDecl = SkillDecl {
        id: "",
        name: "",
        description: "",
        tags: &[],
        examples: &[],
        input: Io::NONE,
        output: Io::NONE,
        extra_input_modes: &[],
        extra_output_modes: &[],
        security: &[],
        extended: false,
        durable: None,
        concurrency: None,
        source: "",
        poisoned: false,
    };

    /// A stand-in for a skill whose macro reported an error (so that one mistake gives one
    /// error).
    pub const POISONED: SkillDecl = SkillDecl {
        poisoned: true,
        ..SkillDecl::BLANK
    };
}

fn modes(io: Io, extra: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    if io.text {
        out.push(crate::builder::TEXT_PLAIN.to_owned());
    }
    if let Some(schema) = io.schema {
        out.extend(SchemaMode::new(schema.name).map(|m| m.to_string()));
    }
    if io.json {
        out.push(PLAIN_JSON.to_owned());
    }
    for m in extra {
        if !out.iter().any(|o| o == m) {
            out.push((*m).to_owned());
        }
    }
    out
}

pub(crate) fn requirements(decls: &[RequirementDecl]) -> Vec<SecurityRequirement> {
    decls
        .iter()
        .map(|req| {
            req.iter()
                .fold(SecurityRequirement::default(), |r, (name, scopes)| {
                    r.and(*name, scopes.iter().copied())
                })
        })
        .collect()
}

/// Builds the card of an agent from its declaration (what [`Agent::card`] calls once).
#[doc(hidden)]
pub fn build_card(agent: &AgentDecl, skills: &[SkillDecl]) -> Result<AgentCard, BuildError> {
    build(agent, skills, false)
}

/// The extended card of a declaration: the public card plus the skills marked
/// `#[skill(extended)]`, which only authenticated callers see (`GetExtendedAgentCard`).
#[doc(hidden)]
pub fn build_extended_card(
    agent: &AgentDecl,
    skills: &[SkillDecl],
) -> Result<AgentCard, BuildError> {
    build(agent, skills, true)
}

fn build(agent: &AgentDecl, skills: &[SkillDecl], extended: bool) -> Result<AgentCard, BuildError> {
    let url = agent
        .url_env
        .and_then(|var| std::env::var(var).ok())
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| agent.url.to_owned());
    let mut b = AgentCard::builder(agent.name, agent.description, agent.version).jsonrpc(url);
    if let Some((organization, url)) = agent.provider {
        b = b.provider(organization, url);
    }
    if let Some(u) = agent.documentation_url {
        b = b.documentation_url(u);
    }
    if let Some(u) = agent.icon_url {
        b = b.icon_url(u);
    }
    // A skill that streams makes the card say so (`streaming = false` beside one does not
    // compile).
    let streams = skills.iter().any(|s| s.output.streaming);
    for (flag, set) in [
        (
            agent.streaming.or(streams.then_some(true)),
            AgentCardBuilder::streaming as fn(_, _) -> _,
        ),
        (
            agent.push_notifications,
            AgentCardBuilder::push_notifications,
        ),
        (
            agent.state_transition_history,
            AgentCardBuilder::state_transition_history,
        ),
        (
            agent
                .extended_agent_card
                .or(skills.iter().any(|s| s.extended).then_some(true)),
            AgentCardBuilder::extended_agent_card,
        ),
    ] {
        if let Some(yes) = flag {
            b = set(b, yes);
        }
    }
    if !agent.default_input_modes.is_empty() {
        b = b.default_input_modes(agent.default_input_modes.iter().copied());
    }
    if !agent.default_output_modes.is_empty() {
        b = b.default_output_modes(agent.default_output_modes.iter().copied());
    }
    if let Some(schemes) = agent.security_schemes {
        for (name, scheme) in schemes() {
            b = b.security_scheme(name, scheme);
        }
    }
    for req in requirements(agent.security) {
        b = b.security_requirement(req);
    }
    for e in agent.extensions {
        let mut extension = crate::card::AgentExtension::new(e.uri);
        extension.description = e.description.map(str::to_owned);
        extension.required = e.required.then_some(true);
        // The macro checked the params are a JSON object.
        extension.params = e
            .params
            .and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok())
            .and_then(|p| match p {
                Value::Object(map) => Some(map),
                _ => None,
            });
        b = b.extension(extension);
    }
    let mut schemas: Vec<(&'static str, Value)> = Vec::new();
    let mut conflicts = Vec::new();
    for skill in skills.iter().filter(|s| extended || !s.extended) {
        let mut s = AgentSkill::builder(skill.id, skill.name, skill.description)
            .tags(skill.tags.iter().copied());
        for e in skill.examples {
            s = s.example(*e);
        }
        for m in modes(skill.input, skill.extra_input_modes) {
            s = s.input_mode(m);
        }
        for m in modes(skill.output, skill.extra_output_modes) {
            s = s.output_mode(m);
        }
        for req in requirements(skill.security) {
            s = s.security_requirement(req);
        }
        b = b.skill(s);
        for schema in [skill.input.schema, skill.output.schema]
            .into_iter()
            .flatten()
        {
            let value = (schema.schema)();
            match schemas.iter().find(|(name, _)| *name == schema.name) {
                Some((_, known)) if *known != value => conflicts.push(schema.name),
                Some(_) => {}
                None => schemas.push((schema.name, value)),
            }
        }
    }
    if !schemas.is_empty() {
        b = b.extension(crate::schema::io_schemas_extension());
    }
    for (name, value) in schemas {
        b = b.schema(name, value);
    }
    if !conflicts.is_empty() {
        let findings = conflicts
            .into_iter()
            .map(|name| {
                Finding::new(
                    Rule::SchemaNameConflict,
                    crate::wire::pointer_push("/schemas", name),
                    format!("two different types of `{}` publish a schema named `{name}`; give one of them another name with #[schema(name = \"...\")]", agent.source),
                )
            })
            .collect();
        return Err(BuildError { findings });
    }
    b.build()
}

/// The future of a call to a skill index that does not exist.
#[doc(hidden)]
pub fn unknown_skill<'a>(index: usize) -> SkillFuture<'a> {
    Box::pin(async move { Err(SkillError::UnknownSkill(index)) })
}
