import type { ReactNode } from "react";
import type { Block, Inline } from "@/lib/markdown";

/** Inline content as React elements: every character is text, links only where `lib/markdown` allowed a target. */
function Inlines({ c }: { c: readonly Inline[] }): ReactNode {
  return c.map((x, i) => {
    switch (x.t) {
      case "text":
        return x.v;
      case "code":
        return (
          <code key={i} className="rounded bg-slate-100 px-1 text-[0.85em] dark:bg-slate-800">
            {x.v}
          </code>
        );
      case "strong":
        return (
          <strong key={i}>
            <Inlines c={x.c} />
          </strong>
        );
      case "em":
        return (
          <em key={i}>
            <Inlines c={x.c} />
          </em>
        );
      case "link":
        return x.href ? (
          <a key={i} href={x.href} className="text-blue-700 underline hover:no-underline dark:text-blue-300">
            <Inlines c={x.c} />
          </a>
        ) : (
          // A path inside the repository: this app does not serve it, so it is named, not linked.
          <span key={i} title={/^[\w./-]+$/.test(x.target) ? `${x.target} in the repository` : undefined}>
            <Inlines c={x.c} />
          </span>
        );
    }
  });
}

const HEADING_CLASS = [
  "text-2xl font-semibold",
  "mt-8 border-b border-slate-200 pb-1 text-xl font-semibold dark:border-slate-700",
  "mt-6 text-lg font-semibold",
];

function BlockView({ b }: { b: Block }): ReactNode {
  switch (b.t) {
    case "heading": {
      const H = `h${Math.min(6, b.level)}` as "h1";
      return (
        <H id={b.id} className={`scroll-mt-4 ${HEADING_CLASS[b.level - 1] ?? "mt-4 font-semibold"}`}>
          <Inlines c={b.c} />
        </H>
      );
    }
    case "p":
      return (
        <p>
          <Inlines c={b.c} />
        </p>
      );
    case "table":
      return (
        <div className="overflow-x-auto">
          <table className="w-full border-collapse text-sm">
            <thead className="text-left">
              <tr>
                {b.head.map((c, i) => (
                  <th
                    key={i}
                    scope="col"
                    className="border-b border-slate-300 px-2 py-1 font-semibold dark:border-slate-600"
                  >
                    <Inlines c={c} />
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {b.rows.map((r, i) => (
                <tr key={i} className="align-top">
                  {r.map((c, j) => (
                    <td key={j} className="border-b border-slate-100 px-2 py-1 dark:border-slate-800">
                      <Inlines c={c} />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      );
    case "list": {
      const items = b.items.map((item, i) => (
        <li key={i} className="space-y-2">
          <Blocks blocks={item} />
        </li>
      ));
      return b.ordered ? (
        <ol start={b.start} className="list-decimal space-y-1 pl-6">
          {items}
        </ol>
      ) : (
        <ul className="list-disc space-y-1 pl-6">{items}</ul>
      );
    }
  }
}

function Blocks({ blocks }: { blocks: readonly Block[] }): ReactNode {
  return blocks.map((b, i) => <BlockView key={i} b={b} />);
}

/** A Markdown document read by `lib/markdown` (the runbook), as React elements: no HTML string is ever inserted. */
export function Markdown({ blocks }: { blocks: readonly Block[] }) {
  return (
    <article data-testid="markdown" className="max-w-4xl space-y-3 leading-relaxed">
      <Blocks blocks={blocks} />
    </article>
  );
}
