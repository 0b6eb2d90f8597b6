//! Hosting an agent: the builder ([`Server`](server::Server) and its options), what it wires
//! (the routes of every binding, the layers), the listener (the service each connection gets)
//! and its drain, the documents it publishes (the card, the capabilities, the catalog) and the
//! interfaces they name, and a [`Host`](host::Host) of several agents on one listener.

pub(crate) mod catalog;
pub(crate) mod documents;
pub(crate) mod drain;
pub(crate) mod front;
pub(crate) mod host;
pub(crate) mod interfaces;
pub(crate) mod listening;
pub(crate) mod server;
pub(crate) mod wiring;
