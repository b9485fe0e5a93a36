import type { Page } from 'puppeteer-core';
import { afterEach, describe, expect, it } from 'vitest';
import { column, compare, ended, openPage, upstreamOf, useBrowser } from './browser.js';
import { useTestHost } from '../support/local.js';

const host = useTestHost();
const browser = useBrowser();

let page: Page | undefined;
afterEach(async () => {
  await page?.close();
  page = undefined;
});

const FAST = 'fam_c-5.4';
const OTHER = 'fam_a-opus-4-6';
const THIRD = 'fam_b-3.1-pro';
const JUDGE = 'fam_c-4.1';

/** What a column shows, read from the DOM. */
function columnText(page: Page, modelId: string, part: 'status' | 'output' | 'meta' | 'error'): Promise<string> {
  return page.$eval(`${column(modelId)} .${part}`, (el) => el.textContent ?? '');
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
        'style-src': "'self'",
        'connect-src': "'self'",
        'img-src': "'none'",
        'base-uri': "'none'",
        'form-action': "'none'",
        'frame-ancestors': "'none'",
        'require-trusted-types-for': "'script'",
      });
      expect(Object.values(csp).join(' ')).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      const html = await response.text();
      // Every script has a src on this origin; no inline handler attribute anywhere.
      expect(html.match(/<script[^>]*>/g)).toEqual(['<script src="/page.js" defer>']);
      expect(html).not.toMatch(/\son[a-z]+=/i);
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

    it('stops a comparison on Stop: the columns still running read "stopped"', async () => {
      host().simulator.setFault({ kind: 'slow', delayMs: 5_000, model: await upstreamOf(host(), OTHER) });
      page = await openPage(browser(), host());
      await compare(page, { models: [OTHER] });
      await page.waitForSelector('#stop:not([disabled])');

      await page.click('#stop');
      await page.waitForSelector(column(OTHER, 'stopped'));
      await ended(page);
      expect(await page.$eval('#error', (el) => el.hidden)).toBe(true);
    });

    it("shows the API's refusal with the field it names, and runs nothing", async () => {
      page = await openPage(browser(), host());
      await compare(page, { models: [FAST], settings: { temperature: '5' } });

      await page.waitForSelector('#error:not([hidden])');
      expect(await page.$eval('#error', (el) => el.textContent)).toMatch(/^400 invalid_request: [\s\S]*\n {2}\/generation_settings\/temperature: must be <= 2$/);
      expect(await columnText(page, FAST, 'status')).toBe('not run');
      expect(host().simulator.calls()).toHaveLength(0);
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
      const ranking = await page.$$eval('#ranking tr + tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
      expect(ranking.map((line) => line[1]).sort()).toEqual([FAST, OTHER, THIRD].sort());
      for (const line of ranking) expect(line[3]).toMatch(/^\[-?\d+\.\d\d, -?\d+\.\d\d\]$/);
      expect(await page.$eval('#summary', (el) => el.textContent)).toMatch(/creditsUsed \d/);
    });
  });

  describe('Untrusted output', () => {
    const HOSTILE =
      "Here: <img src=x onerror=\"window.__pwned = 'img'\"> and <script>window.__pwned = 'script'</script> " + "and [a link](javascript:window.__pwned='link') and **bold**";
    const XSS_MODEL = 'fam_d-4.20-0309-non-reasoning';

    it('renders an output carrying <img onerror> and <script> inert, as text and as Markdown', async () => {
      // The simulator answers this model with a well-formed chat completion whose text is hostile.
      const upstream = await upstreamOf(host(), XSS_MODEL);
      host().simulator.setFault({
        kind: 'status',
        status: 200,
        model: upstream,
        body: {
          id: 'chatcmpl-hostile',
          object: 'chat.completion',
          created: 1779012345,
          model: upstream,
          choices: [{ index: 0, message: { role: 'assistant', content: HOSTILE }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 20, completion_tokens: 40, total_tokens: 60 },
        },
      });
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
  });

  describe('The key', () => {
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
