import type { ChatMessage } from '../../protocol';

/** Within this many pixels of the bottom, a new message scrolls the page down to it. */
const STICKY_BOTTOM_PX = 40;

/** The `<ol>` of messages, in seq order whatever order they arrive in, each seq once. */
export class MessageList {
  readonly #list: HTMLOListElement;
  #lastSeq = 0;

  constructor(list: HTMLOListElement) {
    this.#list = list;
  }

  /** The highest seq shown (0 before any). */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** The lowest seq shown; with none shown, the one after the last seen. */
  get firstSeq(): number {
    const first = this.#list.firstElementChild;
    return first instanceof HTMLElement ? Number(first.dataset.seq) : this.#lastSeq + 1;
  }

  /** Inserts a message at its place by seq; a seq already shown is ignored. */
  render(m: ChatMessage): void {
    if (this.#list.querySelector(`[data-seq="${m.seq}"]`)) return;
    const item = document.createElement('li');
    item.className = 'message';
    item.dataset.seq = String(m.seq);
    const meta = document.createElement('div');
    meta.className = 'meta';
    const time = document.createElement('time');
    time.dateTime = m.createdAt;
    time.textContent = new Date(m.createdAt).toLocaleString();
    meta.append(`#${m.seq} · `, time);
    if (m.metadata) {
      const tag = document.createElement('span');
      tag.className = 'tag';
      tag.textContent = m.metadata;
      meta.append(' ', tag);
    }
    const body = document.createElement('div');
    body.className = 'body';
    body.innerHTML = m.html; // sanitised on the server when the message was posted; CSP backs it up
    item.append(meta, body);

    const last = this.#list.lastElementChild;
    if (!(last instanceof HTMLElement) || Number(last.dataset.seq) < m.seq) {
      const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - STICKY_BOTTOM_PX;
      this.#list.append(item);
      if (atBottom) item.scrollIntoView({ block: 'end' });
    } else {
      let next = this.#list.firstElementChild;
      while (next instanceof HTMLElement && Number(next.dataset.seq) < m.seq) next = next.nextElementSibling;
      this.#list.insertBefore(item, next);
    }
    this.#lastSeq = Math.max(this.#lastSeq, m.seq);
  }
}
