//! The book's pages (`book/src/`), compiled as doctests so that every Rust block in them
//! compiles as written, and runs unless it is marked `no_run` (a block that serves or calls
//! a network would not end): `cargo test -p a2a-card --all-features --doc`.
//!
//! A page whose blocks need a feature is included only with it; the workspace's test command
//! (`cargo test --workspace --all-features`) has them all.

macro_rules! pages {
    ($($(#[$cfg:meta])* $name:ident = $path:literal;)*) => {
        $(
            $(#[$cfg])*
            #[doc = include_str!(concat!("../../book/src/", $path))]
            pub struct $name;
        )*
    };
}

pages! {
    Introduction = "introduction.md";
    Running = "running.md";
    #[cfg(feature = "server")]
    Declaration = "declaration.md";
    CardByHand = "card-by-hand.md";
    Dispatch = "dispatch.md";
    #[cfg(feature = "server")]
    Serving = "serving.md";
    Wire = "wire.md";
    A2a03 = "a2a-0-3.md";
    Grpc = "grpc.md";
    Mcp = "mcp.md";
    FormPage = "form-page.md";
    #[cfg(all(feature = "console", feature = "sqlite"))]
    ConsolePage = "console.md";
    RequestPath = "request-path.md";
    #[cfg(feature = "server")]
    AgentWork = "agent-work.md";
    #[cfg(all(feature = "rig", feature = "client", feature = "server"))]
    Model = "model.md";
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    DurableTasks = "durable-tasks.md";
    #[cfg(all(feature = "testing", feature = "sqlite", feature = "rig"))]
    Testing = "testing.md";
    #[cfg(feature = "server")]
    Security = "security.md";
    Opentelemetry = "opentelemetry.md";
    #[cfg(feature = "client")]
    ClientCli = "client-cli.md";
    #[cfg(feature = "sign")]
    Signing = "signing.md";
    Linter = "linter.md";
    ProtocolNotes = "protocol-notes.md";
    Performance = "performance.md";
}
