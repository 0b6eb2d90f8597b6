// The form page of an a2a-card agent: one form per skill, generated from the skill's input
// schema (the card's `schemas`) by JSON Editor; submitted as a structured A2A message
// (`application/json;schema=NAME`), streamed when the agent streams; the typed output shown
// with the output schema's titles and descriptions; the agent's validation errors shown next
// to the fields at fault. Everything the card says is shown as text, never as HTML.
"use strict";

const SCHEMA_MODE = /^application\/json\s*;\s*schema\s*=\s*"?([^";\s]+)"?\s*$/i;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("data-")) node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children) node.append(c);
  return node;
}

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

// Local `$ref`s (`#/$defs/X`, `#/definitions/X`) replaced by their targets, so the form
// library needs no reference resolution.
function inline(schema, root, depth) {
  if (depth > 32 || schema === null || typeof schema !== "object") return schema;
  if (Array.isArray(schema)) return schema.map((s) => inline(s, root, depth + 1));
  if (typeof schema.$ref === "string" && schema.$ref.startsWith("#/")) {
    let target = root;
    for (const token of schema.$ref.slice(2).split("/")) {
      target = target && target[token.replace(/~1/g, "/").replace(/~0/g, "~")];
    }
    if (target) {
      const rest = Object.assign({}, schema);
      delete rest.$ref;
      return inline(Object.assign({}, target, rest), root, depth + 1);
    }
  }
  const out = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === "$defs" || k === "definitions" || k === "$schema") continue;
    out[k] = inline(v, root, depth + 1);
  }
  return out;
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

// `/a/0/b` (a JSON pointer into the data) -> `root.a.0.b` (a JSON Editor path).
function editorPath(pointer) {
  if (!pointer) return "root";
  return "root." + pointer.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~")).join(".");
}

function textOf(message) {
  return ((message && message.parts) || []).filter((p) => typeof p.text === "string").map((p) => p.text).join("\n");
}

class SkillForm {
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
    this.section = el("section", { class: "skill", "data-skill": s.id, id: "skill-" + s.id });
    this.section.append(el("h2", {}, s.name || s.id), el("p", { class: "description" }, s.description || ""));
    const schema = this.inputSchema && this.agent.schemas[this.inputSchema];
    if (schema) {
      const holder = el("div", { class: "form" });
      this.section.append(holder);
      this.editor = new JSONEditor(holder, {
        // The form's own heading would be the editor's key (`root`) without a title.
        schema: Object.assign({ title: "Input" }, inline(schema, schema, 0)),
        theme: "html",
        iconlib: null,
        disable_collapse: true,
        disable_edit_json: true,
        disable_properties: true,
        disable_array_reorder: true,
        // Errors follow the value (an example that fills the form clears what was wrong before).
        show_errors: "change",
        prompt_before_delete: false,
        use_default_values: true,
      });
      // The hidden labels screen readers get for some inputs name the editor's path
      // (`root[start_date]`, `root[start_date] switcher`): name the field instead.
      this.editor.on("ready", () => {
        for (const label of holder.querySelectorAll("label")) {
          const path = /^root((?:\[[^\]]*\])*)( switcher)?$/.exec(label.textContent);
          if (!path) continue;
          const name = path[1].slice(1, -1).split("][").join(" ") || "input";
          label.textContent = path[2] ? name + ": kind of value" : name;
        }
      });
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
    const usable = examples.filter((e) => (this.editor && e.data !== undefined && typeof e.data === "object") || (!this.editor && e.data === undefined));
    if (usable.length) {
      const box = el("div", { class: "examples" }, "Examples: ");
      usable.forEach((e) => {
        const b = el("button", { type: "button", class: "example", title: e.text }, exampleLabel(e));
        b.addEventListener("click", () => (this.editor ? this.editor.setValue(e.data) : (this.textBox.value = e.text)));
        box.append(b);
      });
      this.section.append(box);
    }
    if (takesText(this.inputModes)) {
      this.textBox = el("textarea", { class: "text-input", placeholder: "Or ask in words", "aria-label": "Ask in words" });
      this.section.append(this.textBox);
    }
    this.accepted = fileModes(this.inputModes);
    if (this.accepted.length) {
      this.fileInput = el("input", { type: "file", class: "file-input", multiple: true, accept: this.accepted.join(",") });
      const label = el("label", { class: "files" }, "Files (" + this.accepted.join(", ") + "): ");
      label.append(this.fileInput);
      this.section.append(label);
    }
    const actions = el("div", { class: "actions" });
    if (this.editor) {
      const send = el("button", { type: "button", class: "submit" }, "Send");
      send.addEventListener("click", () => this.submitData());
      actions.append(send);
    }
    if (this.textBox) {
      const sendText = el("button", { type: "button", class: "submit-text" }, "Send text");
      sendText.addEventListener("click", () => this.submitText(this.textBox.value));
      actions.append(sendText);
    }
    this.section.append(actions);
    this.status = el("p", { class: "progress", role: "status" });
    this.errorBox = el("p", { class: "error", role: "alert" });
    this.output = el("div", { class: "output", "aria-live": "polite" });
    // The task's timeline: each state it reports, with its message (progress, questions).
    this.timeline = el("ol", { class: "timeline", "aria-label": "Task timeline" });
    this.section.append(this.status, this.errorBox, this.timeline, this.output);
  }

  reset() {
    this.status.textContent = "";
    this.errorBox.textContent = "";
    this.output.textContent = "";
    this.timeline.textContent = "";
    this.section.querySelectorAll(".field-error, .question").forEach((n) => n.remove());
    this.taskId = null;
    this.contextId = null;
  }

  // The agent validates (against the same schema) and its errors are shown at the fields;
  // the form marks what it sees wrong as the user types.
  async submitData() {
    this.reset();
    const part = { data: this.editor.getValue(), mediaType: "application/json;schema=" + this.inputSchema };
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

  fieldError(path, message) {
    const sub = this.editor && (this.editor.getEditor(path) || this.editor.getEditor("root"));
    const at = sub && sub.container ? sub.container : this.section;
    at.append(el("p", { class: "field-error", "data-path": path }, message));
  }

  async send(parts) {
    const message = { messageId: crypto.randomUUID(), role: "ROLE_USER", parts };
    if (this.taskId) {
      message.taskId = this.taskId;
      message.contextId = this.contextId;
    }
    const streaming = !!(this.agent.card.capabilities && this.agent.card.capabilities.streaming);
    const request = {
      jsonrpc: "2.0",
      id: crypto.randomUUID(),
      method: streaming ? "SendStreamingMessage" : "SendMessage",
      params: { message },
    };
    this.status.textContent = "Sending…";
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
      const name = state.replace("TASK_STATE_", "").toLowerCase().replace("_", " ");
      this.timeline.append(el("li", { "data-state": name }, name + (text ? ": " + text : "")));
    }
    if (["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_CANCELED"].includes(state)) {
      showRecentTasks(this.agent.endpoint);
    }
    if (state === "TASK_STATE_COMPLETED") {
      this.status.textContent = "Done.";
    } else if (state === "TASK_STATE_FAILED" || state === "TASK_STATE_REJECTED" || state === "TASK_STATE_CANCELED") {
      this.status.textContent = "";
      this.errorBox.textContent = "The task " + state.replace("TASK_STATE_", "").toLowerCase() + (text ? ": " + text : ".");
    } else if (state === "TASK_STATE_INPUT_REQUIRED" || state === "TASK_STATE_AUTH_REQUIRED") {
      this.status.textContent = "";
      const box = el("div", { class: "question" }, el("p", {}, text || "The agent asks for more input."));
      const reply = el("input", { type: "text", class: "answer" });
      const send = el("button", { type: "button", class: "send-answer" }, "Answer");
      send.addEventListener("click", () => {
        box.remove();
        this.send([{ text: reply.value }]);
      });
      box.append(reply, send);
      this.output.before(box);
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

  showPart(part, name) {
    const box = el("div", { class: "chunk", "data-artifact": name || "" });
    if (typeof part.text === "string") {
      box.append(el("p", { class: "text-output" }, part.text));
    } else if (part.data !== undefined) {
      const mode = part.mediaType || (part.metadata && part.metadata.mimeType) || "";
      const schema = this.agent.schemas[schemaName([mode])] || {};
      box.append(this.describe(part.data, schema));
    } else {
      box.append(el("p", {}, "A file: " + (part.filename || part.mediaType || "unnamed")));
    }
    this.output.append(box);
  }

  describe(data, schema) {
    schema = inline(schema, schema, 0);
    if (data === null || typeof data !== "object") return el("span", { class: "value" }, String(data));
    const list = el("dl", {});
    for (const [key, value] of Object.entries(data)) {
      const prop = (schema.properties && schema.properties[key]) || {};
      const dt = el("dt", {}, prop.title || key);
      if (prop.description) dt.append(el("span", { class: "help" }, prop.description));
      const dd = el("dd", { "data-field": key });
      dd.append(value !== null && typeof value === "object" ? this.describe(value, prop.items || prop) : String(value));
      list.append(dt, dd);
    }
    return list;
  }

  showError(error) {
    this.status.textContent = "";
    this.errorBox.textContent = error.message || "The agent refused the message.";
    for (const detail of Array.isArray(error.data) ? error.data : []) {
      for (const v of detail.violations || []) {
        const pointer = v.instancePath || "";
        // A missing required property is reported at its parent: name the property itself.
        const missing = /"([^"]+)" is a required property/.exec(v.message || "");
        const path = missing ? editorPath(pointer + "/" + missing[1]) : editorPath(pointer);
        this.fieldError(path, v.message);
      }
    }
  }
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
    list.replaceChildren(el("li", { class: "error" }, "The tasks cannot be listed: " + e));
    return;
  }
  if (body.error) {
    list.replaceChildren(el("li", { class: "error" }, "The tasks cannot be listed: " + (body.error.message || "refused")));
    return;
  }
  const when = (t) => (t.status && t.status.timestamp) || "";
  const tasks = ((body.result && body.result.tasks) || []).sort((a, b) => (Date.parse(when(b)) || 0) - (Date.parse(when(a)) || 0)).slice(0, 10);
  if (!tasks.length) {
    list.replaceChildren(el("li", {}, "No tasks yet."));
    return;
  }
  list.replaceChildren(
    ...tasks.map((t) => {
      const state = ((t.status && t.status.state) || "TASK_STATE_UNSPECIFIED").replace("TASK_STATE_", "").toLowerCase().replace("_", " ");
      const at = when(t);
      return el("li", { "data-task": t.id, "data-state": state }, el("code", {}, t.id.slice(0, 8)), " " + state + (at ? " · " + at : ""));
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
    document.getElementById("agent-description").textContent = card.description || "";
    const agent = { card, schemas, endpoint };
    const main = document.getElementById("skills");
    for (const skill of card.skills || []) main.append(new SkillForm(agent, skill).section);
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
