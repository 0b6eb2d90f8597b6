//! A hotel concierge: a model in a loop with three tools (find hotels, book one, the weather),
//! inside a durable skill (`a2a_card::rig::ModelLoop`). Each completion and each tool call is a
//! step of the task's journal, so a concierge killed in the middle of a booking and restarted
//! neither asks the model again nor books twice; a booking waits for the caller's approval.

use std::sync::{Arc, Mutex};

use a2a_card::rig::rig_core::DynModel;
use a2a_card::rig::rig_core::message::ToolName;
use a2a_card::rig::rig_core::operation::Completion;
use a2a_card::rig::rig_core::providers::openai::OpenAIConfig;
use a2a_card::rig::rig_core::tool::{ToolExecutionError, ToolOutput};
use a2a_card::rig::{DynamicTool, ModelLoop};
use a2a_card::{SkillContext, SkillError, agent, skill};
use serde_json::{Value, json};

/// What the model is told before the caller's request. It goes in the user's turn, not a system
/// message: some OpenAI-compatible servers (llama-cpp-python's) refuse the system message in
/// the content-parts form rig's Chat Completions wire sends.
pub const INSTRUCTIONS: &str = "You are a hotel concierge. Use the tools: `find_hotels` lists \
    the hotels of a city, `book_hotel` books one by its name, `weather` gives a city's weather. \
    Call one tool at a time, then answer the guest in one sentence.";

/// The hotels the concierge knows, by city.
pub const HOTELS: &[(&str, &[&str])] = &[
    ("Lisbon", &["Alfama Rooms", "Baixa House"]),
    ("Porto", &["Ribeira Inn"]),
    ("Paris", &["Hotel du Marais", "Rive Gauche"]),
];

/// The concierge: its model, and the bookings its `book_hotel` tool made (as a hotel would keep
/// them: what a test counts).
pub struct Concierge {
    model: DynModel<Completion>,
    /// Every booking made, in order.
    pub bookings: Arc<Mutex<Vec<String>>>,
    /// Every tool call that reached a tool, in order: its name and arguments.
    pub calls: Arc<Mutex<Vec<(String, Value)>>>,
    max_tokens: Option<u64>,
}

impl Concierge {
    /// A concierge on `model` (any rig completion model).
    pub fn new(model: impl Into<DynModel<Completion>>) -> Concierge {
        Concierge {
            model: model.into(),
            bookings: Arc::default(),
            calls: Arc::default(),
            max_tokens: None,
        }
    }

    /// The model from the environment, as rig's OpenAI client reads it: `OPENAI_BASE_URL`
    /// (default: OpenAI's), `OPENAI_API_KEY` (none needed by a local server), and the model
    /// name from `OPENAI_MODEL` (default `gpt-4o-mini`).
    pub fn from_env() -> Concierge {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let mut config = OpenAIConfig::new(var("OPENAI_API_KEY").unwrap_or_default());
        if let Some(url) = var("OPENAI_BASE_URL") {
            config = config.with_base_url(url);
        }
        let name = var("OPENAI_MODEL").unwrap_or_else(|| "gpt-4o-mini".to_owned());
        Concierge::new(config.client().chat(name))
    }

    /// The same concierge, its loop stopped once its completions used `tokens`.
    pub fn max_tokens(mut self, tokens: u64) -> Concierge {
        self.max_tokens = Some(tokens);
        self
    }

    /// The concierge's tools: `find_hotels`, `book_hotel` (which records the booking) and
    /// `weather`.
    pub fn tools(&self) -> Result<Vec<DynamicTool>, SkillError> {
        let city = json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city's name"}},
            "required": ["city"],
        });
        let hotel = json!({
            "type": "object",
            "properties": {"hotel": {"type": "string", "description": "The hotel's name"}},
            "required": ["hotel"],
        });
        let bookings = Arc::clone(&self.bookings);
        let logged = |name: &'static str| {
            let calls = Arc::clone(&self.calls);
            move |args: &Value| {
                let mut calls = calls.lock().unwrap_or_else(|p| p.into_inner());
                calls.push((name.to_owned(), args.clone()));
            }
        };
        let (find, book, sky) = (
            logged("find_hotels"),
            logged("book_hotel"),
            logged("weather"),
        );
        Ok(vec![
            DynamicTool::new(
                tool_name("find_hotels")?,
                "Lists the hotels of a city",
                city.clone(),
                move |args: Value| {
                    find(&args);
                    Box::pin(async move { find_hotels(&args) })
                },
            ),
            DynamicTool::new(
                tool_name("book_hotel")?,
                "Books a room in a hotel, by the hotel's name",
                hotel,
                move |args: Value| {
                    book(&args);
                    let bookings = Arc::clone(&bookings);
                    Box::pin(async move { book_hotel(&args, &bookings) })
                },
            ),
            DynamicTool::new(
                tool_name("weather")?,
                "Gives the weather in a city",
                city,
                move |args: Value| {
                    sky(&args);
                    Box::pin(async move { weather(&args) })
                },
            ),
        ])
    }
}

fn tool_name(name: &str) -> Result<ToolName, SkillError> {
    ToolName::new(name).map_err(|e| SkillError::Failed(format!("tool `{name}`: {e}")))
}

/// The text of argument `key`, or the tool error that says it is missing.
fn argument<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolExecutionError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolExecutionError::other(format!("`{key}` (a string) is missing")))
}

fn find_hotels(args: &Value) -> Result<ToolOutput, ToolExecutionError> {
    let city = argument(args, "city")?;
    let hotels = HOTELS
        .iter()
        .find(|(c, _)| c.eq_ignore_ascii_case(city.trim()))
        .map(|(_, h)| *h)
        .unwrap_or_default();
    Ok(ToolOutput::json(json!({"city": city, "hotels": hotels})))
}

fn book_hotel(
    args: &Value,
    bookings: &Mutex<Vec<String>>,
) -> Result<ToolOutput, ToolExecutionError> {
    let hotel = argument(args, "hotel")?;
    let known = HOTELS
        .iter()
        .flat_map(|(_, h)| h.iter())
        .find(|h| h.eq_ignore_ascii_case(hotel.trim()))
        .ok_or_else(|| ToolExecutionError::other(format!("there is no hotel `{hotel}`")))?;
    let mut bookings = bookings.lock().unwrap_or_else(|p| p.into_inner());
    bookings.push((*known).to_owned());
    Ok(ToolOutput::text(format!(
        "Booked a room at {known}; confirmation {}",
        bookings.len()
    )))
}

fn weather(args: &Value) -> Result<ToolOutput, ToolExecutionError> {
    let city = argument(args, "city")?;
    let sky = if city.len() % 2 == 0 {
        "sunny"
    } else {
        "cloudy"
    };
    Ok(ToolOutput::text(format!("{sky}, 18°C in {city}")))
}

/// Finds and books hotels, and says the weather, with a language model that calls tools.
#[agent(
    url(env = "CONCIERGE_URL", default = "http://127.0.0.1:8083"),
    version = "1.0.0"
)]
impl Concierge {
    /// # Book a stay
    /// Answers a guest's request about hotels (finding, booking, the weather) with a language
    /// model that calls tools; a booking waits for the caller's approval (the task asks, with
    /// the proposed call as data).
    #[skill(durable, tags("travel", "hotels"), examples("Book a hotel in Lisbon"))]
    pub async fn book_stay(
        &self,
        request: String,
        ctx: SkillContext,
    ) -> Result<String, SkillError> {
        let mut concierge = ModelLoop::new(self.model.clone())
            .temperature(0.0)
            .tools(self.tools()?)
            .approve("book_hotel")
            .max_turns(8);
        if let Some(tokens) = self.max_tokens {
            concierge = concierge.max_tokens(tokens);
        }
        let done = concierge
            .run(&ctx, format!("{INSTRUCTIONS}\n\nThe guest: {request}"))
            .await?;
        Ok(done.text)
    }
}
