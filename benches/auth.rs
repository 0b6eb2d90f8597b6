//! What enforcing the card's security costs: blocking `SendMessage` of the fight example over
//! HTTP under load (8 keep-alive connections, pipelined), the same agent and skill served twice
//! by this crate: once declaring a bearer-JWT requirement, every request carrying an EdDSA JWT
//! (signature, `exp`, `iss`, `aud` checked on each), once declaring no security. Target: with
//! JWT verification >= 0.8x the requests per second without.
//!
//! The ratio is of medians of interleaved rounds:
//!
//! ```text
//! cargo bench --bench auth
//! ```
//!
//! Under `cargo test --benches` each server answers a few requests, as a smoke test, and nothing
//! is timed.

use examples::fight_club::agent as fight_club;
#[path = "support/load.rs"]
mod load;
#[path = "../tests/support/tokens.rs"]
mod tokens;

use std::net::SocketAddr;

use a2a_card::server::Server;
use a2a_card::server::auth::{Algorithm, Authentication, JwtVerifier};
use a2a_card::{Output, agent, skill};
use fight_club::{FightComparison, FightResponse};
use load::{Client, fight_request, rates, serve};
use tokio::runtime::Runtime;

const CONNECTIONS: usize = 8;
const ROUND: u64 = 4_000;
const ROUNDS: usize = 9;

/// The fight example's skill, behind a bearer JWT.
struct GuardedFightClub;

/// Judges hypothetical fights, for callers with a token.
#[agent(
    url = "http://127.0.0.1:1",
    security_schemes(bearer = bearer("JWT")),
    security(bearer)
)]
impl GuardedFightClub {
    /// Determines who would win in a hypothetical fight between two contestants.
    #[skill]
    fn fight_comparison(&self, fight: FightComparison) -> Output<FightResponse> {
        Output::Data(fight_club::judge(&fight))
    }
}

/// The same skill, open to anyone.
struct OpenFightClub;

/// Judges hypothetical fights, for anyone.
#[agent(url = "http://127.0.0.1:1")]
impl OpenFightClub {
    /// Determines who would win in a hypothetical fight between two contestants.
    #[skill]
    fn fight_comparison(&self, fight: FightComparison) -> Output<FightResponse> {
        Output::Data(fight_club::judge(&fight))
    }
}

fn request(token: Option<&str>) -> Vec<u8> {
    fight_request(&token.map_or(String::new(), |t| format!("authorization: Bearer {t}\r\n")))
}

/// The status line of the answer to one request.
async fn first_line(addr: SocketAddr, request: &[u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request).await.expect("send");
    let mut buffer = vec![0u8; 512];
    let n = stream.read(&mut buffer).await.expect("read");
    String::from_utf8_lossy(&buffer[..n])
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// Both servers on a one-worker runtime, and the guarded server's token.
fn servers() -> (Runtime, [SocketAddr; 2], String) {
    let pair = tokens::Pair::ed25519("bench");
    let token = pair.sign(&tokens::claims("bench-user", "fights:read"));
    let verifier = JwtVerifier::new(tokens::keys(&[&pair]), [Algorithm::EdDSA])
        .issuer(tokens::ISSUER)
        .audience(tokens::AUDIENCE);
    let runtime = load::server_runtime();
    let addrs = runtime.block_on(async {
        let guarded = Server::new(GuardedFightClub)
            .authentication(Authentication::new().token("bearer", verifier))
            .router()
            .await
            .expect("the router");
        let open = Server::new(OpenFightClub)
            .router()
            .await
            .expect("the router");
        [serve(guarded).await, serve(open).await]
    });
    (runtime, addrs, token)
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let (runtime, [guarded, open], token) = servers();
    let requests = [request(Some(&token)), request(None)];
    if !bench {
        // Smoke: each answers 200 (the load generator checks), and the guarded one refuses a
        // request without the token.
        Client::new(guarded, 2, &requests[0]).run(4);
        Client::new(open, 2, &requests[1]).run(4);
        let head = runtime.block_on(first_line(guarded, &requests[1]));
        assert!(head.starts_with("HTTP/1.1 401"), "{head}");
        return;
    }
    let mut clients = [
        Client::new(guarded, CONNECTIONS, &requests[0]),
        Client::new(open, CONNECTIONS, &requests[1]),
    ];
    let [with_jwt, without] = rates(&mut clients, ROUND, ROUNDS)[..] else {
        unreachable!("one rate per client")
    };
    println!(
        "blocking SendMessage of the fight example, loopback, {CONNECTIONS} connections, median of {ROUNDS} rounds of {ROUND}:"
    );
    println!("  bearer JWT (EdDSA) checked {with_jwt:>8.0} req/s");
    println!("  no authentication          {without:>8.0} req/s");
    println!(
        "  with JWT / without = {:.2}x (target >= 0.8x)",
        with_jwt / without
    );
}
