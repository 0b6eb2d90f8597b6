//! Tests of the pages' helpers: escaping, encoding, durations and a call's answer in words.

use super::journal::{duration, returned_text};
use super::list::caller_of;
use super::*;

#[test]
fn values_are_escaped_and_ids_encoded() {
    assert_eq!(
        esc("<script>\"x\" & 'y'</script>"),
        "&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;"
    );
    assert_eq!(encode("acme:3f.ab cd/?"), "acme:3f.ab%20cd%2F%3F");
    assert_eq!(
        caller_of("acme:3f1c.uuid", "acme:"),
        Some("3f1c".to_owned())
    );
    assert_eq!(caller_of("uuid-1", ""), None);
}

#[test]
fn durations_read_as_an_operator_reads_them() {
    assert_eq!(duration(840), "840 ms");
    assert_eq!(duration(2_449), "2.4 s");
    assert_eq!(duration(185_000), "3 min 5 s");
    assert_eq!(duration(7_800_000), "2 h 10 min");
}

#[test]
fn what_a_call_returned_is_told_in_words() {
    let done =
        serde_json::json!({"task": {"id": "t", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}});
    assert_eq!(returned_text(&done), "its task is input-required");
    let failed = serde_json::json!({"error": {"message": "refused"}});
    assert_eq!(returned_text(&failed), "failed: refused");
}
