import DOMPurify, { type Config } from 'dompurify';
import { isObject, type Json, list, num, str } from './answer.js';
import { $, el, partsPair, untrusted } from './dom.js';
import { type Costs, costText, credits, grouped, sumCosts, usd } from './figures.js';
import { clearJudging, showJudging, showRanking } from './judging.js';
import { MARKDOWN_TAGS, MAX_TABLE_CELLS, type Rendered } from './markdown-rules.js';
import { MarkdownThread } from './render-thread.js';
import { curlCommand, type PageForm, readJsonField, requestBody } from './request.js';
import { SseParser, type SseEvent } from './sse.js';

/*
 * The comparison page. Everything the API answers (model outputs above all, but also error
 * messages, IDs and numbers) is untrusted: it reaches the DOM through textContent, or, for
 * Markdown, through DOMPurify (Trusted Types, 'dompurify' policy). The key lives in `apiKey`
 * and in the password input only: never in a URL, storage or the copied curl.
 */

const apiUrlInput = $<HTMLInputElement>('api-url');
const keyInput = $<HTMLInputElement>('api-key');
const modelsSelect = $<HTMLSelectElement>('models');
const judgesSelect = $<HTMLSelectElement>('judges');
const markdownToggle = $<HTMLInputElement>('markdown');
const runButton = $<HTMLButtonElement>('run');
const stopButton = $<HTMLButtonElement>('stop');
const promptInput = $<HTMLTextAreaElement>('prompt');
const systemPromptInput = $<HTMLTextAreaElement>('system-prompt');
const judgePromptInput = $<HTMLTextAreaElement>('judge-prompt');
const schemaInput = $<HTMLTextAreaElement>('response-schema');
const weightInputs = { accuracy: $<HTMLInputElement>('w-accuracy'), speed: $<HTMLInputElement>('w-speed'), cost: $<HTMLInputElement>('w-cost') };
const settingInputs = { temperature: $<HTMLInputElement>('g-temperature'), maxTokens: $<HTMLInputElement>('g-maxTokens'), topP: $<HTMLInputElement>('g-topP') };
const columnsEl = $('columns');
const errorEl = $('error');
const summaryEl = $('summary');
const curlEl = $('curl');

/** The API's base URL: where this page was served from (its script's folder, so a stage path stays in it). */
const script = document.currentScript as HTMLScriptElement | null;
apiUrlInput.value = new URL('.', script?.src ?? location.href).href;

let apiKey = '';
keyInput.addEventListener('input', () => {
  // A key pasted with a blank around it: the gateway takes `Bearer <key>` with one space only.
  apiKey = keyInput.value.trim();
});

interface Column {
  modelId: string;
  root: HTMLElement;
  status: HTMLElement;
  output: HTMLElement;
  /** Why the output is shown as text though Markdown is on (hidden otherwise). */
  note: HTMLElement;
  meta: HTMLElement;
  error: HTMLElement;
  /** The result's structuredOutput (with response_schema): conforms or not, its value or errors. */
  structured: HTMLElement;
  /** Lifts the output's height limit (shown once the output is taller than it). */
  expand: HTMLButtonElement;
  /** Everything the model streamed (or its result's output): what the output shows once painted. */
  text: string;
  /** How much of `text` the output shows: the rest arrived since it was last painted. */
  shown: number;
  /** A paint is scheduled. */
  painting: boolean;
  /**
   * The output shows `text` rendered as Markdown, or will once its first render comes back
   * (firstRenderPending: the text shown meanwhile); not when it shows text for good
   * (the toggle is off, the text is over the limit, its render was too slow, or marked failed on it).
   */
  markdown: boolean;
  /** The person asked for Markdown though the text is over MARKDOWN_MAX_CHARS or its render took over RENDER_LIMIT_MS. */
  markdownAnyway: boolean;
  /** When the output's last Markdown render ended, whatever its outcome (performance.now(); -Infinity: none yet), and how long it took (ms). */
  renderedAt: number;
  renderMs: number;
  /** As text: the block the next text is appended to (none: a new one), and its length. */
  block: HTMLElement | undefined;
  blockChars: number;
  /** What the structured-output box shows (showStructured), so that `done` repeating a result does not build it again. */
  structuredShown: string;
  /** A Markdown render of it waits or runs (its thread's). */
  rendering: boolean;
  /** A Markdown render of it was stopped at RENDER_LIMIT_MS: shown as text since, unless asked anyway. */
  tooSlow: boolean;
  /** The thread its Markdown renders in once asked anyway (no time limit); else the page's. */
  thread: MarkdownThread | undefined;
}

/** Text shown in blocks (appendText): a column's output, or a structured output's value. */
type TextBlocks = Pick<Column, 'output' | 'text' | 'block' | 'blockChars'>;

let columns: Column[] = [];
let running: { controller: AbortController; judged: boolean; requestId?: string } | undefined;
/** The judge weights the last comparison sent (what decides its winners). */
let sentWeights: Json = {};

function apiUrl(path: string): string {
  const base = apiUrlInput.value.trim() || location.href;
  return new URL(path, base.endsWith('/') ? base : `${base}/`).href;
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return apiKey ? { authorization: `Bearer ${apiKey}`, ...extra } : extra;
}

// ---- the pickers -----------------------------------------------------------------------

/** The latest listing asked for: an earlier one's answer (another key's, another URL's) that comes later is not shown. */
let modelsLoad = 0;

async function loadModels(): Promise<void> {
  // Counted before anything is sent: a key cleared or refused at its field makes an earlier key's answer stale too.
  const load = ++modelsLoad;
  if (!apiKey || !checkKeyField()) return;
  let response: Response;
  let answer: unknown;
  try {
    response = await fetch(apiUrl('api/v1/models'), { headers: headers(), cache: 'no-store' });
    answer = await response.json().catch(() => undefined);
  } catch (error) {
    if (load === modelsLoad) showModelsError(`The API could not be reached: ${(error as Error).message}`);
    return;
  }
  if (load !== modelsLoad) return;
  if (!response.ok) return showModelsError(...joinLines(errorLines(response.status, answer).lines));
  const models = list(isObject(answer) ? answer.models : undefined)
    .filter(isObject)
    .filter((model) => str(model.id) !== '');
  for (const select of [modelsSelect, judgesSelect]) {
    const chosen = new Set([...select.selectedOptions].map((option) => option.value));
    select.replaceChildren(...models.map((model) => modelOption(model, chosen)));
    // A chosen model the listing no longer has is chosen no longer: the form changed.
    if (select.selectedOptions.length !== chosen.size) hideCurl();
  }
  for (const filter of pickerFilters) filter.refresh();
  // Its own error only: a comparison's (a refusal, at the fields too) stays until the next comparison.
  showModelsError();
}

/**
 * A model's option: its ID and the vendor model that answers it, marked ⚠ when the listing
 * has notes on it (another model serving the ID, a shutdown announced or past), which its
 * title (and accessible description) gives in full.
 */
function modelOption(model: Json, chosen: Set<string>): HTMLOptionElement {
  const id = str(model.id);
  const upstream = str(model.upstreamModel);
  const notes = list(model.notes)
    .map(str)
    .filter((note) => note !== '');
  const option = el('option', undefined, `${id}${upstream && upstream !== id ? ` (${upstream})` : ''}${notes.length > 0 ? ' ⚠' : ''}`);
  option.value = id;
  option.selected = chosen.has(id);
  option.title = [upstream ? `Answered by ${upstream}` : '', ...notes].filter((line) => line !== '').join('\n');
  // What the picker's filter looks in, a name a line: the ID, its vendor spelling and the vendor model.
  option.dataset.names = [id, str(model.alias), upstream].join('\n').toLowerCase();
  return option;
}

/**
 * A picker's text filter: typing narrows the options shown to those whose ID, vendor spelling
 * or vendor model holds the text, in any case. An option it hides keeps its choice: a click or
 * an arrow key in the list chooses the option it lands on only, and would have unchosen the
 * hidden ones unseen. Down arrow goes from the filter to the list, Escape empties the filter.
 * The line under the list says how many match (role=status: said as the filter changes, not at
 * every option an arrow key chooses) and how many are chosen, naming those the filter hides.
 */
function pickerFilter(select: HTMLSelectElement, input: HTMLInputElement, line: HTMLElement): { refresh(): void } {
  let chosen = new Set<string>();
  const matching = el('span');
  matching.setAttribute('role', 'status');
  const picked = el('span');
  line.replaceChildren(matching, picked);
  // Set only when it differs: a live region's text set again, even the same, may be said again.
  const say = (node: HTMLElement, text: string) => {
    if (node.textContent !== text) node.textContent = text;
  };
  const show = () => {
    const query = input.value.trim().toLowerCase();
    const options = [...select.options];
    for (const option of options) option.hidden = query !== '' && !(option.dataset.names ?? '').includes(query);
    const unseen = [...select.selectedOptions].filter((option) => option.hidden).map((option) => option.value);
    const count = query === '' ? `${options.length} models` : `${options.filter((option) => !option.hidden).length} of ${options.length} match`;
    say(matching, options.length === 0 ? '' : count);
    say(picked, options.length === 0 || chosen.size === 0 ? '' : ` · ${chosen.size} chosen${unseen.length > 0 ? ` (not shown: ${unseen.join(', ')})` : ''}`);
  };
  const refresh = () => {
    chosen = new Set([...select.selectedOptions].map((option) => option.value));
    show();
  };
  select.addEventListener('change', () => {
    for (const option of select.options) if (option.hidden) option.selected = chosen.has(option.value);
    refresh();
  });
  input.addEventListener('input', show);
  input.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowDown') select.focus();
    else if (event.key === 'Escape' && input.value !== '') input.value = '';
    else return;
    event.preventDefault();
    show();
  });
  return { refresh };
}

const pickerFilters = [
  pickerFilter(modelsSelect, $<HTMLInputElement>('models-filter'), $('models-shown')),
  pickerFilter(judgesSelect, $<HTMLInputElement>('judges-filter'), $('judges-shown')),
];

keyInput.addEventListener('change', () => void loadModels());
apiUrlInput.addEventListener('change', () => void loadModels());

// ---- errors at their fields ------------------------------------------------------------

/** A field of the form: the JSON pointer of what it sends, and where its errors are shown (`<id>-error`, under it). */
interface Field {
  pointer: string;
  input: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;
  error: HTMLElement;
}

const formField = (pointer: string, input: Field['input']): Field => ({ pointer, input, error: $(`${input.id}-error`) });
const schemaField = formField('/response_schema', schemaInput);
/** The key: the page's own check only (checkKeyField), as no refusal names it by a pointer. */
const keyField = formField('Authorization', keyInput);
/** In the form's order: a refusal takes the focus to the first it names. */
const fields: Field[] = [
  formField('/prompt', promptInput),
  formField('/system_prompt', systemPromptInput),
  formField('/models', modelsSelect),
  formField('/judges', judgesSelect),
  ...Object.entries(weightInputs).map(([name, input]) => formField(`/judge_weights/${name}`, input)),
  ...Object.entries(settingInputs).map(([name, input]) => formField(`/generation_settings/${name}`, input)),
  formField('/judge_prompt', judgePromptInput),
  schemaField,
];

/** The field a refusal's pointer names: the field's own, or one inside it (`/models/1`, `/response_schema/properties/a`). */
const fieldAt = (pointer: string): Field | undefined => fields.find((f) => pointer === f.pointer || pointer.startsWith(`${f.pointer}/`));

/** Shows `parts` under the field (`aria-invalid`, and its description by `aria-describedby`), or no error when there are none. */
function setFieldError(f: Field, ...parts: (string | Node)[]): void {
  f.error.replaceChildren(...parts);
  f.error.hidden = parts.length === 0;
  if (parts.length === 0) f.input.removeAttribute('aria-invalid');
  else f.input.setAttribute('aria-invalid', 'true');
}

// An error goes as soon as its field changes, not at the next Compare; the schema's "not JSON" stays while it is not.
for (const f of [keyField, ...fields]) {
  f.input.addEventListener(f.input instanceof HTMLSelectElement ? 'change' : 'input', () => {
    if (!f.input.hasAttribute('aria-invalid')) return;
    setFieldError(f);
    if (f === schemaField) checkSchemaField();
  });
}

// ---- the request -----------------------------------------------------------------------

/**
 * Whether the response schema field holds JSON (or nothing), its error shown at it when not.
 * Never clears: an error goes as the field changes (above), so that the API's refusal of a
 * schema that is JSON stays until then.
 */
function checkSchemaField(): ReturnType<typeof readJsonField> {
  const schema = readJsonField(schemaInput.value);
  if (schema.error !== undefined) setFieldError(schemaField, `Response schema: ${schema.error}; nothing is sent or copied until it is JSON.`);
  return schema;
}

/**
 * The characters of an API key (the gateway's): another, such as a zero-width space copied
 * with the key, fails the browser's header before anything is sent (it had been said as an API
 * that could not be reached, and every column marked failed).
 */
const KEY_SHAPE = /^[A-Za-z0-9._~+/=-]*$/;

/** Whether the key can be sent, its error shown at it when not (gone as it changes). */
function checkKeyField(): boolean {
  if (KEY_SHAPE.test(apiKey)) return true;
  setFieldError(
    keyField,
    'API key: it holds a character no API key has (keys are letters, digits and . _ ~ + / = -, often a space or an invisible one copied with it); nothing is sent until it is corrected.',
  );
  return false;
}

/** The form, or nothing when the key cannot be sent or a field the page must parse is not JSON (its error is shown at it). */
function form(): PageForm | undefined {
  if (!checkKeyField()) {
    keyInput.focus();
    return undefined;
  }
  const schema = checkSchemaField();
  if (schema.error !== undefined) {
    schemaInput.focus();
    return undefined;
  }
  const chosen = (select: HTMLSelectElement) => [...select.selectedOptions].map((option) => option.value);
  const values = <K extends string>(inputs: Record<K, HTMLInputElement>) =>
    Object.fromEntries(Object.entries<HTMLInputElement>(inputs).map(([name, input]) => [name, input.value])) as Record<K, string>;
  return {
    prompt: promptInput.value,
    models: chosen(modelsSelect),
    judges: chosen(judgesSelect),
    weights: values(weightInputs),
    settings: values(settingInputs),
    systemPrompt: systemPromptInput.value,
    judgePrompt: judgePromptInput.value,
    responseSchema: schema.value,
  };
}

const copiedEl = $('copied');

/** No curl command shown, nor whether it was copied. */
function hideCurl(): void {
  curlEl.hidden = true;
  curlEl.textContent = '';
  copiedEl.textContent = '';
}

$('copy-curl').addEventListener('click', () => {
  const filled = form();
  hideCurl();
  if (!filled) return;
  const command = curlCommand(apiUrl('api/v1/prompt'), requestBody(filled));
  curlEl.textContent = command;
  curlEl.hidden = false;
  // Said either way (role=status): a browser may refuse the clipboard (no permission, the page not focused).
  // Not once the command has gone (the form changed meanwhile).
  const say = (text: string) => {
    if (!curlEl.hidden && curlEl.textContent === command) copiedEl.textContent = text;
  };
  const refused = 'Not copied: the browser refused the clipboard; select the command below';
  if (!navigator.clipboard) say(refused);
  else
    navigator.clipboard.writeText(command).then(
      () => say('Copied to the clipboard'),
      () => say(refused),
    );
});

// The command shown is the form's when copied: it goes as soon as the form changes (a field
// typed in, a picker's choice, the API URL), as it would no longer be the request Compare
// sends. A Compare of the form as it was leaves it: it is the request sent.
for (const input of [apiUrlInput, ...fields.map((f) => f.input)]) {
  input.addEventListener(input instanceof HTMLSelectElement ? 'change' : 'input', hideCurl);
}

stopButton.addEventListener('click', () => {
  if (!running) return;
  running.controller.abort();
  // When its caller leaves, the gateway lets a request's model calls go on for a 2 s grace
  // (DISCONNECT_GRACE_MS): those that end in it are completed and charged in full, the others
  // cancelled and charged what they had used. Not a judged request's workflow: that runs its
  // models and judges to the end (docs/streaming-api.md). The request ID, once the answer's
  // headers came, to ask about it.
  // Before the answer's headers, the page cannot know whether the request reached the gateway.
  const id = requestIdNote(running.requestId);
  const reached = running.requestId ? '' : 'if the request reached the gateway, ';
  summaryEl.textContent = running.judged
    ? `Stopped in this page only: ${reached}the gateway runs a judged request to its end and charges it in full${id}`
    : `Stopped: ${reached}the gateway lets the calls still running go on for 2 s; those that end by then are charged in full, the others cancelled and charged what they had used${id}`;
});

/** The focus is on Stop, disabled when the comparison ends, or was dropped on the page's body: nowhere a person put it. */
const focusLost = () => document.activeElement === stopButton || document.activeElement === document.body;

runButton.addEventListener('click', () => {
  const filled = form();
  if (!filled) return; // nothing sent: the field says why
  const body = requestBody(filled);
  hideError();
  clearResults(list(body.models).map(str));
  // Said as the run starts (role=status): the status line was only emptied.
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const judges = list(body.judges).length;
  const started = `Comparing ${count(columns.length, 'model')}${judges > 0 ? ` with ${count(judges, 'judge')}` : ''}…`;
  summaryEl.textContent = started;
  const controller = new AbortController();
  running = { controller, judged: body.judges !== undefined };
  sentWeights = isObject(body.judge_weights) ? body.judge_weights : {};
  // A disabled button loses the focus (to the page's body): it moves to Stop, and back.
  const focused = document.activeElement === runButton;
  runButton.disabled = true;
  stopButton.disabled = false;
  if (focused) stopButton.focus();
  compare(body, controller.signal)
    .catch((error: unknown) => {
      if (controller.signal.aborted) return markUnfinished('stopped');
      markUnfinished('failed');
      networkError(error);
    })
    .finally(() => {
      const stranded = focusLost();
      runButton.disabled = false;
      stopButton.disabled = true;
      if (stranded) runButton.focus();
      running = undefined;
      // The summary is a status line (role=status): said once the run has ended, with how each
      // model ended, and what the answer (or Stop) put there meanwhile, not the start's words.
      const meanwhile = summaryEl.textContent === started ? '' : summaryEl.textContent;
      summaryEl.textContent = [outcome(), meanwhile].filter((part) => part).join(' · ');
    });
});

/** How the columns ended: "2 completed, 1 failed". */
function outcome(): string {
  const counts = new Map<string, number>();
  for (const column of columns) counts.set(column.status.textContent ?? '', (counts.get(column.status.textContent ?? '') ?? 0) + 1);
  return [...counts].map(([status, count]) => `${count} ${status}`).join(', ');
}

/** The request's ID, where its answer's headers gave one, to ask the operator about it. */
function requestIdNote(requestId: string | null | undefined): string {
  return requestId ? ` (x-request-id: ${requestId})` : '';
}

/** Fails only when the API cannot be reached (or on Stop): what goes wrong once it answered is shown here. */
async function compare(body: Json, signal: AbortSignal): Promise<void> {
  const response = await fetch(apiUrl('api/v1/prompt'), {
    method: 'POST',
    headers: headers({ 'content-type': 'application/json', accept: 'text/event-stream' }),
    body: JSON.stringify(body),
    cache: 'no-store',
    signal,
  });
  const requestId = response.headers.get('x-request-id');
  if (running && requestId) running.requestId = requestId;
  const id = requestIdNote(requestId);
  const ran = `the request ran, and may have been charged${id}`;
  // Reading the body fails when the connection breaks (or on Stop, which is passed on).
  const broken = (error: unknown) => {
    if (signal.aborted) throw error;
    return undefined;
  };
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream') || !response.body) {
    const answer: unknown = await response.json().catch(broken);
    if (!response.ok) {
      // A refusal (4xx) runs nothing, nor do the gateway's own 501 and 503 (a proxy's may come after it ran); its 500 says what it
      // charged (nothing). API Gateway's 504 (its integration timeout passed while the function
      // ran on) and a 5xx that is not the gateway's error body (a proxy's) may come after the
      // request ran.
      const gatewayError = isObject(answer) && isObject(answer.error) && str(answer.error.code) !== '';
      const mayHaveRun = response.status === 504 || (response.status >= 500 && !gatewayError);
      const ranNothing = response.status < 500 || (gatewayError && (response.status === 501 || response.status === 503));
      markUnfinished(ranNothing ? 'not run' : 'ended without a result');
      return showError(response.status, answer, mayHaveRun ? [`  ${ran}`] : []);
    }
    if (!isObject(answer)) {
      markUnfinished('ended without a result');
      return showMessage(`The gateway's ${response.status} answer is neither an event stream nor a JSON object: the request may have run, and been charged${id}`);
    }
    showEvent({ event: 'done', data: JSON.stringify(answer) });
    return markUnfinished('ended without a result');
  }
  const parser = new SseParser();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let answered = false; // a `done` or `error` event arrived
  for (;;) {
    const chunk = await reader.read().catch(broken);
    if (chunk && !chunk.done) {
      for (const event of parser.push(chunk.value)) {
        answered ||= event.event === 'done' || event.event === 'error';
        showEvent(event);
      }
      continue;
    }
    if (answered) return markUnfinished('ended without a result');
    if (chunk) {
      markUnfinished('ended without a result');
      return showMessage(`The gateway closed the connection before the answer ended: ${ran}`);
    }
    markUnfinished('connection lost');
    return showMessage(`The connection to the gateway was lost before the answer ended: ${ran}`);
  }
}

/**
 * One event shown: what goes wrong showing it (a bug, or an output no renderer foresaw) is
 * said in the error box, and the answer's other events are still read and shown.
 */
function showEvent(event: SseEvent): void {
  try {
    onEvent(event);
  } catch (error) {
    showMessage(`The page could not show a ${event.event} event of the answer: ${messageOf(error)}`);
  }
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function onEvent(event: SseEvent): void {
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    return;
  }
  if (!isObject(data)) return;
  switch (event.event) {
    case 'delta': {
      const column = columns[num(data.index) ?? -1];
      if (column && column.status.textContent === 'running') {
        column.text += str(data.text);
        schedulePaint(column);
      }
      return;
    }
    case 'result':
      return showResult(num(data.index) ?? -1, data.result);
    case 'evaluation':
      return; // the matrix is drawn once from `done`, which carries every evaluation
    case 'ranking':
      return showRanking(data.ranking);
    case 'done':
      for (const [index, result] of list(data.results).entries()) showResult(index, result);
      showJudging(
        list(data.evaluations),
        data.ranking,
        data.judgeStatistics,
        columns.map((column) => column.modelId),
        sentWeights,
      );
      summaryEl.textContent = `creditsUsed ${credits(data.creditsUsed)} · ${providerCosts(list(data.results), list(data.evaluations))} · promptLogId ${str(data.promptLogId)}`;
      return;
    case 'error':
      // After the 200: its message says what was charged (the gateway withdraws such a request:
      // nothing); the request's ID, to ask about it.
      markUnfinished('failed');
      return showError(undefined, data, running?.requestId ? [`  x-request-id: ${running.requestId}`] : []);
  }
}

// ---- the columns -----------------------------------------------------------------------

/**
 * The outputs' boxes, watched: a box whose size changes (the window resized or turned, a column
 * narrowed or widened, 60vh another height) may hold its text whole no longer, or again, and
 * its expand button is decided again. Called once a frame at most, after layout: one read of
 * each changed output's heights, no long task.
 */
const outputSizes = new ResizeObserver((entries) => {
  for (const entry of entries) {
    const column = columns.find((c) => c.output === entry.target);
    if (column) fitExpand(column);
  }
});

function clearResults(modelIds: string[]): void {
  summaryEl.textContent = '';
  outputSizes.disconnect();
  clearJudging();
  // The old columns' renders are not wanted any more, nor the threads of their own; a Markdown thread that did not load is waited for again.
  for (const column of columns) {
    forgetRender(column);
    column.thread?.close();
  }
  markdownThread.retry();
  columns = modelIds.map((modelId, index) => {
    const root = el('article', 'column');
    const status = el('span', 'status');
    // h2: under the page's h1, as the judging tables' headings are. The column is named by its model.
    const heading = el('h2', 'column-heading');
    const model = el('span', 'model', modelId);
    model.id = `model-${index}`;
    root.setAttribute('aria-labelledby', model.id);
    heading.append(model, status);
    const column: Column = {
      modelId,
      root,
      status,
      output: el('div', 'output'),
      note: el('p', 'render-note'),
      meta: el('div', 'meta'),
      error: el('div', 'error'),
      structured: el('div', 'structured'),
      expand: el('button', 'expand', 'Show all of the output'),
      text: '',
      shown: 0,
      painting: false,
      markdown: markdownToggle.checked,
      markdownAnyway: false,
      renderedAt: Number.NEGATIVE_INFINITY,
      renderMs: 0,
      block: undefined,
      blockChars: 0,
      structuredShown: '',
      rendering: false,
      tooSlow: false,
      thread: undefined,
    };
    column.error.hidden = true;
    column.note.hidden = true;
    column.structured.hidden = true;
    root.dataset.modelId = modelId;
    setStatus(column, 'running');
    column.output.id = `output-${index}`;
    column.expand.type = 'button';
    column.expand.hidden = true;
    column.expand.setAttribute('aria-controls', column.output.id);
    column.expand.setAttribute('aria-expanded', 'false');
    column.expand.addEventListener('click', () => {
      const expanded = column.output.classList.toggle('expanded');
      column.expand.setAttribute('aria-expanded', String(expanded));
      column.expand.textContent = expanded ? 'Show less of the output' : 'Show all of the output';
    });
    root.append(heading, column.meta, column.error, column.structured, column.note, column.output, column.expand);
    return column;
  });
  columnsEl.replaceChildren(...columns.map((column) => column.root));
  for (const column of columns) outputSizes.observe(column.output);
}

function setStatus(column: Column, status: string): void {
  column.status.textContent = status;
  column.status.className = `status ${status.replaceAll(' ', '-')}`;
  column.root.dataset.status = status;
}

/** The columns still running get `status`, and show all they streamed, marked as cut where they streamed some (no result came). */
function markUnfinished(status: string): void {
  for (const column of columns) {
    if (column.status.textContent !== 'running') continue;
    column.root.classList.toggle('cut', column.text !== '');
    setStatus(column, status);
    showWhole(column);
    fitExpand(column);
  }
}

function showResult(index: number, result: unknown): void {
  const column = columns[index];
  if (!column || !isObject(result)) return;
  const status = str(result.status) || 'completed';
  // A failed call answers no output: the text it streamed before it stopped (which
  // it is charged for) stays on the page, marked as cut.
  const cut = str(result.output) === '' && status !== 'completed' && column.text !== '';
  const output = str(result.output);
  // The output is what was streamed (and `done` repeats the result): shown already, or to
  // be appended. Only another text is rendered again.
  const streamed = cut || output === column.text || (!column.markdown && output.startsWith(column.text));
  if (!cut) column.text = output;
  column.root.classList.toggle('cut', cut);
  setStatus(column, status);
  const cost = num(result.providerCost) ?? num(result.estimatedCost);
  const costLabel = num(result.providerCost) === undefined && cost !== undefined ? 'estimated cost' : 'cost';
  // A null providerCost is the API's word that the vendor's usage was missing or could not be
  // true (its tokens are then sent as 0): the tokens are not known, not none.
  // The subsets of the counts the vendor reported (usage): shown when not 0. Anthropic and
  // Bedrock count thinking inside the output and never apart: no reasoningTokensOut there.
  const usage = isObject(result.usage) ? result.usage : {};
  const parts = (...counts: [unknown, string][]) => {
    const shown = counts.filter(([value]) => num(value)).map(([value, what]) => `${grouped(value)} ${what}`);
    return shown.length > 0 ? ` (${shown.join(', ')})` : '';
  };
  // Cache writes too: priced above input (Anthropic's 1.25 times), they say why a call cost more than its tokens suggest.
  const tokens =
    result.providerCost === null
      ? 'tokens unknown (usage missing)'
      : `tokens ${grouped(result.tokensIn)} in${parts([usage.cachedTokensIn, 'cached'], [usage.cacheWriteTokensIn, 'cache writes'])} / ${grouped(result.tokensOut)} out${parts([usage.reasoningTokensOut, 'reasoning'])}`;
  column.meta.replaceChildren(
    el('span', 'tokens', tokens),
    el('span', 'latency', `${grouped(result.latencyMs)} ms`),
    el('span', 'cost', `${costLabel} $${cost === undefined ? '?' : usd(cost)}`),
    ...list(result.warnings).map((warning) => {
      const line = el('span', 'warning', '⚠ ');
      line.append(untrusted(warning));
      return line;
    }),
  );
  const error = isObject(result.error) ? result.error : undefined;
  column.error.hidden = !error;
  column.error.replaceChildren(
    ...(error
      ? [
          `${str(error.code)}${error.upstreamStatus ? ` (upstream ${str(error.upstreamStatus)})` : ''}: `,
          untrusted(error.message),
          cut ? ' (the text below arrived before it stopped)' : '',
        ]
      : []),
  );
  showStructured(column, result.structuredOutput);
  if (streamed) showWhole(column);
  else renderOutput(column);
  fitExpand(column);
}

/**
 * A result's structuredOutput: ✓ with the parsed value, or ✗ with what broke the schema (as
 * text). The value in blocks, as an output's text: in one text node, 600,000 characters of
 * zero-width joiners and accents held the tab 8 s; and built once, not again for `done`.
 */
function showStructured(column: Column, structured: unknown): void {
  const conforms = isObject(structured) && structured.conforms === true;
  const shown = !isObject(structured) ? '' : conforms ? `✓${JSON.stringify(structured.value, null, 2) ?? ''}` : `✗${JSON.stringify(list(structured.errors).map(str))}`;
  if (shown === column.structuredShown) return;
  column.structuredShown = shown;
  column.structured.hidden = !isObject(structured);
  if (!isObject(structured)) return column.structured.replaceChildren();
  const verdict = el(
    'span',
    `verdict ${conforms ? 'conforms' : 'not-conforming'}`,
    conforms ? 'structured output ✓ conforms to the schema' : 'structured output ✗ does not conform',
  );
  const detail = conforms ? el('pre', 'value') : el('ul', 'errors');
  if (conforms) appendText({ output: detail, text: shown.slice(1), block: undefined, blockChars: 0 }, 0);
  else detail.append(...list(structured.errors).map((error) => el('li', undefined, str(error))));
  column.structured.replaceChildren(verdict, detail);
}

/** The expand button, shown once the output is taller than its box (or while it is expanded). */
function fitExpand(column: Column): void {
  const needed = column.output.classList.contains('expanded') || column.output.scrollHeight > column.output.clientHeight + 1;
  column.expand.hidden = !needed;
}

/**
 * What the request cost in USD, models and judges apart: each result's, and each judge
 * call's (every evaluation's orders), providerCost, or estimatedCost where that is null
 * (the API sends an estimate only then), the estimated part said.
 * `creditsUsed` is these converted at the gateway's rate, which the answer does not give.
 */
function providerCosts(results: unknown[], evaluations: unknown[]): string {
  const models = sumCosts(results);
  const judges = sumCosts(evaluations.filter(isObject).flatMap((evaluation) => list(evaluation.orders)));
  const total: Costs = {
    usd: models.usd + judges.usd,
    estimated: models.estimated === undefined && judges.estimated === undefined ? undefined : (models.estimated ?? 0) + (judges.estimated ?? 0),
    unknown: models.unknown || judges.unknown,
  };
  return evaluations.length > 0 ? `provider cost ${costText(total)}: models ${costText(models)} + judges ${costText(judges)}` : `provider cost ${costText(models)}`;
}

/** All of the column's text, now: as text, what is not shown yet is appended; as Markdown, a text not rendered whole yet is. */
function showWhole(column: Column): void {
  if (column.shown === column.text.length) return;
  // As Markdown rendered before: rendered again; else (as text, or till its first render comes back) appended.
  if (column.markdown && !firstRenderPending(column)) renderOutput(column);
  else paint(column);
}

/**
 * An allow-list: the formatting Markdown writes, nothing that draws controls, dialogs or the
 * page's own landmarks (`dialog`, `textarea`, `select`, `header`, `main`, `details`, … keep
 * only their text), and no attribute an output could name or style itself with (`id`,
 * `name`, `class`, `style`, `hidden`, `data-*`, `aria-*`): it cannot dress up as the page,
 * nor take the ID of one of its elements. Links keep only an http(s) or mailto address.
 */
const SANITIZE: Config & { RETURN_TRUSTED_TYPE: true } = {
  RETURN_TRUSTED_TYPE: true,
  ALLOWED_TAGS: [...MARKDOWN_TAGS],
  ALLOWED_ATTR: ['href', 'title', 'start', 'align', 'colspan', 'rowspan'],
  ALLOWED_URI_REGEXP: /^(?:https?|mailto):/i,
  // DOMPurify checks every attribute it does not know for plain text against the URI
  // pattern: these are not addresses (a table column's `align="left"`, a list's `start="3"`).
  ADD_URI_SAFE_ATTR: ['start', 'align', 'colspan', 'rowspan'],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
};

/**
 * The most columns or rows a table cell of an output spans. A browser takes up to 1,000 and
 * 65,534: 21 KB of cells spanning that many (`<td colspan=1000 rowspan=65534>`) froze the tab
 * for minutes (100 rows 4 to 5 s with collapsed borders). Markdown's own tables span nothing.
 */
const MAX_SPAN = 20;

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  for (const name of ['colspan', 'rowspan']) {
    const value = node.getAttribute(name);
    if (value === null) continue;
    // As a browser reads it (leading digits), at least 1 (a rowspan of 0 spans every row left).
    const span = Number.parseInt(value.trim(), 10);
    node.setAttribute(name, String(span >= 1 ? Math.min(span, MAX_SPAN) : 1));
  }
  // A link in an output opens in a tab of its own, which cannot reach this one: followed here,
  // it would leave the page and the comparison on it.
  if (node.tagName !== 'A' || !node.hasAttribute('href')) return;
  node.setAttribute('target', '_blank');
  node.setAttribute('rel', 'noopener noreferrer');
});

/**
 * Markdown is rendered whole at most this often while it streams (its result renders it at
 * once), and never sooner after a render than four times what that render took (from its
 * text sent to the Markdown thread to its HTML in the page): a slow render leaves the thread,
 * and the page, at least four fifths of the time.
 */
const MARKDOWN_EVERY_MS = 250;
const MARKDOWN_SPACING = 4;

/**
 * Longer outputs are shown as text, with a button that renders them anyway: the page's own
 * part of a render (DOMPurify, then laying the HTML out) grows with the output, 100,000
 * characters of prose about 160 ms a render, again and again while it streams.
 */
const MARKDOWN_MAX_CHARS = 24_000;

/**
 * A Markdown render is stopped after this long, and the output shown as text, with a button
 * that renders it anyway, in a thread of its own with no time limit. marked takes time
 * quadratic in some inputs: 24,000 characters of unmatched emphasis marks (`**a_` repeated)
 * 6 to 10 s, of `a_` about a second; prose 1 MB in a quarter of a second. It renders in a
 * worker, so that the page answers all along, and another column's render waits at most this.
 */
const RENDER_LIMIT_MS = 2_000;

/** The page's Markdown thread (its script beside the page's), with its Trusted Types policy, allowing that script only. */
const threadScript = new URL('page-markdown.js', script?.src ?? location.href).href;
const threadPolicy = (
  window as unknown as { trustedTypes?: { createPolicy(name: string, rules: { createScriptURL(url: string): string }): { createScriptURL(url: string): string } } }
).trustedTypes?.createPolicy('markdown-thread', {
  createScriptURL: (url) => {
    if (url !== threadScript) throw new TypeError(`Not the page's Markdown thread: ${url}`);
    return url;
  },
});
const threadUrl = () => threadPolicy?.createScriptURL(threadScript) ?? threadScript;
const markdownThread = new MarkdownThread(threadUrl, RENDER_LIMIT_MS);

/** Paints the text a column streamed at the next frame (or after `delayMs`): one paint, however many deltas arrive till then. */
function schedulePaint(column: Column, delayMs = 0): void {
  if (column.painting) return;
  column.painting = true;
  const atFrame = () =>
    requestAnimationFrame(() => {
      column.painting = false;
      paint(column);
    });
  if (delayMs > 0) setTimeout(atFrame, delayMs);
  else atFrame();
}

/** As text, the new text is appended (what is shown is never rewritten); as Markdown, the whole text is rendered again. */
function paint(column: Column): void {
  if (column.shown === column.text.length) return; // rendered whole since (its result, the toggle)
  // As Markdown with no render back yet: its first asked for (renderOutput shows the text meanwhile).
  if (firstRenderPending(column) && !column.rendering) return renderOutput(column);
  // As text, and while that first render waits or runs: appended.
  if (!column.markdown || firstRenderPending(column)) {
    appendText(column, column.shown);
    column.shown = column.text.length;
    // Until the output fills its box: after that, the button stays.
    if (column.expand.hidden) fitExpand(column);
    return;
  }
  const wait = column.renderedAt + Math.max(MARKDOWN_EVERY_MS, MARKDOWN_SPACING * column.renderMs) - performance.now();
  if (wait > 0) schedulePaint(column, wait);
  else renderOutput(column);
}

/**
 * The whole text: as text by default; as Markdown (marked in the Markdown thread, then
 * DOMPurify) only when the toggle is on, and the text is not over MARKDOWN_MAX_CHARS and
 * no render of it took over RENDER_LIMIT_MS (unless the person asked for it anyway). The
 * column shows what it showed till the render comes back (showRendered); one render of it at
 * a time, the text it had when the render started.
 */
function renderOutput(column: Column): void {
  // A column a new comparison has taken off the page (a paint it had scheduled): no render, and no thread started for it.
  if (!columns.includes(column)) return;
  if (!markdownToggle.checked) return showText(column);
  if (!column.markdownAnyway && (column.tooSlow || column.text.length > MARKDOWN_MAX_CHARS)) {
    // Said without the text's length, which grows as more text is appended to it.
    const why = column.tooSlow
      ? `Shown as text: rendering it as Markdown took longer than ${RENDER_LIMIT_MS / 1000} s.`
      : `Shown as text: longer than the ${grouped(MARKDOWN_MAX_CHARS)} characters rendered as Markdown.`;
    return showText(column, why, { label: 'Render as Markdown anyway', run: () => renderAnyway(column) });
  }
  if (column.rendering) return; // its render's outcome paints what arrived since
  setRendering(column, true);
  // Its first render: the text till it comes back (its thread loading, say), not an empty box.
  if (firstRenderPending(column)) fillWithText(column);
  (column.thread ?? markdownThread).render(column, {
    text: () => column.text,
    done: (rendered, text, startedAt) => {
      setRendering(column, false);
      // Not for a column a new comparison has taken off the page, nor with the toggle turned off since.
      if (columns.includes(column) && markdownToggle.checked) showRendered(column, rendered, text, startedAt);
    },
  });
}

/** The person asked for Markdown though the text is long or was slow to render: in a thread of the column's own, with no time limit. */
function renderAnyway(column: Column): void {
  column.markdownAnyway = true;
  // A render it still has on the page's thread (a result that replaced its text) is not wanted there any more.
  forgetRender(column);
  column.thread ??= new MarkdownThread(threadUrl, Number.POSITIVE_INFINITY);
  setNote(column, 'Rendering as Markdown…');
  renderOutput(column);
}

/**
 * A render's outcome in its column: the HTML sanitised, or the text with a note saying why not
 * (an output marked cannot render, e.g. "Maximum call stack size exceeded" on thousands of
 * nested quotes, or whose tables are too large): its failure stays in its column. Text that
 * arrived meanwhile is painted next (paint waits four times as long as this render took).
 */
function showRendered(column: Column, rendered: Rendered, text: string, startedAt: number): void {
  try {
    if ('tooSlow' in rendered) {
      column.tooSlow = true;
      renderOutput(column);
    } else if ('html' in rendered) {
      column.output.innerHTML = DOMPurify.sanitize(rendered.html, SANITIZE) as unknown as string;
      column.block = undefined; // the text shown till then, gone
      column.output.classList.add('markdown');
      column.markdown = true;
      // What the output shows, if the column's text still begins with it (streamed since); else it shows another text.
      column.shown = column.text.startsWith(text) ? text.length : -1;
      setNote(column);
      fitExpand(column);
    } else {
      showText(
        column,
        'tooManyCells' in rendered
          ? `Shown as text: its tables would hold more than the ${grouped(MAX_TABLE_CELLS)} cells rendered as Markdown (a row gets as many cells as its table's header).`
          : `Shown as text: Markdown could not be rendered (${rendered.failed}).`,
      );
    }
  } finally {
    // Once the render has ended: the wait before the next one counts from there.
    column.renderedAt = performance.now();
    column.renderMs = column.renderedAt - startedAt;
  }
  // While the model streams, as paint spaces renders; its result, or its end, at once.
  if (column.shown === column.text.length) return;
  if (column.root.dataset.status === 'running') schedulePaint(column);
  else renderOutput(column);
}

/** The whole text as text (its render, if one waits or runs, not wanted), with the note above it (none: hidden). */
function showText(column: Column, note?: string, action?: { label: string; run: () => void }): void {
  forgetRender(column);
  column.markdown = false;
  setNote(column, note, action);
  column.output.classList.remove('markdown');
  fillWithText(column);
  fitExpand(column);
}

/** The output's content replaced by the column's whole text, in blocks. */
function fillWithText(column: Column): void {
  column.output.replaceChildren();
  column.block = undefined;
  appendText(column, 0);
  column.shown = column.text.length;
}

/** Markdown is wanted, and no render of the column has come back yet: its text is shown meanwhile. */
function firstRenderPending(column: Column): boolean {
  return column.markdown && column.renderedAt === Number.NEGATIVE_INFINITY;
}

/** The column's Markdown render, if one waits or runs, is not wanted any more. */
function forgetRender(column: Column): void {
  setRendering(column, false);
  (column.thread ?? markdownThread).forget(column);
}

/** Whether a render of the column waits or runs; its output is busy meanwhile (aria-busy: what it shows is about to change). */
function setRendering(column: Column, rendering: boolean): void {
  column.rendering = rendering;
  column.output.ariaBusy = rendering ? 'true' : null;
}

/**
 * Text is shown in blocks of about this many characters, each ending at a line end: appending
 * lays out the last block again, not the whole text, and a block out of view is not laid out
 * at all (`content-visibility: auto`). A 7 MiB output in one text block took seconds a paint.
 */
const BLOCK_CHARS = 16_384;

/**
 * A block ends at the first line end past BLOCK_CHARS only up to this; else it is cut here,
 * inside a line (a line with no end in 8 MiB, one block, gave 4 to 5 s of long tasks, and
 * 600,000 zero-width joiners, right-to-left overrides and combining accents up to a minute).
 */
const MAX_BLOCK_CHARS = 2 * BLOCK_CHARS;

/** Appends the text from `from` on (the part not shown yet) to its blocks. */
function appendText(column: TextBlocks, from: number): void {
  const text = column.text;
  for (let at = from; at < text.length; ) {
    if (!column.block) {
      column.block = el('div', 'text-block');
      column.blockChars = 0;
      column.output.append(column.block);
    }
    const room = Math.max(0, BLOCK_CHARS - column.blockChars);
    let end = text.length;
    if (end - at > room) {
      // The block ends after the last line end in its room, else after the first one past it
      // up to MAX_BLOCK_CHARS, else there (the searches bounded: a text may have no line end).
      const limit = Math.min(text.length, at + Math.max(0, MAX_BLOCK_CHARS - column.blockChars));
      const last = room > 0 ? text.slice(at, at + room).lastIndexOf('\n') : -1;
      const next = last !== -1 ? -1 : text.slice(at + room, limit).indexOf('\n');
      if (last !== -1) end = at + last + 1;
      else if (next !== -1) end = at + room + next + 1;
      else if (limit < text.length) end = partsPair(text, limit) ? limit + 1 : limit;
    }
    if (end > at) column.block.append(text.slice(at, end));
    column.blockChars += end - at;
    if (end < text.length) {
      // Full: laid out only when in view (page.css). A block not full stays laid out: sized
      // at 60rem while off screen, a short one made its column jump when it came into view.
      column.block.classList.add('full');
      column.block = undefined;
    }
    at = end;
  }
}

/**
 * The note above a column's output (with a button doing `action`), or none. The focus, on the
 * note's button as it goes (Render as Markdown anyway, pressed), goes to the column (named by
 * its model, the output just rendered in it): it fell to the page's body, the place lost.
 * On a note said again, to its new button.
 */
function setNote(column: Column, text?: string, action?: { label: string; run: () => void }): void {
  const focused = column.note.contains(document.activeElement);
  column.note.hidden = text === undefined;
  column.note.textContent = text ?? '';
  if (!action) {
    if (focused) {
      column.root.tabIndex = -1;
      column.root.focus();
    }
    return;
  }
  const button = el('button', 'note-action', action.label);
  button.type = 'button';
  button.addEventListener('click', () => {
    try {
      action.run();
    } catch (error) {
      setNote(column, `This output could not be shown again: ${messageOf(error)}`);
    }
  });
  column.note.append(' ', button);
  // The note said again (more text streamed): its new button keeps the focus.
  if (focused) button.focus();
}

// Every column, whatever one of them does.
markdownToggle.addEventListener('change', () => {
  // Asked again: a Markdown thread that did not load is waited for again, the page's and the columns' own.
  if (markdownToggle.checked) for (const thread of [markdownThread, ...columns.map((column) => column.thread)]) thread?.retry();
  for (const column of columns) {
    try {
      renderOutput(column);
    } catch (error) {
      setNote(column, `This output could not be shown again: ${messageOf(error)}`);
    }
  }
});

// ---- errors ----------------------------------------------------------------------------

/**
 * The API's refusal of a comparison: code, message and each field it names, at that field when
 * it is one of the form's (the box then lists their pointers), else in the box; `after`, lines
 * of the page's own below them.
 */
function showError(status: number | undefined, answer: unknown, after: string[] = []): void {
  const { lines, atFields } = errorLines(status, answer);
  lines.push(...after.map((line) => [line]));
  showMessage(...joinLines(lines));
  for (const [f, messages] of atFields) setFieldError(f, ...joinLines(messages));
  // Taken to the first field named, unless the person has put the focus somewhere meanwhile.
  const first = fields.find((f) => atFields.has(f));
  if (first && focusLost()) first.input.focus();
}

/** An error body as the box's lines (the fields' pointers listed), and the messages for each field of the form it names. */
function errorLines(status: number | undefined, answer: unknown): { lines: (string | Node)[][]; atFields: Map<Field, (string | Node)[][]> } {
  const error = isObject(answer) && isObject(answer.error) ? answer.error : undefined;
  // The messages may carry a vendor's words: isolated from the page's (untrusted).
  const lines: (string | Node)[][] = [
    [`${status === undefined ? '' : `${status} `}${str(error?.code) || 'error'}: `, str(error?.message) ? untrusted(error?.message) : 'the API gave no error body'],
  ];
  const atFields = new Map<Field, (string | Node)[][]>();
  const named: string[] = [];
  const elsewhere: (string | Node)[][] = [];
  for (const detail of list(error?.details).filter(isObject)) {
    const pointer = str(detail.field);
    const at = fieldAt(pointer);
    if (!at) {
      elsewhere.push([`  ${pointer}: `, untrusted(detail.message)]);
      continue;
    }
    named.push(pointer);
    // At its field, a message on the field itself needs no name; one inside it (`/models/1`) keeps its pointer.
    atFields.set(at, [...(atFields.get(at) ?? []), [pointer === at.pointer ? '' : `${pointer}: `, untrusted(detail.message)]]);
  }
  if (named.length > 0) lines.push([`  shown at the form's fields: ${named.join(', ')}`]);
  lines.push(...elsewhere);
  // A 402 adds these beside `error`, at the top level of the body.
  for (const field of ['estimatedCreditsRequired', 'balance']) {
    const value = isObject(answer) ? num(answer[field]) : undefined;
    if (value !== undefined) lines.push([`  ${field}: ${credits(value)}`]);
  }
  // And what the estimate is made of: each model's worst case, and the judge calls'.
  const estimate = isObject(answer) && isObject(answer.estimate) ? answer.estimate : undefined;
  for (const model of list(estimate?.models).filter(isObject)) {
    lines.push([`  estimate ${str(model.modelId)}: ${credits(model.credits)} credits (up to ${grouped(model.outputTokens)} output tokens)`]);
  }
  const judgeCalls = isObject(estimate?.judgeCalls) ? estimate.judgeCalls : undefined;
  if (judgeCalls && num(judgeCalls.calls)) lines.push([`  estimate judge calls: ${grouped(judgeCalls.calls)} calls, ${credits(judgeCalls.credits)} credits`]);
  return { lines, atFields };
}

/** Lines of parts, one after the other with a line end between. */
function joinLines(lines: (string | Node)[][]): (string | Node)[] {
  return lines.flatMap((line, i) => (i === 0 ? line : ['\n', ...line]));
}

/**
 * What the error box says, in two parts: the comparison's (a refusal, a broken answer) and
 * loading the pickers' models' (a key refused, the API not reached), each replaced and cleared
 * on its own: the models loading again took a comparison's refusal with it, or the refusal
 * theirs.
 */
const boxParts: { comparison: (string | Node)[]; models: (string | Node)[] } = { comparison: [], models: [] };

function showBox(): void {
  const { comparison, models } = boxParts;
  errorEl.replaceChildren(...comparison, ...(comparison.length > 0 && models.length > 0 ? ['\n'] : []), ...models);
  errorEl.hidden = comparison.length === 0 && models.length === 0;
}

/** The comparison's message in the box (nothing: its part emptied). */
function showMessage(...parts: (string | Node)[]): void {
  boxParts.comparison = parts;
  showBox();
}

/** Loading the models' message in the box (nothing: its part emptied). */
function showModelsError(...parts: (string | Node)[]): void {
  boxParts.models = parts;
  showBox();
}

/** No comparison's error shown: in the box, nor the refusal's at the fields. */
function hideError(): void {
  showMessage();
  for (const f of fields) setFieldError(f);
}

/** Shows only the error: the columns of a comparison in flight are the comparison's to mark. */
function networkError(error: unknown): void {
  showMessage(`The API could not be reached: ${(error as Error).message}`);
}
