//! The official A2A Python SDK 1.3 *gRPC* client (`a2a-sdk[grpc]`) against the example agents
//! with the gRPC binding on (`Server::grpc`), served here on free loopback ports. The client is
//! made from the served card by the SDK's `ClientFactory`, which picks the card's GRPC interface
//! (`http://host:port`) and opens a `grpc.aio` channel on it; through it the SDK checks
//! structured data answered, a schema violation as INVALID_ARGUMENT naming the field with no
//! task made, a stream that begins with the task, a question answered, cancel, a subscription
//! ended by a cancel, push configs, and the guarded judge's security from the call's metadata
//! (UNAUTHENTICATED without a token, the principal reaching the skill, PERMISSION_DENIED without
//! the scope).
//!
//! The driver is `tests/interop/grpc_py.py`: it prints one `ok ...` or `FAIL ...` line per check
//! and exits non-zero on any failure. The SDK comes from `$A2A_PY` (CI sets it, see `.ci/run`),
//! else it is installed under the target directory. The test skips, with a printed reason, only
//! when `python3` is absent and `A2A_REQUIRE_SDKS` is unset (CI sets it, so there it fails
//! instead).

use crate::fight_club::agent as fight_club;
use crate::guarded_judge::agent as guarded_judge;
use crate::support;
use crate::trip_planner::server;

use std::ffi::OsString;
use std::time::Duration;

use a2a_card::server::auth::{Algorithm, Authentication, JwtVerifier};
use a2a_card::server::{Server, Webhooks};
use support::client::serve;
use support::driver;
use support::tokens::{self, Pair, claims};

/// The checks the driver makes: the card and the client's pick, the structured answer, the
/// schema violation, the stream, the question, cancel, subscribe with cancel, push configs, and
/// three on the guarded judge.
const CHECKS: usize = 11;

/// The subject of the token the driver calls the guarded judge with.
const SUBJECT: &str = "py-grpc-client";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_1_3_grpc_client() {
    let Some(python) = support::a2a_python() else {
        return;
    };
    let planner = |pace| {
        // The example's server has the gRPC binding on already; said again here, so that this
        // test states what it serves.
        server::server(pace, Webhooks::default().allow_loopback(true)).grpc(true)
    };
    let fast = serve(planner(Duration::from_millis(20))).await;
    // A day a second: a 14-day plan is still running when it is cancelled.
    let slow = serve(planner(Duration::from_secs(1))).await;
    let fights = serve(Server::new(fight_club::FightClub).grpc(true)).await;
    let key = Pair::ed25519("k1");
    let verifier = || {
        JwtVerifier::new(tokens::keys(&[&key]), [Algorithm::EdDSA])
            .issuer(tokens::ISSUER)
            .audience(tokens::AUDIENCE)
    };
    let judge = serve(
        Server::new(guarded_judge::GuardedJudge)
            .authentication(
                Authentication::new()
                    .token("bearer", verifier())
                    .token("oauth", verifier()),
            )
            .grpc(true),
    )
    .await;
    // A valid token without the `fights:write` scope the `record` skill needs.
    let token = key.sign(&claims(SUBJECT, "fights:read"));

    let args = [
        fast.base.as_str(),
        slow.base.as_str(),
        fights.base.as_str(),
        judge.base.as_str(),
        token.as_str(),
        SUBJECT,
    ]
    .map(OsString::from)
    .to_vec();
    let mut argv = vec![driver::path("grpc_py.py").into_os_string()];
    argv.extend(args);
    let out = driver::run(python.into_os_string(), argv, Vec::new()).await;
    driver::assert_checks("Python SDK 1.3 over gRPC", out, CHECKS);
}
