/**
 * The Node flags the cluster benches start runners with (`clusterTakeover.ts`'s runners and
 * `clusterFloor.ts`'s, so that the floor and the SDK run alike): a full collection on demand
 * (`--expose-gc`, for the heap measures), an old generation large enough for 10,000 sessions on
 * three runners, and the young generation `docs/scale-out.md` advises for runners
 * (`--max-semi-space-size=64`: a take-over allocates fast, and with Node's default a survivor
 * spends much of it copying what it has just allocated). `--runner-flags "<flags>"` replaces the
 * last (`--runner-flags ""`: Node's default young generation).
 */
export const baseRunnerFlags: ReadonlyArray<string> = ["--expose-gc", "--max-old-space-size=8192"]

/** The young generation advised for runners, as the benches' `--runner-flags` default. */
export const defaultRunnerTuning = "--max-semi-space-size=64"

/** The flags of a `--runner-flags` value (space-separated). */
export const runnerTuning = (given: string): ReadonlyArray<string> => given.split(" ").filter((f) => f !== "")
