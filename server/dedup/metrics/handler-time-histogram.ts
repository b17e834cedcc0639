/**
 * The histogram behind `handler_execution_time_seconds{service,handler,success}` (a
 * {@link LocalHistogram}), observed by `handlerTimer`. Registered get-or-create by `dedupMetrics`.
 */
import { HANDLER_SUCCESS, METRIC_LABELS, type HandlerSuccess } from "../../../names/dedup";
import { HANDLER_TIME_BUCKETS } from "../../../names/buckets";
import { LocalHistogram, type Observe } from "./local-histogram";

export type { Observe };

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
