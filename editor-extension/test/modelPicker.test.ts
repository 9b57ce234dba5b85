/** The model picker in the chat's header (issue 27, item 3): the current model, a keyboard
 * operable select over the choices, the name only with one model. */
import { beforeEach, describe, expect, it } from "vitest";
import { parseFromWebview } from "../shared/messages";
import { initialState, reduce } from "../shared/state";
import type { ModelsResult } from "../src/protocol";
import { act, host, mount, q, root } from "./webviewHarness";

const TWO: ModelsResult = {
  models: ["anthropic/claude-sonnet-4-5", "openai/gpt-4.1"],
  current: "openai/gpt-4.1",
  default: "anthropic/claude-sonnet-4-5",
  sessionId: "s1",
};

const select = () => q("model-select") as HTMLSelectElement;

describe("the model picker", () => {
  beforeEach(() => mount({ sessionId: "s1" }));

  it("shows nothing before the server said which models there are", () => {
    expect(q("model")!.hidden).toBe(true);
  });

  it("a labelled select over the choices, the session's model chosen, the default marked", () => {
    act({ type: "models", models: TWO });
    expect(q("model")!.hidden).toBe(false);
    expect(select().hidden).toBe(false);
    expect(q("model-name")!.hidden).toBe(true);
    const label = root.querySelector<HTMLLabelElement>(`label[for="${select().id}"]`);
    expect(label?.textContent).toBe("Model");
    expect(Array.from(select().options).map((o) => [o.value, o.textContent])).toEqual([
      ["anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5 (default)"],
      ["openai/gpt-4.1", "openai/gpt-4.1"],
    ]);
    expect(select().value).toBe("openai/gpt-4.1");
  });

  it("picking one posts setModel; the select keeps the focus while the chat redraws", () => {
    act({ type: "models", models: TWO });
    select().focus();
    select().value = "anthropic/claude-sonnet-4-5";
    select().dispatchEvent(new Event("change", { bubbles: true }));
    expect(host.sent).toContainEqual({ type: "setModel", model: "anthropic/claude-sonnet-4-5" });
    act({ type: "models", models: { ...TWO, current: "anthropic/claude-sonnet-4-5" } });
    act({ type: "notice", text: "something else happened" });
    expect(root.ownerDocument.activeElement).toBe(select());
    expect(select().value).toBe("anthropic/claude-sonnet-4-5");
    expect(select().tabIndex).toBe(0); // reached with Tab
  });

  it("with one model (or none) it shows the name only", () => {
    act({ type: "models", models: { models: ["openai/gpt-4.1"], current: "openai/gpt-4.1", default: "openai/gpt-4.1" } });
    expect(select().hidden).toBe(true);
    expect(q("model-name")!.hidden).toBe(false);
    expect(q("model-name")!.textContent).toBe("openai/gpt-4.1");
    act({ type: "models", models: { models: [], current: null, default: null } });
    expect(q("model-name")!.textContent).toBe("not configured");
  });
});

describe("the models action and the setModel message", () => {
  it("a session the picker created becomes the chat's; an existing one stays", () => {
    const fresh = reduce(initialState(), { type: "models", models: TWO });
    expect(fresh.sessionId).toBe("s1");
    expect(fresh.models?.current).toBe("openai/gpt-4.1");
    const other = reduce({ ...initialState(), sessionId: "s0" }, { type: "models", models: TWO });
    expect(other.sessionId).toBe("s0");
  });

  it("setModel from the webview needs a model name", () => {
    expect(parseFromWebview({ type: "setModel", model: "openai/gpt-4.1" })).toEqual({ type: "setModel", model: "openai/gpt-4.1" });
    expect(parseFromWebview({ type: "setModel", model: 3 })).toBeNull();
    expect(parseFromWebview({ type: "setModel" })).toBeNull();
  });
});
