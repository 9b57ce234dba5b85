import { describe, expect, it } from "vitest";
import { buildFields, collectValues, readFields, schemaFields } from "../webview/schemaForm";

const schema = {
  type: "object",
  properties: {
    name: { type: "string", title: "Your name", default: "Ada", minLength: 2 },
    age: { type: "integer", minimum: 0, maximum: 150, default: 36 },
    ratio: { type: "number" },
    subscribe: { type: "boolean", default: true },
    color: { type: "string", enum: ["red", "green"], enumNames: ["Red", "Green"], default: "green" },
    size: { type: "string", oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }] },
    tags: { type: "array", items: { type: "string", enum: ["a", "b", "c"] }, default: ["b"] },
    email: { type: "string", format: "email" },
  },
  required: ["name", "age", "email"],
};

describe("schema -> form", () => {
  it("derives fields with kinds, defaults and options", () => {
    const f = schemaFields(schema);
    expect(f.map((x) => [x.name, x.kind, x.required])).toEqual([
      ["name", "string", true],
      ["age", "integer", true],
      ["ratio", "number", false],
      ["subscribe", "boolean", false],
      ["color", "enum", false],
      ["size", "enum", false],
      ["tags", "multi", false],
      ["email", "string", true],
    ]);
    expect(f[0]).toMatchObject({ title: "Your name", default: "Ada", minLength: 2 });
    expect(f[1].default).toBe(36);
    expect(f[4].options).toEqual([{ value: "red", label: "Red" }, { value: "green", label: "Green" }]);
    expect(f[5].options).toEqual([{ value: "s", label: "Small" }, { value: "l", label: "Large" }]);
    expect(f[6].default).toEqual(["b"]);
  });

  it("builds inputs named after the properties, filled with the defaults", () => {
    const fields = schemaFields(schema);
    const form = document.createElement("form");
    buildFields(document, form, fields);
    const byName = (n: string) => form.querySelector(`[name="${n}"]`) as HTMLInputElement;
    expect(byName("name").value).toBe("Ada");
    expect(byName("age").value).toBe("36");
    expect(byName("age").type).toBe("number");
    expect(byName("subscribe").checked).toBe(true);
    expect((form.querySelector('select[name="color"]') as HTMLSelectElement).value).toBe("green");
    expect(byName("email").type).toBe("email");
    const raw = readFields(form, fields);
    expect(raw).toMatchObject({ name: "Ada", age: "36", subscribe: true, color: "green", tags: ["b"], email: "" });
  });

  it("collects typed values and reports errors per field", () => {
    const fields = schemaFields(schema);
    const bad = collectValues(fields, { name: "A", age: "1.5", ratio: "x", email: "nope" });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(Object.keys(bad.errors).sort()).toEqual(["age", "email", "name", "ratio"]);
    const good = collectValues(fields, { name: "Ada", age: "36", ratio: "0.5", subscribe: false, color: "red", size: "", tags: ["a", "c"], email: "a@b.c" });
    expect(good).toEqual({ ok: true, content: { name: "Ada", age: 36, ratio: 0.5, subscribe: false, color: "red", tags: ["a", "c"], email: "a@b.c" } });
  });

  it("handles an empty or odd schema", () => {
    expect(schemaFields({})).toEqual([]);
    expect(schemaFields(null)).toEqual([]);
    expect(collectValues([], {})).toEqual({ ok: true, content: {} });
  });
});
