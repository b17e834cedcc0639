/**
 * The environment variables of access and sign-in (server/config.ts spreads them into its schema,
 * in this order): which proxies and hosts are believed, where the user comes from, their roles,
 * masking, the listening address, and OIDC sign-in with its session.
 */
import { z } from "zod";
import { parseMaskRules, type MaskRule } from "@/lib/api/masking";
import { parseRoleBindings, type RoleBinding } from "@/server/auth/bindings";
import { empty, hostNameList, httpUrl, ipList } from "./config-fields";

/** Who may reach the app and as whom: proxies, hosts, the user's origin and roles, masking, the listening address. */
export const ACCESS_ENV = {
  /** Reverse proxies whose X-Forwarded-For / X-Real-IP / Forwarded are believed (server/access.ts). */
  TRUSTED_PROXIES: z.preprocess(empty, ipList.default([])),
  /** The one header TRUSTED_PROXIES report the client in (right-most untrusted entry; server/access.ts). */
  TRUSTED_PROXY_HEADER: z.preprocess(
    empty,
    z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, "expected one header name, e.g. X-Forwarded-For")
      .transform((s) => s.toLowerCase())
      .default("x-forwarded-for"),
  ),
  /** Where the user comes from (server/auth/principal.ts): `token` (WORKSHOP_TOKEN / this machine), `proxy` (headers from TRUSTED_PROXIES), `oidc` (sign-in). */
  AUTH_MODE: z.preprocess(empty, z.enum(["token", "proxy", "oidc"], "expected token, proxy or oidc").default("token")),
  /** Header a trusted proxy names the user in (AUTH_MODE=proxy). */
  PROXY_USER_HEADER: z.preprocess(
    empty,
    z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, "expected a header name")
      .transform((s) => s.toLowerCase())
      .default("x-forwarded-user"),
  ),
  /** Header a trusted proxy names the user's e-mail in (AUTH_MODE=proxy). */
  PROXY_EMAIL_HEADER: z.preprocess(
    empty,
    z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, "expected a header name")
      .transform((s) => s.toLowerCase())
      .default("x-forwarded-email"),
  ),
  /** Header a trusted proxy lists the user's groups in, comma-separated (AUTH_MODE=proxy). */
  PROXY_GROUPS_HEADER: z.preprocess(
    empty,
    z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, "expected a header name")
      .transform((s) => s.toLowerCase())
      .default("x-forwarded-groups"),
  ),
  /** Roles of groups, per service (AUTH_MODE=proxy/oidc): `sre=admin:*,billing-devs=operator:billing;payments` (server/auth/bindings.ts). */
  ROLE_BINDINGS: z.preprocess(
    empty,
    z
      .string()
      .transform((s, ctx): RoleBinding[] => {
        try {
          return parseRoleBindings(s);
        } catch (e) {
          ctx.addIssue({ code: "custom", message: e instanceof Error ? e.message : String(e) });
          return z.NEVER;
        }
      })
      .default([]),
  ),
  /** Host names the app answers to besides loopback and its own (server/allowed-hosts.ts); `.example.com` allows sub-domains. */
  ALLOWED_HOSTS: z.preprocess(empty, hostNameList.default([])),
  /** `on`: local viewers see upstream errors unredacted (server/redact.ts); others never do. */
  SHOW_UPSTREAM_DETAIL: z.preprocess(empty, z.enum(["on", "off"], "expected on or off").default("off")),
  /** Payload masking for roles without `unmasked` (server/observe/records/masking.ts): a JSON array of rules; default none. */
  MASK_RULES: z.preprocess(
    empty,
    z
      .string()
      .transform((s, ctx): MaskRule[] => {
        const r = parseMaskRules(s);
        if (r.ok) return r.rules;
        ctx.addIssue({ code: "custom", message: r.error });
        return z.NEVER;
      })
      .default([]),
  ),
  /** Port `npm run dev` / `npm start` listen on (default 3000); read here only to validate it. */
  PORT: z.preprocess(
    empty,
    z.coerce
      .number()
      .int("expected a whole number")
      .min(1, "expected a port in 1-65535")
      .max(65535, "expected a port in 1-65535")
      .optional(),
  ),
  /** Interface `npm start` binds (default 127.0.0.1); read here only to validate it. */
  HOST: z.preprocess(
    empty,
    z
      .string()
      .regex(
        /^(\[?[0-9a-fA-F:.]+\]?|[A-Za-z0-9.-]{1,253})$/,
        "expected a host name or an IP address, e.g. 127.0.0.1 or 0.0.0.0",
      )
      .optional(),
  ),
};

/** OIDC sign-in and its session cookie (AUTH_MODE=oidc). */
export const SIGN_IN_ENV = {
  /** OIDC sign-in (AUTH_MODE=oidc, server/auth/oidc*.ts): the provider's issuer URL; discovery reads `<issuer>/.well-known/openid-configuration`. */
  OIDC_ISSUER: z.preprocess(
    empty,
    httpUrl
      .refine(
        (s) => new URL(s).protocol === "https:" || ["127.0.0.1", "localhost", "[::1]"].includes(new URL(s).hostname),
        "expected an https:// URL (http:// only for a provider on this machine, e.g. http://127.0.0.1:8080)",
      )
      .optional(),
  ),
  OIDC_CLIENT_ID: z.preprocess(empty, z.string().max(500, "expected at most 500 characters").optional()),
  OIDC_CLIENT_SECRET: z.preprocess(empty, z.string().max(2000, "expected at most 2000 characters").optional()),
  /** Where the provider sends the browser back: `<app>/api/auth/callback` (default: derived from the request's own origin). */
  OIDC_REDIRECT_URL: z.preprocess(empty, httpUrl.optional()),
  /** The ID-token / userinfo claim that lists the user's groups (ROLE_BINDINGS maps groups to roles). */
  OIDC_GROUPS_CLAIM: z.preprocess(
    empty,
    z
      .string()
      .regex(/^[A-Za-z0-9_:./-]{1,200}$/, "expected a claim name such as groups")
      .default("groups"),
  ),
  /** Scopes asked of the provider, space-separated; must include openid. */
  OIDC_SCOPES: z.preprocess(
    empty,
    z
      .string()
      .refine(
        (s) => s.split(/\s+/).includes("openid"),
        "expected space-separated scopes including openid, e.g. openid profile email groups",
      )
      .default("openid profile email"),
  ),
  /** Key of the signed session cookie (HMAC-SHA256): at least 32 random characters, e.g. `openssl rand -base64 48`. */
  SESSION_SECRET: z.preprocess(
    empty,
    z.string().min(32, "expected at least 32 characters (e.g. openssl rand -base64 48)").optional(),
  ),
  /** How long a sign-in lasts: seconds, or a number with s, m or h (default 8h). */
  SESSION_MAX_AGE: z.preprocess(
    empty,
    z
      .string()
      .regex(/^\d{1,7}[smh]?$/, "expected seconds or a duration such as 30m or 8h")
      .transform((s) => Number(s.replace(/[smh]$/, "")) * ({ s: 1, m: 60, h: 3600 }[s.slice(-1)] ?? 1))
      .refine((n) => n >= 60 && n <= 30 * 86_400, "expected between 60 s and 720h")
      .default(8 * 3600),
  ),
};

/** With AUTH_MODE=oidc, the OIDC variables sign-in cannot work without; the first one missing. */
export function missingOidcSetting(c: {
  OIDC_ISSUER?: string;
  OIDC_CLIENT_ID?: string;
  SESSION_SECRET?: string;
}): [string, string] | null {
  if (!c.OIDC_ISSUER)
    return [
      "OIDC_ISSUER",
      "required with AUTH_MODE=oidc: the provider's issuer URL, e.g. https://login.example.com/realms/ops",
    ];
  if (!c.OIDC_CLIENT_ID)
    return ["OIDC_CLIENT_ID", "required with AUTH_MODE=oidc: the client id registered at the provider"];
  if (!c.SESSION_SECRET)
    return [
      "SESSION_SECRET",
      "required with AUTH_MODE=oidc: at least 32 random characters that sign the session cookie (e.g. openssl rand -base64 48)",
    ];
  return null;
}
