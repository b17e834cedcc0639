import type { Encoded, RecordView } from "@/lib/api/records";
import { formatBytes } from "@/lib/format";
import { maskedNoteText } from "@/lib/api/masking";
import { MaskedBadge } from "./masked-badge";

/** JSON pretty-printed when the text parses as JSON, else the text as is. */
export function prettyText(e: Encoded): { text: string; json: boolean } {
  if (e.encoding !== "utf-8") return { text: e.text, json: false };
  try {
    return { text: JSON.stringify(JSON.parse(e.text), null, 2), json: true };
  } catch {
    return { text: e.text, json: false };
  }
}

function EncodedText({ value, testId }: { value: Encoded | null; testId?: string }) {
  if (value === null) return <span className="text-slate-500">null</span>;
  return (
    <span className="font-mono text-xs" data-testid={testId} data-encoding={value.encoding}>
      {value.text}
      {value.encoding === "base64" ? (
        <span className="ml-1 rounded bg-slate-100 px-1 text-[10px] text-slate-600 dark:bg-slate-800 dark:text-slate-300">
          base64
        </span>
      ) : null}
    </span>
  );
}

/** The record's headers, each decoded (a number header as its number), with what was masked in it. */
function RecordHeaders({ record }: { record: RecordView }) {
  const headerMasked = (key: string) => record.masked?.filter((n) => n.in === "header" && n.field === key);
  return (
    <section>
      <h3 className="text-xs font-semibold text-slate-500">Headers</h3>
      {record.headers.length === 0 ? (
        <p className="text-slate-500">none</p>
      ) : (
        <table className="w-full">
          <tbody>
            {record.headers.map((h, i) => (
              <tr key={`${h.key}-${i}`} className="border-t border-slate-100 dark:border-slate-800">
                <th scope="row" className="py-0.5 pr-3 text-left font-mono text-xs font-normal">
                  {h.key}
                </th>
                <td>
                  {h.number ? (
                    <span
                      className="font-mono text-xs"
                      data-testid="header-number"
                      title={`raw bytes (${h.value.encoding}): ${h.value.text}`}
                    >
                      {h.number.text} <span className="text-slate-500">({h.number.as})</span>
                    </span>
                  ) : (
                    <EncodedText value={h.value} />
                  )}
                  <MaskedBadge notes={headerMasked(h.key)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** One Kafka record: position, time, key, headers, payload (JSON pretty-printed; raw text kept in `data-raw`), size; what the caller's role sees masked, said. */
export function RecordCard({ record }: { record: RecordView }) {
  const pretty = record.payload ? prettyText(record.payload) : null;
  const payloadMasked = record.masked?.filter((n) => n.in === "payload");
  return (
    <article
      data-testid="record"
      className="space-y-3 rounded-lg border border-slate-200 bg-white p-4 text-sm shadow-sm dark:border-slate-800 dark:bg-slate-900"
    >
      <dl className="grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1">
        <dt className="text-slate-500">Topic / partition / offset</dt>
        <dd className="font-mono" data-testid="record-position">
          {record.topic} / {record.partition} / {record.offset}
        </dd>
        <dt className="text-slate-500">Timestamp</dt>
        <dd className="font-mono">{record.timestamp}</dd>
        <dt className="text-slate-500">Message UUID</dt>
        <dd className="font-mono" data-testid="record-uuid">
          {record.uuid ?? "— (no _watermill_message_uuid header)"}
        </dd>
        <dt className="text-slate-500">Key</dt>
        <dd>
          <EncodedText value={record.key} />
        </dd>
        <dt className="text-slate-500">Size</dt>
        <dd title="bytes of key, value and headers">{formatBytes(record.size)}</dd>
        {record.masked?.length ? (
          <>
            <dt className="text-slate-500">Masked for your role</dt>
            <dd data-testid="record-masked">{record.masked.map(maskedNoteText).join("; ")}</dd>
          </>
        ) : null}
      </dl>
      <RecordHeaders record={record} />
      <section>
        <h3 className="text-xs font-semibold text-slate-500">
          Payload {record.payload ? `(${record.payload.encoding}${pretty?.json ? ", JSON pretty-printed" : ""})` : ""}
          <MaskedBadge notes={payloadMasked} />
        </h3>
        {record.payload && pretty ? (
          <pre
            data-testid="record-payload"
            data-encoding={record.payload.encoding}
            data-raw={record.payload.text}
            className="max-h-96 overflow-auto rounded bg-slate-50 p-2 font-mono text-xs dark:bg-slate-950"
          >
            {pretty.text}
          </pre>
        ) : (
          <p className="text-slate-500">{payloadMasked?.length ? "removed for your role" : "null (a tombstone)"}</p>
        )}
      </section>
    </article>
  );
}
