//! How a message quotes a value of the card: the reader's issues and the linter's findings cut
//! long values alike.

use std::borrow::Cow;

/// The most characters of a value a message quotes; longer values are cut, with their length.
pub const MAX_QUOTED: usize = 80;

/// `value` as a message quotes it: whole when short, else its first [`MAX_QUOTED`] characters,
/// an ellipsis and its length.
pub(crate) fn short(value: &str) -> Cow<'_, str> {
    match value.char_indices().nth(MAX_QUOTED) {
        None => Cow::Borrowed(value),
        Some((cut, _)) => Cow::Owned(format!(
            "{}… ({} characters)",
            &value[..cut],
            value.chars().count()
        )),
    }
}
