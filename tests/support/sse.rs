//! Server-sent events read frame by frame, as a client that resumes reads them.

use serde_json::{Value, json};

/// An SSE answer read frame by frame: each frame's `id` and `data`.
pub struct Frames {
    response: reqwest::Response,
    buffer: String,
}

impl Frames {
    /// `SubscribeToTask` on `binding` (`JSONRPC` or `HTTP+JSON`) of the agent at `base`, after
    /// `last_event_id` when given (`Last-Event-ID`).
    pub async fn open(base: &str, binding: &str, id: &str, last_event_id: Option<u64>) -> Frames {
        let client = reqwest::Client::new();
        let mut request = if binding == "JSONRPC" {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
                              "params": {"id": id}});
            client
                .post(format!("{base}/"))
                .header("content-type", "application/json")
                .body(body.to_string())
        } else {
            client.get(format!("{base}/tasks/{id}:subscribe"))
        }
        .header("A2A-Version", "1.0");
        if let Some(last) = last_event_id {
            request = request.header("Last-Event-ID", last.to_string());
        }
        let response = request.send().await.expect("a stream");
        assert_eq!(response.status(), 200);
        Frames {
            response,
            buffer: String::new(),
        }
    }

    pub async fn next(&mut self) -> Option<(Option<u64>, Value)> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let frame: String = self.buffer.drain(..end + 2).collect();
                let mut id = None;
                let mut data = String::new();
                for line in frame.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = v.trim().parse().ok();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                if data.is_empty() {
                    continue; // a keep-alive comment
                }
                return Some((id, serde_json::from_str(&data).expect("JSON")));
            }
            let chunk = self.response.chunk().await.expect("the stream")?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}
