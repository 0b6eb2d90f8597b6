//! Where a client's HTTP requests go: over the network (`reqwest`), or, for an agent under test
//! (feature `testing`), straight to its router in this process, through every layer the agent
//! serves with (authentication, limits, the binding's decoding) and no socket.

use futures::stream::{self, BoxStream, StreamExt};

use crate::outbound::error_chain;

/// Where a client's requests go.
#[derive(Clone)]
pub(crate) enum Exchange {
    /// Over the network.
    Http(reqwest::Client),
    /// To an agent's router in this process (`a2a_card::testing`).
    #[cfg(feature = "testing")]
    InProcess(axum::Router),
}

/// An answer, as far as a client reads it: its status, whether it is a stream of server-sent
/// events, and its body as it comes.
pub(crate) struct Reply {
    /// The HTTP status.
    pub(crate) status: u16,
    /// Whether the body is `text/event-stream`.
    pub(crate) event_stream: bool,
    /// The body, chunk by chunk; an error says why it broke off.
    pub(crate) body: BoxStream<'static, Result<Vec<u8>, String>>,
}

impl Reply {
    /// The whole body, or why it could not be read (more than `max` bytes read: the first
    /// `max + 1`, so that a caller tells a larger body).
    pub(crate) async fn bytes(self, max: usize) -> Result<Vec<u8>, String> {
        let mut body = self.body;
        let mut bytes = Vec::new();
        while let Some(chunk) = body.next().await {
            bytes.extend_from_slice(&chunk?);
            if bytes.len() > max {
                bytes.truncate(max + 1);
                break;
            }
        }
        Ok(bytes)
    }
}

/// How a request is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    Get,
    Post,
}

impl Exchange {
    /// Sends `verb url` with `headers` (and `body`, for a POST), and returns the answer's head
    /// with its body to read; why not, when the agent cannot be reached.
    pub(crate) async fn send(
        &self,
        verb: Verb,
        url: &str,
        headers: &[(String, String)],
        body: Vec<u8>,
    ) -> Result<Reply, String> {
        let content_type = ("Content-Type".to_owned(), "application/json".to_owned());
        let posted = (verb == Verb::Post).then_some(&content_type);
        let headers = posted.into_iter().chain(headers);
        match self {
            Exchange::Http(http) => {
                let mut request = match verb {
                    Verb::Get => http.get(url),
                    Verb::Post => http.post(url).body(body),
                };
                for (name, value) in headers {
                    request = request.header(name.as_str(), value.as_str());
                }
                let response = request.send().await.map_err(|e| error_chain(&e))?;
                let event_stream = is_event_stream(
                    response
                        .headers()
                        .get(reqwest::header::CONTENT_TYPE)
                        .map(|v| v.as_bytes()),
                );
                let status = response.status().as_u16();
                let body = stream::unfold(Some(response), |response| async move {
                    let mut response = response?;
                    match response.chunk().await {
                        Ok(Some(chunk)) => Some((Ok(chunk.to_vec()), Some(response))),
                        Ok(None) => None,
                        Err(e) => Some((Err(error_chain(&e)), None)),
                    }
                });
                Ok(Reply {
                    status,
                    event_stream,
                    body: body.boxed(),
                })
            }
            #[cfg(feature = "testing")]
            Exchange::InProcess(router) => in_process(router, verb, url, headers, body).await,
        }
    }
}

/// Whether a `Content-Type` is `text/event-stream`.
fn is_event_stream(content_type: Option<&[u8]>) -> bool {
    content_type.is_some_and(|v| v.starts_with(b"text/event-stream"))
}

/// The request, answered by `router` in this process.
#[cfg(feature = "testing")]
async fn in_process(
    router: &axum::Router,
    verb: Verb,
    url: &str,
    headers: impl Iterator<Item = &(String, String)>,
    body: Vec<u8>,
) -> Result<Reply, String> {
    use axum::http::{Method, Request};
    use tower::ServiceExt as _;

    let mut request = Request::builder()
        .method(match verb {
            Verb::Get => Method::GET,
            Verb::Post => Method::POST,
        })
        .uri(url);
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let request = request
        .body(axum::body::Body::from(body))
        .map_err(|e| format!("the request to {url} cannot be made: {e}"))?;
    let response = match router.clone().oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    let event_stream = is_event_stream(
        response
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .map(|v| v.as_bytes()),
    );
    let status = response.status().as_u16();
    let body = http_body_util::BodyDataStream::new(response.into_body())
        .map(|chunk| chunk.map(|c| c.to_vec()).map_err(|e| e.to_string()));
    Ok(Reply {
        status,
        event_stream,
        body: body.boxed(),
    })
}
