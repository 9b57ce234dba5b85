import { describe, expect, it } from "vitest";
import { renderMarkdown } from "../webview/markdown";

describe("markdown rendering", () => {
  it("renders GFM", () => {
    const html = renderMarkdown("# Title\n\n**bold** and `code`\n\n```py\nprint(1)\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |");
    expect(html).toContain("<h1>Title</h1>");
    expect(html).toContain("<strong>bold</strong>");
    expect(html).toMatch(/<pre><code class="language-py">print\(1\)\n<\/code><\/pre>/);
    expect(html).toContain("<table>");
  });

  it("strips scripts, event handlers and javascript: URLs", () => {
    const html = renderMarkdown(
      'hi <script>alert(1)</script> <img src=x onerror="alert(2)"> [x](javascript:alert(3)) <iframe src="https://e.invalid"></iframe> <a href="#" onclick="alert(4)">y</a>',
    );
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/onerror/i);
    expect(html).not.toMatch(/onclick/i);
    expect(html).not.toMatch(/javascript:/i);
    expect(html).not.toMatch(/<iframe/i);
    expect(html).toContain("hi");
  });

  it("drops forms, styles and forged test hooks", () => {
    const html = renderMarkdown('<form><button data-testid="send">x</button></form><p style="color:red" data-testid="approval">p</p><style>body{}</style>');
    expect(html).not.toMatch(/<form|<button|<style|style=|data-testid/i);
  });
});
