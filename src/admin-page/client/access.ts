/**
 * The Access part of the admin page (`tokens:manage`): lists, creates and revokes API tokens, and
 * lists, creates and deletes OAuth clients for the client-credentials grant. A token's secret and a
 * client's secret are answered only on creation: the part shows them then, once, with Copy buttons,
 * and keeps neither in its lists. A signed-in token without `tokens:manage` gets a notice, not lists.
 */
import { type Permission, PERMISSIONS } from '../../http/permissions';
import { CLIENT_CREDENTIALS, OAUTH_LIMITS } from '../../oauth/oauth.limits';
import type { AdminApi, Answer, ApiToken, ApiTokenWithSecret, OAuthClient, OAuthClientWithSecret, Problem } from './api';
import { actionsCell, busy, button, copyField, element, h } from './dom';
import { durationText, problemText, whenText } from './format';

export interface AccessDeps {
  api: () => AdminApi | null;
  /** A 401 that means the signed-in token stopped working: handled (true) by going back to sign-in. */
  lostToken: (problem: Problem) => boolean;
  say: (text: string) => void;
}

export interface AccessPart {
  /**
   * Reads both lists with the signed-in token (after signing in). `tokensRead`: the tokens list as
   * signing in already read it (an access-only sign-in tries the token on it), not asked for again.
   */
  load(tokensRead?: Answer<{ entities: ApiToken[] }>): Promise<void>;
  /** Forgets the lists and any secret on show (signing out). */
  clear(): void;
}

/**
 * What each permission grants, as docs/api.md's table says it. Typed by the source's list, so a new
 * permission does not compile until it is described here.
 */
const GRANTS: Record<Permission, string> = {
  'analytics:conversationAggregate:view': 'the aggregate query; reading service-level settings',
  'analytics:conversation:ingest': 'ingesting conversation-detail records',
  'analytics:settings:edit': 'changing service-level settings',
  'tokens:manage': 'managing API tokens and OAuth clients',
  'chat:admin': 'managing rooms, webhooks and viewer links',
  'chat:read': 'watching rooms: history, WebSocket',
  'chat:write': "posting into rooms as oneself; editing and deleting one's own posts",
};

/** A fieldset of one checkbox per permission, in the source's order. */
function permissionPicker(fieldset: HTMLFieldSetElement, prefix: string): { chosen(): Permission[]; reset(): void } {
  const boxes = PERMISSIONS.map((permission) => {
    const id = `${prefix}-${permission.replace(/:/g, '-')}`;
    const box = h('input', { type: 'checkbox', id, value: permission, 'aria-describedby': `${id}-grants` });
    fieldset.append(
      h(
        'div',
        { class: 'permission' },
        box,
        h('label', { for: id, class: 'permission-name' }, h('code', {}, permission)),
        h('span', { id: `${id}-grants`, class: 'grants' }, GRANTS[permission]),
      ),
    );
    return box;
  });
  return {
    chosen: () => boxes.filter((b) => b.checked).map((b) => b.value as Permission),
    reset: () => {
      for (const b of boxes) b.checked = false;
    },
  };
}

function permissionList(permissions: readonly Permission[]): HTMLElement {
  return h('ul', { class: 'permission-list' }, ...permissions.map((p) => h('li', {}, h('code', {}, p))));
}

function when(iso: string): HTMLElement {
  return h('time', { datetime: iso, title: new Date(iso).toLocaleString() }, whenText(iso));
}

/** A last use as the API records it (within the hour): its time, or "never". */
function lastUsed(iso: string | null): HTMLElement | string {
  return iso === null ? 'never' : when(iso);
}

/** What a list keeps of a creation's answer: never the secret. */
function listedToken(token: ApiToken): ApiToken {
  return {
    id: token.id,
    name: token.name,
    permissions: token.permissions,
    createdAt: token.createdAt,
    ...(token.revokedAt ? { revokedAt: token.revokedAt } : {}),
    lastUsedAt: token.lastUsedAt,
  };
}

function listedClient(client: OAuthClient): OAuthClient {
  return {
    id: client.id,
    name: client.name,
    ...(client.description !== undefined ? { description: client.description } : {}),
    authorizedGrantType: client.authorizedGrantType,
    permissions: client.permissions,
    accessTokenValiditySeconds: client.accessTokenValiditySeconds,
    state: client.state,
    dateCreated: client.dateCreated,
    ...(client.dateRevoked ? { dateRevoked: client.dateRevoked } : {}),
    lastUsedAt: client.lastUsedAt,
  };
}

export function setUpAccess(deps: AccessDeps): AccessPart {
  const locked = element('access-locked', HTMLElement);
  const accessError = element('access-error', HTMLElement);
  const parts = element('access-parts', HTMLElement);
  const showRevoked = element('access-show-revoked', HTMLInputElement);
  const refresh = element('access-refresh', HTMLButtonElement);

  const tokensError = element('api-tokens-error', HTMLElement);
  const tokenNew = element('api-token-new', HTMLElement);
  const tokenSecretLabel = element('api-token-secret-label', HTMLElement);
  const tokenSecret = element('api-token-secret', HTMLInputElement);
  const copyToken = element('copy-api-token', HTMLButtonElement);
  const tokenCopyStatus = element('api-token-copy-status', HTMLElement);
  const tokenDone = element('api-token-done', HTMLButtonElement);
  const tokensBody = element('api-tokens', HTMLTableElement).tBodies[0]!;
  const tokensEmpty = element('api-tokens-empty', HTMLElement);
  const tokenForm = element('api-token-form', HTMLFormElement);
  const tokenName = element('api-token-name', HTMLInputElement);
  const tokenPermissions = permissionPicker(element('api-token-permissions', HTMLFieldSetElement), 'api-token-permission');
  const tokenFormError = element('api-token-form-error', HTMLElement);

  const clientsError = element('oauth-clients-error', HTMLElement);
  const clientNew = element('oauth-client-new', HTMLElement);
  const clientNewTitle = element('oauth-client-new-title', HTMLElement);
  const clientId = element('oauth-client-id', HTMLInputElement);
  const clientSecret = element('oauth-client-secret', HTMLInputElement);
  const copyClientId = element('copy-oauth-client-id', HTMLButtonElement);
  const copyClientSecret = element('copy-oauth-client-secret', HTMLButtonElement);
  const clientCopyStatus = element('oauth-client-copy-status', HTMLElement);
  const clientDone = element('oauth-client-done', HTMLButtonElement);
  const clientsBody = element('oauth-clients', HTMLTableElement).tBodies[0]!;
  const clientsEmpty = element('oauth-clients-empty', HTMLElement);
  const clientForm = element('oauth-client-form', HTMLFormElement);
  const clientName = element('oauth-client-name', HTMLInputElement);
  const clientDescription = element('oauth-client-description', HTMLInputElement);
  const clientValidity = element('oauth-client-validity', HTMLInputElement);
  const clientPermissions = permissionPicker(element('oauth-client-permissions', HTMLFieldSetElement), 'oauth-client-permission');
  const clientFormError = element('oauth-client-form-error', HTMLElement);

  const { minValiditySeconds: min, maxValiditySeconds: max, defaultValiditySeconds: fallback } = OAUTH_LIMITS;
  clientValidity.placeholder = String(fallback);
  element('oauth-client-validity-hint', HTMLElement).textContent =
    `Token validity: ${min}–${max} seconds (${durationText(min)} to ${durationText(max)}); empty: ${fallback} (${durationText(fallback)}).`;
  element('oauth-token-hint', HTMLElement).textContent =
    `curl -u CLIENT_ID:CLIENT_SECRET -d grant_type=client_credentials ${location.origin}/oauth/token`;

  let tokens: ApiToken[] = [];
  let clients: OAuthClient[] = [];
  /** The token, and the client, whose secret is on show. */
  let freshTokenId: string | null = null;
  let freshClientId: string | null = null;
  /** Answers to a load started before the last clear() are dropped. */
  let generation = 0;

  function showProblem(target: HTMLElement, problem: Problem | null): void {
    target.hidden = problem === null;
    target.textContent = problem === null ? '' : problemText(problem);
  }

  /**
   * A refusal: back to sign-in when the token went (401), else shown in `target`. A 403 is not the
   * token gone: it is this token lacking tokens:manage, or a permission it asked to hand out.
   */
  function refused(target: HTMLElement, problem: Problem): void {
    if (problem.status === 401 && deps.lostToken(problem)) return;
    showProblem(target, problem);
  }

  function lock(isLocked: boolean): void {
    locked.hidden = !isLocked;
    parts.hidden = isLocked;
  }

  /** The empty list's line: none at all, or only revoked (deleted) ones, which the checkbox shows. */
  function emptyText(all: number, shown: number, noun: string, gone: string): string {
    if (all === 0) return `No ${noun} yet.`;
    return shown === 0 ? `No active ${noun}; ${all} ${gone}, listed with "Show revoked and deleted".` : '';
  }

  // ------------------------------------------------------------ API tokens

  function renderTokens(): void {
    const shown = showRevoked.checked ? tokens : tokens.filter((t) => !t.revokedAt);
    tokensBody.replaceChildren(...shown.map(tokenRow));
    tokensEmpty.textContent = emptyText(tokens.length, shown.length, 'API tokens', 'revoked');
    tokensEmpty.hidden = shown.length > 0;
  }

  function tokenRow(token: ApiToken): HTMLTableRowElement {
    return h(
      'tr',
      { 'data-token-id': token.id, class: token.revokedAt ? 'revoked' : undefined },
      h('td', { title: `id ${token.id}` }, token.name),
      h('td', {}, permissionList(token.permissions)),
      h('td', { class: 'nowrap' }, when(token.createdAt)),
      token.revokedAt ? h('td', { class: 'nowrap' }, 'Revoked ', when(token.revokedAt)) : h('td', { class: 'active' }, 'Active'),
      h('td', { class: 'nowrap' }, lastUsed(token.lastUsedAt)),
      actionsCell(!token.revokedAt && button('Revoke', `Revoke API token ${token.name}`, () => void revokeToken(token), 'danger')),
    );
  }

  function showFreshToken(token: ApiTokenWithSecret): void {
    freshTokenId = token.id;
    tokenNew.hidden = false;
    tokenSecretLabel.textContent = `Token "${token.name}" (shown once: copy it now)`;
    tokenSecret.value = token.token;
    tokenCopyStatus.textContent = '';
    tokenSecret.focus();
    tokenSecret.select();
  }

  function hideFreshToken(): void {
    freshTokenId = null;
    tokenNew.hidden = true;
    tokenSecret.value = '';
    tokenCopyStatus.textContent = '';
  }

  async function revokeToken(token: ApiToken): Promise<void> {
    const api = deps.api();
    if (!api) return;
    if (
      !confirm(`Revoke API token "${token.name}"? Every request with it is refused (401) from now on, and its open room connections close.`)
    )
      return;
    const answer = await api.revokeToken(token.id);
    if (!answer.ok) return refused(tokensError, answer.problem);
    showProblem(tokensError, null);
    const at = new Date().toISOString();
    tokens = tokens.map((t) => (t.id === token.id ? { ...t, revokedAt: t.revokedAt ?? at } : t));
    if (freshTokenId === token.id) hideFreshToken();
    renderTokens();
    deps.say(`API token "${token.name}" revoked.`);
  }

  tokenForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const submit = tokenForm.querySelector('button[type="submit"]') as HTMLButtonElement;
    void busy(submit, async () => {
      const api = deps.api();
      if (!api) return;
      const permissions = tokenPermissions.chosen();
      if (permissions.length === 0) return showProblem(tokenFormError, { message: 'Choose at least one permission.', fields: [] });
      const answer = await api.createToken(tokenName.value, permissions);
      if (!answer.ok) return refused(tokenFormError, answer.problem);
      showProblem(tokenFormError, null);
      tokenName.value = '';
      tokenPermissions.reset();
      tokens = [listedToken(answer.value), ...tokens];
      renderTokens();
      showFreshToken(answer.value);
      deps.say(`API token "${answer.value.name}" created.`);
    });
  });

  copyToken.addEventListener('click', () => void copyField(tokenSecret, tokenCopyStatus, 'token'));
  tokenDone.addEventListener('click', () => {
    hideFreshToken();
    tokenName.focus();
  });

  // ------------------------------------------------------------ OAuth clients

  function renderClients(): void {
    const shown = showRevoked.checked ? clients : clients.filter((c) => c.state === 'active');
    clientsBody.replaceChildren(...shown.map(clientRow));
    clientsEmpty.textContent = emptyText(clients.length, shown.length, 'OAuth clients', 'deleted');
    clientsEmpty.hidden = shown.length > 0;
  }

  function clientRow(client: OAuthClient): HTMLTableRowElement {
    const active = client.state === 'active';
    return h(
      'tr',
      { 'data-client-id': client.id, class: active ? undefined : 'revoked' },
      h('td', {}, client.name, client.description && h('div', { class: 'description' }, client.description)),
      h('td', {}, h('code', {}, client.id)),
      h('td', {}, permissionList(client.permissions)),
      h('td', { class: 'nowrap', title: `${client.accessTokenValiditySeconds} seconds` }, durationText(client.accessTokenValiditySeconds)),
      h('td', { class: 'nowrap' }, when(client.dateCreated)),
      active
        ? h('td', { class: 'active' }, 'Active')
        : h(
            'td',
            { class: 'nowrap' },
            'Deleted',
            client.dateRevoked !== undefined && ' ',
            client.dateRevoked !== undefined && when(client.dateRevoked),
          ),
      h('td', { class: 'nowrap' }, lastUsed(client.lastUsedAt)),
      actionsCell(active && button('Delete', `Delete OAuth client ${client.name}`, () => void deleteClient(client), 'danger')),
    );
  }

  function showFreshClient(client: OAuthClientWithSecret): void {
    freshClientId = client.id;
    clientNew.hidden = false;
    clientNewTitle.textContent = `Client "${client.name}": its secret is shown once, copy it now.`;
    clientId.value = client.id;
    clientSecret.value = client.secret;
    clientCopyStatus.textContent = '';
    clientSecret.focus();
    clientSecret.select();
  }

  function hideFreshClient(): void {
    freshClientId = null;
    clientNew.hidden = true;
    clientId.value = '';
    clientSecret.value = '';
    clientCopyStatus.textContent = '';
  }

  async function deleteClient(client: OAuthClient): Promise<void> {
    const api = deps.api();
    if (!api) return;
    if (
      !confirm(
        `Delete OAuth client "${client.name}"? Its secret gets no more access tokens, and every access token it holds is refused (401) from now on.`,
      )
    )
      return;
    const answer = await api.deleteOAuthClient(client.id);
    if (!answer.ok) return refused(clientsError, answer.problem);
    showProblem(clientsError, null);
    const at = new Date().toISOString();
    clients = clients.map((c) => (c.id === client.id ? { ...c, state: 'inactive', dateRevoked: c.dateRevoked ?? at } : c));
    if (freshClientId === client.id) hideFreshClient();
    renderClients();
    deps.say(`OAuth client "${client.name}" deleted.`);
  }

  /** The validity field: undefined when empty (the API's default), a Problem when not whole seconds. */
  function validity(): number | undefined | Problem {
    const text = clientValidity.value.trim();
    if (text === '') return undefined;
    return /^\d+$/.test(text) ? Number(text) : { message: 'Token validity must be a whole number of seconds.', fields: [] };
  }

  clientForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const submit = clientForm.querySelector('button[type="submit"]') as HTMLButtonElement;
    void busy(submit, async () => {
      const api = deps.api();
      if (!api) return;
      const seconds = validity();
      if (typeof seconds === 'object') return showProblem(clientFormError, seconds);
      const permissions = clientPermissions.chosen();
      if (permissions.length === 0) return showProblem(clientFormError, { message: 'Choose at least one permission.', fields: [] });
      const description = clientDescription.value.trim();
      const answer = await api.createOAuthClient({
        name: clientName.value,
        ...(description !== '' ? { description } : {}),
        authorizedGrantType: CLIENT_CREDENTIALS,
        permissions,
        ...(seconds !== undefined ? { accessTokenValiditySeconds: seconds } : {}),
      });
      if (!answer.ok) return refused(clientFormError, answer.problem);
      showProblem(clientFormError, null);
      for (const input of [clientName, clientDescription, clientValidity]) input.value = '';
      clientPermissions.reset();
      clients = [listedClient(answer.value), ...clients];
      renderClients();
      showFreshClient(answer.value);
      deps.say(`OAuth client "${answer.value.name}" created.`);
    });
  });

  copyClientId.addEventListener('click', () => void copyField(clientId, clientCopyStatus, 'client id'));
  copyClientSecret.addEventListener('click', () => void copyField(clientSecret, clientCopyStatus, 'secret'));
  clientDone.addEventListener('click', () => {
    hideFreshClient();
    clientName.focus();
  });

  // ------------------------------------------------------------ both

  async function load(tokensRead?: Answer<{ entities: ApiToken[] }>): Promise<void> {
    const api = deps.api();
    if (!api) return;
    const started = generation;
    const [tokenAnswer, clientAnswer] = await Promise.all([tokensRead ?? api.tokens(), api.oauthClients()]);
    if (started !== generation || deps.api() !== api) return;
    const refusal = !tokenAnswer.ok ? tokenAnswer.problem : !clientAnswer.ok ? clientAnswer.problem : undefined;
    if (refusal?.status === 401 && deps.lostToken(refusal)) return;
    if (refusal?.status === 403) {
      lock(true);
      showProblem(accessError, null);
      return;
    }
    lock(false);
    showProblem(accessError, refusal ?? null);
    if (tokenAnswer.ok) {
      tokens = tokenAnswer.value.entities.map(listedToken);
      renderTokens();
    }
    if (clientAnswer.ok) {
      clients = clientAnswer.value.entities.map(listedClient);
      renderClients();
    }
  }

  showRevoked.addEventListener('change', () => {
    renderTokens();
    renderClients();
  });

  refresh.addEventListener('click', () => void busy(refresh, () => load()));

  return {
    load,
    clear(): void {
      generation++;
      tokens = [];
      clients = [];
      hideFreshToken();
      hideFreshClient();
      renderTokens();
      renderClients();
      for (const target of [accessError, tokensError, tokenFormError, clientsError, clientFormError]) showProblem(target, null);
      locked.hidden = true;
      parts.hidden = true;
    },
  };
}
