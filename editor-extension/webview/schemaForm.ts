/**
 * Elicitation forms from the requested JSON schema (MCP elicitation: a flat object of
 * primitive properties): fields with their defaults, and the answer collected and validated.
 */

export type FieldKind = "string" | "number" | "integer" | "boolean" | "enum" | "multi";

export interface EnumOption {
  value: string;
  label: string;
}

export interface FormField {
  name: string;
  title: string;
  description: string | null;
  kind: FieldKind;
  required: boolean;
  default: string | number | boolean | string[] | null;
  options: EnumOption[];
  format: string | null;
  minimum: number | null;
  maximum: number | null;
  minLength: number | null;
  maxLength: number | null;
}

type Json = Record<string, unknown>;

function obj(v: unknown): Json {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {};
}

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

function options(schema: Json): EnumOption[] {
  if (Array.isArray(schema.enum)) {
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
    return schema.enum.map((v, i) => ({ value: String(v), label: typeof names[i] === "string" ? names[i] : String(v) }));
  }
  const alts = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : null;
  if (alts && alts.every((a) => "const" in obj(a))) {
    return alts.map((a) => {
      const o = obj(a);
      return { value: String(o.const), label: typeof o.title === "string" ? o.title : String(o.const) };
    });
  }
  return [];
}

export function schemaFields(schema: unknown): FormField[] {
  const s = obj(schema);
  const props = obj(s.properties);
  const required = new Set(Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === "string") : []);
  const fields: FormField[] = [];
  for (const [name, raw] of Object.entries(props)) {
    const p = obj(raw);
    const type = typeof p.type === "string" ? p.type : "string";
    let kind: FieldKind;
    let opts: EnumOption[];
    if (type === "array") {
      opts = options(obj(p.items));
      kind = "multi";
    } else {
      opts = options(p);
      kind = opts.length ? "enum" : type === "boolean" ? "boolean" : type === "integer" ? "integer" : type === "number" ? "number" : "string";
    }
    let def: FormField["default"] = null;
    const d = p.default;
    if (kind === "boolean" && typeof d === "boolean") def = d;
    else if ((kind === "number" || kind === "integer") && typeof d === "number") def = d;
    else if (kind === "multi" && Array.isArray(d)) def = d.map(String);
    else if ((kind === "string" || kind === "enum") && (typeof d === "string" || typeof d === "number")) def = String(d);
    fields.push({
      name,
      title: typeof p.title === "string" ? p.title : name,
      description: typeof p.description === "string" ? p.description : null,
      kind,
      required: required.has(name),
      default: def,
      options: opts,
      format: typeof p.format === "string" ? p.format : null,
      minimum: num(p.minimum),
      maximum: num(p.maximum),
      minLength: num(p.minLength),
      maxLength: num(p.maxLength),
    });
  }
  return fields;
}

export type RawValue = string | boolean | string[] | undefined;

export type Collected = { ok: true; content: Record<string, unknown> } | { ok: false; errors: Record<string, string> };

/** Validates raw form values against the fields; the content has the schema's types. */
export function collectValues(fields: FormField[], raw: Record<string, RawValue>): Collected {
  const content: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const v = raw[f.name];
    if (f.kind === "boolean") {
      content[f.name] = v === true || v === "true" || v === "on";
      continue;
    }
    if (f.kind === "multi") {
      const list = Array.isArray(v) ? v : typeof v === "string" && v ? [v] : [];
      if (f.required && list.length === 0) errors[f.name] = "choose at least one";
      else if (list.length) content[f.name] = list;
      continue;
    }
    const text = typeof v === "string" ? v.trim() : "";
    if (!text) {
      if (f.required) errors[f.name] = "required";
      continue;
    }
    if (f.kind === "number" || f.kind === "integer") {
      const n = Number(text);
      if (!Number.isFinite(n)) errors[f.name] = "not a number";
      else if (f.kind === "integer" && !Number.isInteger(n)) errors[f.name] = "not a whole number";
      else if (f.minimum !== null && n < f.minimum) errors[f.name] = `at least ${f.minimum}`;
      else if (f.maximum !== null && n > f.maximum) errors[f.name] = `at most ${f.maximum}`;
      else content[f.name] = n;
      continue;
    }
    if (f.kind === "enum") {
      if (!f.options.some((o) => o.value === text)) errors[f.name] = "not one of the choices";
      else content[f.name] = text;
      continue;
    }
    if (f.minLength !== null && text.length < f.minLength) errors[f.name] = `at least ${f.minLength} characters`;
    else if (f.maxLength !== null && text.length > f.maxLength) errors[f.name] = `at most ${f.maxLength} characters`;
    else if (f.format === "email" && !/^[^@\s]+@[^@\s]+$/.test(text)) errors[f.name] = "not an email address";
    else content[f.name] = text;
  }
  return Object.keys(errors).length ? { ok: false, errors } : { ok: true, content };
}

/** Builds the form's controls (inputs named after the schema's properties, with defaults). */
export function buildFields(doc: Document, container: HTMLElement, fields: FormField[]): void {
  for (const f of fields) {
    const row = doc.createElement("div");
    row.className = "field";
    row.dataset.field = f.name;
    const label = doc.createElement("label");
    const id = `f-${Math.random().toString(36).slice(2)}-${f.name}`;
    label.htmlFor = id;
    label.textContent = f.title + (f.required ? " *" : "");
    let control: HTMLElement;
    if (f.kind === "boolean") {
      const input = doc.createElement("input");
      input.type = "checkbox";
      input.name = f.name;
      input.checked = f.default === true;
      control = input;
    } else if (f.kind === "enum") {
      const select = doc.createElement("select");
      select.name = f.name;
      if (!f.required || f.default === null) {
        const empty = doc.createElement("option");
        empty.value = "";
        empty.textContent = "";
        select.appendChild(empty);
      }
      for (const o of f.options) {
        const opt = doc.createElement("option");
        opt.value = o.value;
        opt.textContent = o.label;
        if (f.default === o.value) opt.selected = true;
        select.appendChild(opt);
      }
      control = select;
    } else if (f.kind === "multi") {
      const box = doc.createElement("div");
      box.className = "multi";
      const defaults = Array.isArray(f.default) ? f.default : [];
      for (const o of f.options) {
        const l = doc.createElement("label");
        const cb = doc.createElement("input");
        cb.type = "checkbox";
        cb.name = f.name;
        cb.value = o.value;
        cb.checked = defaults.includes(o.value);
        l.append(cb, doc.createTextNode(" " + o.label));
        box.appendChild(l);
      }
      control = box;
    } else {
      const input = doc.createElement("input");
      input.name = f.name;
      input.type = f.kind === "string" ? (f.format === "email" ? "email" : f.format === "uri" ? "url" : f.format === "date" ? "date" : "text") : "number";
      if (f.kind === "integer") input.step = "1";
      if (f.kind !== "string") input.step = f.kind === "integer" ? "1" : "any";
      if (f.minimum !== null) input.min = String(f.minimum);
      if (f.maximum !== null) input.max = String(f.maximum);
      if (f.default !== null && !Array.isArray(f.default)) input.value = String(f.default);
      control = input;
    }
    control.id = id;
    row.append(label, control);
    if (f.description) {
      const d = doc.createElement("div");
      d.className = "hint";
      d.textContent = f.description;
      row.appendChild(d);
    }
    const err = doc.createElement("div");
    err.className = "field-error";
    row.appendChild(err);
    container.appendChild(row);
  }
}

/** Reads the controls built by buildFields. */
export function readFields(form: HTMLElement, fields: FormField[]): Record<string, RawValue> {
  const out: Record<string, RawValue> = {};
  for (const f of fields) {
    const controls = Array.from(form.querySelectorAll<HTMLInputElement | HTMLSelectElement>(`[name="${cssEscape(f.name)}"]`));
    if (f.kind === "boolean") out[f.name] = (controls[0] as HTMLInputElement | undefined)?.checked ?? false;
    else if (f.kind === "multi") out[f.name] = controls.filter((c) => (c as HTMLInputElement).checked).map((c) => c.value);
    else out[f.name] = controls[0]?.value ?? "";
  }
  return out;
}

function cssEscape(s: string): string {
  return s.replace(/["\\]/g, "\\$&");
}
