import { fileURLToPath } from 'node:url';
import { startLocalHost } from '../../infra/local/host.js';
import { loadConfig } from '../../shared/config.js';
import { compare, ended, launchBrowser, openPage } from './browser.js';

/**
 * `npm run screenshot`: the local host (every provider simulated, answers after about
 * 400 ms, its judge preferring the longer answer), a judged comparison of three models run in the page as the browser tests run it,
 * and the page saved as docs/comparison-page.png for the README.
 */
const OUTPUT = fileURLToPath(new URL('../../docs/comparison-page.png', import.meta.url));

const host = await startLocalHost(loadConfig({ PORT: '0', DYNAMODB_PORT: '0', SIMULATE_PROVIDERS: '1', AUTHORIZER_CACHE_SECONDS: '0' }), { simulatorLatencyMs: 400 });
// A judge that prefers the longer answer, in either order: a ranking with a spread to show.
host.simulator.setJudge({ behaviour: 'longer' });
const browser = await launchBrowser();
try {
  const page = await openPage(browser, host);
  await compare(page, {
    prompt: 'In two sentences: why is the sky blue?',
    models: ['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro'],
    judges: ['fam_c-5.4-mini'],
    settings: { temperature: '0.3' },
  });
  await ended(page);
  // Allowed, as a person's browser allows a click's copy: the button then says it copied.
  await browser.defaultBrowserContext().overridePermissions(new URL(host.url).origin, ['clipboard-read', 'clipboard-sanitized-write']);
  await page.click('#copy-curl');
  await page.waitForFunction(() => document.querySelector('#copied')?.textContent !== '');
  const copied = await page.$eval('#copied', (el) => el.textContent);
  if (copied !== 'Copied to the clipboard') throw new Error(`Copy as curl said "${copied}"`);
  await page.screenshot({ path: OUTPUT, fullPage: true });
  process.stdout.write(`${OUTPUT}\n`);
} finally {
  await browser.close();
  await host.close();
}
