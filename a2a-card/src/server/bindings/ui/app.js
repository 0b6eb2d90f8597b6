// The form page of an a2a-card agent: one card per skill, its form generated from the skill's
// input schema (the card's `schemas`, by form.js); submitted as a structured A2A message
// (`application/json;schema=NAME`), streamed when the agent streams; the typed output and each
// streamed item shown as a card with the output schema's titles and descriptions; the task's
// timeline; the agent's validation errors next to the fields they name. Everything the card
// says is shown as text or as the few elements its Markdown names, never as HTML.
"use strict";

const SCHEMA_MODE = /^application\/json\s*;\s*schema\s*=\s*"?([^";\s]+)"?\s*$/i;
const ENDED = ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_CANCELED"];

function schemaName(modes) {
  for (const m of modes || []) {
    const found = SCHEMA_MODE.exec(m);
    if (found) return found[1];
  }
  return null;
}

function takesText(modes) {
  return (modes || []).some((m) => m.split(";")[0].trim().toLowerCase() === "text/plain");
}

// What an example says, as its button's label: its text, or its data's values
// (`Lisbon, 3, 2026-12-01`), cut to a few words.
function exampleLabel(example) {
  const values = [];
  const walk = (v) => {
    if (values.length >= 4) return;
    if (v !== null && typeof v === "object") Object.values(v).forEach(walk);
    else if (v !== null && v !== undefined && v !== "") values.push(String(v));
  };
  if (example.data !== undefined && typeof example.data === "object") walk(example.data);
  const label = values.length ? values.join(", ") : example.text.trim();
  return label.length > 40 ? label.slice(0, 39) + "…" : label;
}

// The extension by which a caller names the skill a new task runs (a2a_card::dispatch::SKILL_EXTENSION_URI).
const SKILL_EXTENSION = "https://github.com/a2a-card/a2a-card/extensions/skill/v1";

// Whether the card lets its caller name the skill a new task runs.
function namesSkills(card) {
  const extensions = (card.capabilities && card.capabilities.extensions) || [];
  return extensions.some((e) => e.uri === SKILL_EXTENSION);
}

// The file media types among a skill's input modes: those that are neither text nor JSON.
function fileModes(modes) {
  return (modes || []).filter((m) => {
    const essence = m.split(";")[0].trim().toLowerCase();
    return essence.includes("/") && essence !== "text/plain" && essence !== "application/json";
  });
}

// A chosen file as an A2A 1.0 file part: its bytes in base64 (`raw`), media type and name.
async function filePart(file, accepted) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  // A browser may not know the type (`.ics` on some systems): then the skill's own.
  const mediaType = file.type || (accepted.length === 1 ? accepted[0] : "application/octet-stream");
  return { raw: btoa(binary), mediaType, filename: file.name };
}

function textOf(message) {
  return ((message && message.parts) || []).filter((p) => typeof p.text === "string").map((p) => p.text).join("\n");
}

// `TASK_STATE_INPUT_REQUIRED` -> `input required`.
function stateName(state) {
  return String(state || "TASK_STATE_UNSPECIFIED").replace("TASK_STATE_", "").toLowerCase().replace(/_/g, " ");
}

function timeOf(timestamp) {
  const at = Date.parse(timestamp || "");
  return Number.isNaN(at) ? "" : new Date(at).toLocaleTimeString();
}

class SkillCard {
  constructor(agent, skill) {
    this.agent = agent;
    this.skill = skill;
    this.inputModes = skill.inputModes && skill.inputModes.length ? skill.inputModes : agent.card.defaultInputModes || [];
    this.outputModes = skill.outputModes && skill.outputModes.length ? skill.outputModes : agent.card.defaultOutputModes || [];
    this.inputSchema = schemaName(this.inputModes);
    this.outputSchema = schemaName(this.outputModes);
    this.taskId = null;
    this.contextId = null;
    this.render();
  }

  render() {
    const s = this.skill;
    const headingId = "skill-" + s.id + "-name";
    this.section = el("section", { class: "skill card", "data-skill": s.id, id: "skill-" + s.id, "aria-labelledby": headingId });
    const head = el("header", { class: "skill-head" }, el("h2", { id: headingId, text: s.name || s.id }));
    if ((s.tags || []).length) head.append(el("ul", { class: "tags", "aria-label": "Tags" }, ...s.tags.map((t) => el("li", { text: t }))));
    this.section.append(head, markdown(s.description || "", "div"));
    this.section.lastChild.classList.add("description");

    this.formNode = el("form", { class: "skill-form", noValidate: true });
    this.formNode.addEventListener("submit", (e) => {
      e.preventDefault();
      if (this.form) this.submitData();
      else if (this.textBox) this.submitText(this.textBox.value);
    });
    const schema = this.inputSchema && this.agent.schemas[this.inputSchema];
    if (schema) {
      this.form = new SchemaForm(schema);
      this.formNode.append(this.form.node);
      this.formNode.addEventListener("pointerdown", (e) => {
        if (e.target.closest("button")) this.form.hold();
      });
      // After the click the press leads to (or without one, when the pointer left the button).
      document.addEventListener("pointerup", () => setTimeout(() => this.form.release(), 0));
      document.addEventListener("pointercancel", () => this.form.release());
    }
    const examples = (s.examples || []).map((text) => {
      let data;
      try {
        data = JSON.parse(text);
      } catch (_) {
        data = undefined;
      }
      return { text, data };
    });
    const usable = examples.filter((e) => (this.form && e.data !== undefined && typeof e.data === "object") || (!this.form && e.data === undefined));
    if (usable.length) {
      const box = el("div", { class: "examples" }, el("span", { class: "examples-label", text: "Try" }));
      usable.forEach((e) => {
        const b = el("button", { type: "button", class: "example secondary", title: e.text, text: exampleLabel(e) });
        b.addEventListener("click", () => (this.form ? this.form.set(e.data) : (this.textBox.value = e.text)));
        box.append(b);
      });
      this.formNode.prepend(box);
    }
    if (takesText(this.inputModes)) {
      const id = "text-" + s.id;
      const label = el("label", { for: id, class: "field-title", text: this.form ? "Or ask in words" : "Ask in words" });
      this.textBox = el("textarea", { id, class: "text-input", rows: 2 });
      this.formNode.append(el("div", { class: "field text" }, label, this.textBox));
    }
    this.accepted = fileModes(this.inputModes);
    if (this.accepted.length) {
      const id = "files-" + s.id;
      this.fileInput = el("input", { id, type: "file", class: "file-input", multiple: true, accept: this.accepted.join(",") });
      const label = el("label", { for: id }, el("span", { class: "field-title", text: "Files" }), el("span", { class: "optional", text: this.accepted.join(", ") }));
      this.formNode.append(el("div", { class: "field files" }, label, this.fileInput));
    }
    const actions = el("div", { class: "actions" });
    if (this.form) actions.append(el("button", { type: "submit", class: "submit primary", text: "Send" }));
    if (this.textBox) {
      const sendText = el("button", { type: this.form ? "button" : "submit", class: "submit-text " + (this.form ? "secondary" : "primary"), text: "Send text" });
      if (this.form) sendText.addEventListener("click", () => this.submitText(this.textBox.value));
      actions.append(sendText);
    }
    this.formNode.append(actions);
    this.section.append(this.formNode);

    this.status = el("p", { class: "progress", role: "status" });
    this.errorBox = el("div", { class: "error", role: "alert" });
    // The task's timeline: each state it reports, with its message (progress, questions).
    this.timeline = el("ol", { class: "timeline", "aria-label": "Task timeline" });
    this.output = el("div", { class: "output", "aria-live": "polite" });
    this.section.append(el("div", { class: "answer-area" }, this.status, this.errorBox, this.timeline, this.output));
  }

  reset() {
    this.status.textContent = "";
    this.errorBox.textContent = "";
    this.output.textContent = "";
    this.timeline.textContent = "";
    this.section.querySelectorAll(".question").forEach((n) => n.remove());
    this.seen = {};
    this.items = 0;
    this.taskId = null;
    this.contextId = null;
  }

  // The page checks the fields as the user types; the agent validates again (against the same
  // schema) and its errors are shown at the fields they name.
  async submitData() {
    this.reset();
    this.form.checkAll();
    const part = { data: this.form.value(), mediaType: "application/json;schema=" + this.inputSchema };
    this.send([part, ...(await this.files())]);
  }

  async submitText(text) {
    this.reset();
    this.send([{ text }, ...(await this.files())]);
  }

  // The chosen files, as file parts.
  async files() {
    const chosen = this.fileInput ? [...this.fileInput.files] : [];
    return Promise.all(chosen.map((f) => filePart(f, this.accepted)));
  }

  async send(parts) {
    const message = { messageId: crypto.randomUUID(), role: "ROLE_USER", parts };
    if (this.taskId) {
      message.taskId = this.taskId;
      message.contextId = this.contextId;
    } else if (namesSkills(this.agent.card)) {
      // A new task runs this card's skill, whichever skill the agent would route the input to.
      message.metadata = { [SKILL_EXTENSION]: { skill: this.skill.id } };
    }
    const streaming = !!(this.agent.card.capabilities && this.agent.card.capabilities.streaming);
    const request = {
      jsonrpc: "2.0",
      id: crypto.randomUUID(),
      method: streaming ? "SendStreamingMessage" : "SendMessage",
      params: { message },
    };
    this.status.textContent = "Sending…";
    this.section.classList.add("busy");
    let response;
    try {
      response = await fetch(this.agent.endpoint, {
        method: "POST",
        headers: { "Content-Type": "application/json", "A2A-Version": "1.0", Accept: streaming ? "text/event-stream" : "application/json" },
        body: JSON.stringify(request),
      });
    } catch (e) {
      this.status.textContent = "";
      this.errorBox.textContent = "The agent cannot be reached: " + e;
      this.section.classList.remove("busy");
      return;
    }
    const type = response.headers.get("Content-Type") || "";
    if (type.startsWith("text/event-stream")) {
      await this.readStream(response.body.getReader());
    } else {
      let body;
      try {
        body = await response.json();
      } catch (_) {
        body = { error: { message: "HTTP " + response.status } };
      }
      this.answer(body);
    }
    this.section.classList.remove("busy");
  }

  async readStream(reader) {
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
        const data = frame.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");
        if (data) {
          try {
            this.answer(JSON.parse(data));
          } catch (e) {
            this.errorBox.textContent = "An event could not be read: " + e;
          }
        }
      }
    }
  }

  answer(body) {
    if (body.error) return this.showError(body.error);
    const r = body.result || {};
    if (r.task) {
      this.taskId = r.task.id;
      this.contextId = r.task.contextId;
      for (const a of r.task.artifacts || []) this.showArtifact(a, false);
      this.showStatus(r.task.status);
    } else if (r.message) {
      for (const p of r.message.parts || []) this.showPart(p, null);
      this.status.textContent = "";
    } else if (r.statusUpdate) {
      this.taskId = r.statusUpdate.taskId;
      this.contextId = r.statusUpdate.contextId;
      this.showStatus(r.statusUpdate.status);
    } else if (r.artifactUpdate) {
      this.showArtifact(r.artifactUpdate.artifact, !!r.artifactUpdate.append);
    }
  }

  showStatus(status) {
    const state = (status && status.state) || "";
    const text = textOf(status && status.message);
    if (state) {
      const name = stateName(state);
      const item = el("li", { "data-state": name }, el("span", { class: "state state-" + name.replace(/ /g, "-"), text: name }));
      if (text) item.append(" ", el("span", { class: "state-message", text }));
      const at = timeOf(status.timestamp);
      if (at) item.append(el("time", { dateTime: status.timestamp, text: at }));
      this.timeline.append(item);
    }
    if (ENDED.includes(state)) showRecentTasks(this.agent.endpoint);
    if (state === "TASK_STATE_COMPLETED") {
      this.status.textContent = "Done.";
    } else if (ENDED.includes(state)) {
      this.status.textContent = "";
      this.errorBox.textContent = "The task " + stateName(state) + (text ? ": " + text : ".");
    } else if (state === "TASK_STATE_INPUT_REQUIRED" || state === "TASK_STATE_AUTH_REQUIRED") {
      this.status.textContent = "";
      const id = "answer-" + this.skill.id;
      const reply = el("input", { id, type: "text", class: "answer" });
      const send = el("button", { type: "submit", class: "send-answer primary", text: "Answer" });
      const box = el("form", { class: "question" }, el("label", { for: id, class: "field-title", text: text || "The agent asks for more input." }), el("div", { class: "row" }, reply, send));
      box.addEventListener("submit", (e) => {
        e.preventDefault();
        box.remove();
        this.send([{ text: reply.value }]);
      });
      this.output.before(box);
      reply.focus();
    } else if (text) {
      this.status.textContent = text;
    }
  }

  showArtifact(artifact, append) {
    const id = artifact.artifactId;
    this.seen = this.seen || {};
    const seen = this.seen[id] || 0;
    const parts = artifact.parts || [];
    // A replacement repeats the chunks already shown: show only the new ones.
    const fresh = append ? parts : parts.length < seen ? parts : parts.slice(seen);
    this.seen[id] = append ? seen + parts.length : parts.length;
    for (const p of fresh) this.showPart(p, artifact.name);
  }

  // One part of the answer as a card: a typed value with its schema's titles, text, or a file.
  showPart(part, name) {
    this.items = (this.items || 0) + 1;
    const card = el("article", { class: "chunk result", "data-artifact": name || "" });
    const mode = part.mediaType || (part.metadata && part.metadata.mimeType) || "";
    const schemaNamed = schemaName([mode]);
    const head = el("header", {}, el("h3", { text: this.items === 1 ? "Result" : "Result " + this.items }));
    if (schemaNamed) head.append(el("span", { class: "schema", text: schemaNamed }));
    card.append(head);
    if (typeof part.text === "string") {
      card.append(el("p", { class: "text-output", text: part.text }));
    } else if (part.data !== undefined) {
      const schema = this.agent.schemas[schemaNamed] || {};
      card.append(describe(part.data, inline(schema, schema, 0)));
    } else {
      const what = part.filename || part.mediaType || "unnamed";
      const file = el("p", { class: "file-output" }, "A file: ", el("strong", { text: what }));
      if (part.raw && part.mediaType) {
        const a = el("a", { href: "data:" + part.mediaType + ";base64," + part.raw, download: part.filename || "file", text: "Download" });
        file.append(" ", a);
      } else if (part.url && safeHref(part.url)) {
        file.append(" ", el("a", { href: part.url, rel: "noopener noreferrer", text: "Open" }));
      }
      card.append(file);
    }
    this.output.append(card);
  }

  showError(error) {
    this.status.textContent = "";
    this.errorBox.textContent = error.message || "The agent refused the message.";
    if (!this.form) return;
    const at = {};
    for (const detail of Array.isArray(error.data) ? error.data : []) {
      for (const v of detail.violations || []) {
        let pointer = v.instancePath || "";
        // A missing required property is reported at its parent: name the property itself.
        const missing = /"([^"]+)" is a required property/.exec(v.message || "");
        if (missing) pointer = pointerPush(pointer, missing[1]);
        const field = this.form.fieldAt(pointer);
        (at[field.pointer] = at[field.pointer] || { field, messages: [] }).messages.push(v.message);
      }
    }
    const named = Object.values(at);
    for (const { field, messages } of named) field.show(messages);
    if (named.length) {
      this.errorBox.textContent = "The agent found " + (named.length === 1 ? "a problem" : named.length + " problems") + " in the form, shown at the fields.";
      named[0].field.focus();
    }
  }
}

// A typed value as a list of its fields, each under its schema's title with its description.
function describe(data, schema) {
  schema = nonNull(schema || {});
  if (Array.isArray(data)) {
    const list = el("ol", { class: "values" });
    for (const item of data) list.append(el("li", {}, describe(item, schema.items || {})));
    return list;
  }
  if (data === null || typeof data !== "object") return el("span", { class: "value", text: data === null ? "none" : String(data) });
  const list = el("dl", {});
  for (const [key, value] of Object.entries(data)) {
    const prop = nonNull((schema.properties && schema.properties[key]) || {});
    const dt = el("dt", {}, markdownInline(titleOf(prop, key), "span", { class: "name" }));
    if (prop.description) dt.append(markdownInline(prop.description, "span", { class: "help" }));
    const dd = el("dd", { "data-field": key });
    dd.append(value !== null && typeof value === "object" ? describe(value, prop) : String(value === null ? "none" : value));
    list.append(dt, dd);
  }
  return list;
}

// The agent's recent tasks (`ListTasks`, whose order is the store's: the page asks for 100 and
// shows the 10 whose status changed last), with their states: shown at load and whenever a
// task of this page ends.
async function showRecentTasks(endpoint) {
  const list = document.getElementById("recent-tasks");
  let body;
  try {
    const response = await fetch(endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: crypto.randomUUID(), method: "ListTasks", params: { pageSize: 100, historyLength: 0 } }),
    });
    body = await response.json();
  } catch (e) {
    list.replaceChildren(el("li", { class: "error", text: "The tasks cannot be listed: " + e }));
    return;
  }
  if (body.error) {
    list.replaceChildren(el("li", { class: "error", text: "The tasks cannot be listed: " + (body.error.message || "refused") }));
    return;
  }
  const when = (t) => (t.status && t.status.timestamp) || "";
  const tasks = ((body.result && body.result.tasks) || []).sort((a, b) => (Date.parse(when(b)) || 0) - (Date.parse(when(a)) || 0)).slice(0, 10);
  if (!tasks.length) {
    list.replaceChildren(el("li", { class: "empty", text: "No tasks yet." }));
    return;
  }
  list.replaceChildren(
    ...tasks.map((t) => {
      const state = stateName(t.status && t.status.state);
      const item = el("li", { "data-task": t.id, "data-state": state }, el("code", { text: t.id.slice(0, 8) }), " ", el("span", { class: "state state-" + state.replace(/ /g, "-"), text: state }));
      const at = timeOf(when(t));
      if (at) item.append(" ", el("time", { dateTime: when(t), text: at }));
      return item;
    }),
  );
}

async function main() {
  const name = document.getElementById("agent-name");
  try {
    const response = await fetch(".well-known/agent-card.json", { headers: { "A2A-Version": "1.0" } });
    if (!response.ok) throw new Error("HTTP " + response.status);
    const card = await response.json();
    const ext = ((card.capabilities && card.capabilities.extensions) || []).find((e) => e.params && e.params.schemas);
    const schemas = card.schemas || (ext && ext.params.schemas) || {};
    const iface = (card.supportedInterfaces || []).find((i) => i.protocolBinding === "JSONRPC" && String(i.protocolVersion).startsWith("1"));
    // The endpoint's path, on this page's origin (the card may name a public URL).
    const endpoint = iface ? new URL(iface.url).pathname : "/";
    document.title = card.name;
    name.textContent = card.name;
    document.getElementById("agent-description").replaceChildren(markdown(card.description || "", "div"));
    const facts = document.getElementById("agent-facts");
    const fact = (label, value) => facts.append(el("dt", { text: label }), el("dd", {}, value));
    if (card.version) fact("Version", card.version);
    if (card.provider && card.provider.organization) fact("Provider", card.provider.organization);
    fact("Skills", String((card.skills || []).length));
    fact("Card", el("a", { href: ".well-known/agent-card.json", text: "agent-card.json" }));
    const agent = { card, schemas, endpoint };
    const main = document.getElementById("skills");
    for (const skill of card.skills || []) main.append(new SkillCard(agent, skill).section);
    document.getElementById("recent").hidden = false;
    document.getElementById("refresh-tasks").addEventListener("click", () => showRecentTasks(endpoint));
    showRecentTasks(endpoint);
  } catch (e) {
    name.textContent = "No agent card";
    const err = document.getElementById("load-error");
    err.hidden = false;
    err.textContent = "The agent's card could not be read: " + e;
  }
}

main();
