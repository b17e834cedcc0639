/**
 * A real OpenID Provider for tests (the `oidc-provider` package, in-process): one confidential
 * client with the app's redirect URI, users in groups, and the `groups` claim (scope `groups`).
 * Sign-in goes through the package's development login form (any password; the login is the
 * user id), then a first-party grant: no consent page. Never for production: its signing keys and
 * cookie keys are made per start.
 */
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import Provider, { type Configuration, type KoaContextWithOIDC } from "oidc-provider";

/** A user the test provider knows: the login typed into its form is `id`. */
export interface TestOidcUser {
  id: string;
  email: string;
  groups: string[];
}

/** Options of {@link startTestOidcProvider}. */
export interface TestOidcProviderOptions {
  /** Port on 127.0.0.1 to listen on. */
  port: number;
  /** The app's callback URL(s). */
  redirectUris: string[];
  /** Where the provider may send the browser after its sign-out page. */
  postLogoutRedirectUris: string[];
  users: TestOidcUser[];
  /** @default "dedup-health" */
  clientId?: string;
}

/** A running test provider. */
export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  stop: () => Promise<void>;
}

/** Starts the provider on `127.0.0.1:<port>`; `stop()` closes it and its open connections. */
export async function startTestOidcProvider(opts: TestOidcProviderOptions): Promise<TestOidcProvider> {
  const issuer = `http://127.0.0.1:${opts.port}`;
  const clientId = opts.clientId ?? "dedup-health";
  const clientSecret = randomBytes(24).toString("base64url");
  const users = new Map(opts.users.map((u) => [u.id, u]));
  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: opts.redirectUris,
        post_logout_redirect_uris: opts.postLogoutRedirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["preferred_username", "name"],
      groups: ["groups"],
    },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    pkce: { required: () => true },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    async findAccount(_ctx: KoaContextWithOIDC, id: string) {
      const u = users.get(id);
      if (!u) return undefined;
      return {
        accountId: id,
        claims: () => ({
          sub: id,
          preferred_username: id,
          name: id,
          email: u.email,
          email_verified: true,
          groups: u.groups,
        }),
      };
    },
    // A first-party client: the scopes asked are granted without a consent page.
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const { provider, session, client, params } = ctx.oidc;
      const grantId = ctx.oidc.result?.consent?.grantId ?? (client ? session?.grantIdFor(client.clientId) : undefined);
      if (grantId) return provider.Grant.find(String(grantId));
      if (!client || !session?.accountId) return undefined;
      const grant = new provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      grant.addOIDCScope(String(params?.scope ?? "openid"));
      await grant.save();
      return grant;
    },
  };
  const provider = new Provider(issuer, configuration);
  const server: Server = await new Promise((resolve, reject) => {
    const s = provider.listen(opts.port, "127.0.0.1", () => resolve(s));
    s.once("error", reject);
  });
  return {
    issuer,
    clientId,
    clientSecret,
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
