/**
 * The names of Effect 4 that the cluster's tests written once for both cluster editions
 * (`shared/`, copied from `packages/cluster/test/shared/`) use where Effect 3 names the same thing
 * differently: this edition's test names (`test/helpers/line.ts`); the Effect 3 cluster's
 * `test/helpers/line.ts` exports the same names, bound to Effect 3.
 */
export { forkChild, yieldNow } from "../../../test/helpers/line.js"
