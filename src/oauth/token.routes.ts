import { Hono, type Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ApiError } from '../http/api-error';
import type { AppEnv } from '../http/context';
import { readBodyBytes, utf8 } from '../http/json-body';
import { lastUseDue, recordClientUse, recordUseLater } from '../http/last-used';
import { issueAccessToken, verifyClient } from './clients.store';
import { OAUTH_LIMITS } from './oauth.limits';

/** RFC 6749 §5.2 error codes this endpoint answers. */
type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'unsupported_grant_type';

class OAuthError {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
  ) {}
}

/** Token answers are never cached (RFC 6749 §5.1). */
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;

function oauthError(c: Context<AppEnv>, err: OAuthError): Response {
  const status: ContentfulStatusCode = err.error === 'invalid_client' ? 401 : 400;
  const headers: Record<string, string> = { ...NO_STORE };
  if (status === 401) headers['WWW-Authenticate'] = 'Basic realm="switchboard", charset="UTF-8"';
  return c.json({ error: err.error, error_description: err.description }, status, headers);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

const FORM_MEDIA_TYPE = /^application\/x-www-form-urlencoded\s*(;.*)?$/i;

/** The form's parameters; each at most once (RFC 6749 §3.2). */
async function readForm(req: Request): Promise<Map<string, string>> {
  if (!FORM_MEDIA_TYPE.test(req.headers.get('Content-Type') ?? '')) {
    throw new OAuthError('invalid_request', 'Send the parameters as application/x-www-form-urlencoded.');
  }
  let text: string;
  try {
    text = utf8.decode(await readBodyBytes(req, OAUTH_LIMITS.tokenBodyBytes));
  } catch (err) {
    if (err instanceof ApiError) throw new OAuthError('invalid_request', err.message);
    throw err;
  }
  const form = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(text)) {
    if (form.has(name)) throw new OAuthError('invalid_request', `The parameter ${JSON.stringify(name.slice(0, 40))} is repeated.`);
    form.set(name, value);
  }
  return form;
}

interface Credentials {
  clientId: string;
  secret: string;
}

/**
 * `Authorization: Basic base64(id:secret)` (what Genesys' SDKs send), split at the first colon. The
 * RFC has both parts form-encoded first; client ids and secrets here contain only characters that
 * encoding leaves as they are, so they are taken as they come.
 */
function basicCredentials(header: string): Credentials {
  const match = /^Basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(header);
  if (!match)
    throw new OAuthError('invalid_client', 'Client authentication must use the Basic scheme with base64(client_id:client_secret).');
  let decoded: string;
  try {
    decoded = strictUtf8.decode(Uint8Array.from(atob(match[1]!), (ch) => ch.charCodeAt(0)));
  } catch {
    throw new OAuthError('invalid_client', 'The Basic credentials are not base64 of UTF-8 text.');
  }
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new OAuthError('invalid_client', 'The Basic credentials must be client_id:client_secret.');
  return { clientId: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

/** The client's credentials: Basic, or `client_id` and `client_secret` in the form, never both. */
function clientCredentials(header: string | undefined, form: Map<string, string>): Credentials {
  const inForm = form.has('client_id') || form.has('client_secret');
  if (header !== undefined) {
    if (inForm) throw new OAuthError('invalid_request', 'Authenticate the client once: the Authorization header or the form, not both.');
    return basicCredentials(header);
  }
  const clientId = form.get('client_id');
  const secret = form.get('client_secret');
  if (clientId === undefined || secret === undefined) {
    throw new OAuthError('invalid_client', 'Client authentication is required: HTTP Basic, or client_id and client_secret in the form.');
  }
  return { clientId, secret };
}

/**
 * The token endpoint, as Genesys Cloud's `https://login.<region>/oauth/token` has it for the
 * client-credentials grant. Errors are RFC 6749 §5.2 bodies, not ErrorBody: OAuth clients read those.
 */
export const tokenRoutes = new Hono<AppEnv>().post('/oauth/token', async (c) => {
  try {
    const form = await readForm(c.req.raw);
    const grantType = form.get('grant_type');
    if (grantType === undefined) throw new OAuthError('invalid_request', 'The grant_type parameter is missing.');
    const { clientId, secret } = clientCredentials(c.req.header('Authorization'), form);
    if (grantType !== 'client_credentials') {
      throw new OAuthError('unsupported_grant_type', 'Only the client_credentials grant is supported.');
    }
    const badClient = new OAuthError('invalid_client', 'Unknown client, wrong secret or revoked client.');
    if (!clientId || !secret || clientId.length > OAUTH_LIMITS.credentialLength || secret.length > OAUTH_LIMITS.credentialLength) {
      throw badClient;
    }
    const client = await verifyClient(c.var.db, clientId, secret);
    if (!client) throw badClient;
    const issued = await issueAccessToken(c.var.db, client.id, client.accessTokenValiditySeconds);
    if (!issued) throw badClient;
    // Getting a token is a use of the client; recorded after the answer, as a request's is (http/auth.ts).
    const now = Date.now();
    if (lastUseDue(client.lastUsedAt, now)) {
      const db = c.var.db;
      recordUseLater(c.executionCtx, `OAuth client ${client.id}`, () => recordClientUse(db, client.id, now));
    }
    return c.json({ access_token: issued.accessToken, token_type: 'bearer', expires_in: issued.expiresIn }, 200, NO_STORE);
  } catch (err) {
    if (err instanceof OAuthError) return oauthError(c, err);
    throw err;
  }
});
