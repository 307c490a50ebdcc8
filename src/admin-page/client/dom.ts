/** Small DOM helpers: every value from the API reaches the page as text, never as HTML. */

export function element<T extends HTMLElement>(id: string, type: { new (): T; prototype: T }): T {
  const el = document.getElementById(id);
  if (!(el instanceof type)) throw new Error(`the page has no #${id}`);
  return el;
}

type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, string>> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) if (value !== undefined) node.setAttribute(name, value);
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

export function button(text: string, label: string, onClick: () => void, className?: string): HTMLButtonElement {
  const b = h('button', { type: 'button', 'aria-label': label, class: className }, text);
  b.addEventListener('click', onClick);
  return b;
}

/**
 * A table cell of a row's actions. The cell stays a table cell and a box inside it lays them out:
 * a cell made a flex box itself ends short of its row, and the row's borders step around it.
 */
export function actionsCell(...actions: Child[]): HTMLTableCellElement {
  return h('td', { class: 'actions' }, h('div', { class: 'actions' }, ...actions));
}

/** Disables a control while an action runs, so a double click does not send twice. */
export async function busy<T>(control: HTMLButtonElement, action: () => Promise<T>): Promise<T> {
  control.disabled = true;
  try {
    return await action();
  } finally {
    control.disabled = false;
  }
}

/**
 * Copies a read-only field's text with the Clipboard API where the browser allows it; otherwise the
 * text is selected in the focused field for Ctrl+C. `status` says which happened; `what` names the text.
 */
export async function copyField(field: HTMLInputElement, status: HTMLElement, what: string): Promise<void> {
  try {
    if (!navigator.clipboard) throw new Error('no clipboard');
    await navigator.clipboard.writeText(field.value);
    status.textContent = 'Copied to the clipboard.';
  } catch {
    field.focus();
    field.select();
    status.textContent = `The browser would not copy: the ${what} is selected, press Ctrl+C (⌘C) to copy it.`;
  }
}
