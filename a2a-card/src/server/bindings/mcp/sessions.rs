//! The MCP endpoint's sessions, bounded by count: rmcp's in-memory session manager closes a
//! session only when its client deletes it or after five idle minutes, so a client that opens
//! a session per call (and never deletes it) would make the server hold every session of the
//! last five minutes. Here at most [`MAX_SESSIONS`] live at once; a new one past that closes
//! the oldest (its client, told `404` on its next request, opens a new session, as the MCP
//! specification says).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// How many MCP sessions the endpoint keeps at once.
pub(super) const MAX_SESSIONS: usize = 10_000;

/// rmcp's in-memory sessions, at most `max` at once (see the [module docs](self)).
pub(super) struct Sessions {
    inner: LocalSessionManager,
    max: usize,
    /// The sessions made here, oldest first (some may have ended since: deleted or idle).
    order: Mutex<VecDeque<SessionId>>,
}

impl Sessions {
    /// At most `max` sessions at once.
    pub(super) fn new(max: usize) -> Sessions {
        Sessions {
            inner: LocalSessionManager::default(),
            max,
            order: Mutex::new(VecDeque::new()),
        }
    }
}

impl SessionManager for Sessions {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        // Every live session is in `order` (made here), so it never holds more than `max`
        // live ones; an id popped that has ended already closes nothing.
        let evicted: Vec<SessionId> = {
            let mut order = self.order.lock().unwrap_or_else(|p| p.into_inner());
            order.push_back(id.clone());
            let over = order.len().saturating_sub(self.max);
            order.drain(..over).collect()
        };
        for old in evicted {
            let _ = self.inner.close_session(&old).await;
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn past_the_bound_the_oldest_session_is_closed() {
        let sessions = Sessions::new(3);
        let mut ids = Vec::new();
        for _ in 0..10 {
            let (id, transport) = sessions.create_session().await.expect("a session");
            drop(transport);
            ids.push(id);
        }
        let live = sessions.inner.sessions.read().await.len();
        assert_eq!(live, 3, "three sessions live");
        for id in &ids[..7] {
            assert!(
                !sessions.has_session(id).await.expect("asked"),
                "{id} closed"
            );
        }
        for id in &ids[7..] {
            assert!(sessions.has_session(id).await.expect("asked"), "{id} live");
        }
        // A session its client deleted leaves room without closing another.
        sessions.close_session(&ids[7]).await.expect("closed");
        let (newest, _transport) = sessions.create_session().await.expect("a session");
        assert!(sessions.has_session(&ids[8]).await.expect("asked"));
        assert!(sessions.has_session(&newest).await.expect("asked"));
    }
}
