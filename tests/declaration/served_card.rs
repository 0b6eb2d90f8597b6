//! The card actually served is linted: a public URL or a signature put in at run time cannot
//! make the server serve a card the builder would have refused.

use a2a_card::lint::Rule;
use a2a_card::server::{Server, ServerError};

struct Echo;

/// Says back what it is told.
#[a2a_card::agent(url = "http://127.0.0.1:9000/a2a")]
impl Echo {
    /// Echoes the text.
    #[a2a_card::skill]
    fn echo(&self, text: String) -> String {
        text
    }
}

#[tokio::test]
async fn a_plain_http_public_url_to_another_host_is_refused() {
    let server = || Server::new(Echo).public_url("http://agents.example.com/a2a");
    let Err(ServerError::Served(e)) = server().card() else {
        panic!("the card was served with a plain-http public URL");
    };
    let insecure: Vec<_> = e
        .findings
        .iter()
        .filter(|f| f.rule == Rule::UrlInsecure)
        .map(|f| f.pointer.as_str())
        .collect();
    assert!(
        insecure.contains(&"/supportedInterfaces/0/url"),
        "{insecure:?}"
    );
    let message = server().card().unwrap_err().to_string();
    assert!(message.contains("cannot be served"), "{message}");
    assert!(message.contains("url-insecure"), "{message}");
    // The server does not start either way.
    assert!(matches!(
        server().bind("127.0.0.1:0").await,
        Err(ServerError::Served(_))
    ));
    assert!(matches!(
        server().router().await,
        Err(ServerError::Served(_))
    ));
}

#[tokio::test]
async fn https_and_loopback_public_urls_are_served() {
    for url in [
        "https://agents.example.com/a2a",
        "http://localhost:8080/a2a",
        "http://[::1]:8080/a2a",
    ] {
        let card = Server::new(Echo).public_url(url).card().unwrap();
        assert!(card.interfaces.iter().all(|i| i.url == url), "{url}");
    }
    let listening = Server::new(Echo)
        .public_url("https://agents.example.com/a2a")
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    assert_eq!(listening.url(), "https://agents.example.com/a2a");
}
