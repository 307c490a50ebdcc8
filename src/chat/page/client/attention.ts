/**
 * What calls the reader back: a critical message flags the tab title ("(!) Room") until it has been
 * in view while the tab was visible and focused; messages that arrive while the reader is scrolled
 * up are counted on an "N new ↓" button that jumps to the bottom.
 */
const TITLE_FLAG = '(!) ';
/** Under the sticky header is not in view. */
const HEADER_PX = 64;

export class Attention {
  #title: string;
  readonly #unseen = new Set<Element>();
  readonly #inView = new Set<Element>();
  readonly #observer: IntersectionObserver;
  readonly #marker: HTMLButtonElement;
  #fresh = 0;

  constructor(marker: HTMLButtonElement, title: string) {
    this.#marker = marker;
    this.#title = title;
    this.#observer = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) {
          if (entry.isIntersecting) this.#inView.add(entry.target);
          else this.#inView.delete(entry.target);
        }
        this.#check();
      },
      { rootMargin: `-${HEADER_PX}px 0px 0px 0px` },
    );
    window.addEventListener('focus', () => this.#check());
    document.addEventListener('visibilitychange', () => this.#check());
  }

  set title(title: string) {
    this.#title = title;
    this.#render();
  }

  /** A fresh critical message: the title stays flagged until it has been seen. */
  critical(item: Element): void {
    this.#unseen.add(item);
    item.classList.add('unseen');
    this.#observer.observe(item);
    this.#render();
  }

  /** A message left the page: it can no longer be seen. */
  removed(item: Element): void {
    if (!this.#unseen.delete(item)) return;
    this.#inView.delete(item);
    this.#observer.unobserve(item);
    this.#render();
  }

  /** Messages arrived below while the reader was scrolled up. */
  freshBelow(count: number): void {
    this.#fresh += count;
    this.#marker.textContent = `${this.#fresh} new ↓`;
    this.#marker.hidden = false;
  }

  /** The reader is at the bottom: nothing below is new any more. */
  atBottom(): void {
    this.#fresh = 0;
    this.#marker.hidden = true;
  }

  #check(): void {
    if (document.visibilityState !== 'visible' || !document.hasFocus()) return;
    for (const item of this.#inView) {
      if (!this.#unseen.delete(item)) continue;
      item.classList.remove('unseen');
      this.#observer.unobserve(item);
    }
    this.#inView.clear();
    this.#render();
  }

  #render(): void {
    const title = this.#unseen.size > 0 ? TITLE_FLAG + this.#title : this.#title;
    if (document.title !== title) document.title = title;
  }
}
