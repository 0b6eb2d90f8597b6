//! Server-sent events read frame by frame, as a client that resumes reads them.

use serde_json::{Value, json};

/// An SSE answer read frame by frame: each frame's `id` and `data`.
pub struct Frames {
    response: reqwest::Response,
    buffer: String,
}

impl Frames {
    /// What the answer held that is no event: a JSON-RPC error answered as plain JSON (with
    /// status 200, as JSON-RPC answers errors) instead of a stream, read to its end.
    pub fn unread(&self) -> &str {
        &self.buffer
    }

    /// `SubscribeToTask` on `binding` (`JSONRPC` or `HTTP+JSON`) of the agent at `base`, after
    /// `last_event_id` when given (`Last-Event-ID`).
    pub async fn open(base: &str, binding: &str, id: &str, last_event_id: Option<u64>) -> Frames {
        Frames::try_open(base, binding, id, last_event_id)
            .await
            .expect("a stream")
    }

    /// [`open`](Self::open), or why no stream came (a replica down, an error answered).
    pub async fn try_open(
        base: &str,
        binding: &str,
        id: &str,
        last_event_id: Option<u64>,
    ) -> Result<Frames, String> {
        let mut request = if binding == "JSONRPC" {
            jsonrpc(base, "SubscribeToTask", json!({"id": id}))
        } else {
            reqwest::Client::new()
                .get(format!("{base}/tasks/{id}:subscribe"))
                .header("A2A-Version", "1.0")
        };
        if let Some(last) = last_event_id {
            request = request.header("Last-Event-ID", last.to_string());
        }
        let response = request.send().await.map_err(|e| e.to_string())?;
        if response.status() != 200 {
            let status = response.status();
            return Err(format!(
                "{status}: {}",
                response.text().await.unwrap_or_default()
            ));
        }
        Ok(Frames {
            response,
            buffer: String::new(),
        })
    }

    /// `SendStreamingMessage` with `params` on the JSON-RPC binding of the agent at `base`.
    pub async fn send(base: &str, params: Value) -> Frames {
        let response = jsonrpc(base, "SendStreamingMessage", params)
            .send()
            .await
            .expect("a stream");
        assert_eq!(response.status(), 200, "a stream");
        Frames {
            response,
            buffer: String::new(),
        }
    }

    /// The next frame: its number and data; `None` once the stream ended.
    pub async fn next(&mut self) -> Option<(Option<u64>, Value)> {
        self.try_next().await.expect("the stream")
    }

    /// The last frame's data, once the stream ended.
    pub async fn last(mut self) -> Option<Value> {
        let mut last = None;
        while let Some((_, frame)) = self.next().await {
            last = Some(frame);
        }
        last
    }

    /// [`next`](Self::next), or why the stream broke off (its connection lost).
    pub async fn try_next(&mut self) -> Result<Option<(Option<u64>, Value)>, String> {
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
                let data = serde_json::from_str(&data).map_err(|e| format!("{e}: {data}"))?;
                return Ok(Some((id, data)));
            }
            let Some(chunk) = self.response.chunk().await.map_err(|e| e.to_string())? else {
                return Ok(None);
            };
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

/// A JSON-RPC 1.0 request of `method` with `params` to the agent at `base`.
fn jsonrpc(base: &str, method: &str, params: Value) -> reqwest::RequestBuilder {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    reqwest::Client::new()
        .post(format!("{base}/"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(body.to_string())
}
