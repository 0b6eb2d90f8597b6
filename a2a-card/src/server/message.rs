//! The incoming message as the JSON the dispatcher reads, and its files; and the dispatcher's
//! decision on it.

use a2a::{A2AError, Message, PartContent};
use serde_json::{Number, Value};

use crate::dispatch::{Decision, Dispatcher};
use crate::file::{File, FileContent};

/// Whether the message has file parts (inline bytes or a URL).
pub(crate) fn has_files(message: &Message) -> bool {
    message
        .parts
        .iter()
        .any(|p| matches!(p.content, PartContent::Raw(_) | PartContent::Url(_)))
}

/// Takes the file parts (inline bytes or URL) out of `message`, in order, refusing inline
/// bytes over `max_inline` with an invalid-params error that names the file and the limit.
pub(crate) fn split_files(message: &mut Message, max_inline: usize) -> Result<Vec<File>, A2AError> {
    if !has_files(message) {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    let mut kept = Vec::with_capacity(message.parts.len());
    for (index, part) in std::mem::take(&mut message.parts).into_iter().enumerate() {
        let content = match part.content {
            PartContent::Raw(bytes) => {
                if bytes.len() > max_inline {
                    return Err(too_large_inline(
                        &part.filename,
                        index,
                        bytes.len(),
                        max_inline,
                    ));
                }
                FileContent::Bytes(bytes)
            }
            PartContent::Url(url) => FileContent::Url(url),
            other => {
                kept.push(a2a::Part {
                    content: other,
                    ..part
                });
                continue;
            }
        };
        files.push(File {
            name: part.filename,
            media_type: part.media_type,
            content,
        });
    }
    message.parts = kept;
    Ok(files)
}

fn too_large_inline(name: &Option<String>, index: usize, len: usize, max: usize) -> A2AError {
    let name = name.as_deref().unwrap_or("(unnamed)");
    A2AError::invalid_params(format!(
        "file `{name}` (part {index}) carries {len} bytes inline; this agent takes at most {max} bytes inline: send a smaller file, or a URL"
    ))
}

/// The message as JSON (the 1.0 shape), with whole numbers back as integers.
///
/// The official server carries a data part as a `google.protobuf.Struct`, whose numbers are
/// all doubles: `{"quantity": 3}` arrives as `{"quantity": 3.0}`, which a `u32` field refuses.
/// A double with no fraction that fits an `i64` or `u64` is turned back into an integer
/// (a float field takes it all the same); other numbers are left as they are.
pub(crate) fn message_json(message: &Message) -> Result<Value, A2AError> {
    let mut json = serde_json::to_value(message)
        .map_err(|e| A2AError::invalid_params(format!("unreadable message: {e}")))?;
    if let Some(Value::Array(parts)) = json.get_mut("parts") {
        for part in parts {
            if let Some(data) = part.get_mut("data") {
                integers(data);
            }
        }
    }
    Ok(json)
}

/// Turns whole doubles into integers, everywhere in `value`.
fn integers(value: &mut Value) {
    match value {
        Value::Number(n) => {
            if let Some(i) = whole(n) {
                *n = i;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integers),
        Value::Object(map) => map.values_mut().for_each(integers),
        _ => {}
    }
}

fn whole(n: &Number) -> Option<Number> {
    if !n.is_f64() {
        return None;
    }
    let f = n.as_f64()?;
    if f.fract() != 0.0 || !f.is_finite() {
        return None;
    }
    // 2^63 and 2^64, exactly representable as doubles.
    const I64_END: f64 = 9_223_372_036_854_775_808.0;
    const U64_END: f64 = 18_446_744_073_709_551_616.0;
    if (-I64_END..I64_END).contains(&f) {
        Some(Number::from(f as i64))
    } else if (0.0..U64_END).contains(&f) {
        Some(Number::from(f as u64))
    } else {
        None
    }
}

/// The dispatcher's decision on `message`, for a new task or (`existing`) an answer.
pub(crate) fn decide(
    dispatcher: &Dispatcher,
    max_inline_file: usize,
    message: &Message,
    existing: Option<&str>,
) -> Result<Decision, A2AError> {
    let (json, files) = dispatch_input(max_inline_file, message)?;
    Ok(dispatcher.dispatch_with_files(json, files, existing))
}

/// What dispatch reads of `message`: its JSON, and its files taken out.
pub(crate) fn dispatch_input(
    max_inline_file: usize,
    message: &Message,
) -> Result<(serde_json::Value, Vec<crate::file::File>), A2AError> {
    Ok(if has_files(message) {
        // File parts are taken out of a copy only when there are any.
        let mut message = message.clone();
        let files = split_files(&mut message, max_inline_file)?;
        (message_json(&message)?, files)
    } else {
        (message_json(message)?, Vec::new())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a::{Part, Role};
    use serde_json::json;

    #[test]
    fn whole_doubles_in_data_parts_become_integers() {
        let data = json!({"quantity": 3.0, "price": 2.5, "list": [1.0, -4.0, 1e300], "big": 1e19});
        let message = Message::new(Role::User, vec![Part::data(data), Part::text("3.0")]);
        let json = message_json(&message).unwrap_or_default();
        let data = &json["parts"][0]["data"];
        assert_eq!(data["quantity"], json!(3));
        assert!(data["quantity"].is_i64());
        assert_eq!(data["price"], json!(2.5));
        assert_eq!(data["list"][0], json!(1));
        assert_eq!(data["list"][1], json!(-4));
        assert!(data["list"][2].is_f64());
        assert!(data["big"].is_u64());
        assert_eq!(json["parts"][1]["text"], "3.0");
    }
}
