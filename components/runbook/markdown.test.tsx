import { readFileSync } from "node:fs";
import { join } from "node:path";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { parseMarkdown } from "@/lib/markdown";
import { ALERT_LIST } from "@/lib/thresholds";
import { Markdown } from "./markdown";

const html = (md: string) => renderToStaticMarkup(<Markdown blocks={parseMarkdown(md)} />);
const runbook = readFileSync(join(__dirname, "..", "..", "RUNBOOK.md"), "utf8");

describe("the runbook page's Markdown", () => {
  it("gives every alert's section the id its runbook link names, and every in-page link a target", () => {
    const page = html(runbook);
    const ids = new Set([...page.matchAll(/<h[1-6] id="([^"]+)"/g)].map((m) => m[1]));
    for (const a of ALERT_LIST) expect(ids, a.name).toContain(a.runbookUrl.split("#")[1]);
    const targets = [...page.matchAll(/href="#([^"]+)"/g)].map((m) => m[1]);
    expect(targets.length).toBeGreaterThan(ALERT_LIST.length);
    for (const t of targets) expect(ids, `#${t}`).toContain(t);
  });

  it("renders the runbook's tables, nested lists and inline markup, not their source", () => {
    const page = html(runbook);
    expect(page).toContain("<strong>What it means.</strong>");
    expect(page).toContain('<ol start="0"');
    expect((page.match(/<table/g) ?? []).length).toBeGreaterThanOrEqual(3);
    // The table inside item 3 of "Look first" of DedupDuplicateRateHigh stays inside that item.
    expect(page).toMatch(/<li[^>]*>.*Find which of the four sources.*<table.*forwarder re-publish.*<\/table>.*<\/li>/s);
    // The sub-list of a numbered step is nested in the step.
    expect(page).toMatch(/<li[^>]*><p>Redis itself, from a host near the consumers:<\/p><ul/);
    const text = page.replace(/<[^>]+>/g, "");
    for (const raw of ["**", "](#", "| ---", "\n## "]) expect(text).not.toContain(raw);
  });

  it("escapes everything: markup in the file is text, and only in-page and http(s) links are followed", () => {
    const page = html(
      [
        "# A <script>alert(1)</script> heading",
        "",
        'Text <img src=x onerror="alert(1)"> and `<b>code</b>` and [x](javascript:alert(1)) and [doc](docs/LIBRARY.md) and [ok](https://example.com/a).',
      ].join("\n"),
    );
    expect(page).not.toMatch(/<script|<img|<b>|href="javascript/);
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page).toContain('<h1 id="a-scriptalert1script-heading"');
    expect(page).toContain('href="https://example.com/a"');
    expect(page).toContain('title="docs/LIBRARY.md in the repository"');
  });
});
