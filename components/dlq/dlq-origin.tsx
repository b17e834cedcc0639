import type { DlqEntry } from "@/lib/api/dlq";

/** What a record's `handler` names, in words. */
const HANDLER_IS: Record<DlqEntry["handlerIs"], string> = {
  handler: "handler",
  "consumer-group": "consumer group (Spring Kafka)",
  connector: "connector (Kafka Connect)",
};

/** The simple name of a Java class (`org.x.FooException` → `FooException`). */
function simpleName(fqcn: string): string {
  return fqcn.slice(fqcn.lastIndexOf(".") + 1);
}

/**
 * The DLQ browser's "Stack" cell: which DLQ header convention the record was read by (Watermill's
 * poison metadata, Spring Kafka's `kafka_dlt-*`, Kafka Connect's `__connect.errors.*`), the original
 * partition and offset when the convention records them, and the exception class.
 */
export function DlqOriginCell({ e }: { e: DlqEntry }) {
  const at =
    e.original.partition !== null || e.original.offset !== null
      ? `${e.topicPoisoned || "?"}/${e.original.partition ?? "?"}/${e.original.offset ?? "?"}`
      : null;
  return (
    <td
      className="text-xs"
      data-testid="dlq-convention"
      data-convention={e.convention}
      title={`handler column: the ${HANDLER_IS[e.handlerIs]}${e.exceptionClass ? `; exception ${e.exceptionClass}` : ""}${e.original.timestamp ? `; original record at ${e.original.timestamp}` : ""}`}
    >
      <span className="rounded bg-slate-100 px-1 font-mono text-[10px] text-slate-700 dark:bg-slate-800 dark:text-slate-300">
        {e.convention}
      </span>
      {at ? <div className="font-mono text-slate-500">from {at}</div> : null}
      {e.exceptionClass ? (
        <div className="max-w-[12rem] truncate font-mono text-slate-500">{simpleName(e.exceptionClass)}</div>
      ) : null}
    </td>
  );
}
