import DOMPurify, { type Config } from 'dompurify';
import { marked } from 'marked';
import { curlCommand, requestBody, type PageForm } from './request.js';
import { SseParser, type SseEvent } from './sse.js';

/*
 * The comparison page. Everything the API answers (model outputs above all, but also error
 * messages, IDs and numbers) is untrusted: it reaches the DOM through textContent, or, for
 * Markdown, through DOMPurify (Trusted Types, 'dompurify' policy). The key lives in `apiKey`
 * and in the password input only: never in a URL, storage or the copied curl.
 */

type Json = Record<string, unknown>;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const apiUrlInput = $<HTMLInputElement>('api-url');
const keyInput = $<HTMLInputElement>('api-key');
const modelsSelect = $<HTMLSelectElement>('models');
const judgesSelect = $<HTMLSelectElement>('judges');
const markdownToggle = $<HTMLInputElement>('markdown');
const runButton = $<HTMLButtonElement>('run');
const stopButton = $<HTMLButtonElement>('stop');
const columnsEl = $('columns');
const errorEl = $('error');
const summaryEl = $('summary');
const curlEl = $('curl');

/** The API's base URL: where this page was served from (its script's folder, so a stage path stays in it). */
const script = document.currentScript as HTMLScriptElement | null;
apiUrlInput.value = new URL('.', script?.src ?? location.href).href;

let apiKey = '';
keyInput.addEventListener('input', () => {
  apiKey = keyInput.value;
});

interface Column {
  modelId: string;
  root: HTMLElement;
  status: HTMLElement;
  output: HTMLElement;
  meta: HTMLElement;
  error: HTMLElement;
  text: string;
}
let columns: Column[] = [];
let running: AbortController | undefined;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const str = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value));
const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function apiUrl(path: string): string {
  const base = apiUrlInput.value.trim() || location.href;
  return new URL(path, base.endsWith('/') ? base : `${base}/`).href;
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return apiKey ? { authorization: `Bearer ${apiKey}`, ...extra } : extra;
}

// ---- the pickers -----------------------------------------------------------------------

async function loadModels(): Promise<void> {
  if (!apiKey) return;
  const response = await fetch(apiUrl('api/v1/models'), { headers: headers(), cache: 'no-store' });
  const answer: unknown = await response.json().catch(() => undefined);
  if (!response.ok) return showError(response.status, answer);
  const ids = list(isObject(answer) ? answer.models : undefined)
    .map((model) => (isObject(model) ? str(model.id) : ''))
    .filter((id) => id !== '');
  for (const select of [modelsSelect, judgesSelect]) {
    const chosen = new Set([...select.selectedOptions].map((option) => option.value));
    select.replaceChildren(...ids.map((id) => Object.assign(el('option', undefined, id), { value: id, selected: chosen.has(id) })));
  }
  hideError();
}
keyInput.addEventListener('change', () => void loadModels().catch(networkError));
apiUrlInput.addEventListener('change', () => void loadModels().catch(networkError));

// ---- the request -----------------------------------------------------------------------

function form(): PageForm {
  const value = (id: string) => $<HTMLInputElement>(id).value;
  const chosen = (select: HTMLSelectElement) => [...select.selectedOptions].map((option) => option.value);
  return {
    prompt: $<HTMLTextAreaElement>('prompt').value,
    models: chosen(modelsSelect),
    judges: chosen(judgesSelect),
    weights: { accuracy: value('w-accuracy'), speed: value('w-speed'), cost: value('w-cost') },
    settings: { temperature: value('g-temperature'), maxTokens: value('g-maxTokens'), topP: value('g-topP') },
  };
}

$('copy-curl').addEventListener('click', () => {
  const command = curlCommand(apiUrl('api/v1/prompt'), requestBody(form()));
  curlEl.textContent = command;
  curlEl.hidden = false;
  navigator.clipboard?.writeText(command).catch(() => undefined);
});

stopButton.addEventListener('click', () => running?.abort());

runButton.addEventListener('click', () => {
  const body = requestBody(form());
  hideError();
  clearResults(list(body.models).map(str));
  running = new AbortController();
  runButton.disabled = true;
  stopButton.disabled = false;
  compare(body, running.signal)
    .catch((error: unknown) => {
      if ((error as Error).name === 'AbortError') markUnfinished('stopped');
      else networkError(error);
    })
    .finally(() => {
      runButton.disabled = false;
      stopButton.disabled = true;
      running = undefined;
    });
});

async function compare(body: Json, signal: AbortSignal): Promise<void> {
  const response = await fetch(apiUrl('api/v1/prompt'), {
    method: 'POST',
    headers: headers({ 'content-type': 'application/json', accept: 'text/event-stream' }),
    body: JSON.stringify(body),
    cache: 'no-store',
    signal,
  });
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream') || !response.body) {
    const answer: unknown = await response.json().catch(() => undefined);
    if (!response.ok) {
      markUnfinished('not run');
      return showError(response.status, answer);
    }
    return onEvent({ event: 'done', data: JSON.stringify(answer) });
  }
  const parser = new SseParser();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    for (const event of parser.push(value)) onEvent(event);
  }
  markUnfinished('ended without a result');
}

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
        renderOutput(column);
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
      showJudging(list(data.evaluations), data.ranking);
      summaryEl.textContent = `creditsUsed ${str(num(data.creditsUsed) ?? '?')} · promptLogId ${str(data.promptLogId)}`;
      return;
    case 'error':
      markUnfinished('failed');
      return showError(undefined, data);
  }
}

// ---- the columns -----------------------------------------------------------------------

function clearResults(modelIds: string[]): void {
  summaryEl.textContent = '';
  $('judging').hidden = true;
  columns = modelIds.map((modelId) => {
    const root = el('article', 'column');
    const status = el('span', 'status');
    const heading = el('h3');
    heading.append(el('span', 'model', modelId), status);
    const column = { modelId, root, status, output: el('div', 'output'), meta: el('div', 'meta'), error: el('div', 'error'), text: '' };
    column.error.hidden = true;
    root.dataset.modelId = modelId;
    setStatus(column, 'running');
    root.append(heading, column.meta, column.error, column.output);
    return column;
  });
  columnsEl.replaceChildren(...columns.map((column) => column.root));
}

function setStatus(column: Column, status: string): void {
  column.status.textContent = status;
  column.status.className = `status ${status.replaceAll(' ', '-')}`;
  column.root.dataset.status = status;
}

function markUnfinished(status: string): void {
  for (const column of columns) if (column.status.textContent === 'running') setStatus(column, status);
}

function showResult(index: number, result: unknown): void {
  const column = columns[index];
  if (!column || !isObject(result)) return;
  const status = str(result.status) || 'completed';
  // A failed or cancelled call answers no output: the text it streamed before it stopped (which
  // it is charged for) stays on the page, marked as cut.
  const cut = str(result.output) === '' && status !== 'completed' && column.text !== '';
  if (!cut) column.text = str(result.output);
  column.root.classList.toggle('cut', cut);
  setStatus(column, status);
  const cost = num(result.providerCost) ?? num(result.estimatedCost);
  const costLabel = num(result.providerCost) === undefined && cost !== undefined ? 'estimated cost' : 'cost';
  column.meta.replaceChildren(
    el('span', 'tokens', `tokens ${str(num(result.tokensIn) ?? '?')} in / ${str(num(result.tokensOut) ?? '?')} out`),
    el('span', 'latency', `${str(num(result.latencyMs) ?? '?')} ms`),
    el('span', 'cost', `${costLabel} $${cost === undefined ? '?' : cost.toFixed(6)}`),
    ...list(result.warnings).map((warning) => el('span', 'warning', `⚠ ${str(warning)}`)),
  );
  const error = isObject(result.error) ? result.error : undefined;
  column.error.hidden = !error;
  column.error.textContent = error
    ? `${str(error.code)}${error.upstreamStatus ? ` (upstream ${str(error.upstreamStatus)})` : ''}: ${str(error.message)}${cut ? ' (the text below arrived before it stopped)' : ''}`
    : '';
  renderOutput(column);
}

const SANITIZE: Config & { RETURN_TRUSTED_TYPE: true } = { RETURN_TRUSTED_TYPE: true, FORBID_TAGS: ['img', 'style', 'form', 'input', 'button'], ALLOW_DATA_ATTR: false };

/** Text by default; Markdown (marked, then DOMPurify) only when the toggle is on. */
function renderOutput(column: Column): void {
  const markdown = markdownToggle.checked;
  column.output.classList.toggle('markdown', markdown);
  if (!markdown) {
    column.output.textContent = column.text;
    return;
  }
  const html = marked.parse(column.text, { async: false, gfm: true });
  column.output.innerHTML = DOMPurify.sanitize(html, SANITIZE) as unknown as string;
}
markdownToggle.addEventListener('change', () => columns.forEach(renderOutput));

// ---- judging ---------------------------------------------------------------------------

function showJudging(evaluations: unknown[], ranking: unknown): void {
  if (evaluations.length === 0 && !Array.isArray(ranking)) return;
  $('judging').hidden = false;
  const models = columns.map((column) => column.modelId);
  // cells[a][b]: what each judge picked when `a` was shown first and `b` second.
  const cells = new Map<string, string[]>();
  const rows: HTMLTableRowElement[] = [row('th', ['judge', 'pair', 'A first', 'B first', 'consistent', 'winner', 'scores'])];
  for (const evaluation of evaluations.filter(isObject)) {
    const judge = str(evaluation.judgeModelId);
    const picks = list(evaluation.orders)
      .filter(isObject)
      .map((order) => {
        const pick =
          isObject(order.verdict) || order.status === 'completed' ? str(order.winner) || 'tie' : `failed: ${str(isObject(order.error) ? order.error.message : order.status)}`;
        const key = `${str(order.answerA)}\u0000${str(order.answerB)}`;
        cells.set(key, [...(cells.get(key) ?? []), `${judge}: ${pick}`]);
        return pick;
      });
    const consistent = evaluation.consistent === true ? 'yes' : evaluation.consistent === false ? 'no' : '–';
    const scores = isObject(evaluation.scores)
      ? Object.entries(evaluation.scores)
          .map(([id, score]) => `${id} ${str(score)}`)
          .join(', ')
      : '';
    const line = row('td', [
      judge,
      `${str(evaluation.modelA)} vs ${str(evaluation.modelB)}`,
      picks[0] ?? '–',
      picks[1] ?? '–',
      consistent,
      str(evaluation.winner) || str(evaluation.status),
      scores,
    ]);
    line.cells[4]?.classList.add(consistent === 'no' ? 'inconsistent' : 'consistent');
    rows.push(line);
  }
  $('evaluations').replaceChildren(...rows);
  const matrix = [row('th', ['A \\ B', ...models])];
  for (const a of models) {
    const line = row('td', [a, ...models.map((b) => (a === b ? '' : (cells.get(`${a}\u0000${b}`) ?? ['–']).join('\n')))]);
    models.forEach((b, i) => {
      if (a === b) line.cells[i + 1]?.classList.add('diagonal');
    });
    matrix.push(line);
  }
  $('matrix').replaceChildren(...matrix);
  showRanking(ranking);
}

function showRanking(ranking: unknown): void {
  if (!Array.isArray(ranking)) return;
  $('judging').hidden = false;
  const fixed = (value: unknown, digits: number) => (num(value) === undefined ? '–' : (value as number).toFixed(digits));
  $('ranking').replaceChildren(
    row('th', ['rank', 'model', 'strength', 'interval', 'win rate', 'W / T / L']),
    ...ranking.filter(isObject).map((entry) => {
      const interval = list(entry.interval);
      return row('td', [
        str(entry.rank ?? '–'),
        str(entry.modelId),
        fixed(entry.strength, 2),
        interval.length === 2 ? `[${fixed(interval[0], 2)}, ${fixed(interval[1], 2)}]` : '–',
        fixed(entry.winRate, 2),
        `${str(entry.wins)} / ${str(entry.ties)} / ${str(entry.losses)}`,
      ]);
    }),
  );
}

function row(cell: 'th' | 'td', texts: string[]): HTMLTableRowElement {
  const line = el('tr');
  line.append(...texts.map((text) => el(cell, undefined, text)));
  return line;
}

// ---- errors ----------------------------------------------------------------------------

/** The API's error body: code, message and each field it names. */
function showError(status: number | undefined, answer: unknown): void {
  const error = isObject(answer) && isObject(answer.error) ? answer.error : undefined;
  const lines = [`${status === undefined ? '' : `${status} `}${str(error?.code) || 'error'}: ${str(error?.message) || 'the API gave no error body'}`];
  for (const detail of list(error?.details).filter(isObject)) lines.push(`  ${str(detail.field)}: ${str(detail.message)}`);
  if (error && num(error.estimatedCreditsRequired) !== undefined) lines.push(`  estimatedCreditsRequired: ${str(error.estimatedCreditsRequired)}`);
  errorEl.textContent = lines.join('\n');
  errorEl.hidden = false;
}

function hideError(): void {
  errorEl.hidden = true;
  errorEl.textContent = '';
}

function networkError(error: unknown): void {
  markUnfinished('failed');
  errorEl.textContent = `The API could not be reached: ${(error as Error).message}`;
  errorEl.hidden = false;
}
