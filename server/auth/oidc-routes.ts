/**
 * What the sign-in routes (`app/api/auth/*`) do in `AUTH_MODE=oidc`: send the browser to the
 * provider (`login`), take it back and set the session cookie (`callback`), clear it (`logout`),
 * and say who is signed in (`session`). Each route is one call into this file. In any other mode
 * the routes answer 404: sign-in does not exist there.
 */
import type { AuthSession, LogoutResponse } from "@/lib/api/auth";
import { beginSignIn, completeSignIn, endSessionUrl, safeReturnPath } from "@/server/auth/oidc-client";
import {
  cookieOf,
  LOGIN_COOKIE,
  LOGIN_MAX_AGE_S,
  readLoginState,
  readSession,
  SESSION_COOKIE,
  setCookieHeader,
  signValue,
} from "@/server/auth/oidc-cookie";
import { config, type AppConfig } from "@/server/config";
import { BadRequestError, errorAnswer, json, NotFoundError } from "@/server/http";

/** Path of the callback route, the default redirect URI's path. */
export const CALLBACK_PATH = "/api/auth/callback";

const nowS = () => Math.floor(Date.now() / 1000);

/** Whether sign-in is on: AUTH_MODE=oidc. */
export function oidcMode(): boolean {
  return config().AUTH_MODE === "oidc";
}

/** The config with the settings sign-in cannot do without, or a 404 when AUTH_MODE is not oidc. */
function oidcConfig(): AppConfig & { SESSION_SECRET: string } {
  const c = config();
  if (!oidcMode() || !c.SESSION_SECRET)
    throw new NotFoundError("sign-in is off: the app runs with AUTH_MODE other than oidc");
  return c as AppConfig & { SESSION_SECRET: string };
}

/**
 * The redirect URI: OIDC_REDIRECT_URL, else the callback path on the address the browser used (its
 * `Host`, which proxy.ts' allow-list passed; Next's `req.url` names `localhost` whatever the
 * browser used). **Behind a TLS-terminating proxy set OIDC_REDIRECT_URL**: the scheme seen here is
 * the proxy's hop.
 */
function redirectUriOf(req: Request, c: AppConfig): URL {
  if (c.OIDC_REDIRECT_URL) return new URL(c.OIDC_REDIRECT_URL);
  const own = new URL(req.url);
  return new URL(CALLBACK_PATH, `${own.protocol}//${req.headers.get("host") ?? own.host}`);
}

async function answering(req: Request, fn: () => Promise<Response>): Promise<Response> {
  try {
    return await fn();
  } catch (e) {
    return errorAnswer(req, e);
  }
}

function redirect(to: string, cookies: string[]): Response {
  const headers = new Headers({ location: to, "cache-control": "no-store" });
  for (const c of cookies) headers.append("set-cookie", c);
  return new Response(null, { status: 302, headers });
}

/** `GET /api/auth/login?returnTo=/path`: 302 to the provider's authorization URL, with the login state in a signed cookie. */
export function signInRoute(req: Request): Promise<Response> {
  return answering(req, async () => {
    const c = oidcConfig();
    const redirectUri = redirectUriOf(req, c);
    const returnTo = safeReturnPath(new URL(req.url).searchParams.get("returnTo"));
    const { url, login } = await beginSignIn(c, redirectUri.href, returnTo, nowS());
    return redirect(url.href, [
      setCookieHeader(
        LOGIN_COOKIE,
        signValue(login, c.SESSION_SECRET),
        LOGIN_MAX_AGE_S,
        redirectUri.protocol === "https:",
      ),
    ]);
  });
}

/**
 * `GET /api/auth/callback?code&state`: checks the login state, trades the code (PKCE, state,
 * nonce checked) and sets the signed session cookie for `SESSION_MAX_AGE`; 302 back to the page
 * sign-in started from. Without a valid login cookie (expired, forged, another browser): 400.
 */
export function callbackRoute(req: Request): Promise<Response> {
  return answering(req, async () => {
    const c = oidcConfig();
    const redirectUri = redirectUriOf(req, c);
    const login = readLoginState(cookieOf(req.headers.get("cookie"), LOGIN_COOKIE), c.SESSION_SECRET, nowS());
    if (!login)
      throw new BadRequestError(
        "no sign-in in progress in this browser (it took over 10 minutes, or started elsewhere); sign in again",
      );
    // The provider's answer on the redirect URI as registered (behind a proxy req.url may name another origin).
    const callback = new URL(redirectUri.href);
    callback.search = new URL(req.url).search;
    const user = await completeSignIn(c, callback, login);
    const session = signValue({ typ: "session", ...user, exp: nowS() + c.SESSION_MAX_AGE }, c.SESSION_SECRET);
    const secure = redirectUri.protocol === "https:";
    return redirect(login.returnTo, [
      setCookieHeader(SESSION_COOKIE, session, c.SESSION_MAX_AGE, secure),
      setCookieHeader(LOGIN_COOKIE, "", 0, secure),
    ]);
  });
}

/**
 * `POST /api/auth/logout` (JSON, from the page): clears the session cookie and answers where to go
 * next: the provider's end-session page when it has one (ending the session there too), else `/`.
 */
export function signOutRoute(req: Request): Promise<Response> {
  return answering(req, async () => {
    const c = oidcConfig();
    const redirectUri = redirectUriOf(req, c);
    const home = new URL("/", redirectUri).href;
    const to = (await endSessionUrl(c, home).catch(() => null)) ?? "/";
    const body: LogoutResponse = { signedOut: true, redirect: to };
    return json(body, 200, { "set-cookie": setCookieHeader(SESSION_COOKIE, "", 0, redirectUri.protocol === "https:") });
  });
}

/** `GET /api/auth/session`: whether sign-in is on and who the session cookie names (null: nobody, forged or expired). */
export function sessionRoute(req: Request): Promise<Response> {
  return answering(req, async () => {
    const c = config();
    const s =
      oidcMode() && c.SESSION_SECRET
        ? readSession(cookieOf(req.headers.get("cookie"), SESSION_COOKIE), c.SESSION_SECRET, nowS())
        : null;
    const body: AuthSession = {
      signIn: oidcMode(),
      user: s
        ? {
            name: s.name,
            groups: s.groups,
            expiresAt: new Date(s.exp * 1000).toISOString(),
            ...(s.email !== undefined ? { email: s.email } : {}),
          }
        : null,
    };
    return json(body);
  });
}
