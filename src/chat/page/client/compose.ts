/**
 * The compose box: people with `chat:write` post into the room as themselves (their token's name).
 * The message comes back like any other, over the socket, in seq order; the box only sends it.
 */
import { postMessage } from './api';

export interface Compose {
  /** Shown once the page is live with a token; a wall screen hides it (room.css). True when it was hidden. */
  show(): boolean;
}

export function setUpCompose(
  form: HTMLFormElement,
  text: HTMLTextAreaElement,
  send: HTMLButtonElement,
  status: HTMLElement,
  roomId: string,
  token: () => string | null,
): Compose {
  // One Idempotency-Key per message, kept until it is stored: a retry after a lost answer stores it once.
  let key: string | null = null;
  let forbidden = false;

  async function submit(): Promise<void> {
    const message = text.value;
    const bearer = token();
    if (message.trim() === '' || bearer === null || send.disabled) return;
    key ??= crypto.randomUUID();
    send.disabled = true;
    status.textContent = 'Sending…';
    const answer = await postMessage(roomId, bearer, message, key);
    send.disabled = forbidden;
    if (answer.ok) {
      key = null;
      if (text.value === message) text.value = '';
      status.textContent = '';
      return;
    }
    if (answer.status === 403) {
      // The token reads the room but may not post: say so once, and stop offering.
      forbidden = true;
      send.disabled = true;
      text.disabled = true;
      status.textContent = 'This token may read the room but not post: posting needs chat:write.';
      return;
    }
    // Anything else: the message stays in the box, with the server's reason; a 4xx about the text
    // (too long, blank) is a new message once edited, so its key goes.
    if (answer.status !== undefined && answer.status < 500 && answer.status !== 429) key = null;
    status.textContent = answer.retryAfter ? `${answer.message} Try again in ${answer.retryAfter} s.` : answer.message;
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void submit();
  });
  text.addEventListener('input', () => {
    // A changed text is another message.
    key = null;
  });
  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void submit();
    }
  });
  return {
    show() {
      if (!form.hidden) return false;
      form.hidden = false;
      return true;
    },
  };
}
