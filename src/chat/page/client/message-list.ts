import type { ChatMessage } from '../../protocol';
import { type MessageView, renderMessage } from './message-view';
import { dayKey, dayLabel, messageTime, timeStillMoves } from './time-format';

/** Within this many pixels of the bottom, the reader follows new messages. */
const STICKY_BOTTOM_PX = 40;
/** A flush waits for the next frame, or this long when no frame comes (a hidden tab has none). */
const FLUSH_FALLBACK_MS = 250;
/** The name of the performance-timeline measure of each flush (tests and the bench read it). */
export const RENDER_MEASURE = 'room:render';

export interface ListHooks {
  /** After each flush: the seqs shown changed. */
  changed(): void;
  /** Fresh messages were added below while the reader was away from the bottom. */
  freshBelow(count: number): void;
  /** A fresh critical message entered the DOM. */
  critical(view: MessageView): void;
  /** A message left the DOM (wall mode keeps only the latest). */
  removed(view: MessageView): void;
  /** The reader reached the bottom, or left it. */
  bottom(atBottom: boolean): void;
}

interface Day {
  separator: HTMLLIElement;
  label: HTMLHeadingElement;
  at: Date;
  firstSeq: number;
}

/**
 * The `<ol>` of messages, in seq order whatever order they arrive in, each seq once, with a day
 * separator before each day's first message. Messages are queued and inserted once per frame, as
 * one fragment per run; seq → element is a Map (no DOM query per message); layout is read at most
 * once per flush, and twice when content changes above the reader (to keep their place).
 */
export class MessageList {
  readonly #list: HTMLOListElement;
  readonly #hooks: ListHooks;
  readonly #shown = new Map<number, MessageView>();
  /** Seqs in the DOM, ascending. */
  #order: number[] = [];
  readonly #pending = new Map<number, { m: ChatMessage; fresh: boolean }>();
  readonly #days = new Map<string, Day>();
  /** Messages whose relative time may still change. */
  readonly #moving = new Set<MessageView>();
  #lastSeq = 0;
  #frame = 0;
  #fallback: ReturnType<typeof setTimeout> | undefined;
  #atBottom = true;
  #keep: number | null = null;

  constructor(list: HTMLOListElement, end: HTMLElement, hooks: ListHooks) {
    this.#list = list;
    this.#hooks = hooks;
    new IntersectionObserver(
      (entries) => {
        const entry = entries.at(-1);
        if (entry === undefined || entry.isIntersecting === this.#atBottom) return;
        this.#atBottom = entry.isIntersecting;
        hooks.bottom(this.#atBottom);
      },
      { rootMargin: `0px 0px ${STICKY_BOTTOM_PX}px 0px` },
    ).observe(end);
  }

  /** The highest seq shown or queued (0 before any). */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** The lowest seq shown or queued; with none, the one after the last seen. */
  get firstSeq(): number {
    let first = this.#order[0] ?? this.#lastSeq + 1;
    for (const seq of this.#pending.keys()) first = Math.min(first, seq);
    return first;
  }

  get size(): number {
    return this.#order.length;
  }

  get atBottom(): boolean {
    return this.#atBottom;
  }

  view(seq: number): MessageView | undefined {
    return this.#shown.get(seq);
  }

  /** Keep only the latest `n` messages in the DOM (wall mode), or all (`null`). */
  set keep(n: number | null) {
    this.#keep = n;
    if (n !== null && this.#order.length > n) this.#schedule();
  }

  /**
   * Queues messages for the next frame; seqs shown or queued already are ignored. `fresh`: they
   * arrived live (they count as new for the reader, and a critical one flags the tab).
   */
  add(messages: readonly ChatMessage[], fresh = false): void {
    for (const m of messages) {
      if (this.#shown.has(m.seq) || this.#pending.has(m.seq)) continue;
      this.#pending.set(m.seq, { m, fresh });
      this.#lastSeq = Math.max(this.#lastSeq, m.seq);
    }
    if (this.#pending.size > 0) this.#schedule();
  }

  scrollToBottom(): void {
    this.flush();
    this.#toBottom();
  }

  /** Relative times and day labels as of `now`; only those that may still change are visited. */
  refreshTimes(now: Date): void {
    for (const view of this.#moving) {
      const text = messageTime(view.at, now);
      if (view.time.textContent !== text) view.time.textContent = text;
      if (!timeStillMoves(view.at, now)) this.#moving.delete(view);
    }
    for (const day of this.#days.values()) {
      const text = dayLabel(day.at, now);
      if (day.label.textContent !== text) day.label.textContent = text;
    }
  }

  #schedule(): void {
    if (this.#frame !== 0) return;
    this.#frame = requestAnimationFrame(() => this.flush());
    this.#fallback = setTimeout(() => this.flush(), FLUSH_FALLBACK_MS);
  }

  /** Inserts what is queued now (it runs by itself on the next frame). */
  flush(): void {
    cancelAnimationFrame(this.#frame);
    clearTimeout(this.#fallback);
    this.#frame = 0;
    const trimBy = this.#keep === null ? 0 : Math.max(0, this.#order.length + this.#pending.size - this.#keep);
    if (this.#pending.size === 0 && trimBy === 0) return;
    const start = performance.now();
    const now = new Date();
    const batch = [...this.#pending.values()].sort((a, b) => a.m.seq - b.m.seq);
    this.#pending.clear();

    const firstInDom = this.#order[0] ?? Number.POSITIVE_INFINITY;
    const lastInDom = this.#order.at(-1) ?? 0;
    const older: MessageView[] = [];
    const newer: MessageView[] = [];
    const between: MessageView[] = [];
    let freshBelow = 0;
    const critical: MessageView[] = [];
    for (const { m, fresh } of batch) {
      const view = renderMessage(m, now);
      this.#shown.set(m.seq, view);
      if (timeStillMoves(view.at, now)) this.#moving.add(view);
      if (m.seq > lastInDom) {
        newer.push(view);
        if (fresh) freshBelow++;
      } else if (m.seq < firstInDom) older.push(view);
      else between.push(view);
      if (fresh && view.level === 'critical') critical.push(view);
    }

    const following = newer.length > 0 && this.#atBottom;
    const changesAbove = older.length > 0 || between.length > 0 || trimBy > 0;
    // The reader's place: the first message in view that stays, and where it is (the layout read before).
    const anchor = !following && changesAbove ? this.#firstVisible(Math.max(0, trimBy - older.length)) : undefined;
    const anchorTop = anchor?.item.getBoundingClientRect().top;

    if (older.length > 0) {
      const fragment = document.createDocumentFragment();
      for (const view of older) fragment.append(view.item);
      this.#list.prepend(fragment);
    }
    if (newer.length > 0) {
      const fragment = document.createDocumentFragment();
      for (const view of newer) fragment.append(view.item);
      this.#list.append(fragment);
    }
    const order = [...older.map((v) => v.seq), ...this.#order, ...newer.map((v) => v.seq)];
    for (const view of between) {
      const at = upperBound(order, view.seq);
      const next = this.#shown.get(order[at]!)!.item;
      // Before the next message's day separator, if it has one; the separator moves up if need be.
      const before = next.previousElementSibling?.classList.contains('day') ? next.previousElementSibling : next;
      this.#list.insertBefore(view.item, before);
      order.splice(at, 0, view.seq);
    }
    this.#order = order;
    for (const view of [...older, ...between, ...newer]) this.#placeDay(view, now);
    this.#trim();

    if (following) this.#toBottom();
    else if (anchor !== undefined && anchorTop !== undefined && anchor.item.isConnected) {
      const moved = anchor.item.getBoundingClientRect().top - anchorTop;
      if (moved !== 0) window.scrollBy(0, moved);
    }
    performance.measure(RENDER_MEASURE, {
      start,
      end: performance.now(),
      detail: { older: older.length, newer: newer.length, between: between.length, shown: this.#order.length },
    });
    if (freshBelow > 0 && !following) this.#hooks.freshBelow(freshBelow);
    for (const view of critical) if (view.item.isConnected) this.#hooks.critical(view);
    this.#hooks.changed();
  }

  /** To the very bottom of the page (one layout read). */
  #toBottom(): void {
    window.scrollTo(0, document.documentElement.scrollHeight);
  }

  /** Puts the separator of the message's day before it when it is the day's first message shown. */
  #placeDay(view: MessageView, now: Date): void {
    const key = dayKey(view.at);
    let day = this.#days.get(key);
    if (day === undefined) {
      const separator = document.createElement('li');
      separator.className = 'day';
      const label = document.createElement('h2');
      label.textContent = dayLabel(view.at, now);
      separator.append(label);
      day = { separator, label, at: view.at, firstSeq: view.seq };
      this.#days.set(key, day);
    } else if (view.seq > day.firstSeq) return;
    day.firstSeq = view.seq;
    this.#list.insertBefore(day.separator, view.item);
  }

  /** Drops the oldest messages beyond `keep`, and the separators of days left with none. */
  #trim(): void {
    if (this.#keep === null || this.#order.length <= this.#keep) return;
    const gone = this.#order.splice(0, this.#order.length - this.#keep);
    for (const seq of gone) {
      const view = this.#shown.get(seq)!;
      this.#shown.delete(seq);
      this.#moving.delete(view);
      view.item.remove();
      this.#hooks.removed(view);
    }
    const first = this.#shown.get(this.#order[0]!)!;
    for (const [key, day] of this.#days) {
      if (day.firstSeq >= first.seq) continue;
      if (key === dayKey(first.at)) {
        day.firstSeq = first.seq;
        this.#list.insertBefore(day.separator, first.item);
      } else {
        day.separator.remove();
        this.#days.delete(key);
      }
    }
  }

  /** The first message from `skip` on at least partly in or below the viewport (a binary search: one layout). */
  #firstVisible(skip: number): MessageView | undefined {
    let lo = skip;
    let hi = this.#order.length - 1;
    let found: MessageView | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const view = this.#shown.get(this.#order[mid]!)!;
      if (view.item.getBoundingClientRect().bottom > 0) {
        found = view;
        hi = mid - 1;
      } else lo = mid + 1;
    }
    return found;
  }
}

/** The index of the first value greater than `value` in ascending `values`. */
function upperBound(values: readonly number[], value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
