/**
 * The viewer links panel of one room: lists its links (label, created, last used), creates, rotates
 * and revokes them. A link's URL holds its secret, which the API answers only on creation and
 * rotation: the panel shows it then, once, with a Copy button.
 */
import type { AdminApi, Problem, Room, ViewerLink, ViewerLinkWithSecret } from './api';
import { actionsCell, busy, button, copyField, element, h } from './dom';
import { problemText, whenText } from './format';

export interface ViewerLinksDeps {
  api: () => AdminApi | null;
  /** A 401 or 403 that means the admin token stopped working: handled (true) by going back to sign-in. */
  lostToken: (problem: Problem) => boolean;
  say: (text: string) => void;
}

export interface ViewerLinksPanel {
  open(room: Room): void;
  close(): void;
  /** The room was renamed or deleted. */
  roomChanged(room: Room | undefined, id: string): void;
}

export function setUpViewerLinks(deps: ViewerLinksDeps): ViewerLinksPanel {
  const panel = element('links', HTMLElement);
  const title = element('links-title', HTMLElement);
  const error = element('links-error', HTMLElement);
  const fresh = element('link-new', HTMLElement);
  const freshLabel = element('link-url-label', HTMLElement);
  const freshUrl = element('link-url', HTMLInputElement);
  const copy = element('copy-link', HTMLButtonElement);
  const copyStatus = element('link-copy-status', HTMLElement);
  const body = element('links-table', HTMLTableElement).tBodies[0]!;
  const empty = element('links-empty', HTMLElement);
  const form = element('link-form', HTMLFormElement);
  const label = element('link-label', HTMLInputElement);
  const formError = element('link-form-error', HTMLElement);
  const closeButton = element('close-links', HTMLButtonElement);

  let room: Room | null = null;
  let links: ViewerLink[] = [];
  /** The link whose URL is on show. */
  let freshId: string | null = null;

  function showProblem(target: HTMLElement, problem: Problem | null): void {
    target.hidden = problem === null;
    target.textContent = problem === null ? '' : problemText(problem);
  }

  /** A refusal: back to sign-in when the token went, else shown in `target`. */
  function refused(target: HTMLElement, problem: Problem): void {
    if (!deps.lostToken(problem)) showProblem(target, problem);
  }

  /** What the list keeps of an answer: never the secret or its URL. */
  function listed(link: ViewerLink): ViewerLink {
    return {
      id: link.id,
      roomId: link.roomId,
      label: link.label,
      createdAt: link.createdAt,
      rotatedAt: link.rotatedAt,
      lastUsedAt: link.lastUsedAt,
    };
  }

  function render(): void {
    body.replaceChildren(...links.map(row));
    empty.hidden = links.length > 0;
  }

  function when(iso: string | null, never: string): Node | string {
    return iso === null ? never : h('time', { datetime: iso, title: new Date(iso).toLocaleString() }, whenText(iso));
  }

  function row(link: ViewerLink): HTMLTableRowElement {
    return h(
      'tr',
      { 'data-link-id': link.id },
      h('td', {}, link.label),
      h(
        'td',
        { class: 'nowrap' },
        when(link.createdAt, ''),
        link.rotatedAt !== null && ' · rotated ',
        link.rotatedAt !== null && when(link.rotatedAt, ''),
      ),
      h('td', { class: 'nowrap' }, when(link.lastUsedAt, 'never')),
      actionsCell(
        button('Rotate', `Rotate viewer link ${link.label}`, () => void rotate(link)),
        button('Revoke', `Revoke viewer link ${link.label}`, () => void revoke(link), 'danger'),
      ),
    );
  }

  /** The secret is shown once: now. */
  function showFresh(link: ViewerLinkWithSecret, what: string): void {
    freshId = link.id;
    fresh.hidden = false;
    freshLabel.textContent = `${what} "${link.label}" (shown once: copy it now)`;
    freshUrl.value = link.url;
    copyStatus.textContent = '';
    freshUrl.focus();
    freshUrl.select();
  }

  function hideFresh(): void {
    freshId = null;
    fresh.hidden = true;
    freshUrl.value = '';
    copyStatus.textContent = '';
  }

  async function load(): Promise<void> {
    const api = deps.api();
    const current = room;
    if (!api || current === null) return;
    const answer = await api.viewerLinks(current.id);
    if (room !== current) return;
    if (!answer.ok) return refused(error, answer.problem);
    showProblem(error, null);
    links = answer.value.entities;
    render();
  }

  async function rotate(link: ViewerLink): Promise<void> {
    const api = deps.api();
    if (!api || room === null) return;
    if (!confirm(`Give viewer link "${link.label}" a new URL? Screens using the current one stop at once and must be given the new one.`))
      return;
    const answer = await api.rotateViewerLink(room.id, link.id);
    if (!answer.ok) return refused(error, answer.problem);
    showProblem(error, null);
    links = links.map((l) => (l.id === link.id ? listed(answer.value) : l));
    render();
    showFresh(answer.value, 'New URL of');
    deps.say(`Viewer link "${link.label}" rotated: the old URL no longer opens the room.`);
  }

  async function revoke(link: ViewerLink): Promise<void> {
    const api = deps.api();
    if (!api || room === null) return;
    if (!confirm(`Revoke viewer link "${link.label}"? Screens using it stop at once.`)) return;
    const answer = await api.revokeViewerLink(room.id, link.id);
    if (!answer.ok) return refused(error, answer.problem);
    showProblem(error, null);
    links = links.filter((l) => l.id !== link.id);
    render();
    if (freshId === link.id) hideFresh();
    deps.say(`Viewer link "${link.label}" revoked.`);
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const submit = form.querySelector('button[type="submit"]') as HTMLButtonElement;
    void busy(submit, async () => {
      const api = deps.api();
      if (!api || room === null) return;
      const answer = await api.createViewerLink(room.id, label.value);
      if (!answer.ok) return refused(formError, answer.problem);
      showProblem(formError, null);
      label.value = '';
      links = [...links, listed(answer.value)];
      render();
      showFresh(answer.value, 'URL of');
      deps.say(`Viewer link "${answer.value.label}" created.`);
    });
  });

  copy.addEventListener('click', () => void copyField(freshUrl, copyStatus, 'URL'));

  function close(): void {
    room = null;
    links = [];
    panel.hidden = true;
    hideFresh();
    body.replaceChildren();
  }

  closeButton.addEventListener('click', close);

  return {
    open(next: Room): void {
      const changed = room?.id !== next.id;
      room = next;
      title.textContent = `Viewer links: ${next.name}`;
      if (changed) {
        links = [];
        render();
        hideFresh();
        showProblem(error, null);
        showProblem(formError, null);
      }
      panel.hidden = false;
      panel.scrollIntoView({ block: 'start' });
      title.focus();
      void load();
    },
    close,
    roomChanged(changed: Room | undefined, id: string): void {
      if (room?.id !== id) return;
      if (changed === undefined) close();
      else {
        room = changed;
        title.textContent = `Viewer links: ${changed.name}`;
      }
    },
  };
}
