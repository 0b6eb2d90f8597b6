//! The structured input flow of the input/output schemas extension (its section 3), usable
//! without any server.
//!
//! [`Dispatcher::dispatch`] takes an incoming message, in the A2A 1.0 shape or the 0.3 shape
//! (`kind`-tagged parts, `metadata.mimeType`), and whether it names an existing task, and says
//! what to answer. One rule each:
//!
//! 1. A part is a *candidate* when it is a data part whose media type is
//!    `application/json;schema=NAME` (1.0: the part's `mediaType`; 0.3 and 1.0: its
//!    `metadata.mimeType`), read leniently (case, spaces, quotes).
//! 2. Only the first candidate counts; the rest are ignored.
//! 3. NAME not declared as an input of the card: [`DispatchError::UndeclaredSchema`]. Declared:
//!    the data is validated against the schema, compiled once when the dispatcher is built; a
//!    failure is [`DispatchError::InvalidData`] listing every violation (capped).
//! 4. No task yet and valid data: the skill that takes NAME runs ([`Decision::Run`]).
//! 5. A candidate on a message that names an existing task: [`DispatchError::TaskAlreadyRunning`].
//! 6. No candidate, and a data part without a schema media type (plain `application/json`, or
//!    no media type at all): the first such part goes to the first skill that takes plain JSON
//!    (a `serde_json::Value` argument, or a schema type with `input_modes("application/json")`),
//!    validated against that skill's schema when it has one ([`DispatchError::InvalidData`]
//!    otherwise). Without such a skill the data part is not input, as before.
//! 7. Otherwise: the message's text goes to the first skill that takes `text/plain`, or
//!    [`DispatchError::NoTextSkill`] when none does. A message with files and no text goes to
//!    the first skill that takes files of the first file's media type.
//! 8. No candidate on a message that names an existing task: it is the caller's answer to a
//!    question the task asked ([`Decision::FollowUp`]); the extension's rule 5 keeps
//!    structured input out of running tasks, so answers are text or unflagged data.
//!
//! The files a message carries ([`Dispatcher::dispatch_with_files`]) go to the skill with its
//! input; a file whose media type that skill does not declare is
//! [`DispatchError::UnsupportedFile`].
//!
//! ```
//! use a2a_card::dispatch::{Decision, Dispatcher};
//! # use a2a_card::{Schema, agent, skill};
//! # #[derive(serde::Deserialize, schemars::JsonSchema, Schema)]
//! # #[serde(deny_unknown_fields)]
//! # struct Pair { a: String, b: String }
//! # struct Judge;
//! # /// Picks a winner between two contestants, from data or text.
//! # #[agent(url = "https://judge.example.com/a2a")]
//! # impl Judge {
//! #     /// Picks the winner of a pair.
//! #     #[skill]
//! #     fn pick(&self, pair: a2a_card::Input<Pair>) -> String { String::new() }
//! # }
//! let dispatcher = Dispatcher::for_agent::<Judge>().unwrap();
//! let message = serde_json::json!({
//!     "role": "ROLE_USER", "messageId": "m1",
//!     "parts": [{"data": {"a": "Lion", "b": "Tiger"}, "mediaType": "application/json;schema=pair"}]
//! });
//! let Decision::Run { skill, .. } = dispatcher.dispatch(message, None) else {
//!     panic!("valid data runs the skill")
//! };
//! assert_eq!(skill, 0);
//! ```

use std::collections::HashMap;
use std::fmt;

use a2a_card_rules::media::essence_is;
use serde_json::Value;

use crate::agent::{Agent, SkillDecl};
use crate::arguments::{CallInput, SkillCall};
use crate::context::SkillContext;
use crate::file::{self, File};
use crate::schema::SchemaMode;

pub use crate::schema::PLAIN_JSON;
pub use decision::{Decision, DispatchError, MAX_DETAIL_LEN, MAX_VIOLATIONS, Violation};

mod decision;

/// The URI of the extension by which a caller names the skill a new task runs, rather than
/// leaving the choice to the rules above (the A2A 1.1 candidate "client-directed skill
/// selection", carried as an extension until the protocol names it). A served card declares
/// it; a message that starts a task names the skill in its `metadata`, under this URI:
///
/// ```json
/// {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "Lisbon, 2 days"}],
///              "metadata": {"https://github.com/a2a-card/a2a-card/extensions/skill/v1": {"skill": "plan-trip"}}}}
/// ```
///
/// The server then runs that skill, with the message checked against its input as dispatch
/// checks it ([`Dispatcher::dispatch_to`]); a skill the agent does not have, or a message the
/// skill cannot take, is `-32602` naming the skill, and so is a skill named on a message that
/// answers a task. [`RemoteAgent::message`](crate::client::RemoteAgent::message) names the
/// skill whenever the card declares the extension.
///
/// ```
/// use a2a_card::dispatch::SKILL_EXTENSION_URI;
/// let metadata = serde_json::json!({SKILL_EXTENSION_URI: {"skill": "plan-trip"}});
/// assert_eq!(metadata[SKILL_EXTENSION_URI]["skill"], "plan-trip");
/// ```
pub const SKILL_EXTENSION_URI: &str = "https://github.com/a2a-card/a2a-card/extensions/skill/v1";

/// The skill a message's `metadata` names under [`SKILL_EXTENSION_URI`] (`{"skill": ID}`):
/// `None` when it names none, or what is wrong with the entry.
#[cfg_attr(not(feature = "server"), allow(dead_code))]
pub(crate) fn named_skill(
    metadata: Option<&HashMap<String, Value>>,
) -> Result<Option<&str>, String> {
    let Some(entry) = metadata.and_then(|m| m.get(SKILL_EXTENSION_URI)) else {
        return Ok(None);
    };
    match entry.get("skill") {
        Some(Value::String(id)) if !id.is_empty() => Ok(Some(id)),
        _ => Err(format!(
            "is {}; it is an object whose `skill` is a skill id (a non-empty string)",
            shorten(&entry.to_string(), 120)
        )),
    }
}

/// `text` cut to at most `max` characters.
#[cfg_attr(not(feature = "server"), allow(dead_code))]
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_owned(),
    }
}

/// A schema input route: the skill and the compiled validator.
struct Route {
    skill: usize,
    validator: jsonschema::Validator,
}

/// The skill that takes plain JSON (rule 6), and its schema when it has one.
#[derive(Debug, Clone, Copy)]
struct JsonRoute {
    skill: usize,
    schema: Option<&'static str>,
}

/// Routes messages to skills; built once per agent.
pub struct Dispatcher {
    routes: HashMap<String, Route>,
    text_skill: Option<usize>,
    json_skill: Option<JsonRoute>,
    /// Per skill: its id and the media types it takes files of (empty: no files).
    skills: Vec<(&'static str, &'static [&'static str])>,
    /// Per skill: what it takes besides a schema part (for a caller that names the skill).
    takes: Vec<Takes>,
}

/// What one skill takes besides data of its schema: text, and plain JSON (with the schema it
/// is validated against, if any).
#[derive(Clone, Copy)]
struct Takes {
    text: bool,
    json: Option<JsonRoute>,
}

impl fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dispatcher")
            .field("schemas", &self.routes.keys().collect::<Vec<_>>())
            .field("text_skill", &self.text_skill)
            .field("json_skill", &self.json_skill.map(|j| j.skill))
            .finish()
    }
}

/// A named schema that does not compile into a validator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaCompileError {
    /// The schema name.
    pub schema: String,
    /// What the validator said.
    pub message: String,
}

impl fmt::Display for SchemaCompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "schema `{}` does not compile: {}",
            self.schema, self.message
        )
    }
}

impl std::error::Error for SchemaCompileError {}

impl Dispatcher {
    /// The dispatcher of a declared agent: a validator per input schema, compiled now.
    pub fn for_agent<A: Agent>() -> Result<Dispatcher, SchemaCompileError> {
        Dispatcher::new(A::SKILLS)
    }

    /// The dispatcher of a list of skill declarations (what [`for_agent`](Self::for_agent)
    /// passes; the declarations are the macros' plumbing, not a public type).
    #[doc(hidden)]
    pub fn new(skills: &[SkillDecl]) -> Result<Dispatcher, SchemaCompileError> {
        let mut routes = HashMap::new();
        let (mut text_skill, mut json_skill) = (None, None);
        let files = skills
            .iter()
            .map(|s| {
                let modes: &'static [&'static str] = if s.input.files {
                    s.extra_input_modes
                } else {
                    &[]
                };
                (s.id, modes)
            })
            .collect();
        let mut takes = Vec::with_capacity(skills.len());
        for (index, skill) in skills.iter().enumerate() {
            let json = takes_plain_json(skill).then(|| JsonRoute {
                skill: index,
                schema: skill.input.schema.map(|s| s.name),
            });
            takes.push(Takes {
                text: skill.input.text,
                json,
            });
            if let Some(schema) = skill.input.schema
                && !routes.contains_key(schema.name)
            {
                let value = (schema.schema)();
                let validator =
                    jsonschema::draft202012::new(&value).map_err(|e| SchemaCompileError {
                        schema: schema.name.to_owned(),
                        message: e.to_string(),
                    })?;
                routes.insert(
                    schema.name.to_owned(),
                    Route {
                        skill: index,
                        validator,
                    },
                );
            }
            if skill.input.text && text_skill.is_none() {
                text_skill = Some(index);
            }
            if json_skill.is_none() {
                json_skill = json;
            }
        }
        Ok(Dispatcher {
            routes,
            text_skill,
            json_skill,
            skills: files,
            takes,
        })
    }

    /// The skill that takes plain JSON (a data part without a schema media type), if any.
    ///
    /// ```
    /// use a2a_card::dispatch::{Decision, Dispatcher};
    /// # use a2a_card::{agent, skill};
    /// # struct Store;
    /// # /// Stores any JSON document it is given.
    /// # #[agent(url = "https://store.example.com/a2a")]
    /// # impl Store {
    /// #     /// Stores a JSON document and says how many keys it has.
    /// #     #[skill]
    /// #     fn store(&self, doc: serde_json::Value) -> String {
    /// #         doc.as_object().map_or(0, |o| o.len()).to_string()
    /// #     }
    /// # }
    /// let dispatcher = Dispatcher::for_agent::<Store>().unwrap();
    /// assert_eq!(dispatcher.json_skill(), Some(0));
    /// // Plain `application/json`, or no media type: the data goes as it is.
    /// let message = serde_json::json!({
    ///     "role": "ROLE_USER", "messageId": "m1",
    ///     "parts": [{"data": {"any": ["shape"]}}]
    /// });
    /// assert!(matches!(dispatcher.dispatch(message, None), Decision::Run { skill: 0, .. }));
    /// ```
    pub fn json_skill(&self) -> Option<usize> {
        self.json_skill.map(|j| j.skill)
    }

    /// The skill that takes schema `name`.
    pub fn skill_for_schema(&self, name: &str) -> Option<usize> {
        self.routes.get(name).map(|r| r.skill)
    }

    /// The skill that takes free text.
    pub fn text_skill(&self) -> Option<usize> {
        self.text_skill
    }

    /// Decides what to answer to `message` (its JSON, 1.0 or 0.3 shape). `existing_task` is
    /// the id of the task the message names, when that task exists.
    pub fn dispatch(&self, message: Value, existing_task: Option<&str>) -> Decision {
        self.dispatch_with_files(message, Vec::new(), existing_task)
    }

    /// Like [`dispatch`](Self::dispatch), for a message whose file parts were taken out as
    /// `files`: they go to the chosen skill, which must take their media types.
    pub fn dispatch_with_files(
        &self,
        message: Value,
        files: Vec<File>,
        existing_task: Option<&str>,
    ) -> Decision {
        self.route(message, files, existing_task, None)
    }

    /// Like [`dispatch_with_files`](Self::dispatch_with_files) for a new task whose skill the
    /// caller has already named (an MCP tool call names its tool): the message's input goes
    /// to skill `skill`, by the same rules and checks (its schema's data validated, its text,
    /// its plain JSON, its files), and input that skill does not take is refused.
    ///
    /// ```
    /// use a2a_card::dispatch::{Decision, Dispatcher};
    /// # use a2a_card::{agent, skill};
    /// # struct Desk;
    /// # /// Two skills that both take text.
    /// # #[agent(url = "https://desk.example.com/a2a")]
    /// # impl Desk {
    /// #     /// Reads.
    /// #     #[skill]
    /// #     fn read(&self, key: String) -> String { key }
    /// #     /// Archives.
    /// #     #[skill]
    /// #     fn archive(&self, key: String) -> String { key }
    /// # }
    /// let dispatcher = Dispatcher::for_agent::<Desk>().unwrap();
    /// let message = serde_json::json!({"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "k-1"}]});
    /// // Text goes to the first text skill, unless the caller names another.
    /// assert!(matches!(dispatcher.dispatch(message.clone(), None), Decision::Run { skill: 0, .. }));
    /// assert!(matches!(dispatcher.dispatch_to(1, message, Vec::new()), Decision::Run { skill: 1, .. }));
    /// ```
    pub fn dispatch_to(&self, skill: usize, message: Value, files: Vec<File>) -> Decision {
        if skill >= self.takes.len() {
            return Decision::Reject(DispatchError::Malformed(format!(
                "there is no skill {skill}"
            )));
        }
        self.route(message, files, None, Some(skill))
    }

    /// The decision for `message`; `named`: the skill the caller named, if any.
    fn route(
        &self,
        message: Value,
        files: Vec<File>,
        existing_task: Option<&str>,
        named: Option<usize>,
    ) -> Decision {
        let Value::Object(mut message) = message else {
            return Decision::Reject(DispatchError::Malformed(
                "a message is a JSON object".into(),
            ));
        };
        // In place: no removal and re-insertion of `parts` in the message's map.
        let Some(Value::Array(parts)) = message.get_mut("parts") else {
            return Decision::Reject(DispatchError::Malformed(
                "a message has a `parts` array".into(),
            ));
        };
        let context = |message: serde_json::Map<String, Value>| {
            // One pass over the message's fields for both ids.
            let (mut task, mut ctx) = (None, None);
            for (k, v) in &message {
                match k.as_str() {
                    // ProtoJSON takes either spelling.
                    "taskId" | "task_id" => task = v.as_str(),
                    "contextId" | "context_id" => ctx = v.as_str(),
                    _ => {}
                }
            }
            SkillContext::new(
                task.or(existing_task).map(str::to_owned),
                ctx.map(str::to_owned),
                Value::Object(message),
            )
        };
        if let Some((index, name)) = parts
            .iter()
            .enumerate()
            .find_map(|(i, p)| candidate_name(p).map(|m| (i, m)))
        {
            if let Some(task_id) = existing_task {
                return Decision::Reject(DispatchError::TaskAlreadyRunning {
                    task_id: task_id.to_owned(),
                    schema: name.into_owned(),
                });
            }
            // Looked up by the borrowed name: no allocation on the happy path.
            let Some((schema, route)) = self.routes.get_key_value(name.as_ref()) else {
                let sent = media_type_of(&parts[index]).unwrap_or_default().to_owned();
                return Decision::Reject(DispatchError::UndeclaredSchema {
                    mode: sent,
                    name: name.into_owned(),
                });
            };
            if let Some(named) = named.filter(|n| *n != route.skill) {
                return Decision::Reject(DispatchError::Malformed(format!(
                    "the data follows schema `{schema}`, the input of skill `{}`, not of skill `{}`",
                    self.skills[route.skill].0, self.skills[named].0
                )));
            }
            let data = take_data(&mut parts[index]);
            let schema = Some((schema.as_str(), &route.validator));
            return self.run_with_data(route.skill, schema, data, files, context(message));
        }
        // Plain data on a new task (rule 6): to the skill that takes plain JSON.
        let json = match named {
            Some(named) => self.takes[named].json,
            None => self.json_skill,
        };
        if let Some(json) = json.filter(|_| existing_task.is_none())
            && let Some(part) = parts.iter_mut().find(|p| is_plain_data(p))
        {
            let data = take_data(part);
            let schema = json
                .schema
                .and_then(|n| self.routes.get_key_value(n))
                .map(|(name, route)| (name.as_str(), &route.validator));
            return self.run_with_data(json.skill, schema, data, files, context(message));
        }
        let text: Vec<&str> = parts.iter().filter_map(text_of).collect();
        if existing_task.is_some() {
            // An answer to the task's question: its text, else its first data part.
            let input = if text.is_empty() {
                let data = parts.iter_mut().find_map(|p| match p {
                    Value::Object(part) if part.contains_key("data") => part.shift_remove("data"),
                    _ => None,
                });
                data.map_or(CallInput::None, CallInput::Data)
            } else {
                CallInput::Text(text.join("\n"))
            };
            return Decision::FollowUp(SkillCall::new(input, context(message)).with_files(files));
        }
        if text.is_empty() {
            let routed = match named {
                Some(named) => Some(named).filter(|_| !files.is_empty()),
                None => files.first().and_then(|f| {
                    let media = f.media_type.as_deref().unwrap_or_default();
                    self.skills
                        .iter()
                        .position(|(_, modes)| !modes.is_empty() && file::accepts(modes, media))
                }),
            };
            if let (Some(skill), Some(_)) = (routed, named)
                && let Err(e) = self.check_files(skill, &files)
            {
                return Decision::Reject(e);
            }
            return match routed {
                Some(skill) => Decision::Run {
                    skill,
                    call: SkillCall::new(CallInput::None, context(message)).with_files(files),
                },
                None => Decision::Reject(DispatchError::NoInput),
            };
        }
        let text_skill = match named {
            Some(named) => Some(named).filter(|n| self.takes[*n].text),
            None => self.text_skill,
        };
        let Some(skill) = text_skill else {
            return Decision::Reject(DispatchError::NoTextSkill);
        };
        if let Err(e) = self.check_files(skill, &files) {
            return Decision::Reject(e);
        }
        let text = text.join("\n");
        Decision::Run {
            skill,
            call: SkillCall::new(CallInput::Text(text), context(message)).with_files(files),
        }
    }

    /// Runs `skill` with `data`, once the data follows `schema` (when the skill has one) and
    /// every file is of a media type the skill takes.
    fn run_with_data(
        &self,
        skill: usize,
        schema: Option<(&str, &jsonschema::Validator)>,
        data: Value,
        files: Vec<File>,
        context: SkillContext,
    ) -> Decision {
        if let Some((name, validator)) = schema
            && let Err(e) = validate(name, validator, &data)
        {
            return Decision::Reject(e);
        }
        if let Err(e) = self.check_files(skill, &files) {
            return Decision::Reject(e);
        }
        Decision::Run {
            skill,
            call: SkillCall::new(CallInput::Data(data), context).with_files(files),
        }
    }

    /// Every file is of a media type skill `skill` takes.
    fn check_files(&self, skill: usize, files: &[File]) -> Result<(), DispatchError> {
        let Some((id, modes)) = self.skills.get(skill) else {
            return Ok(());
        };
        for f in files {
            let media = f.media_type.as_deref().unwrap_or_default();
            if !file::accepts(modes, media) {
                return Err(DispatchError::UnsupportedFile {
                    media_type: media.to_owned(),
                    skill: (*id).to_owned(),
                    accepted: modes.iter().map(|m| (*m).to_owned()).collect(),
                });
            }
        }
        Ok(())
    }
}

/// The schema name of a candidate part, borrowed from the part when the mode needs no unquoting.
/// One pass over the part's fields instead of a hashed lookup per field.
fn candidate_name(part: &Value) -> Option<std::borrow::Cow<'_, str>> {
    let Value::Object(map) = part else {
        return None;
    };
    let (mut kind, mut data, mut media, mut media_snake, mut metadata) =
        (None, false, None, None, None);
    for (k, v) in map {
        match k.as_str() {
            "kind" => kind = Some(v),
            "data" => data = true,
            "mediaType" => media = Some(v),
            "media_type" => media_snake = Some(v),
            "metadata" => metadata = Some(v),
            _ => {}
        }
    }
    if !data || kind.and_then(Value::as_str).is_some_and(|k| k != "data") {
        return None;
    }
    let mode = media
        .or(media_snake)
        .and_then(Value::as_str)
        .or_else(|| metadata?.get("mimeType")?.as_str())?;
    SchemaMode::name_in(mode)
}

/// Whether a skill takes plain JSON: a `serde_json::Value` argument, or a schema type with
/// `application/json` among its declared input modes.
fn takes_plain_json(skill: &SkillDecl) -> bool {
    skill.input.json
        || (skill.input.schema.is_some()
            && skill.extra_input_modes.iter().any(|m| is_plain_json(m)))
}

/// Whether a media type is plain JSON: `application/json` without a `schema` parameter.
fn is_plain_json(media_type: &str) -> bool {
    essence_is(media_type, PLAIN_JSON) && SchemaMode::name_in(media_type).is_none()
}

/// Whether a part is data without a schema media type: plain `application/json`, or none.
fn is_plain_data(part: &Value) -> bool {
    let Value::Object(map) = part else {
        return false;
    };
    let kind = map.get("kind").and_then(Value::as_str);
    map.contains_key("data")
        && kind.is_none_or(|k| k == "data")
        && media_type_of(part).is_none_or(is_plain_json)
}

/// The data of a data part, taken out of it.
fn take_data(part: &mut Value) -> Value {
    match part {
        Value::Object(part) => part.shift_remove("data").unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

/// The data follows `schema` (compiled as `validator`), or the error listing how it does not.
fn validate(
    schema: &str,
    validator: &jsonschema::Validator,
    data: &Value,
) -> Result<(), DispatchError> {
    if validator.is_valid(data) {
        return Ok(());
    }
    let mut violations: Vec<Violation> = validator
        .iter_errors(data)
        .take(MAX_VIOLATIONS + 1)
        .map(|e| Violation {
            instance_path: cut(e.instance_path().to_string()),
            schema_path: cut(e.schema_path().to_string()),
            message: cut(e.to_string()),
        })
        .collect();
    let truncated = violations.len() > MAX_VIOLATIONS;
    violations.truncate(MAX_VIOLATIONS);
    Err(DispatchError::InvalidData {
        schema: schema.to_owned(),
        violations,
        truncated,
    })
}

/// A part's media type: 1.0 `mediaType`, or `metadata.mimeType` (0.3, and accepted in 1.0).
fn media_type_of(part: &Value) -> Option<&str> {
    part.get("mediaType")
        .or_else(|| part.get("media_type"))
        .and_then(Value::as_str)
        .or_else(|| part.get("metadata")?.get("mimeType")?.as_str())
}

/// The text of a text part (1.0 `text`, 0.3 `kind: "text"`).
fn text_of(part: &Value) -> Option<&str> {
    match part.get("kind").and_then(Value::as_str) {
        Some(kind) if kind != "text" => None,
        _ => part.get("text")?.as_str(),
    }
}

/// Cuts a detail at [`MAX_DETAIL_LEN`] bytes, on a character boundary.
fn cut(mut s: String) -> String {
    if s.len() > MAX_DETAIL_LEN {
        let mut end = MAX_DETAIL_LEN;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}
