/** Every limit of the OAuth clients API and the token endpoint (docs/clients.md, Limits). */
export const OAUTH_LIMITS = {
  nameLength: 100,
  descriptionLength: 500,
  /** The admin API's JSON bodies. */
  bodyBytes: 16 * 1024,
  /** `POST /oauth/token`'s form body: a grant type and at most a client id and secret. */
  tokenBodyBytes: 4 * 1024,
  /** A presented client id or secret longer than this is refused without a lookup. */
  credentialLength: 256,
  /** Genesys' range for `accessTokenValiditySeconds`: 5 minutes to 48 hours, 24 hours by default. */
  minValiditySeconds: 300,
  maxValiditySeconds: 172_800,
  defaultValiditySeconds: 86_400,
  /**
   * Unexpired access tokens a client holds at once. Issuing one more deletes the client's oldest, so
   * a client that logs in in a loop keeps at most this many rows in D1 and never locks itself out.
   */
  liveTokensPerClient: 50,
} as const;

/** Genesys' name for the one grant this service implements. */
export const CLIENT_CREDENTIALS = 'CLIENT-CREDENTIALS';

/** Makes a leaked client secret greppable (access tokens: ACCESS_TOKEN_PREFIX in http/secrets.ts). */
export const CLIENT_SECRET_PREFIX = 'sbc_';
