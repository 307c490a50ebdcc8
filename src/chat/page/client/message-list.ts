import type { ChatMessage } from '../../protocol';
import { type MessageView, renderMessage } from './message-view';
import { dayKey, dayLabel, messageTime, timeStillMoves } from './time-format';

/** Within this many pixels of the bottom, the reader follows new messages. */
const STICKY_BOTTOM_PX = 40;
/** A flush waits for the next frame, or this long when no frame comes (a hidden tab has none). */
const FLUSH_FALLBACK_MS = 250;
/** The name of the performance-timeline measure of each flush (tests and the bench read it). */
export const RENDER_MEASURE = 'room:render';
/** The measure of each drop of the oldest groups while following (tests and the bench read it). */
export const DROP_MEASURE = 'room:drop';
/** The measure of each refresh of the relative times in view (the bench reads it). */
export const TIMES_MEASURE = 'room:times';
/**
 * Messages per group in the DOM. The list holds groups, each an `<li>` with its own `<ol>` of
 * messages, so an insert lays out one group and the browser steps over the others: with every
 * message a child of one list, each insert's layout visited all of them (bench/FINDINGS.md).
 */
const GROUP_SIZE = 100;
/**
 * While the reader follows at the bottom, the DOM keeps about this many messages: the oldest groups
 * go once this many and a group more are in it. A page kept open for days would otherwise hold
 * every message it ever showed (~30 KB of the browser's heap each, whose collections became the
 * long tasks of a live page holding 16,000; bench/FINDINGS.md). Older ones come back as the reader
 * scrolls up; history the reader is reading (away from the bottom) is kept.
 */
export const FOLLOW_KEEP = 1_000;
/** What emptying old groups may take of one drop task, ms (one group at the least; #dropSoon). */
const DROP_BUDGET_MS = 6;
/** What one frame's inserts of new messages aim to take at most, ms; a long task is 50. */
const FRAME_BUDGET_MS = 12;
/** New messages per frame at the least: above 200 a second at 60 frames a second. */
const MIN_SLICE = 4;
/** A backlog of new messages is worked off within this many frames at the most (half a second). */
const CATCH_UP_FRAMES = 30;
/** The weight of the latest flush in the cost per message. */
const COST_WEIGHT = 0.3;

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

/** A run of consecutive messages (and the day separators among them) in its own list item. */
interface Group {
  readonly item: HTMLLIElement;
  readonly list: HTMLOListElement;
}

/**
 * The `<ol>` of messages, in seq order whatever order they arrive in, each seq once, with a day
 * separator before each day's first message. Messages are queued and inserted once per frame, as
 * one fragment per run; seq → element is a Map (no DOM query per message); layout is read at most
 * once per flush, and twice when content changes above the reader (to keep their place). Messages
 * sit in groups of about GROUP_SIZE (the newest group grows to it; older pages arrive as groups).
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
  /** The groups, top to bottom. */
  #groups: Group[] = [];
  /** What inserting one message has cost lately (a moving average over flushes), ms. */
  #msPerMessage = 0.5;
  /**
   * A group is laid out in full once, then marked `settled` (room.css), and only then may the
   * browser skip it out of view: by then it remembers its real height, so skipping it moves nothing.
   * Skipped from the start, it would count as a placeholder height until first shown, and the
   * reader's place (older pages above, a deep link's target) would move when it is.
   */
  readonly #settling = new ResizeObserver((entries) => {
    for (const entry of entries) {
      if (entry.contentRect.height === 0) continue;
      entry.target.classList.add('settled');
      this.#settling.unobserve(entry.target);
    }
  });
  /** A refresh of the relative times in view is due on the next frame (the reader scrolled). */
  #timesFrame = 0;
  /** Groups emptied by #dropOldestGroup, still in the DOM (oldest first) until #removeHollow. */
  #hollow: HTMLLIElement[] = [];
  /** A task that drops the oldest groups is due (#dropSoon). */
  #dropTimer: ReturnType<typeof setTimeout> | undefined;

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
    window.addEventListener('scroll', () => this.#timesOnScroll(), { passive: true });
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
   * Replaces messages shown or queued by their latest version (an `update` frame: an edit, a
   * replacement by key, a deletion), at the same seq; a message not shown here is ignored (the
   * history has its latest version already).
   */
  update(messages: readonly ChatMessage[]): void {
    const now = new Date();
    for (const m of messages) {
      const queued = this.#pending.get(m.seq);
      if (queued) {
        queued.m = m;
        continue;
      }
      const old = this.#shown.get(m.seq);
      if (!old) continue;
      const view = renderMessage(m, now);
      old.item.replaceWith(view.item);
      this.#shown.set(m.seq, view);
      if (this.#moving.delete(old)) this.#moving.add(view);
      // The old element is gone: nothing may wait for it to be seen.
      this.#hooks.removed(old);
    }
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

  /**
   * Relative times and day labels as of `now`. Only the messages in view are refreshed, and those
   * that come into view as the reader scrolls: at a minute's turn every message of a busy minute
   * would change its text at once, and each change lays its message out again (bench/FINDINGS.md,
   * a 470 ms task with 16,000 in the DOM), for text nobody sees.
   */
  refreshTimes(now: Date): void {
    for (const day of this.#days.values()) {
      const text = dayLabel(day.at, now);
      if (day.label.textContent !== text) day.label.textContent = text;
    }
    this.#refreshTimesInView(now);
  }

  #refreshTimesInView(now: Date): void {
    const start = performance.now();
    const first = this.#firstVisible(0);
    if (first === undefined) return;
    const bottom = window.innerHeight;
    for (let i = upperBound(this.#order, first.seq) - 1; i < this.#order.length; i++) {
      const view = this.#shown.get(this.#order[i]!)!;
      if (this.#moving.has(view)) {
        const text = messageTime(view.at, now);
        if (view.time.textContent !== text) view.time.textContent = text;
        if (!timeStillMoves(view.at, now)) this.#moving.delete(view);
      }
      if (view.item.getBoundingClientRect().top > bottom) break;
    }
    performance.measure(TIMES_MEASURE, { start, end: performance.now() });
  }

  /** On scroll: the times that come into view, on the next frame. */
  #timesOnScroll(): void {
    if (this.#timesFrame !== 0) return;
    this.#timesFrame = requestAnimationFrame(() => {
      this.#timesFrame = 0;
      this.#refreshTimesInView(new Date());
    });
  }

  #schedule(): void {
    if (this.#frame !== 0) return;
    this.#frame = requestAnimationFrame(() => this.#flush(true));
    // No frame came: a hidden tab (everything at once, nobody watches it render) or a busy one.
    this.#fallback = setTimeout(() => this.#flush(document.visibilityState === 'visible'), FLUSH_FALLBACK_MS);
  }

  /** Inserts everything queued now (it runs by itself on the next frame, a slice at a time). */
  flush(): void {
    this.#flush(false);
  }

  /**
   * How many new messages below the last one a frame inserts: as many as fit in FRAME_BUDGET_MS at
   * the cost per message of the flushes before, and enough to work off a backlog within
   * CATCH_UP_FRAMES frames. A burst (a reconnect's replay, frames the server held back) is spread
   * over frames instead of one long task.
   */
  #sliceSize(backlog: number): number {
    const affordable = Math.floor(FRAME_BUDGET_MS / this.#msPerMessage);
    return Math.max(MIN_SLICE, affordable, Math.ceil(backlog / CATCH_UP_FRAMES));
  }

  #flush(sliced: boolean): void {
    cancelAnimationFrame(this.#frame);
    clearTimeout(this.#fallback);
    this.#frame = 0;
    const firstInDom = this.#order[0] ?? Number.POSITIVE_INFINITY;
    const lastInDom = this.#order.at(-1) ?? 0;
    let batch = [...this.#pending.values()].sort((a, b) => a.m.seq - b.m.seq);
    // Older and in-between messages all at once (the reader's place is kept per flush); new ones
    // below in slices, except the first messages of an empty list (the latest show at once).
    const firstNewer = sliced && lastInDom > 0 ? batch.findIndex((p) => p.m.seq > lastInDom) : -1;
    if (firstNewer >= 0) batch = batch.slice(0, firstNewer + this.#sliceSize(batch.length - firstNewer));
    const deferred = this.#pending.size - batch.length;
    const trimBy = this.#keep === null ? 0 : Math.max(0, this.#order.length + batch.length - this.#keep);
    if (batch.length === 0 && trimBy === 0) return;
    const start = performance.now();
    const now = new Date();
    for (const { m } of batch) this.#pending.delete(m.seq);
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
      // Older messages go above the first group: emptied ones, still above it, go first.
      this.#removeHollow();
      this.#prepend(older);
    }
    if (newer.length > 0) this.#append(newer);
    const order = [...older.map((v) => v.seq), ...this.#order, ...newer.map((v) => v.seq)];
    const grown = new Set<Element>();
    for (const view of between) {
      const at = upperBound(order, view.seq);
      const next = this.#shown.get(order[at]!)!.item;
      // Before the next message's day separator, if it has one; the separator moves up if need be.
      const before = next.previousElementSibling?.classList.contains('day') ? next.previousElementSibling : next;
      before.before(view.item);
      grown.add(next.parentElement!);
      order.splice(at, 0, view.seq);
    }
    for (const list of grown) this.#split(list);
    this.#order = order;
    for (const view of [...older, ...between, ...newer]) this.#placeDay(view, now);
    this.#trim();
    if (following && this.#keep === null && this.#order.length > FOLLOW_KEEP + GROUP_SIZE) this.#dropSoon();
    // Before the reader's place is restored: what the page changes in turn (the "Load older" button
    // goes when the first message arrives) is then part of what is corrected for.
    this.#hooks.changed();

    if (following) this.#toBottom();
    else if (anchor !== undefined && anchorTop !== undefined && anchor.item.isConnected) {
      const moved = anchor.item.getBoundingClientRect().top - anchorTop;
      if (moved !== 0) window.scrollBy(0, moved);
    }
    const end = performance.now();
    performance.measure(RENDER_MEASURE, {
      start,
      end,
      detail: { older: older.length, newer: newer.length, between: between.length, shown: this.#order.length, deferred },
    });
    if (batch.length > 0) this.#msPerMessage += COST_WEIGHT * ((end - start) / batch.length - this.#msPerMessage);
    if (deferred > 0) this.#schedule();
    if (freshBelow > 0 && !following) this.#hooks.freshBelow(freshBelow);
    for (const view of critical) if (view.item.isConnected) this.#hooks.critical(view);
  }

  #newGroup(): Group {
    const item = document.createElement('li');
    item.className = 'group';
    this.#settling.observe(item);
    const list = document.createElement('ol');
    item.append(list);
    return { item, list };
  }

  /**
   * A group grown past twice GROUP_SIZE (messages inserted between others: a deep link's reads
   * forward fill the gap before the latest group) keeps its first GROUP_SIZE; the rest move to new
   * groups after it. Else one group could hold most of the room, always partly in view, never
   * skipped by the browser, and laid out again whenever content above it changes.
   */
  #split(list: Element): void {
    const index = this.#groups.findIndex((g) => g.list === list);
    const group = this.#groups[index];
    if (group === undefined) return;
    if (messageCount(group.list) <= 2 * GROUP_SIZE) return;
    const children = [...group.list.children];
    const made: Group[] = [];
    let current: Group = group;
    let count = 0;
    // Separators wait for the message they stand before, so a day's label stays in its group.
    let waiting: Element[] = [];
    for (const child of children) {
      if (!child.classList.contains('message')) {
        waiting.push(child);
        continue;
      }
      if (count === GROUP_SIZE) {
        current = this.#newGroup();
        made.push(current);
        count = 0;
      }
      count++;
      if (current !== group) current.list.append(...waiting, child);
      waiting = [];
    }
    if (waiting.length > 0 && current !== group) current.list.append(...waiting);
    group.item.after(...made.map((g) => g.item));
    this.#groups.splice(index + 1, 0, ...made);
  }

  /** Older messages (ascending) above the first: the first group filled up to GROUP_SIZE, new groups above it. */
  #prepend(views: readonly MessageView[]): void {
    let end = views.length;
    const first = this.#groups[0];
    if (first !== undefined) {
      const room = Math.max(0, GROUP_SIZE - first.list.childElementCount);
      const start = Math.max(0, end - room);
      if (start < end) {
        first.list.prepend(fragmentOf(views, start, end));
        end = start;
      }
    }
    const added: Group[] = [];
    while (end > 0) {
      const start = Math.max(0, end - GROUP_SIZE);
      const group = this.#newGroup();
      group.list.append(fragmentOf(views, start, end));
      added.unshift(group);
      end = start;
    }
    if (added.length === 0) return;
    const fragment = document.createDocumentFragment();
    for (const group of added) fragment.append(group.item);
    this.#list.prepend(fragment);
    this.#groups = [...added, ...this.#groups];
  }

  /** Newer messages (ascending) below the last: the last group filled up to GROUP_SIZE, new groups below it. */
  #append(views: readonly MessageView[]): void {
    let start = 0;
    const last = this.#groups.at(-1);
    if (last !== undefined) {
      const room = Math.max(0, GROUP_SIZE - last.list.childElementCount);
      const end = Math.min(views.length, room);
      if (end > 0) {
        last.list.append(fragmentOf(views, 0, end));
        start = end;
      }
    }
    const fragment = document.createDocumentFragment();
    while (start < views.length) {
      const end = Math.min(views.length, start + GROUP_SIZE);
      const group = this.#newGroup();
      group.list.append(fragmentOf(views, start, end));
      fragment.append(group.item);
      this.#groups.push(group);
      start = end;
    }
    this.#list.append(fragment);
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
    view.item.before(day.separator);
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
    this.#daysFrom(first);
    // Groups left with no message go (the first message's group holds its day's separator).
    while (this.#groups.length > 0 && !this.#groups[0]!.list.contains(first.item)) this.#groups.shift()!.item.remove();
  }

  /**
   * While the reader follows, the oldest groups beyond FOLLOW_KEEP leave the DOM, in tasks of their
   * own after the flush, so that work never adds to a frame's inserts. A task empties groups (as
   * many as DROP_BUDGET_MS allows, one at the least); once nothing is left to drop, the last one
   * takes the empty groups out. Emptying a group the browser skips (out of view, room.css) moves
   * nothing, for it keeps its remembered height; taking a group out of the DOM lays out every group
   * after it again (20–45 ms a time with 16,000 messages after it, bench/FINDINGS.md), so that
   * waits until only the kept ones are left. Each task measures itself (DROP_MEASURE).
   */
  #dropSoon(): void {
    if (this.#dropTimer !== undefined) return;
    this.#dropTimer = setTimeout(() => {
      this.#dropTimer = undefined;
      const start = performance.now();
      let dropped = 0;
      const more = () => this.#atBottom && this.#keep === null && this.#order.length > FOLLOW_KEEP + GROUP_SIZE;
      if (more()) {
        while (more() && (dropped === 0 || performance.now() - start < DROP_BUDGET_MS)) {
          const n = this.#dropOldestGroup();
          if (n === 0) break;
          dropped += n;
        }
        this.#hooks.changed();
      } else this.#removeHollow();
      performance.measure(DROP_MEASURE, { start, end: performance.now(), detail: { dropped, shown: this.#order.length } });
      if (more() || this.#hollow.length > 0) this.#dropSoon();
    }, 0);
  }

  /** The oldest group's messages leave the DOM; the emptied group waits in #hollow. Returns how many. */
  #dropOldestGroup(): number {
    const group = this.#groups[0];
    if (group === undefined || this.#groups.length < 2) return 0;
    // Groups hold consecutive runs of #order: the first group's messages are its first entries.
    const count = messageCount(group.list);
    for (const seq of this.#order.splice(0, count)) {
      const view = this.#shown.get(seq)!;
      this.#shown.delete(seq);
      this.#moving.delete(view);
      this.#hooks.removed(view);
    }
    group.list.replaceChildren();
    this.#hollow.push(group.item);
    this.#groups.shift();
    this.#daysFrom(this.#shown.get(this.#order[0]!)!);
    return count;
  }

  /** The emptied groups leave the DOM in one go, the reader kept at the bottom or in their place. */
  #removeHollow(): void {
    if (this.#hollow.length === 0) return;
    const anchor = this.#atBottom ? undefined : this.#firstVisible(0);
    const anchorTop = anchor?.item.getBoundingClientRect().top;
    for (const item of this.#hollow) item.remove();
    this.#hollow = [];
    if (this.#atBottom) this.#toBottom();
    else if (anchor !== undefined && anchorTop !== undefined) {
      const moved = anchor.item.getBoundingClientRect().top - anchorTop;
      if (moved !== 0) window.scrollBy(0, moved);
    }
  }

  /** With `first` the first message left: the separators of days before it go, and its day's moves to it. */
  #daysFrom(first: MessageView): void {
    for (const [key, day] of this.#days) {
      if (day.firstSeq >= first.seq) continue;
      if (key === dayKey(first.at)) {
        day.firstSeq = first.seq;
        first.item.before(day.separator);
      } else {
        day.separator.remove();
        this.#days.delete(key);
      }
    }
  }

  /**
   * The first message from `skip` on at least partly in or below the viewport: a binary search over
   * the groups (their boxes are laid out even where the browser skips their content), then over the
   * messages of the group found, so only laid-out messages are measured (one layout).
   */
  #firstVisible(skip: number): MessageView | undefined {
    let lo = 0;
    let hi = this.#groups.length - 1;
    let group: Group | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.#groups[mid]!.item.getBoundingClientRect().bottom > 0) {
        group = this.#groups[mid];
        hi = mid - 1;
      } else lo = mid + 1;
    }
    lo = skip;
    hi = this.#order.length - 1;
    const messages = group?.list.querySelectorAll<HTMLLIElement>(':scope > li.message');
    if (messages !== undefined && messages.length > 0) {
      const start = upperBound(this.#order, Number(messages[0]!.dataset.seq)) - 1;
      if (start + messages.length - 1 >= skip) {
        lo = Math.max(skip, start);
        hi = start + messages.length - 1;
      }
    }
    let found: MessageView | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const view = this.#shown.get(this.#order[mid]!)!;
      if (view.item.getBoundingClientRect().bottom > 0) {
        found = view;
        hi = mid - 1;
      } else lo = mid + 1;
    }
    // Past the group (a skip beyond it): the first message after the range, if any.
    return found ?? (hi + 1 < this.#order.length ? this.#shown.get(this.#order[hi + 1]!) : undefined);
  }
}

/** The messages of a group's list (its other items are day separators). */
function messageCount(list: Element): number {
  let n = 0;
  for (const child of list.children) if (child.classList.contains('message')) n++;
  return n;
}

function fragmentOf(views: readonly MessageView[], start: number, end: number): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (let i = start; i < end; i++) fragment.append(views[i]!.item);
  return fragment;
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
