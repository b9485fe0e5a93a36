/** Edit distance (insertions, deletions, substitutions) between two short strings. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/**
 * The candidates closest to `wanted` (at most `limit`, best first), compared as `normalise`
 * makes them; none when even the closest is further than a quarter of the wanted text (at
 * least 2 edits): a guess that far off helps no one. Inputs longer than 100 characters get no
 * suggestion (and cost nothing).
 */
export function closest(wanted: string, candidates: Iterable<string>, normalise: (text: string) => string = (t) => t, limit = 3): string[] {
  if (wanted.length > 100) return [];
  const target = normalise(wanted);
  const allowed = Math.max(2, Math.floor(target.length / 4));
  const scored: { candidate: string; distance: number }[] = [];
  for (const candidate of candidates) {
    const distance = editDistance(target, normalise(candidate));
    if (distance <= allowed) scored.push({ candidate, distance });
  }
  scored.sort((x, y) => x.distance - y.distance || x.candidate.localeCompare(y.candidate));
  return scored.slice(0, limit).map((s) => s.candidate);
}
