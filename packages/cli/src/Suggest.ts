/**
 * "Did you mean ...?" for a mistyped command, flag or choice: the closest candidate by edit
 * distance (at most 2 edits, as `gh` and the Stripe CLI suggest), or one the word begins.
 * Imports nothing, so the command line's quick answers (`--help`, an unknown command) stay quick.
 *
 * @since 0.1.0
 */

/** The Levenshtein distance of two strings (insertions, deletions, substitutions). */
const distance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost)
    }
    previous = current
  }
  return previous[b.length] ?? 0
}

/**
 * The candidate closest to `word`: within 2 edits (and fewer edits than the word has
 * characters), or the only candidate that starts with it; `undefined` when none is close.
 *
 * @since 0.1.0
 * @category constructors
 */
export const closest = (word: string, candidates: ReadonlyArray<string>): string | undefined => {
  const lower = word.toLowerCase()
  let best: { readonly candidate: string; readonly edits: number } | undefined
  for (const candidate of candidates) {
    const edits = distance(lower, candidate.toLowerCase())
    if (edits <= 2 && edits < lower.length && (best === undefined || edits < best.edits)) best = { candidate, edits }
  }
  if (best !== undefined) return best.candidate
  const prefixed = lower.length >= 2 ? candidates.filter((c) => c.toLowerCase().startsWith(lower)) : []
  return prefixed.length === 1 ? prefixed[0] : undefined
}

/**
 * `; did you mean <candidate>?` for the closest candidate, else `""`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const didYouMean = (word: string, candidates: ReadonlyArray<string>): string => {
  const candidate = closest(word, candidates)
  return candidate === undefined ? "" : `; did you mean ${candidate}?`
}
