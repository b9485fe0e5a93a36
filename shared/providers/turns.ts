/**
 * Appends a turn to a conversation for a vendor that wants user and assistant turns to
 * alternate: a turn of the same role as the last one is merged into it instead (nothing the
 * caller wrote is dropped; the vendors that accept consecutive turns read them the same way).
 */
export function appendAlternating<T extends { role?: string }>(turns: T[], next: T, merge: (last: T, next: T) => void): void {
  const last = turns.at(-1);
  if (last !== undefined && last.role === next.role) merge(last, next);
  else turns.push(next);
}
