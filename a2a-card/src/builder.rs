//! Builders for cards and skills.
//!
//! [`AgentCardBuilder::build`] runs the [linter](crate::lint) and refuses a card with errors, so a
//! built card is one that clients can use; [`build_unchecked`](AgentCardBuilder::build_unchecked)
//! skips that for tests and tools.

use std::fmt;

use serde_json::Value;

use crate::card::*;
use crate::lint::{self, Finding, Severity};
use crate::schema::{IO_SCHEMAS_EXTENSION_URI, SchemaMode};
use crate::wire::Profile;

/// The media type of plain text, the default mode.
pub(crate) const TEXT_PLAIN: &str = "text/plain";

// One of `AgentCard`'s blocks, each in the file of its concern: here, the builders.
impl AgentCard {
    /// Starts a card with the three fields every card needs.
    ///
    /// Default modes are `text/plain` both ways until set.
    pub fn builder(
        name: impl Into<String>,
        description: impl Into<String>,
        version: impl Into<String>,
    ) -> AgentCardBuilder {
        AgentCardBuilder {
            card: AgentCard {
                name: name.into(),
                description: description.into(),
                version: version.into(),
                ..AgentCard::default()
            },
        }
    }
}

/// Builds an [`AgentCard`]; see [`AgentCard::builder`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct AgentCardBuilder {
    card: AgentCard,
}

/// A card that [`AgentCardBuilder::build`] refused: the error findings, and the warnings beside
/// them.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildError {
    /// Every finding of the card, errors first.
    pub findings: Vec<Finding>,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let errors: Vec<_> = self
            .findings
            .iter()
            .filter(|x| x.severity == Severity::Error)
            .collect();
        write!(f, "the agent card has {} error(s):", errors.len())?;
        for e in errors {
            write!(f, "\n  {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {}

impl AgentCardBuilder {
    /// Sets the provider's organization and website.
    pub fn provider(mut self, organization: impl Into<String>, url: impl Into<String>) -> Self {
        self.card.provider = Some(AgentProvider::new(organization, url));
        self
    }

    /// Sets the icon URL.
    pub fn icon_url(mut self, url: impl Into<String>) -> Self {
        self.card.icon_url = Some(url.into());
        self
    }

    /// Sets the documentation URL.
    pub fn documentation_url(mut self, url: impl Into<String>) -> Self {
        self.card.documentation_url = Some(url.into());
        self
    }

    /// Adds an interface; the first added is preferred.
    pub fn interface(mut self, interface: AgentInterface) -> Self {
        self.card.interfaces.push(interface);
        self
    }

    /// Adds an A2A 1.0 JSON-RPC interface at `url`: the common case.
    pub fn jsonrpc(self, url: impl Into<String>) -> Self {
        self.interface(AgentInterface::new(
            url,
            AgentInterface::JSONRPC,
            ProtocolVersion::V1_0,
        ))
    }

    /// Declares whether the agent streams responses.
    pub fn streaming(mut self, yes: bool) -> Self {
        self.card.capabilities.streaming = Some(yes);
        self
    }

    /// Declares whether the agent sends push notifications.
    pub fn push_notifications(mut self, yes: bool) -> Self {
        self.card.capabilities.push_notifications = Some(yes);
        self
    }

    /// Declares whether the agent keeps task state history (A2A 0.3 only).
    pub fn state_transition_history(mut self, yes: bool) -> Self {
        self.card.capabilities.state_transition_history = Some(yes);
        self
    }

    /// Declares whether the agent serves an extended card to authenticated callers.
    pub fn extended_agent_card(mut self, yes: bool) -> Self {
        self.card.capabilities.extended_agent_card = Some(yes);
        self
    }

    /// Declares a protocol extension.
    pub fn extension(mut self, extension: AgentExtension) -> Self {
        self.card.capabilities.extensions.push(extension);
        self
    }

    /// Sets the default input modes (replacing `text/plain`).
    pub fn default_input_modes<S: Into<String>>(
        mut self,
        modes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.card.default_input_modes = modes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the default output modes (replacing `text/plain`).
    pub fn default_output_modes<S: Into<String>>(
        mut self,
        modes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.card.default_output_modes = modes.into_iter().map(Into::into).collect();
        self
    }

    /// Adds a skill.
    pub fn skill(mut self, skill: impl Into<AgentSkill>) -> Self {
        self.card.skills.push(skill.into());
        self
    }

    /// Declares a security scheme under `name`.
    pub fn security_scheme(mut self, name: impl Into<String>, scheme: SecurityScheme) -> Self {
        self.card.security_schemes.insert(name.into(), scheme);
        self
    }

    /// Adds an alternative security requirement for the whole agent.
    pub fn security_requirement(mut self, requirement: SecurityRequirement) -> Self {
        self.card.security_requirements.push(requirement);
        self
    }

    /// Declares a named schema for `application/json;schema=NAME` modes, and the input/output
    /// schemas extension with it.
    pub fn schema(mut self, name: impl Into<String>, schema: Value) -> Self {
        self.card.schemas.insert(name.into(), schema);
        self
    }

    /// Adds a signature.
    pub fn signature(mut self, signature: AgentCardSignature) -> Self {
        self.card.signatures.push(signature);
        self
    }

    /// Finishes the card without checking it.
    pub fn build_unchecked(mut self) -> AgentCard {
        let c = &mut self.card;
        for modes in [&mut c.default_input_modes, &mut c.default_output_modes] {
            if modes.is_empty() {
                modes.push(TEXT_PLAIN.to_owned());
            }
        }
        let uses_schemas = !c.schemas.is_empty()
            || c.skills
                .iter()
                .flat_map(|s| s.input_modes.iter().chain(&s.output_modes))
                .any(|m| SchemaMode::parse(m).is_some());
        if uses_schemas && c.capabilities.extension(IO_SCHEMAS_EXTENSION_URI).is_none() {
            c.capabilities
                .extensions
                .push(crate::schema::io_schemas_extension());
        }
        self.card
    }

    /// Finishes the card, refusing it when the [linter](crate::lint) finds an error (warnings
    /// are allowed; see them with [`lint::lint`]).
    ///
    /// ```
    /// use a2a_card::AgentCard;
    /// let err = AgentCard::builder("Echo", "", "1.0.0").build().unwrap_err();
    /// assert!(err.to_string().contains("description-missing"));
    /// ```
    pub fn build(self) -> Result<AgentCard, BuildError> {
        let card = self.build_unchecked();
        let findings = lint::lint(&card, Profile::V1);
        if lint::has_errors(&findings) {
            Err(BuildError { findings })
        } else {
            Ok(card)
        }
    }
}

impl AgentSkill {
    /// Starts a skill with the three fields every skill needs.
    pub fn builder(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> AgentSkillBuilder {
        AgentSkillBuilder {
            skill: AgentSkill {
                id: id.into(),
                name: name.into(),
                description: description.into(),
                ..AgentSkill::default()
            },
        }
    }
}

/// Builds an [`AgentSkill`]; see [`AgentSkill::builder`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until it is added to a card or built"]
pub struct AgentSkillBuilder {
    skill: AgentSkill,
}

impl AgentSkillBuilder {
    /// Adds a tag.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.skill.tags.push(tag.into());
        self
    }

    /// Adds tags.
    pub fn tags<S: Into<String>>(mut self, tags: impl IntoIterator<Item = S>) -> Self {
        self.skill.tags.extend(tags.into_iter().map(Into::into));
        self
    }

    /// Adds an example prompt or payload.
    pub fn example(mut self, example: impl Into<String>) -> Self {
        self.skill.examples.push(example.into());
        self
    }

    /// Adds an input mode (a media type).
    pub fn input_mode(mut self, mode: impl Into<String>) -> Self {
        self.skill.input_modes.push(mode.into());
        self
    }

    /// Adds an output mode (a media type).
    pub fn output_mode(mut self, mode: impl Into<String>) -> Self {
        self.skill.output_modes.push(mode.into());
        self
    }

    /// Adds `application/json;schema=NAME` to the input modes.
    pub fn input_schema(self, name: &str) -> Self {
        let mode = schema_mode(name);
        self.input_mode(mode)
    }

    /// Adds an alternative security requirement for this skill.
    pub fn security_requirement(mut self, requirement: SecurityRequirement) -> Self {
        self.skill.security_requirements.push(requirement);
        self
    }

    /// Finishes the skill (the card's `build` checks it).
    pub fn build(self) -> AgentSkill {
        self.skill
    }
}

fn schema_mode(name: &str) -> String {
    // An empty name gives a mode the linter reports (`schema-undeclared` / `mode-invalid`).
    SchemaMode::new(name).map_or_else(|| "application/json;schema=".to_owned(), |m| m.to_string())
}

impl From<AgentSkillBuilder> for AgentSkill {
    fn from(builder: AgentSkillBuilder) -> Self {
        builder.skill
    }
}
