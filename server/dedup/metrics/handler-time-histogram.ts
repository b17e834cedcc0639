/**
 * The histogram behind `handler_execution_time_seconds{service,handler,success}` (a
 * {@link LocalHistogram}), observed by `handlerTimer`. Registered get-or-create by `dedupMetrics`.
 */
import { HANDLER_SUCCESS, METRIC_LABELS, type HandlerSuccess } from "../../../names/dedup";
import { LocalHistogram, type Observe } from "./local-histogram";

export type { Observe };

/**
 * Buckets of `handler_execution_time_seconds`, in seconds: fine below a second (most handlers),
 * then up to and past the default lease (`leaseMs` 60 s): 15 and 30 s bracket half the lease
 * (where the lint warns that a takeover is near), 60 s is the lease itself, 120 and 300 s say by
 * how much a handler outlived it.
 */
export const HANDLER_TIME_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 120, 300,
];

/** `handler_execution_time_seconds` on one Registry (see the module doc). */
export class HandlerTimeHistogram extends LocalHistogram<{
  service: string;
  handler: string;
  success: HandlerSuccess;
}> {
  constructor(name: string, help: string, buckets: readonly number[] = HANDLER_TIME_BUCKETS) {
    super(name, help, buckets, METRIC_LABELS.handlerExecutionTime);
  }

  /**
   * The observers of one handler, `[success, failure]`; creates both series at 0 on first call (so
   * the first slow or failed attempt is an increase from 0, not a series born at 1).
   */
  handler(service: string, handler: string): readonly [Observe, Observe] {
    return [
      this.observer({ service, handler, success: HANDLER_SUCCESS.true }),
      this.observer({ service, handler, success: HANDLER_SUCCESS.false }),
    ];
  }
}
