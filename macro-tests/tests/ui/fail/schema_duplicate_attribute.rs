use a2a_card::Schema;
use schemars::JsonSchema;

#[derive(serde::Deserialize, JsonSchema, Schema)]
#[schema(name = "fight", inline, name = "bout")]
pub struct Fight {
    pub a: String,
}

fn main() {}
