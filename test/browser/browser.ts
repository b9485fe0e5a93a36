import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll } from 'vitest';
import type { LocalHost } from '../../infra/local/host.js';

/**
 * Headless Chromium from @sparticuz/chromium (the binary ships inside the npm package and
 * is unpacked to the temp folder on first launch: `npm ci` is the whole set-up).
 */
export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    args: chromium.args,
    executablePath: await chromium.executablePath(),
    headless: true,
    defaultViewport: { width: 1400, height: 1000 },
  });
}

/** One browser for the test file: launched before its tests, closed after them. */
export function useBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error('the browser is not launched yet');
    return browser;
  };
}

/**
 * The comparison page of `host`, its key typed in and its pickers filled from GET /api/v1/models;
 * by default from the host itself, with the demo account's key.
 */
export async function openPage(browser: Browser, host: LocalHost, { url = host.url, apiKey = host.demo.apiKey } = {}): Promise<Page> {
  const page = await browser.newPage();
  // Below the test timeout, so that a state that never comes fails with the selector it waited for.
  page.setDefaultTimeout(15_000);
  await page.goto(`${url}/`);
  await page.type('#api-key', apiKey);
  // The pickers load when the key field changes (on leaving it).
  await page.focus('#prompt');
  await page.waitForSelector('#models option');
  return page;
}

export interface Comparison {
  prompt?: string;
  models: string[];
  judges?: string[];
  settings?: Partial<Record<'temperature' | 'maxTokens' | 'topP', string>>;
  weights?: Partial<Record<'accuracy' | 'speed' | 'cost', string>>;
}

/** Fills the form and presses Compare. */
export async function compare(page: Page, comparison: Comparison): Promise<void> {
  if (comparison.prompt !== undefined) {
    await page.$eval('#prompt', (el, text) => ((el as HTMLTextAreaElement).value = text), comparison.prompt);
  }
  await page.select('#models', ...comparison.models);
  await page.select('#judges', ...(comparison.judges ?? []));
  for (const [name, value] of Object.entries(comparison.settings ?? {})) {
    await page.$eval(`#g-${name}`, (el, text) => ((el as HTMLInputElement).value = text), value);
  }
  for (const [name, value] of Object.entries(comparison.weights ?? {})) {
    await page.$eval(`#w-${name}`, (el, text) => ((el as HTMLInputElement).value = text), value);
  }
  await page.click('#run');
}

/** The CSS selector of a model's column in a given status. */
export function column(modelId: string, status?: string): string {
  return `article[data-model-id="${modelId}"]${status ? `[data-status="${status}"]` : ''}`;
}

/** Resolves once the comparison has ended (Compare can be pressed again). */
export async function ended(page: Page): Promise<void> {
  await page.waitForSelector('#run:not([disabled])');
  await rendered(page);
}

/** Every output's Markdown render has come back from the page's Markdown thread (none is busy). */
export async function rendered(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelector('.output[aria-busy="true"]') === null);
}

/** The upstream model name the simulator sees for a gateway model ID (for its fault rules). */
export async function upstreamOf(host: LocalHost, modelId: string): Promise<string> {
  const response = await fetch(`${host.url}/api/v1/models`, { headers: { authorization: `Bearer ${host.demo.apiKey}` } });
  const { models } = (await response.json()) as { models: { id: string; upstreamModel: string }[] };
  const model = models.find((m) => m.id === modelId);
  if (!model) throw new Error(`no model ${modelId} in the catalog`);
  return model.upstreamModel;
}

export interface PageProxy {
  url: string;
  close(): Promise<void>;
}

/** Sends `req` on to the host, and resolves with the host's answer (its body not read yet). */
export type Forward = () => Promise<IncomingMessage>;

/**
 * An HTTP proxy in front of the host, on an origin of its own: a page opened from it (openPage's
 * `url`) calls the API through it too (its CSP allows only its own origin). Every request is
 * passed on as it is (once `hold(req)` resolves, where it gives a promise: a slow link's), but POST /api/v1/prompt, which
 * `prompt` answers: on its own, or from the host's answer, which it may cut.
 */
export async function startProxy(
  host: LocalHost,
  prompt: (res: ServerResponse, forward: Forward) => void | Promise<void>,
  hold: (req: IncomingMessage) => Promise<void> | undefined = () => undefined,
): Promise<PageProxy> {
  const pass = (req: IncomingMessage, res: ServerResponse) => {
    const forward: Forward = () =>
      new Promise((resolve, reject) => {
        const upstream = request(new URL(req.url ?? '/', host.url), { method: req.method, headers: req.headers }, resolve);
        upstream.on('error', reject);
        req.pipe(upstream);
      });
    if (req.method === 'POST' && req.url === '/api/v1/prompt') {
      Promise.resolve(prompt(res, forward)).catch(() => res.destroy());
      return;
    }
    forward().then(
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
      () => res.destroy(),
    );
  };
  const server = createServer((req, res) => {
    const held = hold(req);
    if (held) void held.then(() => pass(req, res));
    else pass(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
