//! Files that skills take and return (the user guide is on `File`), and which media types a
//! skill's modes accept.

use std::fmt;

use a2a_card_rules::media::type_and_subtype;

/// A file in a message or an artifact: the A2A file part (bytes inline, or a URL), with its
/// media type and name.
///
/// A handler takes the message's files with a [`File`] argument (exactly one), an
/// `Option<File>` (at most one) or a `Vec<File>` (any number), beside its input; it returns one
/// by returning a [`File`]. The media types a skill takes and returns are its declared
/// `input_modes(..)` and `output_modes(..)`: a skill with a file argument or a file output must
/// declare at least one (a compile error says so otherwise), and a file whose media type the
/// skill does not declare is refused before the handler runs.
///
/// ```
/// use a2a_card::{File, agent, skill};
///
/// struct Shrinker;
/// /// Makes images smaller.
/// #[agent(url = "http://127.0.0.1:9000")]
/// impl Shrinker {
///     /// Takes a PNG or JPEG image and returns it at half its size.
///     #[skill(input_modes("image/png", "image/jpeg"), output_modes("image/png"))]
///     fn shrink(&self, image: File) -> File {
///         let bytes = image.bytes().map(|b| b[..b.len() / 2].to_vec()).unwrap_or_default();
///         File::from_bytes("image/png", bytes).with_name("small.png")
///     }
/// }
/// # use a2a_card::Agent;
/// assert_eq!(Shrinker::card().unwrap().skills[0].input_modes, ["image/png", "image/jpeg"]);
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct File {
    /// The file's name, when the sender gave one.
    pub name: Option<String>,
    /// Its media type (`image/png`), when the sender gave one.
    pub media_type: Option<String>,
    /// The content: bytes, or where to fetch them.
    pub content: FileContent,
}

/// Where a file's content is.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileContent {
    /// The bytes themselves (sent inline, base64 on the wire).
    Bytes(Vec<u8>),
    /// A URL to fetch them from.
    Url(String),
}

impl File {
    /// A file of these bytes.
    ///
    /// ```
    /// let file = a2a_card::File::from_bytes("text/plain", b"hello".to_vec()).with_name("hello.txt");
    /// assert_eq!(file.bytes(), Some(&b"hello"[..]));
    /// ```
    pub fn from_bytes(media_type: impl Into<String>, bytes: Vec<u8>) -> File {
        File {
            name: None,
            media_type: Some(media_type.into()),
            content: FileContent::Bytes(bytes),
        }
    }

    /// A file found at `url`.
    ///
    /// ```
    /// let file = a2a_card::File::from_url("application/pdf", "https://files.example.com/a.pdf");
    /// assert_eq!(file.url(), Some("https://files.example.com/a.pdf"));
    /// ```
    pub fn from_url(media_type: impl Into<String>, url: impl Into<String>) -> File {
        File {
            name: None,
            media_type: Some(media_type.into()),
            content: FileContent::Url(url.into()),
        }
    }

    /// The same file with a name.
    pub fn with_name(mut self, name: impl Into<String>) -> File {
        self.name = Some(name.into());
        self
    }

    /// The bytes, when they came inline.
    pub fn bytes(&self) -> Option<&[u8]> {
        match &self.content {
            FileContent::Bytes(b) => Some(b),
            FileContent::Url(_) => None,
        }
    }

    /// The URL, when the file came by reference.
    pub fn url(&self) -> Option<&str> {
        match &self.content {
            FileContent::Url(u) => Some(u),
            FileContent::Bytes(_) => None,
        }
    }

    /// The number of inline bytes (0 for a URL).
    pub fn len(&self) -> usize {
        self.bytes().map_or(0, <[u8]>::len)
    }

    /// Whether the file has no inline bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("File");
        d.field("name", &self.name)
            .field("media_type", &self.media_type);
        match &self.content {
            FileContent::Bytes(b) => d.field("bytes", &b.len()),
            FileContent::Url(u) => d.field("url", u),
        };
        d.finish()
    }
}

/// Whether `media_type` (as a file part gives it) is one of `accepted` (a skill's modes):
/// case-insensitive on the essence (`type/subtype`, parameters ignored), and `type/*` or `*/*`
/// in `accepted` take every subtype.
pub(crate) fn accepts(accepted: &[&str], media_type: &str) -> bool {
    let Some((sent_type, sent_subtype)) = type_and_subtype(media_type) else {
        return false;
    };
    accepted.iter().any(|a| match type_and_subtype(a) {
        Some(("*", "*")) => true,
        Some((type_, "*")) => type_.eq_ignore_ascii_case(sent_type),
        Some((type_, subtype)) => {
            type_.eq_ignore_ascii_case(sent_type) && subtype.eq_ignore_ascii_case(sent_subtype)
        }
        None => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_match_by_essence_and_wildcards() {
        assert!(accepts(&["image/png"], "IMAGE/PNG; q=1"));
        assert!(accepts(&["image/*"], "image/jpeg"));
        assert!(accepts(&["*/*"], "text/calendar"));
        assert!(!accepts(&["image/png"], "image/jpeg"));
        assert!(!accepts(&["image/*"], "text/plain"));
        assert!(!accepts(&["image/png"], "png"));
    }
}
