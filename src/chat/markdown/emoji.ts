import github from 'emojibase-data/en/shortcodes/github.json';
import iamcal from 'emojibase-data/en/shortcodes/iamcal.json';

/**
 * Emoji shortcodes from Emojibase's data: GitHub's names (what GitHub, GitLab and Jira senders write)
 * and Slack's (iamcal: what Slack-style senders such as Grafana and Alertmanager write); GitHub's
 * emoji wins where both name one. A name in neither set stays the text it is.
 */
let byName: ReadonlyMap<string, string> | undefined;

/** `1F389` → 🎉; a lone code point that is text by default (`26A0` ⚠) gets VS16 to show as emoji. */
function fromHexcode(hexcode: string): string {
  const emoji = String.fromCodePoint(...hexcode.split('-').map((hex) => Number.parseInt(hex, 16)));
  return hexcode.includes('-') || /\p{Emoji_Presentation}/u.test(emoji) ? emoji : `${emoji}\ufe0f`;
}

function table(): ReadonlyMap<string, string> {
  if (byName) return byName;
  const names = new Map<string, string>();
  for (const dataset of [github, iamcal]) {
    for (const [hexcode, shortcodes] of Object.entries(dataset)) {
      const emoji = fromHexcode(hexcode);
      for (const name of typeof shortcodes === 'string' ? [shortcodes] : shortcodes) {
        if (!names.has(name)) names.set(name, emoji);
      }
    }
  }
  byName = names;
  return names;
}

/** The emoji for a shortcode name (`tada`, without colons), or undefined. */
export function emojiForShortcode(name: string): string | undefined {
  return table().get(name);
}
