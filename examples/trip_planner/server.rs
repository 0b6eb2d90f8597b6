//! Where the trip planner is served, and what the example prints about it; shared by the
//! example and the end-to-end tests.

use std::time::Duration;

use a2a_card::server::store::Tasks;
use a2a_card::server::{Listening, Server, Webhooks};

use super::agent::TripPlanner;

/// The port when neither `--port` nor `PORT` gives one.
pub const DEFAULT_PORT: u16 = 8081;

/// How long the example takes to plan one day (long enough to watch the stream, and to cancel).
pub const PACE: Duration = Duration::from_millis(400);

/// The trip planner's server: the example's pace; webhooks only on public addresses; the
/// gRPC binding and the MCP endpoint beside JSON-RPC and HTTP+JSON.
pub fn server(pace: Duration, webhooks: Webhooks) -> Server<TripPlanner> {
    Server::new(TripPlanner { pace })
        .webhooks(webhooks)
        .grpc(true)
        .mcp(true)
}

/// The example's server, keeping tasks in `tasks`: the example's pace, the form page.
pub fn example(tasks: Tasks) -> Server<TripPlanner> {
    server(PACE, Webhooks::default())
        .ui(true)
        .metrics_route("/metrics")
        .tasks(tasks)
}

/// What the example prints at start: where the agent is, and `curl` lines to try.
pub fn banner(listening: &Listening) -> String {
    let base = format!("http://{}", listening.local_addr());
    let endpoint = format!("{base}{}", listening.path());
    let plan = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
        "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{
            "data": {"destination": "Lisbon", "days": 3},
            "mediaType": "application/json;schema=tripRequest"
        }]}}
    });
    format!(
        "Trip planner listening on {base}\n\
         card:          {base}/.well-known/agent-card.json\n\
         form UI:       {base}/ui\n\
         A2A endpoint:  {url} (JSON-RPC; HTTP+JSON under it; gRPC over HTTP/2)\n\
         MCP endpoint:  {base}/mcp (each skill a tool; streamable HTTP)\n\
         \n\
         Stream a plan (it asks for the start date: answer with a message on the same taskId):\n\
         curl -sN {endpoint} -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \\\n  \
         -d '{plan}'\n",
        url = listening.url(),
    )
}
