//! An agent that wraps a language model through rig: a question-answering skill whose answer
//! is the model's streamed completion, token by token, and a skill whose model may call the
//! Fight Club agent's `fight-comparison` skill through its typed tool.

use a2a_card::client::ClientError;
use a2a_card::rig::rig_core::ProviderError;
use a2a_card::rig::rig_core::completion::CompletionRequest;
use a2a_card::rig::rig_core::providers::openai::OpenAIConfig;
use a2a_card::rig::rig_core::providers::openai::wire::Chat;
use a2a_card::rig::rig_core::{DynModel, Model, operation::Completion};
use a2a_card::rig::{TextDeltas, typed_tool};
use a2a_card::{Input, Output, Schema, agent, skill};
use futures::Stream;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::fight_club::agent::{FightClubClient, FightComparison};

/// What the model is told before a fight question. It goes in the user's turn, not a system
/// message: some OpenAI-compatible servers (llama-cpp-python's) refuse the system message in
/// the content-parts form rig's Chat Completions wire sends.
const FIGHT_INSTRUCTIONS: &str = "You judge fights between two contestants. Call the tool \
    `fight-comparison` with the two contestants as `a` and `b`, then give its verdict in one \
    sentence.";

/// A question about a fight (its own schema, so that A2A routes it here rather than to `ask`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Schema)]
#[serde(deny_unknown_fields)]
pub struct FightQuestion {
    /// The question, naming the two contestants ("Who would win, a lion or a tiger?")
    pub question: String,
}

/// The model, as rig users configure one: any OpenAI-compatible endpoint.
pub struct ModelAgent {
    /// The model, on its endpoint.
    pub model: Model<Chat>,
    /// The most tokens an answer may take.
    pub max_tokens: u64,
    /// Where the Fight Club agent is (its base URL).
    pub fight_club: String,
}

impl ModelAgent {
    /// The model from the environment, as rig's OpenAI client reads it: `OPENAI_BASE_URL`
    /// (default: OpenAI's), `OPENAI_API_KEY` (none needed by a local server), and the model
    /// name from `OPENAI_MODEL` (default `gpt-4o-mini`); the Fight Club agent at
    /// `FIGHT_CLUB_URL` (default `http://127.0.0.1:8080`).
    pub fn from_env() -> ModelAgent {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let mut config = OpenAIConfig::new(var("OPENAI_API_KEY").unwrap_or_default());
        if let Some(url) = var("OPENAI_BASE_URL") {
            config = config.with_base_url(url);
        }
        let name = var("OPENAI_MODEL").unwrap_or_else(|| "gpt-4o-mini".to_owned());
        ModelAgent {
            model: config.client().chat(name),
            max_tokens: var("OPENAI_MAX_TOKENS")
                .and_then(|n| n.parse().ok())
                .unwrap_or(512),
            fight_club: var("FIGHT_CLUB_URL").unwrap_or_else(|| "http://127.0.0.1:8080".to_owned()),
        }
    }

    /// The request for `question`: greedy decoding (temperature 0), so that answers repeat.
    pub fn request(&self, question: String) -> CompletionRequest {
        CompletionRequest::new(question)
            .temperature(0.0)
            .max_tokens(self.max_tokens)
    }
}

/// Answers questions with a language model, streaming each answer as the model writes it, and
/// judges fights with the help of the Fight Club agent.
#[agent(
    url(env = "MODEL_AGENT_URL", default = "http://127.0.0.1:8082"),
    version = "1.0.0",
    push_notifications = false
)]
impl ModelAgent {
    /// # Ask
    /// Answers a question in a few plain sentences, streamed token by token as the model
    /// writes it.
    #[skill(
        tags("question-answering", "llm"),
        examples("What is the capital of France?")
    )]
    pub fn ask(
        &self,
        question: String,
    ) -> impl Stream<Item = Result<String, ProviderError>> + Send + use<> {
        // Each delta is a chunk of the answer; a cancelled task drops the stream, and with it
        // the model request.
        TextDeltas::new(self.model.stream(self.request(question)))
    }

    /// # Fight Question
    /// Answers a question about a fight between two contestants; the model may ask the Fight
    /// Club agent's `fight-comparison` skill for a verdict, as a typed tool.
    #[skill(
        tags("fight", "llm", "tools"),
        examples(r#"{"question": "Who would win, a lion or a tiger?"}"#)
    )]
    pub async fn fight_question(&self, asked: FightQuestion) -> Result<String, String> {
        let fights = FightClubClient::connect(self.fight_club.as_str())
            .await
            .map_err(|e| format!("the Fight Club agent is not there: {e}"))?;
        let remote = fights.remote().clone();
        let tool = typed_tool(
            &remote,
            "fight-comparison",
            move |fight: FightComparison| {
                let fights = fights.clone();
                async move {
                    match fights.fight_comparison(Input::Data(fight)).await? {
                        Output::Data(verdict) => Ok(verdict),
                        Output::Text(text) => Err(ClientError::InvalidOutput {
                            expected: "a verdict (data of schema `fightResponse`)".into(),
                            message: format!("the agent answered in text: {text}"),
                        }),
                    }
                }
            },
        )
        .map_err(|e| e.to_string())?;
        let model: DynModel<Completion> = self.model.clone().into();
        let agent = rig_agent::AgentBuilder::new(model)
            .temperature(0.0)
            .max_tokens(self.max_tokens)
            .dynamic_tool(tool)
            .build();
        agent
            .prompt(format!(
                "{FIGHT_INSTRUCTIONS}\n\nQuestion: {}",
                asked.question
            ))
            .max_turns(3)
            .await
            .map(|response| response.output())
            .map_err(|e| format!("the model failed: {e}"))
    }
}
