//! ProtoJSON as the HTTP bindings read it: the JSON of a request's params or body in any
//! spelling a ProtoJSON parser accepts (snake_case names, enums by number), brought to the one
//! the `a2a` types' serde reads; and the 1.0 spelling read straight from the text, which is
//! what nearly every client sends.

use a2a::A2AError;
use serde_json::Value;

use crate::server::call::field_error;

/// JSON `text` read straight into `T`, when it is in the 1.0 spelling and reads (`None`:
/// read it the careful way, [`normalize`] then [`read`]). A snake_case name would be skipped
/// as unknown rather than read, so text with one is not read here.
pub(crate) fn read_text<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
    if has_snake_key(text) {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// Whether JSON `text` has a member name with `_` in it (a ProtoJSON snake_case name), outside
/// the values of `data` and `metadata` members, which are the caller's own.
fn has_snake_key(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            i += 1;
            continue;
        }
        let start = i + 1;
        i = string_end(bytes, i);
        let name = &bytes[start..i.saturating_sub(1).max(start)];
        let after = skip_whitespace(bytes, i);
        if bytes.get(after) != Some(&b':') {
            continue;
        }
        // A member name.
        if name == b"data" || name == b"metadata" {
            i = value_end(bytes, skip_whitespace(bytes, after + 1));
        } else if name.contains(&b'_') {
            return true;
        }
    }
    false
}

/// Where the string opening at `at` (a quote) ends: the index after its closing quote.
fn string_end(bytes: &[u8], at: usize) -> usize {
    let mut i = at + 1;
    while i < bytes.len() && bytes[i] != b'"' {
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    (i + 1).min(bytes.len())
}

fn skip_whitespace(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// Where the JSON value starting at `at` ends.
fn value_end(bytes: &[u8], at: usize) -> usize {
    let mut depth = 0usize;
    let mut i = at;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = string_end(bytes, i);
                if depth == 0 {
                    return i;
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth <= 1 => return i + usize::from(depth == 1),
            b'}' | b']' => depth -= 1,
            b',' if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    i
}

/// `params` read as `T` (already [normalised](normalize)), or an invalid-params error that
/// says where they are wrong.
pub(crate) fn read<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, A2AError> {
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        let error = e.into_inner().to_string();
        // A field missing is named itself, under the object that lacks it.
        let missing = error
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split_once('`'))
            .map(|(name, _)| name);
        match (path.as_str(), missing) {
            (".", Some(name)) => field_error(name, "is required"),
            (_, Some(name)) => field_error(&format!("{path}.{name}"), "is required"),
            (".", None) => field_error("params", error),
            (_, None) => field_error(&path, error),
        }
    })
}

/// Request params or body in any spelling a ProtoJSON parser accepts, in the one the `a2a`
/// types' serde reads, value to value: field names in snake_case become camelCase, enum
/// values given as numbers (`role`, a task state) become their names. The values of data
/// parts and of `metadata` are the caller's own and are left exactly as sent.
pub(crate) fn normalize(value: &mut Value) {
    let Value::Object(map) = value else {
        if let Value::Array(items) = value {
            items.iter_mut().for_each(normalize);
        }
        return;
    };
    if map.keys().any(|k| k.contains('_')) {
        let entries = std::mem::take(map);
        for (key, value) in entries {
            let key = if key.contains('_') { camel(&key) } else { key };
            // The camelCase spelling wins when both are sent.
            if !map.contains_key(&key) {
                map.insert(key, value);
            }
        }
    }
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "data" | "metadata" | "params" => {}
            "role" => enum_name(value, &["ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"]),
            "state" | "status" if value.is_number() => enum_name(value, TASK_STATES),
            _ => normalize(value),
        }
    }
}

/// The task states in their protobuf order.
const TASK_STATES: &[&str] = &[
    "TASK_STATE_UNSPECIFIED",
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_REJECTED",
    "TASK_STATE_AUTH_REQUIRED",
];

/// An enum value given as its number, as its name (an unknown number is left for serde to
/// refuse).
fn enum_name(value: &mut Value, names: &[&str]) {
    if let Some(name) = value
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .and_then(|n| names.get(n))
    {
        *value = Value::String((*name).to_owned());
    }
}

/// `snake_case` as `camelCase`.
fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        match c {
            '_' if !out.is_empty() => upper = true,
            c if upper => {
                out.extend(c.to_uppercase());
                upper = false;
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn protojson_spellings_read_as_their_camel_case_twins() {
        let mut snake = json!({"message": {
            "message_id": "m1", "role": 1, "context_id": "c",
            "parts": [{"data": {"keep_me": 1}, "media_type": "application/json"}],
            "metadata": {"trace_id": "x"}},
            "configuration": {"history_length": 2, "return_immediately": true}});
        normalize(&mut snake);
        assert_eq!(
            snake,
            json!({"message": {
                "messageId": "m1", "role": "ROLE_USER", "contextId": "c",
                "parts": [{"data": {"keep_me": 1}, "mediaType": "application/json"}],
                "metadata": {"trace_id": "x"}},
                "configuration": {"historyLength": 2, "returnImmediately": true}})
        );
        let mut list = json!({"status": 2, "page_size": 5});
        normalize(&mut list);
        assert_eq!(list, json!({"status": "TASK_STATE_WORKING", "pageSize": 5}));
    }

    #[test]
    fn a_snake_case_member_name_is_found_and_a_value_with_underscores_is_not() {
        assert!(has_snake_key(r#"{"message": {"message_id": "m"}}"#));
        assert!(has_snake_key(r#"{"a" : {"b_c"  :1}}"#));
        assert!(!has_snake_key(r#"{"role": "ROLE_USER", "text": "a_b:"}"#));
        assert!(!has_snake_key(r#"{"s": "say \"x_y\": 1"}"#));
        // The caller's own data and metadata are theirs to spell.
        let data = r#"{"message": {"parts": [{"data": {"start_date": "x", "n": [{"a_b": 1}]},
            "mediaType": "m"}], "metadata": {"trace_id": "t"}, "messageId": "m1"}}"#;
        assert!(!has_snake_key(data));
        assert!(has_snake_key(&data.replace("messageId", "message_id")));
        assert!(!has_snake_key(r#"{"data": 3, "metadata": "a_b"}"#));
        assert!(has_snake_key(r#"{"data": "x", "context_id": "c"}"#));
    }
}
