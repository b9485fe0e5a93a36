/** Model families of the simulated Responses API, as OpenAI treats them. */

export interface Family {
  /** o-series and GPT-5 and later (not the -chat variants): take `reasoning`, refuse sampling while reasoning. */
  reasoning: boolean;
  /** GPT-5.1 and later, not -pro: take effort `none` (their default) and then accept sampling. */
  effortNone: boolean;
  /** GPT-3.5/4 family: refuse `reasoning`. */
  classic: boolean;
  /** The -pro variants take only these efforts: gpt-5-pro `high`, the later ones `medium`, `high` and `xhigh`. */
  onlyEfforts?: readonly string[];
}

export function familyOf(model: string): Family {
  if (/^o\d+(?:-|$)/.test(model)) return { reasoning: true, effortNone: false, classic: false };
  // gpt-4o, gpt-4.1-mini, gpt-5, gpt-5.4-pro, gpt-5-chat-latest: major, optional minor, then the variant.
  const gpt = /^gpt-(\d+)(?:\.(\d+))?-?(.*)$/.exec(model);
  if (gpt) {
    const major = Number(gpt[1]);
    const minor = Number(gpt[2] ?? 0);
    const variant = gpt[3] ?? '';
    if (major <= 4) return { reasoning: false, effortNone: false, classic: true };
    if (variant.startsWith('pro'))
      return { reasoning: true, effortNone: false, classic: false, onlyEfforts: gpt[2] === undefined && major === 5 ? ['high'] : ['medium', 'high', 'xhigh'] };
    if (!variant.startsWith('chat')) return { reasoning: true, effortNone: major > 5 || minor >= 1, classic: false };
    return { reasoning: false, effortNone: false, classic: true };
  }
  if (model.startsWith('chatgpt-')) return { reasoning: false, effortNone: false, classic: true };
  return { reasoning: false, effortNone: false, classic: false };
}
