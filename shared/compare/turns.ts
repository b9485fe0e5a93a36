/**
 * Turns of the event loop for work done one piece after another (each piece a model call to
 * prepare, an answer to decode): a module of its own, as small as can be, since both the
 * gateway's fan-out and the judging code loaded on demand use it (in the api bundle, a module
 * they share is split into a chunk of every cold start).
 */

/** Resolves on the event loop's next turn. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** How long the calls of one request are prepared in one turn of the event loop before the rest wait for the next. */
const PREPARE_SLICE_MS = 8;

/**
 * Turns for preparing calls one after another: each waits for the one before it, and for the
 * event loop's next turn once the turn so far has taken PREPARE_SLICE_MS. Small calls all
 * prepare in one turn; 32 calls of a 5 MiB prompt (mapped, serialised and encoded: tens of
 * ms each) no longer hold the thread for a second, and other requests run between them.
 * A judge task shares one among its calls (FanOutOptions.turn), the answers it reads and
 * defuses, and the material it builds, and a judged request's results are read back in one.
 */
export function preparingInTurns(): () => Promise<void> {
  let turnStarted = performance.now();
  let previous = Promise.resolve();
  return () => {
    const mine = previous.then(async () => {
      if (performance.now() - turnStarted < PREPARE_SLICE_MS) return;
      await nextTurn();
      turnStarted = performance.now();
    });
    previous = mine;
    return mine;
  };
}
