/**
 * OIDC sign-in with any OpenID Provider (`AUTH_MODE=oidc`): authorization code + PKCE through
 * `openid-client`. {@link beginSignIn} builds the provider's authorization URL and the login state
 * to keep in a signed cookie; {@link completeSignIn} trades the callback's code for tokens and
 * reads the user (name, e-mail, groups) from the ID token, or from userinfo when the ID token does
 * not carry the groups claim. Discovery runs at first use and is cached per issuer and client; a
 * failed discovery is forgotten so the next sign-in tries again. Nothing is fetched but the
 * configured issuer's own endpoints.
 */
import * as client from "openid-client";
import { LOGIN_MAX_AGE_S, type LoginState, type SessionUser } from "@/server/auth/oidc-cookie";
import type { AppConfig } from "@/server/config";
import { BadRequestError, UpstreamUnavailableError } from "@/server/http";

/** The OIDC settings sign-in needs (the OIDC_* variables of server/config.ts). */
export type OidcSettings = Pick<
  AppConfig,
  "OIDC_ISSUER" | "OIDC_CLIENT_ID" | "OIDC_CLIENT_SECRET" | "OIDC_GROUPS_CLAIM" | "OIDC_SCOPES"
>;

type G = typeof globalThis & { __dedupHealthOidc?: Map<string, Promise<client.Configuration>> };

/**
 * The provider's configuration for `s`, discovered once per issuer and client id and cached on
 * globalThis. An `http:` issuer is accepted only as config.ts allows it (loopback, for a local
 * provider). **A failed discovery rejects with an {@link UpstreamUnavailableError} naming the issuer.**
 */
export function oidcConfiguration(s: OidcSettings): Promise<client.Configuration> {
  if (!s.OIDC_ISSUER || !s.OIDC_CLIENT_ID)
    throw new UpstreamUnavailableError("OIDC sign-in is not configured: set OIDC_ISSUER and OIDC_CLIENT_ID");
  const g = globalThis as G;
  const cache = (g.__dedupHealthOidc ??= new Map());
  const key = `${s.OIDC_ISSUER} ${s.OIDC_CLIENT_ID}`;
  let found = cache.get(key);
  if (!found) {
    const issuer = new URL(s.OIDC_ISSUER);
    const auth = s.OIDC_CLIENT_SECRET ? client.ClientSecretBasic(s.OIDC_CLIENT_SECRET) : client.None();
    const execute = issuer.protocol === "http:" ? [client.allowInsecureRequests] : [];
    found = client
      .discovery(issuer, s.OIDC_CLIENT_ID, s.OIDC_CLIENT_SECRET, auth, { execute, timeout: 10 })
      .catch((e: unknown) => {
        cache.delete(key);
        throw new UpstreamUnavailableError(
          `the OpenID Provider ${s.OIDC_ISSUER} did not answer discovery: ${e instanceof Error ? e.message : String(e)}`,
        );
      });
    cache.set(key, found);
  }
  return found;
}

/** Forgets every cached discovery (tests). */
export function forgetOidcConfigurations(): void {
  (globalThis as G).__dedupHealthOidc?.clear();
}

/** A path of this app to return to after sign-in; anything else (another origin, `//host`) is `/`. */
export function safeReturnPath(p: string | null): string {
  return p && /^\/(?![/\\])[^\s\\]*$/.test(p) && !p.startsWith("/api/") ? p : "/";
}

/** The authorization URL to send the browser to, and the login state to keep until the callback. */
export async function beginSignIn(
  s: OidcSettings,
  redirectUri: string,
  returnTo: string,
  nowS: number,
): Promise<{ url: URL; login: LoginState }> {
  const cfg = await oidcConfiguration(s);
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(cfg, {
    redirect_uri: redirectUri,
    scope: s.OIDC_SCOPES,
    response_type: "code",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    nonce,
  });
  return { url, login: { typ: "login", state, verifier, nonce, returnTo, exp: nowS + LOGIN_MAX_AGE_S } };
}

/** The groups in a claim's value: an array of strings, or one string (some providers send one group so). */
export function groupsOf(v: unknown): string[] | null {
  if (typeof v === "string") return v ? [v] : [];
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v;
  return null;
}

/** The user named by a set of claims: preferred_username, else name, e-mail, sub. */
export function userOf(claims: Record<string, unknown>, groups: string[]): SessionUser {
  const str = (k: string) => (typeof claims[k] === "string" && claims[k] !== "" ? (claims[k] as string) : undefined);
  const name = str("preferred_username") ?? str("name") ?? str("email") ?? str("sub") ?? "unknown";
  const email = str("email");
  return { name, groups, ...(email ? { email } : {}) };
}

/**
 * Completes the sign-in at the callback: `callbackUrl` is the redirect URI with the provider's
 * query (`code`, `state` or `error`). Checks state, PKCE and nonce; **a provider's error or a
 * failed check rejects with a {@link BadRequestError} saying to sign in again**.
 */
export async function completeSignIn(s: OidcSettings, callbackUrl: URL, login: LoginState): Promise<SessionUser> {
  const cfg = await oidcConfiguration(s);
  const refused = callbackUrl.searchParams.get("error");
  if (refused)
    throw new BadRequestError(
      `the OpenID Provider refused the sign-in: ${refused} ${callbackUrl.searchParams.get("error_description") ?? ""}`.trim(),
    );
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    tokens = await client.authorizationCodeGrant(cfg, callbackUrl, {
      pkceCodeVerifier: login.verifier,
      expectedState: login.state,
      expectedNonce: login.nonce,
      idTokenExpected: true,
    });
  } catch (e) {
    throw new BadRequestError(`sign-in failed (${reasonOf(e)}); sign in again`);
  }
  const claims = tokens.claims() as Record<string, unknown> | undefined;
  if (!claims) throw new BadRequestError("the OpenID Provider sent no ID token; sign in again");
  let groups = groupsOf(claims[s.OIDC_GROUPS_CLAIM]);
  let all: Record<string, unknown> = claims;
  if (groups === null && cfg.serverMetadata().userinfo_endpoint) {
    // Many providers put only the subject in the ID token and the rest behind userinfo.
    const info = (await client.fetchUserInfo(cfg, tokens.access_token, String(claims.sub))) as Record<string, unknown>;
    all = { ...info, ...claims };
    groups = groupsOf(info[s.OIDC_GROUPS_CLAIM]);
  }
  return userOf(all, groups ?? []);
}

/** An openid-client error's message with its cause's ("invalid response encountered" alone names no check). */
function reasonOf(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  return e.cause instanceof Error ? `${e.message}: ${e.cause.message}` : e.message;
}

/** Where to send the browser to end its session at the provider too, or null when it has no end_session_endpoint. */
export async function endSessionUrl(s: OidcSettings, postLogoutRedirectUri: string): Promise<string | null> {
  const cfg = await oidcConfiguration(s);
  if (!cfg.serverMetadata().end_session_endpoint) return null;
  return client.buildEndSessionUrl(cfg, {
    client_id: s.OIDC_CLIENT_ID ?? "",
    post_logout_redirect_uri: postLogoutRedirectUri,
  }).href;
}
