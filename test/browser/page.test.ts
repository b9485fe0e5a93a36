import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'puppeteer-core';
import { afterEach, describe, expect, it } from 'vitest';
import { column, compare, ended, type Forward, openPage, type PageProxy, rendered, startProxy, upstreamOf, useBrowser } from './browser.js';
import { openTestAccount } from '../support/accounts.js';
import { useTestHost } from '../support/local.js';

const host = useTestHost();
const browser = useBrowser();

let page: Page | undefined;
let proxy: PageProxy | undefined;
afterEach(async () => {
  await page?.close();
  page = undefined;
  await proxy?.close();
  proxy = undefined;
});

const FAST = 'fam_c-5.4';
const OTHER = 'fam_a-opus-4-6';
const THIRD = 'fam_b-3.1-pro';
// A judge no contestant shares a vendor model with, and whose vendor model has no shutdown announced.
const JUDGE = 'fam_c-5.4-mini';

/** What a column shows, read from the DOM. */
function columnText(page: Page, modelId: string, part: 'status' | 'output' | 'meta' | 'error' | 'render-note'): Promise<string> {
  return page.$eval(`${column(modelId)} .${part}`, (el) => el.textContent ?? '');
}

/** The page's error box, or '' when it is hidden. */
function errorText(page: Page): Promise<string> {
  return page.$eval('#error', (el) => (el.hidden ? '' : (el.textContent ?? '')));
}

/**
 * The form's fields marked invalid (`aria-invalid=true`), in the form's order: each with the
 * error that describes it (`aria-describedby`), and whether that error is shown just under it.
 */
function fieldErrors(page: Page): Promise<[string, string | null, boolean][]> {
  return page.$$eval('.settings [aria-invalid=true]', (els) =>
    els.map((el) => {
      const error = (el.getAttribute('aria-describedby') ?? '')
        .split(' ')
        .map((id) => document.getElementById(id))
        .find((described) => described?.classList.contains('field-error'));
      const field = el.getBoundingClientRect();
      const box = error?.getBoundingClientRect();
      const under = box !== undefined && box.top >= field.bottom - 0.5 && box.top - field.bottom < 16 && box.left < field.right && field.left < box.right;
      return [el.id, !error || error.hidden ? null : error.textContent, under];
    }),
  );
}

/** A count as the page shows it, its thousands grouped (`8,192`), in a RegExp's source; with `positive`, not 0. */
const count = (positive = false) => (positive ? '[1-9]\\d{0,2}(?:,\\d{3})*' : '\\d{1,3}(?:,\\d{3})*');

/** Makes the simulator answer `modelId` with `content`: a `status` fault answering 200 with a well-formed chat completion. */
async function answerWith(modelId: string, content: string): Promise<void> {
  const upstream = await upstreamOf(host(), modelId);
  host().simulator.setFault({
    kind: 'status',
    status: 200,
    model: upstream,
    body: {
      id: 'chatcmpl-chosen',
      object: 'chat.completion',
      created: 1779012345,
      model: upstream,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 20, completion_tokens: 40, total_tokens: 60 },
    },
  });
}

/** One server-sent event, as the gateway writes it. */
const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * A stream the proxy writes itself: `pieces` as deltas of column 0, in 10 writes 30 ms apart;
 * then, once `release` resolves, the result (its output the whole text) and `done`.
 */
function deltaStream(modelId: string, pieces: string[], release: Promise<void>) {
  return async (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'x-request-id': 'req_test' });
    const size = pieces.length / 10;
    for (let at = 0; at < pieces.length; at += size) {
      res.write(
        pieces
          .slice(at, at + size)
          .map((text) => sse('delta', { index: 0, text }))
          .join(''),
      );
      await sleep(30);
    }
    await release;
    const result = { modelId, status: 'completed', output: pieces.join(''), tokensIn: 1, tokensOut: 1, latencyMs: 1, providerCost: 0 };
    res.end(sse('result', { index: 0, result }) + sse('done', { results: [result], creditsUsed: 0, promptLogId: 'pl_test' }));
  };
}

/**
 * JUDGE's evaluation of FAST against OTHER (or `judgeModelId`'s of `modelA` against `modelB`)
 * that failed in its second order with `message` (the evaluation's error too); the first
 * order's verdict gives `reasoning`.
 */
function failedEvaluation(message: string, reasoning = 'r', judgeModelId = JUDGE, modelA = FAST, modelB = OTHER) {
  const order = (answerA: string, answerB: string, fields: Record<string, unknown>) => ({
    answerA,
    answerB,
    status: 'completed',
    verdict: { winner: 'A', scoreA: 8, scoreB: 6, reasoning },
    winner: answerA,
    latencyMs: 1,
    tokensIn: 1,
    tokensOut: 1,
    providerCost: 0,
    ...fields,
  });
  const error = { code: 'upstream_error', message };
  return {
    judgeModelId,
    modelA,
    modelB,
    status: 'failed',
    winner: null,
    consistent: false,
    scores: null,
    weightedScores: null,
    inRanking: false,
    error,
    orders: [order(modelA, modelB, {}), order(modelB, modelA, { status: 'failed', verdict: null, winner: null, error })],
  };
}

/** A completed result of `modelId` with `output`, as the gateway sends it. */
const resultOf = (modelId: string, output: string, fields: Record<string, unknown> = {}) => ({
  modelId,
  status: 'completed',
  output,
  tokensIn: 1,
  tokensOut: 1,
  latencyMs: 1,
  providerCost: 0,
  ...fields,
});

/**
 * A comparison of FAST, OTHER and THIRD at 1280 px whose every judge call, JUDGE's and
 * fam_f-v4-pro's, on every pair, failed its second order with `message` (the first order's
 * reasoning `reasoning`), answered by a proxy; the page once it has ended.
 */
async function compareFailedJudging(message: string, reasoning: string): Promise<Page> {
  const pairs = [
    [FAST, OTHER],
    [FAST, THIRD],
    [OTHER, THIRD],
  ] as const;
  const evaluations = [JUDGE, 'fam_f-v4-pro'].flatMap((judge) => pairs.map(([a, b]) => failedEvaluation(message, reasoning, judge, a, b)));
  proxy = await startProxy(host(), answered([resultOf(FAST, 'a'), resultOf(OTHER, 'b'), resultOf(THIRD, 'c')], { evaluations }));
  // Kept in `page` at once, for afterEach to close should this fail.
  const opened = (page = await openPage(browser(), host(), { url: proxy.url }));
  await opened.setViewport({ width: 1280, height: 900 });
  await compare(opened, { models: [FAST, OTHER, THIRD] });
  await ended(opened);
  return opened;
}

/** A stream the proxy writes itself: each string as it is, each number a pause of that many ms. */
function scripted(...parts: (string | number)[]) {
  return async (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'x-request-id': 'req_test' });
    for (const part of parts) {
      if (typeof part === 'number') await sleep(part);
      else res.write(part);
    }
    res.end();
  };
}

/** A stream of `results` (one per model, in order), each a `result` event 100 ms after the one before, then `done`. */
function answered(results: Record<string, unknown>[], done: Record<string, unknown> = {}) {
  return scripted(...results.flatMap((result, index) => [sse('result', { index, result }), 100]), sse('done', { results, creditsUsed: 0, promptLogId: 'pl_test', ...done }));
}

/** Counts, from now on, the changes of the columns' outputs: mutation records, and nodes removed (rewritten). */
function countPaints(page: Page): Promise<void> {
  return page.evaluate(() => {
    const counts = { records: 0, removed: 0 };
    Object.assign(window, { __paints: counts });
    new MutationObserver((records) => {
      for (const record of records) {
        if (!(record.target instanceof Element) || !record.target.classList.contains('output')) continue;
        counts.records++;
        counts.removed += record.removedNodes.length;
      }
    }).observe(document.getElementById('columns') as HTMLElement, { childList: true, subtree: true, characterData: true });
  });
}

function paints(page: Page): Promise<{ records: number; removed: number }> {
  return page.evaluate(() => (window as unknown as { __paints: { records: number; removed: number } }).__paints);
}

/**
 * The contrast ratio (WCAG 2) of the text of each element `selector` matches that holds text of
 * its own, from its computed color and the first opaque background under it.
 */
function contrasts(page: Page, selector: string): Promise<{ text: string; ratio: number }[]> {
  return page.$$eval(selector, (els) => {
    const rgb = (css: string) => (css.match(/[\d.]+/g) ?? []).map(Number);
    const luminance = ([r, g, b]: number[]) =>
      [r, g, b]
        .map((c) => ((c as number) / 255 <= 0.03928 ? (c as number) / 255 / 12.92 : (((c as number) / 255 + 0.055) / 1.055) ** 2.4))
        .reduce((sum, c, i) => sum + c * ([0.2126, 0.7152, 0.0722][i] as number), 0);
    const background = (el: Element | null): number[] => {
      for (let node = el; node; node = node.parentElement) {
        const color = rgb(getComputedStyle(node).backgroundColor);
        if (color.length === 3 || color[3] === 1) return color.slice(0, 3);
      }
      return [255, 255, 255];
    };
    return els
      .filter((el) => [...el.childNodes].some((node) => node.nodeType === Node.TEXT_NODE && node.textContent?.trim()))
      .map((el) => {
        const [a, b] = [luminance(rgb(getComputedStyle(el).color)), luminance(background(el))].sort((x, y) => y - x) as [number, number];
        return { text: el.textContent ?? '', ratio: (a + 0.05) / (b + 0.05) };
      });
  });
}

/** Records, from now on, the page's long tasks (over 50 ms: the page answered nothing meanwhile). */
function watchLongTasks(page: Page): Promise<void> {
  return page.evaluate(() => {
    const tasks: number[] = [];
    Object.assign(window, { __tasks: tasks });
    new PerformanceObserver((list) => tasks.push(...list.getEntries().map((entry) => entry.duration))).observe({ type: 'longtask' });
  });
}

/** The long tasks recorded since watchLongTasks, in ms. */
function longTasks(page: Page): Promise<number[]> {
  return page.evaluate(() => (window as unknown as { __tasks: number[] }).__tasks);
}

/** A proxy's answer to the prompt: the host's event stream passed on, until `cut` breaks the connection or closes it cleanly. */
function cuttable(): { prompt: (res: ServerResponse, forward: Forward) => Promise<void>; cut: (how: 'break' | 'close') => void } {
  let cut = (_: 'break' | 'close') => {
    throw new Error('no answer to cut yet');
  };
  const prompt = async (res: ServerResponse, forward: Forward) => {
    const answer = await forward();
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
    cut = (how) => {
      answer.unpipe(res);
      answer.destroy();
      // Breaking: the socket ends without the chunked body's last chunk.
      if (how === 'break') res.socket?.end();
      else res.end();
    };
  };
  return { prompt, cut: (how) => cut(how) };
}

describe('The comparison page at GET /', () => {
  describe('Serving', () => {
    it('answers GET / without a key, with a strict Content-Security-Policy and no inline code', async () => {
      const response = await fetch(`${host().url}/`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = Object.fromEntries(
        (response.headers.get('content-security-policy') ?? '').split(';').map((directive) => {
          const [name, ...values] = directive.trim().split(/\s+/);
          return [name, values.join(' ')];
        }),
      );
      expect(csp).toMatchObject({
        'default-src': "'none'",
        'script-src': "'self'",
        'worker-src': "'self'",
        'style-src': "'self'",
        'connect-src': "'self'",
        'img-src': "'none'",
        'base-uri': "'none'",
        'form-action': "'none'",
        'frame-ancestors': "'none'",
        'require-trusted-types-for': "'script'",
        // DOMPurify's HTML, and the page's Markdown thread.
        'trusted-types': 'dompurify markdown-thread',
      });
      expect(Object.values(csp).join(' ')).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      const html = await response.text();
      // Every script has a src on this origin; no inline handler attribute anywhere.
      expect(html.match(/<script[^>]*>/g)).toEqual(['<script src="/page.js" defer>']);
      expect(html).not.toMatch(/\son[a-z]+=/i);
      // Each ID once: the script looks its elements up by them.
      const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((match) => match[1]);
      expect(ids.length).toBeGreaterThan(20);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('names its script and style sheet on its own host when asked for at `//` (they had been `//page.js`, another host, which the CSP refused)', async () => {
      for (const path of ['//', '///']) {
        const html = await (await fetch(`${host().url}${path}`)).text();
        expect(html).toContain('<script src="/page.js" defer>');
        expect(html).not.toMatch(/"\/\/page/);
      }
      page = await browser().newPage();
      await page.goto(`${host().url}//`);
      expect(await page.$eval('#api-url', (el) => (el as HTMLInputElement).value)).toBe(`${host().url}/`);
    });

    it('serves the bundled script and its style sheet without a key, and still asks one for the API', async () => {
      const script = await fetch(`${host().url}/page.js`);
      expect(script.status).toBe(200);
      expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(await script.text()).toContain('dompurify');
      expect((await fetch(`${host().url}/page.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
      expect((await fetch(`${host().url}/api/v1/models`)).status).toBe(401);
    });
  });

  describe('Layout', () => {
    it('lays the settings out without overlap or sideways scrolling at 1400, 1024, 800 and 400 px', async () => {
      page = await openPage(browser(), host());
      for (const width of [1400, 1024, 800, 400]) {
        await page.setViewport({ width, height: 900 });
        const layout = await page.evaluate(() => {
          const boxes = [...document.querySelectorAll('.settings > *')].map((el) => el.getBoundingClientRect());
          const overlaps = boxes.flatMap((a, i) =>
            boxes.slice(i + 1).filter((b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5),
          ).length;
          const inputsInside = [...document.querySelectorAll('fieldset')].every((fieldset) => {
            const box = fieldset.getBoundingClientRect();
            return [...fieldset.querySelectorAll('input')].every((input) => input.getBoundingClientRect().right <= box.right);
          });
          return { overlaps, inputsInside, pageWidth: document.documentElement.scrollWidth === innerWidth };
        });
        expect({ width, ...layout }).toEqual({ width, overlaps: 0, inputsInside: true, pageWidth: true });
      }

      // Each model's option names the vendor model that answers it; one the listing has notes on is marked ⚠, its notes in its title.
      const response = await fetch(`${host().url}/api/v1/models`, { headers: { authorization: `Bearer ${host().demo.apiKey}` } });
      const { models } = (await response.json()) as { models: { id: string; upstreamModel: string; notes: string[] }[] };
      const options = await page.$$eval('#models option', (els) => els.map((el) => [(el as HTMLOptionElement).value, el.textContent, (el as HTMLOptionElement).title]));
      expect(options).toEqual(
        models.map((model) => [
          model.id,
          `${model.id}${model.upstreamModel === model.id ? '' : ` (${model.upstreamModel})`}${model.notes.length > 0 ? ' ⚠' : ''}`,
          [`Answered by ${model.upstreamModel}`, ...model.notes].join('\n'),
        ]),
      );
      expect(models.some((model) => model.notes.length > 0)).toBe(true);
    });
  });

  describe('The pickers', () => {
    /** The options of a picker drawn in its list (the filter hides the others), the chosen ones, its status line and where the focus is. */
    function picker(page: Page, id: string) {
      return page.$eval(`#${id}`, (select) => ({
        shown: [...(select as HTMLSelectElement).options].filter((option) => option.getBoundingClientRect().height > 0).map((option) => option.value),
        chosen: [...(select as HTMLSelectElement).selectedOptions].map((option) => option.value),
        status: document.getElementById(`${select.id}-shown`)?.textContent,
        focus: document.activeElement?.id,
      }));
    }

    it('narrow to the models whose ID, vendor spelling or vendor model holds the text typed, in any case, keeping the chosen ones it hides chosen; from the keyboard', async () => {
      const response = await fetch(`${host().url}/api/v1/models`, { headers: { authorization: `Bearer ${host().demo.apiKey}` } });
      const { models } = (await response.json()) as { models: { id: string; alias: string | null; upstreamModel: string }[] };
      const matching = (text: string) => models.filter((model) => [model.id, model.alias ?? '', model.upstreamModel].some((name) => name.includes(text))).map((model) => model.id);
      page = await openPage(browser(), host());
      await page.select('#models', FAST, THIRD);
      expect(await picker(page, 'models')).toMatchObject({ shown: models.map((model) => model.id), status: `${models.length} models · 2 chosen` });

      // Tab from the prompt's neighbours reaches the filter before the list.
      await page.focus('#system-prompt');
      await page.keyboard.press('Tab');
      await page.keyboard.type('OPUS');
      const opus = matching('opus');
      expect(opus.length).toBeGreaterThan(2);
      expect(await picker(page, 'models')).toEqual({
        shown: opus,
        chosen: [FAST, THIRD],
        status: `${opus.length} of ${models.length} match · 2 chosen (not shown: ${FAST}, ${THIRD})`,
        focus: 'models-filter',
      });
      // The count is what a screen reader is told as the filter changes (role=status); not the choices, at every arrow key.
      expect(await page.$eval('#models-shown [role=status]', (el) => el.textContent)).toBe(`${opus.length} of ${models.length} match`);
      // Down arrow into the list, whose arrow keys choose the option they land on (the shown ones only), and a click,
      // which chooses only the one clicked: the chosen ones the filter hides stay chosen.
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      expect(await picker(page, 'models')).toMatchObject({ chosen: [FAST, opus[0], THIRD], focus: 'models' });
      await page.keyboard.press('ArrowDown');
      expect((await picker(page, 'models')).chosen).toEqual([FAST, opus[1], THIRD]);
      await page.click(`#models option[value="${OTHER}"]`);
      expect((await picker(page, 'models')).chosen).toEqual([FAST, OTHER, THIRD]);
      // Back to the filter; Escape empties it, and every model is shown again, the three chosen.
      await page.keyboard.down('Shift');
      await page.keyboard.press('Tab');
      await page.keyboard.up('Shift');
      await page.keyboard.press('Escape');
      expect(await picker(page, 'models')).toEqual({
        shown: models.map((model) => model.id),
        chosen: [FAST, OTHER, THIRD],
        status: `${models.length} models · 3 chosen`,
        focus: 'models-filter',
      });

      // The judges' picker has its own: a vendor spelling or vendor model finds an ID that does not hold it.
      const spelled = models.find((model) => model.alias && !model.id.includes(model.alias.toLowerCase()) && matching(model.alias).length === 1);
      expect(spelled).toBeDefined();
      await page.type('#judges-filter', (spelled?.alias ?? '').toUpperCase());
      expect(await picker(page, 'judges')).toMatchObject({ shown: [spelled?.id], status: `1 of ${models.length} match` });
      await page.$eval('#judges-filter', (el) => ((el as HTMLInputElement).value = ''));
      await page.type('#judges-filter', 'no such model');
      expect(await picker(page, 'judges')).toMatchObject({ shown: [], status: `0 of ${models.length} match` });
      // The pickers send what is chosen, hidden or not.
      await page.click('#copy-curl');
      expect(await page.$eval('#curl', (el) => el.textContent)).toContain(`"models":["${FAST}","${OTHER}","${THIRD}"]`);
    });
  });

  describe('Streaming', () => {
    it("shows one model's result while a slower model still runs, then the slower one's", async () => {
      host().simulator.setFault({ kind: 'slow', delayMs: 2_500, model: await upstreamOf(host(), OTHER) });
      page = await openPage(browser(), host());
      await compare(page, { models: [FAST, OTHER] });

      await page.waitForSelector(column(FAST, 'completed'));
      expect(await columnText(page, OTHER, 'status')).toBe('running');
      expect(await columnText(page, FAST, 'output')).toContain('Simulated answer from');
      expect(await columnText(page, FAST, 'meta')).toMatch(/tokens \d+ in \/ \d+ out.*\d+ ms.*cost \$\d/);

      await page.waitForSelector(column(OTHER, 'completed'));
      await ended(page);
      expect(await page.$eval('#summary', (el) => el.textContent)).toMatch(/creditsUsed \d/);
    });

    it('shows a failed model with its error while the others complete', async () => {
      host().simulator.setFault({ kind: 'status', status: 400, model: await upstreamOf(host(), OTHER) });
      page = await openPage(browser(), host());
      await compare(page, { models: [FAST, OTHER, THIRD] });

      await page.waitForSelector(column(OTHER, 'failed'));
      await ended(page);
      expect(await columnText(page, OTHER, 'error')).toMatch(/upstream 400/);
      expect(await columnText(page, FAST, 'status')).toBe('completed');
      expect(await columnText(page, THIRD, 'status')).toBe('completed');
    });

    it('keeps the text a model streamed before its stream broke off, marked as cut, beside its error', async () => {
      // The vendor's stream stops halfway and closes cleanly: the call fails after some of its text went out.
      host().simulator.setFault({ kind: 'malformed', model: await upstreamOf(host(), OTHER) });
      page = await openPage(browser(), host());
      await compare(page, { models: [FAST, OTHER] });

      await page.waitForSelector(column(OTHER, 'failed'));
      await ended(page);
      expect(await columnText(page, OTHER, 'error')).toMatch(/^upstream_malformed_response \(upstream 200\): .*message_stop.*\(the text below arrived before it stopped\)$/);
      expect(await columnText(page, OTHER, 'output')).toMatch(/^Simulated answer from/);
      expect(await page.$eval(column(OTHER), (el) => el.classList.contains('cut'))).toBe(true);
      expect(await columnText(page, OTHER, 'meta')).toMatch(/estimated cost \$0\.0*[1-9]/);
      expect(await page.$eval(column(FAST), (el) => el.classList.contains('cut'))).toBe(false);
    });

    it('stops a comparison on Stop: the columns still running read "stopped", and the notice says what the gateway charges', async () => {
      host().simulator.setFault({ kind: 'slow', delayMs: 5_000, model: await upstreamOf(host(), OTHER) });
      page = await openPage(browser(), host());
      // The answer's headers (its x-request-id) have come before Stop is pressed.
      const answer = page.waitForResponse((response) => response.url().endsWith('/api/v1/prompt'));
      await compare(page, { models: [OTHER] });
      const requestId = (await answer).headers()['x-request-id'];
      expect(requestId).toMatch(/\S/);

      await page.click('#stop');
      await page.waitForSelector(column(OTHER, 'stopped'));
      await ended(page);
      expect(await page.$eval('#error', (el) => el.hidden)).toBe(true);
      expect(await page.$eval('#summary', (el) => el.textContent)).toBe(
        // The gateway's calls go on for a 2 s grace once the caller leaves (docs/streaming-api.md): the notice says so.
        `1 stopped · Stopped: the gateway lets the calls still running go on for 2 s; those that end by then are charged in full, the others cancelled and charged what they had used (x-request-id: ${requestId})`,
      );
    });

    it("on Stop before the answer's headers, says that the gateway charges only if the request reached it: the page cannot know", async () => {
      // A gateway that never answers: no headers, no x-request-id.
      proxy = await startProxy(host(), (res) => new Promise<void>((resolve) => res.on('close', resolve)));
      page = await openPage(browser(), host(), { url: proxy.url });
      await compare(page, { models: [OTHER] });
      await page.click('#stop');
      await ended(page);
      expect(await page.$eval('#summary', (el) => el.textContent)).toBe(
        '1 stopped · Stopped: if the request reached the gateway, the gateway lets the calls still running go on for 2 s; those that end by then are charged in full, the others cancelled and charged what they had used',
      );
    });

    it('shows a large structured output in blocks, built once though `done` repeats its result', async () => {
      const value = { text: 'x'.repeat(100_000) };
      proxy = await startProxy(host(), answered([resultOf(FAST, JSON.stringify(value), { structuredOutput: { conforms: true, value } })]));
      page = await openPage(browser(), host(), { url: proxy.url });
      // The structured boxes added, from now on: the result's, and none for `done`.
      await page.evaluate(() => {
        const added = { boxes: 0 };
        Object.assign(window, { __added: added });
        new MutationObserver((records) => {
          for (const record of records) added.boxes += [...record.addedNodes].filter((node) => node instanceof Element && node.matches('pre.value')).length;
        }).observe(document.getElementById('columns') as HTMLElement, { childList: true, subtree: true });
      });
      await compare(page, { models: [FAST] });
      await ended(page);

      expect(
        await page.$eval(`${column(FAST)} pre.value`, (el) => [
          el.querySelectorAll('.text-block').length > 1,
          el.textContent === JSON.stringify({ text: 'x'.repeat(100_000) }, null, 2),
        ]),
      ).toEqual([true, true]);
      expect(await page.evaluate(() => (window as unknown as { __added: { boxes: number } }).__added.boxes)).toBe(1);
    });

    it('appends 2,000 streamed deltas as they come, at most one paint per frame, never rewriting what is shown', async () => {
      const pieces = Array.from({ length: 2_000 }, (_, i) => `${i}: ${'lorem ipsum '.repeat(8)}\n`);
      let release = () => {};
      proxy = await startProxy(host(), deltaStream(FAST, pieces, new Promise((resolve) => (release = resolve))));
      page = await openPage(browser(), host(), { url: proxy.url });
      await countPaints(page);
      await compare(page, { models: [FAST] });

      // Every delta is shown before the result comes.
      const text = pieces.join('');
      await page.waitForFunction((selector, length) => document.querySelector(selector)?.textContent?.length === length, {}, `${column(FAST)} .output`, text.length);
      expect(await columnText(page, FAST, 'status')).toBe('running');
      const streamed = await paints(page);
      expect(streamed.removed).toBe(0);
      expect(streamed.records).toBeLessThan(100); // one paint per delta would be 2,000

      release();
      await page.waitForSelector(column(FAST, 'completed'));
      await ended(page);
      expect(await columnText(page, FAST, 'output')).toBe(text);
      // The result and `done`, whose output is the text shown, change nothing.
      expect(await paints(page)).toEqual(streamed);

      // Only full blocks (about 16 KiB) are laid out when in view only: the last one is not full.
      const visibility = await page.$$eval(`${column(FAST)} .text-block`, (blocks) => blocks.map((block) => getComputedStyle(block).contentVisibility));
      expect(visibility.length).toBeGreaterThan(2);
      expect(visibility).toEqual([...Array(visibility.length - 1).fill('auto'), 'visible']);
      // The long output scrolls in a box of at most 60 % of the window's height; its button, from the keyboard, shows it whole and back.
      const box = () =>
        page!.$eval(`${column(FAST)}`, (article) => {
          const output = article.querySelector('.output') as HTMLElement;
          const button = article.querySelector('button.expand') as HTMLButtonElement;
          return {
            height: output.clientHeight,
            whole: output.scrollHeight <= output.clientHeight + 1,
            limit: innerHeight * 0.6,
            button: button.hidden ? 'hidden' : (button.getAttribute('aria-expanded') ?? ''),
            controls: button.getAttribute('aria-controls') === output.id,
          };
        });
      const collapsed = await box();
      expect(collapsed).toMatchObject({ whole: false, button: 'false', controls: true });
      expect(collapsed.height).toBeLessThanOrEqual(collapsed.limit + 1);
      await page.focus(`${column(FAST)} button.expand`);
      await page.keyboard.press('Enter');
      expect(await box()).toMatchObject({ whole: true, button: 'true' });
      await page.keyboard.press('Space');
      expect(await box()).toMatchObject({ whole: false, button: 'false' });
    });

    it('decides the expand button again when the window is resized: an output that fits at 1280 px and not at 390 px gets it, and loses it back', async () => {
      // Eight paragraphs of 300 characters: about 16 lines at 1280 px, about 50 at 390 px (over 60 % of 900 px).
      const text = Array.from({ length: 8 }, (_, i) => `${i}: ${'the sky is blue because air scatters short waves. '.repeat(6)}`.slice(0, 300)).join('\n');
      proxy = await startProxy(host(), answered([resultOf(FAST, text)]));
      page = await openPage(browser(), host(), { url: proxy.url });
      await page.setViewport({ width: 1280, height: 900 });
      await compare(page, { models: [FAST] });
      await ended(page);

      const at = async (width: number, height: number) => {
        await page!.setViewport({ width, height });
        // A resize's layout, and what it made the page do, before the next frame but one.
        await page!.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
        return page!.$eval(column(FAST), (article) => {
          const output = article.querySelector('.output') as HTMLElement;
          return { whole: output.scrollHeight <= output.clientHeight + 1, button: !(article.querySelector('button.expand') as HTMLButtonElement).hidden };
        });
      };
      expect(await at(1280, 900)).toEqual({ whole: true, button: false });
      // Decided at the result only, the button stayed hidden at phone width, the output cut at 60 % of the window.
      expect(await at(390, 900)).toEqual({ whole: false, button: true });
      // Turned: wider, but lower.
      expect(await at(900, 390)).toEqual({ whole: false, button: true });
      expect(await at(1280, 900)).toEqual({ whole: true, button: false });
    });

    it('shows a 7 MiB output without blocking the page: appended in blocks, never laid out whole again, nor set again by its result', async () => {
      const line = 'lorem ipsum dolor sit amet, consectetur adipiscing elit\n';
      const text = line.repeat(Math.ceil((7 * 1024 * 1024) / line.length));
      proxy = await startProxy(host(), async (res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
        for (let at = 0; at < text.length; at += 64 * 1024) {
          res.write(sse('delta', { index: 0, text: text.slice(at, at + 64 * 1024) }));
          await sleep(5);
        }
        const result = resultOf(FAST, text);
        res.end(sse('result', { index: 0, result }) + sse('done', { results: [result], creditsUsed: 0, promptLogId: 'pl_test' }));
      });
      page = await openPage(browser(), host(), { url: proxy.url });
      await countPaints(page);
      await watchLongTasks(page);
      await compare(page, { models: [FAST] });
      await page.waitForSelector(column(FAST, 'completed'));
      await ended(page);

      expect(await page.$eval(`${column(FAST)} .output`, (el) => el.textContent?.length)).toBe(text.length);
      expect((await paints(page)).removed).toBe(0);
      // Laid out whole at each paint, then set whole by the result and again by `done`, it blocked the page for about 10 s.
      const blocked = (await longTasks(page)).reduce((sum, ms) => sum + ms, 0);
      expect(blocked).toBeLessThan(2_500);
    });

    it('cuts a line with no end into blocks of at most 32,768 characters, never inside a surrogate pair; their text joins, and copies, to the output', async () => {
      // No line end anywhere: one text block each, laid out again at every paint, they gave 4 to
      // 5 s of long tasks (8 MiB of x) and 4.5 to 60 s (zero-width joiners, right-to-left overrides, accents).
      const texts = ['x'.repeat(8 * 1024 * 1024), '\u200b\u200d\u202e\u0301'.repeat(150_000), `a${'😀'.repeat(100_000)}`];
      const models = [FAST, OTHER, THIRD];
      proxy = await startProxy(host(), async (res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
        // 64 KiB deltas (some end inside a surrogate pair: JSON carries its halves apart).
        for (let at = 0; at < (texts[0] as string).length; at += 64 * 1024) {
          res.write(texts.map((text, index) => (at < text.length ? sse('delta', { index, text: text.slice(at, at + 64 * 1024) }) : '')).join(''));
          await sleep(5);
        }
        const results = texts.map((text, i) => resultOf(models[i] as string, text));
        res.end(results.map((result, index) => sse('result', { index, result })).join('') + sse('done', { results, creditsUsed: 0, promptLogId: 'pl_test' }));
      });
      page = await openPage(browser(), host(), { url: proxy.url });
      await watchLongTasks(page);
      await compare(page, { models });
      await ended(page);

      for (const [i, text] of texts.entries()) {
        const blocks = await page.$$eval(`${column(models[i] as string)} .text-block`, (els) => els.map((el) => el.textContent ?? ''));
        expect(blocks.length).toBeGreaterThanOrEqual(Math.ceil(text.length / 32_769));
        expect(Math.max(...blocks.map((block) => block.length))).toBeLessThanOrEqual(32_769);
        // No block ends with the first half of a pair (nor starts with the second).
        expect(blocks.filter((block) => /[\ud800-\udbff]$|^[\udc00-\udfff]/.test(block))).toEqual([]);
        expect(blocks.join('') === text).toBe(true);
      }
      // Copied whole, the emoji output is its text: a block cut inside a line adds no line break.
      await page.$eval(`${column(THIRD)} .output`, (el) => {
        const range = document.createRange();
        range.selectNodeContents(el);
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
      });
      await page.keyboard.down('Control');
      await page.keyboard.press('KeyC');
      await page.keyboard.up('Control');
      await page.$eval('#prompt', (el) => ((el as HTMLTextAreaElement).value = ''));
      await page.focus('#prompt');
      await page.keyboard.down('Control');
      await page.keyboard.press('KeyV');
      await page.keyboard.up('Control');
      expect((await page.$eval('#prompt', (el) => (el as HTMLTextAreaElement).value)) === texts[2]).toBe(true);
      const blocked = (await longTasks(page)).reduce((sum, ms) => sum + ms, 0);
      expect(blocked).toBeLessThan(2_500);
    });

    it('renders 2,000 streamed Markdown deltas in a few whole renders (one per 250 ms at most), then with the result as the toggle does', async () => {
      // 21,000 characters: under the 24,000 rendered as Markdown.
      const pieces = Array.from({ length: 2_000 }, (_, i) => `- **${i}**\n`);
      let release = () => {};
      proxy = await startProxy(host(), deltaStream(FAST, pieces, new Promise((resolve) => (release = resolve))));
      page = await openPage(browser(), host(), { url: proxy.url });
      await page.click('#markdown');
      await countPaints(page);
      await compare(page, { models: [FAST] });

      const items = `${column(FAST)} .output li`;
      await page.waitForFunction((selector) => document.querySelectorAll(selector).length === 2_000, {}, items);
      expect(await columnText(page, FAST, 'status')).toBe('running');
      expect((await paints(page)).records).toBeLessThan(40); // one render per delta would be 2,000

      release();
      await page.waitForSelector(column(FAST, 'completed'));
      await ended(page);
      const html = await page.$eval(`${column(FAST)} .output`, (el) => el.innerHTML);
      expect(await page.$eval(`${items}:last-child strong`, (el) => el.textContent)).toBe('1999');
      await page.click('#markdown');
      await page.click('#markdown');
      await rendered(page);
      expect(await page.$eval(`${column(FAST)} .output`, (el) => el.innerHTML)).toBe(html);
    });

    it.each([
      ['breaks', 'break', 'connection lost', /^The connection to the gateway was lost before the answer ended: the request ran, and may have been charged \(x-request-id: \S+\)$/],
      [
        'closes cleanly',
        'close',
        'ended without a result',
        /^The gateway closed the connection before the answer ended: the request ran, and may have been charged \(x-request-id: \S+\)$/,
      ],
    ] as const)('when the connection %s mid-stream, marks the columns still running and says the request ran', async (_, how, status, message) => {
      host().simulator.setFault({ kind: 'slow', delayMs: 3_000, model: await upstreamOf(host(), OTHER) });
      const answer = cuttable();
      proxy = await startProxy(host(), answer.prompt);
      page = await openPage(browser(), host(), { url: proxy.url });
      await compare(page, { models: [FAST, OTHER] });
      await page.waitForSelector(column(FAST, 'completed'));

      answer.cut(how);
      await page.waitForSelector(column(OTHER, status));
      await ended(page);
      expect(await columnText(page, FAST, 'status')).toBe('completed');
      expect(await errorText(page)).toMatch(message);
      await host().settled();
    });

    it('marks the columns unfinished when a 200 answer is neither an event stream nor a JSON object', async () => {
      proxy = await startProxy(host(), (res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<p>Down for maintenance</p>');
      });
      page = await openPage(browser(), host(), { url: proxy.url });
      await compare(page, { models: [FAST] });

      await page.waitForSelector(column(FAST, 'ended without a result'));
      await ended(page);
      expect(await errorText(page)).toBe("The gateway's 200 answer is neither an event stream nor a JSON object: the request may have run, and been charged");
    });

    it('shows a failure to load the models during a comparison without marking its columns', async () => {
      host().simulator.setFault({ kind: 'slow', delayMs: 3_000, model: await upstreamOf(host(), OTHER) });
      page = await openPage(browser(), host());
      await compare(page, { models: [OTHER] });
      // Another API URL: the page's CSP lets it call no other origin, so its models cannot load.
      await page.$eval('#api-url', (el) => {
        (el as HTMLInputElement).value = 'http://127.0.0.1:9/';
        el.dispatchEvent(new Event('change'));
      });

      await page.waitForSelector('#error:not([hidden])');
      expect(await errorText(page)).toMatch(/^The API could not be reached: /);
      expect(await columnText(page, OTHER, 'status')).toBe('running');
      await page.waitForSelector(column(OTHER, 'completed'));
      await ended(page);
    });

    it("shows the API's refusal at each field it names (aria-invalid, aria-describedby), the focus on the first, each gone when its field changes; runs nothing", async () => {
      page = await openPage(browser(), host());
      await page.$eval('#prompt', (el) => ((el as HTMLTextAreaElement).value = ''));
      await compare(page, { models: [], judges: [JUDGE], settings: { temperature: '5' }, weights: { cost: '2' } });

      await page.waitForSelector('#error:not([hidden])');
      // The box says where they are; each field says what is wrong with it, just under it.
      const named = ['/prompt', '/models', '/judge_weights/cost', '/generation_settings/temperature'];
      expect(await errorText(page)).toBe(`400 invalid_request: 4 fields are invalid\n  shown at the form's fields: ${named.join(', ')}`);
      expect(await fieldErrors(page)).toEqual([
        ['prompt', 'must NOT have fewer than 1 characters', true],
        ['models', 'must NOT have fewer than 1 items', true],
        ['w-cost', 'must be <= 1', true],
        ['g-temperature', 'must be <= 2', true],
      ]);
      // As a screen reader hears the field: invalid, described by its error; the focus taken to the first.
      const temperature = await page.accessibility.snapshot({ root: (await page.$('#g-temperature')) ?? undefined, interestingOnly: false });
      expect([temperature?.name, temperature?.invalid, temperature?.description]).toEqual(['temperature', 'true', 'must be <= 2']);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('prompt');
      // The focused one among the fields marked shows where the focus is: a ring the others have not.
      const outline = (id: string) => page!.$eval(`#${id}`, (el) => `${getComputedStyle(el).outlineStyle} ${getComputedStyle(el).outlineWidth}`);
      expect([await outline('prompt'), await outline('w-cost')]).toEqual(['solid 2px', 'solid 1px']);
      expect(host().simulator.calls()).toHaveLength(0);

      // Each error goes when its field changes, and only its own.
      await page.click('#g-temperature', { count: 3 });
      await page.keyboard.type('0.5');
      await page.select('#models', FAST);
      expect((await fieldErrors(page)).map(([id]) => id)).toEqual(['prompt', 'w-cost']);
      expect(await page.$eval('#g-temperature-error', (el) => el.hidden)).toBe(true);
      await page.type('#prompt', 'Say hello');
      await page.click('#w-cost', { count: 3 });
      await page.keyboard.type('0.5');
      expect(await fieldErrors(page)).toEqual([]);
      await compare(page, { models: [FAST] });
      await page.waitForSelector(column(FAST, 'completed'));
      expect(await errorText(page)).toBe('');
    });

    it('keeps in the box what a refusal names outside the form; a pointer inside a field stays beside its message there', async () => {
      const details = [
        { field: '/model_tuning/fam_c-5.4/reasoningEffort', message: 'must be one of low, medium, high' },
        { field: '/models/1', message: '"gpt-5.4" names the same model as /models/0' },
        { field: '/response_schema/additionalProperties', message: 'must be false at every object level of response_schema' },
        { field: '/response_schema/properties/a/additionalProperties', message: 'must be false at every object level of response_schema' },
      ];
      proxy = await startProxy(host(), (res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'invalid_request', message: '4 fields are invalid', details } }));
      });
      page = await openPage(browser(), host(), { url: proxy.url });
      await page.type('#response-schema', '{"type": "object", "properties": {"a": {"type": "object"}}}');
      await compare(page, { models: [FAST, OTHER] });

      await page.waitForSelector('#error:not([hidden])');
      expect(await errorText(page)).toBe(
        [
          '400 invalid_request: 4 fields are invalid',
          "  shown at the form's fields: /models/1, /response_schema/additionalProperties, /response_schema/properties/a/additionalProperties",
          '  /model_tuning/fam_c-5.4/reasoningEffort: must be one of low, medium, high',
        ].join('\n'),
      );
      expect(await fieldErrors(page)).toEqual([
        ['models', '/models/1: "gpt-5.4" names the same model as /models/0', true],
        [
          'response-schema',
          '/response_schema/additionalProperties: must be false at every object level of response_schema\n/response_schema/properties/a/additionalProperties: must be false at every object level of response_schema',
          true,
        ],
      ]);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('models');
      // Copy as curl reads the schema (JSON): the API's refusal of it stays, as do the others (it was wiped).
      const before = await fieldErrors(page);
      await page.click('#copy-curl');
      expect(await fieldErrors(page)).toEqual(before);
      // The schema's error, once it changes: that it is not JSON while it is not, then none.
      await page.type('#response-schema', ',');
      expect(await fieldErrors(page)).toEqual([
        ['models', '/models/1: "gpt-5.4" names the same model as /models/0', true],
        ['response-schema', expect.stringMatching(/^Response schema: not JSON/), true],
      ]);
      await page.keyboard.press('Backspace');
      expect((await fieldErrors(page)).map(([id]) => id)).toEqual(['models']);
      await page.select('#models', FAST);
      expect(await fieldErrors(page)).toEqual([]);
    });

    it('sends a setting typed as `1e` as typed, so that the API names it, and runs nothing', async () => {
      page = await openPage(browser(), host());
      await page.type('#g-temperature', '1e');
      await compare(page, { models: [FAST] });

      await page.waitForSelector('#error:not([hidden])');
      expect(await errorText(page)).toMatch(/^400 invalid_request: [\s\S]*\n {2}shown at the form's fields: \/generation_settings\/temperature$/);
      expect(await fieldErrors(page)).toEqual([['g-temperature', expect.stringMatching(/^must be /), true]]);
      expect(await columnText(page, FAST, 'status')).toBe('not run');
      expect(host().simulator.calls()).toHaveLength(0);
    });

    it("keeps a comparison's refusal, its box and its fields alike, when the pickers' models load again (the key changed): loading clears only its own error", async () => {
      page = await openPage(browser(), host());
      await page.type('#g-temperature', '1e');
      await compare(page, { models: [FAST] });
      await page.waitForSelector('#error:not([hidden])');
      const refused = await errorText(page);
      // The key field changed and left: the models load again, and succeed (the pickers' options made anew).
      await page.$eval('#models option', (option) => option.setAttribute('data-before', ''));
      await page.type('#api-key', ' ');
      await page.focus('#prompt');
      await page.waitForFunction(() => document.querySelector('#models option[data-before]') === null);
      expect(await errorText(page)).toBe(refused);
      expect((await fieldErrors(page)).map(([id]) => id)).toEqual(['g-temperature']);
      // A key the API refuses: loading's error beside the refusal, which stays, at its field too; then gone with a good key.
      await page.$eval('#api-key', (el) => ((el as HTMLInputElement).value = ''));
      await page.type('#api-key', 'mcg_not-a-key-of-this-gateway');
      await page.focus('#prompt');
      await page.waitForFunction(() => document.getElementById('error')?.textContent?.includes('401'));
      expect(await errorText(page)).toMatch(new RegExp(`^${refused.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n401 unauthorized: `));
      expect((await fieldErrors(page)).map(([id]) => id)).toEqual(['g-temperature']);
      await page.$eval('#api-key', (el) => ((el as HTMLInputElement).value = ''));
      await page.type('#api-key', host().demo.apiKey);
      await page.focus('#prompt');
      await page.waitForFunction(() => !document.getElementById('error')?.textContent?.includes('401'));
      expect(await errorText(page)).toBe(refused);
    });

    it.each([
      [504, { error: { code: 'gateway_timeout', message: 'no answer in time' } }, 'ended without a result', true],
      [502, { message: 'Bad Gateway' }, 'ended without a result', true],
      [500, { error: { code: 'internal_error', message: 'The gateway failed; the request was not charged' } }, 'ended without a result', false],
      [503, { error: { code: 'service_unavailable', message: 'busy' } }, 'not run', false],
      [501, { error: { code: 'judging_not_available', message: 'no judging here' } }, 'not run', false],
      // A proxy's 503 and 501 (not the gateway's error body) may come after the request ran: they had been marked not run.
      [503, { message: 'Service Unavailable' }, 'ended without a result', true],
      [501, { message: 'Not Implemented' }, 'ended without a result', true],
    ])('answered %i %j before any event: its columns %s, and whether the request may have run and been charged', async (status, body, columnStatus, mayHaveRun) => {
      proxy = await startProxy(host(), (res) => {
        res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_5xx' });
        res.end(JSON.stringify(body));
      });
      page = await openPage(browser(), host(), { url: proxy.url });
      await compare(page, { models: [FAST] });
      await page.waitForSelector('#error:not([hidden])');
      await ended(page);
      expect(await columnText(page, FAST, 'status')).toBe(columnStatus);
      expect((await errorText(page)).includes('the request ran, and may have been charged (x-request-id: req_5xx)')).toBe(mayHaveRun);
    });

    it("says an error event after text streamed with the request's ID (its message says what was charged), and marks the text kept as cut", async () => {
      proxy = await startProxy(
        host(),
        scripted(sse('delta', { index: 0, modelId: FAST, text: 'partial ' }), 50, sse('error', { error: { code: 'internal_error', message: 'boom' } })),
      );
      page = await openPage(browser(), host(), { url: proxy.url });
      await compare(page, { models: [FAST] });
      await ended(page);
      expect(await columnText(page, FAST, 'status')).toBe('failed');
      expect(await columnText(page, FAST, 'output')).toBe('partial ');
      expect(await page.$eval(column(FAST), (el) => el.classList.contains('cut'))).toBe(true);
      expect(await errorText(page)).toBe('internal_error: boom\n  x-request-id: req_test');
    });

    it('sends settings typed as 0x10, 0b1 or 0o7 as typed, not as the numbers JavaScript reads in them', async () => {
      page = await openPage(browser(), host());
      await page.type('#g-temperature', '0o7');
      await page.type('#g-maxTokens', '0x10');
      await page.type('#g-topP', '0b1');
      await page.click('#copy-curl');
      expect(await page.$eval('#curl', (el) => el.textContent)).toContain('"generation_settings":{"temperature":"0o7","maxTokens":"0x10","topP":"0b1"}');
      await compare(page, { models: [FAST] });

      await page.waitForSelector('#error:not([hidden])');
      expect((await fieldErrors(page)).map(([id]) => id)).toEqual(['g-temperature', 'g-maxTokens', 'g-topP']);
      expect(host().simulator.calls()).toHaveLength(0);
    });

    it('sends the judge weights typed only with judges, as the form says', async () => {
      page = await openPage(browser(), host());
      // Typed text in the page's weight, not its label's bold.
      expect(await page.$$eval('#prompt, #system-prompt, #models, #response-schema', (els) => els.map((el) => getComputedStyle(el).fontWeight))).toEqual([
        '400',
        '400',
        '400',
        '400',
      ]);
      expect(await page.$eval('#w-accuracy', (el) => el.closest('fieldset')?.querySelector('legend')?.textContent)).toBe('Judge weights (sent with judges only)');
      await page.type('#w-cost', '0.5');
      await page.select('#models', FAST);
      const curl = () => page!.$eval('#curl', (el) => el.textContent ?? '');
      await page.click('#copy-curl');
      expect(await curl()).not.toContain('judge_weights');
      // Whether the browser let it copy or not, the page says which.
      await page.waitForFunction(() => document.getElementById('copied')?.textContent !== '');
      expect(await page.$eval('#copied', (el) => el.textContent)).toMatch(/^(Copied to the clipboard|Not copied: the browser refused the clipboard; select the command below)$/);
      await page.select('#judges', JUDGE);
      await page.click('#copy-curl');
      expect(await curl()).toContain(`"judges":["${JUDGE}"],"judge_weights":{"cost":0.5}`);

      // A response schema that is not JSON: said at its field, and nothing is sent or copied.
      await page.type('#response-schema', '{"type": "object",');
      await page.click('#copy-curl');
      const fieldError = () => page!.$eval('#response-schema-error', (el) => (el.hidden ? '' : (el.textContent ?? '')));
      expect(await fieldError()).toMatch(/^Response schema: not JSON \(.+\); nothing is sent or copied until it is JSON\.$/);
      expect(await page.$eval('#response-schema', (el) => el.getAttribute('aria-invalid'))).toBe('true');
      expect(await page.$eval('#curl', (el) => el.hidden)).toBe(true);
      await page.click('#run');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('response-schema');
      // Heard once, as the field's description when the focus comes to it: not also as an alert (it was both).
      const schemaField = await page.accessibility.snapshot({ root: (await page.$('#response-schema')) ?? undefined, interestingOnly: false });
      expect([schemaField?.invalid, schemaField?.description]).toEqual(['true', await fieldError()]);
      expect(await page.$$eval('.field-error', (els) => els.filter((el) => el.hasAttribute('role') || el.hasAttribute('aria-live')).map((el) => el.id))).toEqual([]);
      expect(await page.$$eval('#columns article', (els) => els.length)).toBe(0);
      expect(await page.$eval('#run', (el) => (el as HTMLButtonElement).disabled)).toBe(false);
      expect(host().simulator.calls()).toHaveLength(0);

      // Fixed, with a system prompt and a judge prompt: all three in the body, the judge prompt with judges only.
      const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
      await page.$eval(
        '#response-schema',
        (el, text) => {
          (el as HTMLTextAreaElement).value = text;
          el.dispatchEvent(new Event('input'));
        },
        JSON.stringify(schema, null, 2),
      );
      // Said no longer once the field holds JSON, before anything is sent or copied.
      expect(await fieldError()).toBe('');
      expect(await page.$eval('#response-schema', (el) => el.hasAttribute('aria-invalid'))).toBe(false);
      await page.type('#system-prompt', 'Be brief.');
      await page.type('#judge-prompt', 'Prefer the shorter answer.');
      await page.click('#copy-curl');
      expect(await fieldError()).toBe('');
      expect(await page.$eval('#response-schema', (el) => el.hasAttribute('aria-invalid'))).toBe(false);
      expect(await curl()).toContain(
        `'{"prompt":"Explain in two sentences why the sky is blue.","system_prompt":"Be brief.","models":["${FAST}"],"judges":["${JUDGE}"],"judge_prompt":"Prefer the shorter answer.","judge_weights":{"cost":0.5},"response_schema":${JSON.stringify(schema)}}'`,
      );
      await page.select('#judges');
      await page.click('#copy-curl');
      expect(await curl()).toContain(`"system_prompt":"Be brief.","models":["${FAST}"],"response_schema":`);
      expect(await curl()).not.toContain('judge_prompt');
    });

    it('hides the copied curl command once the form changes, which it would no longer match; a Compare of the same form leaves it', async () => {
      page = await openPage(browser(), host());
      await page.select('#models', FAST);
      // The command shown, and what the status beside the button says (whether the browser let it copy or not).
      const curl = () =>
        page!.evaluate(() => {
          const el = document.getElementById('curl') as HTMLElement;
          return { shown: el.hidden ? null : el.textContent, copied: document.getElementById('copied')?.textContent };
        });
      const copy = async () => {
        await page!.click('#copy-curl');
        await page!.waitForFunction(() => document.getElementById('copied')?.textContent !== '');
        return curl();
      };
      const copied = expect.stringMatching(/^(Copied to the clipboard|Not copied: the browser refused the clipboard; select the command below)$/);
      const first = await copy();
      expect(first).toEqual({ shown: expect.stringContaining(`"prompt":"Explain in two sentences why the sky is blue.","models":["${FAST}"]`), copied });

      // Compare sends the request shown: it stays.
      await page.click('#run');
      await ended(page);
      expect(await curl()).toEqual(first);
      // Typing in a filter changes nothing sent.
      await page.type('#models-filter', 'opus');
      expect(await curl()).toEqual(first);

      // A field typed in: the command, and the status, go (it stayed, naming the prompt no longer sent).
      await page.focus('#prompt');
      await page.keyboard.down('Control');
      await page.keyboard.press('End');
      await page.keyboard.up('Control');
      await page.keyboard.type(' Briefly.');
      expect(await curl()).toEqual({ shown: null, copied: '' });
      expect(await copy()).toEqual({ shown: expect.stringContaining('"prompt":"Explain in two sentences why the sky is blue. Briefly."'), copied });
      // A picker's choice.
      await page.select('#models', FAST, THIRD);
      expect(await curl()).toEqual({ shown: null, copied: '' });
      await copy();
      // The API URL, which the command names.
      await page.type('#api-url', 'x');
      expect(await curl()).toEqual({ shown: null, copied: '' });
    });

    it("shows a 402's estimatedCreditsRequired, balance and what the estimate is made of, and runs nothing", async () => {
      const { auth } = await openTestAccount(host(), 1);
      page = await openPage(browser(), host(), { apiKey: auth.authorization!.slice('Bearer '.length) });
      await compare(page, { models: [FAST, OTHER], judges: [JUDGE] });

      await page.waitForSelector('#error:not([hidden])');
      const credits = '\\d+(\\.\\d+)?';
      expect(await errorText(page)).toMatch(
        new RegExp(
          [
            '^402 insufficient_credits: [^\\n]+',
            `  estimatedCreditsRequired: ${credits}`,
            '  balance: 0\\.000001',
            // Each model's output allowance (thousands of tokens), its thousands grouped.
            `  estimate ${FAST}: ${credits} credits \\(up to \\d{1,3}(,\\d{3})+ output tokens\\)`,
            `  estimate ${OTHER}: ${credits} credits \\(up to \\d{1,3}(,\\d{3})+ output tokens\\)`,
            `  estimate judge calls: 2 calls, ${credits} credits$`,
          ].join('\n'),
        ),
      );
      expect(await columnText(page, FAST, 'status')).toBe('not run');
      expect(host().simulator.calls()).toHaveLength(0);
    });
  });

  describe('Figures', () => {
    it('shows costs to three significant digits, never $0 for a cost that is not 0; the tokens a result breaks down; its structured output', async () => {
      const costs = [0.0000004, 0.00000123456, 0.0123456, 0];
      const SERVED_BY = 'xAI shut grok-3-mini down on 2026-05-15; grok-4.3 (fam_d-4.3) answers this ID in its place, at its prices';
      const models = [FAST, OTHER, THIRD, JUDGE];
      const HOSTILE_VALUE = '<img src=x onerror="window.__pwned = 1">';
      const fields: Record<string, unknown>[] = [
        { usage: { cachedTokensIn: 5, cacheWriteTokensIn: 0, reasoningTokensOut: 7 }, structuredOutput: { conforms: true, value: { answer: HOSTILE_VALUE } } },
        // Anthropic: no reasoningTokensOut.
        { usage: { cachedTokensIn: 0, cacheWriteTokensIn: 0 }, structuredOutput: { conforms: false, errors: ['/answer: must be string', `/extra: ${HOSTILE_VALUE}`] } },
        { usage: { cachedTokensIn: 0, cacheWriteTokensIn: 0, reasoningTokensOut: 0 } },
        {},
      ];
      // Two judges of FAST and OTHER: the second's evaluation failed in one order, and the ranking leaves it out.
      const order = (answerA: string, answerB: string, fields: Record<string, unknown>) => ({
        answerA,
        answerB,
        status: 'completed',
        verdict: { winner: answerA === FAST ? 'A' : 'B', scoreA: 8, scoreB: 6, reasoning: 'r' },
        winner: FAST,
        latencyMs: 1,
        ...fields,
      });
      const evaluation = (judgeModelId: string, orders: Record<string, unknown>[], fields: Record<string, unknown>) => ({
        judgeModelId,
        modelA: FAST,
        modelB: OTHER,
        status: 'completed',
        winner: FAST,
        consistent: true,
        scores: null,
        weightedScores: null,
        orders,
        inRanking: true,
        ...fields,
      });
      const evaluations = [
        evaluation(
          'judge-one',
          [
            order(FAST, OTHER, { tokensIn: 100, tokensOut: 10, providerCost: 0.002, warnings: [SERVED_BY] }),
            order(OTHER, FAST, { tokensIn: 110, tokensOut: 11, providerCost: null, estimatedCost: 0.001, warnings: [SERVED_BY] }),
          ],
          {},
        ),
        evaluation(
          'judge-two',
          [
            order(FAST, OTHER, { tokensIn: 50, tokensOut: 5, providerCost: 0.0005 }),
            order(OTHER, FAST, {
              status: 'failed',
              verdict: null,
              winner: null,
              tokensIn: 0,
              tokensOut: 0,
              providerCost: 0,
              error: { code: 'upstream_error', message: 'refused' },
            }),
          ],
          { status: 'failed', winner: null, consistent: false, inRanking: false, selfPreference: { modelId: FAST, relation: 'same-family' } },
        ),
      ];
      const judgeStatistics = {
        judges: [
          { judgeModelId: 'judge-one', pairs: 1, positionConsistency: 1, calls: 2, chosePositionA: 0.5, decisive: 1, longerWon: null },
          { judgeModelId: 'judge-two', pairs: 0, positionConsistency: null, calls: 1, chosePositionA: 1, decisive: 1, longerWon: null },
        ],
        agreement: { judgePairs: [{ judges: ['judge-one', 'judge-two'], pairs: 1, agreement: 0.5, cohensKappa: -0.25 }], fleissKappa: null, fleissPairs: 0 },
      };
      proxy = await startProxy(
        host(),
        answered(
          models.map((modelId, i) => resultOf(modelId, 'ok', { providerCost: costs[i], tokensIn: 20, tokensOut: 30, ...fields[i] })),
          { evaluations, judgeStatistics },
        ),
      );
      page = await openPage(browser(), host(), { url: proxy.url });
      await compare(page, { models });
      await ended(page);

      const shown = await page.$$eval('article .cost', (spans) => spans.map((span) => span.textContent));
      expect(shown).toEqual(['cost $0.000000400', 'cost $0.00000123', 'cost $0.0123', 'cost $0']);
      expect(await page.$$eval('article .tokens', (spans) => spans.map((span) => span.textContent))).toEqual([
        'tokens 20 in (5 cached) / 30 out (7 reasoning)',
        'tokens 20 in / 30 out',
        'tokens 20 in / 30 out',
        'tokens 20 in / 30 out',
      ]);
      // The models' and the judges' costs beside creditsUsed (USD: the answer does not say what a credit is),
      // and how much of them is estimated (judge-one's second call's estimatedCost, its providerCost null).
      expect(await page.$eval('#summary', (el) => el.textContent)).toBe(
        '4 completed · creditsUsed 0 · provider cost $0.0158 (incl. $0.00100 estimated): models $0.0123 + judges $0.00350 (incl. $0.00100 estimated) · promptLogId pl_test',
      );

      // Each judge's calls, tokens and cost (its orders' providerCost, or estimatedCost where that is null), and how it judged.
      const judges = await page.$$eval('#judge-stats tr', (trs) => trs.map((tr) => [...(tr as HTMLTableRowElement).cells].map((cell) => cell.textContent)));
      expect(judges).toEqual([
        ['judge', 'calls', 'failed', 'tokens in / out', 'cost', 'pairs', 'position consistency', 'chose position A', 'decisive', 'longer won'],
        // Its calls' warning, once; the call whose usage was missing counted no tokens, said.
        [`judge-one${SERVED_BY}`, '2', '0', '210 / 21 (usage missing for 1 of 2 calls)', '$0.00300 (incl. $0.00100 estimated)', '1', '100 %', '50 %', '100 %', '–'],
        ['judge-two', '2', '1', '50 / 5', '$0.000500', '0', '–', '100 %', '100 %', '–'],
      ]);
      expect(await page.$eval('#agreement', (el) => (el.hidden ? null : el.textContent))).toBe("judge-one and judge-two: agreement 50 %, Cohen's κ -0.25 over 1 pairs");
      // A matrix cell: a line a judge, the pick the ranking leaves out marked.
      // (The columns, and the matrix's rows and columns, are in the pickers' order.)
      const cell = (a: string, b: string) =>
        page!.$eval(
          '#matrix',
          (table, a, b) => {
            const rows = [...(table as HTMLTableElement).rows];
            const column = [...(rows[0]?.cells ?? [])].findIndex((th) => th.textContent === b);
            const row = rows.find((tr) => tr.cells[0]?.textContent === a);
            return [...(row?.cells[column]?.querySelectorAll('.pick') ?? [])].map((pick) => [
              pick.textContent,
              pick.classList.contains('excluded'),
              getComputedStyle(pick).display,
            ]);
          },
          a,
          b,
        );
      expect(await cell(FAST, OTHER)).toEqual([
        [`judge-one: ${FAST}`, false, 'block'],
        [`judge-two: ${FAST} (left out of the ranking)`, true, 'block'],
      ]);
      expect(await cell(OTHER, FAST)).toEqual([
        [`judge-one: ${FAST}`, false, 'block'],
        ['judge-two: failed: refused (left out of the ranking)', true, 'block'],
      ]);
      // Whether the ranking counts each evaluation: the failed one says why not, not as a self-judge's.
      expect(await page.$$eval('#evaluations tr + tr', (trs) => trs.map((tr) => (tr as HTMLTableRowElement).cells[8]?.textContent))).toEqual(['yes', 'no: it failed']);

      // Structured output, as text: conforming with its value, or not with its errors.
      const structured = await page.$$eval('article .structured', (els) =>
        els.map((el) =>
          el.hidden
            ? null
            : {
                verdict: el.querySelector('.verdict')?.textContent,
                value: el.querySelector('pre')?.textContent,
                errors: [...el.querySelectorAll('li')].map((li) => li.textContent),
              },
        ),
      );
      expect(structured).toEqual([
        { verdict: 'structured output ✓ conforms to the schema', value: JSON.stringify({ answer: HOSTILE_VALUE }, null, 2), errors: [] },
        { verdict: 'structured output ✗ does not conform', value: undefined, errors: ['/answer: must be string', `/extra: ${HOSTILE_VALUE}`] },
        null,
        null,
      ]);
      expect(await page.evaluate(() => ({ images: document.images.length, pwned: (window as unknown as { __pwned?: unknown }).__pwned }))).toEqual({ images: 0, pwned: undefined });

      // Short outputs: their one block is laid out (no 60rem placeholder), and a short column is not stretched to its row's tallest.
      const layout = await page.evaluate(() => ({
        visibility: [...document.querySelectorAll('.output .text-block')].map((block) => getComputedStyle(block).contentVisibility),
        heights: [...document.querySelectorAll('article.column')].map((article) => article.getBoundingClientRect().height),
        tops: new Set([...document.querySelectorAll('article.column')].map((article) => article.getBoundingClientRect().top)).size,
        expand: [...document.querySelectorAll('button.expand')].map((button) => (button as HTMLButtonElement).hidden),
      }));
      expect(layout.visibility).toEqual(['visible', 'visible', 'visible', 'visible']);
      expect(layout.tops).toBe(1); // one row
      expect(layout.heights[3]).toBeLessThan(layout.heights[0] as number);
      expect(layout.heights[3]).toBeLessThan(200);
      expect(layout.expand).toEqual([true, true, true, true]);
    });

    it('groups the thousands of token counts, latencies and call counts (1,234,567); costs keep their three significant digits', async () => {
      const usage = { cachedTokensIn: 12_345, cacheWriteTokensIn: 1_000, reasoningTokensOut: 7_890 };
      const results = [resultOf(FAST, 'ok', { tokensIn: 1_234_567, tokensOut: 23_456, latencyMs: 12_345, providerCost: 0.0123456, usage })];
      const order = (answerA: string, answerB: string) => ({ ...failedEvaluation('x').orders[0], answerA, answerB, tokensIn: 600_000, tokensOut: 17_283 });
      const evaluations = [{ ...failedEvaluation('x'), status: 'completed', error: undefined, orders: [order(FAST, OTHER), order(OTHER, FAST)] }];
      const judgeStatistics = { judges: [{ judgeModelId: JUDGE, pairs: 1_500, positionConsistency: 0.996, chosePositionA: 0.004, decisive: 1, longerWon: null }] };
      proxy = await startProxy(host(), answered(results, { evaluations, judgeStatistics }));
      page = await openPage(browser(), host(), { url: proxy.url });
      await compare(page, { models: [FAST] });
      await ended(page);

      // Cache writes, priced above input, are said too.
      expect(await columnText(page, FAST, 'meta')).toBe('tokens 1,234,567 in (12,345 cached, 1,000 cache writes) / 23,456 out (7,890 reasoning)12,345 mscost $0.0123');
      const judge = await page.$eval('#judge-stats tr + tr', (tr) => [...(tr as HTMLTableRowElement).cells].map((cell) => cell.textContent));
      expect(judge.slice(0, 6)).toEqual([JUDGE, '2', '0', '1,200,000 / 34,566', '$0', '1,500']);
      // Shares neither 0 nor 1 never read 0 % or 100 % (rounded, they had: "never inconsistent").
      expect(judge.slice(6)).toEqual(['> 99 %', '< 1 %', '100 %', '–']);
    });

    it("shows a model's tokens as unknown, not 0, when its vendor's usage was missing (providerCost null)", async () => {
      host().simulator.setFault({ kind: 'no-usage', model: await upstreamOf(host(), FAST) });
      page = await openPage(browser(), host());
      await compare(page, { models: [FAST, OTHER] });
      await ended(page);

      expect(await columnText(page, FAST, 'meta')).toMatch(new RegExp(`^tokens unknown \\(usage missing\\)${count()} msestimated cost \\$0\\.0*[1-9]\\d*⚠ `));
      expect(await columnText(page, OTHER, 'meta')).toMatch(new RegExp(`^tokens ${count(true)} in / ${count(true)} out${count()} mscost \\$0\\.0*[1-9]`));
      // The status line's provider cost says how much of it is that estimate.
      const estimated = (await page.$eval(`${column(FAST)} .cost`, (el) => el.textContent ?? '')).replace(/^estimated cost /, '');
      const summary = await page.$eval('#summary', (el) => el.textContent ?? '');
      expect(summary).toMatch(/^2 completed · creditsUsed \S+ · provider cost \$0\.\d+ \(incl\. \$0\.\d+ estimated\) · promptLogId /);
      expect(summary).toContain(`(incl. ${estimated} estimated)`);
    });
  });

  describe('Judging', () => {
    it('renders the pairwise matrix (each pair in both orders, with its consistency) and the ranking with intervals', async () => {
      page = await openPage(browser(), host());
      await compare(page, { models: [FAST, OTHER, THIRD], judges: [JUDGE] });

      await page.waitForSelector('#ranking tr + tr');
      await ended(page);
      // Three pairs, each judged in both orders: six off-diagonal cells naming the judge.
      const cells = await page.$$eval('#matrix tr + tr td:not(:first-child):not(.diagonal)', (tds) => tds.map((td) => td.textContent ?? ''));
      expect(cells).toHaveLength(6);
      for (const cell of cells) expect(cell).toMatch(new RegExp(`^${JUDGE}: (fam_|tie)`));
      const evaluations = await page.$$eval('#evaluations tr + tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
      expect(evaluations).toHaveLength(3);
      for (const line of evaluations) expect(['yes', 'no']).toContain(line[4]);
      expect(await page.$eval('#decided', (el) => el.textContent)).toBe(
        'The position-swap verdict decided each winner: a model the judge picked in both orders wins, orders that disagree are a tie (judge weights accuracy 1, speed 0, cost 0).',
      );
      const ranking = await page.$$eval('#ranking tr + tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
      expect(ranking.map((line) => line[1]).sort()).toEqual([FAST, OTHER, THIRD].sort());
      for (const line of ranking) expect(line[3]).toMatch(/^\[-?\d+\.\d\d, -?\d+\.\d\d\]$/);
      const usd = '\\$\\d+(\\.\\d+)?';
      expect(await page.$eval('#summary', (el) => el.textContent)).toMatch(
        new RegExp(`^3 completed · creditsUsed \\d+(\\.\\d+)? · provider cost ${usd}: models ${usd} \\+ judges ${usd} · promptLogId pl_\\w+$`),
      );
      // The judge's six calls, their tokens and cost, and its statistics.
      const judges = await page.$$eval('#judge-stats tr + tr', (trs) => trs.map((tr) => [...(tr as HTMLTableRowElement).cells].map((cell) => cell.textContent ?? '')));
      expect(judges).toEqual([
        [
          JUDGE,
          '6',
          '0',
          expect.stringMatching(new RegExp(`^${count(true)} / ${count(true)}$`)),
          expect.stringMatching(/^\$0\.0*[1-9]/),
          '3',
          ...Array(4).fill(expect.stringMatching(/^(\d+ %|–)$/)),
        ],
      ]);

      // At phone width, nothing widens the page: the judging tables scroll in their own box, the status line wraps.
      await page.setViewport({ width: 400, height: 900 });
      const phone = await page.evaluate(() => {
        const within = (el: Element) => el.getBoundingClientRect().right <= innerWidth + 0.5;
        const summary = document.getElementById('summary') as HTMLElement;
        return {
          pageWidth: (document.scrollingElement as Element).scrollWidth <= innerWidth,
          columns: [...document.querySelectorAll('article.column')].every(within),
          summary: within(summary) && summary.scrollWidth <= summary.clientWidth,
          tablesScroll: [...document.querySelectorAll('#judging .table-scroll')].some((box) => box.scrollWidth > box.clientWidth),
          // Squeezed to the screen, the tables broke model IDs at every hyphen: each heading cell's text on one line,
          // and each model ID of the evaluations' cells (judge, picks, winner, scores) too.
          headingsWhole: [...document.querySelectorAll('#judging th')].every((th) => {
            const range = document.createRange();
            range.selectNodeContents(th);
            return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size <= 1;
          }),
          idsWhole: [...document.querySelectorAll('#evaluations td')]
            .flatMap((td) => [...td.querySelectorAll('.id')].map((id) => ({ td, id })))
            .every(({ id }) => id.getClientRects().length === 1),
          idsInCells: [...document.querySelectorAll('#evaluations tr + tr')].every((tr) => tr.querySelectorAll('td .id').length >= 5),
        };
      });
      expect(phone).toEqual({ pageWidth: true, columns: true, summary: true, tablesScroll: true, headingsWhole: true, idsWhole: true, idsInCells: true });

      // At 390 px, each table's heading and hint are in view, whole, outside the box that scrolls
      // sideways (in a caption, as wide as its table, they were clipped and scrolled away).
      await page.setViewport({ width: 390, height: 900 });
      const headings = await page.$$eval('#judging h2, #judging .hint', (els) =>
        els.map((el) => ({
          text: el.textContent?.slice(0, 20),
          inView: el.getBoundingClientRect().right <= innerWidth + 0.5 && el.scrollWidth <= el.clientWidth,
          scrolled: el.closest('.table-scroll') !== null,
        })),
      );
      expect(headings).toHaveLength(7);
      for (const heading of headings) expect(heading).toEqual({ text: heading.text, inView: true, scrolled: false });
      // Each box that scrolls takes the focus (Safari gives a scroller none: axe's scrollable-region-focusable),
      // a region named by its table's heading; focused, the arrow keys scroll it.
      const boxes = [];
      for (const box of await page.$$('#judging .table-scroll')) {
        const node = await page.accessibility.snapshot({ root: box, interestingOnly: false });
        boxes.push([await box.evaluate((el) => el.getAttribute('tabindex')), node?.role, node?.name]);
      }
      expect(boxes).toEqual([
        ['0', 'region', 'Pairwise matrix'],
        ['0', 'region', 'Evaluations'],
        ['0', 'region', 'Ranking'],
        ['0', 'region', 'Judges'],
      ]);
      await page.focus('#evaluations-part .table-scroll');
      await page.keyboard.press('ArrowRight');
      await page.waitForFunction(() => (document.querySelector('#evaluations-part .table-scroll') as HTMLElement).scrollLeft > 0);
    });

    it('shows a failed evaluation with no consistency, and its error where its winner would be', async () => {
      host().simulator.setFault({ kind: 'status', status: 400, model: await upstreamOf(host(), JUDGE) });
      page = await openPage(browser(), host());
      await compare(page, { models: [FAST, OTHER], judges: [JUDGE] });

      await page.waitForSelector('#evaluations tr + tr');
      await ended(page);
      const cells = await page.$eval('#evaluations tr + tr', (tr) => [...(tr as HTMLTableRowElement).cells].map((td) => ({ text: td.textContent ?? '', classes: td.className })));
      expect(cells[4]).toEqual({ text: '–', classes: '' });
      expect(cells[5]?.text).toMatch(/^failed: .+/);
    });

    it('keeps the judging tables narrow when a judge call fails with a 5,000-character message: its first 200 characters, wrapped, the whole folded', async () => {
      const message = `The server is overloaded: ${'please try again later, '.repeat(210)}`.slice(0, 5_000);
      const evaluations = [failedEvaluation(message)];
      proxy = await startProxy(host(), answered([resultOf(FAST, 'a'), resultOf(OTHER, 'b')], { evaluations }));
      page = await openPage(browser(), host(), { url: proxy.url });
      await compare(page, { models: [FAST, OTHER] });
      await ended(page);

      const matrix = await page.$eval('#matrix', (table) => {
        const box = table.parentElement as HTMLElement;
        const failed = [...table.querySelectorAll('.pick')].find((pick) => pick.textContent?.includes('failed')) as HTMLElement;
        return {
          scrolls: box.scrollWidth > box.clientWidth,
          text: failed.textContent,
          title: failed.title,
          // The error's box: 20rem at most, its text wrapped in it.
          messageWidth: (failed.querySelector('.message')?.getBoundingClientRect().width ?? Number.POSITIVE_INFINITY) <= 20 * 14 + 0.5,
        };
      });
      // It made the matrix about 35,000 px wide, scrolling sideways in its box; it now fits.
      expect(matrix).toEqual({ scrolls: false, text: `${JUDGE}: failed: ${message.slice(0, 200)}… (left out of the ranking)`, title: message, messageWidth: true });
      // The evaluation shows the same start as its winner, the whole message folded under it; its table fits too.
      const evaluation = await page.$eval('#evaluations', (table) => {
        const winner = (table as HTMLTableElement).rows[1]?.cells[5] as HTMLTableCellElement;
        const box = table.parentElement as HTMLElement;
        return {
          scrolls: box.scrollWidth > box.clientWidth,
          start: winner.querySelector('.message')?.textContent,
          whole: winner.querySelector('details:not([open]) p')?.textContent,
        };
      });
      expect(evaluation).toEqual({ scrolls: false, start: `${message.slice(0, 200)}…`, whole: message });
    });

    it("shows nothing of the last comparison's judging beside the next one's ranking when the answer ends before `done`", async () => {
      const ranked = (...models: string[]) =>
        models.map((modelId, i) => ({ rank: i + 1, modelId, strength: 1 - i, interval: [0.5 - i, 1.5 - i], winRate: 1 - i, wins: 1 - i, ties: 0, losses: i }));
      const judgeStatistics = {
        judges: [{ judgeModelId: JUDGE, pairs: 1, positionConsistency: 1, chosePositionA: 0.5, decisive: 1, longerWon: null }],
        agreement: { judgePairs: [{ judges: [JUDGE, THIRD], pairs: 1, agreement: 1, cohensKappa: 1 }], fleissKappa: null, fleissPairs: 0 },
      };
      // The first comparison's answer is whole; the second's ends after its `ranking` event, before `done`.
      const answers = [
        answered([resultOf(FAST, 'a'), resultOf(OTHER, 'b')], { evaluations: [failedEvaluation('refused')], ranking: ranked(FAST, OTHER), judgeStatistics }),
        scripted(
          sse('result', { index: 0, result: resultOf(OTHER, 'c') }),
          sse('result', { index: 1, result: resultOf(THIRD, 'd') }),
          sse('ranking', { ranking: ranked(THIRD, OTHER) }),
        ),
      ];
      proxy = await startProxy(host(), (res) => answers.shift()?.(res));
      page = await openPage(browser(), host(), { url: proxy.url });
      // The judging section's headings drawn, each with the rows of its table, and the agreement line.
      const judging = () =>
        page!.$eval('#judging', (section) => ({
          tables: [...section.querySelectorAll('h2')]
            .filter((h2) => h2.checkVisibility())
            .map((h2) => [h2.textContent, [...(document.querySelector(`table[aria-labelledby="${h2.id}"]`) as HTMLTableElement).rows].length]),
          agreement: (document.getElementById('agreement') as HTMLElement).checkVisibility() ? document.getElementById('agreement')?.textContent : null,
        }));

      await compare(page, { models: [FAST, OTHER] });
      await ended(page);
      expect(await judging()).toEqual({
        tables: [
          ['Pairwise matrix', 3],
          ['Evaluations', 2],
          ['Ranking', 3],
          ['Judges', 2],
        ],
        agreement: `${JUDGE} and ${THIRD}: agreement 100 %, Cohen's κ 1.00 over 1 pairs`,
      });

      await compare(page, { models: [OTHER, THIRD] });
      await ended(page);
      expect(await errorText(page)).toMatch(/^The gateway closed the connection before the answer ended/);
      // Only this comparison's ranking: the matrix, evaluations and judges of the first one showed beside it.
      expect(await judging()).toEqual({ tables: [['Ranking', 3]], agreement: null });
      expect(await page.$$eval('#ranking tr + tr', (trs) => trs.map((tr) => (tr as HTMLTableRowElement).cells[1]?.textContent))).toEqual([THIRD, OTHER]);
    });

    it("wraps a failed judge call's message of many words inside its matrix cell at 1280 px: no line runs into the next cell", async () => {
      // A vendor's message as it comes (90 characters of words): an unbroken one hid this, as wide as its box.
      const message = 'The model is currently overloaded with other requests. Please retry your request later on.';
      expect(message).toHaveLength(90);
      page = await compareFailedJudging(message, 'r');

      const picks = await page.$$eval('#matrix .pick', (els) =>
        els.map((pick) => {
          const cell = (pick.closest('td') as HTMLElement).getBoundingClientRect();
          const range = document.createRange();
          range.selectNodeContents(pick);
          const message = pick.querySelector('.message')?.getBoundingClientRect();
          return {
            failed: pick.textContent?.includes('failed: ') ?? false,
            // Every line of it (the judge, the message's box, the words after it) inside its own cell.
            inside: [...range.getClientRects()].every((rect) => rect.left >= cell.left - 0.5 && rect.right <= cell.right + 0.5),
            // The message in a box at most 20rem wide.
            box: message === undefined ? null : message.width <= 20 * 14 + 0.5,
          };
        }),
      );
      expect(picks).toHaveLength(12);
      expect(picks.filter((pick) => pick.failed)).toHaveLength(6);
      expect(picks).toEqual(picks.map((pick) => ({ failed: pick.failed, inside: true, box: pick.failed ? true : null })));
      expect(await page.evaluate(() => document.documentElement.scrollWidth === innerWidth)).toBe(true);
    });

    it("gives a judge's reasoning and a failed call's error room in the evaluations at 1280 px: the table scrolls in its box rather than crushing them", async () => {
      // 950 characters of words, as a judge writes them (up to 1,000 an order), and a vendor's error of 300.
      const reasoning = 'Answer A explains the scattering of light by the molecules of the air and why shorter wavelengths scatter more. '.repeat(9).slice(0, 950);
      const message = 'The model is currently overloaded with other requests, please retry your request later on. '.repeat(4).slice(0, 300);
      page = await compareFailedJudging(message, reasoning);

      // Every reasoning and whole message opened, as "show" and "whole message" open them.
      const layout = await page.$eval('#evaluations', (table) => {
        for (const details of table.querySelectorAll('details')) (details as HTMLDetailsElement).open = true;
        const widths = (selector: string) => [...table.querySelectorAll(selector)].map((el) => el.getBoundingClientRect().width);
        const box = table.parentElement as HTMLElement;
        return {
          reasoning: widths('details.reasoning p'),
          start: widths('.message'),
          whole: widths('details.whole-message p'),
          scrolls: box.scrollWidth > box.clientWidth,
          pageWidth: document.documentElement.scrollWidth === innerWidth,
        };
      });
      // Squeezed into a column of about 95 px, they read a word or two a line (a row 3,794 px tall).
      expect(layout.reasoning).toHaveLength(6);
      expect(layout.start).toHaveLength(12); // the failed order's pick, and the winner
      expect(layout.whole).toHaveLength(6);
      const rem = 14;
      expect({
        reasoning: Math.min(...layout.reasoning) >= 20 * rem - 0.5 && Math.max(...layout.reasoning) <= 40 * rem + 0.5,
        start: Math.min(...layout.start) >= 12 * rem - 0.5 && Math.max(...layout.start) <= 20 * rem + 0.5,
        whole: Math.min(...layout.whole) >= 20 * rem - 0.5 && Math.max(...layout.whole) <= 40 * rem + 0.5,
        scrolls: layout.scrolls,
        pageWidth: layout.pageWidth,
      }).toEqual({ reasoning: true, start: true, whole: true, scrolls: true, pageWidth: true });
    });

    it("shows what decided each winner: the weighted scores, the evaluations the ranking leaves out, the judges' reasoning", async () => {
      // A judge of its own model, beside an independent one; the cost weight decides the winners.
      const CHEAP = 'fam_h-micro';
      host().simulator.setJudge({ behaviour: 'longer', model: await upstreamOf(host(), JUDGE) });
      page = await openPage(browser(), host());
      await compare(page, { models: [JUDGE, CHEAP], judges: [JUDGE, OTHER], weights: { accuracy: '0.1', cost: '1' } });
      await page.waitForSelector('#evaluations tr + tr');
      await ended(page);

      expect(await page.$eval('#decided', (el) => el.textContent)).toBe(
        'The higher weighted score decided each winner (judge weights accuracy 0.1, speed 0, cost 1), whatever the judge picked.',
      );
      const table = await page.$eval('#evaluations', (el) =>
        [...(el as HTMLTableElement).rows].map((tr) => ({ cells: [...tr.cells].map((td) => td.textContent), excluded: tr.classList.contains('excluded') })),
      );
      expect(table[0]?.cells.slice(7)).toEqual(['weighted scores', 'in ranking', 'reasoning']);
      const byJudge = Object.fromEntries(table.slice(1).map((line) => [line.cells[0], line]));
      expect(byJudge[JUDGE]?.cells.slice(7)).toEqual([
        expect.stringMatching(new RegExp(`^${JUDGE} 0\\.\\d+, ${CHEAP} 0\\.\\d+$`)),
        `no: same-model judge of ${JUDGE}; an independent judge's verdict counts`,
        `show${JUDGE} shown first: Simulated longer judge.${CHEAP} shown first: Simulated longer judge.`,
      ]);
      expect(byJudge[JUDGE]?.excluded).toBe(true);
      expect(byJudge[OTHER]?.cells[8]).toBe('yes');
      expect(byJudge[OTHER]?.excluded).toBe(false);
      // In the matrix, a line a judge in each cell, the self-judge's marked as left out.
      const cells = await page.$$eval('#matrix tr + tr td:not(:first-child):not(.diagonal)', (tds) =>
        tds.map((td) => [...td.querySelectorAll('.pick')].map((pick) => [pick.textContent?.split(':')[0], pick.classList.contains('excluded')])),
      );
      expect(cells).toEqual(
        Array(2).fill([
          [JUDGE, true],
          [OTHER, false],
        ]),
      );
      // And how far the two judges agree.
      expect(await page.$eval('#agreement', (el) => el.textContent)).toMatch(
        new RegExp(`^${JUDGE} and ${OTHER}: agreement (\\d+ %|–), Cohen's κ (-?\\d\\.\\d\\d|–) over 1 pairs$`),
      );
      // The reasoning is folded until asked for.
      expect(await page.$$eval('#evaluations details', (els) => els.map((el) => (el as HTMLDetailsElement).open))).toEqual([false, false]);
      // Each row named by its judge and pair (a pair is judged once by each judge), and its disclosure after its row.
      const pair = `${JUDGE} vs ${CHEAP}`;
      const named = await page.$$eval('#evaluations tr + tr', (rows) =>
        rows.map((tr) => [(tr as HTMLTableRowElement).cells[1]?.getAttribute('aria-label'), tr.querySelector('summary')?.getAttribute('aria-label')]),
      );
      expect(named.sort()).toEqual(
        [
          [`${JUDGE}: ${pair}`, `show reasoning, ${JUDGE}: ${pair}`],
          [`${OTHER}: ${pair}`, `show reasoning, ${OTHER}: ${pair}`],
        ].sort(),
      );
      // Why a row is left out in a box at least 14rem wide, its model ID never broken at its hyphens.
      const reason = await page.$eval('#evaluations tr.excluded .reason', (box) => ({
        width: box.getBoundingClientRect().width / parseFloat(getComputedStyle(document.documentElement).fontSize),
        id: getComputedStyle(box.querySelector('.id') as Element).whiteSpace,
      }));
      expect(reason.width).toBeGreaterThanOrEqual(14 - 0.01);
      expect(reason.id).toBe('nowrap');
      // The greyed text is still readable: WCAG AA's 4.5:1 at least (#6b7480 on the row's #f6f7f9 was 4.42:1).
      const greyed = await contrasts(page, '#evaluations tr.excluded *, #matrix .pick.excluded');
      expect(greyed.length).toBeGreaterThanOrEqual(10);
      expect(greyed.filter((text) => text.ratio < 4.5)).toEqual([]);
    });

    it('can be used from the keyboard and a screen reader: focus moves to Stop and back, the end is said in a status line, the tables have names and headers', async () => {
      page = await openPage(browser(), host());
      await page.select('#models', FAST, OTHER);
      await page.select('#judges', JUDGE);
      await page.focus('#run');
      // Where the focus goes, and what the status line says, heard as they change: the comparison may end before a read of them could run.
      await page.evaluate(() => {
        const trail: string[] = [];
        const said: string[] = [];
        Object.assign(window, { focusTrail: trail, said });
        document.addEventListener('focusin', (event) => trail.push((event.target as HTMLElement).id || (event.target as HTMLElement).localName));
        const summary = document.getElementById('summary') as HTMLElement;
        new MutationObserver(() => said.push(summary.textContent ?? '')).observe(summary, { childList: true, characterData: true, subtree: true });
      });
      await page.keyboard.press('Enter');
      await ended(page);
      // Compare, disabled while the comparison runs, hands the focus to Stop rather than to the page's body, and gets it back.
      expect(await page.evaluate(() => (window as unknown as { focusTrail: string[] }).focusTrail)).toEqual(['stop', 'run']);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('run');

      expect(await page.$eval('#summary', (el) => [el.getAttribute('role'), el.textContent])).toEqual(['status', expect.stringMatching(/^2 completed · creditsUsed \d/)]);
      // The start is said too (the status line was only emptied), then the answer, then how it ended.
      expect(await page.evaluate(() => (window as unknown as { said: string[] }).said)).toEqual([
        'Comparing 2 models with 1 judge…',
        expect.stringMatching(/^creditsUsed \d/),
        expect.stringMatching(/^2 completed · creditsUsed \d/),
      ]);
      // The headings go down one level at a time (the columns' were h3 under the page's h1), outputs aside.
      const levels = await page.$$eval('h1, h2, h3, h4, h5, h6', (els) => els.filter((el) => !el.closest('.output')).map((el) => Number(el.localName[1])));
      expect(levels).toEqual([1, 2, 2, 2, 2, 2, 2]);
      // Each column is an article named by its model.
      const articles = [];
      for (const article of await page.$$('article.column')) {
        const node = await page.accessibility.snapshot({ root: article, interestingOnly: false });
        articles.push([node?.role, node?.name]);
      }
      expect(articles).toEqual([
        ['article', FAST],
        ['article', OTHER],
      ]);
      const tables = await page.$$eval('#judging table', (els) =>
        els.map((table) => {
          const rows = [...(table as HTMLTableElement).rows];
          return {
            columns: [...(rows[0]?.cells ?? [])].every((cell) => cell.localName === 'th' && cell.getAttribute('scope') === 'col'),
            rows: rows.slice(1).map((line) => [...line.cells].filter((cell) => cell.localName === 'th').map((cell) => [cell.getAttribute('scope'), cell.textContent])),
          };
        }),
      );
      expect(tables).toEqual([
        { columns: true, rows: [[['row', FAST]], [['row', OTHER]]] },
        { columns: true, rows: [[['row', `${FAST} vs ${OTHER}`]]] },
        { columns: true, rows: expect.arrayContaining([[['row', FAST]], [['row', OTHER]]]) },
        { columns: true, rows: [[['row', JUDGE]]] },
      ]);
      // Each table's name and description, as the browser gives them to a screen reader: its heading and its hint.
      const names = [];
      for (const table of await page.$$('#judging table')) {
        const node = await page.accessibility.snapshot({ root: table, interestingOnly: false });
        names.push([node?.role, node?.name, node?.description ?? '']);
      }
      expect(names).toEqual([
        ['table', 'Pairwise matrix', expect.stringMatching(/^Row shown first \(answer A\)/)],
        ['table', 'Evaluations', expect.stringMatching(/^The position-swap verdict decided each winner/)],
        ['table', 'Ranking', ''],
        ['table', 'Judges', expect.stringMatching(/^Each judge's calls, tokens and cost/)],
      ]);
    });

    it('on Stop, says that the gateway runs a judged request to its end and charges it', async () => {
      host().simulator.setFault({ kind: 'slow', delayMs: 1_500, model: await upstreamOf(host(), OTHER) });
      page = await openPage(browser(), host());
      const answer = page.waitForResponse((response) => response.url().endsWith('/api/v1/prompt'));
      await compare(page, { models: [FAST, OTHER], judges: [JUDGE] });
      const requestId = (await answer).headers()['x-request-id'];

      await page.click('#stop');
      await page.waitForSelector(column(OTHER, 'stopped'));
      await ended(page);
      expect(await page.$eval('#summary', (el) => el.textContent)).toBe(
        `2 stopped · Stopped in this page only: the gateway runs a judged request to its end and charges it in full (x-request-id: ${requestId})`,
      );
      // And so it does: the judge is called once the slow model has answered.
      await host().settled();
      const judge = await upstreamOf(host(), JUDGE);
      expect(
        host()
          .simulator.calls()
          .filter((call) => call.model === judge),
      ).toHaveLength(2);
    });
  });

  describe('Untrusted output', () => {
    const HOSTILE =
      "Here: <img src=x onerror=\"window.__pwned = 'img'\"> and <script>window.__pwned = 'script'</script> " + "and [a link](javascript:window.__pwned='link') and **bold**";
    const XSS_MODEL = 'fam_d-4.20-0309-non-reasoning';

    /** A page whose comparison's XSS_MODEL answered `text`, rendered as Markdown once `selector` shows in its output. */
    async function asMarkdown(text: string, selector: string): Promise<Page> {
      await answerWith(XSS_MODEL, text);
      const opened = await openPage(browser(), host());
      // Judged, so that the whole answer comes at once (the fault answers a whole completion, not a stream).
      await compare(opened, { models: [XSS_MODEL, FAST], judges: [JUDGE] });
      await opened.waitForSelector(column(XSS_MODEL, 'completed'));
      await ended(opened);
      await opened.click('#markdown');
      await opened.waitForSelector(`${column(XSS_MODEL)} .output ${selector}`);
      return opened;
    }

    it('renders an output carrying <img onerror> and <script> inert, as text and as Markdown', async () => {
      // The simulator answers this model with a well-formed chat completion whose text is hostile.
      await answerWith(XSS_MODEL, HOSTILE);
      page = await openPage(browser(), host());
      const violations: string[] = [];
      page.on('console', (message) => violations.push(message.text()));
      // Judged, so that the output is also shown to the judges and the matrix and ranking render beside it.
      await compare(page, { models: [XSS_MODEL, FAST], judges: [JUDGE] });
      await page.waitForSelector(column(XSS_MODEL, 'completed'));
      await ended(page);

      const inert = () =>
        page!.evaluate(() => ({
          pwned: (window as { __pwned?: string }).__pwned,
          scripts: [...document.scripts].map((script) => script.getAttribute('src')),
          images: document.querySelectorAll('img').length,
          handlers: [...document.querySelectorAll('*')].filter((el) => [...el.attributes].some((a) => a.name.startsWith('on'))).length,
          javascriptLinks: document.querySelectorAll('a[href^="javascript:" i]').length,
        }));
      expect(await columnText(page, XSS_MODEL, 'output')).toBe(HOSTILE);
      expect(await inert()).toEqual({ pwned: undefined, scripts: ['/page.js'], images: 0, handlers: 0, javascriptLinks: 0 });

      await page.click('#markdown');
      await page.waitForSelector(`${column(XSS_MODEL)} .output strong`);
      expect(await page.$eval(`${column(XSS_MODEL)} .output strong`, (el) => el.textContent)).toBe('bold');
      expect(await inert()).toEqual({ pwned: undefined, scripts: ['/page.js'], images: 0, handlers: 0, javascriptLinks: 0 });
      expect(violations.filter((text) => /Trusted Type|Content Security Policy/i.test(text))).toEqual([]);
    });

    it('keeps, as Markdown, all of an output that names tags in prose: a tag it does not keep is shown as written, and nothing after it is lost', async () => {
      const prose = [
        'To name the tab, put a <title> element inside <head>.',
        '',
        '**Step 2:** inline scripts go in a <script> element, styles in a <style> one; draw with <svg> and a <circle r="5">.',
        '',
        'Step 3: a <!-- comment --> and <b>bold by hand</b>, then the end.',
      ].join('\n');
      page = await asMarkdown(prose, 'strong');
      const shown = await page.$eval(`${column(XSS_MODEL)} .output`, (output) => ({ text: output.textContent, bold: [...output.querySelectorAll('b')].map((b) => b.textContent) }));
      // Everything after "<title>" had been taken for the title's text and dropped, the column still "completed", with no note.
      expect(shown.text).toContain('put a <title> element inside <head>.');
      expect(shown.text).toContain('inline scripts go in a <script> element, styles in a <style> one; draw with <svg> and a <circle r="5">.');
      expect(shown.text).toContain('Step 3: a <!-- comment --> and bold by hand, then the end.');
      expect(shown.bold).toEqual(['bold by hand']);
      expect(await page.evaluate(() => (window as { __pwned?: string }).__pwned)).toBeUndefined();
    });

    it('shows a wide Markdown table with its words whole, scrolling sideways in its own box', async () => {
      const headings = Array.from({ length: 12 }, (_, i) => `Context window ${i}`);
      const table = [`| ${headings.join(' | ')} |`, `|${headings.map(() => '---').join('|')}|`, `| ${headings.map((_, i) => `about 272,000 tokens ${i}`).join(' | ')} |`].join(
        '\n',
      );
      page = await asMarkdown(table, 'table');
      const shown = await page.$eval(`${column(XSS_MODEL)} .output table`, (table) => {
        // A word broken across lines draws in more than one box.
        const broken = [...table.querySelectorAll('th, td')].some((cell) => {
          const range = document.createRange();
          const text = cell.firstChild as Text;
          return text.data.split(' ').some((word, i, words) => {
            const start = words.slice(0, i).join(' ').length + (i > 0 ? 1 : 0);
            range.setStart(text, start);
            range.setEnd(text, start + word.length);
            return range.getClientRects().length > 1;
          });
        });
        return { broken, scrolls: table.scrollWidth > table.clientWidth };
      });
      // The cells took the output's overflow-wrap: anywhere, and shrank to a letter or two a line.
      expect(shown).toEqual({ broken: false, scrolls: true });
    });
  });

  describe("A vendor's words beside the page's", () => {
    /** Whether `word`, in the last text of `selector` that holds it, is drawn left to right (its first letter left of its last). */
    function readsLeftToRight(page: Page, selector: string, word: string): Promise<boolean | null> {
      return page.$eval(
        selector,
        (el, word) => {
          const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
          let found: [Node, number] | undefined;
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const at = node.textContent?.lastIndexOf(word) ?? -1;
            if (at !== -1) found = [node, at];
          }
          if (!found) return null;
          const [node, at] = found;
          const left = (i: number) => {
            const range = document.createRange();
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            return range.getBoundingClientRect().left;
          };
          return left(at) < left(at + word.length - 1);
        },
        word,
      );
    }

    /**
     * Where `text` (holding a right-to-left override) is in `selector`, outside the outputs:
     * whether each is isolated from the page's words, alone in an element that is
     * unicode-bidi: isolate (a table cell or a paragraph is, but holds the page's words too).
     */
    function isolated(page: Page, selector: string, text: string): Promise<boolean[]> {
      return page.$eval(
        selector,
        (root, text) => {
          const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
          const found: boolean[] = [];
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const parent = node.parentElement as Element;
            if (!node.textContent?.includes(text) || parent.closest('.output')) continue;
            found.push(getComputedStyle(parent).unicodeBidi === 'isolate' && parent.textContent === text);
          }
          return found;
        },
        text,
      );
    }

    it("isolates an error's message, a warning and a judge's reasoning: a right-to-left override in them reverses none of the page's words", async () => {
      const RLO = 'Overloaded \u202e';
      const evaluations = [failedEvaluation(RLO, RLO)];
      // A model cut off after some text, with its vendor's error; another with a warning; then a refusal.
      const failed = resultOf(FAST, '', { status: 'failed', error: { code: 'upstream_error', upstreamStatus: 529, message: RLO } });
      const warned = resultOf(OTHER, 'ok', { warnings: [RLO] });
      const judged = scripted(
        sse('delta', { index: 0, text: 'partial' }),
        sse('result', { index: 0, result: failed }),
        sse('result', { index: 1, result: warned }),
        sse('done', { results: [failed, warned], evaluations, creditsUsed: 0, promptLogId: 'pl_test' }),
      );
      let requests = 0;
      proxy = await startProxy(host(), async (res) => {
        requests += 1;
        if (requests === 1) return judged(res);
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'invalid_request', message: RLO, details: [{ field: '/prompt', message: RLO }] } }));
      });
      page = await openPage(browser(), host(), { url: proxy.url });
      await compare(page, { models: [FAST, OTHER] });
      await ended(page);

      expect(await columnText(page, FAST, 'error')).toBe(`upstream_error (upstream 529): ${RLO} (the text below arrived before it stopped)`);
      expect(await readsLeftToRight(page, `${column(FAST)} .error`, 'below')).toBe(true);
      expect(await readsLeftToRight(page, '#matrix', 'ranking')).toBe(true);
      // The error, the warning, the failed pick in the matrix and in the evaluation (B first), its winner, and the reasoning.
      expect(await isolated(page, 'main', RLO)).toEqual(Array(6).fill(true));

      await page.click('#run');
      await ended(page);
      expect(await errorText(page)).toBe(`400 invalid_request: ${RLO}\n  shown at the form's fields: /prompt`);
      expect(await isolated(page, '#error', RLO)).toEqual([true]);
      expect(await page.$eval('#prompt-error', (el) => el.textContent)).toBe(RLO);
      expect(await isolated(page, '#prompt-error', RLO)).toEqual([true]);
    });
  });

  describe('Markdown that cannot be rendered', () => {
    it('shows an output marked throws on as text with a note, in its column only; the toggle still renders the others', async () => {
      // marked recurses once per '>': "Maximum call stack size exceeded".
      const nested = `${'>'.repeat(5_000)} x`;
      proxy = await startProxy(host(), answered([resultOf(FAST, nested), resultOf(OTHER, 'a **fine** answer')]));
      page = await openPage(browser(), host(), { url: proxy.url });
      await page.click('#markdown');
      await compare(page, { models: [FAST, OTHER] });
      await ended(page);

      expect(await columnText(page, OTHER, 'status')).toBe('completed');
      expect(await columnText(page, FAST, 'status')).toBe('completed');
      expect(await columnText(page, FAST, 'output')).toBe(nested);
      expect(await columnText(page, FAST, 'render-note')).toMatch(/^Shown as text: Markdown could not be rendered \(.*call stack.*\)\.$/);
      expect(await page.$eval(`${column(OTHER)} .output strong`, (el) => el.textContent)).toBe('fine');
      expect(await page.$eval(`${column(OTHER)} .render-note`, (el) => el.hidden)).toBe(true);
      expect(await errorText(page)).toBe('');

      // Off and on again: every column is rendered again, the one after the failing one too.
      await page.click('#markdown');
      expect(await page.$$eval('.output strong', (els) => els.length)).toBe(0);
      expect(await page.$eval(`${column(FAST)} .render-note`, (el) => el.hidden)).toBe(true);
      await page.click('#markdown');
      await rendered(page);
      expect(await page.$eval(`${column(OTHER)} .output strong`, (el) => el.textContent)).toBe('fine');
      expect(await columnText(page, FAST, 'render-note')).toMatch(/^Shown as text: Markdown could not be rendered/);
    });
  });

  describe('Markdown that would stall the page', () => {
    it('shows an output over 24,000 characters as text, with a button that renders it as Markdown anyway, the focus then on its column', async () => {
      // marked takes about half a minute on this one.
      const hostile = 'a_'.repeat(50_000);
      const long = '- item\n'.repeat(3_500);
      proxy = await startProxy(host(), answered([resultOf(FAST, hostile), resultOf(OTHER, long)]));
      page = await openPage(browser(), host(), { url: proxy.url });
      await page.click('#markdown');
      await compare(page, { models: [FAST, OTHER] });
      await ended(page);

      for (const [modelId, text] of [
        [FAST, hostile],
        [OTHER, long],
      ]) {
        expect(await columnText(page, modelId, 'output')).toBe(text);
        expect(await columnText(page, modelId, 'render-note')).toBe('Shown as text: longer than the 24,000 characters rendered as Markdown. Render as Markdown anyway');
      }
      // From the keyboard: the button goes with its note, and the focus to its column, named by its model (it fell to the page's body).
      await page.focus(`${column(OTHER)} .render-note button`);
      await page.keyboard.press('Enter');
      await rendered(page);
      // Counted in the page: $$eval would make a handle of each of them.
      expect(await page.$eval(`${column(OTHER)} .output`, (el) => el.querySelectorAll('li').length)).toBe(3_500);
      expect(await page.$eval(`${column(OTHER)} .render-note`, (el) => el.hidden)).toBe(true);
      expect(await page.evaluate((selector) => document.activeElement === document.querySelector(selector), column(OTHER))).toBe(true);
      const focused = await page.accessibility.snapshot({ root: (await page.$(column(OTHER))) ?? undefined, interestingOnly: false });
      expect([focused?.role, focused?.name, focused?.focused]).toEqual(['article', OTHER, true]);
      // The other one is still text: no element in it but its text's blocks.
      expect(await page.$eval(`${column(FAST)} .output`, (el) => el.querySelectorAll(':not(.text-block)').length)).toBe(0);
    });

    it('stops a Markdown render at 2 s in its thread, the page answering all along: shown as text, with a button that renders it anyway with no limit; the columns after it rendered', async () => {
      // Unmatched emphasis marks: marked takes time quadratic in them, about 3 s on these 16,000 characters.
      const hostile = '**a_'.repeat(4_000);
      const fine = (name: string) => `# ${name}\n\n**bold**`;
      proxy = await startProxy(host(), answered([resultOf(FAST, hostile), resultOf(OTHER, fine('two')), resultOf(THIRD, fine('three'))]));
      page = await openPage(browser(), host(), { url: proxy.url });
      await page.click('#markdown');
      await watchLongTasks(page);
      await compare(page, { models: [FAST, OTHER, THIRD] });
      await ended(page);

      expect(await columnText(page, FAST, 'output')).toBe(hostile);
      expect(await columnText(page, FAST, 'render-note')).toBe('Shown as text: rendering it as Markdown took longer than 2 s. Render as Markdown anyway');
      // The results after it waited for its render, then rendered in a new thread.
      for (const [modelId, name] of [
        [OTHER, 'two'],
        [THIRD, 'three'],
      ]) {
        expect(await page.$eval(`${column(modelId)} .output h1`, (el) => el.textContent)).toBe(name);
      }
      // marked ran in the Markdown thread: no task of the page's near the seconds it took.
      expect(Math.max(0, ...(await longTasks(page)))).toBeLessThan(500);

      // Asked anyway: rendered in a thread of the column's own, however long it takes.
      await page.click(`${column(FAST)} .render-note button`);
      expect(await columnText(page, FAST, 'render-note')).toBe('Rendering as Markdown…');
      await rendered(page);
      expect(await page.$eval(`${column(FAST)} .output`, (el) => el.classList.contains('markdown'))).toBe(true);
      expect(await page.$eval(`${column(FAST)} .render-note`, (el) => el.hidden)).toBe(true);
      expect(Math.max(0, ...(await longTasks(page)))).toBeLessThan(500);
    });

    it("counts a render's 2 s from its thread's load: with the thread's script 2.5 s late (a slow link), the outputs render", async () => {
      const fine = (name: string) => `# ${name}\n\n**bold**`;
      proxy = await startProxy(host(), answered([resultOf(FAST, fine('one')), resultOf(OTHER, fine('two'))]), (req) =>
        req.url === '/page-markdown.js' ? sleep(2_500) : undefined,
      );
      page = await openPage(browser(), host(), { url: proxy.url });
      await page.click('#markdown');
      await compare(page, { models: [FAST, OTHER] });
      await ended(page);

      for (const [modelId, name] of [
        [FAST, 'one'],
        [OTHER, 'two'],
      ]) {
        expect(await page.$eval(`${column(modelId)} .output h1`, (el) => el.textContent)).toBe(name);
        expect(await page.$eval(`${column(modelId)} .render-note`, (el) => el.hidden)).toBe(true);
      }
    });

    it("shows an output's text while the thread's script is late, and its Markdown once it comes", async () => {
      const text = '# one\n\n**bold**';
      proxy = await startProxy(host(), answered([resultOf(FAST, text)]), (req) => (req.url === '/page-markdown.js' ? sleep(3_000) : undefined));
      page = await openPage(browser(), host(), { url: proxy.url });
      await page.click('#markdown');
      await compare(page, { models: [FAST] });
      await page.waitForSelector(column(FAST, 'completed'));
      // Waiting for its first render: the text, not an empty box.
      expect(await page.$eval(`${column(FAST)} .output`, (el) => [el.getAttribute('aria-busy'), el.textContent])).toEqual(['true', text]);
      await ended(page);
      expect(await page.$eval(`${column(FAST)} .output h1`, (el) => el.textContent)).toBe('one');
    });

    it('waits four times as long as a slow render took before rendering streamed Markdown again', async () => {
      // 30 writes 100 ms apart, then the result: 3 s of deltas.
      const pieces = Array.from({ length: 30 }, (_, i) => `- item ${i}\n`);
      const result = resultOf(FAST, pieces.join(''));
      proxy = await startProxy(
        host(),
        scripted(
          ...pieces.flatMap((text) => [sse('delta', { index: 0, text }), 100]),
          sse('result', { index: 0, result }),
          sse('done', { results: [result], creditsUsed: 0, promptLogId: 'pl_test' }),
        ),
      );
      page = await openPage(browser(), host(), { url: proxy.url });
      // Every Markdown render (the page's only innerHTML) made to take 300 ms; when each began and ended, and whether its column ran.
      await page.evaluate(() => {
        const renders: { start: number; end: number; running: boolean }[] = [];
        Object.assign(window, { __renders: renders });
        const inner = Object.getOwnPropertyDescriptor(Element.prototype, 'innerHTML') as PropertyDescriptor;
        Object.defineProperty(Element.prototype, 'innerHTML', {
          ...inner,
          set(this: Element, html: string) {
            const start = performance.now();
            while (performance.now() < start + 300);
            inner.set?.call(this, html);
            renders.push({ start, end: performance.now(), running: this.closest('article')?.getAttribute('data-status') === 'running' });
          },
        });
      });
      await page.click('#markdown');
      await compare(page, { models: [FAST] });
      await page.waitForSelector(column(FAST, 'completed'));
      await ended(page);

      const renders = await page.evaluate(() => (window as unknown as { __renders: { start: number; end: number; running: boolean }[] }).__renders);
      const streamed = renders.filter((render) => render.running);
      // Between two renders while the model streams, 4 x 300 ms at least (back to back, a frame or so).
      const waits = streamed.slice(1).map((render, i) => render.start - (streamed[i] as { end: number }).end);
      expect(streamed.length).toBeGreaterThanOrEqual(2);
      expect(Math.min(...waits)).toBeGreaterThanOrEqual(1_150);
      expect(await page.$eval(`${column(FAST)} .output`, (el) => el.querySelectorAll('li').length)).toBe(30);
    });

    it('renders a table of cells spanning thousands of columns and rows without freezing the tab: its spans are cut to 20', async () => {
      // 21 KB, under the 24,000 characters rendered as Markdown: a browser takes spans up to 1,000
      // columns and 65,534 rows, and laid this out (borders collapsed) for minutes.
      const spans = `<table>${'<tr><td colspan=1000 rowspan=65534>x</td><td rowspan=65534>y</td></tr>'.repeat(300)}</table>`;
      const plain = '<table><tr><td colspan=3 rowspan=2>a</td><td rowspan=0>b</td><td colspan=x>c</td></tr><tr><td>d</td></tr></table>';
      proxy = await startProxy(host(), answered([resultOf(FAST, spans), resultOf(OTHER, plain)]));
      page = await openPage(browser(), host(), { url: proxy.url });
      await page.click('#markdown');
      await watchLongTasks(page);
      await compare(page, { models: [FAST, OTHER] });
      await ended(page);

      const cells = (modelId: string) =>
        page!.$eval(`${column(modelId)} .output`, (el) => {
          const seen = new Set<string>();
          for (const cell of el.querySelectorAll('td')) seen.add(`${cell.getAttribute('colspan')} ${cell.getAttribute('rowspan')}`);
          return { count: el.querySelectorAll('td').length, spans: [...seen], collapse: getComputedStyle(el.querySelector('table') as Element).borderCollapse };
        });
      expect(await cells(FAST)).toEqual({ count: 600, spans: ['20 20', 'null 20'], collapse: 'separate' });
      // A span in reach is kept; one a browser reads as 1, or 0 (every row left), is 1.
      expect(await cells(OTHER)).toEqual({ count: 4, spans: ['3 2', 'null 1', '1 null', 'null null'], collapse: 'separate' });
      // The page answered all along: no task near the seconds it took (the render itself takes a few ms).
      expect(Math.max(0, ...(await longTasks(page)))).toBeLessThan(2_000);
    });

    it('shows as text an output whose Markdown tables would hold more than 10,000 cells: a short row gets as many as its header', async () => {
      // Under 24,000 characters: a header of 2,900 columns, then rows of `|`, each of which
      // GFM fills up to 2,900 cells (17 million in all: marked alone took seconds, then the tab died).
      const table = (columns: number, length: number) => {
        const head = `|${'a|'.repeat(columns)}\n|${'-|'.repeat(columns)}\n`;
        return head + '|\n'.repeat(Math.floor((length - head.length) / 2));
      };
      const hostile = table(2_900, 23_990);
      // 100 columns and 99 rows: 10,000 cells, the most rendered.
      const most = table(100, 602);
      proxy = await startProxy(host(), answered([resultOf(FAST, hostile), resultOf(OTHER, most)]));
      page = await openPage(browser(), host(), { url: proxy.url });
      await page.click('#markdown');
      await watchLongTasks(page);
      await compare(page, { models: [FAST, OTHER] });
      await ended(page);

      expect(await columnText(page, FAST, 'output')).toBe(hostile);
      expect(await columnText(page, FAST, 'render-note')).toBe(
        "Shown as text: its tables would hold more than the 10,000 cells rendered as Markdown (a row gets as many cells as its table's header).",
      );
      expect(await page.$eval(`${column(FAST)} .output`, (el) => el.querySelectorAll('table').length)).toBe(0);
      expect(await page.$eval(`${column(OTHER)} .output`, (el) => [el.querySelectorAll('th').length, el.querySelectorAll('td').length])).toEqual([100, 9_900]);
      expect(await page.$eval(`${column(OTHER)} .render-note`, (el) => el.hidden)).toBe(true);
      expect(Math.max(0, ...(await longTasks(page)))).toBeLessThan(2_000);
    });

    it('renders the Markdown of results that arrive together one in a task, so that the page answers between them', async () => {
      const text = (name: string) => `# ${name}\n\n**bold** and a [link](https://example.com/)`;
      const results = [resultOf(FAST, text('one')), resultOf(OTHER, text('two')), resultOf(THIRD, text('three'))];
      // Every result in one write, as a judged request's arrive.
      proxy = await startProxy(
        host(),
        scripted(...results.map((result, index) => sse('result', { index, result })), sse('done', { results, creditsUsed: 0, promptLogId: 'pl_test' })),
      );
      page = await openPage(browser(), host(), { url: proxy.url });
      await page.click('#markdown');
      // The columns whose output became Markdown, batch by batch of mutations (one batch at least after each task).
      await page.evaluate(() => {
        const batches: number[] = [];
        Object.assign(window, { __batches: batches });
        new MutationObserver((records) => {
          const rendered = new Set(records.filter((record) => record.target instanceof Element && record.target.matches('.output.markdown')).map((record) => record.target));
          if (rendered.size > 0) batches.push(rendered.size);
        }).observe(document.getElementById('columns') as HTMLElement, { attributes: true, attributeFilter: ['class'], subtree: true });
      });
      await compare(page, { models: [FAST, OTHER, THIRD] });
      await ended(page);
      await page.waitForFunction(() => document.querySelectorAll('.output.markdown h1').length === 3);

      expect(await page.evaluate(() => (window as unknown as { __batches: number[] }).__batches)).toEqual([1, 1, 1]);
    });

    it("shows an output's Markdown image as a link to it named by its alt text (the page loads no image)", async () => {
      proxy = await startProxy(host(), answered([resultOf(FAST, 'See ![the diagram of X](https://example.com/x.png) below, and ![](data:image/png;base64,AAAA).')]));
      page = await openPage(browser(), host(), { url: proxy.url });
      await page.click('#markdown');
      await compare(page, { models: [FAST] });
      await ended(page);
      await page.waitForSelector(`${column(FAST)} .output.markdown`);

      expect(await columnText(page, FAST, 'output')).toBe('See image: the diagram of X below, and image: .\n');
      expect(await page.$$eval(`${column(FAST)} .output a`, (links) => links.map((a) => [a.textContent, a.getAttribute('href')]))).toEqual([
        ['the diagram of X', 'https://example.com/x.png'],
        ['', null],
      ]);
      expect(await page.$$eval('img', (images) => images.length)).toBe(0);
    });
  });

  describe('Long unbroken text', () => {
    it('wraps a long error and a warning of one long word, and scrolls wide code and tables inside their column, the status in view', async () => {
      const markdown = [
        `Here: \`${'y'.repeat(3_000)}\` end, [a link](https://example.com/${'p'.repeat(3_000)})`,
        '',
        '```',
        'x'.repeat(3_000),
        '```',
        '',
        `| ${Array.from({ length: 40 }, (_, i) => `column_${i}`).join(' | ')} |`,
        `|${'---|'.repeat(40)}`,
        `| ${Array.from({ length: 40 }, (_, i) => `value_${i}`).join(' | ')} |`,
      ].join('\n');
      const failed = resultOf(FAST, '', { status: 'failed', error: { code: 'upstream_error', upstreamStatus: 400, message: `invalid_token_${'X'.repeat(3_000)}` } });
      // A vendor's finish reason of one long word in a warning (64 characters, as the gateway takes them).
      const warned = resultOf(THIRD, 'short', { warnings: [`The provider ended the output with finish_reason ${'x'.repeat(64)}`] });
      proxy = await startProxy(host(), answered([failed, resultOf(OTHER, markdown), warned]));
      page = await openPage(browser(), host(), { url: proxy.url });
      await page.click('#markdown');
      await compare(page, { models: [FAST, OTHER, THIRD] });
      await ended(page);

      const layout = await page.evaluate(
        (wide) => {
          const inside = (el: Element, box: DOMRect) => {
            const rect = el.getBoundingClientRect();
            return rect.left >= box.left - 0.5 && rect.right <= box.right + 0.5;
          };
          const scrolls = (selector: string) => {
            const el = document.querySelector(selector) as Element;
            return el.scrollWidth > el.clientWidth;
          };
          return {
            pageWidth: document.documentElement.scrollWidth === innerWidth,
            columns: [...document.querySelectorAll('article.column')].map((article) => {
              const box = article.getBoundingClientRect();
              const parts = [...article.querySelectorAll('.status, .error:not([hidden]), .output, .output pre, .output table, .output p, .meta, .meta > span')];
              return { inside: parts.every((el) => inside(el, box)), inView: box.right <= innerWidth };
            }),
            // The wide ones scroll themselves; the output as a whole does not.
            scrolls: [`${wide} pre`, `${wide} table`, wide].map(scrolls),
          };
        },
        `${column(OTHER)} .output`,
      );
      expect(layout).toEqual({ pageWidth: true, columns: Array(3).fill({ inside: true, inView: true }), scrolls: [true, true, false] });
    });
  });

  describe('Output that imitates the page', () => {
    it("cannot take the judging tables' places by their IDs, nor draw a page error box", async () => {
      const IMPOSTOR = 'fam_d-4.20-0309-non-reasoning';
      await answerWith(IMPOSTOR, 'Look:\n\n<div id="ranking" hidden></div><div id="matrix" hidden></div><div id="evaluations" hidden></div><div class="error">Fake</div>\n\nend');
      page = await openPage(browser(), host());
      await page.click('#markdown');
      await compare(page, { models: [IMPOSTOR, FAST], judges: [JUDGE] });
      await page.waitForSelector(column(IMPOSTOR, 'completed'));
      await ended(page);

      const output = `${column(IMPOSTOR)} .output`;
      expect(await page.$eval(output, (el) => el.textContent)).toContain('Fake');
      // The page's own tables, in its judging section, got their rows.
      const rows = await page.$$eval('main > section.judging > div > .table-scroll > table', (tables) => tables.map((table) => [table.id, table.rows.length]));
      expect(rows).toEqual([
        ['matrix', 3],
        ['evaluations', 2],
        ['ranking', 3],
        ['judge-stats', 2],
      ]);
      expect(await page.$$eval(`${output} [id], ${output} [class], ${output} [style], ${output} [hidden]`, (els) => els.length)).toBe(0);
      expect(await page.$$eval('.error:not([hidden])', (els) => els.length)).toBe(0);
    });

    it('draws only formatting, in its own style, inside its column: no dialog, control or page landmark; links open elsewhere', async () => {
      const fake = [
        'Intro with [a link](https://example.com/x), [a relative one](/api/v1/models) and [mail](mailto:a@example.com).',
        '',
        '<dialog open><b>Session expired.</b> Paste your API key again:<textarea placeholder="API key"></textarea><select><option>fam_c-5.4</option></select><input value="key"><button>Send</button></dialog>',
        '',
        '<header><h1>Model comparison</h1><span>creditsUsed 0</span></header>',
        '',
        '<main><section><h3><span>fam_c-5.4-pro</span><span>completed</span></h3></section></main>',
        '',
        '<details open><summary>more</summary>inside</details><span hidden>INVISIBLE</span>',
        '',
        '# A heading',
        '',
        '| a | b |',
        '|:--|--:|',
        '| 1 | 2 |',
        '',
        '3. third',
        '4. fourth',
        '',
        '```',
        'WIDE_'.repeat(600),
        '```',
      ].join('\n');
      proxy = await startProxy(host(), answered([resultOf(FAST, fake), resultOf(OTHER, 'short')]));
      page = await openPage(browser(), host(), { url: proxy.url });
      await page.click('#markdown');
      await compare(page, { models: [FAST, OTHER] });
      await ended(page);

      const output = `${column(FAST)} .output`;
      const tags = await page.$eval(output, (el) => [...new Set([...el.querySelectorAll('*')].map((child) => child.tagName.toLowerCase()))].sort());
      expect(tags).toEqual(['a', 'b', 'code', 'h1', 'h3', 'li', 'ol', 'p', 'pre', 'table', 'tbody', 'td', 'th', 'thead', 'tr']);
      // The formatting attributes Markdown writes stay.
      expect(await page.$eval(output, (el) => [...el.querySelectorAll('th, ol')].map((child) => child.getAttribute('align') ?? child.getAttribute('start')))).toEqual([
        'left',
        'right',
        '3',
      ]);
      expect(await page.$eval(output, (el) => el.textContent)).toContain('Session expired.');
      const links = await page.$$eval(`${output} a`, (as) => as.map((a) => [a.getAttribute('href'), a.getAttribute('target'), a.getAttribute('rel')]));
      expect(links).toEqual([
        ['https://example.com/x', '_blank', 'noopener noreferrer'],
        [null, null, null],
        ['mailto:a@example.com', '_blank', 'noopener noreferrer'],
      ]);
      // The page's header and column heading styles are the page's only.
      const looks = await page.$eval(output, (el) => {
        const style = (selector: string) => getComputedStyle(el.querySelector(selector) as Element);
        return { h1: style('h1').fontSize, h3: style('h3').display, th: style('th').backgroundColor };
      });
      // 1.1 times the output's 14 px, a block, no background: not the page's 1.2rem header title, flex column heading or grey table header.
      expect(looks).toEqual({ h1: '15.4px', h3: 'block', th: 'rgba(0, 0, 0, 0)' });
      // The wide code block stays in its column: the page does not scroll sideways, the columns do not overlap.
      const geometry = await page.evaluate(
        (left, right) => {
          const [own, next] = [left, right].map((selector) => (document.querySelector(selector) as Element).getBoundingClientRect());
          return { apart: (own as DOMRect).right <= (next as DOMRect).left, pageWidth: document.documentElement.scrollWidth === innerWidth };
        },
        column(FAST),
        column(OTHER),
      );
      expect(geometry).toEqual({ apart: true, pageWidth: true });
    });
  });

  describe('The key', () => {
    it('with a character no key has (an invisible one copied with it) is said at its field, and nothing is sent (it had been said as an API that could not be reached, every column failed)', async () => {
      page = await openPage(browser(), host());
      await page.type('#api-key', '\u200b');
      await page.focus('#prompt');
      await page.waitForSelector('#api-key-error:not([hidden])');
      const keyError = ['api-key', expect.stringMatching(/^API key: it holds a character no API key has /), true];
      expect(await fieldErrors(page)).toEqual([keyError]);
      await compare(page, { models: [FAST] });
      expect(await page.$$(column(FAST))).toHaveLength(0);
      expect(await errorText(page)).toBe('');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('api-key');
      expect(host().simulator.calls()).toHaveLength(0);
      await page.keyboard.press('Backspace');
      expect(await fieldErrors(page)).toEqual([]);
      await compare(page, { models: [FAST] });
      await page.waitForSelector(column(FAST, 'completed'));
    });

    /**
     * A page behind a proxy that holds its first models listing, the demo key's: opened, the key
     * typed and left (that listing asked for). `lateAnswerRead` lets it through and resolves once
     * the page has read its answer (a round trip after it came).
     */
    async function withFirstListingHeld(): Promise<{ page: Page; lateAnswerRead: () => Promise<void> }> {
      let release = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      let listings = 0;
      proxy = await startProxy(
        host(),
        (res, forward) => void forward().then((answer) => answer.pipe(res.writeHead(answer.statusCode ?? 502, answer.headers))),
        (req) => (req.url === '/api/v1/models' && listings++ === 0 ? released : undefined),
      );
      const opened = (page = await browser().newPage());
      opened.setDefaultTimeout(15_000);
      await opened.goto(`${proxy.url}/`);
      await opened.type('#api-key', host().demo.apiKey);
      await opened.focus('#prompt');
      const lateAnswerRead = async () => {
        const late = opened.waitForResponse((response) => response.url().endsWith('/api/v1/models') && response.status() === 200);
        release();
        await (await late).text();
        await opened.evaluate(() => fetch('/page.css').then((response) => response.text()));
      };
      return { page: opened, lateAnswerRead };
    }

    it("shows the latest key's listing of the models, not an earlier key's answer that came later (a stale 401 had stayed beside the pickers the right key filled)", async () => {
      const { page, lateAnswerRead } = await withFirstListingHeld();
      // A wrong key's listing is answered while the right key's is held.
      await page.$eval('#api-key', (el) => ((el as HTMLInputElement).value = ''));
      await page.type('#api-key', 'mcg_not-a-key-of-this-gateway');
      await page.focus('#prompt');
      await page.waitForFunction(() => document.getElementById('error')?.textContent?.includes('401'));
      await lateAnswerRead();
      expect(await page.$$('#models option')).toHaveLength(0);
      expect(await errorText(page)).toMatch(/^401 unauthorized: /);
    });

    it("shows no earlier key's listing once the key field holds a key that cannot be sent (nothing is sent for it, and the earlier answer had filled the pickers)", async () => {
      const { page, lateAnswerRead } = await withFirstListingHeld();
      await page.type('#api-key', '\u200b');
      await page.focus('#prompt');
      await page.waitForSelector('#api-key-error:not([hidden])');
      await lateAnswerRead();
      expect(await page.$$('#models option')).toHaveLength(0);
    });

    it('never reaches the URL, storage or the copied curl, which names $GATEWAY_KEY instead', async () => {
      page = await openPage(browser(), host());
      await compare(page, { models: [FAST], settings: { maxTokens: '64' } });
      await page.waitForSelector(column(FAST, 'completed'));
      // Enter in the key field submits nothing (there is no form).
      await page.focus('#api-key');
      await page.keyboard.press('Enter');
      await page.click('#copy-curl');

      const key = host().demo.apiKey;
      const seen = await page.evaluate(() => ({
        href: location.href,
        storage: JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }),
        curl: document.getElementById('curl')?.textContent ?? '',
      }));
      expect(seen.href).toBe(`${host().url}/`);
      expect(seen.storage).not.toContain(key);
      expect(seen.curl).not.toContain(key);
      expect(seen.curl).toContain('-H "Authorization: Bearer $GATEWAY_KEY"');
      expect(seen.curl).toContain(`'${host().url}/api/v1/prompt'`);
      expect(seen.curl).toContain(
        `--data-binary '${JSON.stringify({ prompt: 'Explain in two sentences why the sky is blue.', models: [FAST], generation_settings: { maxTokens: 64 } })}'`,
      );
      expect(page.url()).not.toContain(key);
    });
  });
});
