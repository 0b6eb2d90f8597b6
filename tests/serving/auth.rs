//! The security the card declares, enforced: authentication on every protocol route, per-skill
//! scopes after dispatch, the extended card, over JSON-RPC 1.0, HTTP+JSON and JSON-RPC 0.3.
//! Tokens are real JWTs, signed with keys generated per run; nothing of the verifier is mocked.
//! Every refusal asserts its status, its error and that no task was created.

use crate::support;

use a2a_card::server::Server;
use a2a_card::server::auth::{Algorithm, Authentication, JwtVerifier, Ownership, StaticApiKeys};
use a2a_card::{ApiKeyLocation, OAuthFlow, SecurityScheme};
use a2a_card::{Identity, Schema, SkillContext, agent, skill};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use support::client::{Running, serve};
use support::tokens::{self, AUDIENCE, ISSUER, Pair, claims, now};

const API_KEY: &str = "k-team-blue-0123456789abcdef";
/// The key of a caller who reaches every task (the tests count the tasks made with it).
const AUDITOR_KEY: &str = "k-auditor-0123456789abcdef";

fn schemes() -> Vec<(&'static str, SecurityScheme)> {
    vec![
        ("bearer", SecurityScheme::bearer(Some("JWT"))),
        (
            "key",
            SecurityScheme::api_key(ApiKeyLocation::Header, "X-API-Key"),
        ),
        (
            "oauth",
            SecurityScheme::oauth2(
                OAuthFlow::client_credentials("https://auth.example.com/token")
                    .scope("fights:read", "Read fights")
                    .scope("fights:write", "Record fights"),
            ),
        ),
    ]
}

/// A fight to record.
#[derive(Deserialize, JsonSchema, Schema)]
struct Record {
    /// The winner.
    winner: String,
}

/// A question for the extended-only skill.
#[derive(Deserialize, JsonSchema, Schema)]
struct Secret {
    /// What to reveal.
    topic: String,
}

struct Vault;

/// Keeps fight records, for known callers.
#[agent(
    url = "http://127.0.0.1:9000",
    security_schemes = schemes,
    security(bearer),
    security(key),
    streaming = true,
    push_notifications = true
)]
impl Vault {
    /// Says who the caller is.
    #[skill]
    fn whoami(&self, _text: String, ctx: SkillContext) -> String {
        match ctx.principal() {
            Some(p) => format!(
                "{} via {} [{}]",
                p.subject(),
                p.scheme(),
                p.scopes().iter().cloned().collect::<Vec<_>>().join(" ")
            ),
            None => "nobody".to_owned(),
        }
    }

    /// Records a fight; needs the `fights:write` scope.
    #[skill(security(oauth = ["fights:write"]))]
    fn record(&self, record: Record) -> String {
        format!("recorded {}", record.winner)
    }

    /// Reveals a secret; listed only on the extended card.
    #[skill(extended)]
    fn secret(&self, secret: Secret) -> String {
        format!("the secret of {}", secret.topic)
    }
}

struct Both;

/// Answers callers who bring a password and a key.
#[agent(
    url = "http://127.0.0.1:9000",
    security_schemes(basic = basic, key = api_key(header = "X-API-Key")),
    security(basic, key)
)]
impl Both {
    /// Says who the caller is.
    #[skill]
    fn whoami(&self, _text: String, ctx: SkillContext) -> String {
        ctx.principal()
            .map(|p| {
                p.identities()
                    .map(|(s, id)| format!("{s}:{}", id.subject()))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default()
    }
}

struct Keys {
    ed: Pair,
    ec: Pair,
    stranger: Pair,
}

fn keys() -> Keys {
    Keys {
        ed: Pair::ed25519("ed-1"),
        ec: Pair::p256("ec-1"),
        // Same kid as `ed`, another key: a bad signature.
        stranger: Pair::ed25519("ed-1"),
    }
}

fn verifier(k: &Keys) -> JwtVerifier {
    // HS256 is on the allow-list on purpose: the keys are pinned to their own algorithms, so an
    // HS256 token "signed" with a public key still finds no key.
    JwtVerifier::new(
        tokens::keys(&[&k.ed, &k.ec]),
        [Algorithm::EdDSA, Algorithm::ES256, Algorithm::HS256],
    )
    .issuer(ISSUER)
    .audience(AUDIENCE)
}

async fn vault(k: &Keys) -> Running {
    let auth = Authentication::new()
        .token("bearer", verifier(k))
        .token("oauth", verifier(k))
        .api_key(
            "key",
            StaticApiKeys::new()
                .key(API_KEY, Identity::new("team-blue"))
                .key(
                    AUDITOR_KEY,
                    Identity::new("auditor").with_scopes(["tasks:admin"]),
                ),
        )
        // Each caller reaches its own tasks; the auditor every task (what `task_count` counts).
        .ownership(Ownership::subject().admin_scope("tasks:admin"));
    serve(Server::new(Vault).authentication(auth)).await
}

async fn both() -> Running {
    let auth = Authentication::new()
        .basic("basic", |user: String, password: String| async move {
            if user == "alice" && password == "correct horse" {
                Ok(Identity::new("alice"))
            } else {
                Err(a2a_card::server::auth::Rejected::invalid("bad password"))
            }
        })
        .api_key(
            "key",
            StaticApiKeys::new().key(API_KEY, Identity::new("team-blue")),
        );
    serve(Server::new(Both).authentication(auth)).await
}

/// One HTTP answer.
struct Answer {
    status: u16,
    headers: HeaderMap,
    body: Value,
}

impl Answer {
    fn challenges(&self) -> Vec<String> {
        self.headers
            .get_all("www-authenticate")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect()
    }

    fn code(&self) -> i64 {
        self.body["error"]["code"].as_i64().unwrap_or_default()
    }

    fn assert_refused(&self, status: u16, code: i64) {
        assert_eq!(self.status, status, "{}", self.body);
        assert_eq!(self.code(), code, "{}", self.body);
        // The `ErrorInfo` reason says which refusal it is, as clients read it.
        let reason = match code {
            -31401 => "UNAUTHENTICATED",
            -31403 => "UNAUTHORIZED",
            _ => "UNAVAILABLE",
        };
        let reasons: Vec<&Value> = self.body["error"]["data"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d.get("reason"))
            .collect();
        assert_eq!(reasons, [reason], "{}", self.body);
    }
}

fn bearer(token: &str) -> Vec<(&'static str, String)> {
    vec![("authorization", format!("Bearer {token}"))]
}

fn key() -> Vec<(&'static str, String)> {
    vec![("x-api-key", API_KEY.to_owned())]
}

async fn post(url: &str, headers: &[(&str, String)], v1: bool, body: Value) -> Answer {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string());
    if v1 {
        request = request.header("A2A-Version", "1.0");
    }
    for (k, v) in headers {
        request = request.header(
            HeaderName::from_bytes(k.as_bytes()).expect("a header name"),
            HeaderValue::from_str(v).expect("a header value"),
        );
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Answer {
        status,
        headers,
        body,
    }
}

async fn get(url: &str, headers: &[(&str, String)]) -> Answer {
    let mut request = reqwest::Client::new().get(url).header("A2A-Version", "1.0");
    for (k, v) in headers {
        request = request.header(*k, v);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Answer {
        status,
        headers,
        body,
    }
}

fn rpc(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
}

fn text_message(text: &str) -> Value {
    json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}})
}

fn data_message(schema: &str, data: Value) -> Value {
    json!({"message": {"messageId": "m1", "role": "ROLE_USER",
        "parts": [{"data": data, "mediaType": format!("application/json;schema={schema}")}]}})
}

/// JSON-RPC 1.0 `SendMessage` with `headers`.
async fn send(base: &str, headers: &[(&str, String)], params: Value) -> Answer {
    post(
        &format!("{base}/"),
        headers,
        true,
        rpc("SendMessage", params),
    )
    .await
}

/// How many tasks the agent holds (asked with a valid API key).
/// How many tasks the agent keeps, whoever made them.
async fn task_count(base: &str) -> usize {
    let answer = post(
        &format!("{base}/"),
        &[("x-api-key", AUDITOR_KEY.to_owned())],
        true,
        rpc("ListTasks", json!({})),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.body["result"]["tasks"]
        .as_array()
        .map_or(0, Vec::len)
}

/// A refused JSON-RPC 1.0 `SendMessage`: status, code, challenge, no task.
async fn refused_send(base: &str, headers: &[(&str, String)], status: u16, code: i64) -> Answer {
    let answer = send(base, headers, text_message("who am I?")).await;
    answer.assert_refused(status, code);
    assert_eq!(answer.body["id"], 7, "the refusal answers the request's id");
    assert_eq!(task_count(base).await, 0, "a refused call creates no task");
    answer
}

fn result_text(answer: &Answer) -> String {
    let task = &answer.body["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_COMPLETED",
        "{}",
        answer.body
    );
    task["artifacts"][0]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn missing_credentials_are_401_with_a_challenge_per_scheme() {
    let k = keys();
    let s = vault(&k).await;
    let answer = refused_send(&s.base, &[], 401, -31401).await;
    let challenges = answer.challenges();
    assert!(
        challenges.contains(&r#"Bearer realm="a2a""#.to_owned()),
        "{challenges:?}"
    );
    assert!(
        challenges
            .iter()
            .any(|c| c.starts_with("ApiKey ") && c.contains(r#"name="X-API-Key""#)),
        "{challenges:?}"
    );
    let message = answer.body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`bearer`") && message.contains("`key`"),
        "{message}"
    );
}

#[tokio::test]
async fn malformed_authorization_header_is_401() {
    let k = keys();
    let s = vault(&k).await;
    for value in ["Bearer", "Bearer two words", "Bearer t\u{e9}", "Bearer"] {
        let headers = vec![("authorization", value.to_owned())];
        if HeaderValue::from_str(value).is_err() {
            continue;
        }
        refused_send(&s.base, &headers, 401, -31401).await;
    }
}

#[tokio::test]
async fn wrong_scheme_word_is_401() {
    let k = keys();
    let s = vault(&k).await;
    let token = k.ed.sign(&claims("alice", ""));
    let headers = vec![("authorization", format!("Token {token}"))];
    let answer = refused_send(&s.base, &headers, 401, -31401).await;
    // Nothing was presented for `bearer`: a plain challenge, no error attribute.
    assert!(
        answer
            .challenges()
            .contains(&r#"Bearer realm="a2a""#.to_owned())
    );
}

#[tokio::test]
async fn bad_signature_is_401_invalid_token_without_saying_why() {
    let k = keys();
    let s = vault(&k).await;
    let token = k.stranger.sign(&claims("mallory", ""));
    let answer = refused_send(&s.base, &bearer(&token), 401, -31401).await;
    assert!(
        answer
            .challenges()
            .contains(&r#"Bearer realm="a2a", error="invalid_token""#.to_owned()),
        "{:?}",
        answer.challenges()
    );
    assert_eq!(
        answer.body["error"]["message"],
        "the credentials are not valid"
    );
}

/// Each broken token gets the same answer: nothing says which check failed.
async fn refused_token(token: String) {
    let k = keys();
    let s = vault(&k).await;
    let _ = &k;
    let answer = refused_send(&s.base, &bearer(&token), 401, -31401).await;
    assert_eq!(
        answer.body["error"]["message"],
        "the credentials are not valid"
    );
}

#[tokio::test]
async fn expired_token_is_401() {
    let k = keys();
    let s = vault(&k).await;
    let mut c = claims("alice", "");
    c["exp"] = json!(now() - 120);
    let answer = refused_send(&s.base, &bearer(&k.ed.sign(&c)), 401, -31401).await;
    assert_eq!(
        answer.body["error"]["message"],
        "the credentials are not valid"
    );
    // Within the leeway (30 s), it still passes.
    c["exp"] = json!(now() - 5);
    assert_eq!(
        send(&s.base, &bearer(&k.ed.sign(&c)), text_message("hi"))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn not_yet_valid_token_is_401() {
    let k = keys();
    let s = vault(&k).await;
    let mut c = claims("alice", "");
    c["nbf"] = json!(now() + 120);
    refused_send(&s.base, &bearer(&k.ed.sign(&c)), 401, -31401).await;
}

#[tokio::test]
async fn wrong_issuer_is_401() {
    let k = keys();
    let s = vault(&k).await;
    let mut c = claims("alice", "");
    c["iss"] = json!("https://evil.example.com");
    refused_send(&s.base, &bearer(&k.ed.sign(&c)), 401, -31401).await;
}

#[tokio::test]
async fn wrong_audience_is_401() {
    let k = keys();
    let s = vault(&k).await;
    let mut c = claims("alice", "");
    c["aud"] = json!("https://another-service.example.com");
    refused_send(&s.base, &bearer(&k.ed.sign(&c)), 401, -31401).await;
}

#[tokio::test]
async fn alg_none_is_401() {
    refused_token(tokens::unsigned(&claims("mallory", "fights:write"))).await;
}

#[tokio::test]
async fn hs256_signed_with_the_public_key_is_401() {
    let k = keys();
    let s = vault(&k).await;
    // The algorithm-confusion attack, on both key types, naming each key's own kid.
    for (pair, kid) in [(&k.ec, "ec-1"), (&k.ed, "ed-1")] {
        let token = tokens::hs256(&pair.public_bytes, kid, &claims("mallory", "fights:write"));
        refused_send(&s.base, &bearer(&token), 401, -31401).await;
    }
}

#[tokio::test]
async fn unknown_kid_is_401() {
    let k = keys();
    let s = vault(&k).await;
    let token = k.ed.sign_as("ed-2", &claims("alice", ""));
    refused_send(&s.base, &bearer(&token), 401, -31401).await;
}

#[tokio::test]
async fn a_valid_token_reaches_the_handler_with_its_principal() {
    let k = keys();
    let s = vault(&k).await;
    for pair in [&k.ed, &k.ec] {
        let token = pair.sign(&claims("alice", "fights:read"));
        let answer = send(&s.base, &bearer(&token), text_message("who am I?")).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert_eq!(result_text(&answer), "alice via bearer [fights:read]");
    }
}

#[tokio::test]
async fn a_forged_principal_header_is_ignored() {
    let k = keys();
    let s = vault(&k).await;
    let mut headers = key();
    headers.push((
        "x-a2a-card-principal",
        "guess.eyJpZGVudGl0aWVzIjpbWyJiZWFyZXIiLHsic3ViamVjdCI6InJvb3QifV1dfQ".to_owned(),
    ));
    let answer = send(&s.base, &headers, text_message("who am I?")).await;
    assert_eq!(result_text(&answer), "team-blue via key []");
    // Alone, it authenticates nothing.
    send(&s.base, &headers[1..], text_message("who am I?"))
        .await
        .assert_refused(401, -31401);
    assert_eq!(
        task_count(&s.base).await,
        1,
        "only the call with a key made a task"
    );
}

#[tokio::test]
async fn a_skill_scope_missing_is_403_after_dispatch() {
    let k = keys();
    let s = vault(&k).await;
    let token = k.ed.sign(&claims("alice", "fights:read"));
    let answer = send(
        &s.base,
        &bearer(&token),
        data_message("record", json!({"winner": "Tiger"})),
    )
    .await;
    answer.assert_refused(403, -31403);
    assert_eq!(
        answer.challenges(),
        [r#"Bearer realm="a2a", error="insufficient_scope", scope="fights:write""#]
    );
    assert!(
        answer.body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("fights:write")
    );
    assert_eq!(task_count(&s.base).await, 0);
    // An API key meets the agent's requirement but not the skill's (no `oauth` token): 401.
    let answer = send(
        &s.base,
        &key(),
        data_message("record", json!({"winner": "Tiger"})),
    )
    .await;
    answer.assert_refused(401, -31401);
    assert_eq!(task_count(&s.base).await, 0);
}

#[tokio::test]
async fn the_right_scope_runs_the_skill() {
    let k = keys();
    let s = vault(&k).await;
    let token = k.ec.sign(&claims("alice", "fights:read fights:write"));
    let answer = send(
        &s.base,
        &bearer(&token),
        data_message("record", json!({"winner": "Tiger"})),
    )
    .await;
    assert_eq!(result_text(&answer), "recorded Tiger");
    assert_eq!(task_count(&s.base).await, 1);
}

#[tokio::test]
async fn api_key_wrong_is_401_right_is_200() {
    let k = keys();
    let s = vault(&k).await;
    let wrong = vec![("x-api-key", format!("{API_KEY}x"))];
    let answer = refused_send(&s.base, &wrong, 401, -31401).await;
    assert_eq!(
        answer.body["error"]["message"],
        "the credentials are not valid"
    );
    let answer = send(&s.base, &key(), text_message("who am I?")).await;
    assert_eq!(result_text(&answer), "team-blue via key []");
}

#[tokio::test]
async fn api_key_in_the_wrong_place_is_401() {
    let k = keys();
    let s = vault(&k).await;
    // The scheme says header `X-API-Key`; a query parameter and a cookie of that name are not it.
    let answer = post(
        &format!("{}/?X-API-Key={API_KEY}", s.base),
        &[],
        true,
        rpc("SendMessage", text_message("hi")),
    )
    .await;
    answer.assert_refused(401, -31401);
    let cookie = vec![("cookie", format!("X-API-Key={API_KEY}"))];
    refused_send(&s.base, &cookie, 401, -31401).await;
}

#[tokio::test]
async fn an_and_requirement_needs_every_scheme() {
    let s = both().await;
    let basic = format!(
        "Basic {}",
        base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            "alice:correct horse"
        )
    );
    let only_key = key();
    let only_basic = vec![("authorization", basic.clone())];
    for headers in [&only_key, &only_basic] {
        let answer = send(&s.base, headers, text_message("hi")).await;
        answer.assert_refused(401, -31401);
        let challenges = answer.challenges();
        assert!(
            challenges.iter().any(|c| c.starts_with("Basic ")),
            "{challenges:?}"
        );
    }
    let wrong_password = vec![
        (
            "authorization",
            format!(
                "Basic {}",
                base64::Engine::encode(&base64::engine::general_purpose::STANDARD, "alice:wrong")
            ),
        ),
        ("x-api-key", API_KEY.to_owned()),
    ];
    send(&s.base, &wrong_password, text_message("hi"))
        .await
        .assert_refused(401, -31401);
    let mut all = only_basic.clone();
    all.extend(only_key.clone());
    let answer = send(&s.base, &all, text_message("hi")).await;
    assert_eq!(result_text(&answer), "basic:alice,key:team-blue");
    // The refusals left nothing behind: one task, the one that ran.
    let list = post(
        &format!("{}/", s.base),
        &all,
        true,
        rpc("ListTasks", json!({})),
    )
    .await;
    assert_eq!(
        list.body["result"]["tasks"].as_array().map(Vec::len),
        Some(1)
    );
}

#[tokio::test]
async fn alternatives_each_admit() {
    let k = keys();
    let s = vault(&k).await;
    let token = k.ed.sign(&claims("alice", ""));
    assert_eq!(
        result_text(&send(&s.base, &bearer(&token), text_message("hi")).await),
        "alice via bearer []"
    );
    assert_eq!(
        result_text(&send(&s.base, &key(), text_message("hi")).await),
        "team-blue via key []"
    );
    // Both given: the first alternative met names the caller.
    let mut both = bearer(&token);
    both.extend(key());
    assert_eq!(
        result_text(&send(&s.base, &both, text_message("hi")).await),
        "alice via bearer []"
    );
}

#[tokio::test]
async fn the_extended_card_needs_credentials_and_the_public_card_does_not() {
    let k = keys();
    let s = vault(&k).await;
    let public = get(&format!("{}/.well-known/agent-card.json", s.base), &[]).await;
    assert_eq!(public.status, 200);
    let ids: Vec<&str> = public.body["skills"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        ["whoami", "record"],
        "the public card omits the extended skill"
    );
    assert_eq!(public.body["capabilities"]["extendedAgentCard"], true);

    // JSON-RPC 1.0.
    let answer = post(
        &format!("{}/", s.base),
        &[],
        true,
        rpc("GetExtendedAgentCard", json!({})),
    )
    .await;
    answer.assert_refused(401, -31401);
    let answer = post(
        &format!("{}/", s.base),
        &key(),
        true,
        rpc("GetExtendedAgentCard", json!({})),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let ids: Vec<&str> = answer.body["result"]["skills"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(ids, ["whoami", "record", "secret"]);

    // HTTP+JSON.
    let answer = get(&format!("{}/extendedAgentCard", s.base), &[]).await;
    assert_eq!(answer.status, 401, "{}", answer.body);
    assert_eq!(answer.body["error"]["status"], "UNAUTHENTICATED");
    let answer = get(&format!("{}/extendedAgentCard", s.base), &key()).await;
    assert_eq!(answer.status, 200, "{}", answer.body);

    // 0.3.
    let v03 = json!({"jsonrpc": "2.0", "id": 3, "method": "agent/getAuthenticatedExtendedCard"});
    let answer = post(&format!("{}/", s.base), &[], false, v03.clone()).await;
    answer.assert_refused(401, -31401);
    let answer = post(&format!("{}/", s.base), &key(), false, v03).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(
        answer.body["result"]["skills"]
            .as_array()
            .is_some_and(|s| s.len() == 3),
        "{}",
        answer.body
    );
    assert_eq!(task_count(&s.base).await, 0);

    // The extended skill runs for an authenticated caller.
    let answer = send(
        &s.base,
        &key(),
        data_message("secret", json!({"topic": "lions"})),
    )
    .await;
    assert_eq!(result_text(&answer), "the secret of lions");
}

#[tokio::test]
async fn streaming_and_subscribe_without_credentials_are_401() {
    let k = keys();
    let s = vault(&k).await;
    // Make one task to subscribe to.
    let answer = send(&s.base, &key(), text_message("hi")).await;
    let task_id = answer.body["result"]["task"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!task_id.is_empty());

    let stream = post(
        &format!("{}/", s.base),
        &[],
        true,
        rpc("SendStreamingMessage", text_message("hi")),
    )
    .await;
    stream.assert_refused(401, -31401);
    let subscribe = post(
        &format!("{}/", s.base),
        &[],
        true,
        rpc("SubscribeToTask", json!({"id": task_id})),
    )
    .await;
    subscribe.assert_refused(401, -31401);
    let v03 = json!({"jsonrpc": "2.0", "id": 4, "method": "message/stream", "params": {"message": {
        "kind": "message", "messageId": "m2", "role": "user", "parts": [{"kind": "text", "text": "hi"}]}}});
    post(&format!("{}/", s.base), &[], false, v03)
        .await
        .assert_refused(401, -31401);
    let v03 = json!({"jsonrpc": "2.0", "id": 5, "method": "tasks/resubscribe", "params": {"id": task_id}});
    post(&format!("{}/", s.base), &[], false, v03)
        .await
        .assert_refused(401, -31401);

    // HTTP+JSON.
    let rest = post(
        &format!("{}/message:stream", s.base),
        &[],
        true,
        text_message("hi"),
    )
    .await;
    assert_eq!(rest.status, 401, "{}", rest.body);
    assert_eq!(rest.body["error"]["status"], "UNAUTHENTICATED");
    let rest = get(&format!("{}/tasks/{task_id}:subscribe", s.base), &[]).await;
    assert_eq!(rest.status, 401, "{}", rest.body);
    assert!(rest.challenges().iter().any(|c| c.starts_with("Bearer")));
    assert_eq!(
        task_count(&s.base).await,
        1,
        "only the task made with a key"
    );
}

#[tokio::test]
async fn http_json_refusals_are_401_and_403() {
    let k = keys();
    let s = vault(&k).await;
    let answer = post(
        &format!("{}/message:send", s.base),
        &[],
        true,
        text_message("hi"),
    )
    .await;
    assert_eq!(answer.status, 401, "{}", answer.body);
    assert_eq!(answer.body["error"]["code"], 401);
    assert_eq!(answer.body["error"]["status"], "UNAUTHENTICATED");
    assert_eq!(
        answer.body["error"]["details"][0]["reason"],
        "UNAUTHENTICATED"
    );
    assert!(
        answer
            .challenges()
            .contains(&r#"Bearer realm="a2a""#.to_owned())
    );
    assert_eq!(
        answer
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/problem+json")
    );
    let token = k.ed.sign(&claims("alice", "fights:read"));
    let answer = post(
        &format!("{}/message:send", s.base),
        &bearer(&token),
        true,
        data_message("record", json!({"winner": "Lion"})),
    )
    .await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert_eq!(answer.body["error"]["status"], "PERMISSION_DENIED");
    assert_eq!(answer.body["error"]["code"], 403, "{}", answer.body);
    let info = &answer.body["error"]["details"][0];
    assert_eq!(
        info["@type"], "type.googleapis.com/google.rpc.ErrorInfo",
        "{}",
        answer.body
    );
    assert_eq!(info["reason"], "UNAUTHORIZED", "{}", answer.body);
    assert_eq!(info["domain"], "a2a-protocol.org", "{}", answer.body);
    let answer = get(&format!("{}/tasks", s.base), &[]).await;
    assert_eq!(answer.status, 401, "{}", answer.body);
    assert_eq!(task_count(&s.base).await, 0);
    let token = k.ed.sign(&claims("alice", "fights:write"));
    let answer = post(
        &format!("{}/message:send", s.base),
        &bearer(&token),
        true,
        data_message("record", json!({"winner": "Lion"})),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
}

#[tokio::test]
async fn a2a_0_3_refusals_are_401_and_403() {
    let k = keys();
    let s = vault(&k).await;
    let send03 = |parts: Value| {
        json!({"jsonrpc": "2.0", "id": 9, "method": "message/send", "params": {"message": {
            "kind": "message", "messageId": "m3", "role": "user", "parts": parts}}})
    };
    let text = json!([{"kind": "text", "text": "hi"}]);
    let answer = post(&format!("{}/", s.base), &[], false, send03(text.clone())).await;
    answer.assert_refused(401, -31401);
    assert!(answer.challenges().iter().any(|c| c.starts_with("Bearer")));
    let token = k.ed.sign(&claims("alice", ""));
    let record = json!([{"kind": "data", "data": {"winner": "Lion"},
        "metadata": {"mimeType": "application/json;schema=record"}}]);
    let answer = post(
        &format!("{}/", s.base),
        &bearer(&token),
        false,
        send03(record),
    )
    .await;
    answer.assert_refused(403, -31403);
    assert_eq!(task_count(&s.base).await, 0);
    let answer = post(
        &format!("{}/", s.base),
        &bearer(&token),
        false,
        send03(text),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["result"]["kind"], "task", "{}", answer.body);
}

#[tokio::test]
async fn push_config_methods_without_credentials_are_401() {
    let k = keys();
    let s = vault(&k).await;
    let answer = send(&s.base, &key(), text_message("hi")).await;
    let task_id = answer.body["result"]["task"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    for (method, params) in [
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task_id, "url": "https://hooks.example.com/a2a"}),
        ),
        (
            "ListTaskPushNotificationConfigs",
            json!({"taskId": task_id}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": task_id, "id": "c1"}),
        ),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": task_id, "id": "c1"}),
        ),
        ("GetTask", json!({"id": task_id})),
        ("CancelTask", json!({"id": task_id})),
    ] {
        post(&format!("{}/", s.base), &[], true, rpc(method, params))
            .await
            .assert_refused(401, -31401);
    }
    assert_eq!(task_count(&s.base).await, 1);
}

#[tokio::test]
async fn a_card_that_requires_a_scheme_without_a_verifier_does_not_serve() {
    let err = Server::new(Vault)
        .router()
        .await
        .expect_err("no verifiers: refused");
    assert!(err.to_string().contains("no verifier"), "{err}");
    let only_key = Authentication::new().api_key("key", StaticApiKeys::new());
    let err = Server::new(Vault)
        .authentication(only_key)
        .router()
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("`bearer`"), "{err}");
    let wrong_kind = Authentication::new().api_key("bearer", StaticApiKeys::new());
    let err = Server::new(Vault)
        .authentication(wrong_kind)
        .router()
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("cannot be checked by"), "{err}");
}

#[tokio::test]
async fn a_remembered_token_is_not_trusted_past_its_own_expiry() {
    use a2a_card::server::auth::TokenVerifier;
    let pair = Pair::ed25519("k1");
    let verifier = JwtVerifier::new(tokens::keys(&[&pair]), [Algorithm::EdDSA])
        .issuer(ISSUER)
        .audience(AUDIENCE)
        .leeway(std::time::Duration::ZERO);
    let mut short = claims("alice", "fights:read");
    short["exp"] = json!(now() + 1);
    let token = pair.sign(&short);
    assert_eq!(
        verifier.verify(&token).await.expect("valid").subject(),
        "alice"
    );
    // Checked again from memory: the same identity.
    assert_eq!(
        verifier
            .verify(&token)
            .await
            .expect("still valid")
            .subject(),
        "alice"
    );
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert!(
        verifier.verify(&token).await.is_err(),
        "expired, remembered or not"
    );
    // A token that differs in one byte is checked in full, and fails.
    let mut forged = token.clone();
    forged.pop();
    forged.push(if token.ends_with('A') { 'B' } else { 'A' });
    let fresh = pair.sign(&claims("bob", ""));
    assert_eq!(
        verifier.verify(&fresh).await.expect("valid").subject(),
        "bob"
    );
    assert!(verifier.verify(&forged).await.is_err());
}
