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

/** How `closest` ranks beyond the distance. */
export interface Ranking {
  /** After the distance, before the alphabet, lower first: a retired model after one that answers. */
  tieBreak?: (candidate: string) => number;
  /** Candidates that begin with the wanted text (as normalised) qualify, however far: `fam_b-3.1` for `fam_b-3.1-pro`. */
  prefixes?: boolean;
}

/**
 * The candidates closest to `wanted` (at most `limit`, best first), compared as `normalise`
 * makes them; none when even the closest is further than a quarter of the wanted text (at
 * least 2 edits), but those it begins where `ranking.prefixes`: a guess that far off helps no
 * one. Inputs longer than 100 characters get no suggestion (and cost nothing).
 */
export function closest(wanted: string, candidates: Iterable<string>, normalise: (text: string) => string = (t) => t, limit = 3, ranking: Ranking = {}): string[] {
  if (wanted.length > 100) return [];
  const { tieBreak = () => 0, prefixes = false } = ranking;
  const target = normalise(wanted);
  const allowed = Math.max(2, Math.floor(target.length / 4));
  const scored: { candidate: string; distance: number; tie: number }[] = [];
  for (const candidate of candidates) {
    const normalised = normalise(candidate);
    const distance = editDistance(target, normalised);
    if (distance <= allowed || (prefixes && normalised.startsWith(target))) scored.push({ candidate, distance, tie: tieBreak(candidate) });
  }
  scored.sort((x, y) => x.distance - y.distance || x.tie - y.tie || x.candidate.localeCompare(y.candidate));
  return scored.slice(0, limit).map((s) => s.candidate);
}
