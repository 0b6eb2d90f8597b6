//! The fight example's tool (`fight-comparison`: two contestants in, a verdict out, the same
//! deterministic judge) served by bare rmcp: a `ServerHandler` written by hand, on rmcp's
//! streamable HTTP service at `POST /mcp`, configured as a2a-card configures it (answers as
//! JSON where a call sends nothing first, sessions for the protocol versions that have them).
//! On 127.0.0.1.
//!
//! ```text
//! mcp_rmcp_peer [--port N]
//! ```

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

/// The one tool, and what the server says of itself (shared by every session's handler).
#[derive(Clone)]
struct Fight(Arc<Described>);

struct Described {
    tools: ListToolsResult,
    info: ServerConfig,
}

/// The judge of the fight example: the contestant whose name carries more letters wins.
fn judge(a: &str, b: &str) -> Value {
    let weight = |name: &str| name.chars().filter(|c| c.is_alphanumeric()).count() as f64;
    let (wa, wb) = (weight(a), weight(b));
    let (winner, loser, ww, wl) = if wa >= wb { (a, b, wa, wb) } else { (b, a, wb, wa) };
    let probability = if ww + wl == 0.0 {
        0.5
    } else {
        (0.5 + (ww - wl) / (2.0 * (ww + wl))).min(0.99)
    };
    json!({
        "winner": winner,
        "probability": (probability * 100.0).round() / 100.0,
        "explanation": format!("{winner} brings more to the fight than {loser}."),
    })
}

impl ServerHandler for Fight {
    fn get_info(&self) -> ServerConfig {
        self.0.info.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(self.0.tools.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "fight-comparison" {
            return Err(ErrorData::invalid_params(
                format!("no tool `{}`", request.name),
                None,
            ));
        }
        let arguments = request.arguments.unwrap_or_default();
        let name = |key: &str| arguments.get(key).and_then(Value::as_str);
        let (Some(a), Some(b)) = (name("a"), name("b")) else {
            return Err(ErrorData::invalid_params(
                "`a` and `b` are the contestants' names",
                None,
            ));
        };
        let verdict = judge(a, b);
        let result = json!({
            "content": [{"type": "text", "text": verdict.to_string()}],
            "structuredContent": verdict,
            "isError": false,
        });
        serde_json::from_value::<rmcp::model::CallToolResult>(result)
            .map(Into::into)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mut port = 18187u16;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                port = args
                    .next()
                    .and_then(|p| p.parse().ok())
                    .expect("--port takes a port number")
            }
            other => panic!("unknown argument `{other}` (mcp_rmcp_peer [--port N])"),
        }
    }
    let string = json!({"type": "string"});
    let fight = Fight(Arc::new(Described {
        tools: serde_json::from_value(json!({"tools": [{
            "name": "fight-comparison",
            "description": "Determines who would win in a hypothetical fight between two contestants.",
            "inputSchema": {"type": "object", "properties": {"a": string, "b": string},
                "required": ["a", "b"], "additionalProperties": false},
            "outputSchema": {"type": "object", "properties": {
                "winner": string, "probability": {"type": "number"}, "explanation": string},
                "required": ["winner", "probability", "explanation"]},
        }]}))
        .expect("a tool list"),
        info: serde_json::from_value(json!({
            "protocolVersion": rmcp::model::ProtocolVersion::default(),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fight-club", "version": "1.0.0"},
        }))
        .expect("a server description"),
    }));
    let config = StreamableHttpServerConfig::default().with_json_response(true);
    let service = StreamableHttpService::new(
        move || Ok(fight.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("the port is free");
    // No Nagle delay on the answers, as a2a-card serves (an event stream's chunks would
    // otherwise wait for the client's delayed acknowledgement, 40 ms).
    let listener = axum::serve::ListenerExt::tap_io(listener, |stream| {
        let _ = stream.set_nodelay(true);
    });
    println!("fight-comparison on bare rmcp: http://127.0.0.1:{port}/mcp");
    axum::serve(listener, app).await.expect("served");
}
