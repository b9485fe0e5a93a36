import { isObject, type Json, list, num, str } from './answer.js';
import { $, el, partsPair, untrusted } from './dom.js';
import { costText, grouped, sumCosts } from './figures.js';

/*
 * The judging section: the matrix of each judge's picks, the evaluations, the ranking and the
 * judges' own figures, drawn from a judged comparison's answer.
 */

// Looked up once, here: a model's Markdown output is in the page too, before these (it
// carries no IDs, see SANITIZE; this holds without that).
const judgingEl = $('judging');
const matrixEl = $<HTMLTableElement>('matrix');
const evaluationsEl = $<HTMLTableElement>('evaluations');
const rankingEl = $<HTMLTableElement>('ranking');
const decidedEl = $('decided');
const judgeStatsEl = $<HTMLTableElement>('judge-stats');
const agreementEl = $('agreement');
/** Each judging table's part (its heading, hint and box): shown only while the table holds rows (fill). */
const judgingParts = new Map([matrixEl, evaluationsEl, rankingEl, judgeStatsEl].map((table) => [table, $(`${table.id}-part`)]));

/** The section hidden and every table emptied, for a new comparison. */
export function clearJudging(): void {
  // Emptied, not only hidden: the next `ranking` event shows the section again before `done`
  // fills the others, which would have shown the last comparison's.
  judgingEl.hidden = true;
  for (const table of judgingParts.keys()) fill(table, []);
  decidedEl.textContent = '';
  agreementEl.replaceChildren();
  agreementEl.hidden = true;
}

/**
 * A judged comparison's answer drawn: `models` are the comparison's in their columns' order, `weights`
 * the judge weights it sent (what decided its winners).
 */
export function showJudging(evaluations: unknown[], ranking: unknown, statistics: unknown, models: string[], weights: Json): void {
  if (evaluations.length === 0 && !Array.isArray(ranking)) return;
  judgingEl.hidden = false;
  // cells[a][b]: what each judge picked when `a` was shown first and `b` second, a line each.
  const cells = new Map<string, HTMLElement[]>();
  const rows: HTMLTableRowElement[] = [row('th', ['judge', 'pair', 'A first', 'B first', 'consistent', 'winner', 'scores', 'weighted scores', 'in ranking', 'reasoning'])];
  for (const evaluation of evaluations.filter(isObject)) {
    const judge = str(evaluation.judgeModelId);
    const picks = list(evaluation.orders)
      .filter(isObject)
      .map((order) => {
        // The judge's pick, or its call's error (its vendor's words): made anew for each place it is shown in.
        const completed = isObject(order.verdict) || order.status === 'completed';
        // An error is cut (whole in the line's title, and folded under the evaluation's winner) and
        // wraps: a 5,000-character one, on one line, made the matrix thousands of pixels wide.
        const error = str(isObject(order.error) ? order.error.message : order.status);
        const pick = () => (completed ? [order.winner ? modelId(str(order.winner)) : 'tie'] : ['failed: ', errorStart(error)]);
        const key = `${str(order.answerA)}\u0000${str(order.answerB)}`;
        // A self-judge's pick the ranking leaves out (an independent judge judged the pair) is marked so.
        const excluded = evaluation.inRanking === false;
        const line = el('span', excluded ? 'pick excluded' : 'pick', `${judge}: `);
        line.append(...pick(), excluded ? ' (left out of the ranking)' : '');
        if (!completed && error.length > ERROR_START_CHARS) line.title = error;
        cells.set(key, [...(cells.get(key) ?? []), line]);
        return pick;
      });
    // A failed evaluation has no consistency (the API sends false) and no winner: its error instead.
    const completed = evaluation.status === 'completed';
    const consistent = !completed ? '–' : evaluation.consistent === true ? 'yes' : evaluation.consistent === false ? 'no' : '–';
    const error = isObject(evaluation.error) ? evaluation.error : undefined;
    // The row's name, for a screen reader: a pair is judged once by each judge, so the pair alone names several rows.
    const pair = `${str(evaluation.modelA)} vs ${str(evaluation.modelB)}`;
    const named = `${judge}: ${pair}`;
    const winner = completed ? modelId(str(evaluation.winner)) : stacked([str(evaluation.status) || 'failed', ...(error ? [': ', ...wholeError(str(error.message), named)] : [])]);
    const byModel = (value: unknown) =>
      isObject(value) ? stacked(Object.entries(value).flatMap(([id, score], i) => [...(i === 0 ? [] : [', ']), modelId(`${id} ${str(score)}`)])) : '–';
    const line = row(
      'td',
      [
        modelId(judge),
        pair,
        picks[0] ? stacked(picks[0]()) : '–',
        picks[1] ? stacked(picks[1]()) : '–',
        consistent,
        winner,
        byModel(evaluation.scores),
        byModel(evaluation.weightedScores),
        inRanking(evaluation),
        reasoning(evaluation, named),
      ],
      1,
    );
    line.cells[1]?.setAttribute('aria-label', named);
    if (consistent !== '–') line.cells[4]?.classList.add(consistent === 'no' ? 'inconsistent' : 'consistent');
    if (evaluation.inRanking === false) line.classList.add('excluded');
    rows.push(line);
  }
  fill(evaluationsEl, rows);
  decidedEl.textContent = decidedBy(weights);
  const matrix = [row('th', ['A \\ B', ...models])];
  for (const a of models) {
    const line = row('td', [a, ...models.map((b) => (a === b ? '' : stacked(cells.get(`${a}\u0000${b}`) ?? ['–'])))], 0);
    models.forEach((b, i) => {
      if (a === b) line.cells[i + 1]?.classList.add('diagonal');
    });
    matrix.push(line);
  }
  fill(matrixEl, matrix);
  showRanking(ranking);
  showJudges(evaluations, statistics);
}

/** How much of a judge call's error the judging tables show at first (a vendor's can run to thousands of characters). */
const ERROR_START_CHARS = 200;

/** At most `max` characters of `text`, then "…" (never cut between the two halves of a surrogate pair). */
function shortened(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, partsPair(text, max) ? max - 1 : max)}…`;
}

/** The start of a judge call's error, in a box of its own that wraps (page.css, .message). */
function errorStart(message: string): HTMLElement {
  const start = untrusted(shortened(message, ERROR_START_CHARS));
  start.className = 'message';
  return start;
}

/** A failed evaluation's error: its start, and the whole of a longer one folded under it (its disclosure named after its row, `row`). */
function wholeError(message: string, row: string): Node[] {
  if (message.length <= ERROR_START_CHARS) return [errorStart(message)];
  const details = el('details', 'whole-message');
  const text = el('p');
  text.append(untrusted(message));
  details.append(disclosure('whole message', `whole message, ${row}`), text);
  return [errorStart(message), details];
}

/** A disclosure's summary: `text` shown, `name` said, which holds `text` (WCAG 2.5.3: a voice command says what it reads), and its row (every row's says the same words). */
function disclosure(text: string, name: string): HTMLElement {
  const summary = el('summary', undefined, text);
  summary.setAttribute('aria-label', name);
  return summary;
}

/** A model ID in a judging table's cell, never broken at its hyphens (the cell wraps between IDs, not in one). */
function modelId(text: string): HTMLElement {
  return el('span', 'id', text);
}

function stacked(nodes: (Node | string)[]): DocumentFragment {
  const fragment = document.createDocumentFragment();
  fragment.append(...nodes);
  return fragment;
}

/**
 * A share as a whole percent, but never 0 % or 100 % for one that is neither: a judge
 * consistent in 249 pairs of 250 reads "> 99 %", not "100 %", which says it was never
 * inconsistent.
 */
function percent(value: number): string {
  if (value > 0 && value < 0.01) return '< 1 %';
  if (value < 1 && value > 0.99) return '> 99 %';
  return `${Math.round(value * 100)} %`;
}

/**
 * A row per judge: its calls, tokens and cost (added up from the evaluations' orders, as the
 * answer gives them), then how it judged (judgeStatistics, docs/judging.md); under the table,
 * how far each two judges agree.
 */

function showJudges(evaluations: unknown[], statistics: unknown): void {
  const stats = isObject(statistics) ? statistics : {};
  const byJudge = new Map<string, { orders: Json[]; stats?: Json }>();
  const entry = (judge: string) => {
    const found = byJudge.get(judge) ?? { orders: [] };
    byJudge.set(judge, found);
    return found;
  };
  for (const evaluation of evaluations.filter(isObject)) entry(str(evaluation.judgeModelId)).orders.push(...list(evaluation.orders).filter(isObject));
  for (const judge of list(stats.judges).filter(isObject)) entry(str(judge.judgeModelId)).stats = judge;
  const share = (value: unknown) => (num(value) === undefined ? '–' : percent(value as number));
  const sum = (orders: Json[], field: string) => orders.reduce((total, order) => total + (num(order[field]) ?? 0), 0);
  // Calls whose usage was missing (charged an estimate) count no tokens: said, as a model's column says it.
  const tokens = (orders: Json[]) => {
    const missing = orders.filter((order) => order.providerCost === null).length;
    if (missing > 0 && missing === orders.length) return 'unknown (usage missing)';
    return `${grouped(sum(orders, 'tokensIn'))} / ${grouped(sum(orders, 'tokensOut'))}${missing > 0 ? ` (usage missing for ${missing} of ${orders.length} calls)` : ''}`;
  };
  fill(judgeStatsEl, [
    row('th', ['judge', 'calls', 'failed', 'tokens in / out', 'cost', 'pairs', 'position consistency', 'chose position A', 'decisive', 'longer won']),
    ...[...byJudge].map(([judge, { orders, stats: own }]) => {
      return row(
        'td',
        [
          withNotes(judge, orders),
          grouped(orders.length),
          grouped(orders.filter((order) => order.status === 'failed').length),
          tokens(orders),
          costText(sumCosts(orders)),
          grouped(own?.pairs, '–'),
          share(own?.positionConsistency),
          share(own?.chosePositionA),
          share(own?.decisive),
          share(own?.longerWon),
        ],
        0,
      );
    }),
  ]);
  const fixed = (value: unknown) => (num(value) === undefined ? '–' : (value as number).toFixed(2));
  const agreement = isObject(stats.agreement) ? stats.agreement : undefined;
  const items = list(agreement?.judgePairs)
    .filter(isObject)
    .map((pair) => {
      const [a, b] = list(pair.judges).map(str);
      return el('li', undefined, `${a} and ${b}: agreement ${share(pair.agreement)}, Cohen's κ ${fixed(pair.cohensKappa)} over ${grouped(pair.pairs)} pairs`);
    });
  if (agreement && num(agreement.fleissPairs))
    items.push(el('li', undefined, `All judges: Fleiss' κ ${fixed(agreement.fleissKappa)} over ${grouped(agreement.fleissPairs)} pairs`));
  agreementEl.replaceChildren(...items);
  agreementEl.hidden = items.length === 0;
}

/** How many of a judge's distinct call warnings its row shows (a retired ID answered by another model, an estimate), the rest counted. */
const JUDGE_NOTES_SHOWN = 3;

/** A judge's name with the distinct warnings its calls carry, each on a line of its own. */
function withNotes(judge: string, orders: Json[]): string | Node {
  const notes = [...new Set(orders.flatMap((order) => list(order.warnings).map(str)).filter((note) => note !== ''))];
  if (notes.length === 0) return judge;
  const cell = el('span');
  cell.append(judge, ...notes.slice(0, JUDGE_NOTES_SHOWN).map((note) => el('span', 'note', note)));
  if (notes.length > JUDGE_NOTES_SHOWN) cell.append(el('span', 'note', `and ${notes.length - JUDGE_NOTES_SHOWN} more warnings`));
  return cell;
}

/**
 * What decided the winners: the position-swap verdict with the default weights (or any that
 * weigh accuracy only), the higher weighted score when speed or cost weigh anything
 * (docs/reference.md, Judging).
 */
function decidedBy(weights: Json): string {
  const weight = (name: string, fallback: number) => (weights[name] === undefined ? fallback : weights[name]);
  const [accuracy, speed, cost] = [weight('accuracy', 1), weight('speed', 0), weight('cost', 0)];
  const said = `judge weights accuracy ${str(accuracy)}, speed ${str(speed)}, cost ${str(cost)}`;
  return num(speed) || num(cost)
    ? `The higher weighted score decided each winner (${said}), whatever the judge picked.`
    : `The position-swap verdict decided each winner: a model the judge picked in both orders wins, orders that disagree are a tie (${said}).`;
}

/**
 * Whether the ranking counts an evaluation, and why not: it failed, or a judge of a contestant's
 * own model or family. A reason in a box of its own that wraps between words (the model ID
 * unbroken), at least 14rem wide: squeezed, it took a word a line and split the ID at its hyphens.
 */
function inRanking(evaluation: Json): Node | string {
  const self = isObject(evaluation.selfPreference) ? evaluation.selfPreference : undefined;
  const relation = self ? [`${str(self.relation)} judge of `, modelId(str(self.modelId))] : [];
  const reason = (...parts: (string | Node)[]) => {
    const box = el('span', 'reason');
    box.append(...parts);
    return box;
  };
  if (evaluation.inRanking === false && evaluation.status !== 'completed') return 'no: it failed';
  if (evaluation.inRanking === false) return reason('no: ', ...(self ? relation : ['left out']), "; an independent judge's verdict counts");
  if (evaluation.inRanking !== true) return '–';
  return self ? reason('yes, though a ', ...relation, ': no independent verdict on the pair') : 'yes';
}

/** The judge's reasoning for each order, folded: it can be long (up to 1,000 characters an order). Its disclosure named after its row, `row`. */
function reasoning(evaluation: Json, row: string): Node | string {
  const reasons = list(evaluation.orders)
    .filter(isObject)
    .filter((order) => isObject(order.verdict) && str(order.verdict.reasoning) !== '')
    .map((order) => {
      const line = el('p', undefined, `${str(order.answerA)} shown first: `);
      line.append(untrusted((order.verdict as Json).reasoning));
      return line;
    });
  if (reasons.length === 0) return '–';
  const details = el('details', 'reasoning');
  details.append(disclosure('show', `show reasoning, ${row}`), ...reasons);
  return details;
}

export function showRanking(ranking: unknown): void {
  if (!Array.isArray(ranking)) return;
  judgingEl.hidden = false;
  const fixed = (value: unknown, digits: number) => (num(value) === undefined ? '–' : (value as number).toFixed(digits));
  fill(rankingEl, [
    row('th', ['rank', 'model', 'strength', 'interval', 'win rate', 'W / T / L']),
    ...ranking.filter(isObject).map((entry) => {
      const interval = list(entry.interval);
      return row(
        'td',
        [
          str(entry.rank ?? '–'),
          str(entry.modelId),
          fixed(entry.strength, 2),
          interval.length === 2 ? `[${fixed(interval[0], 2)}, ${fixed(interval[1], 2)}]` : '–',
          fixed(entry.winRate, 2),
          `${str(entry.wins)} / ${str(entry.ties)} / ${str(entry.losses)}`,
        ],
        1,
      );
    }),
  ]);
}

/**
 * A table's row. A row of `th` is the column headers (scope col); a row
 * of `td` has its cell at `header` as the row's header (a `th`, scope row), for a screen
 * reader to name each cell by.
 */
function row(cell: 'th' | 'td', contents: (string | Node)[], header?: number): HTMLTableRowElement {
  const line = el('tr');
  line.append(
    ...contents.map((content, i) => {
      const node = el(cell === 'th' || i === header ? 'th' : 'td');
      if (node.localName === 'th') node.scope = cell === 'th' ? 'col' : 'row';
      node.append(content);
      return node;
    }),
  );
  return line;
}

/** A judging table's rows; its part (heading, hint, box) is shown only with some. */
function fill(table: HTMLTableElement, rows: HTMLTableRowElement[]): void {
  table.replaceChildren(...rows);
  const part = judgingParts.get(table);
  if (part) part.hidden = rows.length === 0;
}
