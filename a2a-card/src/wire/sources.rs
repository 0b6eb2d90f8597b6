//! The JSON-pointer map of a card: where the reader found each part of the model in the
//! document, and where a part the document lacks belongs. The reader fills it in
//! (`read.rs`); a card of the model gets the map of its 1.0 document without being rendered
//! ([`Sources::of_v1`]); the linter asks it where to point (`lint/check.rs`).

use std::collections::HashMap;

use super::{SchemeNames, pointer_push};
use crate::card::AgentCard;

/// Where each part of the model was read in the document, so that the linter points at the
/// value itself whatever spelling or shape the document used. A part the document lacks points
/// where it belongs (in the document's own shape).
#[derive(Debug, Clone, Default)]
pub(crate) struct Sources {
    /// The document has the 1.0 shape (for parts it lacks).
    pub modern: bool,
    pub interfaces: Vec<InterfaceSource>,
    /// In a 0.3 card, the `additionalInterfaces` entry that repeats the main interface.
    pub main_repetition: Option<String>,
    pub extended_card: String,
    pub extensions: Vec<String>,
    pub default_input_modes: String,
    pub default_output_modes: String,
    pub skills: Vec<SkillSource>,
    /// For each card-level requirement, the object whose keys are scheme names.
    pub requirements: Vec<String>,
    pub schemes: HashMap<String, SchemeSource>,
    pub signatures: Vec<String>,
    pub schemas: String,
}

/// Where an interface's fields are.
#[derive(Debug, Clone, Default)]
pub(crate) struct InterfaceSource {
    /// The object it was read from; `None` for a 0.3 card's top level.
    pub base: Option<String>,
    pub url: String,
    pub binding: String,
    pub version: String,
}

/// Where a skill and its lists are.
#[derive(Debug, Clone, Default)]
pub(crate) struct SkillSource {
    pub base: String,
    pub input_modes: String,
    pub output_modes: String,
    pub requirements: Vec<String>,
}

/// Where a security scheme's fields are: the 1.0 wrapper's content, or the 0.3 object itself.
#[derive(Debug, Clone, Default)]
pub(crate) struct SchemeSource {
    pub fields: String,
    /// Field (by its 1.0 camelCase name) -> where it is, in whatever spelling the document used.
    pub at: HashMap<&'static str, String>,
    /// Each OAuth flow, by its wire name: its object and its fields.
    pub flows: HashMap<&'static str, (String, HashMap<&'static str, String>)>,
    /// Named only in the A2A 0.1/0.2 `authentication` object, which gives no details.
    pub legacy: bool,
}

impl Sources {
    /// Where each part of `card` is in its 1.0 document (as `card.to_json(Profile::V1)` writes
    /// it), without writing it: the 1.0 document is the model's own shape, so every part but a
    /// security scheme's wrapper key is where the map's defaults put it.
    pub(crate) fn of_v1(card: &AgentCard) -> Sources {
        let schemes = card
            .security_schemes
            .iter()
            .map(|(name, scheme)| {
                let base = pointer_push("/securitySchemes", name);
                let source = SchemeSource {
                    fields: pointer_push(&base, SchemeNames::of(scheme).wrapper),
                    ..SchemeSource::default()
                };
                (name.clone(), source)
            })
            .collect();
        Sources {
            modern: true,
            extended_card: "/capabilities/extendedAgentCard".to_owned(),
            default_input_modes: "/defaultInputModes".to_owned(),
            default_output_modes: "/defaultOutputModes".to_owned(),
            schemes,
            ..Sources::default()
        }
    }

    /// The object an interface came from; `None` for the 0.3 top level.
    pub(crate) fn interface_base(&self, i: usize) -> Option<String> {
        match self.interfaces.get(i) {
            Some(source) => source.base.clone(),
            None => Some(format!("/supportedInterfaces/{i}")),
        }
    }

    pub(crate) fn interface(&self, i: usize, field: &str) -> String {
        let Some(source) = self.interfaces.get(i) else {
            return format!("/supportedInterfaces/{i}/{field}");
        };
        match field {
            "url" => source.url.clone(),
            "protocolBinding" => source.binding.clone(),
            "protocolVersion" => source.version.clone(),
            other => format!("{}/{other}", source.base.as_deref().unwrap_or_default()),
        }
    }

    pub(crate) fn skill_base(&self, i: usize) -> String {
        self.skills
            .get(i)
            .map_or_else(|| format!("/skills/{i}"), |s| s.base.clone())
    }

    pub(crate) fn modes(&self, skill: Option<usize>, input: bool) -> String {
        let field = if input { "inputModes" } else { "outputModes" };
        match skill {
            Some(i) => match (self.skills.get(i), input) {
                (Some(s), true) => s.input_modes.clone(),
                (Some(s), false) => s.output_modes.clone(),
                (None, _) => format!("/skills/{i}/{field}"),
            },
            None if input => self.default_input_modes.clone(),
            None => self.default_output_modes.clone(),
        }
    }

    /// Where scheme `name` of requirement `j` (of a skill, or of the card) is.
    pub(crate) fn requirement(&self, skill: Option<usize>, j: usize, name: &str) -> String {
        let (list, base) = match skill {
            Some(i) => (
                self.skills.get(i).map(|s| &s.requirements),
                format!("/skills/{i}"),
            ),
            None => (Some(&self.requirements), String::new()),
        };
        match list.and_then(|l| l.get(j)) {
            Some(at) => pointer_push(at, name),
            None => pointer_push(&format!("{base}/securityRequirements/{j}/schemes"), name),
        }
    }

    /// Where field `field` (by its 1.0 name) of scheme `name` is.
    pub(crate) fn scheme(&self, name: &str, field: &str) -> String {
        match self.schemes.get(name).and_then(|s| s.at.get(field)) {
            Some(at) => at.clone(),
            None => pointer_push(&self.scheme_base(name), field),
        }
    }

    /// Where field `field` of flow `kind` (its wire name) of scheme `name` is.
    pub(crate) fn flow(&self, name: &str, kind: &str, field: &str) -> String {
        let flow = self.schemes.get(name).and_then(|s| s.flows.get(kind));
        match flow {
            Some((base, at)) => at
                .get(field)
                .cloned()
                .unwrap_or_else(|| pointer_push(base, field)),
            None => pointer_push(&pointer_push(&self.scheme(name, "flows"), kind), field),
        }
    }

    pub(crate) fn flow_base(&self, name: &str, kind: &str) -> String {
        match self.schemes.get(name).and_then(|s| s.flows.get(kind)) {
            Some((base, _)) => base.clone(),
            None => pointer_push(&self.scheme(name, "flows"), kind),
        }
    }

    pub(crate) fn scheme_base(&self, name: &str) -> String {
        self.schemes.get(name).map_or_else(
            || pointer_push("/securitySchemes", name),
            |s| s.fields.clone(),
        )
    }

    pub(crate) fn extension(&self, i: usize) -> String {
        self.extensions
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("/capabilities/extensions/{i}"))
    }

    pub(crate) fn signature(&self, i: usize) -> String {
        self.signatures
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("/signatures/{i}"))
    }

    pub(crate) fn schema(&self, name: &str) -> String {
        let base = if self.schemas.is_empty() {
            "/schemas"
        } else {
            &self.schemas
        };
        pointer_push(base, name)
    }
}
