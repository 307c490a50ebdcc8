/**
 * Searching a room's history and jumping to a date, on the room page. A search (words, metadata or
 * both) asks the server (its FTS5 index) for the newest matches first, a page at a time, and lists
 * them beside the timeline with the matched words marked; a result is a `#<seq>` link, so opening
 * one shows the message in context through the page's deep-link path. A date asks the server for
 * the first message at or after it and shows that one at the top of the timeline. The timeline
 * stays live throughout: results are a panel over it, never a replacement of it.
 */
import type { ChatMessage } from '../../protocol';
import { firstSeqSince, searchHistory } from './api';
import { senderOf } from './sender';
import { messageTime } from './time-format';

/** Results per page of a search. */
export const SEARCH_PAGE = 25;
/** Typing searches after this pause (Enter searches at once). */
const TYPING_PAUSE_MS = 300;
/** Characters of a result's text shown around its first matched word. */
const SNIPPET_BEFORE = 60;
const SNIPPET_LENGTH = 240;
/** Distinct metadata values offered as suggestions in the metadata field. */
const METADATA_SUGGESTIONS = 200;

/** A word as the server's tokenizer (FTS5 unicode61) sees one: letters and digits. */
const WORD = /[\p{L}\p{N}]+/gu;

/** Case and accents folded, as the server's index folds them (`remove_diacritics 2`). */
function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/** The words of a search, folded. */
export function searchWords(q: string): Set<string> {
  return new Set(Array.from(q.matchAll(WORD), (m) => fold(m[0])));
}

/** The visible text of a message's (server-sanitised) HTML; a template's content loads and runs nothing. */
function textOf(m: ChatMessage): string {
  if (m.deletedAt) return '';
  const template = document.createElement('template');
  template.innerHTML = m.html;
  return (template.content.textContent ?? '').replace(/\s+/g, ' ').trim();
}

/** `text` into `into`, each whole word among `words` in a `<mark>`. Returns how many were marked. */
function appendMarked(into: HTMLElement, text: string, words: ReadonlySet<string>): number {
  let marked = 0;
  let from = 0;
  for (const match of text.matchAll(WORD)) {
    if (!words.has(fold(match[0]))) continue;
    const at = match.index;
    if (at > from) into.append(text.slice(from, at));
    const mark = document.createElement('mark');
    mark.textContent = match[0];
    into.append(mark);
    from = at + match[0].length;
    marked++;
  }
  if (from < text.length) into.append(text.slice(from));
  return marked;
}

/** A window of the text around its first matched word, so that the match is in what is shown. */
function snippetOf(text: string, words: ReadonlySet<string>): string {
  let first = 0;
  for (const match of text.matchAll(WORD)) {
    if (words.has(fold(match[0]))) {
      first = match.index;
      break;
    }
  }
  let start = Math.max(0, first - SNIPPET_BEFORE);
  // Start on a word boundary.
  if (start > 0) start = text.lastIndexOf(' ', start) + 1;
  const end = Math.min(text.length, start + SNIPPET_LENGTH);
  return `${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`;
}

export interface HistoryElements {
  searchForm: HTMLFormElement;
  q: HTMLInputElement;
  metadata: HTMLInputElement;
  metadataSeen: HTMLDataListElement;
  jumpForm: HTMLFormElement;
  jumpAt: HTMLInputElement;
  jumpStatus: HTMLElement;
  panel: HTMLElement;
  status: HTMLElement;
  list: HTMLOListElement;
  more: HTMLButtonElement;
  close: HTMLButtonElement;
}

export interface HistoryHooks {
  /** The bearer for history reads (a token or a viewer link). */
  token(): string;
  /** Shows message `seq` in the timeline: centred (a search result) or at the top (a date). */
  reveal(seq: number, block: 'center' | 'start'): void;
  /** The reader is done with history: back to the latest messages, following them. */
  toLive(): void;
}

interface Search {
  q: string;
  metadata: string;
  words: Set<string>;
  nextBefore?: number;
  shown: number;
}

export class HistoryTools {
  readonly #room: string;
  readonly #el: HistoryElements;
  readonly #hooks: HistoryHooks;
  #search: Search | null = null;
  /** Bumped by every new search: answers to an older one are dropped. */
  #generation = 0;
  #typing: ReturnType<typeof setTimeout> | undefined;
  readonly #metadataSeen = new Set<string>();
  #current: HTMLElement | null = null;

  constructor(room: string, elements: HistoryElements, hooks: HistoryHooks) {
    this.#room = room;
    this.#el = elements;
    this.#hooks = hooks;
    const el = elements;
    el.searchForm.addEventListener('submit', (event) => {
      event.preventDefault();
      clearTimeout(this.#typing);
      void this.#start();
    });
    const typed = () => {
      clearTimeout(this.#typing);
      this.#typing = setTimeout(() => void this.#start(), TYPING_PAUSE_MS);
    };
    el.q.addEventListener('input', typed);
    el.metadata.addEventListener('input', typed);
    el.more.addEventListener('click', () => void this.#more());
    el.close.addEventListener('click', () => this.leave());
    el.jumpForm.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#jump();
    });
    el.list.addEventListener('click', (event) => {
      const link = event.target instanceof Element ? event.target.closest<HTMLAnchorElement>('a.result') : null;
      if (link === null) return;
      event.preventDefault();
      this.#current?.removeAttribute('aria-current');
      this.#current = link;
      link.setAttribute('aria-current', 'true');
      this.#hooks.reveal(Number(link.dataset.seq), 'center');
    });
  }

  get open(): boolean {
    return !this.#el.panel.hidden;
  }

  /** Offers a message's metadata as a suggestion in the metadata field (cheap: once per value). */
  sawMetadata(metadata: string | null): void {
    if (!metadata || this.#metadataSeen.has(metadata) || this.#metadataSeen.size >= METADATA_SUGGESTIONS) return;
    this.#metadataSeen.add(metadata);
    const option = document.createElement('option');
    option.value = metadata;
    this.#el.metadataSeen.append(option);
  }

  /** Closes the results, empties the fields and hands the reader back to the live end. */
  leave(): void {
    clearTimeout(this.#typing);
    this.#generation++;
    this.#search = null;
    this.#current = null;
    this.#el.q.value = '';
    this.#el.metadata.value = '';
    this.#el.jumpStatus.textContent = '';
    this.#el.panel.hidden = true;
    this.#el.list.replaceChildren();
    document.documentElement.classList.remove('searching');
    this.#hooks.toLive();
  }

  async #start(): Promise<void> {
    const q = this.#el.q.value.trim();
    const metadata = this.#el.metadata.value;
    if (q === '' && metadata === '') {
      if (this.open) this.leave();
      return;
    }
    if (this.#search !== null && this.#search.q === q && this.#search.metadata === metadata) return;
    const generation = ++this.#generation;
    this.#search = { q, metadata, words: searchWords(q), shown: 0 };
    this.#current = null;
    this.#el.list.replaceChildren();
    this.#el.more.hidden = true;
    this.#el.panel.hidden = false;
    document.documentElement.classList.add('searching');
    this.#el.status.textContent = 'Searching…';
    await this.#page(generation);
  }

  async #more(): Promise<void> {
    if (this.#search?.nextBefore === undefined) return;
    this.#el.more.disabled = true;
    try {
      await this.#page(this.#generation);
    } finally {
      this.#el.more.disabled = false;
    }
  }

  /** The next page of the current search, appended to the results. */
  async #page(generation: number): Promise<void> {
    const search = this.#search;
    if (search === null) return;
    const answer = await searchHistory(this.#room, this.#hooks.token(), {
      ...(search.q ? { q: search.q } : {}),
      ...(search.metadata ? { metadata: search.metadata } : {}),
      ...(search.nextBefore !== undefined ? { before: search.nextBefore } : {}),
      limit: SEARCH_PAGE,
    });
    if (generation !== this.#generation) return;
    if (!answer.ok) {
      this.#el.status.textContent =
        answer.status === undefined || answer.status >= 500
          ? 'The search could not reach the server; try again.'
          : `The search was refused (${answer.status}).`;
      return;
    }
    const now = new Date();
    const fragment = document.createDocumentFragment();
    for (const m of answer.messages) fragment.append(this.#result(m, search.words, now));
    this.#el.list.append(fragment);
    search.shown += answer.messages.length;
    if (answer.nextBefore === undefined) delete search.nextBefore;
    else search.nextBefore = answer.nextBefore;
    this.#el.more.hidden = search.nextBefore === undefined;
    const count = `${search.shown}${search.nextBefore === undefined ? '' : '+'}`;
    this.#el.status.textContent =
      search.shown === 0 ? 'No message matches.' : `${count} ${search.shown === 1 ? 'result' : 'results'}, newest first`;
  }

  #result(m: ChatMessage, words: ReadonlySet<string>, now: Date): HTMLLIElement {
    const item = document.createElement('li');
    const link = document.createElement('a');
    link.className = 'result';
    link.href = `#${m.seq}`;
    link.dataset.seq = String(m.seq);
    const meta = document.createElement('span');
    meta.className = 'result-meta';
    const sender = document.createElement('span');
    sender.className = 'sender';
    sender.textContent = senderOf(m).name;
    const time = document.createElement('time');
    time.dateTime = m.createdAt;
    time.title = new Date(m.createdAt).toLocaleString();
    time.textContent = messageTime(new Date(m.createdAt), now);
    meta.append(sender, ` #${m.seq} · `, time);
    if (m.metadata) {
      const tag = document.createElement('span');
      tag.className = 'tag';
      appendMarked(tag, m.metadata, words);
      meta.append(' ', tag);
    }
    const text = document.createElement('span');
    text.className = 'snippet';
    const plain = textOf(m);
    if (plain === '') text.textContent = m.deletedAt ? 'This message was deleted.' : '';
    else appendMarked(text, snippetOf(plain, words), words);
    link.append(meta, text);
    item.append(link);
    return item;
  }

  /** The timeline at the date in the field (local time): its first message at or after it, at the top. */
  async #jump(): Promise<void> {
    const value = this.#el.jumpAt.value;
    const at = new Date(value);
    if (value === '' || Number.isNaN(at.getTime())) return;
    this.#el.jumpStatus.textContent = 'Looking…';
    const answer = await firstSeqSince(this.#room, this.#hooks.token(), at);
    if (!answer.ok) {
      this.#el.jumpStatus.textContent = 'The server could not be reached; try again.';
      return;
    }
    if (answer.seq === null) {
      this.#el.jumpStatus.textContent = 'No message since then: showing the latest.';
      this.#hooks.toLive();
      return;
    }
    this.#el.jumpStatus.textContent = '';
    this.#hooks.reveal(answer.seq, 'start');
  }
}
