//! What the journal of a model loop costs (`a2a_card::rig::ModelLoop` in a durable skill): the
//! same loop (three completions of a scripted model, two tool calls) run by a durable skill, each
//! completion and tool call a step journaled on SQLite, and by the same skill not durable
//! (nothing journaled), on the same SQLite store, through the agent in process, one task at a
//! time. Interleaved rounds; the medians give the journal's time per model turn (a turn: a
//! completion and the tool call it asks for), and the journal table's rows give its bytes:
//!
//! ```text
//! cargo bench --bench model_loop
//! ```
//!
//! Under `cargo test --benches` each skill answers once, as a smoke test, and nothing is timed.

use std::time::{Duration, Instant};

use a2a_card::rig::rig_core::message::ToolName;
use a2a_card::rig::rig_core::tool::ToolOutput;
use a2a_card::rig::{DynamicTool, ModelLoop};
use a2a_card::server::Server;
use a2a_card::server::store::Tasks;
use a2a_card::testing::{ScriptedModel, ScriptedReply, TestAgent};
use a2a_card::{SkillContext, SkillError, agent, skill};
use serde_json::json;
use tokio::runtime::Runtime;

/// Tasks per timed round.
const ROUND: u32 = 200;
/// Rounds per skill.
const ROUNDS: usize = 5;
/// Completions per task.
const TURNS: u32 = 3;

/// A loop of three turns: two tool calls, then an answer (each reply by its turn, so one
/// script serves every task).
fn script() -> ScriptedModel {
    ScriptedModel::new()
        .by_turn()
        .reply(ScriptedReply::tool_call("find_hotels", json!({"city": "Lisbon"})).usage(120, 12))
        .reply(ScriptedReply::tool_call("weather", json!({"city": "Lisbon"})).usage(160, 10))
        .reply(ScriptedReply::text("Alfama Rooms, and it is sunny.").usage(190, 9))
}

struct Loops {
    model: ScriptedModel,
}

impl Loops {
    async fn run(&self, request: String, ctx: &SkillContext) -> Result<String, SkillError> {
        let tool = |name: &str, text: &'static str| -> Result<DynamicTool, SkillError> {
            let name = ToolName::new(name).map_err(|e| SkillError::Failed(e.to_string()))?;
            Ok(DynamicTool::new(
                name,
                text,
                json!({"type": "object"}),
                move |_| Box::pin(async move { Ok(ToolOutput::text(text)) }),
            ))
        };
        let done = ModelLoop::new(self.model.clone())
            .tools([
                tool("find_hotels", "Alfama Rooms, Baixa House")?,
                tool("weather", "sunny, 18°C")?,
            ])
            .run(ctx, request)
            .await?;
        Ok(done.text)
    }
}

/// The same loop, durable and not.
#[agent(url = "http://127.0.0.1:9600")]
impl Loops {
    /// The loop, each completion and tool call journaled.
    #[skill(durable)]
    async fn journaled(&self, request: String, ctx: SkillContext) -> Result<String, SkillError> {
        self.run(request, &ctx).await
    }

    /// The loop, nothing journaled.
    #[skill]
    async fn plain(&self, request: String, ctx: SkillContext) -> Result<String, SkillError> {
        self.run(request, &ctx).await
    }
}

fn round(runtime: &Runtime, client: &LoopsClient, journaled: bool) -> Duration {
    runtime.block_on(async {
        let start = Instant::now();
        for _ in 0..ROUND {
            call(client, journaled).await;
        }
        start.elapsed()
    })
}

async fn call(client: &LoopsClient, journaled: bool) {
    let answer = if journaled {
        client.journaled("A hotel in Lisbon".into()).await
    } else {
        client.plain("A hotel in Lisbon".into()).await
    };
    assert_eq!(answer.expect("an answer"), "Alfama Rooms, and it is sunny.");
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = std::env::temp_dir().join(format!("a2a-card-model-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let file = dir.join("tasks.db");
    let client = runtime.block_on(async {
        let server = Server::new(Loops { model: script() }).tasks(Tasks::sqlite(&file));
        let agent = TestAgent::start(server).await.expect("served");
        LoopsClient::connect_with(agent.connect())
            .await
            .expect("connected")
    });
    runtime.block_on(async {
        call(&client, true).await;
        call(&client, false).await;
    });
    if !std::env::args().any(|a| a == "--bench") {
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let (mut journaled, mut plain) = (Vec::new(), Vec::new());
    for i in 0..ROUNDS {
        if i % 2 == 0 {
            journaled.push(round(&runtime, &client, true));
            plain.push(round(&runtime, &client, false));
        } else {
            plain.push(round(&runtime, &client, false));
            journaled.push(round(&runtime, &client, true));
        }
    }
    let (journaled, plain) = (median(journaled), median(plain));
    let per_task = |d: Duration| d.as_secs_f64() * 1e3 / f64::from(ROUND);
    let per_turn = (per_task(journaled) - per_task(plain)) / f64::from(TURNS);
    // The journal's rows: every durable task's, entry 0 (what it runs) aside.
    let (rows, bytes, tasks): (i64, i64, i64) = runtime.block_on(async {
        use sqlx::Connection;
        let url = format!("sqlite://{}", file.display());
        let mut db = sqlx::SqliteConnection::connect(&url).await.expect("the file");
        sqlx::query_as(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(body)), 0), COUNT(DISTINCT task_id) FROM a2a_card_journal WHERE n > 0",
        )
        .fetch_one(&mut db)
        .await
        .expect("the journal")
    });
    let turns = (tasks as f64) * f64::from(TURNS);
    println!(
        "model_loop: a task of {TURNS} model turns takes {:.3} ms journaled, {:.3} ms not: the journal adds {per_turn:.3} ms a turn ({:.2}x the plain task's time); it writes {:.1} rows and {:.0} bytes a turn ({rows} rows, {bytes} bytes for {tasks} tasks; {ROUNDS} interleaved rounds of {ROUND} tasks, medians)",
        per_task(journaled),
        per_task(plain),
        journaled.as_secs_f64() / plain.as_secs_f64(),
        rows as f64 / turns,
        bytes as f64 / turns,
    );
    let _ = std::fs::remove_dir_all(&dir);
}
