import type { ReactNode } from "react";

/** One column head: its label, right-aligned for figures, a tooltip, extra classes. */
export interface Column {
  label: ReactNode;
  align?: "right";
  title?: string;
  className?: string;
}

/**
 * A table of rows under one header row: the shell the pages' tables share (audit trail, DLQ,
 * hot UUIDs, replicas). The rows are the caller's `<tr>`s; `size` is the text size of the body.
 */
export function DataTable({
  columns,
  children,
  label,
  size = "sm",
}: {
  columns: readonly Column[];
  children: ReactNode;
  label?: string;
  size?: "sm" | "xs";
}) {
  return (
    <table className={`w-full text-left ${size === "sm" ? "text-sm" : "text-xs"}`} aria-label={label}>
      <thead className="text-xs text-slate-500 dark:text-slate-400">
        <tr>
          {columns.map((c, i) => (
            <th
              key={i}
              title={c.title}
              className={["font-medium", c.align === "right" ? "text-right" : "", c.className ?? ""]
                .filter(Boolean)
                .join(" ")}
            >
              {c.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
