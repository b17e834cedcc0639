/**
 * Reading a DLQ record whatever stack dead-lettered it: Watermill's poison metadata (PoisonQueue,
 * ours and Go's), Spring Kafka's `kafka_dlt-*` headers and Kafka Connect's `__connect.errors.*`
 * (names/dlq-conventions.ts). Pure: it takes the raw headers (Buffer or string values, as kafkajs
 * gives them) or the text metadata a decoded message keeps, and says which convention it read, the
 * original topic / partition / offset, the handler, the exception and the bounded reason class.
 *
 * The handler of a Spring record is its original consumer group; of a Connect record, its
 * connector (`handlerIs` says which). A repeated header is read at its last value, as Spring's
 * `lastHeader` does (a record dead-lettered twice keeps both).
 */
import {
  POISON_REASON_CLASS,
  REASON_CLASS_POISONED_KEY,
  POISON_REASON_CLASSES,
  HANDLER_POISONED_KEY,
  REASON_POISONED_KEY,
  SUBSCRIBER_POISONED_KEY,
  TOPIC_POISONED_KEY,
  type PoisonReasonClass,
} from "@/names/dedup";
import {
  CONNECT_ERRORS,
  CONNECT_ERRORS_PREFIX,
  DLQ_CONVENTION,
  SPRING_DLT,
  SPRING_DLT_BINARY,
  SPRING_DLT_PREFIX,
  type DlqConvention,
} from "@/names/dlq-conventions";

/** Raw record headers: kafkajs' `IHeaders` (a repeated header is an array), or a message's text metadata. */
export type RawHeaders = Readonly<Record<string, Buffer | string | ReadonlyArray<Buffer | string> | undefined>>;

/** What names the handler of a DLQ record: PoisonQueue's `handler_poisoned`, Spring's original consumer group, Connect's connector. */
export type HandlerSource = "handler" | "consumer-group" | "connector";

/** A DLQ record as its convention describes it; `null` where the convention did not record a field. */
export interface DlqOrigin {
  convention: DlqConvention;
  /** The topic the record was consumed from: where a re-drive publishes it. */
  topic: string | null;
  partition: number | null;
  offset: string | null;
  /** The original record's timestamp (Spring), ISO-8601. */
  timestamp: string | null;
  handler: string;
  handlerIs: HandlerSource;
  subscriber: string;
  /** The exception's class (Spring's `exception-fqcn`, Connect's `exception.class.name`); `null` for Watermill (it writes only the text). */
  exceptionClass: string | null;
  /** The root cause's class (Spring's `exception-cause-fqcn`). */
  causeClass: string | null;
  /** The error's text. */
  reason: string;
  reasonClass: PoisonReasonClass;
}

/**
 * Exception classes of a record that could not be read (its bytes, not the handler, are wrong):
 * Spring's and Kafka's (de)serialization exceptions, Spring messaging's conversion failures, Jackson's
 * parse and mapping failures. Matched on the simple name, any package.
 */
const MARSHAL_EXCEPTION =
  /(?:^|[.$])(?:DeserializationException|SerializationException|RecordDeserializationException|MessageConversionException|ConversionFailedException|JsonParseException|JsonMappingException|MismatchedInputException|InvalidFormatException)$/;
/** Connect stages whose failure is a record that could not be converted. */
const CONNECT_MARSHAL_STAGES = new Set(["KEY_CONVERTER", "VALUE_CONVERTER", "HEADER_CONVERTER"]);

type Get = (name: string) => Buffer | string | undefined;

function getter(h: RawHeaders): Get {
  return (name) => {
    const v = h[name];
    if (v === undefined || typeof v === "string" || Buffer.isBuffer(v)) return v as Buffer | string | undefined;
    return (v as ReadonlyArray<Buffer | string>)[(v as ReadonlyArray<Buffer | string>).length - 1];
  };
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function text(v: Buffer | string | undefined): string | null {
  if (v === undefined) return null;
  if (typeof v === "string") return v;
  try {
    return utf8.decode(v);
  } catch {
    return null;
  }
}

/**
 * A Spring binary DLT header as a decimal string: its big-endian int (4 bytes) or long (8 bytes),
 * as `DeadLetterRecordManager` writes it. A value of another length is read as decimal text
 * (a producer that is not Spring's, or kcat); `null` when it is neither.
 */
export function springNumber(name: string, v: Buffer | string | undefined): string | null {
  const width = SPRING_DLT_BINARY[name];
  if (v === undefined) return null;
  if (width !== undefined && Buffer.isBuffer(v) && v.length === width)
    return width === 4 ? String(v.readInt32BE(0)) : v.readBigInt64BE(0).toString();
  const t = text(v)?.trim() ?? "";
  return /^-?\d{1,19}$/.test(t) ? t : null;
}

/**
 * A header the record page shows as a number: Spring's binary DLT headers of their exact width,
 * with what they hold (`1234 (8-byte big-endian)`; a timestamp also as ISO-8601). `null`: show it as bytes.
 */
export function conventionHeaderNumber(name: string, v: Buffer): { text: string; as: string } | null {
  const width = SPRING_DLT_BINARY[name];
  if (width === undefined || v.length !== width) return null;
  const n = springNumber(name, v)!;
  const as = `${width}-byte big-endian`;
  if (name !== SPRING_DLT.originalTimestamp) return { text: n, as };
  const ms = Number(n);
  return { text: n, as: Number.isFinite(ms) && Math.abs(ms) < 8.64e15 ? `${as}, ${new Date(ms).toISOString()}` : as };
}

/** Whether `name` is a header a DLQ convention adds (a re-drive drops them: they describe the old failure). */
export function isConventionHeader(name: string): boolean {
  return name.startsWith(SPRING_DLT_PREFIX) || name.startsWith(CONNECT_ERRORS_PREFIX);
}

function hasPrefix(h: RawHeaders, prefix: string): boolean {
  for (const k in h) if (k.startsWith(prefix) && h[k] !== undefined) return true;
  return false;
}

/** Which convention the headers follow: the first of Watermill, Spring, Connect that is present. */
export function conventionOf(h: RawHeaders): DlqConvention {
  if (
    h[REASON_POISONED_KEY] !== undefined ||
    h[TOPIC_POISONED_KEY] !== undefined ||
    h[HANDLER_POISONED_KEY] !== undefined
  )
    return DLQ_CONVENTION.watermill;
  if (hasPrefix(h, SPRING_DLT_PREFIX)) return DLQ_CONVENTION.spring;
  if (hasPrefix(h, CONNECT_ERRORS_PREFIX)) return DLQ_CONVENTION.connect;
  return DLQ_CONVENTION.none;
}

/**
 * The reason class the library's own error texts map to (PoisonQueue's texts, and Watermill's in Go):
 * `marshal: …` and a key factory failure → `marshal`, a store failure names its reason, a lease held
 * elsewhere → `in_progress`; anything else → `handler_error`.
 */
export function reasonClassOfText(reason: string): PoisonReasonClass {
  if (/^marshal\b/.test(reason) || /dedup key of message .* could not be computed/.test(reason))
    return POISON_REASON_CLASS.marshal;
  const store = /dedup store failed \((redis_timeout|redis_conn)\)/.exec(reason);
  if (store) return store[1] as PoisonReasonClass;
  if (/is being processed by another consumer/.test(reason)) return POISON_REASON_CLASS.inProgress;
  return POISON_REASON_CLASS.handlerError;
}

/** Whether any of the classes is a (de)serialization or conversion failure ({@link MARSHAL_EXCEPTION}). */
export function isMarshalException(...classes: ReadonlyArray<string | null>): boolean {
  return classes.some((c) => c !== null && MARSHAL_EXCEPTION.test(c.trim()));
}

function watermill(get: (n: string) => string | null): DlqOrigin {
  const reason = get(REASON_POISONED_KEY) ?? "";
  const own = get(REASON_CLASS_POISONED_KEY);
  const reasonClass =
    own && (POISON_REASON_CLASSES as readonly string[]).includes(own)
      ? (own as PoisonReasonClass)
      : reasonClassOfText(reason);
  return {
    convention: DLQ_CONVENTION.watermill,
    topic: get(TOPIC_POISONED_KEY),
    partition: null,
    offset: null,
    timestamp: null,
    handler: get(HANDLER_POISONED_KEY) ?? "",
    handlerIs: "handler",
    subscriber: get(SUBSCRIBER_POISONED_KEY) ?? "",
    exceptionClass: null,
    causeClass: null,
    reason,
    reasonClass,
  };
}

function spring(get: Get): DlqOrigin {
  const t = (n: string) => text(get(n));
  const exceptionClass = t(SPRING_DLT.exceptionFqcn);
  const causeClass = t(SPRING_DLT.exceptionCauseFqcn);
  const reason = t(SPRING_DLT.exceptionMessage) ?? exceptionClass ?? "";
  const partition = springNumber(SPRING_DLT.originalPartition, get(SPRING_DLT.originalPartition));
  const ts = springNumber(SPRING_DLT.originalTimestamp, get(SPRING_DLT.originalTimestamp));
  return {
    convention: DLQ_CONVENTION.spring,
    topic: t(SPRING_DLT.originalTopic),
    partition: partition === null ? null : Number(partition),
    offset: springNumber(SPRING_DLT.originalOffset, get(SPRING_DLT.originalOffset)),
    timestamp: ts !== null && Math.abs(Number(ts)) < 8.64e15 ? new Date(Number(ts)).toISOString() : null,
    handler: t(SPRING_DLT.originalConsumerGroup) ?? "",
    handlerIs: "consumer-group",
    subscriber: "",
    exceptionClass,
    causeClass,
    reason,
    reasonClass: isMarshalException(exceptionClass, causeClass)
      ? POISON_REASON_CLASS.marshal
      : reasonClassOfText(reason),
  };
}

function connect(get: Get): DlqOrigin {
  const t = (n: string) => text(get(n))?.trim() ?? null;
  const exceptionClass = t(CONNECT_ERRORS.exceptionClassName);
  const reason = t(CONNECT_ERRORS.exceptionMessage) ?? exceptionClass ?? "";
  const partition = t(CONNECT_ERRORS.partition);
  const offset = t(CONNECT_ERRORS.offset);
  const task = t(CONNECT_ERRORS.taskId);
  const marshal = CONNECT_MARSHAL_STAGES.has(t(CONNECT_ERRORS.stage) ?? "") || isMarshalException(exceptionClass);
  return {
    convention: DLQ_CONVENTION.connect,
    topic: t(CONNECT_ERRORS.topic),
    partition: partition !== null && /^\d{1,10}$/.test(partition) ? Number(partition) : null,
    offset: offset !== null && /^\d{1,19}$/.test(offset) ? offset : null,
    timestamp: null,
    handler: t(CONNECT_ERRORS.connectorName) ?? "",
    handlerIs: "connector",
    subscriber: task === null ? "" : `task ${task}`,
    exceptionClass,
    causeClass: null,
    reason,
    reasonClass: marshal ? POISON_REASON_CLASS.marshal : reasonClassOfText(reason),
  };
}

/** Reads a DLQ record's headers by the first convention present ({@link conventionOf}). */
export function readDlqConvention(headers: RawHeaders): DlqOrigin {
  const get = getter(headers);
  switch (conventionOf(headers)) {
    case DLQ_CONVENTION.watermill:
      return watermill((n) => text(get(n)));
    case DLQ_CONVENTION.spring:
      return spring(get);
    case DLQ_CONVENTION.connect:
      return connect(get);
    default:
      return {
        convention: DLQ_CONVENTION.none,
        topic: null,
        partition: null,
        offset: null,
        timestamp: null,
        handler: "",
        handlerIs: "handler",
        subscriber: "",
        exceptionClass: null,
        causeClass: null,
        reason: "",
        reasonClass: POISON_REASON_CLASS.handlerError,
      };
  }
}

/**
 * The bounded reason class of a DLQ record from its text metadata (what a decoded message keeps):
 * PoisonQueue's `reason_class_poisoned` when present, else its error text; a Spring or Connect
 * record by its exception class (a (de)serialization failure, or a Connect converter stage, is
 * `marshal`), else by the same error-text rules.
 */
export function reasonClassOf(metadata: Readonly<Record<string, string>>): PoisonReasonClass {
  return readDlqConvention(metadata).reasonClass;
}
