/** The part of highlight.js's API that highlight.ts uses (see hljs.js for why these types are ours). */
export interface Highlighter {
  getLanguage(name: string): object | undefined;
  highlight(code: string, options: { language: string; ignoreIllegals: boolean }): { value: string };
}

export const highlighter: Highlighter;
