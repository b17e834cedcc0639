/** Shapes of OIDC sign-in's own endpoints (`/api/auth/*`, AUTH_MODE=oidc). Isomorphic. */
import { z } from "zod";

/** Answer of `GET /api/auth/session`: whether sign-in is on, and who is signed in (null: nobody, or a forged or expired cookie). */
export const authSessionSchema = z.object({
  /** True when AUTH_MODE=oidc: the header shows "Sign in" / "Sign out". */
  signIn: z.boolean(),
  user: z
    .object({
      name: z.string(),
      email: z.string().optional(),
      groups: z.array(z.string()),
      /** ISO-8601: when the session ends and the user must sign in again. */
      expiresAt: z.string(),
    })
    .nullable(),
});
/** Answer of `GET /api/auth/session`. */
export type AuthSession = z.infer<typeof authSessionSchema>;

/** Answer of `POST /api/auth/logout`: the session cookie is cleared; the browser goes to `redirect` (the provider's end-session page, or `/`). */
export const logoutResponseSchema = z.object({ signedOut: z.literal(true), redirect: z.string() });
/** Answer of `POST /api/auth/logout`. */
export type LogoutResponse = z.infer<typeof logoutResponseSchema>;
