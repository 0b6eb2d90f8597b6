//! What tests of recovery share: a webhook on loopback that keeps the bodies it is sent, and
//! a SQLite file on which a process left a task running, with that webhook, and stopped.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a::{Role, Task, TaskPushNotificationConfig, TaskState, TaskStatus};
use a2a_card::server::store::{Retention, SqlTasks, Tasks};
use a2a_server::PushConfigStore;
use serde_json::Value;

/// A webhook on loopback, serving until the test ends.
pub struct Webhook {
    /// Where it is.
    pub url: String,
    received: Arc<Mutex<Vec<Value>>>,
}

impl Webhook {
    /// A webhook on a free port of 127.0.0.1, at `/hook`.
    pub async fn start() -> Webhook {
        let received: Arc<Mutex<Vec<Value>>> = Arc::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
        let keep = Arc::clone(&received);
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |body: axum::body::Bytes| async move {
                keep.lock()
                    .unwrap()
                    .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                "ok"
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        Webhook { url, received }
    }

    /// Waits (up to 10 s) until it was told that task `id` failed; panics saying what it was
    /// told otherwise.
    pub async fn wait_for_failed(&self, id: &str) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let failed = self.received.lock().unwrap().iter().any(|b| {
                b["statusUpdate"]["taskId"] == id
                    && b["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"
            });
            if failed {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the webhook was told: {:?}",
                self.received.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// A process on the SQLite file `path` (its lease `lease`) left task `id` working, with a
/// webhook to `hook`, and stopped: once its lease has run out (this waits for it), the next
/// server on the file recovers the task.
pub async fn left_running(path: &Path, id: &str, hook: &str, lease: Duration) {
    let store = Tasks::sqlite(path)
        .lease(lease)
        .open()
        .await
        .expect("opened");
    store
        .create(Task {
            id: id.into(),
            context_id: "c".into(),
            status: TaskStatus {
                state: TaskState::Working,
                message: None,
                timestamp: Some(chrono::Utc::now()),
            },
            artifacts: None,
            history: Some(vec![a2a::Message::new(
                Role::User,
                vec![a2a::Part::text("plan")],
            )]),
            metadata: None,
        })
        .await
        .expect("created");
    let configs = SqlTasks::sqlite(path, Retention::default())
        .await
        .expect("opened")
        .push_configs();
    configs
        .save(TaskPushNotificationConfig {
            url: hook.to_owned(),
            id: Some("hook".into()),
            task_id: id.into(),
            token: Some("t".into()),
            authentication: None,
            tenant: None,
        })
        .await
        .expect("saved");
    drop((store, configs));
    tokio::time::sleep(lease * 2).await;
}
