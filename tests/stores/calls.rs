//! Durable calls between agents: a durable skill of one agent (the travel agent, `book`) calls a
//! durable skill of another (the hotel, `hold`) with `ctx.call`, each agent a process of its
//! own on SQLite. Either is killed at each point of the call (before sending, after sending with
//! the answer lost, while following the task it made; the hotel while it works): the trip is
//! booked, the hotel's skill ran once (a ledger its step writes) and its answer was used once (a
//! ledger the travel agent's step writes). Cancelling the booking cancels the hold; a budget
//! given to the booking reaches the hotel, and a spent one stops the call.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use a2a::{Task, TaskState};
use a2a_card::budget::with_budget;
use a2a_card::client::{ClientError, Connect, Content, Payload, RemoteAgent};
use a2a_card::server::Server;
use a2a_card::server::store::Tasks;
use a2a_card::{SkillContext, SkillError};

use crate::deploy::write_ledger;
use crate::replicas::fresh_file;
use crate::support::client::{card, client, get, status_text};
use crate::support::proxy::Proxy;
use crate::support::replica::Replica;

/// Set in an agent process of these tests: which agent it serves (`hotel`, `travel`).
pub(crate) const ROLE: &str = "A2A_CALL_ROLE";
/// Its SQLite file.
pub(crate) const TASKS: &str = "A2A_CALL_TASKS";
/// The address it binds (the same when it is started again).
pub(crate) const ADDR: &str = "A2A_CALL_ADDR";
/// The ledger file its steps write (`STEP TASK_ID ..`).
pub(crate) const LEDGER: &str = "A2A_CALL_LEDGER";
/// A file its skill waits for before it goes on past its step (the hotel: before it answers;
/// the travel agent: before it calls the hotel).
const GATE: &str = "A2A_CALL_GATE";
/// The travel agent's: the hotel's URL. The hotel's: the URL its card names (a proxy's).
pub(crate) const URL: &str = "A2A_CALL_URL";

/// The lease of the agents' durable tasks.
const LEASE: Duration = Duration::from_millis(600);

/// Holds rooms.
struct Hotel {
    gate: Option<PathBuf>,
    ledger: Option<PathBuf>,
}

/// Holds rooms in cities.
#[a2a_card::agent(url = "http://127.0.0.1:1")]
impl Hotel {
    /// Holds a room (a step), then waits for its gate, and says the budget it was given.
    #[a2a_card::skill(durable)]
    async fn hold(&self, city: String, ctx: SkillContext) -> Result<String, SkillError> {
        ctx.step("hold", async {
            write_ledger(self.ledger.as_deref(), "hold", &ctx)
        })
        .await?;
        gate(self.gate.as_deref()).await;
        let budget = ctx
            .budget()
            .map_or("none".to_owned(), |b| b.as_millis().to_string());
        Ok(format!("room in {city} (budget {budget})"))
    }
}

/// Books trips.
struct Travel {
    hotel: RemoteAgent,
    gate: Option<PathBuf>,
    ledger: Option<PathBuf>,
}

/// Books trips, with rooms from the hotel agent.
#[a2a_card::agent(url = "http://127.0.0.1:1")]
impl Travel {
    /// Books a trip: begins (a step), waits for its gate, has the hotel hold a room, and uses
    /// the hotel's answer (a step).
    #[a2a_card::skill(durable)]
    async fn book(&self, city: String, ctx: SkillContext) -> Result<String, SkillError> {
        ctx.step("begin", async {
            write_ledger(self.ledger.as_deref(), "begin", &ctx)
        })
        .await?;
        gate(self.gate.as_deref()).await;
        let room = ctx
            .call(&self.hotel, "hold", Payload::text(city))
            .await?
            .into_result()?;
        let room = room
            .outputs()
            .into_iter()
            .find_map(|o| match o.content {
                Content::Text(text) => Some(text),
                _ => None,
            })
            .unwrap_or_default();
        let used = format!("use {room}");
        ctx.step("use", async {
            write_ledger(self.ledger.as_deref(), &used, &ctx)
        })
        .await?;
        Ok(format!("booked: {room}"))
    }
}

/// Waits until file `path` exists (at once without one).
async fn gate(path: Option<&Path>) {
    while let Some(path) = path
        && !path.exists()
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Not a test of its own: the body of the agent processes the tests below start (it serves
/// only when they set [`ROLE`], and returns at once otherwise).
#[tokio::test]
async fn call_process() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let var = |name: &str| std::env::var(name).ok();
    let tasks = Tasks::from_url(&var(TASKS).expect("a store"))
        .expect("the store")
        .lease(LEASE);
    let addr = var(ADDR).expect("an address");
    let (gate, ledger) = (var(GATE).map(PathBuf::from), var(LEDGER).map(PathBuf::from));
    let listening = if role == "hotel" {
        let mut server = Server::new(Hotel { gate, ledger }).tasks(tasks);
        if let Some(url) = var(URL) {
            server = server.public_url(url);
        }
        server.bind(addr).await
    } else {
        let hotel = Connect::new(var(URL).expect("the hotel's URL"))
            .discover()
            .await
            .expect("the hotel's card");
        Server::new(Travel {
            hotel,
            gate,
            ledger,
        })
        .tasks(tasks)
        .bind(addr)
        .await
    };
    let listening = listening.expect("the agent serves");
    println!("LISTENING http://{}", listening.local_addr());
    let _ = listening.serve().await;
}

/// The processes of one test: the hotel and the travel agent, each on its SQLite file and its
/// address, with their gates and ledger.
struct Trip {
    name: &'static str,
    hotel: Option<Replica>,
    travel: Option<Replica>,
    hotel_addr: String,
    travel_addr: String,
    /// The URL the hotel's card names (a proxy in front of it, where the test puts one).
    hotel_url: String,
    hotel_gate: PathBuf,
    travel_gate: PathBuf,
    ledger: PathBuf,
}

impl Trip {
    /// The hotel started (its card naming `hotel_url`, or its own address), its gate shut
    /// if `hotel_waits`, and the travel agent, its gate shut if `travel_waits`.
    fn start(name: &'static str, hotel_waits: bool, travel_waits: bool) -> Trip {
        let mut trip = Trip::new(name);
        if !hotel_waits {
            trip.open(true);
        }
        if !travel_waits {
            trip.open(false);
        }
        trip.start_hotel();
        trip.start_travel();
        trip
    }

    fn new(name: &'static str) -> Trip {
        let hotel_addr = free_addr();
        let at = |what: &str| fresh_file(&format!("{name}-{what}"));
        let (hotel_gate, travel_gate, ledger) = (at("hotel-gate"), at("travel-gate"), at("ledger"));
        for db in ["hotel", "travel"] {
            let _ = std::fs::remove_file(db_path(&format!("{name}-{db}")));
        }
        Trip {
            name,
            hotel: None,
            travel: None,
            hotel_url: format!("http://{hotel_addr}"),
            hotel_addr,
            travel_addr: free_addr(),
            hotel_gate,
            travel_gate,
            ledger,
        }
    }

    fn env(&self, role: &str, db: &str, addr: &str, gate: &Path) -> Vec<(&'static str, String)> {
        let db = db_path(&format!("{}-{db}", self.name));
        vec![
            (ROLE, role.to_owned()),
            (TASKS, format!("sqlite://{}", db.display())),
            (ADDR, addr.to_owned()),
            (GATE, gate.display().to_string()),
            (LEDGER, self.ledger.display().to_string()),
        ]
    }

    fn start_hotel(&mut self) {
        let mut env = self.env("hotel", "hotel", &self.hotel_addr, &self.hotel_gate);
        env.push((URL, self.hotel_url.clone()));
        self.hotel = Some(Replica::spawn(PROCESS, &env));
    }

    fn start_travel(&mut self) {
        let mut env = self.env("travel", "travel", &self.travel_addr, &self.travel_gate);
        env.push((URL, self.hotel_url.clone()));
        self.travel = Some(Replica::spawn(PROCESS, &env));
    }

    fn travel_db(&self) -> PathBuf {
        db_path(&format!("{}-travel", self.name))
    }

    /// Opens the hotel's gate (`hotel`) or the travel agent's.
    fn open(&self, hotel: bool) {
        let gate = if hotel {
            &self.hotel_gate
        } else {
            &self.travel_gate
        };
        std::fs::write(gate, "open").expect("the gate opens");
    }

    /// How many lines of the ledger begin with `what`.
    fn count(&self, what: &str) -> usize {
        std::fs::read_to_string(&self.ledger)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with(what))
            .count()
    }

    /// Waits until the ledger has a line beginning with `what`.
    async fn until_ledger(&self, what: &str) {
        let since = Instant::now();
        while self.count(what) == 0 {
            assert!(
                since.elapsed() < Duration::from_secs(20),
                "no `{what}` in the ledger"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn hotel_db(&self) -> PathBuf {
        db_path(&format!("{}-hotel", self.name))
    }

    /// Waits until the travel agent's journal holds an entry of kind `kind` (`step`, `call`).
    async fn until_journaled(&self, kind: &str) {
        self.until_in(&self.travel_db(), kind).await;
    }

    /// Waits until the journal in the SQLite file `db` holds an entry of kind `kind`.
    async fn until_in(&self, db: &Path, kind: &str) {
        let since = Instant::now();
        while journaled(db, kind).await == 0 {
            assert!(
                since.elapsed() < Duration::from_secs(20),
                "no {kind} was journaled"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Books a trip to `city` at the travel agent without waiting: the task.
    async fn book(&self, city: &str, budget: Option<Duration>) -> Task {
        let agent = Connect::new(self.travel_base())
            .discover()
            .await
            .expect("the travel agent");
        let mut message = agent
            .message("book", Payload::text(city))
            .expect("a message");
        if let Some(budget) = budget {
            with_budget(&mut message, budget);
        }
        let sent = agent.send_message(message, true).await.expect("sent");
        sent.task().expect("a task").clone()
    }

    fn travel_base(&self) -> String {
        format!("http://{}", self.travel_addr)
    }

    fn hotel_base(&self) -> String {
        format!("http://{}", self.hotel_addr)
    }

    /// Kills the travel agent and starts it again on its file and address.
    fn restart_travel(&mut self) {
        if let Some(mut travel) = self.travel.take() {
            travel.kill();
        }
        self.start_travel();
    }

    /// Kills the hotel and starts it again on its file and address.
    fn restart_hotel(&mut self) {
        if let Some(mut hotel) = self.hotel.take() {
            hotel.kill();
        }
        self.start_hotel();
    }

    /// Task `id` of the agent at `base` once it ended.
    async fn ended(base: &str, id: &str) -> Task {
        let on = client(&card(base).await, "JSONRPC").await;
        let since = Instant::now();
        loop {
            let task = on.get_task(&get(id)).await.expect("the task");
            if task.status.state.is_terminal() {
                return task;
            }
            assert!(
                since.elapsed() < Duration::from_secs(30),
                "task {id} did not end: {}",
                status_text(&task)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The hotel's tasks.
    async fn hotel_tasks(&self) -> Vec<Task> {
        let on = client(&card(&self.hotel_base()).await, "JSONRPC").await;
        on.list_tasks(&crate::support::client::every_task())
            .await
            .expect("the hotel's tasks")
            .tasks
    }

    /// The booking `id` completed, the hotel's skill ran once, and its answer was used once.
    async fn booked_once(&self, id: &str) {
        let done = Trip::ended(&self.travel_base(), id).await;
        assert_eq!(
            done.status.state,
            TaskState::Completed,
            "{}",
            status_text(&done)
        );
        let hotel_tasks = self.hotel_tasks().await;
        assert_eq!(
            hotel_tasks.len(),
            1,
            "one task at the hotel: {hotel_tasks:?}"
        );
        assert_eq!(self.count("hold"), 1, "the hotel held one room");
        assert_eq!(
            self.count("use"),
            1,
            "the travel agent used the answer once"
        );
        assert_eq!(self.count("begin"), 1);
    }
}

/// The test the agent processes run.
pub(crate) const PROCESS: &str = concat!(module_path!(), "::call_process");

/// A free address on 127.0.0.1, for a process that binds it again when it is started again.
pub(crate) fn free_addr() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    listener.local_addr().expect("its address").to_string()
}

/// The SQLite file `name` of this test run.
fn db_path(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("calls");
    std::fs::create_dir_all(&dir).expect("a directory");
    dir.join(format!("{name}-{}.db", std::process::id()))
}

/// How many entries of kind `kind` (`step`, `call`) the journals of the SQLite file `db` hold.
async fn journaled(db: &Path, kind: &str) -> i64 {
    use sqlx::Connection as _;
    let url = format!("sqlite://{}?mode=ro", db.display());
    let Ok(mut conn) = sqlx::SqliteConnection::connect(&url).await else {
        return 0;
    };
    sqlx::query_scalar("SELECT count(*) FROM a2a_card_journal WHERE body LIKE ?")
        .bind(format!("{{\"{kind}\"%"))
        .fetch_one(&mut conn)
        .await
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_durable_call_whose_caller_is_killed_before_it_sends_is_made_once() {
    let mut trip = Trip::start("before-sending", false, true);
    let booking = trip.book("Lisbon", None).await;
    // The booking began (its step journaled), and waits before its call.
    trip.until_journaled("step").await;
    trip.restart_travel();
    trip.open(false);
    trip.booked_once(&booking.id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_durable_call_whose_answer_was_lost_and_caller_killed_reaches_the_task_it_made() {
    let mut trip = Trip::new("answer-lost");
    // The hotel behind a proxy that loses its answers: the call reaches it, makes the task,
    // and hears nothing back; it asks again (the same key), and hears nothing again.
    let proxy = Proxy::start(trip.hotel_addr.parse().expect("an address")).await;
    trip.hotel_url = format!("http://127.0.0.1:{}", proxy.port());
    trip.open(true);
    trip.open(false);
    trip.start_hotel();
    trip.start_travel();
    proxy.lose_answers(usize::MAX);
    let booking = trip.book("Porto", None).await;
    trip.until_ledger("hold").await;
    trip.until_journaled("step").await;
    assert_eq!(
        journaled(&trip.travel_db(), "call").await,
        0,
        "no task was heard of"
    );
    // Killed before it heard of the task; started again once answers come back: its run
    // sends again with the key of the first, and gets the task the first made.
    if let Some(mut travel) = trip.travel.take() {
        travel.kill();
    }
    proxy.lose_answers(0);
    trip.start_travel();
    trip.booked_once(&booking.id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_durable_call_whose_caller_is_killed_while_it_follows_the_task_follows_it_again() {
    let mut trip = Trip::start("following", true, false);
    let booking = trip.book("Faro", None).await;
    // The hotel's task is made and recorded by the travel agent, which follows it.
    trip.until_ledger("hold").await;
    trip.until_journaled("call").await;
    trip.restart_travel();
    trip.open(true);
    trip.booked_once(&booking.id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_durable_call_whose_callee_is_killed_while_it_works_completes_once() {
    let mut trip = Trip::start("callee-killed", true, false);
    let booking = trip.book("Braga", None).await;
    trip.until_journaled("call").await;
    // The hotel's hold done and journaled (a kill before would run it again, as a step whose
    // process stopped before its result was written does).
    trip.until_in(&trip.hotel_db(), "step").await;
    // The hotel dies mid-call and comes back on its file: its task runs again from its
    // journal (the hold not again), and the travel agent, asking again, hears the end.
    trip.restart_hotel();
    trip.open(true);
    trip.booked_once(&booking.id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_calling_task_cancels_the_task_its_call_made() {
    let trip = Trip::start("cascade", true, false);
    let booking = trip.book("Evora", None).await;
    trip.until_journaled("call").await;
    let travel = client(&card(&trip.travel_base()).await, "JSONRPC").await;
    let request = a2a::CancelTaskRequest {
        id: booking.id.clone(),
        metadata: None,
        tenant: None,
    };
    let cancelled = travel.cancel_task(&request).await.expect("cancelled");
    assert_eq!(cancelled.status.state, TaskState::Canceled);
    let hold = &trip.hotel_tasks().await[0];
    let hold = Trip::ended(&trip.hotel_base(), &hold.id).await;
    assert_eq!(
        hold.status.state,
        TaskState::Canceled,
        "{}",
        status_text(&hold)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_given_to_a_task_reaches_the_agent_it_calls() {
    let trip = Trip::start("budget", false, false);
    let booking = trip.book("Sintra", Some(Duration::from_secs(30))).await;
    let done = Trip::ended(&trip.travel_base(), &booking.id).await;
    assert_eq!(
        done.status.state,
        TaskState::Completed,
        "{}",
        status_text(&done)
    );
    // The hotel was given what was left of the 30 s: less, not much less.
    let text = serde_json::to_string(&done.artifacts).expect("JSON");
    let budget: u64 = text
        .split("budget ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .and_then(|ms| ms.parse().ok())
        .unwrap_or_else(|| panic!("no budget in {text}"));
    assert!((20_000..30_000).contains(&budget), "{budget} ms");
    // A booking without a budget: none reaches the hotel.
    let booking = trip.book("Sintra", None).await;
    let done = Trip::ended(&trip.travel_base(), &booking.id).await;
    let text = serde_json::to_string(&done.artifacts).expect("JSON");
    assert!(text.contains("budget none"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spent_budget_stops_the_call_and_cancels_the_task_it_made() {
    let trip = Trip::start("spent", true, false);
    let booking = trip.book("Tavira", Some(Duration::from_secs(3))).await;
    // The hotel's task is made; it waits for its gate past the budget.
    trip.until_ledger("hold").await;
    let done = Trip::ended(&trip.travel_base(), &booking.id).await;
    assert_eq!(done.status.state, TaskState::Failed);
    let why = status_text(&done);
    let expected = ClientError::OutOfTime { task_id: None }.to_string();
    assert!(why.contains(&expected), "{why}");
    let hold = &trip.hotel_tasks().await[0];
    let hold = Trip::ended(&trip.hotel_base(), &hold.id).await;
    assert_eq!(
        hold.status.state,
        TaskState::Canceled,
        "{}",
        status_text(&hold)
    );
}
