//! Where a card's named schemas go, both ways: the one definition of the strict placement
//! (the input/output schemas extension entry's `params.schemas`) for writing, reading and
//! looking a schema up.

use serde_json::{Map, Value};

use crate::card::AgentCard;
use crate::schema::IO_SCHEMAS_EXTENSION_URI;

/// Where the named schemas of the input/output schemas extension go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum SchemaPlacement {
    /// The card's root `schemas` key, as the extension says (default).
    #[default]
    Root,
    /// `params.schemas` of the extension's entry in `capabilities.extensions`, for consumers
    /// that reject unknown root keys (the official 1.0 JSON schema does).
    ExtensionParams,
}

/// The key of the named schemas in the extension entry's `params` (as at the card's root).
const PARAMS_KEY: &str = "schemas";

/// The named schemas the input/output schemas extension entry carries in `params.schemas`.
pub(crate) fn schemas_in_params(card: &AgentCard) -> Option<&Map<String, Value>> {
    card.capabilities
        .extension(IO_SCHEMAS_EXTENSION_URI)?
        .params
        .as_ref()?
        .get(PARAMS_KEY)?
        .as_object()
}

/// Moves the card's named schemas into the `params.schemas` of its input/output schemas
/// extension entries (a card without an entry loses them, as it cannot carry them there).
pub(crate) fn move_to_params(card: &mut AgentCard) {
    if card.schemas.is_empty() {
        return;
    }
    let schemas: Map<String, Value> = std::mem::take(&mut card.schemas).into_iter().collect();
    for ext in &mut card.capabilities.extensions {
        if ext.uri == IO_SCHEMAS_EXTENSION_URI {
            ext.params
                .get_or_insert_with(Map::new)
                .insert(PARAMS_KEY.to_owned(), Value::Object(schemas.clone()));
        }
    }
}

/// The reverse, for a card read: schemas carried in the extension entry's `params.schemas`
/// move to the card's `schemas`, where the model keeps them, unless the card has root schemas
/// already. Returns the index of the entry they came from.
pub(crate) fn lift_from_params(card: &mut AgentCard) -> Option<usize> {
    let index = card
        .capabilities
        .extensions
        .iter()
        .position(|e| e.uri == IO_SCHEMAS_EXTENSION_URI)?;
    let ext = &mut card.capabilities.extensions[index];
    let params = ext.params.as_mut()?;
    if !card.schemas.is_empty() || !params.get(PARAMS_KEY).is_some_and(Value::is_object) {
        return None;
    }
    if let Some(Value::Object(schemas)) = params.shift_remove(PARAMS_KEY) {
        card.schemas = schemas.into_iter().collect();
    }
    if params.is_empty() {
        ext.params = None;
    }
    Some(index)
}
