import { z } from "zod";
import { may, principalOf, servicesFor } from "@/server/auth/principal";
import { config } from "@/server/config";
import { handleQuery } from "@/server/http";
import type { Whoami } from "@/lib/api/whoami";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /api/whoami` → `Whoami`: who the app takes the caller for under `AUTH_MODE` (name, source,
 * e-mail, groups, role grants) and where it may write, see payloads unmasked, read everyone's audit.
 * The header shows it; write buttons say from it why they are disabled.
 */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, z.object({}), async (): Promise<Whoami> => {
    const p = await principalOf(req);
    return {
      mode: config().AUTH_MODE,
      name: p.name,
      source: p.source,
      ...(p.email ? { email: p.email } : {}),
      groups: [...p.groups],
      grants: p.grants.map((g) => ({ role: g.role, services: g.services === "*" ? "*" : [...g.services] })),
      may: { write: servicesFor(p, "write"), unmasked: servicesFor(p, "unmasked"), auditAll: may(p, "audit-all") },
    };
  });
}
