#!/usr/bin/env python3
"""Compile-time cost of the a2a-card macros: an agent of N skills (200 by default) declared with
`#[agent]`/`#[skill]`/`#[derive(Schema)]`, against the same agent written by hand with the
builder, timed with `cargo check` (clean and incremental) in one run.

Run it through `scripts/bench-compile.sh`, which makes and removes the work directory. The
variants:

  macros            the skills as `#[skill]` methods of one `#[agent]` impl block, every input and
                    output type deriving `a2a_card::Schema` (besides serde and schemars).
  hand              the same handlers and types (serde + schemars only), the card built with
                    `AgentCard::builder` / `AgentSkill::builder` (schemas from
                    `a2a_card::schema::schema_for::<T>`, so that the card is the macros' card
                    exactly), and a hand-written `match` from skill id to handler that
                    deserialises the input and serialises the output.
  expanded          (investigation) what the macros expand to, written out by this generator from
                    the expansion code in a2a-card-derive/src/{skill,agent,schema}.rs (as of
                    commit 2122556; update it when the expansion changes): the
                    declaration constants, call glue, `Agent` impl and per-skill `check_skill`
                    constants, with no proc macro of a2a-card run. macros - expanded is the cost
                    of the expansion itself (running the proc macros, and rustc handing them the
                    tokens and parsing what they return); expanded - hand the cost of the code
                    they emit.
  expanded-nocheck  (investigation) `expanded` without the per-skill `check_skill` constants.

After the timings, every variant is built and run: each must print the number of skills, and
all must print the same card JSON and the same replies to calls of their first five skills.

Every variant has the same dependencies and the same Cargo.lock, and they share one target
directory: the dependencies are checked once, by an untimed warm-up, before any timing, so the
timings measure the user crate only (`cargo clean -p <crate>` removes just that crate's
artifacts).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_RATIO = 1.3

VERBS = [
    "summarize", "translate", "classify", "extract", "rank",
    "convert", "validate", "estimate", "schedule", "review",
]
NOUNS = [
    "invoice", "ticket", "order", "contract", "report", "email", "meeting", "receipt", "resume",
    "article", "dataset", "recipe", "itinerary", "claim", "policy", "shipment", "lead",
    "incident", "payment", "survey",
]
# Return shapes: a schema type, text, Result of a schema type, Output<T> (text or data), Result
# of text.
OUT_FORMS = ["data", "text", "result_data", "output", "result_text"]
# Extra fields of input types (the first field is always a String).
FIELD_POOL = [
    ("count", "u32", "How many items to consider"),
    ("threshold", "f64", "The confidence below which results are dropped"),
    ("strict", "bool", "Whether to refuse ambiguous input"),
    ("locale", "Option<String>", "The language of the answer, as a BCP 47 tag"),
    ("labels", "Vec<String>", "Labels to attach to the result"),
]
FIRST_FIELDS = ["text", "title", "subject", "query", "body"]
# Third person and past participle of the verbs, for doc comments.
VERB_FORMS = {
    "summarize": ("Summarizes", "summarized"), "translate": ("Translates", "translated"),
    "classify": ("Classifies", "classified"), "extract": ("Extracts", "extracted"),
    "rank": ("Ranks", "ranked"), "convert": ("Converts", "converted"),
    "validate": ("Validates", "validated"), "estimate": ("Estimates", "estimated"),
    "schedule": ("Schedules", "scheduled"), "review": ("Reviews", "reviewed"),
}

AGENT_DESCRIPTION = "A benchmark agent with many skills over business documents."
AGENT_URL = "https://bench.example.com/a2a"
VARIANTS = ["macros", "hand", "expanded", "expanded-nocheck"]


def camel(word: str) -> str:
    return word[:1].upper() + word[1:]


def rust_str(s: str) -> str:
    return json.dumps(s)  # a JSON string is a valid Rust string literal for this ASCII text


def raw_str(s: str) -> str:
    assert '"#' not in s
    return 'r#"' + s + '"#'


class Skill:
    """One generated skill; everything both variants need to agree on."""

    def __init__(self, k: int):
        self.k = k
        verb, noun = VERBS[k % len(VERBS)], NOUNS[(k // len(VERBS)) % len(NOUNS)]
        rnd = k // (len(VERBS) * len(NOUNS))
        sfx = f"_{rnd}" if rnd else ""
        self.verb, self.noun = verb, noun
        self.fn = f"{verb}_{noun}{sfx}"
        base = camel(verb) + camel(noun) + (str(rnd) if rnd else "")
        self.in_ty = base + "Request"
        self.in_schema = self.in_ty[0].lower() + self.in_ty[1:]
        self.out_form = OUT_FORMS[k % len(OUT_FORMS)]
        self.has_out_ty = self.out_form in ("data", "result_data", "output")
        self.out_ty = base + "Result"
        self.out_schema = self.out_ty[0].lower() + self.out_ty[1:]
        self.out_items = k % 2 == 1  # the output type's third field: items or accepted
        self.text_input = k % 3 == 0  # Input<T> (text or data) rather than T
        self.is_async = k % 2 == 0
        self.with_ctx = k % 7 == 0
        self.explicit_id = k % 17 == 0
        self.id = f"{verb}-{noun}{sfx.replace('_', '-')}" + ("-v2" if self.explicit_id else "")
        self.heading = f"{camel(verb)} {camel(noun)} Skill" if k % 6 == 0 else None
        self.name = self.heading or " ".join(camel(w) for w in self.fn.split("_"))
        given = "given as text or as structured data" if self.text_input else "given as structured data"
        returns = {
            "data": "a structured result",
            "text": "a plain-text summary",
            "result_data": "a structured result, or fails when there is nothing to do",
            "output": "a structured result, or text for text input",
            "result_text": "a plain-text summary, or fails when there is nothing to do",
        }[self.out_form]
        self.doc_lines = [f"{VERB_FORMS[verb][0]} the {noun} {given}.", f"Returns {returns}."]
        self.description = " ".join(self.doc_lines)
        self.tags = [verb, noun] + (["bench"] if k % 3 == 1 else [])
        n_fields = 2 + k % 3
        self.fields = [(FIRST_FIELDS[k % len(FIRST_FIELDS)], "String", f"The {noun} to work on")]
        for i in range(1, n_fields):
            self.fields.append(FIELD_POOL[(k + i) % len(FIELD_POOL)])
        self.deny_unknown = k % 2 == 0
        sample = {}
        for fname, fty, _ in self.fields:
            sample[fname] = {
                "String": f"sample {noun}", "u32": 3, "f64": 0.75, "bool": True,
                "Option<String>": "en", "Vec<String>": ["urgent"],
            }[fty]
        self.sample = json.dumps(sample, separators=(", ", ": "))
        self.examples = []
        if k % 2 == 0:
            self.examples.append(self.sample)
        if self.text_input:
            self.examples.append(f"{camel(verb)} this {noun}, please")
        self.literal = f"{verb} {noun}{sfx}"

    # Types -------------------------------------------------------------------------------------

    @property
    def arg_types(self) -> list[str]:
        ty = f"Input<{self.in_ty}>" if self.text_input else self.in_ty
        return [ty] + (["SkillContext"] if self.with_ctx else [])

    @property
    def ret_type(self) -> str:
        return {
            "data": self.out_ty,
            "text": "String",
            "result_data": f"Result<{self.out_ty}, String>",
            "output": f"Output<{self.out_ty}>",
            "result_text": "Result<String, String>",
        }[self.out_form]

    def input_modes(self) -> list[str]:
        return (["text/plain"] if self.text_input else []) + [f"application/json;schema={self.in_schema}"]

    def output_modes(self) -> list[str]:
        text = ["text/plain"] if self.out_form in ("text", "output", "result_text") else []
        data = [f"application/json;schema={self.out_schema}"] if self.has_out_ty else []
        return text + data

    # Handler -----------------------------------------------------------------------------------

    def _out_value(self, summary: str, score: str, from_text: bool) -> str:
        third = ("items: Vec::new()" if from_text else "items: parts") if self.out_items else (
            "accepted: false" if from_text else "accepted: !parts.is_empty()")
        return f"{self.out_ty} {{ summary: {summary}, score: {score}, {third} }}"

    def _ret_text(self) -> str:
        v = self._out_value("t", "0.0", True) if self.has_out_ty else None
        return {
            "data": v, "text": "t", "result_data": f"Ok({v})", "output": "Output::Text(t)",
            "result_text": "Ok(t)",
        }[self.out_form]

    def _ret_final(self) -> str:
        fail = f'Err({rust_str(f"nothing to {self.verb} in the {self.noun}")}.to_owned())'
        v = self._out_value("text", "score", False).replace("score: score", "score") if self.has_out_ty else None
        return {
            "data": v,
            "text": "text",
            "result_data": f"if parts.is_empty() {{ {fail} }} else {{ Ok({v}) }}",
            "output": f"Output::Data({v})",
            "result_text": f"if parts.is_empty() {{ {fail} }} else {{ Ok(text) }}",
        }[self.out_form]

    def handler(self, indent: str, attrs: list[str]) -> str:
        docs = []
        if self.heading:
            docs += [f"# {self.heading}", ""]
        docs += self.doc_lines
        out = [f"{indent}/// {d}".rstrip() for d in docs]
        out += [f"{indent}{a}" for a in attrs]
        params = ["&self", f"input: {self.arg_types[0]}"] + (["ctx: SkillContext"] if self.with_ctx else [])
        asyncness = "async " if self.is_async else ""
        out.append(f"{indent}pub {asyncness}fn {self.fn}({', '.join(params)}) -> {self.ret_type} {{")
        b = indent + "    "
        if self.text_input:
            out += [f"{b}let d = match input {{", f"{b}    Input::Data(d) => d,",
                    f"{b}    Input::Text(t) => return {self._ret_text()},", f"{b}}};"]
        else:
            out.append(f"{b}let d = input;")
        numeric = any(fty in ("u32", "f64") for _, fty, _ in self.fields)
        out += [f"{b}let mut parts: Vec<String> = Vec::new();",
                f"{b}let {'mut ' if numeric else ''}score = 0.0_f64;"]
        for fname, fty, _ in self.fields:
            out.append(b + {
                "String": f"parts.push(d.{fname}.clone());",
                "u32": f"score += f64::from(d.{fname});",
                "f64": f"score += d.{fname};",
                "bool": f'if d.{fname} {{ parts.push("{fname}".to_owned()); }}',
                "Option<String>": f"if let Some(x) = &d.{fname} {{ parts.push(x.clone()); }}",
                "Vec<String>": f"parts.extend(d.{fname}.iter().cloned());",
            }[fty])
        if self.with_ctx:
            out.append(f"{b}if let Some(task) = &ctx.task_id {{ parts.push(task.clone()); }}")
        out.append(f'{b}let text = format!("{self.literal}: {{}} ({{score}})", parts.join(", "));')
        out.append(f"{b}{self._ret_final()}")
        out.append(f"{indent}}}")
        return "\n".join(out)

    def skill_attr(self) -> str:
        parts = []
        if self.explicit_id:
            parts.append(f"id = {rust_str(self.id)}")
        parts.append("tags(" + ", ".join(rust_str(t) for t in self.tags) + ")")
        if self.examples:
            parts.append("examples(" + ", ".join(raw_str(e) for e in self.examples) + ")")
        return f"#[skill({', '.join(parts)})]"

    # Types -------------------------------------------------------------------------------------

    def types(self, variant: str) -> str:
        named = variant == "macros"
        out = []
        out.append(f"/// What `{self.id}` takes: the {self.noun} to {self.verb}.")
        out.append("#[derive(Debug, Clone, Deserialize, JsonSchema" + (", Schema)]" if named else ")]"))
        if self.deny_unknown:
            out.append("#[serde(deny_unknown_fields)]")
        out.append(f"pub struct {self.in_ty} {{")
        for fname, fty, doc in self.fields:
            out.append(f"    /// {doc}.")
            if fty == "Vec<String>":
                out.append("    #[serde(default)]")
            out.append(f"    pub {fname}: {fty},")
        out.append("}")
        if variant.startswith("expanded"):
            out.append(named_schema_impl(self.in_ty, self.in_schema))
        if self.has_out_ty:
            out.append("")
            out.append(f"/// What `{self.id}` returns.")
            out.append("#[derive(Debug, Clone, Serialize, JsonSchema" + (", Schema)]" if named else ")]"))
            out.append(f"pub struct {self.out_ty} {{")
            out.append(f"    /// The {VERB_FORMS[self.verb][1]} {self.noun}, in words.")
            out.append("    pub summary: String,")
            out.append("    /// How confident the result is.")
            out.append("    pub score: f64,")
            if self.out_items:
                out.append("    /// The items the result is made of.")
                out.append("    pub items: Vec<String>,")
            else:
                out.append("    /// Whether the input was accepted.")
                out.append("    pub accepted: bool,")
            out.append("}")
            if variant.startswith("expanded"):
                out.append(named_schema_impl(self.out_ty, self.out_schema))
        return "\n".join(out)

    # Hand-written card and dispatch ------------------------------------------------------------

    def hand_card(self) -> str:
        b = "        "
        out = [f"    card = card",
               f"{b}.skill(",
               f"{b}    AgentSkill::builder({rust_str(self.id)}, {rust_str(self.name)}, {rust_str(self.description)})",
               f"{b}        .tags([" + ", ".join(rust_str(t) for t in self.tags) + "])"]
        out += [f"{b}        .example({raw_str(e)})" for e in self.examples]
        out += [f"{b}        .input_mode({rust_str(m)})" for m in self.input_modes()]
        out += [f"{b}        .output_mode({rust_str(m)})" for m in self.output_modes()]
        out.append(f"{b})")
        out.append(f"{b}.schema({rust_str(self.in_schema)}, schema_for::<{self.in_ty}>(SchemaOptions::DEFAULT))")
        if self.has_out_ty:
            out.append(f"{b}.schema({rust_str(self.out_schema)}, schema_for::<{self.out_ty}>(SchemaOptions::DEFAULT))")
        out[-1] += ";"
        return "\n".join(out)

    def hand_arm(self) -> str:
        b = "            "
        take = "text_or_data" if self.text_input else "data"
        args = "input" + (", call.context" if self.with_ctx else "")
        aw = ".await" if self.is_async else ""
        reply = {
            "data": f"data_reply({rust_str(self.out_schema)}, &out)",
            "text": "Ok(Reply::Text(out))",
            "result_data": f"match out {{ Ok(o) => data_reply({rust_str(self.out_schema)}, &o), Err(e) => Err(SkillError::Failed(e)) }}",
            "output": f"match out {{ Output::Text(t) => Ok(Reply::Text(t)), Output::Data(o) => data_reply({rust_str(self.out_schema)}, &o) }}",
            "result_text": "out.map(Reply::Text).map_err(SkillError::Failed)",
        }[self.out_form]
        return "\n".join([
            f"        {rust_str(self.id)} => {{",
            f"{b}let input: {self.arg_types[0]} = {take}(call.input, {rust_str(self.in_schema)})?;",
            f"{b}let out = self.{self.fn}({args}){aw};",
            f"{b}{reply}",
            "        }",
        ])

    # What #[skill] expands to (a2a-card-derive/src/skill.rs, method with `&self`) --------------

    def expanded_items(self) -> str:
        p = "::a2a_card::__private"
        inputs = ", ".join(f"<{t} as {p}::SkillArg>::INPUT" for t in self.arg_types)
        # More than one argument: a constant check that at most one takes input.
        check_inputs = "" if len(self.arg_types) < 2 else (
            f"{{ const _: () = {const_check(f'{p}::check_inputs(&[{inputs}], {rust_str(self.fn)})')} ")
        tags = ", ".join(rust_str(t) for t in self.tags)
        examples = ", ".join(raw_str(e) for e in self.examples)
        names = [f"__arg{i}" for i in range(len(self.arg_types))]
        extract = "\n".join(
            f"            let {n} = <{t} as {p}::SkillArg>::extract(&mut __call)?;"
            for n, t in zip(names, self.arg_types))
        aw = ".await" if self.is_async else ""
        return f"""    #[doc(hidden)]
    #[allow(non_upper_case_globals, dead_code)]
    const __A2A_SKILL_{self.fn}: {p}::SkillDecl = {check_inputs}{p}::SkillDecl {{
        id: {rust_str(self.id)},
        name: {rust_str(self.name)},
        description: {rust_str(self.description)},
        tags: &[{tags}],
        examples: &[{examples}],
        input: {p}::merge_inputs(&[{inputs}]),
        output: <{self.ret_type} as {p}::SkillReturn>::OUTPUT,
        extra_input_modes: &[],
        extra_output_modes: &[],
        security: &[],
        source: {rust_str(self.fn)},
        poisoned: false,
    }}{" }" if check_inputs else ""};
    #[doc(hidden)]
    #[allow(unused_mut, unused_variables, dead_code, clippy::all)]
    fn __a2a_call_{self.fn}<'__a>(&'__a self, mut __call: {p}::SkillCall) -> {p}::SkillFuture<'__a> {{
        {p}::Box::pin(async move {{
{extract}
            <{self.ret_type} as {p}::SkillReturn>::into_reply(self.{self.fn}({', '.join(names)}){aw})
        }})
    }}"""


def const_check(check: str) -> str:
    # A check of a2a-card-derive/src/checks.rs `ConstChecks::push`, as a constant item's value.
    return (f"if let ::core::option::Option::Some(__a2a_message) = {check}.message() "
            "{ ::a2a_card::__private::fail!(__a2a_message) };")


def named_schema_impl(ty: str, name: str) -> str:
    # What #[derive(Schema)] expands to (a2a-card-derive/src/schema.rs).
    return f"impl ::a2a_card::NamedSchema for {ty} {{\n    const SCHEMA_NAME: &'static str = {rust_str(name)};\n}}"


# Files -----------------------------------------------------------------------------------------

def types_rs(skills: list[Skill], variant: str) -> str:
    head = "//! The input and output types of the skills.\n\n"
    if variant == "macros":
        head += "use a2a_card::Schema;\n"
    head += "use schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n"
    return head + "\n" + "\n\n".join(s.types(variant) for s in skills) + "\n"


def agent_rs(skills: list[Skill], variant: str) -> str:
    if variant == "macros":
        body = [
            "//! The agent, declared with the macros.\n",
            "use a2a_card::{Input, Output, SkillContext, agent, skill};\n",
            "use crate::types::*;\n",
            "/// The agent: no state.",
            "pub struct BenchAgent;\n",
            f"/// {AGENT_DESCRIPTION}",
            f"#[agent(url = {rust_str(AGENT_URL)}, streaming = false, push_notifications = false)]",
            "impl BenchAgent {",
            "\n\n".join(s.handler("    ", [s.skill_attr()]) for s in skills),
            "}",
        ]
        return "\n".join(body) + "\n"
    if variant == "hand":
        return "\n".join([
            "//! The agent, written by hand: handlers, the card built with the builder, and the",
            "//! dispatch from skill id to handler.\n",
            "use a2a_card::schema::{IO_SCHEMAS_EXTENSION_DESCRIPTION, schema_for};",
            "use a2a_card::skill::{CallInput, SkillCall};",
            "use a2a_card::{",
            "    AgentCard, AgentExtension, AgentSkill, BuildError, IO_SCHEMAS_EXTENSION_URI, Input, Output, Reply,",
            "    SchemaOptions, SkillContext, SkillError,",
            "};",
            "use serde::Serialize;",
            "use serde::de::DeserializeOwned;\n",
            "use crate::types::*;\n",
            "/// The agent: no state.",
            "pub struct BenchAgent;\n",
            "impl BenchAgent {",
            "\n\n".join(s.handler("    ", []) for s in skills),
            "",
            "    /// Calls the skill `id` with the call's input.",
            "    pub async fn dispatch(&self, id: &str, call: SkillCall) -> Result<Reply, SkillError> {",
            "        match id {",
            "\n".join(s.hand_arm() for s in skills),
            "            _ => Err(SkillError::Input(format!(\"no skill has id `{id}`\"))),",
            "        }",
            "    }",
            "}",
            "",
            "fn data<T: DeserializeOwned>(input: CallInput, schema: &str) -> Result<T, SkillError> {",
            "    match input {",
            "        CallInput::Data(value) => serde_json::from_value(value)",
            "            .map_err(|e| SkillError::Input(format!(\"the data does not fit schema `{schema}`: {e}\"))),",
            "        _ => Err(SkillError::Input(format!(",
            "            \"this skill takes structured data (application/json;schema={schema}), not text\"",
            "        ))),",
            "    }",
            "}",
            "",
            "fn text_or_data<T: DeserializeOwned>(input: CallInput, schema: &str) -> Result<Input<T>, SkillError> {",
            "    match input {",
            "        CallInput::Text(text) => Ok(Input::Text(text)),",
            "        CallInput::Data(value) => serde_json::from_value(value)",
            "            .map(Input::Data)",
            "            .map_err(|e| SkillError::Input(format!(\"the data does not fit schema `{schema}`: {e}\"))),",
            "        _ => Err(SkillError::Input(\"the message has no input\".into())),",
            "    }",
            "}",
            "",
            "fn data_reply<T: Serialize>(schema: &'static str, value: &T) -> Result<Reply, SkillError> {",
            "    serde_json::to_value(value)",
            "        .map(|value| Reply::Data { schema, value })",
            "        .map_err(|e| SkillError::Output(e.to_string()))",
            "}",
            "",
            "/// The card.",
            "pub fn card() -> Result<AgentCard, BuildError> {",
            f"    let mut card = AgentCard::builder(\"Bench Agent\", {rust_str(AGENT_DESCRIPTION)}, env!(\"CARGO_PKG_VERSION\"))",
            f"        .jsonrpc({rust_str(AGENT_URL)})",
            "        .streaming(false)",
            "        .push_notifications(false);",
            "\n".join(s.hand_card() for s in skills),
            "    card.extension(AgentExtension::new(IO_SCHEMAS_EXTENSION_URI).with_description(IO_SCHEMAS_EXTENSION_DESCRIPTION))",
            "        .build()",
            "}",
        ]) + "\n"
    # expanded / expanded-nocheck: what #[agent] + #[skill] expand to (a2a-card-derive/src/agent.rs).
    p = "::a2a_card::__private"
    items = []
    for s in skills:
        items.append(s.handler("    ", []))
        items.append(s.expanded_items())
    decls = ", ".join(f"Self::__A2A_SKILL_{s.fn}" for s in skills)
    calls = "\n".join(f"            {i} => Self::__a2a_call_{s.fn}(self, call)," for i, s in enumerate(skills))
    checks = "" if variant == "expanded-nocheck" else "\n".join(
        f"const _: () = {const_check(f'{p}::check_skill(<BenchAgent as ::a2a_card::Agent>::SKILLS, {i})')}"
        for i in range(len(skills)))
    return f"""//! The agent as the macros expand it, written out.

use a2a_card::{{Input, Output, SkillContext}};

use crate::types::*;

/// The agent: no state.
pub struct BenchAgent;

/// {AGENT_DESCRIPTION}
impl BenchAgent {{
{chr(10).join(items)}
}}
const _: () = {{
impl ::a2a_card::Agent for BenchAgent {{
    const DECL: {p}::AgentDecl = {p}::AgentDecl {{
        name: "Bench Agent",
        description: {rust_str(AGENT_DESCRIPTION)},
        version: ::core::env!("CARGO_PKG_VERSION"),
        url_env: ::core::option::Option::None,
        url: {rust_str(AGENT_URL)},
        provider: ::core::option::Option::None,
        documentation_url: ::core::option::Option::None,
        icon_url: ::core::option::Option::None,
        streaming: ::core::option::Option::Some(false),
        push_notifications: ::core::option::Option::Some(false),
        state_transition_history: ::core::option::Option::None,
        extended_agent_card: ::core::option::Option::None,
        default_input_modes: &[],
        default_output_modes: &[],
        security_schemes: ::core::option::Option::None,
        security: &[],
        source: "BenchAgent",
    }};
    const SKILLS: &'static [{p}::SkillDecl] = &[{decls}];

    fn card() -> ::core::result::Result<&'static ::a2a_card::AgentCard, &'static ::a2a_card::BuildError> {{
        static CARD: {p}::OnceLock<::core::result::Result<::a2a_card::AgentCard, ::a2a_card::BuildError>> =
            {p}::OnceLock::new();
        CARD.get_or_init(|| {{
            {p}::build_card(&<Self as ::a2a_card::Agent>::DECL, <Self as ::a2a_card::Agent>::SKILLS)
        }})
        .as_ref()
    }}

    fn call_skill<'__a>(&'__a self, index: ::core::primitive::usize, call: {p}::SkillCall) -> {p}::SkillFuture<'__a> {{
        match index {{
{calls}
            _ => {p}::unknown_skill(index),
        }}
    }}
}}
{checks}
}};
"""


def main_rs(variant: str) -> str:
    if variant == "hand":
        card = "let card = agent::card().unwrap_or_else(|e| panic!(\"{e}\"));"
        call = "agent::BenchAgent.dispatch(id, call)"
    else:
        card = ("let card = <agent::BenchAgent as a2a_card::Agent>::card().unwrap_or_else(|e| panic!(\"{e}\"));")
        call = ("{\n                let index = card.skills.iter().position(|s| s.id == *id).expect(\"a skill id\");\n"
                "                a2a_card::Agent::call_skill(&agent::BenchAgent, index, call)\n            }")
    return f"""//! Prints the number of skills on the card; `--json` prints the card, `--call ID JSON` calls a
//! skill with structured data and prints the reply.

mod agent;
mod types;

use std::future::Future;
use std::task::{{Context, Poll, Waker}};

use a2a_card::SkillContext;
use a2a_card::skill::{{CallInput, SkillCall}};

/// Runs a future that never waits (the handlers do not).
fn block_on<F: Future>(future: F) -> F::Output {{
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {{
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {{
            return value;
        }}
    }}
}}

fn main() {{
    let args: Vec<String> = std::env::args().skip(1).collect();
    {card}
    match args.as_slice() {{
        [] => println!("{{}}", card.skills.len()),
        [flag] if flag == "--json" => println!(
            "{{}}",
            serde_json::to_string_pretty(&card.to_json(a2a_card::wire::Profile::V1)).expect("JSON")
        ),
        [flag, id, data] if flag == "--call" => {{
            let data: serde_json::Value = serde_json::from_str(data).expect("JSON data");
            let call = SkillCall::new(CallInput::Data(data), SkillContext::default());
            let reply = block_on({call});
            println!("{{reply:?}}");
        }}
        _ => {{
            eprintln!("usage: [--json | --call ID JSON]");
            std::process::exit(2);
        }}
    }}
}}
"""


def cargo_toml(crate: str, a2a_card: Path) -> str:
    # The same dependencies, with the same features, in every variant (the workspace's own).
    return f"""[package]
name = "{crate}"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
a2a-card = {{ path = {rust_str(str(a2a_card))} }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = {{ version = "1", features = ["preserve_order"] }}
schemars = {{ version = "1", default-features = false, features = ["std", "derive", "preserve_order"] }}

# Not part of any enclosing workspace.
[workspace]
"""


# Running ---------------------------------------------------------------------------------------

class BuildFailed(Exception):
    pass


def crate_name(variant: str) -> str:
    return "bench_" + variant.replace("-", "_")


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


LAST_CPU = [0.0]


def cargo(args: list[str], cwd: Path, env: dict, what: str) -> float:
    """Runs cargo; returns the wall time, and leaves the CPU time (user + system, cargo and
    rustc) in LAST_CPU[0]."""
    cpu = children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(["cargo", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    LAST_CPU[0] = children_cpu() - cpu
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise BuildFailed(f"{what} failed (cargo {' '.join(args)} in {cwd})")
    if args[0] == "check" and "warning" in proc.stderr:
        sys.stderr.write(f"note: {what} printed warnings:\n{proc.stderr}\n")
    return elapsed


def write_variant(root: Path, variant: str, skills: list[Skill], a2a_card: Path, lock: Path | None) -> Path:
    crate = root / crate_name(variant)
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text(cargo_toml(crate_name(variant), a2a_card))
    if lock is not None and lock.is_file():
        shutil.copyfile(lock, crate / "Cargo.lock")  # the versions the repository is tested with
    (crate / "src" / "main.rs").write_text(main_rs(variant))
    (crate / "src" / "types.rs").write_text(types_rs(skills, variant))
    (crate / "src" / "agent.rs").write_text(agent_rs(skills, variant))
    return crate


def edit_handler(crate: Path, skill: Skill, counter: int) -> None:
    """Changes the string literal of one handler's body (a real change to one function)."""
    path = crate / "src" / "agent.rs"
    text = path.read_text()
    pattern = re.compile(r'format!\("' + re.escape(skill.literal) + r'(?: edit \d+)?: ')
    found = pattern.findall(text)
    if len(found) != 1:
        raise SystemExit(f"internal error: the literal of `{skill.fn}` occurs {len(found)} times in {path}")
    path.write_text(pattern.sub(f'format!("{skill.literal} edit {counter}: ', text))


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def main() -> int:
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", required=True, type=Path, help="an empty directory to work in")
    ap.add_argument("--reps", type=int, default=int(os.environ.get("BENCH_REPS", "3")))
    ap.add_argument("--skills", type=int, default=int(os.environ.get("BENCH_SKILLS", "200")))
    ap.add_argument("--variants", default=os.environ.get("BENCH_VARIANTS", "macros,hand"),
                    help=f"comma-separated, from {', '.join(VARIANTS)}; ratios are against `hand`")
    ap.add_argument("--a2a-card", type=Path,
                    default=Path(os.environ.get("BENCH_A2A_CARD", here.parent / "a2a-card")),
                    help="the a2a-card crate to depend on (default: this checkout's)")
    ap.add_argument("--generate-only", action="store_true", help="write the crates and stop")
    opts = ap.parse_args()

    variants = [v.strip() for v in opts.variants.split(",") if v.strip()]
    for v in variants:
        if v not in VARIANTS:
            ap.error(f"unknown variant `{v}` (known: {', '.join(VARIANTS)})")
    if "hand" not in variants:
        variants.append("hand")
    if opts.reps < 1 or opts.skills < 2:
        ap.error("need --reps >= 1 and --skills >= 2")
    a2a_card = opts.a2a_card.resolve()
    if not (a2a_card / "Cargo.toml").is_file():
        ap.error(f"no crate at {a2a_card}")

    skills = [Skill(k) for k in range(opts.skills)]
    edited = skills[len(skills) // 2]
    lock = a2a_card.parent / "Cargo.lock"
    crates = {v: write_variant(opts.workdir, v, skills, a2a_card, lock) for v in variants}
    if opts.generate_only:
        print(f"crates written to {opts.workdir}")
        return 0

    env = dict(os.environ)
    env["CARGO_TARGET_DIR"] = str(opts.workdir / "target")
    env["CARGO_INCREMENTAL"] = "1"  # the dev-profile default, made explicit
    env["CARGO_TERM_COLOR"] = "never"
    for var in ("RUSTC_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER"):
        env.pop(var, None)  # no compiler cache between us and rustc

    loads = os.getloadavg()
    print(f"a2a-card: {a2a_card}")
    print(f"{opts.skills} skills, variants: {', '.join(variants)}, {opts.reps} repetition(s); "
          f"{os.cpu_count()} CPUs, load average {loads[0]:.2f} {loads[1]:.2f} {loads[2]:.2f}")
    print(subprocess.run(["rustc", "--version"], capture_output=True, text=True, env=env).stdout.strip())
    sys.stdout.flush()

    # Warm-up (untimed): check the dependencies, shared by every variant, and each crate once.
    for v in variants:
        t = cargo(["check", "--quiet"], crates[v], env, f"warm-up check of `{v}`")
        print(f"warm-up check of {v}: {t:.1f}s" + (" (includes the dependencies)" if v == variants[0] else ""))
        sys.stdout.flush()

    clean: dict[str, list[float]] = {v: [] for v in variants}
    incr: dict[str, list[float]] = {v: [] for v in variants}
    clean_cpu: dict[str, list[float]] = {v: [] for v in variants}
    incr_cpu: dict[str, list[float]] = {v: [] for v in variants}
    counter = 0
    for rep in range(opts.reps):
        order = variants if rep % 2 == 0 else variants[::-1]  # alternate, against drift
        for v in order:
            crate = crates[v]
            cargo(["clean", "--quiet", "-p", crate_name(v)], crate, env, f"cargo clean of `{v}`")
            clean[v].append(cargo(["check", "--quiet"], crate, env, f"clean check of `{v}`"))
            clean_cpu[v].append(LAST_CPU[0])
            counter += 1
            edit_handler(crate, edited, counter)
            incr[v].append(cargo(["check", "--quiet"], crate, env, f"incremental check of `{v}`"))
            incr_cpu[v].append(LAST_CPU[0])
            print(f"rep {rep + 1}/{opts.reps} {v:<17} clean {clean[v][-1]:6.2f}s (cpu {clean_cpu[v][-1]:6.2f}s)"
                  f"   incremental {incr[v][-1]:6.2f}s (cpu {incr_cpu[v][-1]:6.2f}s)")
            sys.stdout.flush()

    # Sanity: every variant builds and runs, prints the skill count, and gives the same card and
    # the same replies.
    outputs = {}
    for v in variants:
        cargo(["build", "--quiet"], crates[v], env, f"build of `{v}`")
        exe = opts.workdir / "target" / "debug" / crate_name(v)

        def run(*args: str) -> str:
            proc = subprocess.run([str(exe), *args], capture_output=True, text=True)
            if proc.returncode != 0:
                sys.stderr.write(proc.stdout + proc.stderr)
                raise BuildFailed(f"running `{v}` {' '.join(args)} failed")
            return proc.stdout.strip()

        count = run()
        card = run("--json")
        replies = [run("--call", s.id, s.sample) for s in skills[:5]]
        outputs[v] = (count, card, replies)
        print(f"sanity: {v} prints {count} skill(s)")
        if count != str(opts.skills):
            raise BuildFailed(f"`{v}` prints {count!r}, expected {opts.skills}")
    base = outputs["hand"]
    for v in variants:
        if outputs[v][1] != base[1]:
            raise BuildFailed(f"the card of `{v}` differs from the hand-written card")
        if outputs[v][2] != base[2]:
            raise BuildFailed(f"the replies of `{v}` differ from the hand-written dispatch: {outputs[v][2]} vs {base[2]}")
    print("sanity: every variant gives the same card JSON and the same replies for the first 5 skills")

    loads = os.getloadavg()
    print(f"load average at the end: {loads[0]:.2f} {loads[1]:.2f} {loads[2]:.2f}")
    print()
    print(f"cargo check of the user crate ({opts.skills} skills), median of {opts.reps}, wall time:")
    print(f"{'variant':<18} {'clean (s)':>10} {'incremental (s)':>16}")
    for v in variants:
        print(f"{v:<18} {median(clean[v]):>10.2f} {median(incr[v]):>16.2f}")
    print()

    def ratios(c: dict, i: dict, note: str) -> None:
        hand_c, hand_i = median(c["hand"]), median(i["hand"])
        for v in variants:
            if v == "hand":
                continue
            rc, ri = median(c[v]) / hand_c, median(i[v]) / hand_i
            verdict = lambda r: "PASS" if r <= TARGET_RATIO else "FAIL"
            label = f"{v}/hand"
            print(f"{label:<24} clean {rc:.2f}x {verdict(rc)}   incremental {ri:.2f}x {verdict(ri)}"
                  f"   (target <= {TARGET_RATIO}x{note})")

    ratios(clean, incr, "")
    print()
    print("the same in CPU time (user + system of cargo and rustc; less sensitive to other load):")
    print(f"{'variant':<18} {'clean (s)':>10} {'incremental (s)':>16}")
    for v in variants:
        print(f"{v:<18} {median(clean_cpu[v]):>10.2f} {median(incr_cpu[v]):>16.2f}")
    ratios(clean_cpu, incr_cpu, ", CPU time")
    print()
    print("samples, wall (s):")
    for v in variants:
        print(f"  {v:<17} clean {' '.join(f'{x:.2f}' for x in clean[v])}   "
              f"incremental {' '.join(f'{x:.2f}' for x in incr[v])}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BuildFailed as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
