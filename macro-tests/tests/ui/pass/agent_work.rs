//! The handler shapes of real agent work: streamed returns (sync and async, of data, text,
//! either, and fallible items), files in (one, optional, many) and out, and a context that
//! reports progress, sends named artifacts and asks.

use a2a_card::{Agent, File, Output, Schema, SkillContext, agent, skill};
use futures::Stream;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema, Schema)]
struct Query {
    topic: String,
}

#[derive(Serialize, JsonSchema, Schema)]
struct Hit {
    title: String,
}

struct Library;

/// Finds books and reads documents.
#[agent(url = "https://library.example.com/a2a")]
impl Library {
    /// Streams the hits of a query as they are found.
    #[skill]
    async fn search(&self, query: Query, ctx: SkillContext) -> impl Stream<Item = Hit> + Send {
        ctx.progress("searching").await;
        futures::stream::iter(vec![Hit { title: query.topic }])
    }

    /// Streams a summary line by line, or fails.
    #[skill]
    fn summarise(&self, text: String) -> impl Stream<Item = Result<String, String>> + Send {
        futures::stream::iter(text.lines().map(|l| Ok(l.to_owned())).collect::<Vec<_>>())
    }

    /// Streams text or data.
    #[skill]
    fn mixed(&self, _q: String) -> impl Stream<Item = Output<Hit>> + Send {
        futures::stream::iter(vec![Output::Text("a".to_owned())])
    }

    /// Reads one PDF document and names its size.
    #[skill(input_modes("application/pdf"))]
    fn size(&self, document: File) -> String {
        document.len().to_string()
    }

    /// Reads a question and, maybe, an image.
    #[skill(input_modes("image/*"))]
    fn look(&self, question: String, image: Option<File>) -> String {
        format!("{question}: {}", image.is_some())
    }

    /// Bundles any number of text files into an archive.
    #[skill(input_modes("text/plain", "text/markdown"), output_modes("application/zip"))]
    async fn bundle(&self, files: Vec<File>, ctx: SkillContext) -> Result<File, String> {
        let mut notes = ctx.artifact::<String>("notes");
        notes.send(format!("{} files", files.len())).await?;
        notes.close().await;
        let name = ctx.ask("Name of the archive?").await?;
        Ok(File::from_bytes("application/zip", Vec::new()).with_name(name.text()))
    }
}

fn main() {
    let card = Library::card().unwrap();
    assert_eq!(card.capabilities.streaming, Some(true));
    let modes = |i: usize| (card.skills[i].input_modes.clone(), card.skills[i].output_modes.clone());
    assert_eq!(modes(0), (vec!["application/json;schema=query".to_owned()], vec!["application/json;schema=hit".to_owned()]));
    assert_eq!(modes(1).1, ["text/plain"]);
    assert_eq!(modes(2).1, ["text/plain", "application/json;schema=hit"]);
    assert_eq!(modes(3).0, ["application/pdf"]);
    assert_eq!(modes(4).0, ["text/plain", "image/*"]);
    assert_eq!(modes(5), (vec!["text/plain".to_owned(), "text/markdown".to_owned()], vec!["application/zip".to_owned()]));
    let streaming: Vec<bool> = Library::SKILLS.iter().map(|s| s.output.streaming).collect();
    assert_eq!(streaming, [true, true, true, false, false, false]);
}
