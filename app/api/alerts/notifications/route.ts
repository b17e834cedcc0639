import { webhookBodySchema } from "@/lib/api/alert-receiver";
import { receiverRefusal, recordNotifications } from "@/server/alert-receiver/receiver";
import { handleMachineBody } from "@/server/alert-receiver/machine-body";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `POST /api/alerts/notifications`: Alertmanager's webhook (format version 4) with
 * `Authorization: Bearer <ALERT_RECEIVER_TOKEN>`; each alert becomes a chart event on its
 * service's and handler's pages. 401 without the token, 400 for another body, 200 `{ recorded }`.
 */
export async function POST(req: Request): Promise<Response> {
  return handleMachineBody(req, receiverRefusal(req.headers), webhookBodySchema, recordNotifications);
}
