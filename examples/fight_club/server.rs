//! Where the fight-comparison agent is served, and what the example prints about it; shared
//! by the example and the end-to-end test.

use a2a_card::server::store::Tasks;
use a2a_card::server::{Listening, Server};

use super::agent::FightClub;

/// The port when neither `--port` nor `PORT` gives one.
pub const DEFAULT_PORT: u16 = 8080;

/// The example's server, keeping tasks in `tasks`: the form page, gRPC and MCP beside
/// JSON-RPC and HTTP+JSON.
pub fn example(tasks: Tasks) -> Server<FightClub> {
    Server::new(FightClub)
        .ui(true)
        .grpc(true)
        .mcp(true)
        .metrics_route("/metrics")
        .tasks(tasks)
}

/// The base URL of a bound server: `http://127.0.0.1:PORT`.
pub fn base_url(listening: &Listening) -> String {
    format!("http://{}", listening.local_addr())
}

/// A JSON-RPC `SendMessage` with one structured part following `fightComparison`.
pub fn structured_request(a: &str, b: &str) -> serde_json::Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {
            "messageId": "m1",
            "role": "ROLE_USER",
            "parts": [{
                "data": {"a": a, "b": b},
                "mediaType": "application/json;schema=fightComparison"
            }]
        }}
    })
}

/// What the example prints at start: where the agent, its card and its capabilities are, and
/// a `curl` line to try.
pub fn banner(listening: &Listening) -> String {
    let base = base_url(listening);
    let endpoint = format!("{base}{}", listening.path());
    let request = structured_request("Lion", "Tiger");
    format!(
        "Fight Club agent listening on {base}\n\
         card:          {base}/.well-known/agent-card.json\n\
         capabilities:  {base}/capabilities\n\
         form UI:       {base}/ui\n\
         A2A endpoint:  {url} (JSON-RPC; HTTP+JSON under it; gRPC over HTTP/2)\n\
         MCP endpoint:  {base}/mcp (each skill a tool; streamable HTTP)\n\
         \n\
         Try a structured message:\n\
         curl -s {endpoint} -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \\\n  \
         -d '{request}'\n",
        url = listening.url(),
    )
}
