import { vi } from 'vitest';
import { IdempotencyService } from '../../shared/idempotency/idempotency-service.js';

/** Runs `then` each time an `Idempotency-Key` record has been completed (until the mocks are restored). */
export function afterIdempotencyComplete(then: () => void): void {
  const complete = IdempotencyService.prototype.complete;
  vi.spyOn(IdempotencyService.prototype, 'complete').mockImplementation(async function (this: IdempotencyService<unknown>, ...args) {
    await complete.apply(this, args);
    then();
  });
}
