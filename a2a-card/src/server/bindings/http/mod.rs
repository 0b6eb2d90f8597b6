//! The HTTP bindings: JSON-RPC 1.0 and 0.3 at the card's URL ([`jsonrpc`]), HTTP+JSON under
//! it ([`rest`]), the one rule for their bodies ([`body`]: the limit, and a body an answer
//! left unread), and how they read ProtoJSON ([`protojson`]).

pub(crate) mod body;
pub(crate) mod jsonrpc;
pub(crate) mod protojson;
pub(crate) mod rest;
