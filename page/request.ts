/** What the page's form holds, as the inputs give it (strings; empty = not set). */
export interface PageForm {
  prompt: string;
  models: string[];
  judges: string[];
  weights: { accuracy: string; speed: string; cost: string };
  settings: { temperature: string; maxTokens: string; topP: string };
  /** Sent as typed when not empty. */
  systemPrompt?: string;
  /** Sent as typed when not empty, with judges only (as the weights). */
  judgePrompt?: string;
  /** The response schema, parsed (readJsonField); undefined: none. */
  responseSchema?: unknown;
}

/**
 * The JSON body of POST /api/v1/prompt for the form: only what the person set. A number
 * field that is not a number in decimal notation is sent as typed, so that the API's 400
 * names the field (the page checks nothing the API checks).
 */
export function requestBody(form: PageForm): Record<string, unknown> {
  const body: Record<string, unknown> = { prompt: form.prompt };
  if (form.systemPrompt) body.system_prompt = form.systemPrompt;
  body.models = form.models;
  if (form.judges.length > 0) {
    body.judges = form.judges;
    if (form.judgePrompt) body.judge_prompt = form.judgePrompt;
    const weights = numbers(form.weights);
    if (weights) body.judge_weights = weights;
  }
  const settings = numbers(form.settings);
  if (settings) body.generation_settings = settings;
  if (form.responseSchema !== undefined) body.response_schema = form.responseSchema;
  return body;
}

/**
 * A JSON field as typed: nothing when it is blank, else its parsed value, or why it is not
 * JSON (the page sends nothing then: a schema cannot be sent as typed, as a number can).
 */
export function readJsonField(text: string): { value?: unknown; error?: string } {
  if (text.trim() === '') return {};
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { error: `not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
}

/**
 * A number as a person types one: digits with an optional sign, decimal point and exponent
 * (`2`, `-0.5`, `.5`, `1e-3`). Number() also reads `0x10`, `0b1`, `0o7` and `Infinity`
 * (and '' as 0): those are not taken for numbers, but sent as typed.
 */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function numbers(fields: Record<string, string>): Record<string, number | string> | undefined {
  const set = Object.entries(fields)
    .map(([name, text]) => [name, text.trim()] as const)
    .filter(([, text]) => text !== '')
    .map(([name, text]) => [name, DECIMAL.test(text) && Number.isFinite(Number(text)) ? Number(text) : text] as const);
  return set.length > 0 ? Object.fromEntries(set) : undefined;
}

/** A shell word in single quotes (a `'` inside becomes `'\''`). */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The request the page sends, as a curl command: the same URL, headers and body byte for
 * byte, with the key left to the shell (`$GATEWAY_KEY`) so that it is never copied.
 */
export function curlCommand(url: string, body: Record<string, unknown>): string {
  return [
    `curl -sN ${shellQuote(url)}`,
    `  -H "Authorization: Bearer $GATEWAY_KEY"`,
    `  -H 'Content-Type: application/json'`,
    `  -H 'Accept: text/event-stream'`,
    `  --data-binary ${shellQuote(JSON.stringify(body))}`,
  ].join(' \\\n');
}
