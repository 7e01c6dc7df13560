/**
 * The SDK of the Effect 4 edition pointed at a simulator child process (`helpers/simulator.ts`),
 * and what the end-to-end suites check of a session's events, for this edition's own suites: written
 * once for both editions in `test/shared/e2e.ts` (the simulator's layer in `line.ts`).
 */
export { Sim, simLayer } from "./line.js"
export {
  actionNumbers,
  channelLayer,
  meaningful,
  quick,
  sdkLayer,
  stepNumbers,
  suiteOn,
  type TransportName,
  upTo
} from "../shared/e2e.js"
