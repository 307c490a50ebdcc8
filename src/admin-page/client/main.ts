/**
 * The admin page's client: asks once for a token (kept in this tab's sessionStorage, sent only in the
 * Authorization header). With `chat:admin` it lists, creates, renames and deletes rooms; lists,
 * creates, pauses, resumes, rotates and deletes webhooks; copies a webhook's URL; sends a test post to
 * it; and shows its delivery log with paging; creates, rotates and revokes a room's viewer links
 * (viewer-links.ts). With `tokens:manage` it manages API tokens and OAuth clients (access.ts); a token
 * with only that sees the Access part alone. Every refusal shows the API's ErrorBody message.
 * Served as /assets/admin/admin.js (scripts/build-page.ts).
 */
import { WEBHOOK_KINDS, type WebhookKind } from '../../chat/limits';
import { setUpAccess } from './access';
import { AdminApi, type DeliveryEntry, type Problem, type Room, SIGNED_KINDS, testPost, type Webhook } from './api';
import { actionsCell, busy, button, element, h } from './dom';
import { clockText, deliveryError, problemText, statusClass, whenText } from './format';
import { setUpViewerLinks } from './viewer-links';

/** Not the room page's key: a room page opened in this tab must not pick up the admin token. */
const TOKEN_KEY = 'switchboard.adminToken';
/** The delivery log is written just after a post's answer (waitUntil): looked for this long. */
const LOG_WAIT_MS = 4_000;
const LOG_POLL_MS = 250;

const statusLine = element('status', HTMLElement);
const signOut = element('sign-out', HTMLButtonElement);
const tokenForm = element('token-form', HTMLFormElement);
const tokenInput = element('token', HTMLInputElement);
const tokenError = element('token-error', HTMLElement);
const main = element('admin', HTMLElement);
const accessOnlyNotice = element('access-only', HTMLElement);
/** What a token without chat:admin cannot use: hidden in access-only mode, not shown empty. */
const chatParts = [element('jump', HTMLElement), element('rooms-part', HTMLElement), element('webhooks-part', HTMLElement)];

const roomsError = element('rooms-error', HTMLElement);
const roomsBody = element('rooms', HTMLTableElement).tBodies[0]!;
const roomsEmpty = element('rooms-empty', HTMLElement);
const roomForm = element('room-form', HTMLFormElement);
const roomName = element('room-name', HTMLInputElement);
const roomTopic = element('room-topic', HTMLInputElement);
const roomFormError = element('room-form-error', HTMLElement);

const webhooksError = element('webhooks-error', HTMLElement);
const webhooksBody = element('webhooks', HTMLTableElement).tBodies[0]!;
const webhooksEmpty = element('webhooks-empty', HTMLElement);
const webhookForm = element('webhook-form', HTMLFormElement);
const webhookName = element('webhook-name', HTMLInputElement);
const webhookKind = element('webhook-kind', HTMLSelectElement);
const webhookRoom = element('webhook-room', HTMLSelectElement);
const webhookBurst = element('webhook-burst', HTMLInputElement);
const webhookRate = element('webhook-rate', HTMLInputElement);
const webhookAvatar = element('webhook-avatar', HTMLInputElement);
const webhookSecretLabel = element('webhook-secret-label', HTMLElement);
const webhookSecret = element('webhook-secret', HTMLInputElement);
const webhookOverrides = element('webhook-overrides', HTMLInputElement);
const webhookFormError = element('webhook-form-error', HTMLElement);

const detail = element('detail', HTMLElement);
const detailTitle = element('detail-title', HTMLElement);
const detailError = element('detail-error', HTMLElement);
const detailUrl = element('detail-url', HTMLInputElement);
const copyUrl = element('copy-url', HTMLButtonElement);
const copyStatus = element('copy-status', HTMLElement);
const toggleActive = element('toggle-active', HTMLButtonElement);
const rotateButton = element('rotate', HTMLButtonElement);
const deleteWebhookButton = element('delete-webhook', HTMLButtonElement);
const closeDetail = element('close-detail', HTMLButtonElement);
const testForm = element('test-form', HTMLFormElement);
const testMessage = element('test-message', HTMLTextAreaElement);
const testAnswer = element('test-answer', HTMLElement);
const refreshDeliveries = element('refresh-deliveries', HTMLButtonElement);
const deliveriesBody = element('deliveries', HTMLTableElement).tBodies[0]!;
const deliveriesEmpty = element('deliveries-empty', HTMLElement);
const olderDeliveries = element('older-deliveries', HTMLButtonElement);

let api: AdminApi | null = null;
let rooms: Room[] = [];
let webhooks: Webhook[] = [];
/** The webhook shown in the detail panel. */
let selectedId: string | null = null;
let deliveries: DeliveryEntry[] = [];
let nextBefore: number | undefined;
/** The signed-in token has tokens:manage but not chat:admin: the page is the Access part alone. */
let accessOnly = false;

const viewerLinks = setUpViewerLinks({ api: () => api, lostToken: (problem) => lostToken(problem), say });
const access = setUpAccess({ api: () => api, lostToken: (problem) => lostToken(problem), say });

function showProblem(target: HTMLElement, problem: Problem | null): void {
  target.hidden = problem === null;
  target.textContent = problem === null ? '' : problemText(problem);
}

function say(text: string): void {
  statusLine.textContent = text;
}

function roomLabel(id: string): string {
  return rooms.find((r) => r.id === id)?.name ?? `unknown room ${id.slice(0, 8)}`;
}

function roomPageUrl(id: string): string {
  return new URL(`/rooms/${id}`, location.origin).href;
}

// ---------------------------------------------------------------- token

function askForToken(problem: Problem | null, lead = ''): void {
  api = null;
  access.clear();
  main.hidden = true;
  signOut.hidden = true;
  tokenForm.hidden = false;
  tokenError.hidden = problem === null;
  tokenError.textContent = problem === null ? '' : `${lead}${problemText(problem)}`;
  tokenInput.focus();
}

/**
 * Tries the token on the rooms list (chat:admin) and, refused there with a 403, on the API tokens list
 * (tokens:manage): the lists the page reads anyway, so no endpoint exists only to name a token's
 * permissions. Asked again on every sign-in, a reload's included, so the mode is never stored. A
 * refused token is forgotten; 401 and 403 are told apart.
 */
async function signIn(token: string): Promise<void> {
  say('Signing in…');
  const candidate = new AdminApi(token);
  const answer = await candidate.rooms();
  if (answer.ok) {
    enter(candidate, token, false);
    rooms = answer.value.entities;
    renderRooms();
    await Promise.all([loadWebhooks(), access.load()]);
    say('Signed in.');
    return;
  }
  if (answer.problem.status !== 403) return refuse(answer.problem);
  const probe = await candidate.tokens();
  if (!probe.ok) return refuse(probe.problem);
  enter(candidate, token, true);
  await access.load(probe);
  say('Signed in to manage access only.');
}

function refuse(problem: Problem): void {
  sessionStorage.removeItem(TOKEN_KEY);
  say('');
  const lead =
    problem.status === 401
      ? 'This token is not accepted (unknown or revoked): '
      : problem.status === 403
        ? 'This token holds neither chat:admin (rooms, webhooks and viewer links) nor tokens:manage (API tokens and OAuth clients): '
        : 'Could not sign in: ';
  askForToken(problem, lead);
}

function enter(candidate: AdminApi, token: string, onlyAccess: boolean): void {
  sessionStorage.setItem(TOKEN_KEY, token);
  api = candidate;
  accessOnly = onlyAccess;
  // A chat:admin token that stopped working left its rooms and open panels behind the token form.
  if (onlyAccess) forgetChat();
  accessOnlyNotice.hidden = !onlyAccess;
  for (const part of chatParts) part.hidden = onlyAccess;
  tokenForm.hidden = true;
  tokenInput.value = '';
  main.hidden = false;
  signOut.hidden = false;
}

/**
 * A 401 in the middle of work (the token was revoked), or a 403 from the rooms and webhooks API for a
 * chat:admin token: back to the token form. In access-only mode a 403 is this token lacking a
 * permission (the Access part shows it), never the token gone.
 */
function lostToken(problem: Problem): boolean {
  if (problem.status !== 401 && (problem.status !== 403 || accessOnly)) return false;
  if (problem.code === 'webhook.inactive') return false;
  sessionStorage.removeItem(TOKEN_KEY);
  askForToken(problem, 'The token no longer works: ');
  return true;
}

tokenForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const token = tokenInput.value.trim();
  if (token !== '') void signIn(token);
});

function forgetChat(): void {
  rooms = [];
  webhooks = [];
  closePanel();
  viewerLinks.close();
  renderRooms();
  renderWebhooks();
}

signOut.addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  forgetChat();
  askForToken(null);
  say('Token forgotten.');
});

// ---------------------------------------------------------------- rooms

function renderRooms(): void {
  roomsBody.replaceChildren(...rooms.map(roomRow));
  roomsEmpty.hidden = rooms.length > 0;
  const chosen = webhookRoom.value;
  webhookRoom.replaceChildren(...rooms.map((r) => h('option', { value: r.id }, `${r.name} (${r.id.slice(0, 8)})`)));
  if (rooms.some((r) => r.id === chosen)) webhookRoom.value = chosen;
}

function roomRow(room: Room): HTMLTableRowElement {
  const link = h('a', { href: `/rooms/${room.id}`, target: '_blank', rel: 'noopener' }, 'Open page');
  const copy = button('Copy link', `Copy the page link of room ${room.name}`, () => void copyText(roomPageUrl(room.id), null));
  const actions = actionsCell(
    link,
    copy,
    button('Viewer links', `Viewer links of room ${room.name}`, () => viewerLinks.open(room)),
    button('Edit', `Edit room ${room.name}`, () => editRoom(room, row)),
    button('Delete', `Delete room ${room.name}`, () => void deleteRoom(room, row), 'danger'),
  );
  const row = h(
    'tr',
    { 'data-room-id': room.id },
    h('td', {}, room.name),
    h('td', {}, room.topic ?? ''),
    h('td', {}, h('code', {}, room.id)),
    actions,
  );
  return row;
}

function editRoom(room: Room, row: HTMLTableRowElement): void {
  const name = h('input', { 'aria-label': 'Room name', value: room.name });
  const topic = h('input', { 'aria-label': 'Room topic', value: room.topic ?? '' });
  const error = h('p', { class: 'error', role: 'alert', hidden: '' });
  const save = h('button', { type: 'submit' }, 'Save');
  const form = h(
    'form',
    { class: 'inline' },
    name,
    topic,
    save,
    button('Cancel', 'Cancel editing', () => renderRooms()),
    error,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(save, async () => {
      if (!api) return;
      const answer = await api.updateRoom(room.id, { name: name.value, topic: topic.value.trim() === '' ? null : topic.value });
      if (!answer.ok) {
        if (!lostToken(answer.problem)) showProblem(error, answer.problem);
        return;
      }
      rooms = rooms.map((r) => (r.id === room.id ? answer.value : r));
      viewerLinks.roomChanged(answer.value, room.id);
      renderRooms();
      renderWebhooks();
      say(`Room "${answer.value.name}" saved.`);
    });
  });
  row.replaceChildren(h('td', { colspan: '4' }, form));
  name.focus();
}

async function deleteRoom(room: Room, row: HTMLTableRowElement): Promise<void> {
  if (!api || !confirm(`Delete room "${room.name}" and all its messages?`)) return;
  const answer = await api.deleteRoom(room.id);
  if (!answer.ok) {
    if (lostToken(answer.problem)) return;
    // 409: webhooks post here; the API names them by id, the page adds their names.
    const names = answer.problem.fields.map((id) => webhooks.find((w) => w.id === id)?.name).filter((n) => n !== undefined);
    const problem =
      answer.problem.code === 'conflict' && names.length > 0
        ? { ...answer.problem, message: `${answer.problem.message} Webhooks: ${names.join(', ')}.` }
        : answer.problem;
    showProblem(roomsError, problem);
    row.classList.add('failed');
    return;
  }
  showProblem(roomsError, null);
  rooms = rooms.filter((r) => r.id !== room.id);
  viewerLinks.roomChanged(undefined, room.id);
  renderRooms();
  say(`Room "${room.name}" deleted.`);
}

roomForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const submit = roomForm.querySelector('button[type="submit"]') as HTMLButtonElement;
  void busy(submit, async () => {
    if (!api) return;
    const topic = roomTopic.value.trim() === '' ? null : roomTopic.value;
    const answer = await api.createRoom(roomName.value, topic);
    if (!answer.ok) {
      if (!lostToken(answer.problem)) showProblem(roomFormError, answer.problem);
      return;
    }
    showProblem(roomFormError, null);
    rooms = [...rooms, answer.value];
    roomName.value = '';
    roomTopic.value = '';
    renderRooms();
    say(`Room "${answer.value.name}" created.`);
  });
});

// ---------------------------------------------------------------- webhooks

async function loadWebhooks(): Promise<void> {
  if (!api) return;
  const answer = await api.webhooks();
  if (!answer.ok) {
    if (!lostToken(answer.problem)) showProblem(webhooksError, answer.problem);
    return;
  }
  showProblem(webhooksError, null);
  webhooks = answer.value.entities;
  renderWebhooks();
}

function webhookRooms(hook: Webhook): string {
  const ids = [hook.roomId, ...hook.mappings.flatMap((m) => m.roomIds)];
  return [...new Set(ids)].map(roomLabel).join(', ');
}

function stateText(hook: Webhook): string {
  if (hook.needsRotation) return 'Needs rotation';
  return hook.active ? 'Active' : 'Paused';
}

function renderWebhooks(): void {
  webhooksBody.replaceChildren(...webhooks.map(webhookRow));
  webhooksEmpty.hidden = webhooks.length > 0;
  const selected = webhooks.find((w) => w.id === selectedId);
  if (selected) renderPanel(selected);
  else if (selectedId !== null) closePanel();
}

function webhookRow(hook: Webhook): HTMLTableRowElement {
  const last = hook.lastDeliveryAt ?? null;
  return h(
    'tr',
    { 'data-webhook-id': hook.id, class: hook.id === selectedId ? 'selected' : undefined },
    h('td', {}, hook.name),
    h('td', {}, h('img', { src: `/assets/chat/icons/${hook.kind}.svg`, alt: '', class: 'kind-icon' }), hook.kind),
    h('td', {}, webhookRooms(hook)),
    h('td', { class: hook.active && !hook.needsRotation ? 'active' : 'paused' }, stateText(hook)),
    h(
      'td',
      { class: 'last-delivery nowrap' },
      last === null ? 'never' : h('time', { datetime: last, title: new Date(last).toLocaleString() }, whenText(last)),
    ),
    actionsCell(button('Manage', `Manage webhook ${hook.name}`, () => openPanel(hook.id))),
  );
}

function replaceWebhook(hook: Webhook): void {
  webhooks = webhooks.map((w) => (w.id === hook.id ? hook : w));
  renderWebhooks();
}

function syncSecretField(): void {
  webhookSecretLabel.hidden = !SIGNED_KINDS.includes(webhookKind.value as WebhookKind);
}

webhookKind.replaceChildren(...WEBHOOK_KINDS.map((kind) => h('option', { value: kind }, kind)));
webhookKind.addEventListener('change', syncSecretField);
syncSecretField();

/** An optional number field: undefined when empty, a Problem when not a number. */
function numberField(input: HTMLInputElement, label: string): number | undefined | Problem {
  const text = input.value.trim();
  if (text === '') return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : { message: `${label} must be a number.`, fields: [] };
}

webhookForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const submit = webhookForm.querySelector('button[type="submit"]') as HTMLButtonElement;
  void busy(submit, async () => {
    if (!api) return;
    const burst = numberField(webhookBurst, 'Burst');
    const perSecond = numberField(webhookRate, 'Per second');
    for (const n of [burst, perSecond]) {
      if (typeof n === 'object') {
        showProblem(webhookFormError, n);
        return;
      }
    }
    if (webhookRoom.value === '') {
      showProblem(webhookFormError, { message: 'Create a room first: a webhook posts to a room.', fields: [] });
      return;
    }
    const kind = webhookKind.value as WebhookKind;
    const rateLimit = {
      ...(typeof burst === 'number' ? { burst } : {}),
      ...(typeof perSecond === 'number' ? { perSecond } : {}),
    };
    const answer = await api.createWebhook({
      name: webhookName.value,
      kind,
      roomId: webhookRoom.value,
      ...(Object.keys(rateLimit).length > 0 ? { rateLimit } : {}),
      ...(webhookAvatar.value.trim() !== '' ? { avatarUrl: webhookAvatar.value.trim() } : {}),
      allowOverrides: webhookOverrides.checked,
      ...(SIGNED_KINDS.includes(kind) && webhookSecret.value !== '' ? { secret: webhookSecret.value } : {}),
    });
    if (!answer.ok) {
      if (!lostToken(answer.problem)) showProblem(webhookFormError, answer.problem);
      return;
    }
    showProblem(webhookFormError, null);
    webhooks = [...webhooks, { ...answer.value, lastDeliveryAt: answer.value.lastDeliveryAt ?? null }];
    for (const input of [webhookName, webhookBurst, webhookRate, webhookAvatar, webhookSecret]) input.value = '';
    webhookOverrides.checked = false;
    renderWebhooks();
    openPanel(answer.value.id);
    say(`Webhook "${answer.value.name}" created.`);
  });
});

// ---------------------------------------------------------------- one webhook

function openPanel(id: string): void {
  const changed = selectedId !== id;
  selectedId = id;
  if (changed) {
    testAnswer.textContent = '';
    copyStatus.textContent = '';
    showProblem(detailError, null);
  }
  renderWebhooks();
  detail.hidden = false;
  detail.scrollIntoView({ block: 'start' });
  detailTitle.focus();
  if (changed) void loadDeliveries(false);
}

function closePanel(): void {
  selectedId = null;
  detail.hidden = true;
  deliveries = [];
  nextBefore = undefined;
  for (const row of webhooksBody.rows) row.classList.remove('selected');
}

function renderPanel(hook: Webhook): void {
  detailTitle.textContent = `Webhook: ${hook.name}`;
  detailUrl.value = hook.url ?? '';
  detailUrl.placeholder = hook.url === null ? 'No URL: rotate to give this webhook one' : '';
  copyUrl.disabled = hook.url === null;
  testForm.querySelector('button')!.disabled = hook.url === null;
  toggleActive.textContent = hook.active ? 'Pause' : 'Resume';
  toggleActive.setAttribute('aria-pressed', String(!hook.active));
}

function selected(): Webhook | undefined {
  return webhooks.find((w) => w.id === selectedId);
}

/** The Clipboard API where the browser allows it; otherwise the text is selected (focus in it) for Ctrl+C. */
async function copyText(text: string, field: HTMLInputElement | null): Promise<void> {
  try {
    if (!navigator.clipboard) throw new Error('no clipboard');
    await navigator.clipboard.writeText(text);
    if (field !== null) copyStatus.textContent = 'Copied to the clipboard.';
    say('Copied to the clipboard.');
  } catch {
    if (field !== null) {
      field.focus();
      field.select();
      copyStatus.textContent = 'The browser would not copy: the URL is selected, press Ctrl+C (⌘C) to copy it.';
      say('The URL is selected: press Ctrl+C (⌘C) to copy it.');
    } else {
      say(`The browser would not copy. The link: ${text}`);
    }
  }
}

copyUrl.addEventListener('click', () => {
  const hook = selected();
  if (hook?.url) void copyText(hook.url, detailUrl);
});

toggleActive.addEventListener('click', () => {
  const hook = selected();
  if (!api || !hook) return;
  void busy(toggleActive, async () => {
    const answer = await api!.setActive(hook.id, !hook.active);
    if (!answer.ok) {
      if (!lostToken(answer.problem)) showProblem(detailError, answer.problem);
      return;
    }
    showProblem(detailError, null);
    replaceWebhook(answer.value);
    say(answer.value.active ? `Webhook "${hook.name}" resumed.` : `Webhook "${hook.name}" paused: posts answer 403 until resumed.`);
  });
});

rotateButton.addEventListener('click', () => {
  const hook = selected();
  if (!api || !hook) return;
  if (!confirm(`Give "${hook.name}" a new URL? The current URL stops working at once; its sender must be given the new one.`)) return;
  void busy(rotateButton, async () => {
    const answer = await api!.rotate(hook.id);
    if (!answer.ok) {
      if (!lostToken(answer.problem)) showProblem(detailError, answer.problem);
      return;
    }
    showProblem(detailError, null);
    replaceWebhook(answer.value);
    copyStatus.textContent = 'New URL: the old one answers 404 from now on.';
    say(`Webhook "${hook.name}" has a new URL.`);
  });
});

deleteWebhookButton.addEventListener('click', () => {
  const hook = selected();
  if (!api || !hook) return;
  if (!confirm(`Delete webhook "${hook.name}"? Its URL stops working and its delivery log goes with it.`)) return;
  void busy(deleteWebhookButton, async () => {
    const answer = await api!.deleteWebhook(hook.id);
    if (!answer.ok) {
      if (!lostToken(answer.problem)) showProblem(detailError, answer.problem);
      return;
    }
    webhooks = webhooks.filter((w) => w.id !== hook.id);
    closePanel();
    renderWebhooks();
    say(`Webhook "${hook.name}" deleted.`);
  });
});

closeDetail.addEventListener('click', () => {
  const id = selectedId;
  closePanel();
  if (id !== null) webhooksBody.querySelector<HTMLButtonElement>(`tr[data-webhook-id="${id}"] button`)?.focus();
});

testForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const hook = selected();
  const submit = testForm.querySelector('button') as HTMLButtonElement;
  if (!hook?.url) return;
  void busy(submit, async () => {
    testAnswer.className = '';
    testAnswer.textContent = 'Sending…';
    const newest = deliveries[0]?.id ?? 0;
    const answer = await testPost(hook.url!, testMessage.value);
    if (answer.ok) {
      const list = (answer.value as { deliveries?: { roomId: string; messageId: string; seq: number | null }[] }).deliveries ?? [];
      const where = list.map((d) => `${roomLabel(d.roomId)} as #${d.seq ?? '?'} (message ${d.messageId})`).join(', ');
      testAnswer.className = 'ok';
      testAnswer.textContent = `${answer.status}: stored in ${where || 'no room'}.`;
    } else {
      testAnswer.className = 'refused';
      testAnswer.textContent = `Refused: ${problemText(answer.problem)}`;
    }
    await waitForLogEntry(hook.id, newest);
  });
});

/** The log entry is written a moment after the answer: the list is read again until it shows up. */
async function waitForLogEntry(id: string, newest: number): Promise<void> {
  const deadline = Date.now() + LOG_WAIT_MS;
  do {
    await loadDeliveries(false);
    if (selectedId !== id || (deliveries[0]?.id ?? 0) > newest) break;
    await new Promise((resolve) => setTimeout(resolve, LOG_POLL_MS));
  } while (Date.now() < deadline);
  await refreshWebhook(id);
}

async function refreshWebhook(id: string): Promise<void> {
  if (!api) return;
  const answer = await api.webhook(id);
  if (answer.ok) replaceWebhook(answer.value);
}

async function loadDeliveries(older: boolean): Promise<void> {
  const id = selectedId;
  if (!api || id === null) return;
  const answer = await api.deliveries(id, older ? nextBefore : undefined);
  if (selectedId !== id) return;
  if (!answer.ok) {
    if (!lostToken(answer.problem)) showProblem(detailError, answer.problem);
    return;
  }
  deliveries = older ? [...deliveries, ...answer.value.entities] : answer.value.entities;
  nextBefore = answer.value.nextBefore;
  renderDeliveries();
}

function renderDeliveries(): void {
  deliveriesBody.replaceChildren(...deliveries.map(deliveryRow));
  deliveriesEmpty.hidden = deliveries.length > 0;
  olderDeliveries.hidden = nextBefore === undefined;
}

function deliveryRow(entry: DeliveryEntry): HTMLTableRowElement {
  const message =
    entry.messageId === null
      ? ''
      : `${entry.roomId === null ? '' : `${roomLabel(entry.roomId)} `}#${entry.seq ?? '?'} · ${entry.messageId.slice(0, 8)}`;
  return h(
    'tr',
    { 'data-delivery-id': String(entry.id), class: statusClass(entry.status) },
    h('td', { class: 'nowrap' }, h('time', { datetime: entry.at, title: `${whenText(entry.at)} · ${entry.at}` }, clockText(entry.at))),
    h('td', {}, entry.method),
    h('td', { class: 'status' }, String(entry.status)),
    h('td', { class: 'error-text' }, deliveryError(entry)),
    h('td', { title: entry.messageId ?? '' }, message),
    h('td', {}, String(entry.bytes)),
  );
}

refreshDeliveries.addEventListener('click', () => {
  void busy(refreshDeliveries, async () => {
    await loadDeliveries(false);
    if (selectedId !== null) await refreshWebhook(selectedId);
  });
});

olderDeliveries.addEventListener('click', () => void busy(olderDeliveries, () => loadDeliveries(true)));

// ---------------------------------------------------------------- start

const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved === null) askForToken(null);
else void signIn(saved);
