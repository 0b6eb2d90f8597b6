// Forms from JSON Schemas, and the small Markdown the card's descriptions use: the part of the
// form page that knows schemas. Nothing here writes HTML: every text the card carries becomes
// text nodes (or the few elements Markdown names), so a description cannot inject markup.
"use strict";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("data-") || k.startsWith("aria-") || k === "for" || k === "role") node.setAttribute(k, v === true ? "true" : v);
    else node[k] = v;
  }
  for (const c of children) if (c !== undefined && c !== null) node.append(c);
  return node;
}

// --- Markdown: inline code, strong, emphasis and links, in paragraphs ------------------------

const INLINE = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([\s\S]*?\S)\*\*|(?<![A-Za-z0-9])__(?=\S)([\s\S]*?\S)__(?![A-Za-z0-9])|\*(?=[^\s*])([^*]*?[^\s*])?\*|(?<![A-Za-z0-9_])_(?=[^\s_])([^_]*?[^\s_])?_(?![A-Za-z0-9_])|\[([^\]]+)\]\(([^()\s]+)\)/g;

// A link's target, when it is one a description may point to: http(s), mail, or a path or
// fragment of this site. Anything else (`javascript:`, `data:`) stays text.
function safeHref(href) {
  if (/^(https?:\/\/|mailto:)/i.test(href)) return href;
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return null;
  return /^[#/.A-Za-z0-9_-]/.test(href) ? href : null;
}

function appendInline(parent, text) {
  let at = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > at) parent.append(text.slice(at, m.index));
    at = m.index + m[0].length;
    if (m[1] !== undefined) {
      parent.append(el("code", { text: m[2].trim() === "" ? m[2] : m[2].replace(/^ (.*) $/, "$1") }));
    } else if (m[3] !== undefined || m[4] !== undefined) {
      appendInline(parent.appendChild(el("strong")), m[3] !== undefined ? m[3] : m[4]);
    } else if (m[7] !== undefined) {
      const href = safeHref(m[8]);
      if (href) {
        const a = el("a", { href, rel: "noopener noreferrer" });
        if (/^https?:/i.test(href)) a.target = "_blank";
        appendInline(a, m[7]);
        parent.append(a);
      } else {
        parent.append(m[0]);
      }
    } else {
      const inner = m[5] !== undefined ? m[5] : m[6];
      if (inner === undefined) parent.append(m[0]);
      else appendInline(parent.appendChild(el("em")), m[0].slice(1, -1));
    }
  }
  if (at < text.length) parent.append(text.slice(at));
  return parent;
}

// Markdown as elements: paragraphs (blank lines between), each with its inline markup.
function markdown(text, tag) {
  const box = el(tag || "div", { class: "markdown" });
  for (const para of String(text || "").split(/\n\s*\n/)) {
    const line = para.trim().replace(/\s*\n\s*/g, " ");
    if (line) box.append(appendInline(el("p"), line));
  }
  return box;
}

// One line of Markdown, without paragraphs (for labels and short help).
function markdownInline(text, tag, attrs) {
  return appendInline(el(tag || "span", attrs || {}), String(text || "").trim().replace(/\s*\n\s*/g, " "));
}

// --- Schemas ---------------------------------------------------------------------------------

// Local `$ref`s (`#/$defs/X`, `#/definitions/X`) replaced by their targets.
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

const isNull = (s) => s && (s.type === "null" || (s.const === null && !s.type));

// A schema that also allows `null` (`Option<T>`: `type: [T, "null"]`, or `anyOf: [T, null]`)
// as the schema of T: a field left empty is simply not sent.
function nonNull(schema) {
  let s = Object.assign({}, schema || {});
  if (Array.isArray(s.type)) {
    const types = s.type.filter((t) => t !== "null");
    s.type = types.length === 1 ? types[0] : types;
  }
  for (const key of ["anyOf", "oneOf"]) {
    if (Array.isArray(s[key]) && s[key].some(isNull)) {
      const rest = s[key].filter((x) => !isNull(x));
      if (rest.length === 1) {
        const merged = Object.assign({}, s, nonNull(rest[0]));
        delete merged[key];
        for (const k of ["title", "description", "default"]) if (s[k] !== undefined) merged[k] = s[k];
        s = merged;
      } else {
        s[key] = rest;
      }
    }
  }
  if (Array.isArray(s.enum)) s.enum = s.enum.filter((v) => v !== null);
  return s;
}

// The choices of a schema that is a list of values: `enum`, or `oneOf`/`anyOf` of `const`s
// (what schemars makes of an enum whose variants have doc comments).
function choices(s) {
  if (Array.isArray(s.enum)) return s.enum.map((v) => ({ value: v, label: String(v) }));
  for (const key of ["oneOf", "anyOf"]) {
    const list = s[key];
    if (Array.isArray(list) && list.length && list.every((x) => x && (x.const !== undefined || (Array.isArray(x.enum) && x.enum.length === 1)))) {
      return list.map((x) => {
        const value = x.const !== undefined ? x.const : x.enum[0];
        return { value, label: x.title || String(value), help: x.description };
      });
    }
  }
  return null;
}

function kindOf(s) {
  if (choices(s)) return "choice";
  const type = Array.isArray(s.type) ? null : s.type;
  if (type === "object" || (!type && s.properties)) return "object";
  if (type === "array") return "array";
  if (type === "boolean" || type === "integer" || type === "number" || type === "string") return type;
  return "json";
}

// `start_date`, `startDate`, `start-date` -> `Start date`.
function words(name) {
  const spaced = String(name)
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .trim()
    .toLowerCase();
  return spaced ? spaced[0].toUpperCase() + spaced.slice(1) : String(name);
}

function titleOf(schema, name) {
  return (schema && schema.title) || words(name);
}

// `/a/0/b` and a property -> `/a/0/b/prop`.
function pointerPush(pointer, token) {
  return pointer + "/" + String(token).replace(/~/g, "~0").replace(/\//g, "~1");
}

// What a value breaks in its schema, as the page checks it while the user types (the agent
// checks again, against the same schema, and its answer has the last word).
function problems(s, value) {
  const found = [];
  if (typeof value === "number") {
    if (s.type === "integer" && !Number.isInteger(value)) found.push("Must be a whole number.");
    if (typeof s.minimum === "number" && value < s.minimum) found.push(`Must be at least ${s.minimum}.`);
    if (typeof s.maximum === "number" && value > s.maximum) found.push(`Must be at most ${s.maximum}.`);
    if (typeof s.exclusiveMinimum === "number" && value <= s.exclusiveMinimum) found.push(`Must be more than ${s.exclusiveMinimum}.`);
    if (typeof s.exclusiveMaximum === "number" && value >= s.exclusiveMaximum) found.push(`Must be less than ${s.exclusiveMaximum}.`);
  } else if (typeof value === "string") {
    const length = [...value].length;
    if (typeof s.minLength === "number" && length < s.minLength) found.push(s.minLength === 1 ? "Must not be empty." : `Must be at least ${s.minLength} characters.`);
    if (typeof s.maxLength === "number" && length > s.maxLength) found.push(`Must be at most ${s.maxLength} characters.`);
    if (typeof s.pattern === "string") {
      try {
        if (!new RegExp(s.pattern, "u").test(value)) found.push("Does not have the expected form.");
      } catch (_) {
        // A pattern this browser cannot read: the agent checks it.
      }
    }
    if (s.format === "date" && !/^\d{4}-\d{2}-\d{2}$/.test(value)) found.push("Must be a date, YYYY-MM-DD.");
  } else if (Array.isArray(value)) {
    if (typeof s.minItems === "number" && value.length < s.minItems) found.push(`Needs at least ${s.minItems} item${s.minItems === 1 ? "" : "s"}.`);
    if (typeof s.maxItems === "number" && value.length > s.maxItems) found.push(`Takes at most ${s.maxItems} items.`);
  }
  return found;
}

let uid = 0;

// One field of a form: its element, its value (`undefined` when empty), and its messages.
// `fields` collects every field by its JSON pointer, so that errors reach the field they name.
class Field {
  constructor(schema, opts) {
    this.schema = nonNull(schema);
    this.name = opts.name;
    this.pointer = opts.pointer;
    this.required = !!opts.required;
    // An array's item: always sent, so neither required nor optional is said.
    this.item = !!opts.item;
    this.fields = opts.fields;
    this.state = opts.state;
    this.kind = kindOf(this.schema);
    this.id = "f" + ++uid;
    this.touched = false;
    this.fields[this.pointer] = this;
    this.node = this.kind === "object" ? this.objectNode(opts.root) : this.kind === "array" ? this.arrayNode() : this.scalarNode();
  }

  label() {
    return titleOf(this.schema, this.name);
  }

  // The field's heading: its title, and whether it is required or optional.
  heading(tag, attrs) {
    const head = el(tag, attrs, markdownInline(this.label(), "span", { class: "field-title" }));
    if (!this.item) head.append(this.required ? el("span", { class: "required-mark", "aria-hidden": "true", title: "required", text: "*" }) : el("span", { class: "optional", text: "optional" }));
    return head;
  }

  helpNode() {
    if (!this.schema.description) return null;
    const help = markdown(this.schema.description, "div");
    help.classList.add("help");
    help.id = this.id + "-help";
    return help;
  }

  errorNode() {
    this.error = el("div", { class: "field-error", id: this.id + "-error", "data-path": this.pointer, role: "alert", hidden: true });
    return this.error;
  }

  objectNode(root) {
    this.children = [];
    const required = new Set(this.schema.required || []);
    const box = root ? el("div", { class: "fields" }) : el("fieldset", { class: "field group", "data-path": this.pointer });
    if (!root) {
      box.append(this.heading("legend"));
      const help = this.helpNode();
      if (help) box.append(help);
    }
    for (const [key, prop] of Object.entries(this.schema.properties || {})) {
      this.children.push(new Field(prop, { name: key, pointer: pointerPush(this.pointer, key), required: required.has(key), fields: this.fields, state: this.state }));
    }
    box.append(...this.children.map((c) => c.node));
    box.append(this.errorNode());
    return box;
  }

  arrayNode() {
    this.items = [];
    const box = el("fieldset", { class: "field group list", "data-path": this.pointer });
    box.append(this.heading("legend"));
    const help = this.helpNode();
    if (help) box.append(help);
    this.list = el("ol", { class: "items" });
    const add = el("button", { type: "button", class: "add-item secondary", text: "Add " + (titleOf(this.schema.items, "item").toLowerCase() === "item" ? "an item" : titleOf(this.schema.items, "item").toLowerCase()) });
    add.setAttribute("aria-label", "Add an item to " + this.label());
    add.addEventListener("click", () => {
      this.addItem(undefined).focus();
      this.touched = true;
      this.check();
    });
    box.append(this.list, add, this.errorNode());
    return box;
  }

  addItem(value) {
    const index = this.items.length;
    const item = new Field(this.schema.items || {}, { name: "item " + (index + 1), pointer: pointerPush(this.pointer, index), required: true, item: true, fields: this.fields, state: this.state });
    const li = el("li", { class: "item" }, item.node);
    const remove = el("button", { type: "button", class: "remove-item secondary", text: "Remove" });
    remove.setAttribute("aria-label", "Remove " + item.label().toLowerCase() + " of " + this.label());
    remove.addEventListener("click", () => {
      const at = this.items.indexOf(item);
      const values = this.items.map((i) => i.value());
      values.splice(at, 1);
      this.set(values);
      this.touched = true;
      this.check();
    });
    li.append(remove);
    this.list.append(li);
    this.items.push(item);
    if (value !== undefined) item.set(value);
    return item;
  }

  scalarNode() {
    const box = el("div", { class: "field", "data-path": this.pointer });
    const s = this.schema;
    const describedBy = [s.description ? this.id + "-help" : null, this.id + "-error"].filter(Boolean).join(" ");
    const common = { id: this.id, name: this.pointer.slice(1).split("/").join("."), "aria-describedby": describedBy, "aria-required": this.required ? "true" : null };
    let input;
    if (this.kind === "boolean" && this.required) {
      input = el("input", Object.assign({ type: "checkbox" }, common));
      box.classList.add("check");
      const label = this.heading("label", { for: this.id });
      box.append(input, label);
    } else {
      if (this.kind === "choice" || this.kind === "boolean") {
        input = el("select", common);
        const options = this.kind === "boolean" ? [{ value: true, label: "Yes" }, { value: false, label: "No" }] : choices(s);
        input.append(el("option", { value: "", text: this.required ? "Choose…" : "Not set" }));
        options.forEach((o, i) => input.append(el("option", { value: String(i), text: o.label })));
        this.options = options;
      } else if (this.kind === "integer" || this.kind === "number") {
        input = el("input", Object.assign({ type: "number", inputMode: this.kind === "integer" ? "numeric" : "decimal" }, common));
        if (typeof s.minimum === "number") input.min = s.minimum;
        if (typeof s.maximum === "number") input.max = s.maximum;
        input.step = this.kind === "integer" ? "1" : "any";
        const range = [s.minimum, s.maximum].every((n) => typeof n === "number") ? `${s.minimum} to ${s.maximum}` : "";
        if (range) input.placeholder = range;
      } else if (this.kind === "string" && (s.maxLength === undefined || s.maxLength > 200) && /\n/.test(s.default || "")) {
        input = el("textarea", common);
      } else if (this.kind === "string") {
        input = el("input", Object.assign({ type: s.format === "date" ? "date" : s.format === "email" ? "email" : s.format === "uri" ? "url" : "text" }, common));
        if (typeof s.maxLength === "number") input.maxLength = s.maxLength;
      } else {
        input = el("textarea", Object.assign({ class: "json", spellcheck: false, placeholder: "JSON" }, common));
      }
      box.append(this.heading("label", { for: this.id }));
      const help = this.helpNode();
      if (help) box.append(help);
      box.append(input);
    }
    this.input = input;
    // Checked once the user leaves the field (`change` and `blur`), then as they type.
    const leave = () => {
      this.touched = true;
      // Left by pressing a button of the form: checked once the button is released, so that a
      // message appearing here does not move the button from under the pointer before the
      // click lands.
      if (this.state.holding) this.state.pending.add(this);
      else this.check();
    };
    input.addEventListener("blur", leave);
    input.addEventListener("change", leave);
    input.addEventListener("input", () => {
      if (this.touched) this.check();
    });
    box.append(this.errorNode());
    if (s.default !== undefined) this.set(s.default);
    return box;
  }

  focus() {
    const target = this.input || this.node.querySelector("input, select, textarea, button");
    if (target) target.focus();
    return this;
  }

  // The field's value, `undefined` when nothing is filled in (an optional field is then left out
  // of the data; a required one is reported).
  value() {
    if (this.kind === "object") {
      const out = {};
      let any = false;
      for (const c of this.children) {
        const v = c.value();
        if (v !== undefined) {
          out[c.name] = v;
          any = true;
        }
      }
      return any || this.required ? out : undefined;
    }
    if (this.kind === "array") {
      const values = this.items.map((i) => i.value()).filter((v) => v !== undefined);
      return values.length || this.required ? values : undefined;
    }
    const raw = this.input.value;
    switch (this.kind) {
      case "boolean":
        if (this.input.type === "checkbox") return this.input.checked;
        return raw === "" ? undefined : this.options[Number(raw)].value;
      case "choice":
        return raw === "" ? undefined : this.options[Number(raw)].value;
      case "integer":
      case "number":
        return raw.trim() === "" || Number.isNaN(Number(raw)) ? undefined : Number(raw);
      case "string":
        return raw === "" && !this.required ? undefined : raw;
      default:
        if (raw.trim() === "") return undefined;
        try {
          return JSON.parse(raw);
        } catch (_) {
          return raw;
        }
    }
  }

  set(value) {
    if (this.kind === "object") {
      for (const c of this.children) c.set(value && typeof value === "object" ? value[c.name] : undefined);
    } else if (this.kind === "array") {
      for (const k of Object.keys(this.fields)) if (k.startsWith(this.pointer + "/")) delete this.fields[k];
      this.items = [];
      this.list.textContent = "";
      for (const v of Array.isArray(value) ? value : []) this.addItem(v);
    } else if (this.kind === "boolean" && this.input.type === "checkbox") {
      this.input.checked = value === true;
    } else if (this.kind === "choice" || this.kind === "boolean") {
      const at = this.options.findIndex((o) => JSON.stringify(o.value) === JSON.stringify(value));
      this.input.value = at >= 0 ? String(at) : "";
    } else if (this.kind === "json") {
      this.input.value = value === undefined ? "" : JSON.stringify(value, null, 2);
    } else {
      this.input.value = value === undefined || value === null ? "" : String(value);
    }
  }

  // Every field's own check, shown at the field once it was touched (or the form sent).
  check() {
    const messages = [];
    if (this.kind === "object" || this.kind === "array") {
      const v = this.value();
      if (this.kind === "array" && v !== undefined) messages.push(...problems(this.schema, v));
    } else {
      const raw = this.input.type === "checkbox" ? "x" : this.input.value;
      const v = this.value();
      if (this.input.validity && this.input.validity.badInput) messages.push("Must be a number.");
      else if (v === undefined && this.required && raw.trim() === "") messages.push("Required.");
      else if (v !== undefined) messages.push(...problems(this.schema, v));
      if (this.kind === "json" && typeof v === "string") messages.push("Must be JSON.");
    }
    this.show(messages);
    return messages.length === 0;
  }

  show(messages) {
    this.error.textContent = "";
    for (const m of messages) this.error.append(el("p", { text: m }));
    this.error.hidden = messages.length === 0;
    const invalid = messages.length ? "true" : null;
    if (this.input) {
      if (invalid) this.input.setAttribute("aria-invalid", "true");
      else this.input.removeAttribute("aria-invalid");
    }
    this.node.classList.toggle("invalid", !!invalid);
  }

  // Checks this field and those under it; true when all pass.
  checkAll() {
    let ok = this.check();
    for (const c of this.children || this.items || []) ok = c.checkAll() && ok;
    return ok;
  }
}

// The starting value of a form: what the schema says by default, nothing else. A field without
// a default starts empty (a number does not start at 0 below its minimum), and nothing is
// flagged until the user leaves a field or sends the form.
class SchemaForm {
  constructor(schema) {
    this.fields = {};
    this.state = { holding: false, pending: new Set() };
    this.root = new Field(inline(schema, schema, 0), { name: "input", pointer: "", required: true, fields: this.fields, state: this.state, root: true });
    this.node = this.root.node;
  }

  // A button of the form is pressed: hold the checks of fields left meanwhile until it is
  // released (`release`), or until the form is sent (`checkAll`, which drops them).
  hold() {
    this.state.holding = true;
  }

  release() {
    if (!this.state.holding) return;
    this.state.holding = false;
    for (const f of this.state.pending) f.check();
    this.state.pending.clear();
  }

  value() {
    return this.root.value();
  }

  set(value) {
    this.root.set(value);
    this.clear();
  }

  clear() {
    this.state.pending.clear();
    for (const f of Object.values(this.fields)) {
      f.touched = false;
      f.show([]);
    }
  }

  checkAll() {
    this.state.holding = false;
    this.state.pending.clear();
    return this.root.checkAll();
  }

  // The field a JSON pointer names, or the nearest one above it.
  fieldAt(pointer) {
    let p = pointer || "";
    for (;;) {
      if (this.fields[p]) return this.fields[p];
      if (!p) return this.root;
      p = p.slice(0, p.lastIndexOf("/"));
    }
  }
}
